//! A hook that misbehaves on request, for the host's integration tests.
//! Not for users. Flags choose the behaviour:
//!
//! --name N            name used in answers (default "test")
//! --intercept a,b     stages declared in hello (default: all six)
//! --observe p,q       event patterns declared in hello (default "*")
//! --no-declare        answer hello PicoClaw-style: {"ok":true,"name":N}
//! --answer JSON       result for every stage call (default continue/approved)
//! --echo-args         before_tool: modify with arguments.seen = arguments received
//! --delay-from-args   sleep arguments.delay_ms before answering (concurrently)
//! --sleep-ms N        sleep N ms before answering every stage call
//! --noise             print a non-JSON line before every answer
//! --unknown-id        send a response for an unknown id before every answer
//! --huge-line N       print an N-byte line before every answer
//! --no-hello          never answer hook.hello
//! --env-dump          before_tool: respond with the environment as JSON
//! --pid-file F        write own pid to F
//! --grandchild F      spawn `sleep 300` and write its pid to F
//! --events-file F     append each runtime event's kind to F
//! --crash-on-call     exit with status 3 when a stage call arrives
//! --stall-stdin       after hello, stop reading stdin (and stay alive)
//! --ignore-eof        on stdin EOF, stay alive instead of exiting
//! --banner            print a greeting line on stdout at start
//! --fail-first N      answer the first N stage calls with a JSON-RPC error
//! --fd-file F         write the numbers of its open file descriptors to F
//! --calls-file F      append every stage call's params to F, one JSON line each

#[path = "support/mod.rs"]
mod support;

use support::{Out, send};

use std::io::BufRead;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

#[derive(Default, Clone)]
struct Opts {
    name: String,
    intercept: Option<Vec<String>>,
    observe: Option<Vec<String>>,
    no_declare: bool,
    answer: Option<Value>,
    echo_args: bool,
    delay_from_args: bool,
    sleep_ms: u64,
    noise: bool,
    unknown_id: bool,
    huge_line: usize,
    no_hello: bool,
    env_dump: bool,
    events_file: Option<String>,
    calls_file: Option<String>,
    crash_on_call: bool,
    stall_stdin: bool,
    ignore_eof: bool,
    fail_first: u64,
}

/// A flag's value: the next argument, or why it is missing.
type Val<'a> = dyn FnMut() -> Result<String, String> + 'a;

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        name: "test".into(),
        ..Opts::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        if !set_option(&mut o, &a, &mut val)? {
            act_on_flag(&a, &mut val)?;
        }
    }
    Ok(o)
}

/// Sets the option `flag` names; `false` when it names none.
fn set_option(o: &mut Opts, flag: &str, val: &mut Val) -> Result<bool, String> {
    let list = |v: String| Some(v.split(',').map(String::from).collect());
    match flag {
        "--name" => o.name = val()?,
        "--intercept" => o.intercept = list(val()?),
        "--observe" => o.observe = list(val()?),
        "--no-declare" => o.no_declare = true,
        "--answer" => o.answer = Some(serde_json::from_str(&val()?).map_err(|e| e.to_string())?),
        "--echo-args" => o.echo_args = true,
        "--delay-from-args" => o.delay_from_args = true,
        "--sleep-ms" => o.sleep_ms = val()?.parse().map_err(|_| "bad --sleep-ms")?,
        "--noise" => o.noise = true,
        "--unknown-id" => o.unknown_id = true,
        "--huge-line" => o.huge_line = val()?.parse().map_err(|_| "bad --huge-line")?,
        "--no-hello" => o.no_hello = true,
        "--env-dump" => o.env_dump = true,
        "--events-file" => o.events_file = Some(val()?),
        "--calls-file" => o.calls_file = Some(val()?),
        "--crash-on-call" => o.crash_on_call = true,
        "--stall-stdin" => o.stall_stdin = true,
        "--ignore-eof" => o.ignore_eof = true,
        "--fail-first" => o.fail_first = val()?.parse().map_err(|_| "bad --fail-first")?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Does what a flag that acts at start (rather than setting an option)
/// asks, in argument order.
fn act_on_flag(flag: &str, val: &mut Val) -> Result<(), String> {
    match flag {
        "--pid-file" => {
            std::fs::write(val()?, std::process::id().to_string()).map_err(|e| e.to_string())
        }
        "--grandchild" => {
            let file = val()?;
            let child = std::process::Command::new("sleep")
                .arg("300")
                .spawn()
                .map_err(|e| e.to_string())?;
            std::fs::write(file, child.id().to_string()).map_err(|e| e.to_string())
        }
        "--banner" => {
            println!("my hook v1.0 starting");
            Ok(())
        }
        "--fd-file" => {
            let file = val()?;
            let text: Vec<String> = open_fds()?.iter().map(u32::to_string).collect();
            std::fs::write(file, text.join(" ")).map_err(|e| e.to_string())
        }
        other => Err(format!("unknown flag {other}")),
    }
}

/// This process's open file descriptors, sorted.
fn open_fds() -> Result<Vec<u32>, String> {
    // The directory handle read_dir holds is listed too; drop it by its
    // target.
    let mut fds: Vec<u32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read_link(e.path())
                .map(|t| !t.to_string_lossy().starts_with("/proc/"))
                .unwrap_or(false)
        })
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .collect();
    fds.sort_unstable();
    Ok(fds)
}

fn answer(o: &Opts, method: &str, params: &Value) -> Value {
    if o.env_dump && method == "hook.before_tool" {
        let env: serde_json::Map<String, Value> = std::env::vars()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        return json!({"action": "respond", "result": {"for_llm": Value::Object(env).to_string()}});
    }
    if o.echo_args && method == "hook.before_tool" {
        return json!({"action": "modify", "call": {"arguments": {"seen": params["arguments"].clone()}}});
    }
    if let Some(a) = &o.answer {
        return a.clone();
    }
    if method == "hook.approve_tool" {
        json!({"approved": true})
    } else {
        json!({"action": "continue"})
    }
}

fn reply(o: &Opts, out: &Out, id: &Value, method: &str, params: &Value) {
    let mut sleep = o.sleep_ms;
    if o.delay_from_args {
        sleep += params["arguments"]["delay_ms"].as_u64().unwrap_or(0);
    }
    if sleep > 0 {
        std::thread::sleep(Duration::from_millis(sleep));
    }
    if o.noise {
        send(out, "this is not JSON, just a stray print");
    }
    if o.unknown_id {
        send(
            out,
            r#"{"jsonrpc":"2.0","id":987654,"result":{"action":"continue"}}"#,
        );
    }
    if o.huge_line > 0 {
        send(out, &"x".repeat(o.huge_line));
    }
    let result = answer(o, method, params);
    send(
        out,
        &json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    );
}

/// The stage methods; any other request is answered -32601.
const STAGES: [&str; 6] = [
    "hook.before_llm",
    "hook.after_llm",
    "hook.before_tool",
    "hook.after_tool",
    "hook.approve_tool",
    "hook.lifecycle",
];

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("test hook: {e}");
            std::process::exit(2);
        }
    };
    eprintln!("test hook {} starting", o.name);
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let stdin = std::io::stdin();
    let mut stage_calls: u64 = 0;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        handle(&o, &out, &mut stage_calls, &msg);
    }
    if o.ignore_eof {
        eprintln!("test hook {}: stdin closed, staying up", o.name);
        loop {
            std::thread::sleep(Duration::from_secs(60));
        }
    }
    eprintln!("test hook {}: stdin closed, exiting", o.name);
}

/// One incoming message: a notification, hello, or a call.
fn handle(o: &Opts, out: &Out, stage_calls: &mut u64, msg: &Value) {
    let method = msg["method"].as_str().unwrap_or("").to_string();
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else {
        if method == "hook.runtime_event"
            && let Some(f) = &o.events_file
        {
            support::append_line(f, params["kind"].as_str().unwrap_or(""));
        }
        return;
    };
    if let Some(f) = o.calls_file.as_deref().filter(|_| method != "hook.hello") {
        support::append_line(f, &params.to_string());
    }
    if method == "hook.hello" {
        on_hello(o, out, &id);
    } else {
        on_call(o, out, stage_calls, id, method, params);
    }
}

fn on_hello(o: &Opts, out: &Out, id: &Value) {
    if o.no_hello {
        return;
    }
    send(
        out,
        &json!({"jsonrpc": "2.0", "id": id, "result": hello_result(o)}).to_string(),
    );
    if o.stall_stdin {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn hello_result(o: &Opts) -> Value {
    if o.no_declare {
        return json!({"ok": true, "name": o.name});
    }
    let all = [
        "before_llm",
        "after_llm",
        "before_tool",
        "after_tool",
        "approve_tool",
        "lifecycle",
    ];
    json!({
        "name": o.name,
        "version": 1,
        "intercept": o.intercept.clone().unwrap_or(all.iter().map(|s| s.to_string()).collect()),
        "observe": o.observe.clone().unwrap_or(vec!["*".into()]),
    })
}

/// A request other than hello: -32601 unless a stage; then a crash, a
/// failure or (on its own thread) the answer, as the flags say.
fn on_call(o: &Opts, out: &Out, stage_calls: &mut u64, id: Value, method: String, params: Value) {
    if !STAGES.contains(&method.as_str()) {
        send(
            out,
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}})
                .to_string(),
        );
        return;
    }
    if o.crash_on_call {
        eprintln!("test hook {}: crashing on purpose", o.name);
        std::process::exit(3);
    }
    if *stage_calls < o.fail_first {
        *stage_calls += 1;
        send(
            out,
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "failing on purpose"}})
                .to_string(),
        );
        return;
    }
    *stage_calls += 1;
    let (o2, out2) = (o.clone(), out.clone());
    std::thread::spawn(move || reply(&o2, &out2, &id, &method, &params));
}
