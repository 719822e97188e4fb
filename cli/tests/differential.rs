//! The differential harness of issue 33: every hook gives the same outcome
//! under hookhost as under its own agent, shown against the real agents.
//!
//! For Claude Code, Codex and Gemini CLI (the CLIs pinned in
//! `tests/agents/package.json`, offline against the fake model servers of
//! `tests/common/` and `tests/fake_gemini/`), each case of
//! `differential/cases/AGENT.json` runs twice, each in a fresh HOME and
//! project:
//!
//! - **native**: the case's hooks in the agent's project settings file,
//!   and the agent runs them;
//! - **hookhost**: the same files, then as a user sets hookhost up:
//!   `hookhost install AGENT --scope project --adopt` (the hooks move into
//!   hookhost's chain, the agent's file gets `hookhost relay` entries),
//!   `hookhost trust approve --all`, and the daemon (`hookhost serve
//!   --socket`) that every relay reaches. Every case goes through the
//!   daemon. A Claude Code plugin is loaded natively with `--plugin-dir`;
//!   under hookhost its `hooks/hooks.json` is imported by the user's
//!   hooks.toml instead.
//!
//! What the agent did is compared, normalised (`differential/normalise.rs`:
//! scratch paths, ids, times, durations, pids; where the agent echoes a
//! hook's command or name to the model or the user, that text, since under
//! hookhost it is the relay's; Gemini's listing of the project's files,
//! where `install --adopt` leaves its adopted file and a backup; Codex's
//! per-hook progress lines, whose count is the count of hooks, though a
//! hook's `Blocked`/`Stopped` line is kept; repeated stderr lines once):
//! its exit code; the files the tools and hooks left in the project (the
//! tool's own side effect, and what logging hooks saw); what reached the
//! model (how many turns, and the whole conversation of the last one: tool
//! results, reasons, added context, continuation prompts); and what the
//! user was told (the agent's printed result and its stderr). Every
//! difference is a failure, unless the case is in [`ADDITIONS`] with the
//! spec/dialects.md sentence that permits it (none yet), or is marked
//! `diverges` with why hookhost still differs there (counted apart in the
//! table; a mark that no longer differs fails).
//!
//! The README's fidelity table (between `<!-- fidelity:start -->` and
//! `<!-- fidelity:end -->`) is this harness's figures: regenerate with
//! `HOOKHOST_FIDELITY_WRITE=1 cargo test -p hookhost-cli --test
//! differential`; a normal run fails when it is stale. `HOOKHOST_DIFF_ONLY=
//! TEXT` runs only the cases whose `agent/name` contains TEXT (the table
//! is then not checked), `HOOKHOST_DIFF_JOBS=N` sets how many sessions run
//! at once (default 6), and `HOOKHOST_DIFF_CONTROL=1` runs every case
//! natively twice, which must agree (a check of the normalisation);
//! `HOOKHOST_DIFF_KEEP=1` keeps each session's scratch folder.

#![allow(clippy::unwrap_used)]

#[path = "differential/case.rs"]
mod case;
#[path = "common/claude.rs"]
mod claude;
#[path = "differential/claude_code.rs"]
mod claude_code;
#[path = "differential/codex.rs"]
mod codex;
#[path = "common/codex_model.rs"]
mod codex_model;
mod common;
mod fake_gemini;
#[path = "differential/gemini_cli.rs"]
mod gemini_cli;
#[path = "differential/normalise.rs"]
mod normalise;
#[path = "differential/place.rs"]
mod place;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};

use case::Case;
use common::Ran;
use place::Place;

/// The user's prompt in every session.
pub const PROMPT: &str = "Do what the task needs.";

/// The agents, with the name of their binary in `tests/agents`.
const AGENTS: [(&str, &str); 3] = [
    ("claude-code", "claude"),
    ("codex", "codex"),
    ("gemini-cli", "gemini"),
];

/// Differences spec/dialects.md lists as additions hookhost makes:
/// (agent, case, the sentence that permits it). Empty: every difference
/// is a failure.
const ADDITIONS: &[(&str, &str, &str)] = &[];

/// Whose hooks run the case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// The agent's own.
    Native,
    /// hookhost's chain, through the relay and the daemon.
    Hookhost,
}

/// The pinned agent binary `name` (`claude`, `codex`, `gemini`).
pub fn agent_bin(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents/node_modules/.bin")
        .join(name)
}

/// What a run did, in one JSON value: exit code, files left in the
/// project (those the case laid out only when changed; not the agents'
/// own folders), what the model saw, the printed result, stderr lines.
pub fn observe(
    place: &Place,
    agent: &str,
    case: &Case,
    ran: &Ran,
    model: Value,
    result: Value,
    ignore: &dyn Fn(&str) -> bool,
) -> Value {
    let mut files = BTreeMap::new();
    collect(&place.project, &place.project, &mut files);
    let laid = case.laid_out(agent);
    files.retain(|rel, seen| {
        laid.get(rel).map(|t| file_value(rel, t.clone())).as_ref() != Some(seen)
    });
    let stderr: Vec<&str> = ran
        .stderr
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !ignore(l))
        .collect();
    let seen = json!({"exit": ran.code, "files": files, "model": model,
        "result": result, "stderr": stderr});
    let mut commands = Vec::new();
    let settings = [case::settings_file(agent).to_string()];
    let plugin = case.plugin.iter().map(|p| format!("{p}/hooks/hooks.json"));
    for rel in settings.into_iter().chain(plugin) {
        let text = std::fs::read_to_string(place.project.join(rel)).unwrap_or_default();
        let v = serde_json::from_str(&text).unwrap_or(Value::Null);
        normalise::commands(&v, &mut commands);
    }
    let dir = place.dir.display().to_string();
    let mut seen = normalise::value(&normalise::Norm { dir, commands }, &seen);
    // One relay stands for several hooks: a line the agent prints per
    // hook comes once.
    if let Some(lines) = seen["stderr"].as_array_mut() {
        lines.dedup();
    }
    seen
}

/// Every file under `dir` (not in a folder whose name starts with `.`),
/// by path relative to `root`.
fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<String, Value>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if !name.starts_with('.') {
                collect(root, &path, out);
            }
        } else {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let text = std::fs::read(&path).unwrap_or_default();
            let text = String::from_utf8_lossy(&text).into_owned();
            let value = file_value(&rel, text);
            out.insert(rel, value);
        }
    }
}

/// A file's text as compared: what a logging hook kept as JSON is parsed
/// (key order is not an outcome), anything else is text.
fn file_value(rel: &str, text: String) -> Value {
    let parsed = rel
        .ends_with(".json")
        .then(|| serde_json::from_str(&text).ok());
    parsed.flatten().unwrap_or(Value::String(text))
}

/// One session to run.
#[derive(Clone)]
struct Job {
    agent: &'static str,
    case: Case,
    mode: Mode,
    /// 0, or 1 for the second native run of a control.
    copy: u8,
}

type Key = (&'static str, String, Mode, u8);

/// Runs one session; a panic of the harness itself (a setup step that
/// failed) is kept as `harness_error`, which always fails the case.
fn run_job(job: &Job) -> Value {
    let place = Place::new();
    let started = Instant::now();
    let run = std::panic::AssertUnwindSafe(|| match job.agent {
        "claude-code" => claude_code::run(&job.case, &place, job.mode),
        "codex" => codex::run(&job.case, &place, job.mode),
        _ => gemini_cli::run(&job.case, &place, job.mode),
    });
    let seen = std::panic::catch_unwind(run).unwrap_or_else(|e| {
        let why = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        json!({"harness_error": why})
    });
    eprintln!(
        "differential: {}/{} {:?}: {:.1} s ({})",
        job.agent,
        job.case.name,
        job.mode,
        started.elapsed().as_secs_f64(),
        place.dir.display()
    );
    // About 2 MB a session (transcripts, caches): kept only when asked.
    if std::env::var_os("HOOKHOST_DIFF_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&place.dir);
    }
    seen
}

/// Runs every job on `threads` threads; each job's observation.
fn run_all(jobs: Vec<Job>, threads: usize) -> BTreeMap<Key, Value> {
    let queue = Mutex::new(VecDeque::from(jobs));
    let done = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    // The queue's lock is let go before the session runs.
                    let next = queue.lock().unwrap().pop_front();
                    let Some(job) = next else { break };
                    let seen = run_job(&job);
                    let key = (job.agent, job.case.name.clone(), job.mode, job.copy);
                    done.lock().unwrap().insert(key, seen);
                }
            });
        }
    });
    done.into_inner().unwrap()
}

/// The cases to run, by agent; `None` when an agent is not installed.
fn selected() -> Option<Vec<(&'static str, Vec<Case>)>> {
    let only = std::env::var("HOOKHOST_DIFF_ONLY").unwrap_or_default();
    let mut out = Vec::new();
    for (agent, bin) in AGENTS {
        if !agent_bin(bin).exists() {
            eprintln!(
                "\n!!! SKIPPED: {} is missing, so the differential harness did not run.\n\
                 !!! Run `npm ci --prefix cli/tests/agents` (scripts/test does).\n",
                agent_bin(bin).display()
            );
            return None;
        }
        let cases = case::load(agent)
            .into_iter()
            .filter(|c| format!("{agent}/{}", c.name).contains(&only))
            .collect();
        out.push((agent, cases));
    }
    Some(out)
}

fn jobs(selected: &[(&'static str, Vec<Case>)], control: bool) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (agent, cases) in selected {
        for case in cases {
            let second = match control {
                true => (Mode::Native, 1),
                false => (Mode::Hookhost, 0),
            };
            for (mode, copy) in [(Mode::Native, 0), second] {
                let case = case.clone();
                jobs.push(Job {
                    agent,
                    case,
                    mode,
                    copy,
                });
            }
        }
    }
    jobs
}

/// One agent's figures for the fidelity table.
#[derive(Default)]
struct Figures {
    run: usize,
    same: usize,
    additions: usize,
    /// Marked `diverges`: still another outcome, named and counted.
    open: usize,
}

/// The differences between a case's two runs: every path where their
/// observations differ, and a run the harness could not set up.
fn differences(a: &Value, b: &Value) -> Vec<String> {
    let mut diffs = normalise::differences(a, b, 8);
    for (mode, v) in [("native", a), ("other", b)] {
        if let Some(e) = v.get("harness_error") {
            diffs.push(format!("the {mode} run could not be set up: {e}"));
        }
    }
    diffs
}

/// What comparing every case found: the divergent cases (each with its
/// differences), each agent's figures, and both observations of each.
#[derive(Default)]
struct Verdict {
    divergent: Vec<String>,
    table: BTreeMap<&'static str, Figures>,
    report: serde_json::Map<String, Value>,
}

fn compare(
    selected: &[(&'static str, Vec<Case>)],
    seen: &BTreeMap<Key, Value>,
    second: (Mode, u8),
) -> Verdict {
    let mut v = Verdict::default();
    for (agent, cases) in selected {
        let figures = v.table.entry(*agent).or_default();
        for case in cases {
            let a = &seen[&(*agent, case.name.clone(), Mode::Native, 0)];
            let b = &seen[&(*agent, case.name.clone(), second.0, second.1)];
            let key = format!("{agent}/{}", case.name);
            v.report
                .insert(key.clone(), json!({"native": a, "other": b}));
            figures.run += 1;
            let diffs = differences(a, b);
            let listed = ADDITIONS
                .iter()
                .any(|(g, c, _)| g == agent && *c == case.name);
            match (diffs.is_empty(), listed, &case.diverges) {
                (true, _, Some(_)) => v
                    .divergent
                    .push(format!("{key}: marked `diverges` but now the same outcome")),
                (true, _, None) => figures.same += 1,
                (false, true, _) => figures.additions += 1,
                (false, false, Some(why)) => {
                    figures.open += 1;
                    eprintln!("still differs {key} ({why}):\n    {}", diffs.join("\n    "));
                }
                (false, false, None) => v
                    .divergent
                    .push(format!("{key}:\n    {}", diffs.join("\n    "))),
            }
        }
    }
    v
}

#[test]
fn every_hook_gives_the_same_outcome_under_hookhost_as_under_its_agent() {
    let Some(selected) = selected() else {
        return;
    };
    let control = std::env::var("HOOKHOST_DIFF_CONTROL").as_deref() == Ok("1");
    let threads = std::env::var("HOOKHOST_DIFF_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(6);
    let started = Instant::now();
    let seen = run_all(jobs(&selected, control), threads);
    let second = match control {
        true => (Mode::Native, 1),
        false => (Mode::Hookhost, 0),
    };
    let verdict = compare(&selected, &seen, second);
    let report_path = std::env::temp_dir().join("hookhost-differential-report.json");
    let report = serde_json::to_string_pretty(&verdict.report).unwrap();
    std::fs::write(&report_path, report).unwrap();
    eprintln!(
        "differential: {} sessions in {:.0} s; every observation in {}",
        seen.len(),
        started.elapsed().as_secs_f64(),
        report_path.display()
    );
    let only = std::env::var("HOOKHOST_DIFF_ONLY").unwrap_or_default();
    let stale = (only.is_empty() && !control)
        .then(|| fidelity_table(&verdict.table))
        .flatten();
    assert!(
        verdict.divergent.is_empty() && stale.is_none(),
        "{} cases diverge:\n\n{}\n\n{}",
        verdict.divergent.len(),
        verdict.divergent.join("\n\n"),
        stale.unwrap_or_default()
    );
}

/// Writes (with `HOOKHOST_FIDELITY_WRITE=1`) or checks the README's
/// table; what is wrong with it, if anything.
fn fidelity_table(table: &BTreeMap<&str, Figures>) -> Option<String> {
    let mut body = String::from(
        "| agent | cases run | same outcome | listed additions | still differs (spec/dialects.md §12) |\n| --- | --- | --- | --- | --- |\n",
    );
    for (agent, f) in table {
        body += &format!(
            "| {agent} | {} | {} | {} | {} |\n",
            f.run, f.same, f.additions, f.open
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- fidelity:start -->\n", "<!-- fidelity:end -->");
    let from = text
        .find(start)
        .expect("README.md has no fidelity:start marker")
        + start.len();
    let to = from
        + text[from..]
            .find(end)
            .expect("README.md has no fidelity:end marker");
    if text[from..to] == body {
        return None;
    }
    if std::env::var("HOOKHOST_FIDELITY_WRITE").as_deref() == Ok("1") {
        let new = format!("{}{body}{}", &text[..from], &text[to..]);
        std::fs::write(&path, new).unwrap();
        return None;
    }
    Some(format!(
        "README.md's fidelity table is stale; it should read:\n{body}\
         (regenerate: HOOKHOST_FIDELITY_WRITE=1 cargo test -p hookhost-cli --test differential)"
    ))
}
