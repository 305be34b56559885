//! Reading a callgrind dump (valgrind's `callgrind.out` format, version 1): the instructions
//! (`Ir`, the first event) of the whole dump and each function's self and inclusive counts.
//!
//! The format: `fn=` names the function whose costs follow; a cost line is a position and
//! event counts (its self cost); a `calls=` line says the next cost line is the inclusive
//! cost of one call site, the callee named by the `cfn=` before it. Names may be compressed:
//! `fn=(12) name` defines id 12, a later `fn=(12)` refers to it.

use std::collections::HashMap;

use anyhow::{bail, Result};

/// One dump's instruction counts.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Dump {
    /// Every instruction executed in the dump's span (the sum of self costs).
    pub(crate) total: u64,
    /// Instructions of each function and what it called, by name. A call of a function to
    /// itself is not added again (its costs are already in the function's own lines).
    pub(crate) inclusive: HashMap<String, u64>,
    /// Instructions of each function's own lines (its self cost), by name.
    pub(crate) own: HashMap<String, u64>,
}

impl Dump {
    /// The instructions spent in any of `roots` and what they called (none counted twice
    /// as long as no root calls another).
    pub(crate) fn under(&self, roots: &[&str]) -> u64 {
        roots.iter().filter_map(|r| self.inclusive.get(*r)).sum()
    }

    /// The dumps of several processes as one: totals and each function's counts added.
    pub(crate) fn sum(dumps: Vec<Dump>) -> Dump {
        let mut all = Dump::default();
        for d in dumps {
            all.total += d.total;
            for (f, n) in d.inclusive {
                *all.inclusive.entry(f).or_default() += n;
            }
            for (f, n) in d.own {
                *all.own.entry(f).or_default() += n;
            }
        }
        all
    }
}

/// Parse a dump's text.
pub(crate) fn parse(text: &str) -> Result<Dump> {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut dump = Dump::default();
    let mut current: Option<String> = None;
    // The callee of the `calls=` line just read: the next cost line is that call's.
    let mut callee: Option<String> = None;
    let mut call_pending = false;
    let mut saw_events = false;
    for (n, line) in text.lines().enumerate() {
        if let Some(events) = line.strip_prefix("events:") {
            if events.split_whitespace().next() != Some("Ir") {
                bail!("line {}: the first event is not Ir: {events}", n + 1);
            }
            saw_events = true;
        } else if let Some(rest) = line.strip_prefix("fn=") {
            current = Some(name(&mut names, rest));
        } else if let Some(rest) = line.strip_prefix("cfn=") {
            callee = Some(name(&mut names, rest));
        } else if line.starts_with("calls=") {
            call_pending = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
            let ir = cost(line).ok_or_else(|| anyhow::anyhow!("line {}: no cost", n + 1))?;
            let Some(f) = &current else {
                bail!("line {}: a cost before any fn=", n + 1)
            };
            if call_pending {
                call_pending = false;
                if callee.as_ref() != Some(f) {
                    *dump.inclusive.entry(f.clone()).or_default() += ir;
                }
            } else {
                dump.total += ir;
                *dump.inclusive.entry(f.clone()).or_default() += ir;
                *dump.own.entry(f.clone()).or_default() += ir;
            }
        }
    }
    if !saw_events {
        bail!("no `events:` line: not a callgrind dump");
    }
    Ok(dump)
}

/// A compressed or plain name: `(id) name` defines, `(id)` refers, `name` is itself.
fn name(names: &mut HashMap<String, String>, text: &str) -> String {
    let text = text.trim();
    match text.strip_prefix('(').and_then(|t| t.split_once(')')) {
        Some((id, rest)) => {
            let rest = rest.trim();
            if rest.is_empty() {
                names.get(id).cloned().unwrap_or_else(|| format!("({id})"))
            } else {
                names.insert(id.to_string(), rest.to_string());
                rest.to_string()
            }
        }
        None => text.to_string(),
    }
}

/// The first event of a cost line (`<position> <Ir> ...`); a missing count is 0.
fn cost(line: &str) -> Option<u64> {
    let mut parts = line.split_whitespace();
    parts.next()?;
    match parts.next() {
        Some(ir) => ir.parse().ok(),
        None => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dump as callgrind 3.19 writes it with `--dump-instr=no` (names compressed).
    const DUMP: &str = "version: 1\ncreator: callgrind-3.19.0\npid: 1\n\
        positions: line\nevents: Ir\nsummary: 1160\n\n\
        ob=(1) /usr/bin/redis-check-rdb\nfl=(1) ???\n\
        fn=(1) aeMain\n0 100\ncfn=(2) serverCron\ncalls=2 0\n0 300\n\
        cfn=(3) getCommand\ncalls=10 0\n0 650\n\
        fn=(2)\n0 200\ncfn=(4) clientsCron\ncalls=2 0\n0 100\n\
        fn=(4)\n0 100\n\
        fn=(3)\n+2 500\n* 50\ncfn=(3)\ncalls=1 0\n0 50\n\
        fn=(5) beforeSleep\n0 60\n\ntotals: 1160\n";

    #[test]
    fn a_dump_gives_its_total_and_each_functions_inclusive_count() {
        let d = parse(DUMP).unwrap();
        assert_eq!(d.total, 100 + 200 + 100 + 500 + 50 + 60);
        assert_eq!(d.inclusive["serverCron"], 300);
        assert_eq!(d.inclusive["clientsCron"], 100);
        // Its call to itself is in its own lines already.
        assert_eq!(d.inclusive["getCommand"], 550);
        assert_eq!(d.inclusive["aeMain"], 100 + 300 + 650);
        assert_eq!(d.under(&["serverCron", "absent"]), 300);
        assert_eq!((d.own["aeMain"], d.own["getCommand"]), (100, 550));
        assert_eq!(d.own.values().sum::<u64>(), d.total);
    }

    #[test]
    fn the_dumps_of_two_processes_add_up() {
        let d = parse(DUMP).unwrap();
        let both = Dump::sum(vec![d.clone(), d.clone()]);
        assert_eq!(both.total, 2 * d.total);
        assert_eq!(both.inclusive["aeMain"], 2 * d.inclusive["aeMain"]);
        assert_eq!(both.own["getCommand"], 2 * d.own["getCommand"]);
    }

    #[test]
    fn what_is_no_dump_is_refused() {
        assert!(parse("hello\n").is_err());
        assert!(parse("events: Dr\nfn=a\n0 1\n").is_err());
        assert!(parse("events: Ir\n0 1\n").is_err());
    }
}
