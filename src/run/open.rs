//! Where a run starts from: a new run directory with the matrix copied in, or a resumed one
//! (repaired) with its manifest and the (cell, iteration) pairs already measured.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::*;

/// (cell key, iteration) pairs already measured successfully.
pub(super) type Done = HashSet<(CellKey, u32)>;

/// What `run` starts from: the matrix, and for `--resume` the run directory (repaired), its
/// manifest and the (cell, iteration) pairs that already succeeded.
pub(super) struct Opened {
    pub(super) loaded: LoadedMatrix,
    pub(super) dir: Option<RunDir>,
    pub(super) old: Option<Manifest>,
    pub(super) done: Done,
}

pub(super) fn open_run(opts: &RunOptions) -> Result<Opened> {
    if let Some(resume) = &opts.resume {
        let dir = RunDir::open(resume)?;
        use crate::input::file;
        let text = file::read_text(&dir.file(MATRIX_COPY), file::MATRIX)?;
        let old = file::read_text(&dir.file(MANIFEST), file::MANIFEST)
            .ok()
            .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
            .filter(|m| !m.run_id.is_empty());
        // Resolve `build:` directories from where the matrix originally lived.
        let original = old
            .as_ref()
            .map(|m| PathBuf::from(&m.matrix_file))
            .unwrap_or_else(|| dir.file(MATRIX_COPY));
        let loaded = crate::matrix::load_str(&text, &original)?;
        dir.repair()?;
        let done = measured_ok(&dir.rows()?);
        return Ok(Opened {
            loaded,
            dir: Some(dir),
            old,
            done,
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
    })
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

/// The directory of a new run, with the matrix copied into it.
pub(super) fn create_run_dir(opts: &RunOptions, loaded: &LoadedMatrix) -> Result<RunDir> {
    let dir = match &opts.out {
        Some(out) => {
            anyhow::ensure!(fresh(out), "{} exists and is not empty: runs are never overwritten (use --resume to continue one)", out.display());
            std::fs::create_dir_all(out)
                .with_context(|| format!("failed to create {}", out.display()))?;
            RunDir { path: out.clone() }
        }
        None => RunDir::create(Path::new("reports/runs"), &loaded.name())?,
    };
    std::fs::write(dir.file(MATRIX_COPY), &loaded.text)
        .with_context(|| format!("failed to write {}", dir.file(MATRIX_COPY).display()))?;
    Ok(dir)
}

/// The manifest this attempt starts with: a resumed run keeps its identity (id, host, start,
/// schedule) and appends what this attempt learns; a new one records where it runs.
pub(super) fn manifest_for(
    opts: &RunOptions,
    loaded: &LoadedMatrix,
    plan: &crate::matrix::Plan,
    dir: &RunDir,
    old: Option<Manifest>,
    docker: Option<DockerFacts>,
    engine_facts: Vec<EngineFacts>,
) -> Manifest {
    let m = &loaded.matrix;
    let pooled = !opts.engines.is_empty();
    match old {
        // Resuming: the run keeps its identity (id, host, start, schedule); what this
        // attempt adds is appended to what earlier attempts learnt.
        Some(old) => Manifest {
            docker: docker.or(old.docker.clone()),
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
            run_id: dir
                .path
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            instance: format!("{:08x}", rand::random::<u32>()),
            matrix_file: loaded.path.display().to_string(),
            matrix_sha256: loaded.sha256.clone(),
            started_at: manifest::now(),
            host: Host::probe(),
            docker,
            transport: match m.network {
                Network::Host => "tcp 127.0.0.1, host networking (no NAT)".into(),
                Network::Bridge => "tcp 127.0.0.1, bridge network with published port".into(),
            },
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
