//! What an A/B says: `ab.json` (everything, for tools) and `ab.md` (the table a person reads),
//! each cell's verdict with its interval, the rounds it rests on and the smallest regression
//! those rounds could see.

use serde::Serialize;

use super::judge::CellChange;
use crate::compare::join::Verdict;
use crate::escape::{md_cell, md_code, md_text};

/// Bumped when a field changes meaning or goes away.
pub(crate) const AB_FORMAT_VERSION: u32 = 2;

/// One side as measured: what the user named and what it resolved to.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SideInfo {
    /// `<server>-a` or `<server>-b`.
    pub(crate) server: String,
    /// The revision or image as given.
    pub(crate) given: String,
    /// The commit it resolved to, and its subject (source servers).
    pub(crate) commit: Option<String>,
    pub(crate) subject: Option<String>,
}

/// One batch of rounds: its run directory, its rounds and why it ran.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Batch {
    pub(crate) run: String,
    pub(crate) rounds: u32,
    /// The cells it measured (`--only` selections); empty for all of them.
    pub(crate) only: Vec<String>,
    pub(crate) seconds: f64,
    /// The level its look was judged at (`stats::spending`).
    pub(crate) confidence: f64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    pub(crate) format_version: u32,
    pub(crate) matrix: String,
    pub(crate) a: SideInfo,
    pub(crate) b: SideInfo,
    pub(crate) order: String,
    /// Duet rounds: side A's CPUs and side B's, both measured at the same time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) duet: Option<(String, String)>,
    pub(crate) seed: u64,
    pub(crate) threshold_pct: f64,
    pub(crate) confidence: f64,
    pub(crate) test: &'static str,
    pub(crate) batches: Vec<Batch>,
    /// Why no more rounds were added while some cell could not tell (empty otherwise).
    pub(crate) stopped: String,
    pub(crate) changes: Vec<CellChange>,
}

impl Report {
    /// A cell that is no control regressed.
    pub(crate) fn regressed(&self) -> bool {
        (self.changes.iter()).any(|c| !c.control && c.verdict == Verdict::Regressed)
    }

    /// A control cell moved (regressed or improved): the run itself is suspect.
    pub(crate) fn control_moved(&self) -> bool {
        (self.changes.iter())
            .any(|c| c.control && matches!(c.verdict, Verdict::Regressed | Verdict::Improved))
    }

    pub(crate) fn cannot_tell(&self) -> bool {
        self.changes
            .iter()
            .any(|c| c.verdict == Verdict::CannotTell)
    }

    pub(crate) fn markdown(&self) -> String {
        let mut s = format!(
            "# A/B of {}: `{}` against `{}`\n\n",
            md_text(&self.matrix),
            md_code(&self.b.server),
            md_code(&self.a.server)
        );
        for (label, side) in [("A", &self.a), ("B", &self.b)] {
            s.push_str(&format!("- {label}: `{}`", md_code(&side.given)));
            if let Some(c) = side.commit.as_ref().filter(|c| !c.starts_with(&side.given)) {
                s.push_str(&format!(" = commit `{}`", md_code(&c[..c.len().min(12)])));
            }
            if let Some(subj) = &side.subject {
                s.push_str(&format!(" \"{}\"", md_cell(subj)));
            }
            s.push('\n');
        }
        let total: u32 = self.batches.iter().map(|b| b.rounds).sum();
        let seconds: f64 = self.batches.iter().map(|b| b.seconds).sum();
        s.push_str(&format!(
            "- Rounds: {} order (seed {}), a fresh server for every iteration; {} in {} \
             batch{}, {:.0} s",
            self.order,
            self.seed,
            total,
            self.batches.len(),
            if self.batches.len() == 1 { "" } else { "es" },
            seconds
        ));
        let added: Vec<String> = (self.batches.iter().skip(1))
            .map(|b| format!("{} for {}", b.rounds, md_text(&b.only.join(" "))))
            .collect();
        if !added.is_empty() {
            s.push_str(&format!(
                " (rounds added where an interval still straddled ±{}%: {})",
                self.threshold_pct,
                added.join("; ")
            ));
        }
        s.push_str(".\n");
        if let Some((a, b)) = &self.duet {
            s.push_str(&format!(
                "- Duet: both sides at the same time, each cell measured on A (CPUs `{}`) and B \
                 (CPUs `{}`) at once with its client beside its server, the sides trading CPUs \
                 every other round; each pair is a round. A round in which one side's server \
                 got a share of its CPU more than 5% off the usual split (another process on one \
                 side's CPU) is set aside, and its cell's note names it.\n",
                md_code(a),
                md_code(b)
            ));
        }
        if let Some(note) = looks_note(&self.batches, self.confidence) {
            s.push_str(&format!(
                "{note} A cell's interval is at the level of the last batch it was in.\n"
            ));
        }
        if self.control_moved() {
            s.push_str(
                "- **A control cell moved**: a cell the change cannot touch changed between the \
                 sides, so the host or the design moved them apart; no verdict of this run can \
                 be trusted (exit 8).\n",
            );
        }
        if !self.stopped.is_empty() {
            s.push_str(&format!("- No more rounds: {}.\n", md_text(&self.stopped)));
        }
        let level = match looks_note(&self.batches, self.confidence) {
            Some(_) => "interval at its look's level".to_string(),
            None => format!("{:.0}% interval", self.confidence * 100.0),
        };
        s.push_str(&format!(
            "- Each change is B against A on the per-round ratios B / A, the round as a block: \
             Hodges-Lehmann with the Wilcoxon signed-rank {level} (the paired mean's t interval \
             under 6 rounds; the note says which), threshold ±{}%. \"Sees\" is the smallest \
             regression these rounds detect 80% of the time.\n\n",
            self.threshold_pct
        ));
        s.push_str(
            "| cell | metric | A | B | change [interval] | verdict | rounds | sees | note |\n\
             |---|---|---:|---:|---:|---|---:|---:|---|\n",
        );
        for c in &self.changes {
            s.push_str(&row(c));
        }
        s
    }
}

/// The line that gives the levels the looks were judged at, when any differs from
/// `confidence`: after one batch too, whose look is at a stricter level when `--max-rounds`
/// allows more. None when every look was at `confidence`.
pub(crate) fn looks_note(batches: &[Batch], confidence: f64) -> Option<String> {
    if batches
        .iter()
        .all(|b| (b.confidence - confidence).abs() < 1e-9)
    {
        return None;
    }
    let levels: Vec<String> = (batches.iter())
        .map(|b| format!("{:.2}%", b.confidence * 100.0))
        .collect();
    let (when, which) = match batches.len() {
        1 => ("once", "a level that keeps"),
        _ => ("after each batch", "levels that keep"),
    };
    Some(format!(
        "- Looked {when}, at {}: {which} every look --max-rounds allows together at {:.0}% (the \
         error rate spent over the looks, Pocock-type), so that looking again raises no false \
         alarms.",
        levels.join(", then "),
        confidence * 100.0
    ))
}

fn row(c: &CellChange) -> String {
    let num = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.2}"));
    let change = match (c.change_pct, c.ci_low_pct, c.ci_high_pct) {
        (Some(p), Some(lo), Some(hi)) => format!("{p:+.1}% [{lo:+.1}%, {hi:+.1}%]"),
        _ => "n/a".into(),
    };
    let verdict = match c.verdict {
        Verdict::Regressed => "**regressed**".to_string(),
        v => v.to_string(),
    };
    let mut note = Vec::new();
    if c.control {
        note.push("control".to_string());
    }
    match c.basis {
        Some(crate::stats::Basis::PairedHodgesLehmann) => {
            note.push("paired Hodges-Lehmann".to_string());
            if let (Some(m), Some(lo), Some(hi)) = (c.mean_pct, c.mean_low_pct, c.mean_high_pct) {
                note.push(format!("mean {m:+.1}% [{lo:+.1}%, {hi:+.1}%]"));
            }
        }
        Some(_) => note.push("paired mean".to_string()),
        None if c.rounds < 2 => note.push("fewer than 2 rounds with both sides".to_string()),
        None => {}
    }
    if !c.jumped_rounds.is_empty() {
        let list: Vec<String> = c.jumped_rounds.iter().map(u32::to_string).collect();
        note.push(format!("host pressure jumped in round {}", list.join(", ")));
    }
    if !c.uneven_rounds.is_empty() {
        let list: Vec<String> = c.uneven_rounds.iter().map(u32::to_string).collect();
        note.push(format!(
            "{} uneven round(s) set aside: {}",
            list.len(),
            list.join(", ")
        ));
    }
    format!(
        "| {} | {} | {} | {} | {change} | {verdict} | {} | {} | {} |\n",
        md_cell(&c.cell),
        md_cell(&c.metric),
        num(c.a_median),
        num(c.b_median),
        c.rounds,
        c.mde_pct.map_or("n/a".into(), |m| format!("{m:.1}%")),
        note.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(server: &str, given: &str, subject: Option<&str>) -> SideInfo {
        SideInfo {
            server: server.into(),
            given: given.into(),
            commit: subject.map(|_| "0123456789abcdef".into()),
            subject: subject.map(Into::into),
        }
    }

    /// A report of `matrix` with sides `a` and `b` and these changes.
    /// A single look is at the stricter level --max-rounds leaves it, and the report says so
    /// instead of the nominal level; looks at the nominal level need no note.
    #[test]
    fn a_single_look_at_a_spent_level_says_its_level() {
        let batch = |confidence: f64| Batch {
            run: "runs/batch-1".into(),
            rounds: 10,
            only: Vec::new(),
            seconds: 1.0,
            confidence,
        };
        let note = looks_note(&[batch(0.977358)], 0.95).unwrap();
        assert!(
            note.starts_with("- Looked once, at 97.74%: a level"),
            "{note}"
        );
        assert!(note.contains("together at 95%"), "{note}");
        let two = looks_note(&[batch(0.9821), batch(0.9869)], 0.95).unwrap();
        assert!(
            two.contains("after each batch, at 98.21%, then 98.69%"),
            "{two}"
        );
        assert_eq!(looks_note(&[batch(0.95)], 0.95), None);
    }

    fn report(matrix: &str, a: SideInfo, b: SideInfo, changes: Vec<CellChange>) -> Report {
        Report {
            format_version: AB_FORMAT_VERSION,
            matrix: matrix.into(),
            a,
            b,
            order: "shuffled".into(),
            duet: None,
            seed: 1,
            threshold_pct: 5.0,
            confidence: 0.95,
            test: "",
            batches: Vec::new(),
            stopped: String::new(),
            changes,
        }
    }

    /// A repository's commit subject and a revision as given are untrusted: neither starts
    /// a heading, ends a code span or breaks the table.
    #[test]
    fn what_a_repository_says_stays_text() {
        let r = report(
            "# m",
            side("r-a", "v1`x", Some("fix | <b>bold</b>\n# head")),
            side("r-b", "v2", Some("[link](http://x)")),
            Vec::new(),
        );
        let md = r.markdown();
        assert!(
            md.starts_with("# A/B of \\# m: `r-b` against `r-a`\n"),
            "{md}"
        );
        assert!(md.contains("- A: `v1'x` = commit `0123456789ab`"), "{md}");
        assert!(!md.contains("<b>") && !md.contains("\n# head"), "{md}");
        assert!(md.contains("\\[link\\]"), "{md}");
        assert!(!md.contains("Duet"), "{md}");
    }

    /// Duet rounds say so, with each side's CPUs.
    #[test]
    fn a_duet_says_where_each_side_ran() {
        let mut r = report(
            "m",
            side("r-a", "a", None),
            side("r-b", "b", None),
            Vec::new(),
        );
        r.duet = Some(("0".into(), "1".into()));
        let md = r.markdown();
        assert!(
            md.contains("- Duet: both sides at the same time, each cell measured on A (CPUs `0`) and B (CPUs `1`) at once"),
            "{md}"
        );
    }

    /// A control cell that moved makes the run suspect; a regression of it is no regression
    /// of the build.
    #[test]
    fn a_control_cell_that_moved_is_no_regression_and_says_so() {
        let change = |cell: &str, verdict: Verdict, control: bool| CellChange {
            rounds: 10,
            a_median: Some(100.0),
            b_median: Some(90.0),
            change_pct: Some(-10.0),
            ci_low_pct: Some(-12.0),
            ci_high_pct: Some(-8.0),
            p_value: Some(0.002),
            control,
            ..CellChange::of_test(cell, verdict)
        };
        let mut r = report(
            "m",
            side("r-a", "a", None),
            side("r-b", "b", None),
            vec![
                change("get", Verdict::Unchanged, false),
                change("set", Verdict::Regressed, true),
            ],
        );
        assert!(!r.regressed() && r.control_moved());
        let md = r.markdown();
        assert!(md.contains("A control cell moved"), "{md}");
        assert!(
            md.contains("| set | qps |") && md.contains("| control"),
            "{md}"
        );
        r.changes[1].verdict = Verdict::Unchanged;
        r.changes[0].verdict = Verdict::Regressed;
        assert!(r.regressed() && !r.control_moved());
    }
}
