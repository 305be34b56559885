//! A bisection's directory: `bisect.json` (its arguments and the runs that finished), one
//! run directory per measured step under `runs/`, and the table of steps it ends with.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::judge::{Step, Target};
use super::search::Next;
use crate::compare::join::{self, Comparison, Verdict};
use crate::error::{Outcome, UsageError};
use crate::escape::md_cell as md;

const STATE: &str = "bisect.json";

/// What a bisection was asked (kept so that `--resume` goes on with the same).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Args {
    pub(crate) matrix: PathBuf,
    pub(crate) good: String,
    pub(crate) bad: String,
    pub(crate) server: Option<String>,
    pub(crate) only: Vec<String>,
    pub(crate) set: Vec<(String, String)>,
    pub(crate) first_parent: bool,
    pub(crate) threshold: String,
    /// The threshold of counted metrics (compare's `--counted-threshold`).
    #[serde(default = "default_counted_threshold")]
    pub(crate) counted_threshold: String,
    pub(crate) confidence: String,
    pub(crate) noise_from: Vec<PathBuf>,
    pub(crate) assume_run_noise: String,
    pub(crate) metrics: Vec<String>,
    /// Each step side by side with the good end (`paired`), in batches of `rounds` rounds up
    /// to `max_rounds`.
    #[serde(default)]
    pub(crate) paired: bool,
    #[serde(default = "default_rounds")]
    pub(crate) rounds: u32,
    #[serde(default = "default_max_rounds")]
    pub(crate) max_rounds: u32,
    /// With `paired`: a range of at most this many commits is scanned in one run instead of
    /// bisected (`scan`); None when not given (`SCAN_UP_TO`).
    #[serde(default)]
    pub(crate) scan_up_to: Option<u32>,
    /// With `paired`: each step's two sides at the same time on CPUs of their own
    /// (`repeat.duet`); no scan.
    #[serde(default)]
    pub(crate) duet: bool,
    #[serde(skip)]
    pub(crate) out: Option<PathBuf>,
}

fn default_counted_threshold() -> String {
    crate::commands::options::COUNTED_THRESHOLD.into()
}

fn default_rounds() -> u32 {
    6
}

fn default_max_rounds() -> u32 {
    30
}

impl Args {
    /// Every option checked as `compare_options` will read it, without a run: a typo is
    /// refused before anything is built.
    pub(crate) fn check(&self) -> Result<()> {
        crate::stats::Confidence::parse(&self.confidence)
            .ok_or_else(|| crate::compare::CompareError::BadConfidence(self.confidence.clone()))?;
        join::parse_threshold(&self.threshold)?;
        join::parse_threshold(&self.counted_threshold)?;
        join::parse_run_noise(&self.assume_run_noise)?;
        crate::compare::input::resolve_metrics(&self.metrics, &[])?;
        if self.scan_up_to.is_some() && !self.paired {
            return Err(UsageError(
                "--scan-up-to: only with --paired (a scan measures every commit side by side \
                 with the good end)"
                    .into(),
            )
            .into());
        }
        if !self.noise_from.is_empty() {
            crate::store::load_runs(&self.noise_from, &[])?;
        }
        Ok(())
    }

    /// `compare`'s options for this bisection (`default` gives the report metric).
    pub(crate) fn compare_options(
        &self,
        default: &crate::compare::input::Run,
    ) -> Result<join::Options> {
        let conf = crate::stats::Confidence::parse(&self.confidence)
            .ok_or_else(|| crate::compare::CompareError::BadConfidence(self.confidence.clone()))?;
        let base = [default.report_metric.as_str()];
        let metrics = crate::compare::input::resolve_metrics(&self.metrics, &base)?;
        Ok(join::Options {
            threshold_pct: join::parse_threshold(&self.threshold)?,
            confidence: conf,
            noise: super::noise_of(&self.noise_from, &metrics, default)?,
            metrics,
            ignore: Vec::new(),
            assumed_run_noise_pct: join::parse_run_noise(&self.assume_run_noise)?,
            fdr: false,
            counted_threshold_pct: join::parse_threshold(&self.counted_threshold)?,
        })
    }
}

/// The state file's content.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) args: Args,
    /// Run directories (names under `runs/`) whose run ended, in order.
    finished: Vec<String>,
}

impl State {
    /// A new bisection, not yet written anywhere.
    pub(crate) fn new(args: Args) -> State {
        State {
            args,
            finished: Vec::new(),
        }
    }

    /// Write the new bisection into `dir`, which must not hold one.
    pub(crate) fn start(&self, dir: &Path) -> Result<()> {
        if dir.join(STATE).exists() {
            return Err(UsageError(format!(
                "{} holds a bisection already: continue it with --resume {0}",
                crate::escape::terminal(&dir.display().to_string())
            ))
            .into());
        }
        std::fs::create_dir_all(dir.join("runs"))
            .with_context(|| format!("failed to create {}", dir.display()))?;
        self.save(dir)
    }

    pub(crate) fn read(dir: &Path) -> Result<State> {
        let path = dir.join(STATE);
        let text = crate::input::file::read_text(&path, crate::input::file::MANIFEST)
            .map_err(|e| UsageError(format!("no bisection to resume in {}: {e}", dir.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| UsageError(format!("{} is damaged: {e}", path.display())).into())
    }

    fn save(&self, dir: &Path) -> Result<()> {
        let tmp = dir.join(format!("{STATE}.tmp"));
        std::fs::write(&tmp, serde_json::to_string_pretty(self)?)?;
        std::fs::rename(&tmp, dir.join(STATE))?;
        Ok(())
    }

    /// Where the run of `commit` for `label` lives.
    pub(crate) fn run_dir(&self, dir: &Path, commit: &str, label: &str) -> PathBuf {
        dir.join("runs").join(format!("{}-{label}", &commit[..12]))
    }

    pub(crate) fn finished(&self, run: &Path) -> bool {
        run.file_name()
            .is_some_and(|n| self.finished.iter().any(|f| *f == n.to_string_lossy()))
    }

    pub(crate) fn finish(&mut self, dir: &Path, run: &Path) -> Result<()> {
        if let Some(n) = run.file_name() {
            self.finished.push(n.to_string_lossy().into_owned());
        }
        self.save(dir)
    }
}

/// `reports/bisect/<time>-<matrix name>`.
pub(crate) fn default_dir(args: &Args) -> PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let stem = args
        .matrix
        .file_stem()
        .map(|s| crate::matrix::plan::slug(&s.to_string_lossy()))
        .unwrap_or_else(|| "matrix".into());
    Path::new("reports/bisect").join(format!("{stamp}-{stem}"))
}

/// Why there is nothing to bisect: the ends' changes.
pub(crate) fn not_reproduced(ends: &Comparison) -> String {
    ends_table(
        "No regression: the bad end regressed nothing against the good end, so there is \
         nothing to bisect.",
        ends,
    )
}

/// The ends compared, no change regressed, and some cannot be told: not "no regression".
pub(crate) fn cannot_tell(ends: &Comparison) -> String {
    ends_table(
        &format!(
            "Cannot tell: no change between the ends is a regression beyond {}%, but the \
             intervals of {} of {} reach past it, so the measurements cannot say whether the \
             bad end regressed. Measure more (more iterations or rounds, `--noise-from`, \
             measuring both ends in the same rounds) and bisect again.",
            ends.threshold_pct,
            ends.counts.cannot_tell,
            ends.changes.len()
        ),
        ends,
    )
}

/// The ends regressed nothing: print why and return the outcome, "cannot tell" when some
/// change cannot be told ("cannot tell" is not "no regression"), else "not reproduced".
pub(crate) fn nothing_to_bisect(ends: &Comparison) -> Outcome {
    if ends_cannot_tell(ends) {
        println!("{}", cannot_tell(ends));
        Outcome::CannotTell
    } else {
        println!("{}", not_reproduced(ends));
        Outcome::NotReproduced
    }
}

/// Whether the ends' comparison ends a bisection with "cannot tell" (exit 8) rather than
/// "no regression" (exit 6): nothing regressed and some change could not be told.
pub(crate) fn ends_cannot_tell(ends: &Comparison) -> bool {
    !ends.regressed() && ends.cannot_tell()
}

fn ends_table(head: &str, ends: &Comparison) -> String {
    let mut out = format!(
        "{head}\n\n| cell | metric | change | interval | verdict |\n|---|---|---:|---:|---|\n"
    );
    for ch in &ends.changes {
        let interval = match (ch.ci_low_pct, ch.ci_high_pct) {
            (Some(_), Some(_)) => {
                format!("[{}, {}]", pct(ch, ch.ci_low_pct), pct(ch, ch.ci_high_pct))
            }
            _ => "-".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {interval} | {} |\n",
            md(&ch.cell),
            md(&ch.metric),
            pct(ch, ch.change_pct),
            ch.verdict
        ));
    }
    out
}

/// A percentage of `ch`: two decimals for a counted metric (its threshold is 0.5%), one
/// for the others.
fn pct(ch: &join::MetricChange, p: Option<f64>) -> String {
    let decimals = match ch.basis {
        Some(crate::stats::Basis::Counted) => 2,
        _ => 1,
    };
    p.map_or("-".into(), |p| format!("{p:+.decimals$}%"))
}

/// The end of a bisection as Markdown: the first bad commit (or the skipped ones it is
/// among), and the table of steps.
pub(crate) struct Report<'a> {
    pub(crate) commits: &'a [String],
    pub(crate) steps: &'a [(usize, Step, Option<Comparison>)],
    pub(crate) repo: &'a Path,
    pub(crate) targets: &'a BTreeSet<Target>,
    pub(crate) ends: &'a Comparison,
}

impl Report<'_> {
    pub(crate) fn render(&self, outcome: &Next) -> Result<String> {
        use crate::servers::images::git;
        let mut out = String::new();
        let targets: Vec<String> = self
            .targets
            .iter()
            .map(|(c, m)| format!("{} {}", md(c), md(m)))
            .collect();
        out.push_str(&format!("Bisected: {}.\n\n", targets.join(", ")));
        match outcome {
            Next::Found(i) => {
                let c = git::resolve(self.repo, &self.commits[*i])?;
                out.push_str(&format!(
                    "**First bad commit: {} `{}`** ({})\n\n",
                    md(&c.subject),
                    &c.commit,
                    md(&c.describe)
                ));
                out.push_str(&self.change_at(*i));
            }
            Next::OnlySkipped(skipped, bad) => {
                out.push_str(
                    "**Only skipped commits are left**: the first bad commit is one of these \
                     (they did not build, their server did not start, or they stayed too noisy \
                     to tell):\n\n",
                );
                for i in skipped.iter().chain(std::iter::once(bad)) {
                    let c = git::resolve(self.repo, &self.commits[*i])?;
                    out.push_str(&format!("- `{}` {}\n", &c.commit[..12], md(&c.subject)));
                }
                out.push('\n');
            }
            Next::Measure(_) => unreachable!("invariant: the search ended"),
        }
        out.push_str(
            "| # | commit | subject | verdict | change vs good |\n|---:|---|---|---|---|\n",
        );
        out.push_str(&format!(
            "| - | `{}` | (the bad end) | bad | {} |\n",
            &self.commits[self.commits.len() - 1][..12],
            self.changes(self.ends)
        ));
        for (n, (i, step, vs_good)) in self.steps.iter().enumerate() {
            let c = git::resolve(self.repo, &self.commits[*i])?;
            out.push_str(&format!(
                "| {} | `{}` | {} | {step} | {} |\n",
                n + 1,
                &c.commit[..12],
                md(&c.subject),
                vs_good.as_ref().map_or("-".into(), |v| self.changes(v))
            ));
        }
        Ok(out)
    }

    /// The regression at the first bad commit: its step's change, or the bad end's.
    fn change_at(&self, i: usize) -> String {
        let cmp = self
            .steps
            .iter()
            .find(|(j, s, _)| *j == i && *s == Step::Bad)
            .and_then(|(_, _, c)| c.as_ref())
            .unwrap_or(self.ends);
        let mut out = String::new();
        for ch in cmp.changes.iter().filter(|c| self.is_target(c)) {
            out.push_str(&format!(
                "- {} {}: {} (interval {} to {}), {}\n",
                md(&ch.cell),
                md(&ch.metric),
                pct(ch, ch.change_pct),
                pct(ch, ch.ci_low_pct),
                pct(ch, ch.ci_high_pct),
                ch.verdict
            ));
        }
        out.push('\n');
        out
    }

    fn is_target(&self, ch: &join::MetricChange) -> bool {
        self.targets.contains(&(ch.cell.clone(), ch.metric.clone()))
    }

    fn changes(&self, cmp: &Comparison) -> String {
        cmp.changes
            .iter()
            .filter(|c| self.is_target(c))
            .map(|c| {
                let mark = if c.verdict == Verdict::Regressed {
                    " (regressed)"
                } else {
                    ""
                };
                format!("{}{mark}", pct(c, c.change_pct))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::join::tests_support::{change, empty_comparison};
    use crate::compare::join::Verdict;

    fn ends(verdicts: &[Verdict]) -> Comparison {
        let mut c = empty_comparison();
        for (i, v) in verdicts.iter().enumerate() {
            let mut ch = change(&format!("c{i}"), "qps", *v);
            (ch.change_pct, ch.ci_low_pct, ch.ci_high_pct) = (Some(-25.6), Some(-51.0), Some(13.1));
            c.changes.push(ch);
            match v {
                Verdict::CannotTell => c.counts.cannot_tell += 1,
                Verdict::Regressed => c.counts.regressed += 1,
                _ => c.counts.unchanged += 1,
            }
        }
        c
    }

    #[test]
    fn cannot_tell_is_not_no_regression() {
        let c = ends(&[Verdict::CannotTell, Verdict::CannotTell]);
        assert!(ends_cannot_tell(&c));
        let text = cannot_tell(&c);
        assert!(text.starts_with("Cannot tell: "), "{text}");
        assert!(!text.contains("No regression"), "{text}");
        assert!(
            text.contains("| c0 | qps | -25.6% | [-51.0%, +13.1%] | cannot tell |"),
            "{text}"
        );
        assert!(!ends_cannot_tell(&ends(&[
            Verdict::Unchanged,
            Verdict::Unchanged
        ])));
        assert!(!ends_cannot_tell(&ends(&[
            Verdict::Regressed,
            Verdict::CannotTell
        ])));
        assert!(not_reproduced(&ends(&[Verdict::Unchanged])).starts_with("No regression"));
    }
}
