//! `rmatrix plan`: the cells a matrix expands to, their estimate, and what each one's
//! compare could see.

use std::path::PathBuf;

use anyhow::Result;

use super::options::{confidence_of, ASSUMED_RUN_NOISE};
use super::stdio::emit;
use crate::error::{Outcome, UsageError};
use crate::matrix::model::Selector;
use crate::matrix::{expand, LoadedMatrix};
use crate::results::estimate::{self, Estimate, Learned};

/// `rmatrix plan`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {
    /// The matrix file (YAML).
    pub(crate) matrix: PathBuf,
    /// Keep only cells where dimension KEY has VALUE (comma list allowed); repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) only: Vec<String>,
    /// The value of the matrix's parameter NAME (`params:`), before RMATRIX_PARAM_NAME and
    /// its default; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub(crate) set: Vec<String>,
    #[command(flatten)]
    pub(crate) power: PlanPowerArgs,
    #[command(flatten)]
    pub(crate) output: PlanOutputArgs,
}

/// `rmatrix plan`'s output and where its estimate learns from.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanOutputArgs {
    /// `text`, or `json` for scripts: the cells by deployment, the counts and the estimate.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: PlanFormat,
    /// Stored runs the estimate learns this matrix's timings from: run directories, folders
    /// of them or results stores (a SQLite file or a postgres:// URL); repeatable (default:
    /// reports/runs and reports/examples).
    #[arg(long = "learn-from", value_name = "PATH")]
    pub(crate) learn_from: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PlanFormat {
    Text,
    Json,
}

/// `rmatrix plan`'s detection-power options.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanPowerArgs {
    /// Earlier runs of the matrix (as `compare --noise-from`): print the smallest
    /// regression each cell's compare would flag with 80% power at the matrix's iterations.
    #[arg(long = "noise-from", value_name = "PATH")]
    pub(crate) noise_from: Vec<PathBuf>,
    /// With --noise-from: the iterations per cell needed for compare to see a regression
    /// of PCT (above --threshold) with 80% power.
    #[arg(long, value_name = "PCT", requires = "noise_from")]
    pub(crate) target: Option<String>,
    /// The threshold compare will use (`5%` or `5`).
    #[arg(long, default_value = "5%")]
    pub(crate) threshold: String,
    /// The confidence level compare will use (`95`, `95%` or `0.95`).
    #[arg(long, default_value = "95%")]
    pub(crate) confidence: String,
    /// The CV of run means assumed for a cell with fewer than 3 runs in the store, as
    /// `compare --assume-run-noise`.
    #[arg(long, value_name = "PCT", default_value = ASSUMED_RUN_NOISE)]
    pub(crate) assume_run_noise: String,
}

/// `rmatrix plan`: the cells, and with `--noise-from` what each one's compare would see.
pub(super) fn plan(a: &PlanArgs) -> Result<Outcome> {
    let (p, output) = (&a.power, &a.output);
    let loaded = crate::matrix::load_file_set(&a.matrix, &crate::matrix::parse_set(&a.set)?)?;
    let selectors = crate::matrix::only::parse_only(&loaded, &a.only)?;
    let learn_from: Vec<std::path::PathBuf> = match output.learn_from.is_empty() {
        true => estimate::default_sources(),
        false => output.learn_from.clone(),
    };
    let profiled = loaded.matrix.profile.is_some();
    let mut learned = estimate::learn(&learn_from, &loaded.name(), profiled);
    // A results store among them: its runs of this matrix.
    for p in &learn_from {
        if let Some(loc) = crate::store::Location::detect(p)? {
            crate::store::Store::read(&loc)?.learn(&loaded.name(), &mut learned)?;
        }
    }
    if output.format == PlanFormat::Json {
        if !p.noise_from.is_empty() {
            return Err(UsageError(
                "plan --format json does not carry --noise-from's table: run it without --format"
                    .into(),
            )
            .into());
        }
        emit(&plan_json(&loaded, &selectors, &learned)?)?;
        return Ok(Outcome::Done);
    }
    let power = match p.noise_from.is_empty() {
        true => String::new(),
        false => plan_power(
            &loaded,
            &selectors,
            &p.noise_from,
            p.target.as_deref(),
            (&p.threshold, &p.confidence, &p.assume_run_noise),
        )?,
    };
    emit(&format!(
        "{}{power}",
        plan_text(&loaded, &selectors, &learned)
    ))?;
    // What `run` would refuse before it starts, said now.
    if loaded.matrix.counted == Some(crate::matrix::model::Counted::Perf) {
        if let Err(why) = crate::measure::perf_count::available() {
            eprintln!("note: `rmatrix run` will refuse this matrix here: {why}");
        }
    }
    Ok(Outcome::Done)
}

/// The whole plan of `loaded` with its estimate assumed, as from no stored run (the fuzz
/// target's view of `plan`).
pub fn plan_text_assumed(loaded: &LoadedMatrix) -> String {
    plan_text(loaded, &[], &Learned::default())
}

fn plan_text(loaded: &LoadedMatrix, only: &[Selector], learned: &Learned) -> String {
    let m = &loaded.matrix;
    let plan = expand(m, only);
    let mut out = String::new();
    if !loaded.params.is_empty() {
        let values: Vec<String> = (loaded.params.iter())
            .map(|(k, v)| format!("{k}={}", crate::escape::terminal(v)))
            .collect();
        out.push_str(&format!("params: {}\n", values.join(" ")));
    }
    for d in &plan.deployments {
        out.push_str(&format!(
            "{} x {}  ({} cells)\n",
            d.server,
            d.config,
            d.cells.len()
        ));
        for c in &d.cells {
            out.push_str(&format!("  {c}\n"));
        }
    }
    let e = estimate::estimate(m, &plan, learned);
    let runs = e.cells as u64 * u64::from(m.iterations);
    out.push_str(&format!(
        "{} deployments, {} cells, {} iterations each = {runs} measured runs, {} server start(s); \
         estimate {}\n",
        plan.deployments.len(),
        e.cells,
        m.iterations,
        e.server_starts,
        Estimate::shown(e.seconds),
    ));
    if !e.learned_from.is_empty() {
        let from: Vec<String> = (e.learned_from.iter())
            .map(|p| crate::escape::terminal(p))
            .collect();
        out.push_str(&format!(
            "estimate learned from the {} newest stored run(s) of this matrix{} ({}): {} of {} \
             cells, {} of {} server starts\n",
            from.len(),
            match e.this_host {
                true => " on this host",
                false => " (none on this host: another machine's)",
            },
            from.join(", "),
            e.cells_learned,
            e.cells,
            e.starts_learned,
            e.server_starts
        ));
        if let Some((lo, hi)) = e.spread_seconds {
            out.push_str(&format!(
                "estimate from each of them alone: {} to {}\n",
                Estimate::shown(lo),
                Estimate::shown(hi)
            ));
        }
    }
    if !e.assumed.is_empty() {
        out.push_str(&format!("estimate assumes {}\n", e.assumed));
    }
    if let Some(more) = adaptive_text(m) {
        out.push_str(&more);
    }
    out
}

/// What the adaptive repeats may add beyond the estimate, which counts the first
/// `iterations` only: how many rounds they do is known only as the run goes.
fn adaptive_text(m: &crate::matrix::Matrix) -> Option<String> {
    let r = &m.repeat;
    let why = match (r.until_cv, r.until_interval) {
        (None, None) => return None,
        (Some(cv), None) => format!("a cell's CV is above {cv}%"),
        (None, Some(w)) => format!("a change against the baseline is wider than ±{w} points"),
        (Some(cv), Some(w)) => format!(
            "a cell's CV is above {cv}% or a change against the baseline is wider than ±{w} points"
        ),
    };
    let most = r.max_iterations.unwrap_or(10).max(m.iterations);
    let budget = match r.max_time {
        Some(t) => format!(", within {t}"),
        None => String::new(),
    };
    Some(format!(
        "then adaptive rounds, not in the estimate: more while {why}, up to {most} iterations \
         a cell{budget}\n"
    ))
}

/// `rmatrix plan --format json`: the cells by deployment, the counts and the estimate.
fn plan_json(loaded: &LoadedMatrix, only: &[Selector], learned: &Learned) -> Result<String> {
    let m = &loaded.matrix;
    let plan = expand(m, only);
    let e = estimate::estimate(m, &plan, learned);
    let cell = |c: &crate::matrix::plan::Cell| {
        serde_json::json!({
            "cell": c.to_string(), "server": c.server, "config": c.config, "engine": c.engine,
            "workload": c.workload, "concurrency": c.concurrency, "rate": c.rate,
            "estimate_seconds_per_iteration": e.of_cell(c),
        })
    };
    let deployments: Vec<_> = (plan.deployments.iter())
        .map(|d| {
            serde_json::json!({
                "server": d.server, "config": d.config,
                "cells": d.cells.iter().map(cell).collect::<Vec<_>>(),
            })
        })
        .collect();
    let value = serde_json::json!({
        "matrix": loaded.name(),
        "params": loaded.params,
        "deployments": deployments,
        "cells": e.cells,
        "iterations": m.iterations,
        "measured_runs": e.cells as u64 * u64::from(m.iterations),
        "estimate": e,
    });
    Ok(crate::escape::json(&serde_json::to_string_pretty(&value)?) + "\n")
}

/// `rmatrix plan --noise-from`: what each cell's compare would see, learned from earlier
/// runs of the matrix's report metric; with a target, the iterations that reach it.
fn plan_power(
    loaded: &LoadedMatrix,
    only: &[Selector],
    noise_from: &[std::path::PathBuf],
    target: Option<&str>,
    (threshold, confidence, assume_run_noise): (&str, &str, &str),
) -> Result<String> {
    use crate::compare::{input, join, noise, sensitivity};
    let threshold_pct = join::parse_threshold(threshold)?;
    let target_pct = target
        .map(|t| join::parse_target(t, threshold_pct))
        .transpose()?;
    let opts = sensitivity::PlanPower {
        threshold_pct,
        confidence: confidence_of(confidence, None)?,
        assumed_run_noise_pct: join::parse_run_noise(assume_run_noise)?,
        iterations: loaded.matrix.iterations as usize,
        target_pct,
    };
    let metric = input::resolve_metrics(&[], &[loaded.matrix.report.metric.as_str()])?[0];
    let runs = crate::store::load_runs(noise_from, &[])?;
    let noise = noise::Noise::learn(&runs, &[metric], &[], &[]);
    let cells: Vec<(crate::model::CellKey, String)> = expand(&loaded.matrix, only)
        .cells()
        .map(|c| (c.key(), c.to_string()))
        .collect();
    let rows = sensitivity::plan_power(&cells, metric, &noise, &opts);
    let missing: Vec<String> = (cells.iter())
        .filter(|(_, name)| rows.iter().all(|r| r.cell != *name))
        .map(|(_, name)| name.clone())
        .collect();
    Ok(sensitivity::render(&rows, &missing, metric, &opts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::only::parse_only;
    use std::path::Path;

    /// `--only rate=...` plans the cells at those rates; an unknown rate lists the matrix's.
    #[test]
    fn only_rate_keeps_those_rates_and_lists_the_valid_ones() {
        let loaded = crate::matrix::load_file(Path::new("matrices/open-loop.yaml")).unwrap();
        let sel = parse_only(&loaded, &["rate=10000,40000".to_string()]).unwrap();
        let plan = plan_text(&loaded, &sel, &Learned::default());
        let cells: Vec<&str> = plan.lines().filter(|l| l.starts_with("  ")).collect();
        assert_eq!(
            cells,
            [
                "  redis-7.0/default/get/c8/r10000",
                "  redis-7.0/default/get/c8/r40000"
            ],
            "{plan}"
        );
        let e = parse_only(&loaded, &["rate=5001".to_string()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--only: unknown rate `5001`; valid choices: 5000, 10000, 20000, 40000, 80000, \
             160000, 320000, 640000"
        );
    }
}
