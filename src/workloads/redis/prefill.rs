//! The state a `redis` iteration starts from: what redis-benchmark's default suite has left
//! in the keys a test reads when that test starts (redis/redis `src/redis-benchmark.c`, the
//! "Run default benchmark suite" loop in `main`), for `n` requests. Pure: the plan and its
//! size; `state` sends it.
//!
//! The suite runs each selected test with `-n` requests in this order: PING, SET, GET, INCR,
//! LPUSH, RPUSH, LPOP, RPOP, SADD, HSET, SPOP, ZADD, ZPOPMIN, "LPUSH (needed to benchmark
//! LRANGE)", LRANGE_100/300/500/600, MSET. So GET and MSET find SET's keys, RPUSH finds
//! LPUSH's n elements, LPOP finds LPUSH's and RPUSH's 2n, RPOP the n LPOP left, SPOP and
//! ZPOPMIN find SADD's and ZADD's members, LRANGE the n elements of its own LPUSH; every
//! other test starts on keys nothing before it wrote.

use std::time::Duration;

use crate::input::Length;
use crate::workloads::redis::spec::{KeyDistribution, RedisTest};

/// What a timed phase counts as, in requests per second: twice the fastest rate one Redis
/// server answered here (1,015,541 LPOP/s, 50 clients x pipeline 16, docs/redis.md), so that
/// a POP test's structure does not run dry in a timed phase.
pub(crate) const TIMED_RATE: u64 = 2_000_000;

/// The most the prepared state may hold, in bytes (members x (value + 32 bytes of key or
/// bookkeeping)): a matrix's `length` cannot make rmatrix fill a server without bound.
pub(crate) const MAX_PREFILL_BYTES: u64 = 4 << 30;

/// Above `FULL_DRAWS` draws per key, uniform draws leave every key of the keyspace set but
/// for a chance of e^-20 each: the fill then sets each key once instead of drawing.
const FULL_DRAWS: u64 = 20;

/// One part of the prepared state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// `count` copies of the test's value pushed onto `mylist` by `command` (LPUSH, RPUSH).
    Push { command: &'static str, count: u64 },
    /// `count` distinct members `element:<i>` added to `key` by `command` (SADD myset,
    /// ZADD myzset). redis-benchmark's SADD draws its members from `-r` (one member
    /// without it), so fewer than n are distinct and its last SPOPs answer nil; rmatrix
    /// adds n distinct ones so that every pop it measures removes a member.
    Members {
        command: &'static str,
        key: &'static str,
        count: u64,
    },
    /// `draws` SETs of `key:<number>` with the test's value, the numbers drawn as the test
    /// draws its keys (the one key `key:__rand_int__` without a keyspace).
    Keys { draws: u64 },
}

/// The requests a cell's iteration sends, warm-up included (the state must last through
/// both): a count as given, a timed phase as `TIMED_RATE` per second.
pub(crate) fn requests(length: Length, warmup: Option<Length>) -> u64 {
    let one = |l: Length| match l {
        Length::Queries(n) => n,
        Length::Time(d) => timed(d),
    };
    one(length).saturating_add(warmup.map_or(0, one))
}

fn timed(d: Duration) -> u64 {
    (d.as_secs_f64() * TIMED_RATE as f64).ceil() as u64
}

/// Whether a phase is timed, so that a POP test's structure could still run dry.
pub(crate) fn any_timed(length: Length, warmup: Option<Length>) -> bool {
    length.as_duration().is_some() || warmup.is_some_and(|w| w.as_duration().is_some())
}

/// The state `test` starts from after `n` requests' worth of the suite before it.
pub(crate) fn plan(test: RedisTest, n: u64) -> Vec<Fill> {
    let lpush = |count| Fill::Push {
        command: "LPUSH",
        count,
    };
    match test {
        RedisTest::Get | RedisTest::Mset => vec![Fill::Keys { draws: n }],
        RedisTest::Rpush => vec![lpush(n)],
        RedisTest::Lpop => vec![
            lpush(n),
            Fill::Push {
                command: "RPUSH",
                count: n,
            },
        ],
        // LPUSH n + RPUSH n - LPOP n: n equal values, as one LPUSH leaves them.
        RedisTest::Rpop => vec![lpush(n)],
        RedisTest::Spop => vec![Fill::Members {
            command: "SADD",
            key: "myset",
            count: n,
        }],
        RedisTest::Zpopmin => vec![Fill::Members {
            command: "ZADD",
            key: "myzset",
            count: n,
        }],
        // At least the elements the test reads: its title promises them.
        RedisTest::Lrange100
        | RedisTest::Lrange300
        | RedisTest::Lrange500
        | RedisTest::Lrange600 => vec![lpush(n.max(test.lrange_len() as u64))],
        // memtier, whose mix this is, prepares nothing either.
        RedisTest::PingInline
        | RedisTest::PingMbulk
        | RedisTest::Set
        | RedisTest::Incr
        | RedisTest::Lpush
        | RedisTest::Sadd
        | RedisTest::Hset
        | RedisTest::Zadd
        | RedisTest::Mixed => Vec::new(),
    }
}

/// The keys a `Keys` fill sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyFill {
    /// No keyspace: the one key `key:__rand_int__`.
    Fixed,
    /// Every key of the keyspace once, where the draws would as good as surely hit them all.
    All(u64),
    /// This many draws, as the test draws its keys.
    Drawn(u64),
}

pub(crate) fn key_fill(draws: u64, keyspace: Option<u64>, dist: KeyDistribution) -> KeyFill {
    let Some(k) = keyspace else {
        return KeyFill::Fixed;
    };
    let covers = match dist {
        KeyDistribution::Uniform => draws / FULL_DRAWS >= k,
        KeyDistribution::Sequential => draws >= k,
        KeyDistribution::Gaussian => false,
    };
    if covers {
        KeyFill::All(k)
    } else {
        KeyFill::Drawn(draws)
    }
}

/// The elements, members or SETs one fill sends.
pub(crate) fn sent(fill: Fill, keyspace: Option<u64>, dist: KeyDistribution) -> u64 {
    match fill {
        Fill::Push { count, .. } | Fill::Members { count, .. } => count,
        Fill::Keys { draws } => match key_fill(draws, keyspace, dist) {
            KeyFill::Fixed => 1,
            KeyFill::All(k) => k,
            KeyFill::Drawn(d) => d,
        },
    }
}

/// What a plan sends, and about the bytes it leaves in the server.
pub(crate) fn size(
    plan: &[Fill],
    keyspace: Option<u64>,
    dist: KeyDistribution,
    data_size: usize,
) -> (u64, u64) {
    let members = (plan.iter())
        .map(|f| sent(*f, keyspace, dist))
        .fold(0, u64::saturating_add);
    (members, members.saturating_mul(data_size as u64 + 32))
}

/// The structure a POP test empties and the command that tells its size.
pub(crate) fn popped(test: RedisTest) -> Option<(&'static str, &'static str)> {
    match test {
        RedisTest::Lpop | RedisTest::Rpop => Some(("LLEN", "mylist")),
        RedisTest::Spop => Some(("SCARD", "myset")),
        RedisTest::Zpopmin => Some(("ZCARD", "myzset")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(command: &'static str, count: u64) -> Fill {
        Fill::Push { command, count }
    }

    /// Each test's state, from the order of the suite in redis-benchmark.c (see the module
    /// comment): n = 1000 requests.
    #[test]
    fn the_plan_follows_redis_benchmarks_suite() {
        let n = 1000;
        for t in RedisTest::ALL {
            let want = match t {
                RedisTest::Get | RedisTest::Mset => vec![Fill::Keys { draws: n }],
                RedisTest::Rpush | RedisTest::Rpop => vec![push("LPUSH", n)],
                RedisTest::Lpop => vec![push("LPUSH", n), push("RPUSH", n)],
                RedisTest::Spop => vec![Fill::Members {
                    command: "SADD",
                    key: "myset",
                    count: n,
                }],
                RedisTest::Zpopmin => vec![Fill::Members {
                    command: "ZADD",
                    key: "myzset",
                    count: n,
                }],
                RedisTest::Lrange100
                | RedisTest::Lrange300
                | RedisTest::Lrange500
                | RedisTest::Lrange600 => vec![push("LPUSH", n)],
                _ => Vec::new(),
            };
            assert_eq!(plan(t, n), want, "{t}");
        }
        // Fewer requests than LRANGE_600 reads: the list still holds 600.
        assert_eq!(plan(RedisTest::Lrange600, 10), vec![push("LPUSH", 600)]);
    }

    /// A POP test's structure holds at least every pop of warm-up and measured phase.
    #[test]
    fn pops_never_run_dry() {
        let n = requests(Length::Queries(3000), Some(Length::Queries(200)));
        assert_eq!(n, 3200);
        for t in [
            RedisTest::Lpop,
            RedisTest::Rpop,
            RedisTest::Spop,
            RedisTest::Zpopmin,
        ] {
            let (members, _) = size(&plan(t, n), None, KeyDistribution::Uniform, 3);
            assert!(members >= n, "{t}: {members}");
            assert!(popped(t).is_some());
        }
        let timed = requests(
            Length::Time(Duration::from_secs(2)),
            Some(Length::Time(Duration::from_millis(300))),
        );
        assert_eq!(timed, 4_600_000);
        assert!(any_timed(
            Length::Queries(1),
            Some(Length::Time(Duration::ZERO))
        ));
        assert!(!any_timed(Length::Queries(1), None));
    }

    #[test]
    fn keys_are_drawn_unless_the_draws_cover_the_keyspace() {
        let u = KeyDistribution::Uniform;
        assert!(matches!(key_fill(5, None, u), KeyFill::Fixed));
        assert!(matches!(key_fill(1999, Some(100), u), KeyFill::Drawn(1999)));
        assert!(matches!(key_fill(2000, Some(100), u), KeyFill::All(100)));
        let s = KeyDistribution::Sequential;
        assert!(matches!(key_fill(100, Some(100), s), KeyFill::All(100)));
        let g = KeyDistribution::Gaussian;
        assert!(matches!(key_fill(1 << 40, Some(1), g), KeyFill::Drawn(_)));
        let (members, bytes) = size(&plan(RedisTest::Get, 2000), Some(100), u, 8);
        assert_eq!((members, bytes), (100, 100 * 40));
    }
}
