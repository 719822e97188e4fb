//! Isolation: every check runs through a [`Runner`], which restarts the
//! hook when a check killed it or left it mute, so each check reports its
//! own result instead of one crash failing everything after it. The
//! report marks the checks the hook had to be restarted after.

use std::time::Instant;

use hookhost_protocol::stage::method;
use hookhost_protocol::{HelloResult, PROTOCOL_VERSION};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Options;
use super::report::{Level, Report, Verdict};
use super::session::Session;

/// The hook under test, its report, and what retired processes left on
/// stdout (which the final checks still judge).
pub(super) struct Runner<'a> {
    opts: &'a Options,
    pub(super) session: Session,
    pub(super) report: Report,
    /// Non-JSON-RPC lines of processes already replaced.
    garbage: Vec<String>,
    /// Unsolicited messages of processes already replaced.
    unsolicited: Vec<String>,
    /// Set when a restart failed: the checks left are not run.
    broken: Option<String>,
    /// Checks in a row that left the hook running but mute.
    mute_streak: u32,
    /// Checks not run because the hook kept going mute.
    skipped: Vec<String>,
}

/// After this many checks in a row that left the hook mute (each waited
/// out the timeout on a fresh process), the checks left before the end
/// are not run: a hook that never answers would otherwise cost a timeout
/// per check.
const MUTE_STREAK: u32 = 3;

/// How the hook came out of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// Still running and answering.
    Alive,
    /// It exited (or closed its stdout).
    Died,
    /// It still runs, but an answer or a read of its stdin timed out.
    Mute,
    /// The check was not run (the hook kept going mute).
    Skipped,
}

/// What one check's traffic came to, before it is judged and recorded.
pub(super) struct Ran<T> {
    /// The check's own result.
    pub(super) result: Result<T, String>,
    /// What arrived during it unasked: unsolicited messages and
    /// non-JSON-RPC lines, in that order.
    strays: Vec<String>,
    /// How the hook came out of it.
    end: End,
}

impl<T> Ran<T> {
    /// A check that was not run, and why.
    fn not_run(why: String, end: End) -> Self {
        Ran {
            result: Err(why),
            strays: Vec::new(),
            end,
        }
    }

    /// The same run with its result judged.
    pub(super) fn judged(self, verdict: Verdict) -> Ran<()> {
        Ran {
            result: verdict,
            strays: self.strays,
            end: self.end,
        }
    }
}

impl<'a> Runner<'a> {
    pub(super) fn new(opts: &'a Options, session: Session) -> Self {
        Runner {
            opts,
            session,
            report: Report::default(),
            garbage: Vec::new(),
            unsolicited: Vec::new(),
            broken: None,
            mute_streak: 0,
            skipped: Vec::new(),
        }
    }

    /// Runs one check against the live hook and records it at `level`.
    pub(super) async fn check(
        &mut self,
        name: impl Into<String>,
        level: Level,
        advice: &str,
        f: impl AsyncFnOnce(&mut Session) -> Verdict,
    ) {
        let ran = self.run(level, f).await;
        self.record(name, level, advice, ran).await;
    }

    /// Runs `f` against the live hook and notes whether it died; the
    /// caller judges the result and hands it to [`Runner::record`]. At the
    /// robustness level, what the hook wrote unasked during `f` is taken
    /// out for the check to answer for (a string id echoed as a number is
    /// an answer to nothing); at the required level it stays for the final
    /// checks of stdout.
    pub(super) async fn run<T>(
        &mut self,
        level: Level,
        f: impl AsyncFnOnce(&mut Session) -> Result<T, String>,
    ) -> Ran<T> {
        if let Some(why) = &self.broken {
            return Ran::not_run(format!("not run: {why}"), End::Alive);
        }
        if self.mute_streak >= MUTE_STREAK {
            return Ran::not_run("not run".into(), End::Skipped);
        }
        let mark = self.session.mark();
        let mut result = f(&mut self.session).await;
        let end = self.session.end();
        if end == End::Died && result.is_ok() {
            result = Err("the hook exited during this check".into());
        }
        let strays = match level {
            Level::Robustness => self.session.take_since(mark),
            Level::Required => Vec::new(),
        };
        Ran {
            result,
            strays,
            end,
        }
    }

    /// Records a judged run and, when the hook died during it, restarts
    /// the hook for the next check.
    pub(super) async fn record(
        &mut self,
        name: impl Into<String>,
        level: Level,
        advice: &str,
        ran: Ran<()>,
    ) {
        let name = name.into();
        if ran.end == End::Skipped {
            self.skipped.push(name);
            return;
        }
        let mut verdict = ran.result;
        if let (Ok(()), [first, ..]) = (&verdict, ran.strays.as_slice()) {
            verdict = Err(format!("wrote what was not asked for: {first}"));
        }
        match level {
            Level::Required => self.report.required(name, verdict),
            Level::Robustness => self.report.robustness(name, verdict, advice),
        }
        self.mute_streak = match ran.end {
            End::Mute => self.mute_streak + 1,
            _ => 0,
        };
        if matches!(ran.end, End::Died | End::Mute) {
            self.report.mark_restart();
            self.restart().await;
        }
    }

    /// Replaces the dead hook with a fresh process and greets it; when
    /// that fails, the checks left are not run.
    pub(super) async fn restart(&mut self) {
        self.session.kill().await;
        self.garbage.extend_from_slice(self.session.garbage());
        self.unsolicited.extend(self.session.unsolicited());
        match Session::start(self.opts) {
            Ok(fresh) => self.session = fresh,
            Err(e) => {
                self.broken = Some(format!("the hook could not be restarted: {e}"));
                return;
            }
        }
        if let Err(why) = hello(&mut self.session).await {
            self.broken = Some(format!("the restarted hook failed its hello: {why}"));
        }
    }

    /// Every non-JSON-RPC stdout line of every process, in order.
    pub(super) fn all_garbage(&self) -> Vec<String> {
        let mut all = self.garbage.clone();
        all.extend_from_slice(self.session.garbage());
        all
    }

    /// Every unsolicited message of every process, in order.
    pub(super) fn all_unsolicited(&self) -> Vec<String> {
        let mut all = self.unsolicited.clone();
        all.extend(self.session.unsolicited());
        all
    }

    /// Notes the checks that were not run because the hook kept going
    /// mute; skipping a required one means the hook does not conform.
    pub(super) fn note_skipped(&mut self) {
        if self.skipped.is_empty() {
            return;
        }
        let text = format!(
            "{} checks not run: the hook went mute in {MUTE_STREAK} checks in a row, each on a fresh process",
            self.skipped.len()
        );
        self.report.note(text);
        self.report.skipped = std::mem::take(&mut self.skipped);
    }

    /// Why the checks left cannot run, when a restart failed.
    pub(super) fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }
}

/// Sends `hook.hello` and returns the parsed, negotiated result with the
/// milliseconds it took.
pub(super) async fn hello(s: &mut Session) -> Result<(HelloResult, u128), String> {
    let params = json!({"name": "conformance", "version": PROTOCOL_VERSION, "modes": ["observe", "llm", "tool", "approve"], "host": {"name": "hookhost-conformance", "version": env!("CARGO_PKG_VERSION")}});
    let started = Instant::now();
    let answer = s.call(json!(1), method::HELLO, &params).await?;
    let hello = parse_hello(answer)?;
    Ok((hello, started.elapsed().as_millis()))
}

fn parse_hello(answer: Value) -> Result<HelloResult, String> {
    let result = answer.get("result").ok_or_else(|| {
        format!(
            "answered an error: {}",
            answer.get("error").cloned().unwrap_or_default()
        )
    })?;
    let hello =
        HelloResult::deserialize(result).map_err(|e| format!("invalid hello result: {e}"))?;
    hello
        .negotiate(PROTOCOL_VERSION)
        .map_err(|e| e.to_string())?;
    Ok(hello)
}
