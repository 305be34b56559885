//! Reading and validating a matrix file. Every problem found here is reported with the
//! file, line and column, and the valid choices where there is a closed set, before any
//! container starts.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::model::{Matrix, Selector, WorkloadSpec};
use crate::input::span::{Pos, SpanIndex};
use crate::input::yaml::MAX_FILE_BYTES;
use crate::model::metric::Metric;
use crate::model::Dimension;

/// Most cells a matrix may expand to: far beyond any study, small enough to plan instantly.
pub const MAX_CELLS: usize = 100_000;
/// Most iterations per cell.
pub const MAX_ITERATIONS: u32 = 10_000;

mod families;

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
    /// Build context directory of each `build:` server.
    pub build_dirs: HashMap<String, PathBuf>,
}

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
    let build_dirs = v.build_dirs(base)?;
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
        let needs_engine = m.workloads.values().any(WorkloadSpec::uses_engine);
        if needs_engine && m.engines.is_empty() {
            return Err(self.err(
                "workloads",
                "slap workloads create their own tables: list `engines` (e.g. [InnoDB, MyISAM])"
                    .into(),
            ));
        }
        for (i, sel) in m.exclude.iter().enumerate() {
            self.check_selector(sel, &format!("exclude[{i}]"))?;
        }
        for (i, sel) in m.include.iter().enumerate() {
            self.check_selector(sel, &format!("include[{i}]"))?;
        }
        self.check_report()?;
        self.check_workloads()?;
        self.check_untrusted()?;
        Ok(())
    }

    /// Names and values that are written into config files and SQL (see `untrusted`).
    fn check_untrusted(&self) -> Result<(), MatrixError> {
        use crate::input::untrusted::{
            config_value, env_name, mycnf_key, name, redis_key, sql_identifier,
        };
        let m = self.m;
        if let Some(n) = &m.name {
            name("matrix", n).map_err(|msg| self.err("name", msg))?;
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
            for (key, value) in &c.mycnf {
                let path = format!("configs.{name}.mycnf.{key}");
                mycnf_key(key).map_err(|msg| self.err_at(self.spans.key(&path), msg))?;
                if let Some(v) = value {
                    config_value(key, &v.0).map_err(|msg| self.err(&path, msg))?;
                }
            }
            for (key, v) in &c.redis_conf {
                let path = format!("configs.{name}.redis_conf.{key}");
                redis_key(key).map_err(|msg| self.err_at(self.spans.key(&path), msg))?;
                config_value(key, &v.0).map_err(|msg| self.err(&path, msg))?;
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
        self.check_kinds()
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

    fn build_dirs(&self, base: &Path) -> Result<HashMap<String, PathBuf>, MatrixError> {
        let mut out = HashMap::new();
        for (name, s) in &self.m.servers {
            let Some(build) = &s.build else { continue };
            let path = format!("servers.{name}.build");
            let dir = resolve_build_dir(base, build).map_err(|available| {
                self.err(
                    &path,
                    format!(
                        "no Dockerfile for `{build}` under containers/; available: {}",
                        if available.is_empty() {
                            "(none found)".into()
                        } else {
                            available.join(", ")
                        }
                    ),
                )
            })?;
            out.insert(name.clone(), dir);
        }
        Ok(out)
    }
}

/// `build: name` is looked up in the nearest `containers/` directory above the matrix file;
/// a value with a `/` is a path relative to the matrix file.
fn resolve_build_dir(base: &Path, build: &str) -> Result<PathBuf, Vec<String>> {
    if build.contains('/') {
        let dir = base.join(build);
        return if dir.join("Dockerfile").is_file() {
            Ok(dir)
        } else {
            Err(Vec::new())
        };
    }
    let mut available = Vec::new();
    for dir in base.ancestors().chain(std::iter::once(Path::new("."))) {
        let containers = dir.join("containers");
        if !containers.is_dir() {
            continue;
        }
        let candidate = containers.join(build);
        if candidate.join("Dockerfile").is_file() {
            return Ok(candidate);
        }
        if let Ok(entries) = std::fs::read_dir(&containers) {
            let mut names: Vec<String> = entries
                .flatten()
                .filter(|e| e.path().join("Dockerfile").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            available = names;
        }
        break;
    }
    Err(available)
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
        assert_eq!(e.message, "`concurrency` must be a list, not `two`");
        let e = err(&GOOD.replace("{slap: {load_type: write}}", "{slapp: {}}"));
        assert_eq!((e.line, e.col), (8, 7), "{e}");
        assert_eq!(
            e.message,
            "workload `w` names an unknown driver `slapp`; valid drivers: slap, oltp, sysbench, \
             redis, redis_benchmark"
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
}
