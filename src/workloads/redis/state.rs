//! Sending a `prefill` plan: FLUSHALL, then the fills in batches on the control connection,
//! before warm-up and before the measured phase's INFO snapshot, so that neither the measured
//! window nor the counted commands include them.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Result};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::servers::redis::control::{CommandError, Control};
use crate::workloads::redis::prefill::{key_fill, plan, popped, sent, Fill, KeyFill, TIMED_RATE};
use crate::workloads::redis::proto::{value, write_digits, KeyGen};
use crate::workloads::redis::spec::RedisSpec;

/// Members per command: large enough that round trips do not matter, small enough that no
/// command blocks the server for long.
const BATCH: u64 = 1000;

/// The fixed seed of drawn keys: the same test leaves the same keys in every iteration.
const SEED: u64 = 0x5eed_4ed1;

/// Empty the server, then build the state `spec.test` starts from after `n` requests' worth
/// of redis-benchmark's suite. Each batch counts once in `live` (the stall watchdog).
pub(crate) async fn prepare(
    control: &mut Control,
    spec: &RedisSpec,
    n: u64,
    live: &AtomicU64,
) -> Result<()> {
    flushall(control).await?;
    let v = value(spec.data_size);
    for fill in plan(spec.test, n) {
        let total = sent(fill, spec.keyspace, spec.distribution);
        let mut keys = KeyGen::new(
            spec.distribution,
            spec.keyspace.unwrap_or(1),
            0,
            1,
            SmallRng::seed_from_u64(SEED),
        );
        let mut done = 0u64;
        while done < total {
            let batch = done..total.min(done + BATCH);
            let cmd = batch_command(fill, spec, &v, batch.clone(), &mut keys);
            match control.query::<()>(&cmd).await {
                Err(CommandError::Refused { reason, .. }) => {
                    bail!("failed to prepare the state of {}: {reason}", spec.test)
                }
                r => r?,
            }
            live.fetch_add(1, Ordering::Relaxed);
            done = batch.end;
        }
    }
    Ok(())
}

/// One command of a fill: elements, members or keys number `range` of it.
fn batch_command(
    fill: Fill,
    spec: &RedisSpec,
    v: &[u8],
    range: std::ops::Range<u64>,
    keys: &mut KeyGen,
) -> redis::Cmd {
    match fill {
        Fill::Push { command, .. } => {
            let mut c = redis::cmd(command);
            c.arg("mylist");
            for _ in range {
                c.arg(v);
            }
            c
        }
        Fill::Members { command, key, .. } => {
            let mut c = redis::cmd(command);
            c.arg(key);
            for i in range {
                if command == "ZADD" {
                    c.arg(i);
                }
                c.arg(numbered(b"element:", i));
            }
            c
        }
        Fill::Keys { draws } => {
            let how = key_fill(draws, spec.keyspace, spec.distribution);
            let mut c = redis::cmd("MSET");
            for i in range {
                let key = match how {
                    KeyFill::Fixed => b"key:__rand_int__".to_vec(),
                    KeyFill::All(_) => numbered(b"key:", i),
                    KeyFill::Drawn(_) => numbered(b"key:", keys.next_key()),
                };
                c.arg(key).arg(v);
            }
            c
        }
    }
}

/// `prefix` and `n` as 12 digits, as the load clients name keys and members.
fn numbered(prefix: &[u8], n: u64) -> Vec<u8> {
    let mut k = prefix.to_vec();
    k.resize(prefix.len() + 12, b'0');
    write_digits(&mut k[prefix.len()..], n);
    k
}

/// FLUSHALL SYNC, so that no freeing runs on into the measured phase (Redis before 6.2 knows
/// no SYNC: its FLUSHALL is synchronous unless told ASYNC).
async fn flushall(control: &mut Control) -> Result<()> {
    if control
        .query::<()>(redis::cmd("FLUSHALL").arg("SYNC"))
        .await
        .is_ok()
    {
        return Ok(());
    }
    match control.query::<()>(&redis::cmd("FLUSHALL")).await {
        Err(CommandError::Refused { reason, .. }) => bail!(
            "failed to empty the server before the iteration (FLUSHALL): {reason}; the redis \
             workload starts every iteration from an empty server"
        ),
        r => Ok(r?),
    }
}

/// After a timed phase: a POP test whose structure ran empty measured nil replies, not pops.
pub(crate) async fn check_not_drained(
    control: &mut Control,
    spec: &RedisSpec,
    n: u64,
) -> Result<()> {
    let Some((size, key)) = popped(spec.test) else {
        return Ok(());
    };
    let left: u64 = control.query(redis::cmd(size).arg(key)).await?;
    if left == 0 {
        bail!(
            "{key} ran empty during the iteration: its state of {n} requests' worth (a timed \
             phase counts {} requests a second) did not last, so some {}s answered nil; give \
             `length` and `warmup` as counts",
            TIMED_RATE,
            spec.test.command().to_uppercase()
        );
    }
    Ok(())
}
