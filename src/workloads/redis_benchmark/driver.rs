//! Running a `redis_benchmark` cell: the redis-benchmark binary itself, with the cell's
//! clients and the spec's options, its `--csv` line parsed into the common columns. The
//! server's INFO commandstats must count the requests the tool reports. Also the kind's
//! `Driver`, with the spec's checks.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::spec::REDIS_BENCHMARK;
use super::RedisBenchmarkSpec;
use crate::input::bounds::MAX_QUERIES;
use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::cpu;
use crate::measure::latency::LatencySummary;
use crate::measure::measurement::Measurement;
use crate::servers::redis::control::{CommandError, Control};
use crate::servers::redis::{commandstats_delta as delta, parse_commandstats};
use crate::servers::redis::{socket_addr, tcp_addr, Addr};
use crate::servers::spec::ServerKind;
use crate::servers::Deployed;
use crate::workloads::redis::spec::{MAX_DATA_SIZE, MAX_KEYSPACE, MAX_PIPELINE};
use crate::workloads::redis::{RedisTest, Transport};
use crate::workloads::{Ctx, Driver, Facts, Problem};

/// The most `--threads` redis-benchmark is given.
const MAX_THREADS: u64 = 256;

impl Driver for RedisBenchmarkSpec {
    fn tool(&self) -> Option<crate::workloads::tools::Tool> {
        Some(REDIS_BENCHMARK)
    }

    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Redis]
    }

    fn transport(&self) -> &'static str {
        self.transport.name()
    }

    fn counts_live(&self) -> bool {
        false
    }

    fn client_in_process(&self) -> bool {
        false
    }

    fn check(&self, facts: &Facts) -> Result<(), Problem> {
        REDIS_BENCHMARK.refuse_binary(&self.binary)?;
        if facts.pace.is_some() {
            return Err(Problem::at(
                "",
                "redis-benchmark has no open-loop mode (each client sends its next request when \
                 the last one answered): use a `redis` workload with `load.rate`, or exclude \
                 this workload",
            ));
        }
        if self.test == RedisTest::Mixed {
            return Err(Problem::at(
                "test",
                "redis-benchmark has no mixed test: use a `redis` workload",
            ));
        }
        if self.pipeline == 0 {
            return Err(Problem::at("pipeline", "pipeline must be at least 1"));
        }
        if self.keyspace == Some(0) {
            return Err(Problem::at("keyspace", "keyspace must be at least 1"));
        }
        if self.requests.is_none() && matches!(facts.length, Some(Length::Time(_))) {
            return Err(Problem::at(
                "",
                "redis-benchmark cannot run for a duration: give `requests` (its -n) when \
                 `length` is a duration",
            ));
        }
        if self.requests == Some(0) {
            return Err(Problem::at("requests", "requests must be at least 1"));
        }
        Problem::bounded(&[
            ("data_size", self.data_size as u64, 1..=MAX_DATA_SIZE),
            ("keyspace", self.keyspace.unwrap_or(1), 1..=MAX_KEYSPACE),
            ("pipeline", self.pipeline.into(), 1..=MAX_PIPELINE),
            ("threads", self.threads.into(), 0..=MAX_THREADS),
            ("requests", self.requests.unwrap_or(1), 1..=MAX_QUERIES),
        ])?;
        Ok(())
    }

    /// The sizes' ranges, as `check` bounds them, and `binary` refused.
    fn schema_rules() -> Vec<crate::workloads::SchemaRule> {
        let mut rules = crate::workloads::driver::range_rules(&[
            ("data_size", 0, 1..=MAX_DATA_SIZE),
            ("keyspace", 0, 1..=MAX_KEYSPACE),
            ("pipeline", 0, 1..=MAX_PIPELINE),
            ("threads", 0, 0..=MAX_THREADS),
            ("requests", 0, 1..=MAX_QUERIES),
        ]);
        rules.push(REDIS_BENCHMARK.binary_rule());
        rules
    }

    async fn run(&self, ctx: &Ctx<'_>) -> anyhow::Result<Measurement> {
        run_iteration(
            ctx.server,
            self,
            ctx.concurrency,
            ctx.warmup,
            ctx.length()?,
            ctx.live.clone(),
            &ctx.window,
        )
        .await
    }
}

pub(crate) async fn run_iteration(
    server: &Deployed,
    spec: &RedisBenchmarkSpec,
    clients: u32,
    warmup: Option<Length>,
    length: Length,
    live: Arc<AtomicU64>,
    window: &Window,
) -> Result<Measurement> {
    if spec.test == RedisTest::Mixed {
        bail!("redis-benchmark has no mixed test: use the `redis` workload for it");
    }
    let requests = match (spec.requests, length) {
        (Some(n), _) | (None, Length::Queries(n)) => n,
        (None, Length::Time(_)) => {
            bail!("redis-benchmark cannot run for a duration: set `requests` in the workload")
        }
    };
    let addr = match spec.transport {
        Transport::Tcp => tcp_addr(&server.endpoint),
        Transport::Unix => socket_addr(server.socket.as_ref())?,
    };
    let mut control =
        Control::connect(&tcp_addr(&server.endpoint), &server.endpoint.password).await?;
    let login = OneShotUser::create(&mut control, &server.endpoint.password).await?;
    let measured = async {
        window.warmup_open();
        let warmed = match warmup {
            Some(Length::Queries(n)) => run(&args(spec, &addr, login.as_ref(), clients, Some(n)))
                .await
                .map(drop),
            Some(Length::Time(d)) => {
                warm_for(&args(spec, &addr, login.as_ref(), clients, None), d).await
            }
            None => Ok(()),
        };
        window.warmup_close();
        warmed?;
        let before = parse_commandstats(&control.info("commandstats").await?);
        let cpu_before = cpu::children_seconds();
        window.open();
        let csv = run(&args(spec, &addr, login.as_ref(), clients, Some(requests))).await?;
        window.close();
        let cpu = cpu::children_seconds().zip(cpu_before).map(|(a, b)| a - b);
        let after = parse_commandstats(&control.info("commandstats").await?);
        let server =
            crate::servers::redis::without_reads(delta(&before, &after), window.server_reads());
        anyhow::Ok((csv, cpu, server))
    }
    .await;
    if let Some(login) = &login {
        login.delete(&mut control).await?;
    }
    let (csv, cpu, server_delta) = measured?;
    live.fetch_add(requests, Ordering::Relaxed);

    let line = parse_csv(&csv, spec.test).with_context(|| {
        format!(
            "no line for {} in redis-benchmark's output:\n{csv}",
            spec.test.title()
        )
    })?;
    let counted = server_delta
        .get(&format!("cmdstat_{}", spec.test.command()))
        .copied()
        .unwrap_or(0);
    if counted != requests {
        bail!(
            "INFO commandstats counted {counted} {} calls, redis-benchmark reported {requests}",
            spec.test.command().to_uppercase()
        );
    }
    Ok(Measurement {
        queries: requests,
        seconds: requests as f64 / line.rps,
        server: server_delta,
        client_cpu_s: cpu,
        reported_latency: Some(line.latency),
        ..Measurement::default()
    })
}

/// A Redis ACL user that lives for one iteration. redis-benchmark reads a password only from
/// its command line, where every local user can read it, so it never gets the server's own
/// password: it gets this user's, made up here, limited to non-dangerous commands, and
/// deleted when the iteration ends.
pub(crate) struct OneShotUser {
    pub(crate) name: String,
    pub(crate) password: String,
}

impl OneShotUser {
    /// None when the server has no password (nothing to protect).
    async fn create(control: &mut Control, server_password: &str) -> Result<Option<OneShotUser>> {
        if server_password.is_empty() {
            return Ok(None);
        }
        let user = OneShotUser::random();
        let password = format!(">{}", user.password);
        let mut setuser = redis::cmd("ACL");
        setuser
            .arg("SETUSER")
            .arg(&user.name)
            .arg("reset")
            .arg("on")
            .arg(&password)
            .arg("~*")
            .arg("+@all")
            .arg("-@dangerous")
            // redis-benchmark reads `save` and `appendonly` at start.
            .arg("+config|get");
        match control.query::<()>(&setuser).await {
            Err(CommandError::Refused { reason: e, .. }) => bail!(
                "the server refused a one-shot ACL user for redis-benchmark ({e}); redis-benchmark \
                 takes a password only on its command line, where every local user can read it, \
                 so rmatrix will not give it the server's own: use the `redis` workload (Redis 6 \
                 or later has ACLs)"
            ),
            r => r?,
        }
        Ok(Some(user))
    }

    fn random() -> OneShotUser {
        use rand::Rng;
        let mut rng = rand::rng();
        OneShotUser {
            name: format!("rmatrix-bench-{:08x}", rng.random::<u32>()),
            password: format!("{:032x}", rng.random::<u128>()),
        }
    }

    async fn delete(&self, control: &mut Control) -> Result<()> {
        match control
            .query::<()>(redis::cmd("ACL").arg("DELUSER").arg(&self.name))
            .await
        {
            Err(CommandError::Refused { reason: e, .. }) => {
                bail!("ACL DELUSER {} failed: {e}", self.name)
            }
            r => Ok(r?),
        }
    }
}

/// The command line (without the binary). `requests` None loops (`-l`) for a timed warmup.
pub(crate) fn args(
    spec: &RedisBenchmarkSpec,
    addr: &Addr,
    login: Option<&OneShotUser>,
    clients: u32,
    requests: Option<u64>,
) -> Vec<String> {
    let mut a: Vec<String> = match addr {
        Addr::Tcp(h, p) => vec!["-h".into(), h.clone(), "-p".into(), p.to_string()],
        Addr::Unix(path) => vec!["-s".into(), path.display().to_string()],
    };
    if let Some(u) = login {
        a.extend([
            "--user".into(),
            u.name.clone(),
            "-a".into(),
            u.password.clone(),
        ]);
    }
    a.extend(["-c".into(), clients.to_string()]);
    match requests {
        Some(n) => a.extend(["-n".into(), n.to_string()]),
        None => a.push("-l".into()),
    }
    a.extend(["-P".into(), spec.pipeline.to_string()]);
    a.extend(["-d".into(), spec.data_size.to_string()]);
    if let Some(k) = spec.keyspace {
        a.extend(["-r".into(), k.to_string()]);
    }
    if spec.threads > 0 {
        a.extend(["--threads".into(), spec.threads.to_string()]);
    }
    a.extend(["-t".into(), spec.test.name().into(), "--csv".into()]);
    a
}

async fn run(args: &[String]) -> Result<String> {
    let out = crate::workloads::child::command(REDIS_BENCHMARK.program())
        .args(args)
        .output()
        .await
        .with_context(|| {
            format!(
                "failed to run {} (install Debian's redis-tools, or choose another with {})",
                REDIS_BENCHMARK.shown(),
                REDIS_BENCHMARK.env
            )
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "{} exited with {}: {}{}",
            REDIS_BENCHMARK.shown(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            stdout.trim()
        );
    }
    Ok(stdout)
}

/// A timed warmup: loop mode, stopped after `d`.
async fn warm_for(args: &[String], d: Duration) -> Result<()> {
    let mut child = crate::workloads::child::command(REDIS_BENCHMARK.program())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("failed to run {}", REDIS_BENCHMARK.shown()))?;
    tokio::time::sleep(d).await;
    child.kill().await.ok();
    Ok(())
}

/// One `--csv` result line: requests/s and the latency summary (ms).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CsvLine {
    pub(crate) rps: f64,
    pub(crate) latency: LatencySummary,
}

/// The line of `test` in redis-benchmark's CSV output:
/// `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"`.
/// Fields a version does not print (6.x prints only rps) stay empty.
pub(crate) fn parse_csv(text: &str, test: RedisTest) -> Option<CsvLine> {
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line
            .trim()
            .split(',')
            .map(|f| f.trim_matches('"'))
            .collect();
        if fields.first() != Some(&test.title()) {
            return None;
        }
        let f = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        };
        let rps = f(1);
        (rps.is_finite() && rps > 0.0).then(|| CsvLine {
            rps,
            latency: LatencySummary {
                count: 0,
                avg_ms: f(2),
                min_ms: f(3),
                p50_ms: f(4),
                p95_ms: f(5),
                p99_ms: f(6),
                p999_ms: f64::NAN,
                max_ms: f(7),
            },
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n\
\"LPUSH (needed to benchmark LRANGE)\",\"90000.00\",\"0.300\",\"0.100\",\"0.290\",\"0.400\",\"0.500\",\"1.000\"\n\
\"LRANGE_100 (first 100 elements)\",\"50000.00\",\"0.510\",\"0.120\",\"0.487\",\"0.711\",\"0.903\",\"2.111\"\n";

    #[test]
    fn parses_the_test_line() {
        let l = parse_csv(OUT, RedisTest::Lrange100).unwrap();
        assert_eq!(l.rps, 50000.0);
        assert_eq!(l.latency.avg_ms, 0.51);
        assert_eq!(l.latency.min_ms, 0.12);
        assert_eq!(l.latency.p50_ms, 0.487);
        assert_eq!(l.latency.p99_ms, 0.903);
        assert_eq!(l.latency.max_ms, 2.111);
        assert!(parse_csv(OUT, RedisTest::Set).is_none());
        let old = parse_csv("\"SET\",\"1000.5\"\n", RedisTest::Set).unwrap();
        assert_eq!(old.rps, 1000.5);
        assert!(old.latency.p50_ms.is_nan());
    }

    #[test]
    fn command_line_follows_the_spec() {
        let spec: RedisBenchmarkSpec =
            crate::input::yaml::from_str("{test: set, pipeline: 16, keyspace: 1000, threads: 2}")
                .unwrap();
        let login = OneShotUser {
            name: "u".into(),
            password: "pw".into(),
        };
        let a = args(
            &spec,
            &Addr::Tcp("127.0.0.1".into(), 7000),
            Some(&login),
            50,
            Some(10),
        );
        assert_eq!(
            a.join(" "),
            "-h 127.0.0.1 -p 7000 --user u -a pw -c 50 -n 10 -P 16 -d 3 -r 1000 --threads 2 -t set --csv"
        );
        let a = args(&spec, &Addr::Unix("/s".into()), None, 1, None);
        assert_eq!(a[..4].join(" "), "-s /s -c 1");
    }
}
