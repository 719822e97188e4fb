//! A hook that fails in one chosen way, for the fault matrix
//! (`host/tests/matrix.rs`) and anyone who wants to see what the host does
//! when a hook misbehaves. Not for users.
//!
//! ```text
//! hookhost-fault-hook MODE [--n N] [--ms MS] [--bytes B] [--name NAME]
//!                          [--events-file F] [--pid-log F]
//! ```
//!
//! Modes (a working answer is a recognisable verdict: a patch that sets
//! `marks.NAME = true`, an approval, or `additional_context: NAME`):
//!
//! | mode              | what it does                                                 |
//! |-------------------|--------------------------------------------------------------|
//! | healthy           | answers every call at once                                   |
//! | crash-nth         | exits with status 3 when stage call number `--n` arrives     |
//! | hang              | reads every request and answers none                         |
//! | hang-hello        | stops reading at `hook.hello` and sleeps forever             |
//! | no-hello          | keeps reading but never answers `hook.hello`                 |
//! | slow-hello        | answers `hook.hello` after `--ms` ms                         |
//! | noise             | prints a non-JSON line before each answer                    |
//! | huge-line         | prints a `--bytes` line (default 64 MiB) before each answer  |
//! | unknown-ids       | answers each call under an id the host never sent           |
//! | duplicate         | answers each call twice, the second time with a refusal     |
//! | wrong-type        | answers each call with a JSON string instead of an object   |
//! | illegal-action    | answers with an action the stage does not allow             |
//! | close-stdout      | closes its stdout after hello and stays alive               |
//! | close-stdin       | closes its stdin after hello and stays alive                |
//! | stderr-flood      | writes `--bytes` (default 100 MiB) to stderr, then answers   |
//! | grandchild-stdout | spawns a grandchild holding its stdout, exits at first call |
//! | exit-at-once      | exits with status 0 before reading anything                 |
//! | exit-in-burst     | answers after `--ms` ms (default 20), each call on its own  |
//! |                   | thread, and exits 0 when stage call number `--n` arrives     |

#[path = "support/mod.rs"]
mod support;

use support::{Out, send};

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Healthy,
    CrashNth,
    Hang,
    HangHello,
    NoHello,
    SlowHello,
    Noise,
    HugeLine,
    UnknownIds,
    Duplicate,
    WrongType,
    IllegalAction,
    CloseStdout,
    CloseStdin,
    StderrFlood,
    GrandchildStdout,
    ExitAtOnce,
    ExitInBurst,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "healthy" => Mode::Healthy,
            "crash-nth" => Mode::CrashNth,
            "hang" => Mode::Hang,
            "hang-hello" => Mode::HangHello,
            "no-hello" => Mode::NoHello,
            "slow-hello" => Mode::SlowHello,
            "noise" => Mode::Noise,
            "huge-line" => Mode::HugeLine,
            "unknown-ids" => Mode::UnknownIds,
            "duplicate" => Mode::Duplicate,
            "wrong-type" => Mode::WrongType,
            "illegal-action" => Mode::IllegalAction,
            "close-stdout" => Mode::CloseStdout,
            "close-stdin" => Mode::CloseStdin,
            "stderr-flood" => Mode::StderrFlood,
            "grandchild-stdout" => Mode::GrandchildStdout,
            "exit-at-once" => Mode::ExitAtOnce,
            "exit-in-burst" => Mode::ExitInBurst,
            _ => return None,
        })
    }
}

#[derive(Clone)]
struct Opts {
    mode: Mode,
    name: String,
    n: u64,
    ms: Option<u64>,
    bytes: Option<usize>,
    events_file: Option<String>,
    pid_log: Option<String>,
}

fn parse() -> Result<Opts, String> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().ok_or("a mode is required")?;
    let mut o = Opts {
        mode: Mode::parse(&mode).ok_or(format!("unknown mode {mode}"))?,
        name: "faulty".into(),
        n: 1,
        ms: None,
        bytes: None,
        events_file: None,
        pid_log: None,
    };
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--name" => o.name = val()?,
            "--n" => o.n = val()?.parse().map_err(|_| "bad --n")?,
            "--ms" => o.ms = Some(val()?.parse().map_err(|_| "bad --ms")?),
            "--bytes" => o.bytes = Some(val()?.parse().map_err(|_| "bad --bytes")?),
            "--events-file" => o.events_file = Some(val()?),
            "--pid-log" => {
                let file = val()?;
                support::append_line(&file, &std::process::id().to_string());
                o.pid_log = Some(file);
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(o)
}

fn respond(out: &Out, id: &Value, result: Value) {
    send(
        out,
        &json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    );
}

/// The recognisable working verdict of hook `name` at `method`.
fn working(name: &str, method: &str) -> Value {
    let marks = json!({"marks": {name: true}});
    match method {
        "hook.before_tool" => json!({"action": "modify", "call": marks}),
        "hook.before_llm" => json!({"action": "modify", "request": marks}),
        "hook.after_llm" => json!({"action": "modify", "response": marks}),
        "hook.after_tool" => json!({"action": "modify", "result": marks}),
        "hook.approve_tool" => json!({"approved": true, "reason": name}),
        _ => json!({"action": "continue", "additional_context": name}),
    }
}

/// An answer the stage does not allow.
fn illegal(method: &str) -> Value {
    match method {
        // Every tool action is legal here; `block` belongs to lifecycle.
        "hook.before_tool" => json!({"action": "block", "reason": "illegal here"}),
        // approve_tool takes `{approved}`, never an action.
        "hook.approve_tool" => json!({"action": "respond", "result": {"for_llm": "x"}}),
        _ => json!({"action": "deny_tool", "reason": "illegal here"}),
    }
}

/// A refusal, sent as the second of two answers in `duplicate` mode.
fn refusal(method: &str) -> Value {
    match method {
        "hook.before_tool" => json!({"action": "deny_tool", "reason": "duplicate answer"}),
        "hook.approve_tool" => json!({"approved": false, "reason": "duplicate answer"}),
        "hook.lifecycle" => json!({"action": "block", "reason": "duplicate answer"}),
        _ => json!({"action": "abort_turn", "reason": "duplicate answer"}),
    }
}

fn flood_stderr(bytes: usize) {
    let line = format!("{}\n", "e".repeat(1023));
    let mut err = std::io::stderr().lock();
    let mut written = 0;
    while written < bytes {
        if err.write_all(line.as_bytes()).is_err() {
            return;
        }
        written += line.len();
    }
    let _ = err.flush();
}

fn close_stdout() {
    // SAFETY: fd 1 belongs to this process; nothing writes to it after
    // this (the mode never answers again).
    unsafe {
        libc::close(1);
    }
}

fn hello_result(name: &str) -> Value {
    json!({
        "name": name,
        "version": 1,
        "intercept": ["before_llm", "after_llm", "before_tool", "after_tool", "approve_tool", "lifecycle"],
        "observe": ["*"],
    })
}

fn answer_call(o: &Opts, out: &Out, id: &Value, method: &str) {
    match o.mode {
        Mode::Hang => {}
        Mode::Noise => {
            send(out, "this is not JSON, just a stray print");
            respond(out, id, working(&o.name, method));
        }
        Mode::HugeLine => {
            send(out, &"x".repeat(o.bytes.unwrap_or(64 << 20)));
            respond(out, id, working(&o.name, method));
        }
        Mode::UnknownIds => {
            let wrong = match id {
                Value::Number(n) => json!(n.as_i64().unwrap_or(0) + 1_000_000),
                _ => json!("never-sent"),
            };
            respond(out, &wrong, working(&o.name, method));
        }
        Mode::Duplicate => {
            respond(out, id, working(&o.name, method));
            respond(out, id, refusal(method));
        }
        Mode::WrongType => respond(out, id, json!("continue")),
        Mode::IllegalAction => respond(out, id, illegal(method)),
        Mode::ExitInBurst => {
            let (o, out, id, method) = (o.clone(), out.clone(), id.clone(), method.to_string());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(o.ms.unwrap_or(20)));
                respond(&out, &id, working(&o.name, &method));
            });
        }
        _ => respond(out, id, working(&o.name, method)),
    }
}

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fault hook: {e}");
            std::process::exit(2);
        }
    };
    if o.mode == Mode::ExitAtOnce {
        std::process::exit(0);
    }
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let mut calls: u64 = 0;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        handle(&o, &out, &mut calls, &msg);
    }
}

/// One incoming message: a notification, hello, or a stage call.
fn handle(o: &Opts, out: &Out, calls: &mut u64, msg: &Value) {
    let method = msg["method"].as_str().unwrap_or("");
    let Some(id) = msg.get("id") else {
        if method == "hook.runtime_event"
            && let Some(f) = &o.events_file
        {
            support::append_line(f, msg["params"]["kind"].as_str().unwrap_or(""));
        }
        return;
    };
    if method == "hook.hello" {
        on_hello(o, out, id);
        return;
    }
    if !method.starts_with("hook.") || method == "hook.runtime_event" {
        return;
    }
    *calls += 1;
    before_answer(o, *calls);
    answer_call(o, out, id, method);
}

/// Hello as the mode says: withheld, late or on time, then whatever the
/// mode does once the handshake is done.
fn on_hello(o: &Opts, out: &Out, id: &Value) {
    match o.mode {
        Mode::HangHello => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        Mode::NoHello => return,
        Mode::SlowHello => std::thread::sleep(Duration::from_millis(o.ms.unwrap_or(0))),
        _ => {}
    }
    respond(out, id, hello_result(&o.name));
    match o.mode {
        Mode::CloseStdout => close_stdout(),
        Mode::CloseStdin => close_stdin_and_stay(),
        Mode::GrandchildStdout => spawn_grandchild(o),
        _ => {}
    }
}

fn close_stdin_and_stay() -> ! {
    // SAFETY: fd 0 belongs to this process; it reads no more.
    unsafe {
        libc::close(0);
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn spawn_grandchild(o: &Opts) {
    // `sleep` inherits stdout (and stderr), so the pipe stays open after
    // this process is gone.
    if let Ok(child) = std::process::Command::new("sleep").arg("300").spawn()
        && let Some(f) = &o.pid_log
    {
        support::append_line(f, &child.id().to_string());
    }
}

/// What the mode does when stage call number `calls` arrives, before
/// answering it: exit, or flood stderr.
fn before_answer(o: &Opts, calls: u64) {
    match o.mode {
        Mode::CrashNth if calls >= o.n => std::process::exit(3),
        Mode::ExitInBurst if calls >= o.n => std::process::exit(0),
        Mode::GrandchildStdout => std::process::exit(0),
        Mode::StderrFlood if calls == 1 => flood_stderr(o.bytes.unwrap_or(100 << 20)),
        _ => {}
    }
}
