//! Running pgbench against the cell's server: `pgbench -i` once per deployment and scale,
//! an optional warm-up run (discarded), then the measured run with `--progress` seconds and
//! a transaction log. The password reaches pgbench through a password file of rmatrix's
//! own (`PGPASSFILE`), never its command line. pgbench's CPU time comes from the kernel's
//! accounting of reaped children.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::report::{self, Log, Summary};
use super::spec::{PgbenchSpec, PGBENCH};
use crate::input::Length;
use crate::measure::counters::Status;
use crate::measure::cpu;
use crate::measure::measurement::{Measurement, PaceStats};
use crate::servers::postgres::{client, counters};
use crate::servers::spec::ServerKind;
use crate::servers::Endpoint;
use crate::workloads::child::secret_name;
use crate::workloads::{Ctx, Driver, Facts, Problem};

const MARKER: &str = "rmatrix_pgbench_prepared";

impl Driver for PgbenchSpec {
    fn tool(&self) -> Option<crate::workloads::tools::Tool> {
        Some(super::spec::PGBENCH)
    }

    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Postgres]
    }

    fn counts_live(&self) -> bool {
        false
    }

    fn resets(&self) -> Option<&'static str> {
        Some("drops and re-creates pgbench's tables in its database (`pgbench -i`)")
    }

    fn client_in_process(&self) -> bool {
        false
    }

    fn check(&self, facts: &Facts) -> Result<(), Problem> {
        PgbenchSpec::check(self, facts)
    }

    fn schema_rules() -> Vec<crate::workloads::SchemaRule> {
        super::spec::schema_rules()
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        let endpoint = &ctx.server.endpoint;
        let work = Work::new(self)?;
        ensure_initialised(endpoint, self, &work).await?;
        let run = Run {
            clients: ctx.concurrency,
            rate: ctx.cell_rate(),
        };
        let mut warmup_samples = Vec::new();
        if let Some(w) = ctx.warmup {
            ctx.window.warmup_open();
            let out = pgbench(endpoint, &work, &args(endpoint, self, &work, run, w)).await;
            ctx.window.warmup_close();
            warmup_samples = report::progress(&out?.stderr, run.clients);
        }
        let control = counters::Control::connect(endpoint).await?;
        let before = control.snapshot().await?;
        let cpu0 = cpu::children_seconds();
        let started = Instant::now();
        ctx.window.open();
        let out = pgbench(
            endpoint,
            &work,
            &args(endpoint, self, &work, run, ctx.length()?),
        )
        .await;
        ctx.window.close();
        let wall = started.elapsed().as_secs_f64();
        let cpu1 = cpu::children_seconds();
        let out = out?;
        let after = control.settled().await?;
        let summary = report::summary(&out.stdout)?;
        let log = work.read_log()?;
        let mut samples = report::progress(&out.stderr, run.clients);
        log.fill(&mut samples);
        let server = counters::measured(&before, &after);
        let open = run.rate.map(|_| PaceStats {
            started: summary.transactions + summary.failed,
            missed: Some(summary.skipped),
            ..PaceStats::default()
        });
        Ok(Measurement {
            open,
            warmup_samples,
            samples,
            ..measurement(
                &summary,
                log,
                server,
                cpu0.zip(cpu1).map(|(a, b)| b - a),
                wall,
            )
        })
    }
}

fn measurement(s: &Summary, log: Log, server: Status, cpu: Option<f64>, wall: f64) -> Measurement {
    Measurement {
        // A pgbench operation is a transaction (its script's statements are not counted
        // apart).
        queries: s.transactions,
        commits: s.transactions,
        errors: s.failed,
        seconds: if s.tps > 0.0 {
            s.transactions as f64 / s.tps
        } else {
            wall
        },
        server,
        client_cpu_s: cpu,
        // Every transaction's latency is in the log: the percentiles are its own, not
        // pgbench's average.
        latency: log.latency,
        service: log.service,
        ..Measurement::default()
    }
}

/// How one pgbench run loads the server: its clients, and in open loop its rate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub(crate) clients: u32,
    pub(crate) rate: Option<u32>,
}

/// A run's own files, in a directory only this user can read, removed on drop: the
/// password file, the script, the transaction logs.
pub(crate) struct Work {
    dir: PathBuf,
}

impl Work {
    fn new(spec: &PgbenchSpec) -> Result<Work> {
        use std::os::unix::fs::DirBuilderExt as _;
        // Named with this process's pid: a later run removes it if a SIGKILL left it.
        let dir = std::env::temp_dir().join(secret_name("pgbench"));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
        let work = Work { dir };
        if let Some(text) = &spec.script {
            std::fs::write(work.script(), text)?;
        }
        Ok(work)
    }

    fn script(&self) -> PathBuf {
        self.dir.join("script.sql")
    }

    fn passfile(&self) -> PathBuf {
        self.dir.join("pgpass")
    }

    fn log_prefix(&self) -> PathBuf {
        self.dir.join("log")
    }

    /// libpq's password file for the endpoint, mode 0600 (libpq ignores a wider one).
    fn write_passfile(&self, e: &Endpoint, db: &str) -> Result<()> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let esc = |s: &str| s.replace('\\', "\\\\").replace(':', "\\:");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(self.passfile())?;
        writeln!(
            f,
            "{}:{}:{}:{}:{}",
            esc(&e.host),
            e.port,
            esc(db),
            esc(&e.user),
            esc(&e.password)
        )?;
        Ok(())
    }

    /// Every thread's log file of the last run, read and removed.
    fn read_log(&self) -> Result<Log> {
        let mut log = Log::default();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.starts_with("log.")) {
                let text = std::fs::read_to_string(&path)?;
                text.lines().for_each(|l| log.add_line(l));
                std::fs::remove_file(&path)?;
            }
        }
        Ok(log)
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The command line (no password) of a run of `length`.
pub(crate) fn args(
    e: &Endpoint,
    spec: &PgbenchSpec,
    work: &Work,
    run: Run,
    length: Length,
) -> Vec<String> {
    let mut a = connection(e);
    // No vacuum before the run: `-i` vacuumed, and its transactions would be counted.
    a.push("-n".into());
    a.push(format!("-c{}", run.clients));
    a.push(format!("-j{}", spec.jobs.unwrap_or(1)));
    match length {
        Length::Time(d) => a.push(format!("-T{}", d.as_secs().max(1))),
        // pgbench counts transactions per client: the cell's count, spread evenly.
        Length::Queries(n) => a.push(format!("-t{}", n.div_ceil(u64::from(run.clients.max(1))))),
    }
    a.push("-P1".into());
    a.push(format!("-M{}", spec.protocol.name()));
    match &spec.script {
        Some(_) => a.push(format!("-f{}", work.script().display())),
        None => a.push(format!("-b{}", spec.builtin().name())),
    }
    if let Some(r) = run.rate {
        a.push(format!("-R{r}"));
        if let Some(l) = spec.latency_limit_ms {
            a.push(format!("-L{l}"));
        }
    }
    a.push("-l".into());
    a.push(format!("--log-prefix={}", work.log_prefix().display()));
    a.push(spec.db.clone());
    a
}

fn connection(e: &Endpoint) -> Vec<String> {
    vec![
        format!("-h{}", e.host),
        format!("-p{}", e.port),
        format!("-U{}", e.user),
    ]
}

pub(crate) struct Output {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

async fn pgbench(e: &Endpoint, work: &Work, args: &[String]) -> Result<Output> {
    let db = args.last().map(String::as_str).unwrap_or("");
    work.write_passfile(e, db)?;
    let out = crate::workloads::child::command(PGBENCH.program())
        .args(args)
        .env("PGPASSFILE", work.passfile())
        .env_remove("PGPASSWORD")
        .env_remove("PGSERVICE")
        .current_dir(Path::new(&work.dir))
        .stdin(Stdio::null())
        .output()
        .await
        .with_context(|| {
            format!(
                "failed to start {} (is pgbench installed? {} chooses another)",
                PGBENCH.shown(),
                PGBENCH.env
            )
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let tail: Vec<&str> = stdout.lines().chain(stderr.lines()).rev().take(5).collect();
        bail!(
            "pgbench failed ({}): {}",
            out.status,
            crate::escape::terminal(&tail.into_iter().rev().collect::<Vec<_>>().join(" | "))
        );
    }
    Ok(Output { stdout, stderr })
}

/// `pgbench -i -s <scale>` unless the database already holds this scale's tables.
async fn ensure_initialised(e: &Endpoint, spec: &PgbenchSpec, work: &Work) -> Result<()> {
    client::ensure_database(e, &spec.db).await?;
    let conn = client::connect(e, &spec.db).await?;
    let sig = format!("scale {}", spec.scale);
    let have = conn
        .query_opt(&format!("SELECT signature FROM {MARKER}"), &[])
        .await
        .ok()
        .flatten()
        .map(|r| r.get::<_, String>(0));
    if have.as_deref() == Some(sig.as_str()) {
        return Ok(());
    }
    let mut a = connection(e);
    a.extend([
        "-i".into(),
        "-q".into(),
        format!("-s{}", spec.scale),
        spec.db.clone(),
    ]);
    pgbench(e, work, &a).await?;
    conn.batch_execute(&format!(
        "DROP TABLE IF EXISTS {MARKER}; CREATE TABLE {MARKER}(signature text NOT NULL)"
    ))
    .await?;
    conn.execute(&format!("INSERT INTO {MARKER} VALUES ($1)"), &[&sig])
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_carries_the_spec_and_no_password() {
        let e = Endpoint {
            host: "127.0.0.1".into(),
            port: 5433,
            user: "postgres".into(),
            password: "pw-4f9a7c".into(),
        };
        let spec: PgbenchSpec = crate::input::yaml::from_str(
            "{builtin: select-only, protocol: prepared, jobs: 2, latency_limit_ms: 5}",
        )
        .unwrap();
        let work = Work::new(&spec).unwrap();
        let run = Run {
            clients: 4,
            rate: Some(500),
        };
        let a = args(&e, &spec, &work, run, Length::Queries(1000)).join(" ");
        let log = work.log_prefix().display().to_string();
        assert_eq!(
            a,
            format!("-h127.0.0.1 -p5433 -Upostgres -n -c4 -j2 -t250 -P1 -Mprepared -bselect-only -R500 -L5 -l --log-prefix={log} pgbench")
        );
        assert!(!a.contains("pw-4f9a7c"));
        work.write_passfile(&e, "pgbench").unwrap();
        let pass = std::fs::read_to_string(work.passfile()).unwrap();
        assert_eq!(pass, "127.0.0.1:5433:pgbench:postgres:pw-4f9a7c\n");
        let dir = work.dir.clone();
        drop(work);
        assert!(!dir.exists());
    }
}
