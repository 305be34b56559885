//! How long and how often each cell runs: iterations, length, timeouts and the `repeat`
//! block.

use super::MatrixError;
use super::Validator;
use crate::input::bounds::MAX_QUERIES;
use crate::input::Length;
use crate::matrix::model::MAX_ITERATIONS;

impl Validator<'_> {
    pub(super) fn check_timing(&self) -> Result<(), MatrixError> {
        let m = self.m;
        if m.iterations == 0 {
            return Err(self.err("iterations", "iterations must be at least 1".into()));
        }
        if m.length == Some(Length::Queries(0))
            || m.length == Some(Length::Time(Default::default()))
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
            if let Some(Length::Queries(n)) = v {
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
            if v == Some(Length::Time(Default::default())) {
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
        self.check_until_interval()?;
        self.check_duet()?;
        if let Some(p) = m
            .profile
            .filter(|p| !crate::matrix::model::PROFILE_HZ.contains(&p.cpu))
        {
            let r = crate::matrix::model::PROFILE_HZ;
            return Err(self.err(
                "profile.cpu",
                format!(
                    "profile.cpu {} is not between {} and {} samples a second (99 is usual)",
                    p.cpu,
                    r.start(),
                    r.end()
                ),
            ));
        }
        self.check_counted()?;
        if m.repeat.max_iterations == Some(0) {
            return Err(self.err(
                "repeat.max_iterations",
                "max_iterations must be at least 1".into(),
            ));
        }
        if let Some(n) = m.repeat.max_iterations.filter(|n| *n > MAX_ITERATIONS) {
            return Err(self.err(
                "repeat.max_iterations",
                format!("max_iterations {n} is more than {MAX_ITERATIONS}"),
            ));
        }
        for (path, v) in [("length", m.length), ("warmup", m.warmup)] {
            if let Some(Length::Queries(n)) = v {
                if n > MAX_QUERIES {
                    return Err(self.err(
                        path,
                        format!(
                            "{path} {n} is more than {MAX_QUERIES} statements: give a duration \
                             (e.g. 10m) for a long run"
                        ),
                    ));
                }
            }
        }
        if m.iterations > MAX_ITERATIONS {
            return Err(self.err(
                "iterations",
                format!("iterations {} is more than {MAX_ITERATIONS}", m.iterations),
            ));
        }
        Ok(())
    }

    /// `repeat.until_interval`: points above zero, and a baseline to narrow the changes
    /// against.
    fn check_until_interval(&self) -> Result<(), MatrixError> {
        let m = self.m;
        if let Some(w) = m.repeat.until_interval {
            if !(w.is_finite() && w > 0.0) {
                return Err(self.err(
                    "repeat.until_interval",
                    format!(
                        "until_interval {w} is not a number of percentage points above 0 \
                         (e.g. 10 for ±10 points)"
                    ),
                ));
            }
            if m.report.baseline.is_empty() {
                return Err(self.err(
                    "repeat.until_interval",
                    "until_interval narrows each change against report.baseline: the matrix \
                     has no report.baseline (e.g. `report: {baseline: {config: default}}`)"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// `repeat.duet`: two servers, each in a container on CPUs of its own, and a plan the
    /// two sides can follow in step (no adaptive repeats, no sweep that stops on its own).
    fn check_duet(&self) -> Result<(), MatrixError> {
        let m = self.m;
        if !m.repeat.duet {
            return Ok(());
        }
        let why = if m.servers.len() != 2 {
            Some(format!(
                "duet measures two servers at the same time: the matrix has {}",
                m.servers.len()
            ))
        } else if m.repeat.until_cv.is_some() || m.repeat.until_interval.is_some() {
            Some("duet rounds are all planned: drop until_cv and until_interval".into())
        } else if m.load.until.is_some() {
            Some("duet rounds are all planned: drop load.until".into())
        } else if m.client_cpuset.is_some() {
            Some("duet runs each side's client on its server's CPUs: drop client_cpuset".into())
        } else {
            None
        };
        if let Some(why) = why {
            return Err(self.err("repeat.duet", why));
        }
        let mut sides = Vec::new();
        for (name, s) in &m.servers {
            let path = format!("servers.{name}");
            let cpus = match (&s.external, &s.cpuset) {
                (Some(_), _) => Err("is external: duet places both servers on CPUs of its own"),
                (None, None) => Err("has no cpuset: duet runs each side on CPUs of its own"),
                (None, Some(list)) => {
                    Ok(crate::input::untrusted::cpus_of(list).unwrap_or_default())
                }
            };
            let cpus = cpus.map_err(|why| {
                let name = crate::escape::terminal(name);
                self.err(&path, format!("server `{name}` {why} (repeat.duet)"))
            })?;
            sides.push(cpus);
        }
        if let Some(cpu) = sides[0].iter().find(|c| sides[1].contains(c)) {
            let path = format!("servers.{}.cpuset", m.servers.keys().nth(1).expect("two"));
            return Err(self.err(
                &path,
                format!("duet sides share CPU {cpu}: give each server CPUs of its own"),
            ));
        }
        Ok(())
    }

    /// `length` is given exactly when some workload reads it: a matrix of sql-bench suites
    /// alone (which run whole) refuses one it would ignore. A stored copy written before
    /// that rule keeps its `length` (`stored`).
    pub(super) fn check_length(&self, stored: bool) -> Result<(), MatrixError> {
        let m = self.m;
        let reader = m.workloads.iter().find(|(_, w)| w.runs_for_length());
        match (reader, m.length) {
            (Some((name, _)), None) => Err(self.err_at(
                self.spans.key(&format!("workloads.{name}")),
                format!(
                    "the matrix needs a `length` (a count like `10000` or a duration like \
                     `30s`): workload `{}` runs for one",
                    crate::escape::terminal(name)
                ),
            )),
            (None, Some(_)) if !stored => Err(self.err(
                "length",
                "every workload here runs sql-bench's suite, which runs whole once per \
                 iteration and reads no `length`: remove it"
                    .into(),
            )),
            _ => Ok(()),
        }
    }
}

impl Validator<'_> {
    /// Why a server that serves each connection in a forked process cannot be counted
    /// with one of the matrix's workloads: one that runs an external program connects inside
    /// the phase, and a process forked then starts with counting off.
    fn tool_in_phase(&self, spec: &crate::servers::spec::ServerSpec) -> Option<String> {
        let (name, w) = (self.m.workloads.iter())
            .find(|(_, w)| w.tool().is_some() && w.families().contains(&spec.kind()))?;
        Some(format!(
            "serves each connection in a process of its own, and counted mode counts those \
             open when the measured phase opens: workload {} runs {}, which connects inside \
             the phase (rmatrix's own clients connect before the warm-up)",
            crate::escape::terminal(name),
            w.tool()?.default
        ))
    }

    /// `counted:` needs a phase sized in operations (under valgrind a duration holds tens
    /// of times fewer) and servers rmatrix starts, of a family it can count.
    pub(crate) fn check_counted(&self) -> Result<(), MatrixError> {
        let m = self.m;
        if m.counted.is_none() {
            return Ok(());
        }
        if !matches!(m.length, Some(Length::Queries(_))) {
            return Err(self.err(
                "counted",
                "counted mode sizes the measured phase in operations: give `length` as a \
                 count (e.g. length: 20000)"
                    .into(),
            ));
        }
        for (name, spec) in &m.servers {
            let why = match (&spec.external, spec.kind().family().counted()) {
                (Some(_), _) => "is external: rmatrix does not start it".to_string(),
                (None, None) => format!(
                    "is of the {} family, which rmatrix cannot count yet (families it can: {})",
                    spec.kind().name(),
                    crate::servers::spec::ServerKind::countable()
                ),
                (None, Some(c)) if c.forks => match self.tool_in_phase(spec) {
                    Some(why) => why,
                    None => continue,
                },
                (None, Some(_)) => continue,
            };
            return Err(self.err(
                "counted",
                format!("server {} {why}", crate::escape::terminal(name)),
            ));
        }
        Ok(())
    }
}
