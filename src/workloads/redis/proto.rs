//! redis-benchmark's tests as RESP bytes, with its key naming, and memtier's key patterns.
//! Pure: no I/O. A command is encoded once into a template; sending it copies the template
//! and writes fresh 12-digit key numbers into its slots (as redis-benchmark patches
//! `__rand_int__` in place), so the hot path never formats a command.

use rand::rngs::SmallRng;
use rand::Rng;

use crate::workloads::redis::spec::{KeyDistribution, Ratio, RedisTest};

/// What redis-benchmark writes where a key number goes when no keyspace is given.
const RAND_INT: &[u8] = b"__rand_int__";
/// Digits of a key number (redis-benchmark's `%012llu`).
const DIGITS: usize = 12;

/// One command, encoded, with the offsets of its key-number slots.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    pub(crate) bytes: Vec<u8>,
    pub(crate) slots: Vec<usize>,
    /// INFO commandstats name of the command (`set`, `lrange`, ...).
    pub(crate) command: &'static str,
}

/// An argument of a command being encoded.
enum Arg<'a> {
    Text(&'a [u8]),
    /// `prefix` followed by a key number (`key:` + 12 digits).
    Key(&'a [u8]),
}

fn encode(command: &'static str, args: &[Arg<'_>]) -> Template {
    let mut bytes = format!("*{}\r\n", args.len()).into_bytes();
    let mut slots = Vec::new();
    for a in args {
        match a {
            Arg::Text(t) => {
                bytes.extend_from_slice(format!("${}\r\n", t.len()).as_bytes());
                bytes.extend_from_slice(t);
            }
            Arg::Key(prefix) => {
                bytes.extend_from_slice(format!("${}\r\n", prefix.len() + DIGITS).as_bytes());
                bytes.extend_from_slice(prefix);
                slots.push(bytes.len());
                bytes.extend_from_slice(RAND_INT);
            }
        }
        bytes.extend_from_slice(b"\r\n");
    }
    Template {
        bytes,
        slots,
        command,
    }
}

/// A value of `size` printable bytes (redis-benchmark's are pseudo-random printable too).
pub(crate) fn value(size: usize) -> Vec<u8> {
    (0..size).map(|i| b'0' + ((i * 7 + 3) % 64) as u8).collect()
}

/// The commands a test sends, in the order a client cycles through them: one template for
/// every test but `mixed`, whose list is `sets` SETs then `gets` GETs (memtier's order).
pub(crate) fn templates(
    test: RedisTest,
    data_size: usize,
    random: bool,
    ratio: Ratio,
) -> Vec<Template> {
    let data = value(data_size);
    let d = Arg::Text(&data);
    let one = |name: &'static str, args: &[Arg<'_>]| vec![encode(name, args)];
    match test {
        RedisTest::PingInline => vec![Template {
            bytes: b"PING\r\n".to_vec(),
            slots: Vec::new(),
            command: "ping",
        }],
        RedisTest::PingMbulk => one("ping", &[Arg::Text(b"PING")]),
        RedisTest::Set => one("set", &[Arg::Text(b"SET"), Arg::Key(b"key:"), d]),
        RedisTest::Get => one("get", &[Arg::Text(b"GET"), Arg::Key(b"key:")]),
        RedisTest::Incr => one("incr", &[Arg::Text(b"INCR"), Arg::Key(b"counter:")]),
        RedisTest::Lpush => one("lpush", &[Arg::Text(b"LPUSH"), Arg::Text(b"mylist"), d]),
        RedisTest::Rpush => one("rpush", &[Arg::Text(b"RPUSH"), Arg::Text(b"mylist"), d]),
        RedisTest::Lpop => one("lpop", &[Arg::Text(b"LPOP"), Arg::Text(b"mylist")]),
        RedisTest::Rpop => one("rpop", &[Arg::Text(b"RPOP"), Arg::Text(b"mylist")]),
        RedisTest::Sadd => one(
            "sadd",
            &[
                Arg::Text(b"SADD"),
                Arg::Text(b"myset"),
                Arg::Key(b"element:"),
            ],
        ),
        RedisTest::Hset => one(
            "hset",
            &[
                Arg::Text(b"HSET"),
                Arg::Text(b"myhash"),
                Arg::Key(b"element:"),
                d,
            ],
        ),
        RedisTest::Spop => one("spop", &[Arg::Text(b"SPOP"), Arg::Text(b"myset")]),
        RedisTest::Zadd => {
            // redis-benchmark scores 0, or a random number when keys are random.
            let score = if random {
                Arg::Key(b"")
            } else {
                Arg::Text(b"0")
            };
            one(
                "zadd",
                &[
                    Arg::Text(b"ZADD"),
                    Arg::Text(b"myzset"),
                    score,
                    Arg::Key(b"element:"),
                ],
            )
        }
        RedisTest::Zpopmin => one("zpopmin", &[Arg::Text(b"ZPOPMIN"), Arg::Text(b"myzset")]),
        RedisTest::Lrange100
        | RedisTest::Lrange300
        | RedisTest::Lrange500
        | RedisTest::Lrange600 => {
            let last = (test.lrange_len() - 1).to_string();
            one(
                "lrange",
                &[
                    Arg::Text(b"LRANGE"),
                    Arg::Text(b"mylist"),
                    Arg::Text(b"0"),
                    Arg::Text(last.as_bytes()),
                ],
            )
        }
        RedisTest::Mset => {
            let mut args = vec![Arg::Text(b"MSET")];
            for _ in 0..10 {
                args.push(Arg::Key(b"key:"));
                args.push(Arg::Text(&data));
            }
            one("mset", &args)
        }
        RedisTest::Mixed => {
            let set = encode("set", &[Arg::Text(b"SET"), Arg::Key(b"key:"), d]);
            let get = encode("get", &[Arg::Text(b"GET"), Arg::Key(b"key:")]);
            let mut list = vec![set; ratio.sets as usize];
            list.extend(std::iter::repeat_n(get, ratio.gets as usize));
            list
        }
    }
}

/// Append `t` to `out` with a fresh key number in each slot (or the literal `__rand_int__`
/// when `keys` is None: redis-benchmark's single key without `-r`).
pub(crate) fn append(out: &mut Vec<u8>, t: &Template, keys: Option<&mut KeyGen>) {
    let start = out.len();
    out.extend_from_slice(&t.bytes);
    if let Some(keys) = keys {
        for &slot in &t.slots {
            write_digits(
                &mut out[start + slot..start + slot + DIGITS],
                keys.next_key(),
            );
        }
    }
}

/// `n` as 12 zero-padded decimal digits (higher digits dropped, as `%012llu` never needs).
pub(crate) fn write_digits(dst: &mut [u8], mut n: u64) {
    for d in dst.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// Key numbers in `0..keyspace` for one client.
pub(crate) struct KeyGen {
    dist: KeyDistribution,
    keyspace: u64,
    next_seq: u64,
    rng: SmallRng,
}

impl KeyGen {
    /// Client `client` of `clients`: sequential walks start at the client's own share of the
    /// keyspace, so clients do not write the same keys in lockstep.
    pub(crate) fn new(
        dist: KeyDistribution,
        keyspace: u64,
        client: u64,
        clients: u64,
        rng: SmallRng,
    ) -> KeyGen {
        let keyspace = keyspace.max(1);
        KeyGen {
            dist,
            keyspace,
            next_seq: keyspace * client / clients.max(1),
            rng,
        }
    }

    pub(crate) fn next_key(&mut self) -> u64 {
        match self.dist {
            KeyDistribution::Uniform => self.rng.random_range(0..self.keyspace),
            KeyDistribution::Sequential => {
                let k = self.next_seq;
                self.next_seq = (k + 1) % self.keyspace;
                k
            }
            KeyDistribution::Gaussian => loop {
                // Box-Muller; memtier's defaults: median in the middle, deviation range/6.
                let n = self.keyspace as f64;
                let u1: f64 = self.rng.random_range(f64::MIN_POSITIVE..1.0);
                let u2: f64 = self.rng.random();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let k = (n / 2.0 + z * n / 6.0).floor();
                if k >= 0.0 && k < n {
                    return k as u64;
                }
            },
        }
    }
}

/// A malformed reply: the connection cannot be trusted any more.
#[derive(Debug, thiserror::Error)]
#[error("malformed reply from the server: {0}")]
pub(crate) struct ProtocolError(pub String);

/// Length of the first complete RESP2 reply in `buf` and whether it is an error reply, or
/// None when more bytes are needed. Arrays are walked without allocating.
pub(crate) fn reply_len(buf: &[u8]) -> Result<Option<(usize, bool)>, ProtocolError> {
    let is_error = buf.first() == Some(&b'-');
    let mut pos = 0;
    let mut pending: u64 = 1;
    while pending > 0 {
        let Some(&kind) = buf.get(pos) else {
            return Ok(None);
        };
        let Some(eol) = find_crlf(&buf[pos + 1..]) else {
            return Ok(None);
        };
        let line = &buf[pos + 1..pos + 1 + eol];
        pos += eol + 3;
        pending -= 1;
        match kind {
            b'+' | b'-' | b':' => {}
            b'$' => {
                let n = number(line)?;
                if n >= 0 {
                    pos += n as usize + 2;
                    if pos > buf.len() {
                        return Ok(None);
                    }
                }
            }
            b'*' => {
                let n = number(line)?;
                if n > 0 {
                    pending += n as u64;
                }
            }
            other => {
                return Err(ProtocolError(format!(
                    "unexpected type byte {:?}",
                    other as char
                )))
            }
        }
    }
    Ok(Some((pos, is_error)))
}

fn find_crlf(b: &[u8]) -> Option<usize> {
    b.windows(2).position(|w| w == b"\r\n")
}

fn number(line: &[u8]) -> Result<i64, ProtocolError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ProtocolError(format!("bad length {:?}", String::from_utf8_lossy(line))))
}

/// Encode any command (a load stream's AUTH; control work goes through the `redis` crate).
pub(crate) fn command(args: &[&[u8]]) -> Vec<u8> {
    let args: Vec<Arg<'_>> = args.iter().map(|a| Arg::Text(a)).collect();
    encode("", &args).bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn text(t: &Template) -> String {
        String::from_utf8(t.bytes.clone()).unwrap()
    }

    #[test]
    fn commands_match_redis_benchmark() {
        let r = Ratio::default();
        let t = |test| templates(test, 3, false, r).remove(0);
        assert_eq!(text(&t(RedisTest::PingInline)), "PING\r\n");
        assert_eq!(text(&t(RedisTest::PingMbulk)), "*1\r\n$4\r\nPING\r\n");
        assert_eq!(
            text(&t(RedisTest::Set)),
            "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\n3:A\r\n"
        );
        assert_eq!(
            text(&t(RedisTest::Get)),
            "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n"
        );
        assert_eq!(
            text(&t(RedisTest::Incr)),
            "*2\r\n$4\r\nINCR\r\n$20\r\ncounter:__rand_int__\r\n"
        );
        assert_eq!(
            text(&t(RedisTest::Lrange300)),
            "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n299\r\n"
        );
        assert_eq!(
            text(&t(RedisTest::Zadd)),
            "*4\r\n$4\r\nZADD\r\n$6\r\nmyzset\r\n$1\r\n0\r\n$20\r\nelement:__rand_int__\r\n"
        );
        let mset = t(RedisTest::Mset);
        assert_eq!(mset.slots.len(), 10);
        assert!(text(&mset).starts_with("*21\r\n$4\r\nMSET\r\n"));
        for test in RedisTest::ALL {
            for tpl in templates(test, 3, true, r) {
                if test != RedisTest::Mixed {
                    assert_eq!(tpl.command, test.command());
                }
                // Every encoded command is one well-formed RESP array (or the inline PING).
                if test != RedisTest::PingInline {
                    assert_eq!(
                        reply_len(&tpl.bytes).unwrap(),
                        Some((tpl.bytes.len(), false))
                    );
                }
            }
        }
    }

    #[test]
    fn random_zadd_scores_and_keys_are_patched() {
        let t = templates(RedisTest::Zadd, 3, true, Ratio::default()).remove(0);
        assert_eq!(t.slots.len(), 2);
        let mut keys = KeyGen::new(
            KeyDistribution::Sequential,
            1000,
            0,
            1,
            SmallRng::seed_from_u64(1),
        );
        let mut out = Vec::new();
        append(&mut out, &t, Some(&mut keys));
        append(&mut out, &t, Some(&mut keys));
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("$12\r\n000000000000\r\n$20\r\nelement:000000000001\r\n"));
        assert!(s.contains("$12\r\n000000000002\r\n$20\r\nelement:000000000003\r\n"));
    }

    #[test]
    fn mixed_follows_the_ratio() {
        let list = templates(RedisTest::Mixed, 8, true, Ratio { sets: 1, gets: 3 });
        let names: Vec<&str> = list.iter().map(|t| t.command).collect();
        assert_eq!(names, ["set", "get", "get", "get"]);
    }

    #[test]
    fn digits_are_zero_padded() {
        let mut b = [0u8; 12];
        write_digits(&mut b, 4711);
        assert_eq!(&b, b"000000004711");
    }

    #[test]
    fn distributions_stay_in_range_and_have_their_shape() {
        let rng = || SmallRng::seed_from_u64(42);
        let n = 1000u64;
        let mut uni = KeyGen::new(KeyDistribution::Uniform, n, 0, 1, rng());
        let mut gauss = KeyGen::new(KeyDistribution::Gaussian, n, 0, 1, rng());
        let (mut u_mid, mut g_mid) = (0, 0);
        for _ in 0..20_000 {
            let (u, g) = (uni.next_key(), gauss.next_key());
            assert!(u < n && g < n);
            u_mid += u64::from((333..667).contains(&u));
            g_mid += u64::from((333..667).contains(&g));
        }
        // Middle third: ~33% uniform, ~95% for a normal with sigma = n/6 (within +-1 sigma).
        assert!((6000..7400).contains(&u_mid), "{u_mid}");
        assert!((13_000..14_400).contains(&g_mid), "{g_mid}");
        let mut seq = KeyGen::new(KeyDistribution::Sequential, 10, 1, 2, rng());
        let walk: Vec<u64> = (0..7).map(|_| seq.next_key()).collect();
        assert_eq!(walk, [5, 6, 7, 8, 9, 0, 1]);
    }

    #[test]
    fn replies_are_framed() {
        assert_eq!(reply_len(b"+OK\r\n").unwrap(), Some((5, false)));
        assert_eq!(reply_len(b"-ERR x\r\n+OK").unwrap(), Some((8, true)));
        assert_eq!(reply_len(b"$-1\r\n").unwrap(), Some((5, false)));
        assert_eq!(reply_len(b"$3\r\nabc\r\n").unwrap(), Some((9, false)));
        assert_eq!(reply_len(b"$3\r\nab").unwrap(), None);
        assert_eq!(
            reply_len(b"*2\r\n$1\r\na\r\n:5\r\n").unwrap(),
            Some((15, false))
        );
        assert_eq!(reply_len(b"*2\r\n$1\r\na\r\n").unwrap(), None);
        assert_eq!(reply_len(b"*0\r\n").unwrap(), Some((4, false)));
        assert_eq!(reply_len(b"*-1\r\n").unwrap(), Some((5, false)));
        assert_eq!(reply_len(b"").unwrap(), None);
        assert!(reply_len(b"?x\r\n").is_err());
    }
}
