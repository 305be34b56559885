//! Reading and validating a matrix file. Every problem found here is reported with the
//! file, line and column, and the valid choices where there is a closed set, before any
//! container starts.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use indexmap::IndexMap;

use super::model::{BuildDir, BuildSpec, Matrix, Selector, WorkloadSpec};
use crate::input::span::{Pos, SpanIndex};
use crate::input::untrusted;
use crate::input::yaml::MAX_FILE_BYTES;
use crate::model::metric::Metric;
use crate::model::Dimension;

/// Most cells a matrix may expand to: far beyond any study, small enough to plan instantly.
pub const MAX_CELLS: usize = 100_000;
/// Most iterations per cell.
pub const MAX_ITERATIONS: u32 = 10_000;

mod families;
mod pacing;

/// A bad matrix: where, what, and what would be valid.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for MatrixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            // About the whole file (unreadable, too large): no position to give.
            0 => write!(f, "{}: {}", self.file, self.message),
            _ => write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.col, self.message
            ),
        }
    }
}

impl std::error::Error for MatrixError {}

/// A validated matrix with what was derived from its surroundings.
#[derive(Debug, Clone)]
pub struct LoadedMatrix {
    pub matrix: Matrix,
    pub path: PathBuf,
    pub text: String,
    pub sha256: String,
    /// Build context directory and build arguments of each `build:` server.
    pub build_dirs: HashMap<String, Build>,
}

/// What a `build:` server's image is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct Build {
    /// The context folder, with its Dockerfile.
    pub dir: PathBuf,
    /// Values of `ARG`s the Dockerfile declares (checked with `untrusted::build_arg_*`).
    pub args: BTreeMap<String, String>,
}

/// The names `build:` accepts besides folders: `mariadb-10.11: {dir: mariadb, args: {...}}`.
pub const BUILD_NAMES: &str = "builds.yaml";

impl LoadedMatrix {
    pub fn name(&self) -> String {
        self.matrix.name.clone().unwrap_or_else(|| {
            self.path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "matrix".into())
        })
    }
}

pub fn load_file(path: &Path) -> Result<LoadedMatrix, MatrixError> {
    let file = path.display().to_string();
    let fail = |line, col, message| MatrixError {
        file: file.clone(),
        line,
        col,
        message,
    };
    // Read at most one byte past the limit: `/dev/zero` or a log file is refused at once.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| fail(0, 0, format!("failed to read the matrix file: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(
            0,
            0,
            format!(
                "the matrix file is larger than {MAX_FILE_BYTES} bytes (1 MiB): a matrix is a \
                 few KiB of YAML"
            ),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let good = std::str::from_utf8(good).unwrap_or_default();
        let line = good.matches('\n').count() + 1;
        let col = good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        fail(
            line,
            col,
            "the matrix file is not UTF-8 text (an invalid byte here)".into(),
        )
    })?;
    load_str(&text, path)
}

pub fn load_str(text: &str, path: &Path) -> Result<LoadedMatrix, MatrixError> {
    load(text, path, true)
}

/// A matrix as a client container reads it (`rmatrix drive-cell`): checked the same way,
/// but its `build:` folders are not looked for (they are the orchestrator's, not its).
pub fn load_for_client(text: &str) -> Result<LoadedMatrix, MatrixError> {
    load(text, Path::new("matrix.yaml"), false)
}

fn load(text: &str, path: &Path, builds: bool) -> Result<LoadedMatrix, MatrixError> {
    let file = path.display().to_string();
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(MatrixError {
            file,
            line: 0,
            col: 0,
            message: format!("the matrix is larger than {MAX_FILE_BYTES} bytes (1 MiB)"),
        });
    }
    let spans = SpanIndex::build(text);
    if let Some(syntax) = &spans.syntax {
        return Err(MatrixError {
            file,
            line: syntax.pos.line,
            col: syntax.pos.col,
            message: crate::input::yaml::syntax(syntax),
        });
    }
    if spans.is_empty() {
        return Err(MatrixError {
            file,
            line: 1,
            col: 1,
            message: "the matrix file is empty: it needs at least `servers`, `workloads` and \
                      `length`"
                .into(),
        });
    }
    let matrix = crate::input::yaml::from_str::<Matrix>(text).map_err(|e| {
        let (pos, message) =
            crate::input::yaml::describe(&e, &spans, text, super::model::WORKLOAD_KINDS);
        MatrixError {
            file: file.clone(),
            line: pos.line,
            col: pos.col,
            message,
        }
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let v = Validator {
        file: &file,
        spans: &spans,
        m: &matrix,
    };
    v.check()?;
    let plan = super::plan::expand(&matrix, &[]);
    if plan.cell_count() == 0 {
        let at = if matrix.include.is_empty() {
            "exclude"
        } else {
            "include"
        };
        return Err(v.err(
            at,
            "`exclude`/`include` leave no cell to run: the matrix would measure nothing".into(),
        ));
    }
    v.check_external(&plan)?;
    let build_dirs = match builds {
        true => v.build_dirs(base)?,
        false => HashMap::new(),
    };
    Ok(LoadedMatrix {
        sha256: format!("{:x}", Sha256::digest(text.as_bytes())),
        matrix,
        path: path.to_path_buf(),
        text: text.to_string(),
        build_dirs,
    })
}

struct Validator<'a> {
    file: &'a str,
    spans: &'a SpanIndex,
    m: &'a Matrix,
}

fn choices<'a>(it: impl IntoIterator<Item = &'a String>) -> String {
    it.into_iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Validator<'_> {
    fn err_at(&self, pos: Pos, message: String) -> MatrixError {
        MatrixError {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
            message,
        }
    }
    fn err(&self, path: &str, message: String) -> MatrixError {
        self.err_at(self.spans.find(path), message)
    }

    fn check(&self) -> Result<(), MatrixError> {
        let m = self.m;
        if m.servers.is_empty() {
            return Err(self.err(
                "servers",
                "`servers` is empty: name at least one server".into(),
            ));
        }
        if m.configs.is_empty() {
            return Err(self.err(
                "configs",
                "`configs` is empty: omit it or name at least one".into(),
            ));
        }
        if m.workloads.is_empty() {
            return Err(self.err(
                "workloads",
                "`workloads` is empty: name at least one".into(),
            ));
        }
        if m.concurrency.is_empty() {
            return Err(self.err(
                "concurrency",
                "`concurrency` is empty: give at least one value".into(),
            ));
        }
        if let Some(i) = m.concurrency.iter().position(|&c| c == 0) {
            return Err(self.err(
                &format!("concurrency[{i}]"),
                "concurrency must be at least 1".into(),
            ));
        }
        if m.iterations == 0 {
            return Err(self.err("iterations", "iterations must be at least 1".into()));
        }
        if m.length == super::Length::Queries(0)
            || m.length == super::Length::Time(Default::default())
        {
            return Err(self.err(
                "length",
                "length must be more than 0 (queries or time)".into(),
            ));
        }
        // Durations that are only ever times: a bare number has no unit to guess.
        for (path, v) in [
            ("start_timeout", m.start_timeout),
            ("stall_timeout", m.stall_timeout),
            ("repeat.cooldown", m.repeat.cooldown),
            ("repeat.max_time", m.repeat.max_time),
        ] {
            if let Some(super::Length::Queries(n)) = v {
                return Err(self.err(
                    path,
                    format!("`{n}` needs a unit: ms, s, m or h (e.g. {n}s)"),
                ));
            }
        }
        // A timeout of zero would fail every start or every iteration.
        for (path, v) in [
            ("start_timeout", m.start_timeout),
            ("stall_timeout", m.stall_timeout),
        ] {
            if v == Some(super::Length::Time(Default::default())) {
                return Err(self.err(path, format!("{path} must be more than 0s")));
            }
        }
        if let Some(cv) = m
            .repeat
            .until_cv
            .filter(|cv| !(cv.is_finite() && *cv > 0.0))
        {
            return Err(self.err(
                "repeat.until_cv",
                format!("until_cv {cv} is not a percentage above 0 (e.g. 3 for 3%)"),
            ));
        }
        if m.repeat.max_iterations == Some(0) {
            return Err(self.err(
                "repeat.max_iterations",
                "max_iterations must be at least 1".into(),
            ));
        }
        if m.iterations > MAX_ITERATIONS {
            return Err(self.err(
                "iterations",
                format!("iterations {} is more than {MAX_ITERATIONS}", m.iterations),
            ));
        }
        // The cell count, before anything is expanded (a typo can ask for millions).
        let cells = [
            m.servers.len(),
            m.configs.len().max(1),
            m.engines.len().max(1),
            m.workloads.len(),
            m.concurrency.len(),
            m.load.rate.as_ref().map_or(1, Vec::len),
        ]
        .iter()
        .try_fold(1usize, |acc, n| acc.checked_mul(*n))
        .filter(|c| *c <= MAX_CELLS);
        if cells.is_none() {
            return Err(self.err(
                "servers",
                format!(
                    "the matrix expands to more than {MAX_CELLS} cells ({} servers x {} configs \
                     x {} engines x {} workloads x {} concurrency levels): split it",
                    m.servers.len(),
                    m.configs.len(),
                    m.engines.len(),
                    m.workloads.len(),
                    m.concurrency.len()
                ),
            ));
        }
        // The same value twice on an axis would run every such cell twice.
        if let Some(i) =
            (1..m.concurrency.len()).find(|&i| m.concurrency[..i].contains(&m.concurrency[i]))
        {
            return Err(self.err(
                &format!("concurrency[{i}]"),
                format!("concurrency {} is listed twice", m.concurrency[i]),
            ));
        }
        if let Some(i) = (1..m.engines.len()).find(|&i| m.engines[..i].contains(&m.engines[i])) {
            return Err(self.err(
                &format!("engines[{i}]"),
                format!("engine `{}` is listed twice", m.engines[i]),
            ));
        }
        for (name, s) in &m.servers {
            let path = format!("servers.{name}");
            let n = s.image.is_some() as u8 + s.build.is_some() as u8 + s.external.is_some() as u8;
            if n != 1 {
                return Err(self.err_at(
                    self.spans.key(&path),
                    format!("server `{name}` needs exactly one of `image`, `build` or `external`"),
                ));
            }
        }
        let needs_engine = m.workloads.values().find(|w| WorkloadSpec::uses_engine(w));
        if let (Some(w), true) = (needs_engine, m.engines.is_empty()) {
            return Err(self.err(
                "workloads",
                format!(
                    "{} workloads create their own tables: list `engines` (e.g. [InnoDB, MyISAM])",
                    w.kind()
                ),
            ));
        }
        for (i, sel) in m.exclude.iter().enumerate() {
            self.check_selector(sel, &format!("exclude[{i}]"))?;
        }
        for (i, sel) in m.include.iter().enumerate() {
            self.check_selector(sel, &format!("include[{i}]"))?;
        }
        self.check_report()?;
        self.check_load()?;
        self.check_workloads()?;
        self.check_untrusted()?;
        Ok(())
    }

    /// Names and values that are written into config files and SQL (see `untrusted`).
    fn check_untrusted(&self) -> Result<(), MatrixError> {
        use crate::input::untrusted::{config_value, cpuset, env_name, name, sql_identifier};
        let m = self.m;
        if let Some(n) = &m.name {
            name("matrix", n).map_err(|msg| self.err("name", msg))?;
        }
        for (server, s) in &m.servers {
            if let Some(c) = &s.cpuset {
                let path = format!("servers.{server}.cpuset");
                cpuset(c).map_err(|msg| self.err(&path, msg))?;
                if s.external.is_some() {
                    return Err(self.err(
                        &path,
                        "an external server runs where its owner put it: rmatrix cannot pin it \
                         to CPUs; remove `cpuset`"
                            .into(),
                    ));
                }
            }
        }
        for (what, section, keys) in [
            ("server", "servers", m.servers.keys().collect::<Vec<_>>()),
            ("config", "configs", m.configs.keys().collect()),
            ("workload", "workloads", m.workloads.keys().collect()),
        ] {
            for k in keys {
                name(what, k)
                    .map_err(|msg| self.err_at(self.spans.key(&format!("{section}.{k}")), msg))?;
            }
        }
        for (i, e) in m.engines.iter().enumerate() {
            sql_identifier("engine", e).map_err(|msg| self.err(&format!("engines[{i}]"), msg))?;
        }
        for (name, c) in &m.configs {
            for block in crate::servers::config::config_blocks() {
                for (key, value) in c.settings(block.key) {
                    let path = format!("configs.{name}.{}.{key}", block.key);
                    (block.check_key)(key)
                        .map_err(|msg| self.err_at(self.spans.key(&path), msg))?;
                    if let Some(v) = value {
                        config_value(key, &v.0).map_err(|msg| self.err(&path, msg))?;
                    }
                }
            }
            for (key, value) in &c.env {
                let path = format!("configs.{name}.env.{key}");
                env_name(key).map_err(|msg| self.err_at(self.spans.key(&path), msg))?;
                config_value(key, value).map_err(|msg| self.err(&path, msg))?;
            }
        }
        Ok(())
    }

    /// Each kind's own checks (`Driver::check`), at their place in the file.
    fn check_workloads(&self) -> Result<(), MatrixError> {
        let facts = crate::workloads::Facts {
            length: self.m.length,
            pace: (self.m.load.rate.as_ref())
                .and_then(|r| r.first())
                .map(|&r| self.m.load.pace(r, 0)),
        };
        for (name, w) in &self.m.workloads {
            if let Err(p) = w.check(&facts) {
                let path = match p.at.as_str() {
                    "" => format!("workloads.{name}.{}", w.kind()),
                    at => format!("workloads.{name}.{}.{at}", w.kind()),
                };
                let pos = match p.on_key {
                    true => self.spans.key(&path),
                    false => self.spans.find(&path),
                };
                return Err(self.err_at(pos, p.message));
            }
        }
        self.check_kinds()?;
        self.check_refusals()
    }

    /// An external server is never reconfigured: each of its cells must use an empty config.
    fn check_external(&self, plan: &super::plan::Plan) -> Result<(), MatrixError> {
        for d in &plan.deployments {
            let changes = self.m.configs[&d.config].changes_server();
            if self.m.servers[&d.server].external.is_some() && changes {
                return Err(self.err_at(
                    self.spans.key(&format!("configs.{}", d.config)),
                    format!(
                        "config `{}` would change the external server `{}`, which rmatrix never \
                         reconfigures: add `{{server: {}, config: {}}}` to `exclude`",
                        d.config, d.server, d.server, d.config
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Values along each dimension, as strings, in matrix order.
    fn axis(&self, dim: &str) -> Vec<String> {
        let m = self.m;
        match dim {
            "server" => m.servers.keys().cloned().collect(),
            "config" => m.configs.keys().cloned().collect(),
            "engine" => m.engines.clone(),
            "workload" => m.workloads.keys().cloned().collect(),
            "concurrency" => m.concurrency.iter().map(|c| c.to_string()).collect(),
            "rate" => m
                .load
                .rate
                .iter()
                .flatten()
                .map(|r| r.to_string())
                .collect(),
            _ => Vec::new(),
        }
    }

    fn check_dim(&self, dim: &str, path: &str) -> Result<(), MatrixError> {
        if Dimension::parse(dim).is_some() {
            return Ok(());
        }
        Err(self.err_at(
            self.spans.key(path),
            format!(
                "unknown dimension `{dim}`; valid dimensions: {}",
                Dimension::choices()
            ),
        ))
    }

    fn check_value(&self, dim: &str, value: &str, path: &str) -> Result<(), MatrixError> {
        let axis = self.axis(dim);
        if axis.iter().any(|v| v == value) {
            return Ok(());
        }
        Err(self.err(
            path,
            format!("unknown {dim} `{value}`; valid choices: {}", choices(&axis)),
        ))
    }

    fn check_selector(&self, sel: &Selector, path: &str) -> Result<(), MatrixError> {
        if sel.is_empty() {
            return Err(self.err(path, "an empty rule would match every cell".into()));
        }
        for (dim, values) in sel {
            let p = format!("{path}.{dim}");
            self.check_dim(dim, &p)?;
            for (j, v) in values.0.iter().enumerate() {
                let vp = if values.0.len() > 1 {
                    format!("{p}[{j}]")
                } else {
                    p.clone()
                };
                self.check_value(dim, v, &vp)?;
            }
        }
        Ok(())
    }

    fn check_report(&self) -> Result<(), MatrixError> {
        let r = &self.m.report;
        // (field, path, value) of every duration the report block holds.
        let ts: Vec<(&str, String, crate::input::Length)> = match &r.apdex_t {
            None => Vec::new(),
            Some(super::model::ApdexT::All(t)) => vec![("apdex_t", "report.apdex_t".into(), *t)],
            Some(super::model::ApdexT::PerWorkload(map)) => {
                for w in map.keys() {
                    let path = format!("report.apdex_t.{w}");
                    if !self.m.workloads.contains_key(w) {
                        return Err(self.err_at(
                            self.spans.key(&path),
                            format!(
                                "unknown workload `{}`; valid choices: {}",
                                crate::escape::terminal(w),
                                choices(self.m.workloads.keys())
                            ),
                        ));
                    }
                }
                map.iter()
                    .map(|(w, t)| ("apdex_t", format!("report.apdex_t.{w}"), *t))
                    .collect()
            }
        };
        if let Some(lc) = &r.load_curve {
            if !(lc.min_gain_pct.is_finite() && lc.min_gain_pct >= 0.0) {
                return Err(self.err(
                    "report.load_curve.min_gain_pct",
                    format!(
                        "min_gain_pct {} is not a percentage of 0 or more (e.g. 5)",
                        lc.min_gain_pct
                    ),
                ));
            }
            if let Some(e) = lc
                .error_pct
                .filter(|e| !(e.is_finite() && (0.0..=100.0).contains(e)))
            {
                return Err(self.err(
                    "report.load_curve.error_pct",
                    format!("error_pct {e} is not a percentage between 0 and 100"),
                ));
            }
        }
        let p99 = r.load_curve.as_ref().and_then(|lc| lc.p99);
        let ts = ts
            .into_iter()
            .chain(p99.map(|t| ("p99", "report.load_curve.p99".to_string(), t)));
        for (name, path, t) in ts {
            match t {
                crate::input::Length::Queries(n) => {
                    return Err(self.err(
                        &path,
                        format!("`{n}` needs a unit: ms, s, m or h (e.g. {n}ms)"),
                    ))
                }
                crate::input::Length::Time(d) if d.is_zero() => {
                    return Err(self.err(&path, format!("{name} must be more than 0ms")));
                }
                _ => {}
            }
        }
        if Metric::find(&r.metric).is_none() {
            return Err(self.err(
                "report.metric",
                format!(
                    "unknown metric `{}`; valid choices: {}",
                    r.metric,
                    Metric::names().join(", ")
                ),
            ));
        }
        if let Some(c) = r.confidence {
            if crate::stats::Confidence::parse(&c.to_string()).is_none() {
                return Err(self.err(
                    "report.confidence",
                    format!(
                        "confidence {c} is not a level between 50 and 100 percent \
                         (e.g. 95 or 0.95)"
                    ),
                ));
            }
        }
        for (list, name) in [(&r.rows, "rows"), (&r.columns, "columns")] {
            for (i, dim) in list.iter().enumerate() {
                let p = format!("report.{name}[{i}]");
                if Dimension::parse(dim).is_none() {
                    return Err(self.err(
                        &p,
                        format!(
                            "unknown dimension `{dim}`; valid dimensions: {}",
                            Dimension::choices()
                        ),
                    ));
                }
            }
        }
        if let Some(d) = r.rows.iter().find(|d| r.columns.contains(d)) {
            return Err(self.err(
                "report.columns",
                format!("`{d}` is in both report rows and columns"),
            ));
        }
        for (dim, value) in &r.baseline {
            let p = format!("report.baseline.{dim}");
            self.check_dim(dim, &p)?;
            self.check_value(dim, value, &p)?;
        }
        Ok(())
    }

    fn build_dirs(&self, base: &Path) -> Result<HashMap<String, Build>, MatrixError> {
        let containers = containers_dir(base);
        let mut out = HashMap::new();
        for (name, s) in &self.m.servers {
            let Some(build) = &s.build else { continue };
            let path = format!("servers.{name}.build");
            let not_found = |dir: &str, path: &str, names: &[String]| {
                let mut available = match &containers {
                    Some(c) if !dir.contains('/') => folders(c),
                    _ => Vec::new(),
                };
                available.extend(names.iter().cloned());
                available.sort();
                self.err(
                    path,
                    format!(
                        "no Dockerfile for `{}` under containers/; available: {}",
                        untrusted::printable(dir),
                        if available.is_empty() {
                            "(none found)".into()
                        } else {
                            available.join(", ")
                        }
                    ),
                )
            };
            let resolved = match build {
                BuildSpec::Dir(BuildDir { dir, args }) => {
                    let found = resolve_build_dir(base, containers.as_deref(), dir)
                        .ok_or_else(|| not_found(dir, &format!("{path}.dir"), &[]))?;
                    for (k, v) in args {
                        let at = format!("{path}.args.{k}");
                        untrusted::build_arg_name(k)
                            .map_err(|msg| self.err_at(self.spans.key(&at), msg))?;
                        untrusted::build_arg_value(k, v).map_err(|msg| self.err(&at, msg))?;
                        declared(&found, k).map_err(|msg| self.err_at(self.spans.key(&at), msg))?;
                    }
                    Build {
                        dir: found,
                        args: args.clone().into_iter().collect(),
                    }
                }
                BuildSpec::Name(n) => match resolve_build_dir(base, containers.as_deref(), n) {
                    Some(dir) => Build {
                        dir,
                        args: BTreeMap::new(),
                    },
                    // Not a folder: a name from containers/builds.yaml.
                    None => {
                        let Some(here) = containers.as_deref().filter(|_| !n.contains('/')) else {
                            return Err(not_found(n, &path, &[]));
                        };
                        let file = here.join(BUILD_NAMES);
                        let names = build_names(&file).map_err(|e| self.err(&path, e))?;
                        let Some(named) = names.get(n) else {
                            let names: Vec<String> = names.keys().cloned().collect();
                            return Err(not_found(n, &path, &names));
                        };
                        let in_file = |msg: String| {
                            self.err(&path, format!("`{n}` in {}: {msg}", file.display()))
                        };
                        let dir = resolve_build_dir(here, Some(here), &named.dir)
                            .ok_or_else(|| in_file(format!("no Dockerfile for `{}`", named.dir)))?;
                        for (k, v) in &named.args {
                            untrusted::build_arg_name(k)
                                .and_then(|()| untrusted::build_arg_value(k, v))
                                .and_then(|()| declared(&dir, k))
                                .map_err(in_file)?;
                        }
                        Build {
                            dir,
                            args: named.args.clone().into_iter().collect(),
                        }
                    }
                },
            };
            out.insert(name.clone(), resolved);
        }
        Ok(out)
    }
}

/// Where `build:` names are looked up: the nearest `containers/` directory above the matrix
/// file, else `./containers`.
fn containers_dir(base: &Path) -> Option<PathBuf> {
    // Absolute, so that `rmatrix run quick.yaml` in matrices/ finds ../containers.
    let base = match base.as_os_str().is_empty() {
        true => std::path::absolute("."),
        false => std::path::absolute(base),
    }
    .unwrap_or_else(|_| base.to_path_buf());
    base.ancestors()
        .chain(std::iter::once(Path::new(".")))
        .map(|d| d.join("containers"))
        .find(|c| c.is_dir())
}

/// The folder of `build: dir`: with a `/`, a path relative to the matrix file; otherwise a
/// folder of `containers/`. None when it has no Dockerfile.
fn resolve_build_dir(base: &Path, containers: Option<&Path>, dir: &str) -> Option<PathBuf> {
    let candidate = if dir.contains('/') {
        base.join(dir)
    } else {
        containers?.join(dir)
    };
    candidate.join("Dockerfile").is_file().then_some(candidate)
}

/// The folders of `containers/` that hold a Dockerfile, sorted.
fn folders(containers: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(containers)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().join("Dockerfile").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The named builds of `containers/builds.yaml` (none when the file does not exist).
fn build_names(file: &Path) -> Result<IndexMap<String, BuildDir>, String> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(IndexMap::new()),
        Err(e) => return Err(format!("failed to read {}: {e}", file.display())),
    };
    crate::input::yaml::from_str(&text).map_err(|e| {
        let spans = SpanIndex::build(&text);
        let (pos, message) = crate::input::yaml::describe(&e, &spans, &text, &[]);
        format!("{}:{}:{}: {message}", file.display(), pos.line, pos.col)
    })
}

/// Ok when the Dockerfile in `dir` declares `ARG name`; else the names it declares.
fn declared(dir: &Path, name: &str) -> Result<(), String> {
    let dockerfile = dir.join("Dockerfile");
    let text = std::fs::read_to_string(&dockerfile).unwrap_or_default();
    let mut names: Vec<&str> = Vec::new();
    for line in text.lines() {
        let Some((instruction, rest)) = line.trim_start().split_once(char::is_whitespace) else {
            continue;
        };
        if !instruction.eq_ignore_ascii_case("ARG") {
            continue;
        }
        for word in rest.split_whitespace() {
            let arg = word.split('=').next().unwrap_or_default();
            if untrusted::build_arg_name(arg).is_ok() && !names.contains(&arg) {
                names.push(arg);
            }
        }
    }
    if names.contains(&name) {
        return Ok(());
    }
    Err(format!(
        "build argument `{name}` is not declared in {} (`ARG {name}`); declared: {}",
        dockerfile.display(),
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
servers:
  db: {image: mariadb:11}
configs:
  off: {}
  on: {mycnf: {log_bin: 1}}
engines: [InnoDB]
workloads:
  w: {slap: {load_type: write}}
length: 100
";

    fn err(text: &str) -> MatrixError {
        load_str(text, Path::new("m.yaml")).unwrap_err()
    }

    #[test]
    fn good_matrix_loads() {
        let m = load_str(GOOD, Path::new("m.yaml")).unwrap();
        assert_eq!(m.matrix.servers.len(), 1);
        assert_eq!(m.sha256.len(), 64);
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let e = err(&GOOD.replace("length: 100", "length: 100\niteratons: 3"));
        assert_eq!((e.line, e.col), (10, 1), "{e}");
        assert!(e.message.contains("unknown field `iteratons`"), "{e}");
        assert!(
            e.message.contains("iterations"),
            "lists the valid keys: {e}"
        );
        assert!(e.to_string().starts_with("m.yaml:10:1: "), "{e}");
    }

    #[test]
    fn wrong_type_and_unknown_kind() {
        let e = err(&GOOD.replace("length: 100", "length: 100\nconcurrency: two"));
        assert_eq!((e.line, e.col), (10, 14), "{e}");
        assert_eq!(
            e.message,
            "`concurrency`: give a list of levels (`[1, 2, 4]`) or geometric steps (`{from: 1, \
             factor: 2, to: 512}`), not `two`"
        );
        let e = err(&GOOD.replace("{slap: {load_type: write}}", "{slapp: {}}"));
        assert_eq!((e.line, e.col), (8, 7), "{e}");
        assert_eq!(
            e.message,
            "workload `w` names an unknown driver `slapp`; valid drivers: slap, oltp, sysbench, \
             redis, redis_benchmark, sqlbench"
        );
        let e = err(&GOOD.replace("{slap: {load_type: write}}", "slap"));
        assert_eq!((e.line, e.col), (8, 6), "{e}");
        assert!(
            e.message
                .starts_with("workload `w` must name one driver with its options"),
            "{e}"
        );
        for internal in ["SlapSpec", "variant", "struct"] {
            assert!(!e.message.contains(internal), "{e}");
        }
        let e = err(&GOOD.replace("load_type: write", "load_type: wrte"));
        assert!(
            e.message
                .contains("expected one of `write`, `key`, `read`, `update`, `mixed`"),
            "{e}"
        );
        let e = err(&GOOD.replace("length: 100", "length: 3 weeks"));
        assert!(e.message.contains("unknown unit"), "{e}");
        assert_eq!((e.line, e.col), (9, 9), "the value's own position: {e}");
    }

    #[test]
    fn duplicate_keys_limits_and_merge_keys() {
        let e = err(&GOOD.replace(
            "  on: {mycnf: {log_bin: 1}}",
            "  on: {mycnf: {log_bin: 1, log_bin: 2}}",
        ));
        assert_eq!((e.line, e.col), (5, 28), "{e}");
        assert_eq!(
            e.message,
            "`log_bin` is defined twice in `configs.on.mycnf`: each key may appear once"
        );
        let e = err(&format!("{GOOD}workloads:\n  x: {{slap: {{}}}}\n"));
        assert_eq!((e.line, e.col), (10, 1), "{e}");
        let deep = format!("servers: {}", "[".repeat(100_000));
        let e = err(&deep);
        assert!(
            e.message
                .starts_with("lists and mappings are nested more than 32 deep"),
            "{e}"
        );
        let merged = GOOD.replace(
            "  db: {image: mariadb:11}",
            "  db: &base {image: mariadb:11}\n  db2: {<<: *base}",
        );
        let m = load_str(&merged, Path::new("m.yaml")).unwrap();
        assert_eq!(m.matrix.servers["db2"].image.as_deref(), Some("mariadb:11"));
        let e = err(&GOOD.replace("servers:", "servers: {a: {image: x}\nx:"));
        assert_eq!((e.line, e.col), (2, 1), "{e}");
        assert!(
            e.message
                .ends_with("(the `{` opened at line 1, column 10 is not closed)"),
            "{e}"
        );
        let e = err(&GOOD.replace("servers:", "servers: {a: [b, c}\nx:"));
        assert_eq!((e.line, e.col), (1, 14), "{e}");
        assert_eq!(
            e.message,
            "YAML syntax: mismatched bracket '[' closed by '}'"
        );
    }

    #[test]
    fn unknown_names_in_exclude_and_report() {
        let e = err(&format!("{GOOD}exclude:\n  - {{engine: MyISAM}}\n"));
        assert_eq!((e.line, e.col), (11, 14), "{e}");
        assert_eq!(e.message, "unknown engine `MyISAM`; valid choices: InnoDB");
        let e = err(&format!("{GOOD}exclude:\n  - {{storage: InnoDB}}\n"));
        assert!(
            e.message
                .contains("unknown dimension `storage`; valid dimensions: server, config"),
            "{e}"
        );
        let e = err(&format!("{GOOD}report: {{metric: qqps}}\n"));
        assert!(
            e.message
                .starts_with("unknown metric `qqps`; valid choices: qps, tps"),
            "{e}"
        );
        let e = err(&format!("{GOOD}report: {{baseline: {{config: of}}}}\n"));
        assert_eq!(e.message, "unknown config `of`; valid choices: off, on");
        assert_eq!(e.line, 10);
        let e = err(&format!("{GOOD}report: {{confidence: 120}}\n"));
        assert_eq!(
            e.message,
            "confidence 120 is not a level between 50 and 100 percent (e.g. 95 or 0.95)"
        );
        assert_eq!((e.line, e.col), (10, 22));
    }

    /// Whatever reaches a config file or SQL is checked, with its position.
    #[test]
    fn injection_is_refused_where_it_is_written() {
        let e = err(&GOOD.replace(
            "engines: [InnoDB]",
            "engines: [InnoDB, \"MyISAM; DROP DATABASE mysql; --\"]",
        ));
        assert!(
            e.message.starts_with(
                "engine `MyISAM; DROP DATABASE mysql; --` is not a plain SQL identifier"
            ),
            "{e}"
        );
        assert_eq!((e.line, e.col), (6, 19), "{e}");
        let oltp = |spec: &str| {
            GOOD.replace(
                "w: {slap: {load_type: write}}",
                &format!("w: {{oltp: {spec}}}"),
            )
        };
        let e = err(&oltp("{db: \"x`; DROP TABLE t; --\"}"));
        assert!(
            e.message.starts_with("database `x`; DROP TABLE t; --`"),
            "{e}"
        );
        assert_eq!(e.line, 8, "{e}");
        let e = err(&oltp(
            "{mysql_storage_engine: \"InnoDB */ DROP TABLE x; /*\"}",
        ));
        assert!(e.message.starts_with("storage engine `InnoDB */"), "{e}");
        let cnf = |on: &str| GOOD.replace("on: {mycnf: {log_bin: 1}}", on);
        let e = err(&cnf("on: {mycnf: {\"!include /etc/shadow\": ~}}"));
        assert!(
            e.message
                .starts_with("my.cnf option `!include /etc/shadow` is not an option name"),
            "{e}"
        );
        assert_eq!((e.line, e.col), (5, 16), "{e}");
        let e = err(&cnf(
            "on: {mycnf: {log_bin: \"1\\n[mysqld_safe]\\nmalloc-lib = /tmp/x.so\"}}",
        ));
        assert!(
            e.message
                .starts_with("the value of `log_bin` contains a newline"),
            "{e}"
        );
        assert!(
            e.message.contains("1\\n[mysqld_safe]"),
            "shown escaped: {e}"
        );
        let e = err(&cnf("on: {redis_conf: {rename-command: \"CONFIG x\"}}"));
        assert!(
            e.message
                .starts_with("redis.conf directive `rename-command` is refused"),
            "{e}"
        );
        let e = err(&cnf(
            "on: {redis_conf: {appendonly: \"yes\\nrequirepass x\"}}",
        ));
        assert!(
            e.message
                .starts_with("the value of `appendonly` contains a newline"),
            "{e}"
        );
        for (text, want) in [
            ("length: 0s", "length must be more than 0"),
            ("start_timeout: 5", "`5` needs a unit"),
            (
                "iterations: 4294967295",
                "iterations 4294967295 is more than 10000",
            ),
            ("concurrency: [2, 4, 2]", "concurrency 2 is listed twice"),
            ("length: 1000000000000000h", "is longer than 7 days"),
        ] {
            let m = if text.starts_with("length") {
                GOOD.replace("length: 100", text)
            } else {
                format!("{GOOD}{text}\n")
            };
            let e = err(&m);
            assert!(e.message.contains(want), "{text}: {e}");
        }
        let many = GOOD.replace(
            "engines: [InnoDB]",
            "engines: [InnoDB]\nconcurrency: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]",
        );
        let workloads: String = (0..5001)
            .map(|i| format!("  w{i}: {{slap: {{}}}}\n"))
            .collect();
        let e = err(&many.replace("  w: {slap: {load_type: write}}\n", &workloads));
        assert!(
            e.message
                .starts_with("the matrix expands to more than 100000 cells"),
            "{e}"
        );
        let e = err(&GOOD.replace("  off: {}", "  \"a|b\": {}"));
        assert!(
            e.message.starts_with("config name `a|b` must be letters"),
            "{e}"
        );
        assert_eq!((e.line, e.col), (4, 3), "{e}");
    }

    #[test]
    fn empty_axes_and_bad_servers() {
        let e = err(&GOOD.replace("engines: [InnoDB]", "engines: []"));
        assert!(e.message.contains("list `engines`"), "{e}");
        let e = err(&format!("{GOOD}concurrency: []\n"));
        assert!(e.message.contains("`concurrency` is empty"), "{e}");
        let e = err(&GOOD.replace("{image: mariadb:11}", "{image: a, build: b}"));
        assert_eq!(e.line, 2);
        assert!(
            e.message
                .contains("exactly one of `image`, `build` or `external`"),
            "{e}"
        );
        let e = err(&GOOD.replace("{image: mariadb:11}", "{build: no-such-dir}"));
        assert!(e.message.contains("no Dockerfile for `no-such-dir`"), "{e}");
    }

    /// `GOOD` with its server built by `build` (a flow value); `kind` keeps Redis builds
    /// loadable with GOOD's slap workload.
    fn built(build: &str) -> Result<LoadedMatrix, MatrixError> {
        let text = GOOD.replace(
            "{image: mariadb:11}",
            &format!("{{build: {build}, kind: mysql}}"),
        );
        load_str(&text, Path::new("m.yaml"))
    }

    /// A path under this repository's containers/, which `m.yaml` (in the working directory
    /// of `cargo test`) finds.
    fn repo(rel: &str) -> PathBuf {
        std::path::absolute("containers").unwrap().join(rel)
    }

    fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn build_is_a_name_or_a_folder_with_arguments() {
        use super::super::model::{BuildDir, BuildSpec, ServerKind, ServerSpec};
        let m = built("mariadb").unwrap();
        assert_eq!(
            m.matrix.servers["db"].build,
            Some(BuildSpec::Name("mariadb".into()))
        );
        assert_eq!(m.build_dirs["db"].dir, repo("mariadb"));
        assert!(m.build_dirs["db"].args.is_empty());
        let m = built("{dir: mariadb, args: {suite: trixie}}").unwrap();
        assert_eq!(
            m.matrix.servers["db"].build,
            Some(BuildSpec::Dir(BuildDir {
                dir: "mariadb".into(),
                args: IndexMap::from([("suite".to_string(), "trixie".to_string())]),
            }))
        );
        assert_eq!(m.build_dirs["db"].dir, repo("mariadb"));
        assert_eq!(m.build_dirs["db"].args, args(&[("suite", "trixie")]));
        let m = built("{dir: redis}").unwrap();
        assert!(m.build_dirs["db"].args.is_empty());
        // The family is inferred from the folder, as from a name.
        for (build, kind) in [
            (
                "{dir: redis, args: {package: valkey-server}}",
                ServerKind::Redis,
            ),
            ("valkey-8.1", ServerKind::Redis),
            ("{dir: mariadb}", ServerKind::Mysql),
            ("/work/redis-tools/containers/mariadb", ServerKind::Mysql),
            ("{dir: /srv/valkey/containers/mariadb/}", ServerKind::Mysql),
        ] {
            let spec: ServerSpec =
                crate::input::yaml::from_str(&format!("{{build: {build}}}")).unwrap();
            assert_eq!(spec.kind(), kind, "{build}");
        }
    }

    #[test]
    fn the_old_build_names_are_folders_with_arguments() {
        for (name, dir, want) in [
            ("mariadb-10.5", "mariadb", &[("suite", "bullseye")][..]),
            ("mariadb-10.11", "mariadb", &[("suite", "bookworm")]),
            ("mariadb-11.8", "mariadb", &[("suite", "trixie")]),
            ("mysql-9.7", "mysql", &[("suite", "sid")]),
            (
                "redis-6.0",
                "redis",
                &[("suite", "bullseye"), ("package", "redis-server")],
            ),
            (
                "redis-7.0",
                "redis",
                &[("suite", "bookworm"), ("package", "redis-server")],
            ),
            (
                "redis-8.0",
                "redis",
                &[("suite", "trixie"), ("package", "redis-server")],
            ),
            (
                "valkey-8.1",
                "redis",
                &[("suite", "trixie"), ("package", "valkey-server")],
            ),
        ] {
            let m = built(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let b = &m.build_dirs["db"];
            assert_eq!(b.dir, repo(dir), "{name}");
            assert_eq!(b.args, args(want), "{name}");
        }
        let e = built("mariadb-9.9").unwrap_err();
        assert_eq!(
            e.message,
            "no Dockerfile for `mariadb-9.9` under containers/; available: mariadb, \
             mariadb-10.11, mariadb-10.5, mariadb-11.8, mysql, mysql-9.7, redis, redis-6.0, \
             redis-7.0, redis-8.0, valkey-8.1"
        );
        // A name is not a folder: `dir` takes folders only.
        let e = built("{dir: mariadb-10.11}").unwrap_err();
        assert_eq!(
            e.message,
            "no Dockerfile for `mariadb-10.11` under containers/; available: mariadb, mysql, redis"
        );
    }

    #[test]
    fn build_arguments_are_checked() {
        let e = built("{dir: mariadb, args: {suite: trixie, package: x}}").unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "build argument `package` is not declared in {} (`ARG package`); declared: \
                 suite",
                repo("mariadb/Dockerfile").display()
            )
        );
        assert_eq!((e.line, e.col), (2, 52), "{e}");
        let e = built("{dir: mariadb, args: {a-b: x}}").unwrap_err();
        assert!(e.message.contains("`a-b` is not an argument name"), "{e}");
        let e = built(r#"{dir: mariadb, args: {suite: "bookworm\nRUN x"}}"#).unwrap_err();
        assert!(e.message.contains("must be one word"), "{e}");
        let e = built("{dir: mariadb, args: {suite: x;id}}").unwrap_err();
        assert!(e.message.contains("must be one word"), "{e}");
    }

    #[test]
    fn build_names_come_from_the_builds_file_next_to_the_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let containers = tmp.path().join("containers");
        std::fs::create_dir_all(containers.join("fam")).unwrap();
        std::fs::write(
            containers.join("fam/Dockerfile"),
            "ARG suite=bookworm\nFROM debian:${suite}\narg  pkg=a other\n",
        )
        .unwrap();
        let matrix = tmp.path().join("m.yaml");
        let load = |builds: &str| {
            std::fs::write(containers.join(BUILD_NAMES), builds).unwrap();
            let text = GOOD.replace("{image: mariadb:11}", "{build: fam-1}");
            load_str(&text, &matrix)
        };
        let m = load("fam-1: {dir: fam, args: {suite: trixie, pkg: b, other: c}}\n").unwrap();
        assert_eq!(m.build_dirs["db"].dir, containers.join("fam"));
        assert_eq!(
            m.build_dirs["db"].args,
            args(&[("suite", "trixie"), ("pkg", "b"), ("other", "c")])
        );
        let e = load("fam-1: {dir: fam, args: {nope: x}}\n").unwrap_err();
        assert!(
            e.message.contains("`fam-1` in ")
                && e.message
                    .ends_with("(`ARG nope`); declared: suite, pkg, other"),
            "{e}"
        );
        assert_eq!((e.line, e.col), (2, 15), "{e}");
        let e = load("fam-1: {dir: fam, args: {suite: 'a b'}}\n").unwrap_err();
        assert!(e.message.contains("must be one word"), "{e}");
        let e = load("fam-1: {dir: gone}\n").unwrap_err();
        assert!(e.message.ends_with("no Dockerfile for `gone`"), "{e}");
        let e = load("fam-1: {dir: fam, arg: {}}\n").unwrap_err();
        assert!(
            e.message.contains("builds.yaml:1:19: unknown field `arg`"),
            "{e}"
        );
    }

    #[test]
    fn external_servers_are_never_reconfigured() {
        let text = GOOD.replace("{image: mariadb:11}", "{external: {port: 3306}}");
        let e = err(&text);
        assert_eq!(e.line, 5, "{e}");
        assert!(
            e.message.contains("would change the external server `db`"),
            "{e}"
        );
        let ok = format!("{text}exclude:\n  - {{config: on}}\n");
        assert!(load_str(&ok, Path::new("m.yaml")).is_ok());
    }

    #[test]
    fn syntax_error_has_position() {
        let e = err("servers: {a: {image: x}\nconfigs: {}\n");
        assert_eq!(e.line, 2, "{e}");
        assert!(
            e.message.contains("did not find expected ',' or '}'"),
            "{e}"
        );
    }

    #[test]
    fn apdex_t_for_all_or_per_workload() {
        let base = "servers: {r: {build: redis-7.0}}\nworkloads:\n  a: {redis: {test: get}}\n  b: {redis: {test: set}}\nlength: 100\n";
        let m = load_str(
            &format!("{base}report: {{apdex_t: 2ms}}\n"),
            Path::new("m.yaml"),
        )
        .unwrap();
        assert_eq!(m.matrix.report.apdex_t_ms("b"), Some(2.0));
        let m = load_str(
            &format!("{base}report: {{apdex_t: {{a: 500us}}}}\n"),
            Path::new("m.yaml"),
        );
        assert!(m.is_err(), "us is no unit rmatrix reads");
        let m = load_str(
            &format!("{base}report: {{apdex_t: {{a: 1s}}}}\n"),
            Path::new("m.yaml"),
        )
        .unwrap();
        assert_eq!(m.matrix.report.apdex_t_ms("a"), Some(1000.0));
        assert_eq!(m.matrix.report.apdex_t_ms("b"), None);
    }
}
