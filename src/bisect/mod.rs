//! `rmatrix bisect`: the first commit between a good and a bad revision of a `source:`
//! server that has the regression. The ends are measured first and compared; the changes
//! the bad end regressed are the ones followed. Each step builds a commit (once: images are
//! tagged by tree), measures only the regressed cells, and is placed between the ends
//! (`judge`); the next commit is the middle of what is left (`search`). Every run and the
//! steps so far live under one directory (`state`), so an interrupted bisection resumes.
//! `--paired` measures side by side with the good end instead (`paired`), and a short range
//! all at once (`scan`).

mod judge;
mod paired;
mod scan;
mod search;
mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::compare::join::{self, Comparison, Verdict};
use crate::compare::{input, noise};
use crate::error::{Outcome, UsageError};
use crate::matrix::LoadedMatrix;
use crate::servers::images::git;
use judge::Step;
use search::Next;
pub(crate) use state::{Args, State};

/// Times a step whose verdict is "cannot tell" is measured again before it counts as
/// skipped (and a step far beyond the ends before its verdict counts).
const REMEASURES: u32 = 2;

/// Run (or resume) a bisection; how it ended.
pub(crate) async fn bisect(args: Args, resume: Option<PathBuf>) -> Result<Outcome> {
    let resuming = resume.is_some();
    let (mut st, dir) = state_of(args, resume)?;
    // Everything the arguments name is checked before the state is written and anything is
    // built: a refusal hours in, or a state left behind that blocks the corrected retry,
    // would cost the user the most.
    st.args.check()?;
    let loaded = crate::matrix::load_file_set(&st.args.matrix, &st.args.set)?;
    let server = source_server(&loaded, st.args.server.as_deref())?;
    let repo = loaded.sources[&server].repo.clone();
    let (good, bad) = ends_of(&repo, &st.args)?;
    if st.args.paired {
        let p = paired::Paired {
            loaded: &loaded,
            server: &server,
            repo: &repo,
            dir: &dir,
        };
        return p.start(&st.args, resuming, (&good, &bad)).await;
    }
    if !resuming {
        st.start(&dir)?;
    }
    let commits = git::between(&repo, &good, &bad, st.args.first_parent)?;
    let ctx = Ctx {
        loaded: &loaded,
        server: &server,
        repo: &repo,
        dir: &dir,
    };
    eprintln!(
        "bisect: {} commits after {} up to {}; runs in {}",
        commits.len(),
        &good[..12],
        &bad[..12],
        crate::escape::terminal(&dir.display().to_string())
    );
    let only = st.args.only.clone();
    let good_run = ctx.measure(&mut st, &good, "good", &only).await?;
    let bad_run = ctx.measure(&mut st, &bad, "bad", &only).await?;
    let (Some(good_run), Some(bad_run)) = (good_run, bad_run) else {
        eprintln!("bisect: an end has no successful cell: nothing to compare");
        return Ok(Outcome::NotReproduced);
    };
    let opts = st.args.compare_options(&good_run)?;
    let ends = Ends::new(good_run, bad_run, &opts)?;
    ctx.bisect(&mut st, &commits, (&good, &bad), &opts, ends)
        .await
}

/// The state and directory of a bisection: read from `resume`, or new.
fn state_of(args: Args, resume: Option<PathBuf>) -> Result<(State, PathBuf)> {
    Ok(match resume {
        Some(dir) => (State::read(&dir)?, dir),
        None => {
            let dir = (args.out.clone()).unwrap_or_else(|| state::default_dir(&args));
            (State::new(args), dir)
        }
    })
}

/// The commits `--good` and `--bad` name, refused (exit 2) unless good comes before bad.
fn ends_of(repo: &Path, args: &Args) -> Result<(String, String)> {
    let revision = |flag: &str, rev: &str| {
        git::resolve(repo, rev).map(|c| c.commit).map_err(|e| {
            UsageError(format!(
                "{flag}: {}",
                crate::escape::terminal(&e.to_string())
            ))
        })
    };
    let good = revision("--good", &args.good)?;
    let bad = revision("--bad", &args.bad)?;
    let shown = |rev: &str| crate::escape::terminal(rev);
    if good == bad {
        return Err(UsageError(format!(
            "--good {} and --bad {} are the same commit ({}): bisect needs a good commit \
             before a bad one",
            shown(&args.good),
            shown(&args.bad),
            &good[..12]
        ))
        .into());
    }
    if !git::is_ancestor(repo, &good, &bad) {
        return Err(UsageError(format!(
            "--good {} is not an ancestor of --bad {}: bisect needs good before bad",
            shown(&args.good),
            shown(&args.bad)
        ))
        .into());
    }
    Ok((good, bad))
}

/// The two ends' runs, their comparison and the changes it regressed (the targets).
struct Ends {
    good: input::Run,
    bad: input::Run,
    cmp: Comparison,
    targets: BTreeSet<judge::Target>,
}

impl Ends {
    fn new(good: input::Run, bad: input::Run, opts: &join::Options) -> Result<Ends> {
        let cmp = join::compare(&good, &bad, opts)?;
        let targets = judge::targets(&cmp);
        Ok(Ends {
            good,
            bad,
            cmp,
            targets,
        })
    }

    /// The ends with `again` (a new run of the good end, or of the bad one) in place of the
    /// old run, when it differs from it on a target; None when it measures the same.
    fn moved(&self, again: input::Run, good: bool, opts: &join::Options) -> Result<Option<Ends>> {
        let old = if good { &self.good } else { &self.bad };
        let cmp = join::compare(old, &again, opts)?;
        let moved = cmp.changes.iter().any(|c| {
            self.targets.contains(&(c.cell.clone(), c.metric.clone()))
                && matches!(c.verdict, Verdict::Regressed | Verdict::Improved)
        });
        if !moved {
            return Ok(None);
        }
        let (g, b) = match good {
            true => (again, self.bad.clone()),
            false => (self.good.clone(), again),
        };
        Ok(Some(Ends::new(g, b, opts)?))
    }
}

/// Steps so far: (commit index, verdict, its comparison with the good end).
type Steps = Vec<(usize, Step, Option<Comparison>)>;

/// What every step needs.
struct Ctx<'a> {
    loaded: &'a LoadedMatrix,
    server: &'a str,
    repo: &'a Path,
    dir: &'a Path,
}

impl Ctx<'_> {
    /// Search `commits` between the ends for the first bad one: the search, and an end
    /// measured again when every step fell on one side of it.
    async fn bisect(
        &self,
        st: &mut State,
        commits: &[String],
        (good, bad): (&str, &str),
        opts: &join::Options,
        mut ends: Ends,
    ) -> Result<Outcome> {
        let only = only_of(&ends.bad, &ends.targets);
        let mut runs = BTreeMap::new();
        let mut rechecked = false;
        loop {
            if ends.targets.is_empty() {
                return Ok(state::nothing_to_bisect(&ends.cmp));
            }
            let (outcome, steps) = self
                .search(st, commits, &only, opts, &ends, &mut runs)
                .await?;
            // Every step on one side puts the first bad commit at an end of the range: either it
            // is there, or the host changed after that end was measured. That end is measured
            // once more; if it moved, the steps are judged again against its new run.
            let edge = match outcome {
                Next::Found(0) if !steps.is_empty() => Some((good, "good-again")),
                Next::Found(i) if i + 1 == commits.len() && !steps.is_empty() => {
                    Some((bad, "bad-again"))
                }
                _ => None,
            };
            let moved = match (edge, rechecked) {
                (Some((commit, label)), false) => {
                    rechecked = true;
                    match self.measure(st, commit, label, &only).await? {
                        Some(again) => ends.moved(again, label == "good-again", opts)?,
                        None => None,
                    }
                }
                _ => None,
            };
            match moved {
                Some(new) => {
                    eprintln!(
                        "bisect: the {} end measures otherwise now than at the start (the host \
                         changed?): its new run is the reference, and every step is judged again",
                        if new.good.path == ends.good.path {
                            "bad"
                        } else {
                            "good"
                        }
                    );
                    ends = new;
                }
                None => {
                    let report = state::Report {
                        commits,
                        steps: &steps,
                        repo: self.repo,
                        targets: &ends.targets,
                        ends: &ends.cmp,
                    };
                    println!("{}", report.render(&outcome)?);
                    return Ok(match outcome {
                        Next::Found(_) => Outcome::Done,
                        _ => Outcome::OnlySkipped,
                    });
                }
            }
        }
    }
    /// Judge the runs measured so far against `ends`, then measure the middle of what is left
    /// until the first bad commit is known (`runs`: each measured commit's last run).
    async fn search(
        &self,
        st: &mut State,
        commits: &[String],
        only: &[String],
        opts: &join::Options,
        ends: &Ends,
        runs: &mut BTreeMap<usize, Option<input::Run>>,
    ) -> Result<(Next, Steps)> {
        let mut known: BTreeMap<usize, Step> = BTreeMap::from([(commits.len() - 1, Step::Bad)]);
        let mut steps = Steps::new();
        for (i, run) in runs.iter() {
            let (step, vs_good) = match run {
                Some(run) => {
                    let vs_good = join::compare(&ends.good, run, opts)?;
                    match judge::judge(&ends.targets, &ends.cmp, &vs_good) {
                        // Its measurements are spent: a commit still undecided is passed over.
                        Step::CannotTell => (Step::Skipped, Some(vs_good)),
                        s => (s, Some(vs_good)),
                    }
                }
                None => (Step::Skipped, None),
            };
            known.insert(*i, step);
            steps.push((*i, step, vs_good));
        }
        loop {
            let i = match search::next(commits.len(), &known) {
                Next::Measure(i) => i,
                done => return Ok((done, steps)),
            };
            let (step, vs_good, run) = self.step(st, &commits[i], only, opts, ends).await?;
            runs.insert(i, run);
            known.insert(i, step);
            steps.push((i, step, vs_good));
        }
    }

    /// Measure `commit` and judge it, again while it is cannot tell.
    async fn step(
        &self,
        st: &mut State,
        commit: &str,
        only: &[String],
        opts: &join::Options,
        ends: &Ends,
    ) -> Result<(Step, Option<Comparison>, Option<input::Run>)> {
        for attempt in 0..=REMEASURES {
            let label = match attempt {
                0 => "step".to_string(),
                n => format!("step-again{n}"),
            };
            let Some(run) = self.measure(st, commit, &label, only).await? else {
                eprintln!("bisect: {}: skipped (no successful cell)", &commit[..12]);
                return Ok((Step::Skipped, None, None));
            };
            let vs_good = join::compare(&ends.good, &run, opts)?;
            let step = judge::judge(&ends.targets, &ends.cmp, &vs_good);
            let far = judge::beyond_ends(&ends.targets, &ends.cmp, &vs_good);
            match far && step != Step::CannotTell {
                true => eprintln!(
                    "bisect: {}: {step}, but far beyond the ends (did the machine change?)",
                    &commit[..12]
                ),
                false => eprintln!("bisect: {}: {step}", &commit[..12]),
            }
            if (step != Step::CannotTell && !far) || attempt == REMEASURES {
                let step = match step {
                    Step::CannotTell => Step::Skipped,
                    s => s,
                };
                return Ok((step, Some(vs_good), Some(run)));
            }
        }
        unreachable!("invariant: the last attempt returns")
    }

    /// The run of `commit` (measured now, or found in the state from before an
    /// interruption); None when no cell succeeded (it did not build or start).
    async fn measure(
        &self,
        st: &mut State,
        commit: &str,
        label: &str,
        only: &[String],
    ) -> Result<Option<input::Run>> {
        let out = st.run_dir(self.dir, commit, label);
        if !st.finished(&out) {
            if out.exists() {
                // Interrupted before its end: measured again from the start.
                std::fs::remove_dir_all(&out)
                    .with_context(|| format!("failed to remove {}", out.display()))?;
            }
            let loaded = at_commit(self.loaded, self.server, self.repo, commit)?;
            let opts = crate::run::RunOptions::quiet_into(loaded, &out, only)?;
            eprintln!(
                "bisect: {} ({label}): building and measuring",
                &commit[..12]
            );
            crate::run::run(opts).await?;
            st.finish(self.dir, &out)?;
        }
        match input::load_run(&out) {
            Ok(run) => Ok(Some(run)),
            Err(crate::compare::CompareError::NoResults { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// The matrix with `server` built at `commit`.
fn at_commit(
    loaded: &LoadedMatrix,
    server: &str,
    repo: &Path,
    commit: &str,
) -> Result<LoadedMatrix> {
    let mut out = loaded.clone();
    let src = out
        .sources
        .get_mut(server)
        .expect("invariant: the server has a source");
    src.commit = git::resolve(repo, commit)?;
    src.rev = commit.to_string();
    if let Some(s) = out
        .matrix
        .servers
        .get_mut(server)
        .and_then(|s| s.source.as_mut())
    {
        s.rev = commit.to_string();
    }
    Ok(out)
}

/// The one `source:` server, or the one `--server` names.
fn source_server(loaded: &LoadedMatrix, named: Option<&str>) -> Result<String> {
    let mut names: Vec<&String> = loaded.sources.keys().collect();
    names.sort();
    match (named, names.as_slice()) {
        (Some(n), _) if loaded.sources.contains_key(n) => Ok(n.to_string()),
        (Some(n), _) => Err(UsageError(format!(
            "--server: `{}` is not a `source:` server of the matrix; those are: {}",
            crate::escape::terminal(n),
            list(&names)
        ))
        .into()),
        (None, [one]) => Ok(one.to_string()),
        (None, []) => Err(UsageError(
            "bisect needs a server built from source (`source: {git, rev, recipe}`)".into(),
        )
        .into()),
        (None, _) => Err(UsageError(format!(
            "the matrix has several `source:` servers: choose one with --server ({})",
            list(&names)
        ))
        .into()),
    }
}

fn list(names: &[&String]) -> String {
    match names.is_empty() {
        true => "(none)".into(),
        false => names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `--only` selectors that keep the cells of `targets`.
fn only_of(run: &input::Run, targets: &BTreeSet<judge::Target>) -> Vec<String> {
    let cells: Vec<indexmap::IndexMap<String, String>> = run
        .cells(&[])
        .into_values()
        .filter(|dims| targets.iter().any(|(c, _)| *c == input::cell_name(dims)))
        .collect();
    crate::compare::rerun::only_args(cells.iter())
}

/// The noise model of a bisection: `compare`'s, learned from `--noise-from` when given.
fn noise_of(
    paths: &[PathBuf],
    metrics: &[&'static crate::model::metric::Metric],
    cand: &input::Run,
) -> Result<noise::Noise> {
    Ok(match paths.is_empty() {
        true => noise::Noise::default(),
        false => noise::Noise::learn(
            &crate::store::load_runs(paths, &[])?,
            metrics,
            &[],
            std::slice::from_ref(cand),
        ),
    })
}
