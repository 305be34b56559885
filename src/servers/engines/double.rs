//! A double of `Containers` for unit tests: it records every call and plays scripted
//! answers, so that a start sequence or a teardown is tested without an engine.

use std::collections::VecDeque;
use std::sync::Mutex;

use anyhow::{anyhow, Result};

use super::containers::{ContainerSpec, Containers};

/// One call the double answered, with the container (or volume) it named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    /// `start`, with the container's name.
    Start(String),
    ExitCode(String),
    Pid(String),
    Logs(String),
    OomKilled(String),
    Remove(String),
    RemoveVolume(String),
}

/// The answers of one operation: these first, in order, then `then` for every later call.
/// An error is its message.
struct Answers<T> {
    first: VecDeque<Result<T, String>>,
    then: Result<T, String>,
}

impl<T: Clone> Answers<T> {
    fn always(answer: Result<T, String>) -> Answers<T> {
        Answers {
            first: VecDeque::new(),
            then: answer,
        }
    }

    fn next(&mut self) -> Result<T> {
        let answer = self.first.pop_front().unwrap_or_else(|| self.then.clone());
        answer.map_err(|e| anyhow!(e))
    }
}

struct State {
    calls: Vec<Call>,
    specs: Vec<ContainerSpec>,
    start: Answers<String>,
    exit_code: Answers<Option<i64>>,
    pid: Answers<Option<u32>>,
    log: String,
    oom_killed: Answers<bool>,
    remove: Answers<()>,
    remove_volume: Answers<()>,
}

/// The engine double. By default a container starts as `CONTAINER`, runs until removed, has
/// no pid, wrote nothing, and every removal succeeds; the builder methods script otherwise.
pub(crate) struct Scripted {
    state: Mutex<State>,
}

/// The id the double's `start` answers unless scripted otherwise.
pub(crate) const CONTAINER: &str = "c0ffee";

impl Default for Scripted {
    fn default() -> Scripted {
        Scripted {
            state: Mutex::new(State {
                calls: Vec::new(),
                specs: Vec::new(),
                start: Answers::always(Ok(CONTAINER.into())),
                exit_code: Answers::always(Ok(None)),
                pid: Answers::always(Ok(None)),
                log: String::new(),
                oom_killed: Answers::always(Ok(false)),
                remove: Answers::always(Ok(())),
                remove_volume: Answers::always(Ok(())),
            }),
        }
    }
}

impl Scripted {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("the double's lock")
    }

    fn with(self, script: impl FnOnce(&mut State)) -> Scripted {
        script(&mut self.state());
        self
    }

    /// `start` fails with `why` (nothing is left behind, as the trait promises).
    pub(crate) fn start_fails(self, why: &str) -> Scripted {
        self.with(|s| s.start = Answers::always(Err(why.into())))
    }

    /// The container runs for `polls` asks of its exit code, then has exited with `code`.
    pub(crate) fn exits_after(self, polls: usize, code: i64) -> Scripted {
        self.with(|s| {
            s.exit_code.first = (0..polls).map(|_| Ok(None)).collect();
            s.exit_code.then = Ok(Some(code));
        })
    }

    /// Asking for the exit code fails with `why` (an engine that stopped answering).
    pub(crate) fn exit_code_fails(self, why: &str) -> Scripted {
        self.with(|s| s.exit_code = Answers::always(Err(why.into())))
    }

    pub(crate) fn pid(self, pid: u32) -> Scripted {
        self.with(|s| s.pid = Answers::always(Ok(Some(pid))))
    }

    pub(crate) fn pid_fails(self, why: &str) -> Scripted {
        self.with(|s| s.pid = Answers::always(Err(why.into())))
    }

    /// What the container wrote.
    pub(crate) fn log(self, text: &str) -> Scripted {
        self.with(|s| s.log = text.into())
    }

    pub(crate) fn remove_fails(self, why: &str) -> Scripted {
        self.with(|s| s.remove = Answers::always(Err(why.into())))
    }

    /// Every call so far, in order.
    pub(crate) fn calls(&self) -> Vec<Call> {
        self.state().calls.clone()
    }

    /// The spec of every `start`, in order.
    pub(crate) fn specs(&self) -> Vec<ContainerSpec> {
        self.state().specs.clone()
    }

    /// Record `call` and take the next answer of the operation `answers` picks.
    fn answer<T: Clone>(
        &self,
        call: Call,
        answers: fn(&mut State) -> &mut Answers<T>,
    ) -> Result<T> {
        let mut s = self.state();
        s.calls.push(call);
        answers(&mut s).next()
    }
}

impl Containers for Scripted {
    async fn start(&self, spec: &ContainerSpec) -> Result<String> {
        self.state().specs.push(spec.clone());
        self.answer(Call::Start(spec.name.clone()), |s| &mut s.start)
    }

    async fn exit_code(&self, id: &str) -> Result<Option<i64>> {
        self.answer(Call::ExitCode(id.into()), |s| &mut s.exit_code)
    }

    async fn pid(&self, id: &str) -> Result<Option<u32>> {
        self.answer(Call::Pid(id.into()), |s| &mut s.pid)
    }

    async fn logs(&self, id: &str) -> String {
        let mut s = self.state();
        s.calls.push(Call::Logs(id.into()));
        s.log.clone()
    }

    async fn oom_killed(&self, id: &str) -> Result<bool> {
        self.answer(Call::OomKilled(id.into()), |s| &mut s.oom_killed)
    }

    async fn remove(&self, id: &str) -> Result<()> {
        self.answer(Call::Remove(id.into()), |s| &mut s.remove)
    }

    async fn remove_volume(&self, name: &str) -> Result<()> {
        self.answer(Call::RemoveVolume(name.into()), |s| &mut s.remove_volume)
    }
}
