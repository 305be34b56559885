//! `rmatrix bisect --paired`: every measurement is an A/B against the good end
//! (`ab::side_by_side`), the two commits in shuffled rounds of one run, so that a host that
//! changed between steps moves both sides alike. The ends' A/B names the targets (the cells
//! and metrics the bad end regressed). A step is bad when a target regressed against the
//! good end by more than half of the ends' change, good when its change is told to be less
//! than that, and skipped when its rounds ran out before it could tell. The next commit is the
//! middle of what is left (`search`). A range of at most `--scan-up-to` commits is not
//! bisected but scanned (`scan`): every commit side by side in one run.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;

use super::judge::{is_target, nothing_to_bisect, step_of, step_plan, Step};
use super::search::{self, Next};
use super::Args;
use crate::ab::{self, CellChange, Side, Sides};
use crate::compare::join::Verdict;
use crate::error::{Outcome, UsageError};
use crate::escape::md_cell as md;
use crate::matrix::LoadedMatrix;
use crate::servers::images::git;

/// `--scan-up-to`'s default: a range of at most this many commits is scanned (`scan`).
pub(super) const SCAN_UP_TO: u32 = 16;

/// The most commits `--scan-up-to` lets a scan build and measure in every round.
const MAX_SCAN: u32 = 64;

/// What the bisection measures with: the matrix, its server and where the runs go.
pub(super) struct Paired<'a> {
    pub(super) loaded: &'a LoadedMatrix,
    pub(super) server: &'a str,
    pub(super) repo: &'a Path,
    pub(super) dir: &'a Path,
}

impl Paired<'_> {
    /// Check what only a paired bisection refuses, list the commits, and bisect them.
    pub(super) async fn start(
        &self,
        args: &Args,
        resuming: bool,
        (good, bad): (&str, &str),
    ) -> Result<Outcome> {
        check(args, resuming)?;
        crate::matrix::only::parse_only(self.loaded, &args.only)?;
        if self.dir.exists() {
            return Err(UsageError(format!(
                "--out {}: exists already; a paired bisection writes a new folder",
                crate::escape::terminal(&self.dir.display().to_string())
            ))
            .into());
        }
        let commits = git::between(self.repo, good, bad, args.first_parent)?;
        eprintln!(
            "bisect: {} commits after {} up to {}, paired; runs in {}",
            commits.len(),
            &good[..12],
            &bad[..12],
            crate::escape::terminal(&self.dir.display().to_string())
        );
        // A scan measures every commit in each round; a duet measures two at a time.
        let scan_up_to = match args.duet {
            true => 0,
            false => args.scan_up_to.unwrap_or(SCAN_UP_TO) as usize,
        };
        if commits.len() <= scan_up_to {
            let plan = self.plan(args)?;
            return super::scan::scan(self, &plan, good, &commits, &args.only).await;
        }
        self.bisect(args, (good, bad), &commits).await
    }

    async fn bisect(
        &self,
        args: &Args,
        (good, bad): (&str, &str),
        commits: &[String],
    ) -> Result<Outcome> {
        let plan = self.plan(args)?;
        let ends = self.measure(&plan, good, bad, "ends", &args.only).await?;
        let Some(ends) = ends else {
            eprintln!("bisect: the ends have no successful cell: nothing to compare");
            return Ok(Outcome::NotReproduced);
        };
        let targets: Vec<CellChange> = (ends.changes.iter())
            .filter(|c| c.verdict == Verdict::Regressed)
            .cloned()
            .collect();
        if targets.is_empty() {
            println!("{}", nothing_to_bisect(&ends.changes));
            return Ok(
                match ends
                    .changes
                    .iter()
                    .any(|c| c.verdict == Verdict::CannotTell)
                {
                    true => Outcome::CannotTell,
                    false => Outcome::NotReproduced,
                },
            );
        }
        let step_plan = step_plan(&plan, &targets);
        let only = crate::compare::rerun::only_args(targets.iter().map(|t| &t.dims));
        let mut known = BTreeMap::from([(commits.len() - 1, Step::Bad)]);
        let mut steps: Vec<(usize, Step, Vec<CellChange>)> = Vec::new();
        let outcome = loop {
            let i = match search::next(commits.len(), &known) {
                Next::Measure(i) => i,
                done => break done,
            };
            let label = format!("step-{}-{}", steps.len() + 1, &commits[i][..12]);
            let measured = self
                .measure(&step_plan, good, &commits[i], &label, &only)
                .await?;
            let (step, changes) = match measured {
                None => (Step::Skipped, Vec::new()),
                // Its rounds are spent: a step that still cannot tell is passed over.
                Some(o) => match step_of(&targets, &o.changes) {
                    Step::CannotTell => (Step::Skipped, o.changes),
                    s => (s, o.changes),
                },
            };
            eprintln!("bisect: {}: {step}", &commits[i][..12]);
            known.insert(i, step);
            steps.push((i, step, changes));
        };
        println!(
            "{}",
            self.report(&outcome, commits, &targets, &steps, step_plan.threshold_pct)?
        );
        Ok(match outcome {
            Next::Found(_) => Outcome::Done,
            _ => Outcome::OnlySkipped,
        })
    }

    /// The A/B plan of the bisection's options: its threshold, confidence and metrics (as
    /// `rmatrix ab`'s: the matrix's report metric and the server's CPU per operation, which
    /// host contention moves less, by default), its rounds.
    pub(super) fn plan(&self, args: &Args) -> Result<ab::Plan> {
        let conf = crate::stats::Confidence::parse(&args.confidence)
            .ok_or_else(|| crate::compare::CompareError::BadConfidence(args.confidence.clone()))?;
        let default = [
            self.loaded.matrix.report.metric.as_str(),
            "srv_cpu_us_per_op",
        ];
        Ok(ab::Plan {
            threshold_pct: crate::compare::join::parse_threshold(&args.threshold)?,
            conf,
            metrics: crate::compare::input::resolve_metrics(&args.metrics, &default)?,
            budget: None,
            order: crate::matrix::Order::Shuffled,
            seed: rand::random(),
            rounds: args.rounds,
            max_rounds: args.max_rounds,
            duet: match args.duet {
                true => Some(ab::duet_cpus(self.loaded)?),
                false => None,
            },
        })
    }

    /// `b` side by side with `a` into `dir/<label>`.
    async fn measure(
        &self,
        plan: &ab::Plan,
        a: &str,
        b: &str,
        label: &str,
        only: &[String],
    ) -> Result<Option<ab::Outcome>> {
        let (a, b) = (Side::Rev(a.to_string()), Side::Rev(b.to_string()));
        let sides = Sides {
            loaded: self.loaded,
            server: self.server,
            a: &a,
            b: &b,
        };
        eprintln!("bisect: {label}: building and measuring side by side");
        ab::side_by_side(&sides, plan, &self.dir.join(label), only, "bisect").await
    }

    fn report(
        &self,
        outcome: &Next,
        commits: &[String],
        targets: &[CellChange],
        steps: &[(usize, Step, Vec<CellChange>)],
        half_pct: f64,
    ) -> Result<String> {
        let names: Vec<String> = (targets.iter())
            .map(|t| format!("{} {}", md(&t.cell), md(&t.metric)))
            .collect();
        let mut out = format!(
            "Bisected: {} (paired: each commit side by side with the good end; bad beyond \
             {half_pct:.1}%, half the ends' change).\n\n",
            names.join(", ")
        );
        match outcome {
            Next::Found(i) => {
                let c = git::resolve(self.repo, &commits[*i])?;
                out.push_str(&format!(
                    "**First bad commit: {} `{}`** ({})\n\n",
                    md(&c.subject),
                    &c.commit,
                    md(&c.describe)
                ));
            }
            Next::OnlySkipped(skipped, bad) => {
                out.push_str(
                    "**Only skipped commits are left**: the first bad commit is one of these \
                     (they did not build, their server did not start, or their rounds ran out \
                     before they could tell):\n\n",
                );
                for i in skipped.iter().chain(std::iter::once(bad)) {
                    let c = git::resolve(self.repo, &commits[*i])?;
                    out.push_str(&format!("- `{}` {}\n", &c.commit[..12], md(&c.subject)));
                }
                out.push('\n');
            }
            Next::Measure(_) => unreachable!("invariant: the search ended"),
        }
        out.push_str(
            "| # | commit | subject | verdict | change vs good [interval], rounds |\n\
             |---:|---|---|---|---|\n",
        );
        out.push_str(&format!(
            "| - | `{}` | (the bad end) | bad | {} |\n",
            &commits[commits.len() - 1][..12],
            changes_text(targets, targets)
        ));
        for (n, (i, step, changes)) in steps.iter().enumerate() {
            let c = git::resolve(self.repo, &commits[*i])?;
            out.push_str(&format!(
                "| {} | `{}` | {} | {step} | {} |\n",
                n + 1,
                &c.commit[..12],
                md(&c.subject),
                changes_text(targets, changes)
            ));
        }
        Ok(out)
    }
}

fn changes_text(targets: &[CellChange], changes: &[CellChange]) -> String {
    let parts: Vec<String> = (changes.iter())
        .filter(|c| is_target(targets, c))
        .map(|c| match (c.change_pct, c.ci_low_pct, c.ci_high_pct) {
            (Some(p), Some(lo), Some(hi)) => format!(
                "{} {}: {p:+.1}% [{lo:+.1}%, {hi:+.1}%], {}",
                md(&c.cell),
                md(&c.metric),
                c.rounds
            ),
            _ => format!("{} {}: n/a, {}", md(&c.cell), md(&c.metric), c.rounds),
        })
        .collect();
    match parts.is_empty() {
        true => "-".into(),
        false => parts.join("; "),
    }
}

/// `--paired` refuses what it does not do yet.
fn check(args: &Args, resuming: bool) -> Result<()> {
    let refuse = |why: &str| Err(UsageError(format!("--paired: {why}")).into());
    if resuming {
        return refuse("a paired bisection does not resume; start it again with a new --out");
    }
    if !args.noise_from.is_empty() {
        return refuse(
            "--noise-from has no use: each step is judged on its own rounds side by side",
        );
    }
    if args.rounds < 2 || args.max_rounds < args.rounds || args.max_rounds > 10_000 {
        return refuse(&format!(
            "--rounds {} and --max-rounds {}: at least 2 rounds, and at most 10000 in all",
            args.rounds, args.max_rounds
        ));
    }
    if let Some(n) = args.scan_up_to.filter(|n| *n > MAX_SCAN) {
        return refuse(&format!(
            "--scan-up-to {n}: at most {MAX_SCAN} commits (every one is built and measured in \
             every round); 0 never scans"
        ));
    }
    Ok(())
}
