//! The comparison harness: `cargo run --release -p hookhost-bench -- [--quick]`.
//!
//! In one run it measures the same before_tool work (a ~300-byte params
//! object answered `continue`) over these paths:
//!
//! 1. the floor: a minimal Rust child echoing lines over a pipe pair;
//! 2. hookhost to a Rust SDK hook;
//! 3. hookhost to a Python SDK hook;
//! 4. a one-shot command hook (`sh -c "<python> oneshot_guard.py"` per call,
//!    params on stdin), the docker-agent / Claude Code style;
//! 5. an MCP tool call over stdio with rmcp;
//! 6. the sidecar: `hookhost serve --stdio` (the release binary) with the
//!    hook of row 2, driven over its stdin and stdout as an agent in
//!    another language would (`host.before_tool`, answers matched by id);
//! 7. hookhost to the hook of row 2 served over WebSocket on loopback
//!    (`bench-hook --listen`, a `[hooks.remotes]` entry);
//! 8. the same server reached over HTTP (one POST per call);
//! 9. an agent's HTTP hook (Claude Code's `type: "http"`): its PreToolUse
//!    event POSTed to `hookhost serve --listen` on a kept-alive
//!    connection, the chain being the hook of row 2;
//! 10. its command hook as `hookhost relay` (the release binary spawned
//!     per call) forwarding to `hookhost serve --socket`;
//! 11. the same event to row 4's Python guard spawned per call, as these
//!     agents run hooks today (module `agents`).
//!
//! For each: sequential latency (p50, p99, max) and throughput with 1, 8
//! and 64 calls in flight, each also as a ratio to the floor. Then the
//! start-up of 10 Python hooks beside 10 bare interpreter starts, and the
//! host's RSS with those hooks idle and under load, measured in a fresh
//! child process so that the earlier rows do not inflate it, and the
//! sidecar's start-up and memory.
//!
//! It prints a table and writes it to `BENCHMARKS.md` (a `--quick` run
//! writes `target/BENCHMARKS-quick.md` instead, so that it never replaces a
//! full run's figures). Text outside the generated block of an existing
//! file is kept.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hookhost::protocol::{Outcome, Stage};
use hookhost::{Config, Host, ProcessConfig, RemoteConfig};
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};

mod agents;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, Error>;

const IN_FLIGHT: [usize; 3] = [1, 8, 64];
const GENERATED_BEGIN: &str = "<!-- hookhost-bench: generated, begin -->";
const GENERATED_END: &str = "<!-- hookhost-bench: generated, end -->";

/// How much work a run does.
#[derive(Clone, Copy)]
struct Plan {
    quick: bool,
    /// Sequential calls per row (all but those spawning per call).
    sequential: usize,
    /// Sequential calls of the rows spawning a process per call (4, 10, 11).
    oneshot_sequential: usize,
    /// Calls made and thrown away before measuring.
    warmup: usize,
    /// Throughput window per in-flight level.
    window: Duration,
    /// Throughput window per in-flight level for those rows.
    oneshot_window: Duration,
    /// Start-up repetitions (the median is reported).
    startup_reps: usize,
    /// The load window of the RSS measurement.
    load_window: Duration,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                quick,
                sequential: 2_000,
                oneshot_sequential: 50,
                warmup: 200,
                window: Duration::from_millis(700),
                oneshot_window: Duration::from_millis(1000),
                startup_reps: 3,
                load_window: Duration::from_millis(1000),
            }
        } else {
            Plan {
                quick,
                sequential: 20_000,
                oneshot_sequential: 300,
                warmup: 1_000,
                window: Duration::from_secs(3),
                oneshot_window: Duration::from_secs(4),
                startup_reps: 7,
                load_window: Duration::from_secs(3),
            }
        }
    }
}

/// Sequential latency figures, in nanoseconds.
#[derive(Clone, Copy, Default)]
struct Latency {
    p50: u64,
    p99: u64,
    max: u64,
}

impl Latency {
    fn of(mut samples: Vec<u64>) -> Latency {
        samples.sort_unstable();
        let at = |q: f64| {
            let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
            samples.get(i).copied().unwrap_or(0)
        };
        Latency {
            p50: at(0.50),
            p99: at(0.99),
            max: samples.last().copied().unwrap_or(0),
        }
    }
}

/// One path's figures.
struct Row {
    name: &'static str,
    latency: Latency,
    /// Calls per second with 1, 8 and 64 in flight.
    throughput: [f64; 3],
}

/// What the start-up and memory probe (a child process) measured.
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
struct Probe {
    bare_ms: f64,
    hooks_ms: f64,
    bare_all_ms: Vec<f64>,
    hooks_all_ms: Vec<f64>,
    rss_idle_kib: u64,
    rss_load_kib: u64,
    hwm_kib: u64,
    load_chains_per_s: f64,
}

/// Where things are.
struct Paths {
    bench_dir: PathBuf,
    bins: PathBuf,
    python: String,
}

impl Paths {
    fn bin(&self, name: &str) -> PathBuf {
        self.bins.join(name)
    }
    fn script(&self, name: &str) -> PathBuf {
        self.bench_dir.join(name)
    }
}

/// A ~300-byte before_tool params object.
fn params() -> Value {
    json!({
        "tool": "shell",
        "arguments": {
            "command": "grep -rn --include='*.rs' 'fn main' crates/ | sort | head -n 40",
            "cwd": "/home/agent/projects/hookhost",
            "timeout_ms": 30000,
            "env": {"LANG": "C.UTF-8", "TERM": "dumb"}
        },
        "tool_call_id": "call_7f3a9c2e4b1d8f60a5e2c9b7",
        "meta": {"session_id": "sess-2c41f8", "turn": 12, "agent": "bench-agent"}
    })
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hookhost-bench: no runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = if args.first().map(String::as_str) == Some("--probe") {
        runtime.block_on(probe_main(&args[1..]))
    } else if args.first().map(String::as_str) == Some("--profile") {
        runtime.block_on(profile_main(&args[1..]))
    } else if args.iter().any(|a| a == "-h" || a == "--help") {
        println!(
            "usage: cargo run --release -p hookhost-bench -- [--quick] [--out FILE]\n\
             Compares hookhost with a raw pipe, one-shot command hooks and rmcp, and\n\
             Claude Code's ways to reach it (HTTP hook, `hookhost relay`) with a Python hook per call;\n\
             prints a table and writes it to BENCHMARKS.md (--quick: target/BENCHMARKS-quick.md)."
        );
        Ok(())
    } else {
        runtime.block_on(run(&args))
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookhost-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: &[String]) -> Res<()> {
    let quick = args.iter().any(|a| a == "--quick");
    let out_arg = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let plan = Plan::new(quick);
    let began = Instant::now();
    let bench_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = bench_dir.parent().unwrap_or(&bench_dir).to_path_buf();
    let bins = ensure_helpers(&root)?;
    let python = resolve_python()?;
    let paths = Paths {
        bench_dir,
        bins,
        python,
    };
    println!(
        "hookhost-bench{}: {} sequential calls per row ({} one-shot), {} ms throughput windows",
        if quick { " --quick (a short run)" } else { "" },
        plan.sequential,
        plan.oneshot_sequential,
        plan.window.as_millis()
    );
    println!("python: {}", paths.python);

    let (rows, sidecar) = measure_rows(&paths, plan).await?;
    eprint!("  startup and RSS probe ...");
    let probe = run_probe(&paths, plan).await?;
    eprintln!(" done");

    let report = render(&rows, &probe, &sidecar, plan, began.elapsed());
    println!("\n{report}");
    let out = out_arg.unwrap_or_else(|| {
        if quick {
            root.join("target").join("BENCHMARKS-quick.md")
        } else {
            root.join("BENCHMARKS.md")
        }
    });
    write_report(&out, &report)?;
    println!(
        "wrote {} ({:.1} s)",
        out.display(),
        began.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Rows 1 to 11, in order, and what row 6 measured besides.
async fn measure_rows(paths: &Paths, plan: Plan) -> Res<(Vec<Row>, SidecarFigures)> {
    let mut rows = Vec::new();
    rows.push(step("1 floor", floor_row(paths, plan)).await?);
    rows.push(step("2 hookhost → Rust", rust_row(paths, plan)).await?);
    rows.push(step("3 hookhost → Python", python_row(paths, plan)).await?);
    rows.push(step("4 one-shot sh -c python", oneshot_row(paths, plan)).await?);
    rows.push(step("5 rmcp tool call", rmcp_row(paths, plan)).await?);
    let mut sidecar = SidecarFigures::default();
    rows.push(step("6 sidecar → Rust", sidecar_row(paths, plan, &mut sidecar)).await?);
    rows.push(step("7 → Rust over WebSocket", remote_row(paths, plan, "ws")).await?);
    rows.push(step("8 → Rust over HTTP", remote_row(paths, plan, "http")).await?);
    rows.push(step("9 Claude HTTP hook", agents::http_row(paths, plan)).await?);
    rows.push(step("10 Claude relay", agents::relay_row(paths, plan)).await?);
    rows.push(step("11 Claude python hook", agents::python_row(paths, plan)).await?);
    Ok((rows, sidecar))
}

async fn step(name: &str, row: impl Future<Output = Res<Row>>) -> Res<Row> {
    eprint!("  {name} ...");
    let t = Instant::now();
    let r = row.await;
    eprintln!(" {:.1} s", t.elapsed().as_secs_f64());
    r.map_err(|e| format!("{name}: {e}").into())
}

/// Builds the helper binaries next to this one (a `cargo run` builds only
/// the harness) and returns their folder.
fn ensure_helpers(root: &Path) -> Res<PathBuf> {
    let exe = std::env::current_exe()?;
    let bins = exe
        .parent()
        .ok_or("the harness has no folder")?
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    // `hookhost` (the sidecar of row 6, package hookhost-cli) with the
    // helpers.
    cmd.current_dir(root).args([
        "build",
        "-q",
        "-p",
        "hookhost-bench",
        "-p",
        "hookhost-cli",
        "--bins",
    ]);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let helpers = ["bench-floor", "bench-hook", "bench-mcp-server", "hookhost"];
    match cmd.status() {
        Ok(s) if s.success() => {}
        other => {
            if helpers.iter().any(|h| !bins.join(h).exists()) {
                return Err(format!("building the helper binaries failed: {other:?}").into());
            }
        }
    }
    Ok(bins)
}

/// The real interpreter behind `python3`, resolved once so that a pyenv
/// shim's start-up is not paid per process.
fn resolve_python() -> Res<String> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .map_err(|e| format!("python3 is needed: {e}"))?;
    let path = String::from_utf8(out.stdout)?.trim().to_string();
    if !out.status.success() || path.is_empty() {
        return Err("python3 did not say where it lives".into());
    }
    Ok(path)
}

// ---------------------------------------------------------------- row 1

/// The floor: raw lines over a pipe pair to `bench-floor`.
struct Floor {
    child: Child,
    w: BufWriter<ChildStdin>,
    r: BufReader<ChildStdout>,
    line: Vec<u8>,
    buf: Vec<u8>,
}

impl Floor {
    fn start(paths: &Paths) -> Res<Floor> {
        let mut child = Command::new(paths.bin("bench-floor"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let w = BufWriter::with_capacity(64 * 1024, child.stdin.take().ok_or("no stdin")?);
        let r = BufReader::with_capacity(64 * 1024, child.stdout.take().ok_or("no stdout")?);
        let mut line = serde_json::to_vec(&params())?;
        line.push(b'\n');
        Ok(Floor {
            child,
            w,
            r,
            line,
            buf: Vec::with_capacity(1024),
        })
    }

    async fn read_one(&mut self) -> Res<()> {
        self.buf.clear();
        if self.r.read_until(b'\n', &mut self.buf).await? == 0 {
            return Err("the floor child closed its stdout".into());
        }
        Ok(())
    }

    async fn call(&mut self) -> Res<()> {
        self.w.write_all(&self.line).await?;
        self.w.flush().await?;
        self.read_one().await
    }

    /// Keeps `in_flight` lines outstanding for `window`; calls per second.
    async fn pipelined(&mut self, in_flight: usize, window: Duration) -> Res<f64> {
        let start = Instant::now();
        let end = start + window;
        let (mut outstanding, mut done) = (0usize, 0u64);
        loop {
            if Instant::now() < end {
                while outstanding < in_flight {
                    self.w.write_all(&self.line).await?;
                    outstanding += 1;
                }
                self.w.flush().await?;
            }
            if outstanding == 0 {
                break;
            }
            self.read_one().await?;
            outstanding -= 1;
            done += 1;
            // Take every answer that is already here before refilling.
            while outstanding > 0 && self.r.buffer().contains(&b'\n') {
                self.read_one().await?;
                outstanding -= 1;
                done += 1;
            }
        }
        Ok(done as f64 / start.elapsed().as_secs_f64())
    }
}

async fn floor_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let mut f = Floor::start(paths)?;
    for _ in 0..plan.warmup {
        f.call().await?;
    }
    let mut samples = Vec::with_capacity(plan.sequential);
    for _ in 0..plan.sequential {
        let t = Instant::now();
        f.call().await?;
        samples.push(t.elapsed().as_nanos() as u64);
    }
    let mut throughput = [0.0; 3];
    for (i, n) in IN_FLIGHT.iter().enumerate() {
        throughput[i] = f.pipelined(*n, plan.window).await?;
    }
    drop(f.w);
    let _ = f.child.wait().await;
    Ok(Row {
        name: "1. floor: Rust echo child, raw pipe",
        latency: Latency::of(samples),
        throughput,
    })
}

// ---------------------------------------------------------------- rows 2-6

/// Something that answers one before_tool call at a time; clones share it.
#[derive(Clone)]
enum Target {
    Host(Host, Arc<Value>),
    OneShot {
        command: Arc<str>,
        dir: Arc<Path>,
        input: Arc<[u8]>,
    },
    Mcp(Peer<RoleClient>, Arc<JsonObject>),
    Sidecar(Arc<SidecarClient>, Arc<Value>),
}

impl Target {
    async fn call(&self) -> Res<()> {
        match self {
            Target::Host(host, params) => {
                match host
                    .run_stage(Stage::BeforeTool, (**params).clone())
                    .await?
                {
                    Outcome::Continue { .. } => Ok(()),
                    other => Err(format!("expected continue, got {other:?}").into()),
                }
            }
            Target::OneShot {
                command,
                dir,
                input,
            } => {
                let mut child = Command::new("sh")
                    .arg("-c")
                    .arg(&**command)
                    .current_dir(&**dir)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .kill_on_drop(true)
                    .spawn()?;
                let mut stdin = child.stdin.take().ok_or("no stdin")?;
                stdin.write_all(input).await?;
                drop(stdin);
                let status = child.wait().await?;
                if status.success() {
                    Ok(())
                } else {
                    Err(format!("the guard exited with {status}").into())
                }
            }
            Target::Mcp(peer, args) => {
                let request = CallToolRequestParams::new("check").with_arguments((**args).clone());
                let result = peer.call_tool(request).await?;
                if result.is_error == Some(true) {
                    return Err("the tool answered an error".into());
                }
                Ok(())
            }
            Target::Sidecar(client, params) => {
                let result = client.call("host.before_tool", params).await?;
                match result.get("action").and_then(Value::as_str) {
                    Some("continue") => Ok(()),
                    _ => Err(format!("expected continue, got {result}").into()),
                }
            }
        }
    }
}

/// Sequential latency over `n` calls after `warmup`, then throughput at
/// each in-flight level.
async fn measure(
    name: &'static str,
    target: &Target,
    warmup: usize,
    n: usize,
    window: Duration,
) -> Res<Row> {
    for _ in 0..warmup {
        target.call().await?;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        target.call().await?;
        samples.push(t.elapsed().as_nanos() as u64);
    }
    let mut throughput = [0.0; 3];
    for (i, n) in IN_FLIGHT.iter().enumerate() {
        throughput[i] = concurrent(target, *n, window).await?;
    }
    Ok(Row {
        name,
        latency: Latency::of(samples),
        throughput,
    })
}

/// `tasks` callers each calling in a loop for `window`; calls per second.
async fn concurrent(target: &Target, tasks: usize, window: Duration) -> Res<f64> {
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + window;
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..tasks {
        let (target, done) = (target.clone(), done.clone());
        set.spawn(async move {
            while Instant::now() < end {
                target.call().await?;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<(), Error>(())
        });
    }
    while let Some(r) = set.join_next().await {
        r??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
}

fn one_hook_config(paths: &Paths, command: Vec<String>) -> Config {
    let mut config = Config::empty(&paths.bench_dir);
    config.processes.insert(
        "bench".into(),
        ProcessConfig::new(command, vec![Stage::BeforeTool]),
    );
    config
}

async fn host_row(name: &'static str, config: Config, plan: Plan) -> Res<Row> {
    let host = Host::start(config).await;
    if let Some(f) = host.start_failures().first() {
        host.shutdown().await;
        return Err(format!("the hook did not start: {}", f.error).into());
    }
    let target = Target::Host(host.clone(), Arc::new(params()));
    let row = measure(name, &target, plan.warmup, plan.sequential, plan.window).await;
    host.shutdown().await;
    row
}

async fn rust_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let command = vec![paths.bin("bench-hook").display().to_string()];
    host_row(
        "2. hookhost → Rust SDK hook",
        one_hook_config(paths, command),
        plan,
    )
    .await
}

/// Rows 7 and 8: the hook of row 2 as a network service on loopback,
/// reached with `scheme` (`ws` or `http`).
async fn remote_row(paths: &Paths, plan: Plan, scheme: &str) -> Res<Row> {
    let mut server = Command::new(paths.bin("bench-hook"))
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut line = String::new();
    let stdout = server.stdout.take().ok_or("no stdout")?;
    let mut stdout = BufReader::new(stdout);
    tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut line))
        .await
        .map_err(|_| "bench-hook --listen printed no address within 10 s")??;
    let addr = line
        .trim()
        .strip_prefix("listening on ws://")
        .ok_or_else(|| format!("bench-hook --listen printed {line:?}"))?;
    let mut config = Config::empty(&paths.bench_dir);
    config.remotes.insert(
        "bench".into(),
        RemoteConfig::new(format!("{scheme}://{addr}"), vec![Stage::BeforeTool]),
    );
    let name = if scheme == "ws" {
        "7. hookhost → Rust SDK hook over WebSocket"
    } else {
        "8. hookhost → Rust SDK hook over HTTP"
    };
    let row = host_row(name, config, plan).await;
    let _ = server.kill().await;
    row
}

async fn python_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let command = vec![
        paths.python.clone(),
        paths.script("py_hook.py").display().to_string(),
    ];
    host_row(
        "3. hookhost → Python SDK hook",
        one_hook_config(paths, command),
        plan,
    )
    .await
}

async fn oneshot_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let target = Target::OneShot {
        command: format!("{} oneshot_guard.py", paths.python).into(),
        dir: paths.bench_dir.clone().into(),
        input: serde_json::to_vec(&params())?.into(),
    };
    measure(
        "4. one-shot: sh -c python guard per call",
        &target,
        plan.warmup.min(10),
        plan.oneshot_sequential,
        plan.oneshot_window,
    )
    .await
}

async fn rmcp_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let transport = TokioChildProcess::new(Command::new(paths.bin("bench-mcp-server")))?;
    let client: RunningService<RoleClient, ()> = ().serve(transport).await?;
    let tools = client.list_tools(None).await?;
    if !tools.tools.iter().any(|t| t.name == "check") {
        return Err("the MCP server lists no `check` tool".into());
    }
    let args = match params() {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    let target = Target::Mcp(client.peer().clone(), Arc::new(args));
    let row = measure(
        "5. rmcp: MCP tool call over stdio",
        &target,
        plan.warmup,
        plan.sequential,
        plan.window,
    )
    .await;
    drop(target);
    let _ = client.cancel().await;
    row
}

// ---------------------------------------------------------------- row 6

/// What row 6 measures besides latency and throughput.
#[derive(Default)]
struct SidecarFigures {
    /// From spawning `hookhost serve` to the first answer (it starts every
    /// hook before it reads a request), in ms.
    ready_ms: f64,
    /// The sidecar process's `VmHWM` after the row (its hook not counted).
    hwm_kib: u64,
}

/// An agent's side of `hookhost serve --stdio`: one writer task owns the
/// child's stdin, one reader task its stdout, and answers find their
/// caller by id, so any number of calls can be in flight.
struct SidecarClient {
    next_id: AtomicU64,
    lines: mpsc::Sender<Vec<u8>>,
    /// Callers waiting for an answer.
    pending: Waiting,
}

/// Callers waiting, by id; `None` once the reader has stopped.
type Waiting = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>>;

/// A response line, as far as the client reads it.
#[derive(serde::Deserialize)]
struct Answer {
    id: Option<u64>,
    result: Option<Value>,
    error: Option<Value>,
}

/// A request line; borrows the params, as an agent serializing its own
/// object per call would.
#[derive(serde::Serialize)]
struct Request<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'static str,
    params: &'a Value,
}

impl SidecarClient {
    /// Takes over the child's pipes.
    fn start(stdin: ChildStdin, stdout: ChildStdout) -> SidecarClient {
        let (lines, mut rx) = mpsc::channel::<Vec<u8>>(1024);
        tokio::spawn(async move {
            let mut w = BufWriter::with_capacity(64 * 1024, stdin);
            while let Some(line) = rx.recv().await {
                w.write_all(&line).await?;
                // Flush once nothing else is queued: a burst goes out in
                // one write, a lone call at once.
                if rx.is_empty() {
                    w.flush().await?;
                }
            }
            // Dropping the writer closes stdin: the sidecar's end of input.
            w.flush().await?;
            Ok::<(), std::io::Error>(())
        });
        let pending: Waiting = Arc::new(Mutex::new(Some(HashMap::new())));
        let waiting = pending.clone();
        tokio::spawn(async move {
            let mut r = BufReader::with_capacity(64 * 1024, stdout);
            let mut buf = Vec::with_capacity(1024);
            loop {
                buf.clear();
                match r.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let Ok(answer) = serde_json::from_slice::<Answer>(&buf) else {
                    eprintln!(
                        "hookhost-bench: the sidecar wrote a line that is not a response: {}",
                        String::from_utf8_lossy(&buf).trim_end()
                    );
                    break;
                };
                let Some(id) = answer.id else {
                    eprintln!(
                        "hookhost-bench: the sidecar answered without an id: {:?}",
                        answer.error
                    );
                    break;
                };
                let caller = lock(&waiting).as_mut().and_then(|m| m.remove(&id));
                if let Some(caller) = caller {
                    let _ = caller.send(answer);
                }
            }
            // Everyone still waiting learns that no answer will come.
            lock(&waiting).take();
        });
        SidecarClient {
            next_id: AtomicU64::new(1),
            lines,
            pending,
        }
    }

    /// One request; its `result`.
    async fn call(&self, method: &'static str, params: &Value) -> Res<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut line = serde_json::to_vec(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })?;
        line.push(b'\n');
        let (tx, rx) = oneshot::channel();
        lock(&self.pending)
            .as_mut()
            .ok_or("the sidecar closed its stdout")?
            .insert(id, tx);
        self.lines
            .send(line)
            .await
            .map_err(|_| "the sidecar's stdin is closed")?;
        let answer = rx
            .await
            .map_err(|_| "the sidecar closed its stdout before answering")?;
        match (answer.result, answer.error) {
            (Some(result), None) => Ok(result),
            (_, error) => Err(format!("the sidecar answered an error: {error:?}").into()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes a config whose one hook is row 2's, in a fresh folder; the
/// folder's path.
fn sidecar_config(paths: &Paths) -> Res<PathBuf> {
    let dir = std::env::temp_dir().join(format!("hookhost-bench-sidecar-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    write_hook_config(paths, &dir)?;
    Ok(dir)
}

/// Writes `DIR/hooks.json`, whose one hook is row 2's: the sidecar's and
/// the daemon's (rows 6, 9 and 10).
fn write_hook_config(paths: &Paths, dir: &Path) -> Res<()> {
    // JSON rather than TOML: the same loader, and no quoting of paths to
    // get right. The hook runs in the bench folder, as in row 2.
    let config = json!({
        "hooks": {
            "processes": {
                "bench": {
                    "command": [paths.bin("bench-hook")],
                    "dir": paths.bench_dir,
                    "intercept": ["before_tool"]
                }
            }
        }
    });
    std::fs::write(dir.join("hooks.json"), serde_json::to_vec_pretty(&config)?)?;
    Ok(())
}

/// Spawns `hookhost serve -c CONFIG --stdio`; its stderr stays ours.
fn spawn_sidecar(paths: &Paths, config: &Path) -> Res<(Child, SidecarClient)> {
    let mut child = Command::new(paths.bin("hookhost"))
        .arg("serve")
        .arg("-c")
        .arg(config)
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    Ok((child, SidecarClient::start(stdin, stdout)))
}

/// Ends the session as an agent would: end of input, then the exit.
async fn stop_sidecar(mut child: Child, target: Target) -> Res<()> {
    // The last clone of the client: its writer closes the sidecar's stdin.
    drop(target);
    match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
        Ok(status) => match status? {
            s if s.success() => Ok(()),
            s => Err(format!("the sidecar exited with {s}").into()),
        },
        Err(_) => {
            let _ = child.kill().await;
            Err("the sidecar did not exit within 10 s of end of input".into())
        }
    }
}

async fn sidecar_row(paths: &Paths, plan: Plan, figures: &mut SidecarFigures) -> Res<Row> {
    let dir = sidecar_config(paths)?;
    let result = async {
        let params = Arc::new(params());
        let t = Instant::now();
        let (child, client) = spawn_sidecar(paths, &dir.join("hooks.json"))?;
        let pid = child.id().ok_or("the sidecar has no pid")?;
        let target = Target::Sidecar(Arc::new(client), params);
        target.call().await?;
        figures.ready_ms = t.elapsed().as_secs_f64() * 1e3;
        let row = measure(
            "6. sidecar: agent → `hookhost serve` → Rust SDK hook",
            &target,
            plan.warmup,
            plan.sequential,
            plan.window,
        )
        .await;
        figures.hwm_kib = memory_of(&format!("/proc/{pid}/status")).1;
        let stopped = stop_sidecar(child, target).await;
        let row = row?;
        stopped?;
        Ok(row)
    }
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `--profile rust|python|sidecar SECONDS IN_FLIGHT`: one hook row's load
/// alone, for a profiler to watch.
async fn profile_main(args: &[String]) -> Res<()> {
    let [which, secs, in_flight] = args else {
        return Err("usage: --profile rust|python|sidecar SECONDS IN_FLIGHT".into());
    };
    let bench_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bins = std::env::current_exe()?
        .parent()
        .ok_or("no folder")?
        .to_path_buf();
    let paths = Paths {
        bench_dir,
        bins,
        python: resolve_python()?,
    };
    let window = Duration::from_secs_f64(secs.parse()?);
    if which == "sidecar" {
        let dir = sidecar_config(&paths)?;
        let (child, client) = spawn_sidecar(&paths, &dir.join("hooks.json"))?;
        println!("sidecar pid {:?}", child.id());
        let target = Target::Sidecar(Arc::new(client), Arc::new(params()));
        let rate = concurrent(&target, in_flight.parse()?, window).await;
        let stopped = stop_sidecar(child, target).await;
        let _ = std::fs::remove_dir_all(&dir);
        println!("sidecar: {:.0} calls/s", rate?);
        return stopped;
    }
    let command = match which.as_str() {
        "rust" => vec![paths.bin("bench-hook").display().to_string()],
        _ => vec![
            paths.python.clone(),
            paths.script("py_hook.py").display().to_string(),
        ],
    };
    let host = Host::start(one_hook_config(&paths, command)).await;
    let target = Target::Host(host.clone(), Arc::new(params()));
    let rate = concurrent(&target, in_flight.parse()?, window).await?;
    println!("{which}: {rate:.0} calls/s");
    host.shutdown().await;
    Ok(())
}

// ---------------------------------------------------------------- probe

/// Runs the start-up and memory probe in a fresh copy of this program.
async fn run_probe(paths: &Paths, plan: Plan) -> Res<Probe> {
    // Not current_exe(): `ensure_helpers` may have rebuilt this very file.
    let out = Command::new(paths.bin("hookhost-bench"))
        .arg("--probe")
        .arg(&paths.python)
        .arg(paths.script("py_hook.py"))
        .arg(paths.bench_dir.as_os_str())
        .arg(plan.startup_reps.to_string())
        .arg(plan.load_window.as_millis().to_string())
        .stderr(Stdio::inherit())
        .output()
        .await?;
    if !out.status.success() {
        return Err(format!("the probe failed ({})", out.status).into());
    }
    let text = String::from_utf8(out.stdout)?;
    let last = text.lines().last().ok_or("the probe said nothing")?;
    Ok(serde_json::from_str(last)?)
}

/// `VmRSS` and `VmHWM` of this process, in KiB.
fn memory() -> (u64, u64) {
    memory_of("/proc/self/status")
}

/// `VmRSS` and `VmHWM` from a `/proc/PID/status` file, in KiB.
fn memory_of(status_file: &str) -> (u64, u64) {
    let status = std::fs::read_to_string(status_file).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

async fn probe_main(args: &[String]) -> Res<()> {
    let [python, script, dir, reps, load_ms] = args else {
        return Err("usage: --probe PYTHON SCRIPT DIR REPS LOAD_MS".into());
    };
    let reps: usize = reps.parse()?;
    let load = Duration::from_millis(load_ms.parse()?);
    let mut config = Config::empty(dir);
    for i in 0..10 {
        let mut p = ProcessConfig::new(
            vec![python.clone(), script.clone()],
            vec![Stage::BeforeTool],
        );
        // A distinct environment per hook, so that they are 10 processes.
        p.env.insert("BENCH_SLOT".into(), i.to_string());
        config.processes.insert(format!("py{i:02}"), p);
    }
    let mut probe = Probe::default();
    let mut host = None;
    for rep in 0..reps {
        let bare = async {
            let t = Instant::now();
            let mut children = Vec::new();
            for _ in 0..10 {
                children.push(
                    Command::new(python)
                        .args(["-c", "pass"])
                        .stdin(Stdio::null())
                        .spawn()?,
                );
            }
            for mut c in children {
                c.wait().await?;
            }
            Ok::<f64, Error>(t.elapsed().as_secs_f64() * 1e3)
        };
        let hooks = async {
            let t = Instant::now();
            let h = Host::start(config.clone()).await;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let up = h.hooks().iter().filter(|i| i.protocol.is_some()).count();
            if up != 10 {
                return Err(format!("{up} of 10 hooks started: {:?}", h.start_failures()).into());
            }
            Ok::<(f64, Host), Error>((ms, h))
        };
        // Alternate which goes first, so that neither always gets a warm cache.
        let (b, (k, h)) = if rep % 2 == 0 {
            let b = bare.await?;
            (b, hooks.await?)
        } else {
            let k = hooks.await?;
            (bare.await?, k)
        };
        probe.bare_all_ms.push(b);
        probe.hooks_all_ms.push(k);
        if rep + 1 == reps {
            host = Some(h);
        } else {
            h.shutdown().await;
        }
    }
    probe.bare_ms = median(&probe.bare_all_ms);
    probe.hooks_ms = median(&probe.hooks_all_ms);
    let host = host.ok_or("no host")?;

    tokio::time::sleep(Duration::from_millis(300)).await;
    probe.rss_idle_kib = memory().0;

    let target = Target::Host(host.clone(), Arc::new(params()));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                peak.fetch_max(memory().0, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    probe.load_chains_per_s = concurrent(&target, 64, load).await?;
    sampler.abort();
    let (rss, hwm) = memory();
    probe.rss_load_kib = peak.load(Ordering::Relaxed).max(rss);
    probe.hwm_kib = hwm;
    host.shutdown().await;
    println!("{}", serde_json::to_string(&probe)?);
    Ok(())
}

// ---------------------------------------------------------------- report

fn micros(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else if us >= 100.0 {
        format!("{us:.0} µs")
    } else {
        format!("{us:.1} µs")
    }
}

fn rate(per_s: f64) -> String {
    if per_s >= 1e6 {
        format!("{:.2} M/s", per_s / 1e6)
    } else if per_s >= 1e4 {
        format!("{:.0} k/s", per_s / 1e3)
    } else if per_s >= 1e3 {
        format!("{:.1} k/s", per_s / 1e3)
    } else {
        format!("{per_s:.0} /s")
    }
}

fn ratio(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}×")
    } else if x >= 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.2}×")
    }
}

fn sh(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn machine() -> BTreeMap<&'static str, String> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "?".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let mut m = BTreeMap::new();
    m.insert("cores", cores);
    m.insert("cpu", cpu);
    m.insert("kernel", kernel);
    m.insert("date", sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]));
    m.insert("python", sh("python3", &["--version"]));
    m.insert("rustc", sh("rustc", &["--version"]));
    m
}

fn render(
    rows: &[Row],
    probe: &Probe,
    sidecar: &SidecarFigures,
    plan: Plan,
    took: Duration,
) -> String {
    let mut s = String::new();
    let m = machine();
    let command = if plan.quick {
        "cargo run --release -p hookhost-bench -- --quick"
    } else {
        "cargo run --release -p hookhost-bench"
    };
    s += &format!(
        "Command: `{command}`{}  \n",
        if plan.quick {
            " (a QUICK run: fewer calls, shorter windows)"
        } else {
            ""
        }
    );
    s += &format!(
        "Machine: {} cores, {}, Linux {}; {}, {}  \nDate: {}  \n",
        m["cores"], m["cpu"], m["kernel"], m["python"], m["rustc"], m["date"]
    );
    s += &format!(
        "Work: before_tool with a {}-byte params object, answered `continue`. \
         Latency: {} sequential calls per row ({} for the rows spawning a process per call: 4, 10, 11) after a warm-up. \
         Throughput: {} s windows ({} s for those rows) with 1, 8 and 64 calls in flight. \
         Ratios are to the floor (row 1).\n\n",
        serde_json::to_vec(&params()).map(|v| v.len()).unwrap_or(0),
        plan.sequential,
        plan.oneshot_sequential,
        plan.window.as_secs_f64(),
        plan.oneshot_window.as_secs_f64(),
    );
    s += "| path | p50 | p99 | max | 1 in flight | 8 in flight | 64 in flight |\n";
    s += "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    let floor = &rows[0];
    for r in rows {
        let lat = |v: u64, f: u64| format!("{} ({})", micros(v), ratio(v as f64 / f.max(1) as f64));
        let mut line = format!(
            "| {} | {} | {} | {} |",
            r.name,
            lat(r.latency.p50, floor.latency.p50),
            lat(r.latency.p99, floor.latency.p99),
            lat(r.latency.max, floor.latency.max),
        );
        for (i, t) in r.throughput.iter().enumerate() {
            line += &format!(
                " {} ({}) |",
                rate(*t),
                ratio(t / floor.throughput[i].max(1e-9))
            );
        }
        s += &line;
        s += "\n";
    }
    s += "\n";
    s += &format!(
        "Start-up, median of {} runs: 10 Python hooks from `Host::start` to all ready: **{:.1} ms**; \
         10 bare `{}` started in parallel: **{:.1} ms** ({}).  \n",
        plan.startup_reps,
        probe.hooks_ms,
        "python3 -c pass",
        probe.bare_ms,
        ratio(probe.hooks_ms / probe.bare_ms.max(1e-9)),
    );
    s += &format!(
        "Host RSS with 10 Python hooks (a fresh process): idle **{:.1} MiB**, under load (64 chains in flight through all 10, {} chains/s) **{:.1} MiB**, high-water mark {:.1} MiB.\n\n",
        probe.rss_idle_kib as f64 / 1024.0,
        rate(probe.load_chains_per_s),
        probe.rss_load_kib as f64 / 1024.0,
        probe.hwm_kib as f64 / 1024.0,
    );
    s += &format!(
        "Sidecar (row 6): `hookhost serve --stdio` with one Rust hook, from spawn to the first answer **{:.1} ms**; \
         the sidecar process's high-water mark after the row (its hook not counted) **{:.1} MiB**.\n\n",
        sidecar.ready_ms,
        sidecar.hwm_kib as f64 / 1024.0,
    );
    if let (Some(ws), Some(http)) = (rows.get(6), rows.get(7)) {
        let vs = |r: &Row| ratio(r.latency.p50 as f64 / rows[1].latency.p50.max(1) as f64);
        s += &format!(
            "Network (rows 7 and 8): the row 2 hook served on loopback by the Rust SDK's \
             jsonrpsee server; p50 over WebSocket **{}** ({} row 2's stdio), over HTTP **{}** ({}).\n\n",
            micros(ws.latency.p50),
            vs(ws),
            micros(http.latency.p50),
            vs(http),
        );
    }
    s += &agents::summary(rows, plan);
    s += "| target | result | measured |\n| --- | --- | --- |\n";
    for (name, met, what) in targets(rows, probe) {
        s += &format!(
            "| {name} | {} | {what} |\n",
            if met { "met" } else { "**missed**" }
        );
    }
    s += &format!("\nThe run took {:.0} s.\n", took.as_secs_f64());
    s
}

/// The targets: what each is, whether it was met, what was measured.
fn targets(rows: &[Row], probe: &Probe) -> Vec<(String, bool, String)> {
    let (fl, rust, py, one, mcp, side) =
        (&rows[0], &rows[1], &rows[2], &rows[3], &rows[4], &rows[5]);
    let p50 = |r: &Row| r.latency.p50 as f64;
    let mut targets: Vec<(String, bool, String)> = vec![
        (
            "hookhost → Rust p50 ≤ 2× the floor's p50".into(),
            p50(rust) <= 2.0 * p50(fl),
            ratio(p50(rust) / p50(fl)),
        ),
        (
            "hookhost → Rust p50 ≥ 100× faster than the one-shot hook".into(),
            p50(one) >= 100.0 * p50(rust),
            format!("{} faster", ratio(p50(one) / p50(rust))),
        ),
        (
            "hookhost → Rust p50 ≤ rmcp's p50".into(),
            p50(rust) <= p50(mcp),
            format!(
                "{} vs {}",
                micros(rust.latency.p50),
                micros(mcp.latency.p50)
            ),
        ),
        (
            "sidecar → Rust p50 ≤ 2× hookhost → Rust p50".into(),
            p50(side) <= 2.0 * p50(rust),
            format!(
                "{} vs {} ({})",
                micros(side.latency.p50),
                micros(rust.latency.p50),
                ratio(p50(side) / p50(rust))
            ),
        ),
        (
            "≥ 200,000 calls/s to one Rust hook, 64 in flight".into(),
            rust.throughput[2] >= 200_000.0,
            rate(rust.throughput[2]),
        ),
        (
            "≥ 30,000 calls/s to one Python hook, 64 in flight".into(),
            py.throughput[2] >= 30_000.0,
            rate(py.throughput[2]),
        ),
        (
            "10 Python hooks ready ≤ 1.5× 10 bare interpreter starts".into(),
            probe.hooks_ms <= 1.5 * probe.bare_ms,
            format!("{:.1} ms vs {:.1} ms", probe.hooks_ms, probe.bare_ms),
        ),
        (
            "host RSS ≤ 20 MiB with 10 hooks".into(),
            (probe.rss_load_kib.max(probe.rss_idle_kib) as f64) <= 20.0 * 1024.0,
            format!(
                "{:.1} MiB idle, {:.1} MiB under load",
                probe.rss_idle_kib as f64 / 1024.0,
                probe.rss_load_kib as f64 / 1024.0
            ),
        ),
    ];
    targets.extend(agents::targets(rows));
    targets
}

/// Writes the generated block, keeping whatever surrounds it in an
/// existing file.
fn write_report(path: &Path, report: &str) -> Res<()> {
    let block = format!("{GENERATED_BEGIN}\n{report}{GENERATED_END}\n");
    let text = match std::fs::read_to_string(path) {
        Ok(old) => match (old.find(GENERATED_BEGIN), old.find(GENERATED_END)) {
            (Some(a), Some(b)) if a < b => {
                let tail = &old[b + GENERATED_END.len()..];
                format!(
                    "{}{block}{}",
                    &old[..a],
                    tail.strip_prefix('\n').unwrap_or(tail)
                )
            }
            _ => format!("# Benchmarks\n\n{block}"),
        },
        Err(_) => format!("# Benchmarks\n\n{block}"),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)?;
    Ok(())
}
