//! Running a `redis` cell with rmatrix's own client: the state it starts from (`state`), then
//! `clients` connections on one dedicated event-loop thread (as redis-benchmark's single loop,
//! so client CPU is comparable), each keeping `pipeline` requests in flight; INFO
//! commandstats is read around the measured phase and must agree with what the clients sent.
//! Also the kind's `Driver`: the spec's checks, among them that its starting state fits.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::counters::Status;
use crate::measure::cpu;
use crate::measure::interval::Counts;
use crate::measure::latency::Latency;
use crate::measure::measurement::Measurement;
use crate::measure::seconds::{Live, Recorder};
use crate::servers::redis::control::Control;
use crate::servers::redis::{commandstats, commandstats_delta as delta};
use crate::servers::redis::{socket_addr, tcp_addr, Addr};
use crate::servers::spec::ServerKind;
use crate::workloads::pace::{Pace, Until};
use crate::workloads::phases::{self, Begin, Load, Phases, Ran};
use crate::workloads::redis::proto::{append, reply_len, templates, KeyGen, Template};
use crate::workloads::redis::spec::{
    KeyDistribution, RedisSpec, RedisTest, Transport, MAX_DATA_SIZE, MAX_KEYSPACE, MAX_PIPELINE,
};
use crate::workloads::redis::stream::{self, Stream};
use crate::workloads::redis::{prefill, state};
use crate::workloads::{Ctx, Driver, Facts, Problem};

impl Driver for RedisSpec {
    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Redis]
    }

    fn transport(&self) -> &'static str {
        self.transport.name()
    }

    fn resets(&self) -> Option<&'static str> {
        Some("empties the server (FLUSHALL) and fills it with the state its test starts from")
    }

    fn check(&self, facts: &Facts) -> Result<(), Problem> {
        if self.pipeline == 0 {
            return Err(Problem::at("pipeline", "pipeline must be at least 1"));
        }
        if self.keyspace == Some(0) {
            return Err(Problem::at("keyspace", "keyspace must be at least 1"));
        }
        let ratio = self.ratio.unwrap_or_default();
        Problem::bounded(&[
            ("data_size", self.data_size as u64, 1..=MAX_DATA_SIZE),
            ("keyspace", self.keyspace.unwrap_or(1), 1..=MAX_KEYSPACE),
            ("pipeline", self.pipeline.into(), 1..=MAX_PIPELINE),
            ("ratio", ratio.sets.max(ratio.gets).into(), 0..=1000),
        ])?;
        if facts.pace.is_some() && self.pipeline > 1 {
            return Err(Problem::at(
                "pipeline",
                "open loop (`load.rate`) starts each request at its own time: a pipeline of \
                 more than 1 would batch them; remove `pipeline`",
            ));
        }
        if self.distribution != KeyDistribution::Uniform && self.keyspace.is_none() {
            return Err(Problem::at(
                "distribution",
                "a key distribution needs a `keyspace` (without one every request uses the \
                 same key, as redis-benchmark without -r)",
            ));
        }
        if self.ratio.is_some() && self.test != RedisTest::Mixed {
            return Err(Problem::at(
                "ratio",
                "`ratio` applies to `test: mixed` only",
            ));
        }
        self.check_prefill(facts)
    }

    /// The sizes' ranges, as `check` bounds them.
    fn schema_rules() -> Vec<crate::workloads::SchemaRule> {
        crate::workloads::driver::range_rules(&[
            ("data_size", 0, 1..=MAX_DATA_SIZE),
            ("keyspace", 0, 1..=MAX_KEYSPACE),
            ("pipeline", 0, 1..=MAX_PIPELINE),
        ])
    }

    async fn run(&self, ctx: &Ctx<'_>) -> anyhow::Result<Measurement> {
        run_iteration(ctx, self).await
    }
}

impl RedisSpec {
    /// The state an iteration starts from must fit a test server (`prefill`).
    fn check_prefill(&self, facts: &Facts) -> Result<(), Problem> {
        let Some(length) = facts.length else {
            return Ok(());
        };
        let n = prefill::requests(length, facts.warmup);
        let plan = prefill::plan(self.test, n);
        let (_, bytes) = prefill::size(&plan, self.keyspace, self.distribution, self.data_size);
        if bytes <= prefill::MAX_PREFILL_BYTES {
            return Ok(());
        }
        Err(Problem::in_matrix(
            "length",
            format!(
                "`{}` starts from the state redis-benchmark's suite leaves after {n} requests \
                 (warm-up and length; a timed phase counts {} a second): about {} MiB, more \
                 than the {} MiB rmatrix prepares; give a shorter `length` or `warmup`",
                self.test,
                prefill::TIMED_RATE,
                bytes >> 20,
                prefill::MAX_PREFILL_BYTES >> 20
            ),
        ))
    }
}

/// One iteration: prepare, optional warmup, measured phase, counter check.
pub(crate) async fn run_iteration(ctx: &Ctx<'_>, spec: &RedisSpec) -> Result<Measurement> {
    let server = ctx.server;
    let load_addr = match spec.transport {
        Transport::Tcp => tcp_addr(&server.endpoint),
        Transport::Unix => socket_addr(server.socket.as_ref())?,
    };
    let job = Job {
        control: tcp_addr(&server.endpoint),
        load: load_addr,
        password: server.endpoint.password.clone(),
        spec: spec.clone(),
        clients: ctx.concurrency,
        warmup: ctx.warmup,
        length: ctx.length()?,
        live: ctx.live.clone(),
        window: ctx.window.clone(),
        pace: ctx.pace.clone(),
        phase: ctx.phase.clone(),
    };
    let (mut tx, rx) = tokio::sync::oneshot::channel();
    let cpus = crate::workloads::threads::client_cpus();
    std::thread::Builder::new()
        .name("rmatrix-redis-load".into())
        .spawn(move || {
            if let Some(cpus) = &cpus {
                crate::workloads::threads::pin(cpus);
            }
            let result = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(anyhow::Error::from)
                .and_then(|rt| {
                    // The receiver goes away when the iteration is given up (the stall
                    // watchdog, Ctrl-C): the clients stop with it instead of loading the
                    // server under the next iteration.
                    rt.block_on(async {
                        tokio::select! {
                            r = job.run() => r,
                            () = tx.closed() => Err(anyhow!("the iteration was given up")),
                        }
                    })
                });
            let _ = tx.send(result);
        })
        .context("failed to start the load thread")?;
    rx.await
        .map_err(|_| anyhow!("the load thread ended without a result"))?
}

struct Job {
    control: Addr,
    load: Addr,
    password: String,
    spec: RedisSpec,
    clients: u32,
    warmup: Option<Length>,
    length: Length,
    live: Arc<AtomicU64>,
    window: Arc<Window>,
    pace: Option<Pace>,
    phase: Arc<Live>,
}

/// What every client of a cell sends.
struct Plan {
    templates: Vec<Template>,
    /// Each template's class in the per-second lines (one read, write or other).
    classes: Vec<Counts>,
    pipeline: u64,
    keyspace: Option<u64>,
    spec: RedisSpec,
}

impl Job {
    async fn run(self) -> Result<Measurement> {
        let spec = &self.spec;
        let mut control = Control::connect(&self.control, &self.password).await?;
        let n = prefill::requests(self.length, self.warmup);
        state::prepare(&mut control, spec, n, &self.live).await?;
        let plan = Arc::new(Plan::new(spec));
        let opened = (0..self.clients).map(|_| stream::connect(&self.load, &self.password));
        let streams = futures_util::future::try_join_all(opened).await?;
        let phases = Phases {
            warmup: self.warmup,
            length: self.length,
            pace: self.pace.as_ref(),
            shown: Some(&self.phase),
            edges: &*self.window,
        };
        let mut load = Redis {
            control,
            plan: plan.clone(),
            live: self.live.clone(),
        };
        let done = phases.run(&mut load, streams).await?;
        let ((before, cpu_before), (after, cpu_after)) = (done.before, done.after);
        let cpu = cpu_after.zip(cpu_before).map(|(a, b)| a - b);
        let server = crate::servers::redis::without_reads(
            delta(&before, &after),
            self.window.server_reads(),
        );
        if prefill::any_timed(self.length, self.warmup) {
            state::check_not_drained(&mut load.control, spec, n).await?;
        }

        let ran = done.measured;
        let mut m = Measurement {
            seconds: ran.elapsed,
            client_cpu_s: cpu,
            samples: ran.samples(self.clients),
            warmup_samples: (done.warmup.as_ref())
                .map_or_else(Vec::new, |w| w.samples(self.clients)),
            open: ran.open,
            ..Measurement::default()
        };
        let (sent, broken) = merge_clients(&mut m, ran.tally, &plan);
        if !broken {
            check_counts(&sent, &server)?;
        }
        m.server = server;
        Ok(m)
    }
}

/// The clients' phases, and INFO commandstats read around the measured one.
struct Redis {
    control: Control,
    plan: Arc<Plan>,
    live: Arc<AtomicU64>,
}

impl Load for Redis {
    type Clients = Vec<Stream>;
    type Tally = Vec<ClientResult>;
    /// The counters, and this process's CPU seconds, at the opening edge.
    type Before = (Status, Option<f64>);
    /// At the closing edge.
    type After = (Status, Option<f64>);

    /// Every client to the end of its share (or the deadline, or the pacer's end); the
    /// streams of those still connected back.
    async fn phase(
        &mut self,
        streams: Vec<Stream>,
        begin: Begin,
    ) -> Result<(Vec<Stream>, Ran<Vec<ClientResult>>)> {
        let n = streams.len() as u64;
        let (plan, live) = (&self.plan, &self.live);
        let ran = phases::on_tasks(streams, &begin, |i, stream, started| {
            let keys = plan.keyspace.map(|k| {
                KeyGen::new(
                    plan.spec.distribution,
                    k,
                    i as u64,
                    n,
                    SmallRng::from_os_rng(),
                )
            });
            let rec = started.seconds.recorder();
            client(
                stream,
                plan.clone(),
                keys,
                started.until(i),
                live.clone(),
                rec,
            )
        })
        .await?;
        let (back, ran) = ran.unzip();
        Ok((back.into_iter().flatten().collect(), ran))
    }

    async fn before(&mut self, streams: Vec<Stream>) -> Result<(Vec<Stream>, Self::Before)> {
        let before = commandstats(&mut self.control).await?;
        Ok((streams, (before, cpu::process_seconds())))
    }

    async fn after(
        &mut self,
        _: &mut Result<(Vec<Stream>, Ran<Vec<ClientResult>>)>,
    ) -> Result<Self::After> {
        let cpu = cpu::process_seconds();
        Ok((commandstats(&mut self.control).await?, cpu))
    }
}

impl Plan {
    fn new(spec: &RedisSpec) -> Plan {
        let templates = templates(
            spec.test,
            spec.data_size,
            spec.keyspace.is_some(),
            spec.ratio.unwrap_or_default(),
        );
        Plan {
            classes: templates.iter().map(|t| class(t.command).one()).collect(),
            templates,
            pipeline: u64::from(spec.pipeline.max(1)),
            keyspace: spec.keyspace,
            spec: spec.clone(),
        }
    }
}

/// The clients' results added into `m` (with the reads, writes and others they sent); also
/// the requests sent per command, and whether a connection broke (then the server may have
/// run requests whose replies were lost).
fn merge_clients(
    m: &mut Measurement,
    results: Vec<ClientResult>,
    plan: &Plan,
) -> (BTreeMap<&'static str, u64>, bool) {
    let mut sent: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut broken = false;
    for r in results {
        m.queries += r.ok;
        m.errors += r.errors;
        m.latency.merge(&r.latency);
        if let Some(service) = &r.service {
            m.service.merge(service);
        }
        if m.first_error.is_none() {
            m.first_error = r.first_error;
        }
        broken |= r.broken;
        for (t, n) in plan.templates.iter().zip(&r.sent) {
            *sent.entry(t.command).or_default() += n;
        }
    }
    let (mut reads, mut writes, mut others) = (0, 0, 0);
    for (cmd, n) in &sent {
        match class(cmd) {
            Class::Read => reads += n,
            Class::Write => writes += n,
            Class::Other => others += n,
        }
    }
    (m.reads, m.writes, m.others) = (Some(reads), Some(writes), Some(others));
    (sent, broken)
}

enum Class {
    Read,
    Write,
    Other,
}

impl Class {
    /// One request of this class, as per-second counts.
    fn one(self) -> Counts {
        match self {
            Class::Read => Counts::READ,
            Class::Write => Counts::WRITE,
            Class::Other => Counts::OTHER,
        }
    }
}

fn class(cmd: &str) -> Class {
    match cmd {
        "get" | "lrange" => Class::Read,
        "ping" => Class::Other,
        _ => Class::Write,
    }
}

/// Every request the clients sent must be a call the server counted, and the other way round.
pub(crate) fn check_counts(sent: &BTreeMap<&'static str, u64>, server: &Status) -> Result<()> {
    for (cmd, n) in sent {
        let counted = server.get(&format!("cmdstat_{cmd}")).copied().unwrap_or(0);
        if counted != *n {
            bail!(
                "INFO commandstats counted {counted} {} calls, the clients sent {n}",
                cmd.to_uppercase()
            );
        }
    }
    Ok(())
}

struct ClientResult {
    ok: u64,
    errors: u64,
    /// Requests written, per template.
    sent: Vec<u64>,
    first_error: Option<String>,
    latency: Latency,
    /// Open loop: from each request's send to its reply.
    /// Open loop only (a touched histogram is 190 KB per client).
    service: Option<Latency>,
    /// The connection failed: the server may have run requests whose replies were lost.
    broken: bool,
}

/// One connection: write a batch of up to `pipeline` requests, read all their replies, again.
/// Each reply's latency runs from the batch's write (in open loop: from the request's
/// intended start) to the read that completed the reply.
async fn client(
    mut stream: Stream,
    plan: Arc<Plan>,
    mut keys: Option<KeyGen>,
    until: Until,
    live: Arc<AtomicU64>,
    mut rec: Recorder,
) -> (Option<Stream>, ClientResult) {
    let mut r = ClientResult::new(plan.templates.len());
    let mut out = Vec::with_capacity(4096);
    let mut rbuf = vec![0u8; 64 * 1024];
    let (mut start, mut filled) = (0usize, 0usize);
    let mut next_t = 0usize;
    let mut done: u64 = 0;
    while let Some((batch, intended)) = next_batch(&until, plan.pipeline, done).await {
        out.clear();
        let first_t = next_t;
        for _ in 0..batch {
            append(&mut out, &plan.templates[next_t], keys.as_mut());
            r.sent[next_t] += 1;
            next_t = (next_t + 1) % plan.templates.len();
        }
        let t0 = Instant::now();
        if let Err(e) = stream.write_all(&out).await {
            return lost(r, batch, format!("write failed: {e}"));
        }
        let mut got = 0;
        let mut now = t0;
        while got < batch {
            match reply_len(&rbuf[start..filled]) {
                Ok(Some((len, is_error))) => {
                    let us = now.duration_since(intended.unwrap_or(t0)).as_micros() as u64;
                    if intended.is_some() {
                        r.service
                            .get_or_insert_with(Latency::default)
                            .record_us(now.duration_since(t0).as_micros() as u64);
                    }
                    match is_error {
                        true => rec.counts(now, &Counts::ERROR),
                        false => {
                            let t = (first_t + got as usize) % plan.templates.len();
                            rec.event(now, us, &plan.classes[t]);
                        }
                    }
                    r.reply(us, is_error.then(|| &rbuf[start..start + len]));
                    start += len;
                    got += 1;
                    continue;
                }
                Ok(None) => {}
                Err(e) => return lost(r, batch - got, e.to_string()),
            }
            // Incomplete: make room, then read more.
            if start > 0 {
                rbuf.copy_within(start..filled, 0);
                filled -= start;
                start = 0;
            }
            if filled == rbuf.len() {
                rbuf.resize(rbuf.len() * 2, 0);
            }
            match stream.read(&mut rbuf[filled..]).await {
                Ok(0) => return lost(r, batch - got, "the server closed the connection".into()),
                Ok(k) => filled += k,
                Err(e) => return lost(r, batch - got, format!("read failed: {e}")),
            }
            now = Instant::now();
        }
        done += batch;
        live.fetch_add(batch, Ordering::Relaxed);
    }
    (Some(stream), r)
}

/// The next batch's size, and in open loop its request's intended start; None when the
/// client is done (its share sent, the deadline passed, the pacer ended).
async fn next_batch(until: &Until, pipeline: u64, done: u64) -> Option<(u64, Option<Instant>)> {
    match until {
        Until::Closed { share, deadline } => {
            let batch = match share {
                Some(s) => pipeline.min(s - done),
                None => pipeline,
            };
            if batch == 0 || deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            Some((batch, None))
        }
        Until::Paced(t) => t.next().await.map(|at| (1, Some(at))),
    }
}

impl ClientResult {
    /// Nothing sent yet, of `templates` templates.
    fn new(templates: usize) -> ClientResult {
        ClientResult {
            ok: 0,
            errors: 0,
            sent: vec![0; templates],
            first_error: None,
            latency: Latency::default(),
            service: None,
            broken: false,
        }
    }

    /// One reply and its latency: a success, or an `error` reply (whose text is kept when it
    /// is the first).
    fn reply(&mut self, us: u64, error: Option<&[u8]>) {
        if let Some(reply) = error {
            self.errors += 1;
            if self.first_error.is_none() {
                let text = &reply[1..reply.len() - 2];
                self.first_error = Some(String::from_utf8_lossy(text).into_owned());
            }
        } else {
            self.ok += 1;
        }
        self.latency.record_us(us);
    }
}

/// The connection is gone: requests without a reply are errors and this client stops.
fn lost(mut r: ClientResult, missing: u64, why: String) -> (Option<Stream>, ClientResult) {
    r.errors += missing;
    r.broken = true;
    r.first_error.get_or_insert(why);
    (None, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::redis::parse_commandstats;

    #[test]
    fn commandstats_deltas_and_check() {
        let before = parse_commandstats(
            "# Commandstats\r\ncmdstat_set:calls=10,usec=50,usec_per_call=5.00\r\ncmdstat_info:calls=1,usec=9\r\n",
        );
        let after = parse_commandstats(
            "# Commandstats\r\ncmdstat_set:calls=110,usec=550,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n\
             cmdstat_get:calls=7,usec=1\r\ncmdstat_info:calls=2,usec=19\r\n",
        );
        let d = delta(&before, &after);
        assert_eq!(d.get("cmdstat_set"), Some(&100));
        assert_eq!(d.get("cmdstat_set.usec"), Some(&500));
        assert_eq!(d.get("cmdstat_get"), Some(&7));
        let sent = BTreeMap::from([("set", 100u64), ("get", 7)]);
        assert!(check_counts(&sent, &d).is_ok());
        let sent = BTreeMap::from([("set", 99u64)]);
        let err = check_counts(&sent, &d).unwrap_err().to_string();
        assert!(
            err.contains("counted 100 SET calls, the clients sent 99"),
            "{err}"
        );
    }
}
