//! The matrix an A/B run measures: the chosen server twice, `<server>-a` at one revision (or
//! image) and `<server>-b` at the other, in shuffled rounds with a fresh server for every
//! iteration, so that whatever slows a round slows both sides of it. The derived matrix is
//! written as JSON (a YAML document) and read back through the loader: every check a matrix
//! gets, the derived one gets too, and the run stores the matrix it really measured.
//! `derive_named` makes any number of sides (a bisection's scan: `<server>-0` the good end,
//! then each commit of the range); `derive` is its two-side case.

use anyhow::Result;
use indexmap::IndexMap;

use crate::error::UsageError;
use crate::matrix::{LoadedMatrix, Order};

/// One side of the A/B: what its server is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Side {
    /// A revision of the server's `source:` work tree.
    Rev(String),
    /// An image, for a server given by `image:`.
    Image(String),
}

/// How the rounds are laid out.
#[derive(Debug, Clone)]
pub(crate) struct Rounds {
    pub(crate) count: u32,
    pub(crate) order: Order,
    pub(crate) seed: u64,
    /// Duet rounds: the first side's CPUs and the second's (two sides only).
    pub(crate) duet: Option<(String, String)>,
}

/// The names of the two sides' servers.
pub(crate) fn side_names(server: &str) -> (String, String) {
    (format!("{server}-a"), format!("{server}-b"))
}

/// The names of `count` numbered sides' servers: `<server>-0`, `<server>-1`, ...
pub(crate) fn numbered_names(server: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{server}-{i}")).collect()
}

/// `loaded` with `server` replaced, in its place, by its two sides, measured in `rounds`.
pub(crate) fn derive(
    loaded: &LoadedMatrix,
    server: &str,
    (a, b): (&Side, &Side),
    rounds: Rounds,
) -> Result<LoadedMatrix> {
    let (name_a, name_b) = side_names(server);
    let sides = [(name_a, a), (name_b, b)];
    derive_named(loaded, server, ("A/B sides", &sides), rounds)
}

/// `loaded` with `server` replaced, in its place, by one server per side (its name and what
/// it is built from), measured in `rounds`; the first side is the report's baseline. A name
/// another server has already is refused, saying what the sides are (`what`): the copy would
/// overwrite that server.
pub(crate) fn derive_named(
    loaded: &LoadedMatrix,
    server: &str,
    (what, sides): (&str, &[(String, &Side)]),
    rounds: Rounds,
) -> Result<LoadedMatrix> {
    let mut m = loaded.matrix.clone();
    for (taken, _) in sides {
        if m.servers.contains_key(taken) {
            return Err(UsageError(format!(
                "the matrix already has a server `{}`: the {what} of `{}` need that name",
                crate::escape::terminal(taken),
                crate::escape::terminal(server)
            ))
            .into());
        }
    }
    let mut servers = IndexMap::new();
    for (name, spec) in std::mem::take(&mut m.servers) {
        if name != server {
            servers.insert(name, spec);
            continue;
        }
        for (side_name, side) in sides {
            let mut s = spec.clone();
            match (side, s.source.as_mut()) {
                (Side::Rev(rev), Some(src)) => src.rev = rev.clone(),
                (Side::Image(image), None) if s.image.is_some() => s.image = Some(image.clone()),
                _ => unreachable!("invariant: the sides were chosen for the server's kind"),
            }
            servers.insert(side_name.clone(), s);
        }
    }
    m.servers = servers;
    let names: Vec<String> = sides.iter().map(|(n, _)| n.clone()).collect();
    if let (Some((cpus_a, cpus_b)), [a, b]) = (&rounds.duet, names.as_slice()) {
        m.servers[a].cpuset = Some(cpus_a.clone());
        m.servers[b].cpuset = Some(cpus_b.clone());
    }
    // Selectors that name the server name every side.
    for sel in m.exclude.iter_mut().chain(m.include.iter_mut()) {
        if let Some(values) = sel.get_mut("server") {
            let mut out = Vec::new();
            for v in &values.0 {
                match v == server {
                    true => out.extend(names.iter().cloned()),
                    false => out.push(v.clone()),
                }
            }
            values.0 = out;
        }
    }
    if let Some(first) = names.first() {
        m.report.baseline = IndexMap::from([("server".to_string(), first.clone())]);
    }
    if !m.report.columns.iter().any(|c| c == "server")
        && !m.report.rows.iter().any(|c| c == "server")
    {
        m.report.columns.insert(0, "server".into());
    }
    m.iterations = rounds.count;
    m.repeat.restart = true;
    m.repeat.order = rounds.order;
    m.repeat.seed = Some(rounds.seed);
    m.repeat.duet = rounds.duet.is_some() && sides.len() == 2;
    m.repeat.until_cv = None;
    m.repeat.max_iterations = None;
    m.repeat.max_time = None;
    // The text's parameters were substituted when it was read; the copy refers to none.
    m.params = IndexMap::new();
    let text = serde_json::to_string_pretty(&m)?;
    Ok(crate::matrix::load_resumed(&text, &loaded.path)?)
}

/// Which kind of side `--a`/`--b` name for `server`: revisions of a `source:` server, images
/// of an `image:` one.
pub(crate) fn sides_of(
    loaded: &LoadedMatrix,
    server: &str,
    a: &str,
    b: &str,
) -> Result<(Side, Side)> {
    let spec = &loaded.matrix.servers[server];
    match (&spec.source, &spec.image) {
        (Some(_), _) => Ok((Side::Rev(a.into()), Side::Rev(b.into()))),
        (None, Some(_)) => Ok((Side::Image(a.into()), Side::Image(b.into()))),
        _ => Err(UsageError(format!(
            "server `{}` is neither `source:` nor `image:`: ab compares two revisions of a \
             source server or two images",
            crate::escape::terminal(server)
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The server becomes its two sides in its place; selectors naming it name both; the
    /// rounds are shuffled with a fresh server each, and the A side is the report's baseline.
    #[test]
    fn the_server_becomes_two_sides_measured_in_rounds() {
        let text = "servers:\n  x: {image: \"valkey:8\"}\n  r: {image: \"redis:7\"}\n\
                    workloads:\n  get: {redis: {test: get}}\n  set: {redis: {test: set}}\n\
                    exclude:\n  - {server: r, workload: set}\n\
                    iterations: 3\nrepeat: {until_cv: 3}\nlength: 1s\n";
        let loaded = crate::matrix::load_str(text, Path::new("m.yaml")).unwrap();
        let (a, b) = sides_of(&loaded, "r", "redis:7.0", "redis:7.2").unwrap();
        let rounds = Rounds {
            count: 8,
            order: Order::Shuffled,
            seed: 42,
            duet: None,
        };
        let d = derive(&loaded, "r", (&a, &b), rounds.clone()).unwrap();
        let m = &d.matrix;
        let names: Vec<&str> = m.servers.keys().map(String::as_str).collect();
        assert_eq!(names, ["x", "r-a", "r-b"]);
        assert_eq!(m.servers["r-a"].image.as_deref(), Some("redis:7.0"));
        assert_eq!(m.servers["r-b"].image.as_deref(), Some("redis:7.2"));
        assert_eq!(m.exclude[0]["server"].0, ["r-a", "r-b"]);
        assert_eq!(m.iterations, 8);
        assert!(m.repeat.restart && m.repeat.order == Order::Shuffled);
        assert_eq!((m.repeat.seed, m.repeat.until_cv), (Some(42), None));
        assert_eq!(m.report.baseline["server"], "r-a");
        // The run stores the matrix it measured.
        assert!(d.text.contains("\"r-b\"") && !d.text.contains("\"r\":"));
        assert!(!m.repeat.duet && m.servers["r-a"].cpuset.is_none());
        // A side's name taken by another server is refused, not overwritten.
        let taken = text.replace("  x:", "  r-a:");
        let loaded = crate::matrix::load_str(&taken, Path::new("m.yaml")).unwrap();
        let err = derive(&loaded, "r", (&a, &b), rounds).unwrap_err();
        assert!(
            err.to_string().contains("already has a server `r-a`"),
            "{err}"
        );
    }

    /// A scan's sides: the server becomes `r-0` (the first side, the baseline) to `r-3` in its
    /// place, the other servers stay, selectors name every side, and a taken name is refused;
    /// the two-side derive is that with `-a` and `-b`.
    #[test]
    fn the_server_becomes_numbered_sides_and_two_sides_are_the_ab() {
        let text = "servers:\n  x: {image: \"valkey:8\"}\n  r: {image: \"redis:7\"}\n\
                    workloads:\n  get: {redis: {test: get}}\n  set: {redis: {test: set}}\n\
                    exclude:\n  - {server: r, workload: set}\nlength: 1s\n";
        let loaded = crate::matrix::load_str(text, Path::new("m.yaml")).unwrap();
        let images =
            ["redis:7.0", "redis:7.1", "redis:7.2", "redis:7.4"].map(|i| Side::Image(i.into()));
        let names = numbered_names("r", images.len());
        let sides: Vec<(String, &Side)> = names.iter().cloned().zip(images.iter()).collect();
        let rounds = Rounds {
            count: 6,
            order: Order::Shuffled,
            seed: 7,
            duet: None,
        };
        let d = derive_named(&loaded, "r", ("scanned commits", &sides), rounds.clone()).unwrap();
        let m = &d.matrix;
        let keys: Vec<&str> = m.servers.keys().map(String::as_str).collect();
        assert_eq!(keys, ["x", "r-0", "r-1", "r-2", "r-3"]);
        assert_eq!(m.servers["r-3"].image.as_deref(), Some("redis:7.4"));
        assert_eq!(m.servers["x"].image.as_deref(), Some("valkey:8"));
        assert_eq!(m.exclude[0]["server"].0, ["r-0", "r-1", "r-2", "r-3"]);
        assert_eq!(m.report.baseline["server"], "r-0");
        assert!(m.repeat.restart && m.repeat.order == Order::Shuffled);
        assert_eq!((m.iterations, m.repeat.seed), (6, Some(7)));
        let taken = text.replace("  x:", "  r-2:");
        let taken = crate::matrix::load_str(&taken, Path::new("m.yaml")).unwrap();
        let err =
            derive_named(&taken, "r", ("scanned commits", &sides), rounds.clone()).unwrap_err();
        assert!(
            err.to_string()
                .contains("already has a server `r-2`: the scanned commits of `r`"),
            "{err}"
        );
        // Two sides: the A/B's names and its refusal, as before.
        let (a, b) = (&images[0], &images[3]);
        let ab = derive(&loaded, "r", (a, b), rounds.clone()).unwrap();
        let keys: Vec<&str> = ab.matrix.servers.keys().map(String::as_str).collect();
        assert_eq!(keys, ["x", "r-a", "r-b"]);
        assert_eq!(ab.matrix.report.baseline["server"], "r-a");
        // Duet rounds: each side on its CPUs, both at once (a matrix of the one server).
        let one = crate::matrix::load_str(
            &text.replace("  x: {image: \"valkey:8\"}\n", ""),
            Path::new("m.yaml"),
        )
        .unwrap();
        let duet = Rounds {
            duet: Some(("0".into(), "1".into())),
            ..rounds.clone()
        };
        let d = derive(&one, "r", (a, b), duet).unwrap().matrix;
        assert!(d.repeat.duet);
        assert_eq!(d.servers["r-a"].cpuset.as_deref(), Some("0"));
        assert_eq!(d.servers["r-b"].cpuset.as_deref(), Some("1"));
        let taken =
            crate::matrix::load_str(&text.replace("  x:", "  r-b:"), Path::new("m.yaml")).unwrap();
        let err = derive(&taken, "r", (a, b), rounds).unwrap_err();
        assert!(
            err.to_string()
                .contains("already has a server `r-b`: the A/B sides of `r` need that name"),
            "{err}"
        );
    }

    /// Every shipped matrix survives the trip through JSON unchanged: the derived copy is the
    /// matrix as written, with only what the A/B changes changed.
    #[test]
    fn a_matrix_read_back_from_its_json_is_the_same_matrix() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrices");
        let mut seen = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "yaml") {
                continue;
            }
            let Ok(loaded) = crate::matrix::load_file(&path) else {
                continue;
            };
            let mut m = loaded.matrix.clone();
            m.params = IndexMap::new();
            let json = serde_json::to_string_pretty(&m).unwrap();
            let back = crate::matrix::load_str(&json, &path)
                .unwrap_or_else(|e| panic!("{}: {e}\n{json}", path.display()));
            assert_eq!(
                serde_json::to_string_pretty(&back.matrix).unwrap(),
                json,
                "{}",
                path.display()
            );
            seen += 1;
        }
        assert!(seen >= 10, "{seen}");
    }
}
