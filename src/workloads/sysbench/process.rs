//! sysbench itself as a child process, with the database driver the server's family names
//! (`Db`): its command line (the password in a 0600 config file, never on the command
//! line), a run or `prepare` (with the marker table's signature of the prepared option
//! set), the warm-up run, and the report turned into a `Measurement`. `iteration` orders
//! the runs and reads the server's counters around the measured one.

use std::process::Stdio;
use std::sync::LazyLock;

use anyhow::{bail, Context, Result};

use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::counters::Status;
use crate::measure::interval::Sample;
use crate::measure::latency::LatencySummary;
use crate::measure::measurement::{Measurement, PaceStats};
use crate::servers::spec::ServerKind;
use crate::servers::sql::{SqlFamily, WithSql};
use crate::servers::Endpoint;
use crate::workloads::sysbench::report::{parse, Report};
use crate::workloads::sysbench::script;
use crate::workloads::sysbench::spec::SYSBENCH;
use crate::workloads::sysbench::SysbenchSpec;

pub(super) const MARKER: &str = "rmatrix_sysbench_prepared";

/// The warm-up run, if there is one: its per-second lines (for the per-second chart); its
/// totals are discarded.
pub(super) async fn warm_up(
    db: Db,
    endpoint: &Endpoint,
    spec: &SysbenchSpec,
    run: Run,
    warmup: Option<Length>,
    window: &Window,
) -> Result<Vec<Sample>> {
    let Some(w) = warmup else {
        return Ok(Vec::new());
    };
    window.warmup_open();
    let text = sysbench(db, endpoint, spec, "run", run, Some(w)).await;
    window.warmup_close();
    Ok(parse(&text?).map(|r| r.intervals).unwrap_or_default())
}

/// The measured run's report as a measurement, with the server's counters and sysbench's
/// CPU time.
pub(super) fn finish(
    report: Report,
    server: Status,
    cpu: Option<f64>,
    wall: f64,
    rate: Option<u32>,
    warmup_samples: Vec<Sample>,
) -> Measurement {
    let open = rate.map(|_| PaceStats {
        started: report.events,
        // sysbench says how long its queue got, not what was scheduled, late or left over.
        max_backlog: report.max_queue,
        ..PaceStats::default()
    });
    Measurement {
        open,
        warmup_samples,
        ..measurement(report, server, cpu, wall)
    }
}

/// Which of sysbench's database drivers a run uses: its `--db-driver`, and the prefix of its
/// connection options (`--<driver>-host`...), as the server's SQL family names it
/// (`SqlTool::TOOL_DRIVER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Db(pub(crate) &'static str);

impl Db {
    /// The driver for `kind`'s servers: None when sysbench has none, or `kind` is no SQL
    /// family.
    pub(crate) fn of(kind: ServerKind) -> Option<Db> {
        kind.with_sql(Named).flatten()
    }

    /// The SQL families sysbench has a driver for, in the registry's order.
    pub(crate) fn families() -> &'static [ServerKind] {
        static WITH_DRIVER: LazyLock<Vec<ServerKind>> = LazyLock::new(|| {
            (ServerKind::sql_families().iter().copied())
                .filter(|k| Db::of(*k).is_some())
                .collect()
        });
        &WITH_DRIVER
    }

    /// Every driver, in the registry's order of their families.
    pub(crate) fn all() -> impl Iterator<Item = Db> {
        Db::families().iter().filter_map(|k| Db::of(*k))
    }

    pub(crate) fn name(self) -> &'static str {
        self.0
    }
}

/// Asks a family for its name among sysbench's drivers.
struct Named;

impl WithSql for Named {
    type Output = Option<Db>;
    fn with<F: SqlFamily>(self) -> Option<Db> {
        F::TOOL_DRIVER.map(Db)
    }
}

/// How one sysbench run loads the server: its threads, and in open loop its rate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub(crate) threads: u32,
    pub(crate) rate: Option<u32>,
}

impl Run {
    pub(crate) fn threads(threads: u32) -> Run {
        Run {
            threads,
            rate: None,
        }
    }
}

fn measurement(r: Report, server: Status, cpu: Option<f64>, wall: f64) -> Measurement {
    let pct = |p: u32| match r.lat_pct {
        Some((q, v)) if q == p => v,
        _ => f64::NAN,
    };
    Measurement {
        queries: r.queries,
        errors: r.ignored_errors,
        commits: r.transactions,
        reads: Some(r.reads),
        writes: Some(r.writes),
        others: Some(r.others),
        reconnects: Some(r.reconnects),
        seconds: if r.total_time_s > 0.0 {
            r.total_time_s
        } else {
            wall
        },
        server,
        thread_events: Some((r.events_avg, r.events_stddev)),
        client_cpu_s: cpu,
        reported_latency: Some(LatencySummary {
            count: r.events,
            min_ms: r.lat_min_ms,
            avg_ms: r.lat_avg_ms,
            p50_ms: pct(50),
            p95_ms: pct(95),
            p99_ms: pct(99),
            p999_ms: f64::NAN,
            max_ms: r.lat_max_ms,
        }),
        percentiles: r
            .lat_pct
            .map(|(p, v)| vec![(p as f64, v)])
            .unwrap_or_default(),
        samples: r.intervals,
        ..Measurement::default()
    }
}

fn option_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Bool(b) => if *b { "on" } else { "off" }.into(),
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// sysbench's `--config-file` holding `<driver>-password`, mode 0600, removed on drop.
struct PasswordFile {
    path: std::path::PathBuf,
}

impl PasswordFile {
    fn new(db: Db, password: &str) -> Result<PasswordFile> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        anyhow::ensure!(
            !password.chars().any(char::is_control),
            "the server password contains a control character; sysbench cannot take it"
        );
        // Named with this process's pid: a later run removes it if a SIGKILL left it.
        let path = std::env::temp_dir().join(crate::workloads::child::secret_name("sysbench"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("failed to create {}", path.display()))?;
        writeln!(f, "{}-password={password}", db.name())
            .with_context(|| format!("failed to write {}", path.display()))?;
        Ok(PasswordFile { path })
    }
}

impl Drop for PasswordFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The command line (password excluded) for `command`.
pub(crate) fn args(
    db: Db,
    endpoint: &Endpoint,
    spec: &SysbenchSpec,
    command: &str,
    run: Run,
    length: Option<Length>,
) -> Vec<String> {
    // Checked when the matrix was read: a bundled name, or a script of the allowed folder.
    let test = script::resolve(&spec.test, script::scripts_dir().as_deref())
        .unwrap_or_else(|_| spec.test.clone());
    let p = db.name();
    let mut a = vec![
        test,
        format!("--db-driver={p}"),
        format!("--{p}-host={}", endpoint.host),
        format!("--{p}-port={}", endpoint.port),
        format!("--{p}-user={}", endpoint.user),
        format!("--{p}-db={}", spec.db),
        format!("--threads={}", run.threads),
    ];
    if let (Some(r), "run") = (run.rate, command) {
        a.push(format!("--rate={r}"));
    }
    match length {
        Some(Length::Time(d)) => {
            a.push(format!("--time={}", d.as_secs().max(1)));
            a.push("--events=0".into());
        }
        Some(Length::Queries(n)) => {
            a.push("--time=0".into());
            a.push(format!("--events={n}"));
        }
        None => {}
    }
    if command == "run" {
        a.push("--report-interval=1".into());
    }
    for (k, v) in &spec.options {
        a.push(format!("--{k}={}", option_text(v)));
    }
    a.push(command.into());
    a
}

pub(super) async fn sysbench(
    db: Db,
    endpoint: &Endpoint,
    spec: &SysbenchSpec,
    command: &str,
    run: Run,
    length: Option<Length>,
) -> Result<String> {
    let args = args(db, endpoint, spec, command, run, length);
    // The password goes through a config file only this user can read, never on the command
    // line, where every local user could see it in the process list.
    let secret = PasswordFile::new(db, &endpoint.password)?;
    // A given-up iteration (Ctrl-C) ends its sysbench too, and so does a killed rmatrix.
    let out = crate::workloads::child::command(SYSBENCH.program())
        .arg(format!("--config-file={}", secret.path.display()))
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .await
        .with_context(|| {
            format!(
                "failed to start {} (is sysbench installed? {} chooses another)",
                SYSBENCH.shown(),
                SYSBENCH.env
            )
        })?;
    drop(secret);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stdout.lines().chain(stderr.lines()).rev().take(5).collect();
        bail!(
            "sysbench {} {command} failed ({}): {}",
            spec.test,
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        );
    }
    Ok(stdout)
}

/// sysbench's `cleanup` + `prepare`. Prepare loads tables in parallel, one thread per table
/// (as sysbench assigns them).
pub(super) async fn load(db: Db, endpoint: &Endpoint, spec: &SysbenchSpec) -> Result<()> {
    let tables = spec
        .options
        .get("tables")
        .map(option_text)
        .and_then(|t| t.parse::<u32>().ok())
        .unwrap_or(1);
    sysbench(db, endpoint, spec, "cleanup", Run::threads(1), None).await?;
    sysbench(
        db,
        endpoint,
        spec,
        "prepare",
        Run::threads(tables.clamp(1, 8)),
        None,
    )
    .await?;
    Ok(())
}

/// What identifies a prepared schema: the test and its options.
pub(super) fn signature(spec: &SysbenchSpec) -> String {
    format!("{} {:?}", spec.test, spec.options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sql_family_names_its_driver() {
        assert_eq!(Db::families(), ServerKind::sql_families());
        let names: Vec<&str> = Db::all().map(Db::name).collect();
        assert_eq!(names, ["mysql", "pgsql"]);
        assert_eq!(Db::of(ServerKind::Redis), None);
        assert_eq!(Db::of(ServerKind::Postgres), Some(Db("pgsql")));
    }

    #[test]
    fn command_line_carries_options_and_length() {
        let ep = Endpoint {
            host: "127.0.0.1".into(),
            port: 3307,
            user: "root".into(),
            password: "secret".into(),
        };
        let spec: SysbenchSpec = crate::input::yaml::from_str(
            "{test: oltp_read_write, options: {tables: 4, table_size: 1000, skip_trx: true}}",
        )
        .unwrap();
        let a = args(
            Db("mysql"),
            &ep,
            &spec,
            "run",
            Run::threads(8),
            Some(Length::Queries(500)),
        )
        .join(" ");
        assert_eq!(
            a,
            "oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3307 \
             --mysql-user=root --mysql-db=sbtest --threads=8 --time=0 --events=500 \
             --report-interval=1 --tables=4 --table_size=1000 --skip_trx=on run"
        );
        assert!(!a.contains("secret"));
        let t = args(
            Db("mysql"),
            &ep,
            &spec,
            "prepare",
            Run::threads(2),
            Some(Length::Time(std::time::Duration::from_secs(10))),
        );
        assert!(t.contains(&"--time=10".to_string()) && t.last().unwrap() == "prepare");
        let open = Run {
            threads: 4,
            rate: Some(500),
        };
        let r = args(
            Db("mysql"),
            &ep,
            &spec,
            "run",
            open,
            Some(Length::Queries(500)),
        );
        assert!(r.contains(&"--rate=500".to_string()), "{r:?}");
        assert!(!args(Db("mysql"), &ep, &spec, "prepare", open, None)
            .contains(&"--rate=500".to_string()));
        // PostgreSQL: sysbench's pgsql driver and its options, the password still not there.
        let pg = args(Db("pgsql"), &ep, &spec, "run", Run::threads(2), None).join(" ");
        assert!(
            pg.starts_with(
                "oltp_read_write --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=3307 \
                 --pgsql-user=root --pgsql-db=sbtest --threads=2"
            ),
            "{pg}"
        );
        assert!(!pg.contains("secret") && !pg.contains("mysql"), "{pg}");
    }
}
