//! Where a run starts from: a new run directory with the matrix copied in, or a resumed one
//! (repaired) with its manifest and the (cell, iteration) pairs already measured.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::*;
use crate::results::check;
use crate::results::lock::{identity, RunLock};
use crate::results::rundir::RESULTS_CSV;

/// (cell key, iteration) pairs already measured successfully.
pub(super) type Done = HashSet<(CellKey, u32)>;

/// What `run` starts from: the matrix, and for `--resume` the run directory (repaired), its
/// manifest and the (cell, iteration) pairs that already succeeded.
pub(super) struct Opened {
    pub(super) loaded: LoadedMatrix,
    pub(super) dir: Option<RunDir>,
    pub(super) old: Option<Manifest>,
    pub(super) done: Done,
    /// The cells this run measures: `--only` of a new run, the first run's for a resumed one.
    pub(super) only: Vec<Selector>,
    /// A resume's hold on its directory (a new run takes one when it creates its directory).
    pub(super) lock: Option<RunLock>,
    /// A resumed directory that is a copy of the run's first directory.
    pub(super) copied: bool,
}

pub(super) fn open_run(opts: &RunOptions) -> Result<Opened> {
    if let Some(resume) = &opts.resume {
        let dir = RunDir::open(resume)?;
        let lock = RunLock::take(&dir.path, "resume")?;
        use crate::input::file;
        let text = file::read_text(&dir.file(MATRIX_COPY), file::MATRIX_COPY)?;
        let old = file::read_text(&dir.file(MANIFEST), file::MANIFEST)
            .ok()
            .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
            .filter(|m| !m.run_id.is_empty());
        // Resolve `build:` directories from where the matrix originally lived.
        let original = old
            .as_ref()
            .map(|m| PathBuf::from(&m.matrix_file))
            .unwrap_or_else(|| dir.file(MATRIX_COPY));
        // As it was run: its parameters substituted, their values in the manifest.
        let mut loaded = crate::matrix::load_resumed(&text, &original)?;
        loaded.params = old.as_ref().map(|m| m.params.clone()).unwrap_or_default();
        let loaded = pin_sources(loaded, old.as_ref())?;
        let only = resumed_only(&loaded, old.as_ref(), &opts.only_text)?;
        // What `report` would refuse (two ok rows of one iteration, a NaN) is refused before
        // anything runs, not resumed into a summary.
        if dir.file(RESULTS_CSV).exists() {
            check::read_results(&dir.file(RESULTS_CSV))?;
        }
        let copied = old.as_ref().is_some_and(|m| {
            !m.dir_identity.is_empty() && identity(&dir.path).ok().as_ref() != Some(&m.dir_identity)
        });
        if copied {
            eprintln!(
                "{} is a copy of another run directory: it gets its own instance token, so \
                 the two never remove each other's containers",
                crate::escape::terminal(&dir.path.display().to_string())
            );
        }
        dir.repair()?;
        let done = measured_ok(&dir.rows()?);
        return Ok(Opened {
            loaded,
            dir: Some(dir),
            old,
            done,
            only,
            lock: Some(lock),
            copied,
        });
    }
    let loaded = opts
        .matrix
        .clone()
        .context("a matrix file or --resume DIR is needed")?;
    if let Some(out) = &opts.out {
        anyhow::ensure!(
            fresh(out),
            "{} exists and is not empty: runs are never overwritten (use --resume to continue one)",
            out.display()
        );
    }
    Ok(Opened {
        loaded,
        dir: None,
        old: None,
        done: HashSet::new(),
        only: opts.only.clone(),
        lock: None,
        copied: false,
    })
}

/// A resumed run measures the cells its first run chose: the manifest's `--only`. Another
/// `--only` on the resume would change what the run is, so it is refused.
fn resumed_only(
    loaded: &LoadedMatrix,
    old: Option<&Manifest>,
    given: &[String],
) -> Result<Vec<Selector>> {
    let first = old.map(|m| m.only.as_slice()).unwrap_or_default();
    if !given.is_empty() && given != first {
        let shown = |o: &[String]| match o.is_empty() {
            true => "no --only".to_string(),
            false => format!("--only {}", o.join(" --only ")),
        };
        return Err(crate::error::UsageError(format!(
            "this run was started with {}; a resume measures what the first run chose (drop --only {})",
            crate::escape::terminal(&shown(first)),
            crate::escape::terminal(&given.join(" --only "))
        ))
        .into());
    }
    crate::matrix::only::parse_only(loaded, first)
}

/// The (cell, iteration) pairs of `rows` that succeeded: what a resumed attempt leaves be.
pub(super) fn measured_ok(rows: &[ResultRow]) -> Done {
    rows.iter()
        .filter(|r| r.is_ok())
        .map(|r| (r.cell_key(), r.iteration))
        .collect()
}

pub(super) fn fresh(out: &Path) -> bool {
    !out.exists()
        || std::fs::read_dir(out)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
}

/// The directory of a new run, locked, with the matrix copied into it.
pub(super) fn create_run_dir(
    opts: &RunOptions,
    loaded: &LoadedMatrix,
) -> Result<(RunDir, RunLock)> {
    let dir = match &opts.out {
        Some(out) => {
            anyhow::ensure!(fresh(out), "{} exists and is not empty: runs are never overwritten (use --resume to continue one)", out.display());
            std::fs::create_dir_all(out)
                .with_context(|| format!("failed to create {}", out.display()))?;
            RunDir { path: out.clone() }
        }
        None => RunDir::create(Path::new("reports/runs"), &loaded.name())?,
    };
    let lock = RunLock::take(&dir.path, "run")?;
    std::fs::write(dir.file(MATRIX_COPY), &loaded.text)
        .with_context(|| format!("failed to write {}", dir.file(MATRIX_COPY).display()))?;
    Ok((dir, lock))
}

/// The manifest this attempt starts with: a resumed run keeps its identity (id, host, start,
/// schedule) and appends what this attempt learns; a new one records where it runs.
pub(super) fn manifest_for(
    opts: &RunOptions,
    loaded: &LoadedMatrix,
    plan: &crate::matrix::Plan,
    dir: &RunDir,
    (old, copied): (Option<Manifest>, bool),
    docker: Option<DockerFacts>,
    engine_facts: Vec<EngineFacts>,
) -> Manifest {
    let dir_identity = identity(&dir.path).unwrap_or_default();
    let token = || format!("{:08x}", rand::random::<u32>());
    let m = &loaded.matrix;
    let pooled = !opts.engines.is_empty();
    match old {
        // Resuming: the run keeps its identity (id, host, start, schedule); what this
        // attempt adds is appended to what earlier attempts learnt.
        Some(old) => Manifest {
            rmatrix_commit: resumed_commit(&old.rmatrix_commit),
            // A resume appends in the layout of the rows already there (`results::legacy`).
            format_version: match crate::results::legacy::is_legacy(&dir.file(RESULTS_CSV)) {
                Ok(true) => 1,
                _ => FORMAT_VERSION,
            },
            instance: match copied {
                true => token(),
                false => old.instance.clone(),
            },
            dir_identity,
            docker: docker.or(old.docker.clone()),
            tools: resumed_tools(&old.tools, tools_of(m, plan)),
            finished_at: None,
            engines: match pooled {
                true => engine_facts,
                false => old.engines.clone(),
            },
            ..old
        },
        None => Manifest {
            format_version: FORMAT_VERSION,
            rmatrix_version: env!("CARGO_PKG_VERSION").into(),
            rmatrix_commit: manifest::build_commit().0,
            rmatrix_dirty: manifest::build_commit().1,
            tools: tools_of(m, plan),
            run_id: dir
                .path
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            instance: token(),
            dir_identity,
            matrix_file: loaded.path.display().to_string(),
            matrix_sha256: loaded.sha256.clone(),
            counted: (m.counted)
                .map(|c| format!("{c:?}").to_lowercase())
                .unwrap_or_default(),
            params: loaded.params.clone(),
            started_at: manifest::now(),
            host: Host::probe(),
            docker,
            transport: match m.network {
                Network::Host => "tcp 127.0.0.1, host networking (no NAT)".into(),
                Network::Bridge => "tcp 127.0.0.1, bridge network with published port".into(),
            },
            workload_transports: (m.workloads.iter())
                .map(|(name, w)| (name.clone(), w.transport().to_string()))
                .collect(),
            only: opts.only_text.clone(),
            engines: engine_facts,
            cells_planned: plan.cell_count(),
            schedule: manifest::ScheduleFacts {
                order: format!("{:?}", m.repeat.order).to_lowercase(),
                seed: m.repeat.seed.unwrap_or_else(rand::random),
                restart: m.repeat.restart,
            },
            ..Manifest::default()
        },
    }
}

/// The external programs the planned cells' workloads (and the matrix's profiles) start, each
/// asked for its version now: the one the run will use. A workload `--only` left out starts
/// nothing and is not asked.
fn tools_of(
    m: &crate::matrix::Matrix,
    plan: &crate::matrix::Plan,
) -> BTreeMap<String, manifest::ToolFacts> {
    use crate::workloads::tools::version_of;
    let facts = |program: std::ffi::OsString| manifest::ToolFacts {
        version: version_of(&program).unwrap_or_else(|| "unknown".into()),
        program: program.to_string_lossy().into_owned(),
    };
    let planned: HashSet<&str> = plan.cells().map(|c| c.workload.as_str()).collect();
    let mut out: BTreeMap<_, _> = (m.workloads.iter())
        .filter(|(name, _)| planned.contains(name.as_str()))
        .filter_map(|(_, w)| w.tool())
        .map(|t| (t.default.to_string(), facts(t.program())))
        .collect();
    if m.profile.is_some() {
        let perf = crate::measure::profile::PERF;
        out.insert(perf.to_string(), facts(perf.into()));
    }
    out
}

/// The first attempt's rmatrix commit, said when this build is another one: its rows were
/// measured by one build, the rest by this one.
fn resumed_commit(first: &str) -> String {
    let (now, _) = manifest::build_commit();
    if first != now {
        let shown = |c: &str| match c {
            "" => "an unknown commit".to_string(),
            c => crate::escape::terminal(c),
        };
        eprintln!(
            "rmatrix: this run was started by rmatrix {} and is resumed by {}; manifest.json \
             keeps the first",
            shown(first),
            shown(&now)
        );
    }
    first.to_string()
}

/// A resume's programs: what the first attempt used, and where this attempt's differs, both.
fn resumed_tools(
    old: &BTreeMap<String, manifest::ToolFacts>,
    now: BTreeMap<String, manifest::ToolFacts>,
) -> BTreeMap<String, manifest::ToolFacts> {
    let mut out = old.clone();
    for (name, facts) in now {
        match out.get_mut(&name) {
            Some(was) if *was != facts => {
                was.version = format!(
                    "{}; resumed with {} {}",
                    was.version, facts.program, facts.version
                )
            }
            Some(_) => {}
            None => {
                out.insert(name, facts);
            }
        }
    }
    out
}

/// A resumed run builds its `source:` servers at the commits it started with, not at what
/// a branch or `HEAD` names now.
fn pin_sources(mut loaded: LoadedMatrix, old: Option<&Manifest>) -> Result<LoadedMatrix> {
    let Some(old) = old else { return Ok(loaded) };
    for (server, src) in loaded.sources.iter_mut() {
        let Some(was) = old.images.get(server).and_then(|i| i.source.as_ref()) else {
            continue;
        };
        if was.commit != src.commit.commit {
            src.commit = crate::servers::images::git::resolve(&src.repo, &was.commit)
                .with_context(|| format!("server {server}: the run's commit is gone"))?;
        }
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(
        matrix: Option<LoadedMatrix>,
        out: Option<PathBuf>,
        resume: Option<PathBuf>,
    ) -> RunOptions {
        RunOptions {
            matrix,
            out,
            resume,
            only: Vec::new(),
            only_text: Vec::new(),
            template: None,
            quiet: true,
            engines: Vec::new(),
            client_engine: None,
        }
    }

    /// A new run stores the resolved text and records the values; a resume reads that copy
    /// back as it is, with the values the manifest recorded.
    #[test]
    fn a_run_stores_its_resolved_matrix_and_values_and_a_resume_keeps_them() {
        let tmp = tempfile::tempdir().unwrap();
        let text = "params:\n  rev: {}\n  n: {type: int, default: 2}\ndescription: at ${rev}\n\
                    servers: {a: {image: example/a:1}}\nengines: [InnoDB]\n\
                    workloads: {w: {slap: {}}}\niterations: ${n}\nlength: 10\n";
        std::fs::write(tmp.path().join("m.yaml"), text).unwrap();
        let set = [("rev".to_string(), "v1 \"x\"".to_string())];
        let loaded = crate::matrix::load_file_set(&tmp.path().join("m.yaml"), &set).unwrap();
        let out = tmp.path().join("run");
        let opts = options(Some(loaded.clone()), Some(out.clone()), None);
        let (dir, lock) = create_run_dir(&opts, &loaded).unwrap();
        let stored = std::fs::read_to_string(dir.file(MATRIX_COPY)).unwrap();
        assert_eq!(stored, loaded.text);
        assert!(
            stored.contains("description: \"at v1 \\\"x\\\"\"\n"),
            "{stored}"
        );
        let plan = expand(&loaded.matrix, &[]);
        let man = manifest_for(&opts, &loaded, &plan, &dir, (None, false), None, Vec::new());
        let values: Vec<_> = man.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(values, ["rev=v1 \"x\"", "n=2"]);
        std::fs::write(dir.file(MANIFEST), serde_json::to_string(&man).unwrap()).unwrap();
        drop(lock);
        let opened = open_run(&options(None, None, Some(out))).unwrap();
        assert_eq!(opened.loaded.text, loaded.text);
        assert_eq!(opened.loaded.params, loaded.params);
        assert_eq!(
            opened.loaded.matrix.description.as_deref(),
            Some("at v1 \"x\"")
        );
    }

    /// The manifest names the commit this binary was built from and each program the
    /// matrix's workloads start, with what `--version` said (a missing one: `unknown`).
    #[test]
    fn the_manifest_records_the_build_and_the_programs_a_run_starts() {
        let (commit, dirty) = manifest::build_commit();
        // Built outside a git checkout both are unknown; inside one, a full hash.
        if !commit.is_empty() {
            assert!(commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(dirty.is_some());
        }
        let text = "servers: {a: {image: example/a:1}}\nworkloads:\n  s: {sysbench: {test: oltp_point_select}}\n  \
                    o: {oltp: {}}\n  s2: {sysbench: {test: oltp_read_only}}\nlength: 10\n\
                    profile: {cpu: 99}\n";
        let loaded = crate::matrix::load_str(text, Path::new("m.yaml")).unwrap();
        let tools = tools_of(&loaded.matrix, &expand(&loaded.matrix, &[]));
        assert_eq!(tools.keys().collect::<Vec<_>>(), ["perf", "sysbench"]);
        // `--only workload=o` runs rmatrix's own clients alone: sysbench is not asked.
        let only = crate::matrix::only::parse_only(&loaded, &["workload=o".into()]).unwrap();
        let oltp_only = tools_of(&loaded.matrix, &expand(&loaded.matrix, &only));
        assert_eq!(oltp_only.keys().collect::<Vec<_>>(), ["perf"]);
        let sysbench = &tools["sysbench"];
        assert_eq!(
            sysbench.program,
            crate::workloads::sysbench::spec::SYSBENCH
                .program()
                .to_string_lossy()
        );
        assert!(!sysbench.version.is_empty());
    }

    #[test]
    fn a_resume_with_another_version_of_a_program_records_both() {
        let facts = |v: &str| manifest::ToolFacts {
            program: "pgbench".into(),
            version: v.into(),
        };
        let old = BTreeMap::from([("pgbench".to_string(), facts("pgbench (PostgreSQL) 15.20"))]);
        let same = resumed_tools(&old, old.clone());
        assert_eq!(same, old);
        let now = BTreeMap::from([
            ("pgbench".to_string(), facts("pgbench (PostgreSQL) 17.6")),
            ("perf".to_string(), facts("perf version 6.1")),
        ]);
        let both = resumed_tools(&old, now);
        assert_eq!(
            both["pgbench"].version,
            "pgbench (PostgreSQL) 15.20; resumed with pgbench pgbench (PostgreSQL) 17.6"
        );
        assert!(both.contains_key("perf"));
    }
}
