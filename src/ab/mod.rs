//! `rmatrix ab`: two builds of one server (revisions of a `source:` work tree, or two images)
//! measured side by side. The matrix is derived with the server twice, `<server>-a` and
//! `<server>-b` (`derive`), and run in shuffled rounds with a fresh server each iteration;
//! each cell is judged B against A on its per-round ratios (`judge`). While a cell's interval
//! still straddles the threshold, another batch of rounds measures just those cells, within
//! `--max-rounds` and `--budget`; the rounds of every batch are pooled. `report` writes
//! ab.md and ab.json.

mod batches;
mod derive;
mod judge;
mod report;
mod rounds;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::compare::join;
use crate::compare::{input, CompareError};
use crate::error::{self, UsageError};
use crate::matrix::{LoadedMatrix, Order};
use crate::model::metric::Metric;
use crate::servers::images::git;
use crate::stats::Confidence;
pub(crate) use batches::{in_batches, update, Dims, Place};
pub(crate) use derive::{derive_named, numbered_names, Side};
pub(crate) use judge::{CellChange, Pooled};
pub(crate) use report::{looks_note, Batch};
use report::{Report, SideInfo};
pub(crate) use rounds::{layout, side_by_side, Outcome, Sides};

/// What `rmatrix ab` was asked.
#[derive(Debug, Clone)]
pub(crate) struct Args {
    pub(crate) matrix: PathBuf,
    pub(crate) a: String,
    pub(crate) b: String,
    pub(crate) server: Option<String>,
    pub(crate) only: Vec<String>,
    /// Cells the change cannot touch (`--control KEY=VALUE`), which must not move.
    pub(crate) control: Vec<String>,
    pub(crate) set: Vec<(String, String)>,
    pub(crate) out: Option<PathBuf>,
    pub(crate) rounds: u32,
    pub(crate) max_rounds: u32,
    pub(crate) budget: Option<String>,
    pub(crate) threshold: String,
    pub(crate) confidence: String,
    pub(crate) metrics: Vec<String>,
    pub(crate) interleaved: bool,
    /// Both sides at once, each on half of this host's CPUs (`repeat.duet`).
    pub(crate) duet: bool,
    pub(crate) seed: Option<u64>,
}

/// The arguments once checked: how the sides are measured and judged.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) threshold_pct: f64,
    pub(crate) conf: Confidence,
    pub(crate) metrics: Vec<&'static Metric>,
    /// The time budget, and as it was written (for the message that it ran out).
    pub(crate) budget: Option<(Duration, String)>,
    pub(crate) order: Order,
    pub(crate) seed: u64,
    /// Rounds of the first batch and of each one added, and the most of a cell.
    pub(crate) rounds: u32,
    pub(crate) max_rounds: u32,
    /// Duet rounds: the CPUs of side A and of side B (None: one side at a time).
    pub(crate) duet: Option<(String, String)>,
}

/// The fewest rounds a batch may have: a paired interval needs two (the rank interval at 95%
/// needs six, `--rounds`' default).
const MIN_ROUNDS: u32 = 2;

impl Args {
    /// Everything checked before anything is built: a refusal after the builds would cost
    /// the most.
    fn check(&self, loaded: &LoadedMatrix) -> Result<Plan> {
        let conf = Confidence::parse(&self.confidence)
            .ok_or_else(|| CompareError::BadConfidence(self.confidence.clone()))?;
        let threshold_pct = join::parse_threshold(&self.threshold)?;
        let default = [loaded.matrix.report.metric.as_str(), "srv_cpu_us_per_op"];
        let metrics = input::resolve_metrics(&self.metrics, &default)?;
        if self.rounds < MIN_ROUNDS {
            return Err(UsageError(format!(
                "--rounds {}: a paired interval needs at least {MIN_ROUNDS} rounds (6 for the \
                 rank interval at 95%)",
                self.rounds
            ))
            .into());
        }
        if self.max_rounds < self.rounds || self.max_rounds > 10_000 {
            return Err(UsageError(format!(
                "--max-rounds {}: between --rounds ({}) and 10000",
                self.max_rounds, self.rounds
            ))
            .into());
        }
        let budget = (self.budget.as_deref())
            .map(|b| {
                crate::input::length::parse_duration(b)
                    .map(|d| (d, b.to_string()))
                    .map_err(|e| {
                        UsageError(format!("--budget {}: {e}", crate::escape::terminal(b)))
                    })
            })
            .transpose()?;
        Ok(Plan {
            threshold_pct,
            conf,
            metrics,
            budget,
            order: match self.interleaved {
                true => Order::Interleaved,
                false => Order::Shuffled,
            },
            seed: self.seed.unwrap_or_else(rand::random),
            rounds: self.rounds,
            max_rounds: self.max_rounds,
            duet: match self.duet {
                true => Some(duet_cpus(loaded)?),
                false => None,
            },
        })
    }
}

/// The two halves of the CPUs this process may use, one a duet side; the matrix's one
/// server becomes the two sides, so it may have no other.
pub(crate) fn duet_cpus(loaded: &LoadedMatrix) -> Result<(String, String)> {
    let servers = &loaded.matrix.servers;
    if servers.len() != 1 {
        let names: Vec<&str> = servers.keys().map(String::as_str).collect();
        return Err(UsageError(format!(
            "--duet runs the two sides of one server at the same time: the matrix has {} \
             servers ({}); give it one",
            names.len(),
            crate::escape::terminal(&names.join(", "))
        ))
        .into());
    }
    let cpus = crate::measure::client::allowed_cpus().unwrap_or_default();
    if cpus.len() < 2 {
        return Err(UsageError(format!(
            "--duet needs at least 2 CPUs, one a side: this process may use {}",
            cpus.len()
        ))
        .into());
    }
    let list = |c: &[u32]| c.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let (a, b) = cpus.split_at(cpus.len() / 2);
    Ok((list(a), list(b)))
}

/// Run the A/B; how it ended: done when nothing regressed and every cell could tell,
/// regressed, cells failed when none did but some cell has fewer than 2 rounds in which both
/// sides succeeded, cannot tell when nothing regressed but some cell cannot tell.
pub(crate) async fn ab(args: Args) -> Result<error::Outcome> {
    let loaded = crate::matrix::load_file_set(&args.matrix, &args.set)?;
    let plan = args.check(&loaded)?;
    let server = server_of(&loaded, args.server.as_deref())?;
    let (a, b) = derive::sides_of(&loaded, &server, &args.a, &args.b)?;
    let infos = side_infos(&loaded, &server, (&a, &b))?;
    // Checked once at the start: a wrong --only or a derived matrix the loader refuses.
    let first = rounds::layout(&plan, 0, plan.rounds);
    let derived = derive::derive(&loaded, &server, (&a, &b), first)?;
    crate::matrix::only::parse_only(&derived, &args.only)?;
    let control = control_of(&derived, &args.control)?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| default_dir(&args.matrix));
    if dir.exists() {
        return Err(UsageError(format!(
            "--out {}: exists already; an A/B writes a new folder",
            crate::escape::terminal(&dir.display().to_string())
        ))
        .into());
    }
    std::fs::create_dir_all(dir.join("runs"))
        .with_context(|| format!("failed to create {}", dir.display()))?;
    eprintln!(
        "ab: {} against {}; runs in {}",
        crate::escape::terminal(&args.b),
        crate::escape::terminal(&args.a),
        crate::escape::terminal(&dir.display().to_string())
    );
    let sides = Sides {
        loaded: &loaded,
        server: &server,
        a: &a,
        b: &b,
    };
    let Some(outcome) = rounds::side_by_side(&sides, &plan, &dir, &args.only, "ab").await? else {
        eprintln!("ab: no cell succeeded: nothing to compare");
        return Ok(error::Outcome::CellsFailed);
    };
    let mut changes = outcome.changes;
    for c in changes.iter_mut() {
        c.control = is_control(&control, &c.dims);
    }
    let report = Report {
        format_version: report::AB_FORMAT_VERSION,
        matrix: loaded.name(),
        a: infos.0,
        b: infos.1,
        order: format!("{:?}", plan.order).to_lowercase(),
        duet: plan.duet.clone(),
        seed: plan.seed,
        threshold_pct: plan.threshold_pct,
        confidence: plan.conf.level(),
        test: "paired: Hodges-Lehmann of the per-round log-ratios with the Wilcoxon signed-rank \
               interval; the paired t interval under 6 rounds",
        batches: outcome.batches,
        stopped: outcome.stopped,
        changes,
    };
    write(&dir, &report)?;
    println!("{}", report.markdown());
    // A cell a side failed (a build that broke, a server that did not start) is a failure,
    // not a "cannot tell" that more rounds would settle.
    let failed = report.changes.iter().any(|c| c.rounds < 2);
    if report.control_moved() {
        eprintln!("ab: a control cell moved: this run cannot tell (exit 8)");
        return Ok(error::Outcome::CannotTell);
    }
    Ok(match (report.regressed(), failed, report.cannot_tell()) {
        (true, _, _) => error::Outcome::Regressed,
        (false, true, _) => error::Outcome::CellsFailed,
        (false, false, true) => error::Outcome::CannotTell,
        (false, false, false) => error::Outcome::Done,
    })
}

/// `--control KEY=VALUE` as selectors of cells without their server, checked as `--only`'s.
fn control_of(derived: &LoadedMatrix, control: &[String]) -> Result<Vec<crate::matrix::Selector>> {
    if let Some(c) = control.iter().find(|c| c.starts_with("server=")) {
        return Err(UsageError(format!(
            "--control {}: a control cell is one of the sides' shared cells; name it without \
             its server",
            crate::escape::terminal(c)
        ))
        .into());
    }
    crate::matrix::only::parse_only(derived, control)
        .map_err(|e| UsageError(e.to_string().replacen("--only", "--control", 2)).into())
}

/// Whether a cell (its dimensions without the server) is one every control selector keeps.
fn is_control(
    control: &[crate::matrix::Selector],
    dims: &indexmap::IndexMap<String, String>,
) -> bool {
    !control.is_empty()
        && control.iter().all(|sel| {
            sel.iter()
                .all(|(k, values)| dims.get(k).is_some_and(|v| values.0.contains(v)))
        })
}

fn write(dir: &Path, report: &Report) -> Result<()> {
    let json = serde_json::to_string_pretty(report)?;
    for (name, text) in [("ab.json", json + "\n"), ("ab.md", report.markdown())] {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .with_context(|| format!("failed to write {}", path.display()))?;
    }
    Ok(())
}

/// What each side is: the revision given and the commit it names (source servers), or the
/// image.
fn side_infos(
    loaded: &LoadedMatrix,
    server: &str,
    (a, b): (&Side, &Side),
) -> Result<(SideInfo, SideInfo)> {
    let (name_a, name_b) = derive::side_names(server);
    let info = |flag: &str, name: String, side: &Side| -> Result<SideInfo> {
        Ok(match side {
            Side::Rev(rev) => {
                let repo = &loaded.sources[server].repo;
                let c = git::resolve(repo, rev).map_err(|e| {
                    UsageError(format!(
                        "{flag}: {}",
                        crate::escape::terminal(&e.to_string())
                    ))
                })?;
                SideInfo {
                    server: name,
                    given: rev.clone(),
                    commit: Some(c.commit),
                    subject: Some(c.subject),
                }
            }
            Side::Image(image) => {
                crate::input::untrusted::image_reference(image)
                    .map_err(|e| UsageError(format!("{flag}: {}", crate::escape::terminal(&e))))?;
                SideInfo {
                    server: name,
                    given: image.clone(),
                    commit: None,
                    subject: None,
                }
            }
        })
    };
    let ia = info("--a", name_a, a)?;
    let ib = info("--b", name_b, b)?;
    if ia.given == ib.given || (ia.commit.is_some() && ia.commit == ib.commit) {
        eprintln!("ab: --a and --b name the same build: an A/A run (every change should be none)");
    }
    Ok((ia, ib))
}

/// The server whose builds are compared: the one `--server` names, else the matrix's only
/// `source:` server, else its only server.
fn server_of(loaded: &LoadedMatrix, named: Option<&str>) -> Result<String> {
    let servers = &loaded.matrix.servers;
    let names: Vec<&str> = servers.keys().map(String::as_str).collect();
    let sources: Vec<&str> = (servers.iter())
        .filter(|(_, s)| s.source.is_some())
        .map(|(n, _)| n.as_str())
        .collect();
    match (named, sources.as_slice(), names.as_slice()) {
        (Some(n), _, _) if servers.contains_key(n) => Ok(n.to_string()),
        (Some(n), _, _) => Err(UsageError(format!(
            "--server: `{}` is not a server of the matrix; those are: {}",
            crate::escape::terminal(n),
            names.join(", ")
        ))
        .into()),
        (None, [one], _) | (None, [], [one]) => Ok(one.to_string()),
        (None, _, _) => Err(UsageError(format!(
            "the matrix has several servers: choose the one to compare with --server ({})",
            names.join(", ")
        ))
        .into()),
    }
}

fn default_dir(matrix: &Path) -> PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let stem = (matrix.file_stem())
        .map(|s| crate::matrix::plan::slug(&s.to_string_lossy()))
        .unwrap_or_else(|| "matrix".into());
    Path::new("reports/ab").join(format!("{stamp}-{stem}"))
}
