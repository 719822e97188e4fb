//! The comparison harness: `cargo run --release -p hookhost-bench -- [--quick]
//! [--scaling-only]`.
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
//! 10. its command hook as `hookhost relay` (the binary users install,
//!     `scripts/dist`, spawned per call) forwarding to `hookhost serve
//!     --socket`;
//! 11. the same event to row 4's Python guard spawned per call, as these
//!     agents run hooks today (module `agents`);
//! 12. hookhost to `py_echo.py`, the least a Python hook can be (stdlib
//!     json, no SDK), started as row 3's hook is: row 3's baseline;
//! 13. row 2's hook alone, driven by the harness over a raw pipe pair (the
//!     hello by hand, then before_tool lines, answers matched by id): the
//!     Rust SDK's own cost, without the host (module `raw`, with row 1);
//! 14. and 15. one builtin guard behind an `if` written with `startsWith`
//!     and with the same prefixes as constant `matches()` patterns (module
//!     `filters`);
//! 16. row 9's requests to `bench-http-floor`, the same stack answering the
//!     same bytes with no chain: the HTTP route's floor;
//! 17. a static executable spawned per call as row 10 spawns the relay,
//!     reading stdin and connecting to the daemon's socket: the relay's
//!     floor (`bench/floor/connect.rs`);
//! 18. the competitor: row 9's decision by NeMo Guardrails 0.24.1's API
//!     server (`/v1/checks`, a regex rail, no model), installed by the
//!     harness into a venv of its own (module `nemo`);
//! 19. hookhost to a Node SDK hook (`bench/node_hook.mjs`, row 3's hook
//!     written with `sdk-node`).
//!
//! For each: sequential latency (p50, p99, max) and throughput with 1, 8
//! and 64 calls in flight, each also as a ratio to the floor. Every host
//! the harness starts is checked (module `checks`): each hook ready and in
//! a process of its own, and after the row every hook counts every call,
//! none failed, none restarted. Then the start-up of 10 Python hooks beside
//! 10 bare interpreter starts, and the host's RSS with those hooks idle and
//! under load, measured in a fresh child process so that the earlier rows
//! do not inflate it, and the sidecar's start-up and memory. Issue 22's
//! targets are ratios between rows of the same run (module `report`).
//!
//! Then the scaling section (module `scaling`): chain length, params
//! size, hooks configured and runtime events, as tables and as curves in
//! a hand-built SVG (module `svg`). `--scaling-only` measures that section
//! alone.
//!
//! It prints the tables and writes them to `BENCHMARKS.md`, in two
//! generated blocks (the rows', the scaling section's), and the curves to
//! `BENCHMARKS-scaling.svg` beside it. A `--quick` run writes
//! `target/BENCHMARKS-quick.md` and `target/BENCHMARKS-quick-scaling.svg`
//! instead, so that it never replaces a full run's figures. Text outside
//! the generated blocks of an existing file is kept, and a
//! `--scaling-only` run leaves the rows' block as it was. `--rows 9,18`
//! measures those rows alone (no probe, no scaling section) into
//! `target/BENCHMARKS-rows.md`, never into BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hookhost::protocol::{Outcome, Stage};
use hookhost::{Config, Host, ProcessConfig, RemoteConfig};
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

mod agents;
mod checks;
mod events;
mod filters;
mod nemo;
mod probe;
mod raw;
mod report;
mod scaling;
mod scaling_report;
mod sidecar;
mod svg;

use nemo::Competitor;
use probe::{Probe, probe_main, run_probe};
use raw::floor_row;
use report::{ROWS_BLOCK, SCALING_BLOCK, micros, ratio, render, write_report};
use scaling::{ScalePlan, Scaling};
use sidecar::{
    SidecarClient, SidecarFigures, sidecar_config, sidecar_row, spawn_sidecar, stop_sidecar,
    write_hook_config,
};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, Error>;

const IN_FLIGHT: [usize; 3] = [1, 8, 64];
const USAGE: &str = "\
usage: cargo run --release -p hookhost-bench -- [--quick] [--scaling-only] [--rows N,..] [--out FILE]
Compares hookhost with a raw pipe, one-shot command hooks and rmcp, and
Claude Code's ways to reach it (HTTP hook, `hookhost relay`) with a Python hook per call
and with NeMo Guardrails, and the Node SDK (rows 1 to 19; row 18 installs NeMo Guardrails 0.24.1 from PyPI
into target/bench-nemo/venv once), then measures how its costs scale (chain length,
params size, hooks configured, runtime events). Prints the tables and writes them to BENCHMARKS.md, the
curves to BENCHMARKS-scaling.svg beside it (--quick: target/BENCHMARKS-quick.md and
target/BENCHMARKS-quick-scaling.svg).
  --quick         fewer calls, shorter windows: to see that it works, not for figures
  --scaling-only  the scaling section alone (its block and its SVG; the rows' block is kept)
  --rows 9,18     those rows alone, no probe and no scaling section, written to
                  target/BENCHMARKS-rows.md (never to BENCHMARKS.md)
  --out FILE      write FILE instead (the SVG beside it, FILE's stem + -scaling.svg)";
const RUST_ROW: &str = "2. hookhost → Rust SDK hook";
const PYTHON_ROW: &str = "3. hookhost → Python SDK hook";
const SIDECAR_ROW: &str = "6. sidecar: agent → `hookhost serve` → Rust SDK hook";
const NODE_ROW: &str = "19. hookhost → Node SDK hook";
const PY_ECHO_ROW: &str = "12. hookhost → minimal Python echo hook (stdlib json, no SDK)";

/// How much work a run does.
#[derive(Clone, Copy)]
struct Plan {
    quick: bool,
    /// `--scaling-only`: the scaling section alone.
    scaling_only: bool,
    /// `--rows`: those rows alone (bit N for row N), without the probe and
    /// the scaling section.
    rows: Option<u64>,
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
    /// The load window of the RSS measurements.
    load_window: Duration,
    /// The scaling section's.
    scale: ScalePlan,
}

impl Plan {
    fn new(quick: bool, scaling_only: bool, rows: Option<u64>) -> Plan {
        let scale = ScalePlan::new(quick);
        if quick {
            Plan {
                quick,
                scaling_only,
                rows,
                scale,
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
                scaling_only,
                rows,
                scale,
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

    /// Whether row `n` is measured in this run.
    fn wants(&self, n: u32) -> bool {
        self.rows.is_none_or(|rows| rows & (1 << n) != 0)
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

/// Where things are.
struct Paths {
    bench_dir: PathBuf,
    bins: PathBuf,
    /// The `hookhost` users install ([`build_dist`]).
    hookhost: PathBuf,
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
    let rest = args.get(1..).unwrap_or_default();
    let result = match args.first().map(String::as_str) {
        Some("--probe") => runtime.block_on(probe_main(rest)),
        Some("--probe-hooks") => runtime.block_on(probe::hooks_probe_main(rest)),
        Some("--profile") => runtime.block_on(profile_main(rest)),
        _ if args.iter().any(|a| a == "-h" || a == "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => runtime.block_on(run(&args)),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookhost-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// What the command line asks for.
struct Options {
    quick: bool,
    scaling_only: bool,
    rows: Option<u64>,
    out: Option<PathBuf>,
}

impl Options {
    fn parse(args: &[String]) -> Res<Options> {
        let mut o = Options {
            quick: false,
            scaling_only: false,
            rows: None,
            out: None,
        };
        let mut args = args.iter();
        while let Some(a) = args.next() {
            match a.as_str() {
                "--quick" => o.quick = true,
                "--scaling-only" => o.scaling_only = true,
                "--rows" => o.rows = Some(row_set(args.next().ok_or("--rows needs N,..")?)?),
                "--out" => o.out = Some(args.next().ok_or("--out needs a FILE")?.into()),
                other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
            }
        }
        Ok(o)
    }
}

/// `9,18` as the bits of those rows; each must be a row of the table.
fn row_set(list: &str) -> Res<u64> {
    let mut rows = 0;
    for n in list.split(',') {
        match n.trim().parse::<u32>() {
            Ok(n @ 1..=ROW_COUNT) => rows |= 1 << n,
            _ => return Err(format!("--rows: {n:?} is not a row from 1 to {ROW_COUNT}").into()),
        }
    }
    Ok(rows)
}

/// The rows of the table.
const ROW_COUNT: u32 = 19;

/// What the rows measured, with the probe's figures (none with `--rows`).
struct Rows {
    rows: Vec<Row>,
    sidecar: SidecarFigures,
    probe: Option<Probe>,
    /// Why the competitor (row 18) was left out, if it was.
    nemo_left_out: Option<String>,
}

async fn run(args: &[String]) -> Res<()> {
    let options = Options::parse(args)?;
    let plan = Plan::new(options.quick, options.scaling_only, options.rows);
    let began = Instant::now();
    let bench_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = bench_dir.parent().unwrap_or(&bench_dir).to_path_buf();
    let (bins, hookhost) = ensure_helpers(&root)?;
    let paths = Paths {
        bins,
        hookhost,
        python: resolve_python()?,
        bench_dir,
    };
    announce(plan, &paths);
    let rows = match plan.scaling_only {
        true => None,
        false => Some(measure_all(&paths, plan).await?),
    };
    let scaling = match plan.rows {
        Some(_) => None,
        None => Some(scaling::measure(&paths, plan).await?),
    };
    let out = options
        .out
        .unwrap_or_else(|| match (plan.rows, plan.quick) {
            (Some(_), _) => root.join("target").join("BENCHMARKS-rows.md"),
            (None, true) => root.join("target").join("BENCHMARKS-quick.md"),
            (None, false) => root.join("BENCHMARKS.md"),
        });
    write_all(&out, rows, scaling.as_ref(), plan, began.elapsed())?;
    println!(
        "wrote {} ({:.1} s)",
        out.display(),
        began.elapsed().as_secs_f64()
    );
    Ok(())
}

fn announce(plan: Plan, paths: &Paths) {
    let mut flags = String::new();
    if plan.quick {
        flags += " --quick (a short run)";
    }
    if plan.scaling_only {
        flags += " --scaling-only";
    }
    println!(
        "hookhost-bench{flags}: {} sequential calls per row ({} one-shot), {} ms throughput windows",
        plan.sequential,
        plan.oneshot_sequential,
        plan.window.as_millis()
    );
    println!("python: {}", paths.python);
}

/// Rows 1 to 19 and the start-up and RSS probe (with `--rows`, those rows
/// alone).
async fn measure_all(paths: &Paths, plan: Plan) -> Res<Rows> {
    let mut rows = measure_rows(paths, plan).await?;
    if plan.rows.is_none() {
        eprint!("  startup and RSS probe ...");
        rows.probe = Some(run_probe(paths, plan).await?);
        eprintln!(" done");
    }
    Ok(rows)
}

/// Prints the blocks and writes them to `out`, the SVG beside it.
fn write_all(
    out: &Path,
    rows: Option<Rows>,
    scaling: Option<&Scaling>,
    plan: Plan,
    took: Duration,
) -> Res<()> {
    let stem = out
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("BENCHMARKS");
    let svg_name = format!("{stem}-scaling.svg");
    let mut blocks = Vec::new();
    let scaling_took = scaling.map_or(Duration::ZERO, |s| s.took);
    if let Some(r) = rows {
        let report = render(&r, plan, (took, scaling_took));
        println!("\n{report}");
        blocks.push((ROWS_BLOCK, report));
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if let Some(scaling) = scaling {
        let section = scaling_report::render(scaling, plan, &svg_name);
        println!("\n{section}");
        blocks.push((SCALING_BLOCK, section));
        std::fs::write(out.with_file_name(&svg_name), scaling_report::plot(scaling))?;
    }
    write_report(out, &blocks)
}

/// Rows 1 to 19 (those `--rows` names), in order, and what rows 6 and 18
/// told besides their figures.
async fn measure_rows(paths: &Paths, plan: Plan) -> Res<Rows> {
    let (p, q) = (paths, plan);
    let mut rows = Vec::new();
    rows.extend(step(q, 1, "floor", floor_row(p, q)).await?);
    rows.extend(step(q, 2, "hookhost → Rust", rust_row(p, q)).await?);
    rows.extend(step(q, 3, "hookhost → Python", python_row(p, q)).await?);
    rows.extend(step(q, 4, "one-shot sh -c python", oneshot_row(p, q)).await?);
    rows.extend(step(q, 5, "rmcp tool call", rmcp_row(p, q)).await?);
    let mut sidecar = SidecarFigures::default();
    rows.extend(step(q, 6, "sidecar → Rust", sidecar_row(p, q, &mut sidecar)).await?);
    rows.extend(step(q, 7, "→ Rust over WebSocket", remote_row(p, q, "ws")).await?);
    rows.extend(step(q, 8, "→ Rust over HTTP", remote_row(p, q, "http")).await?);
    rows.extend(step(q, 9, "Claude HTTP hook", agents::http_row(p, q)).await?);
    rows.extend(step(q, 10, "Claude relay", agents::relay_row(p, q)).await?);
    rows.extend(step(q, 11, "Claude python hook", agents::python_row(p, q)).await?);
    rows.extend(step(q, 12, "→ Python echo hook", python_echo_row(p, q)).await?);
    rows.extend(step(q, 13, "Rust SDK alone, raw pipe", raw::sdk_row(p, q)).await?);
    let (starts, matches) = (filters::starts_with(), filters::matches());
    let row = filters::row(filters::STARTS_WITH_ROW, p, q, &starts);
    rows.extend(step(q, 14, "`if` with startsWith", row).await?);
    let row = filters::row(filters::MATCHES_ROW, p, q, &matches);
    rows.extend(step(q, 15, "`if` with matches()", row).await?);
    let row = agents::http_floor_row(p, q);
    rows.extend(step(q, 16, "floor of the HTTP route", row).await?);
    let row = agents::relay_floor_row(p, q);
    rows.extend(step(q, 17, "floor of the relay", row).await?);
    let nemo_left_out = competitor(p, q, &mut rows).await?;
    rows.extend(step(q, 19, "hookhost → Node", node_row(p, q)).await?);
    Ok(Rows {
        rows,
        sidecar,
        probe: None,
        nemo_left_out,
    })
}

/// Row 18 into `rows`, or why it was left out.
async fn competitor(paths: &Paths, plan: Plan, rows: &mut Vec<Row>) -> Res<Option<String>> {
    let row = nemo::nemo_row(paths, plan);
    match step(plan, 18, "NeMo Guardrails /v1/checks", row).await? {
        Some(Competitor::Measured(row)) => rows.push(row),
        Some(Competitor::LeftOut(why)) => return Ok(Some(why)),
        None => {}
    }
    Ok(None)
}

/// Row `n`, measured if the plan wants it.
async fn step<T>(
    plan: Plan,
    n: u32,
    name: &str,
    row: impl Future<Output = Res<T>>,
) -> Res<Option<T>> {
    if !plan.wants(n) {
        return Ok(None);
    }
    eprint!("  {n} {name} ...");
    let t = Instant::now();
    let r = row.await;
    eprintln!(" {:.1} s", t.elapsed().as_secs_f64());
    r.map(Some).map_err(|e| format!("{n} {name}: {e}").into())
}

/// Builds the helper binaries next to this one (a `cargo run` builds only
/// the harness) and the `hookhost` users install (`scripts/dist`: static,
/// LTO, stripped), the one every row runs; returns the helpers' folder and
/// that binary.
fn ensure_helpers(root: &Path) -> Res<(PathBuf, PathBuf)> {
    let exe = std::env::current_exe()?;
    let bins = exe
        .parent()
        .ok_or("the harness has no folder")?
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "-q", "-p", "hookhost-bench", "--bins"]);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let helpers = [
        "bench-floor",
        "bench-hook",
        "bench-http-floor",
        "bench-mcp-server",
    ];
    match cmd.status() {
        Ok(s) if s.success() => {}
        other => {
            if helpers.iter().any(|h| !bins.join(h).exists()) {
                return Err(format!("building the helper binaries failed: {other:?}").into());
            }
        }
    }
    agents::build_connect_floor(root, &bins)?;
    Ok((bins, build_dist(root)?))
}

/// `scripts/dist`: the binary users install, built as they get it.
fn build_dist(root: &Path) -> Res<PathBuf> {
    eprintln!("building the hookhost users install (scripts/dist) ...");
    let mut cmd = std::process::Command::new(root.join("scripts").join("dist"));
    // What `cargo run` set for the harness would read as changed inputs to
    // build scripts that watch them (ring's), rebuilding half the tree.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_") || key.starts_with("CARGO_MANIFEST_") {
            cmd.env_remove(&*key);
        }
    }
    for key in [
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(key);
    }
    let out = cmd.stderr(std::process::Stdio::inherit()).output()?;
    let path = String::from_utf8_lossy(&out.stdout);
    let path = PathBuf::from(path.lines().last().unwrap_or("").trim());
    match out.status.success() && path.is_file() {
        true => Ok(path),
        false => Err(format!("scripts/dist failed ({}): see above", out.status).into()),
    }
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

/// Something called one call at a time: a [`Target`], a [`raw::Pipe`].
trait Call {
    async fn call_once(&mut self) -> Res<()>;
}

/// `n` sequential calls, each timed, in nanoseconds.
async fn samples(caller: &mut impl Call, n: usize) -> Res<Vec<u64>> {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        caller.call_once().await?;
        samples.push(t.elapsed().as_nanos() as u64);
    }
    Ok(samples)
}

impl Call for Target {
    async fn call_once(&mut self) -> Res<()> {
        self.call().await
    }
}

impl Target {
    /// `n` sequential calls, each timed, in nanoseconds.
    async fn samples(&self, n: usize) -> Res<Vec<u64>> {
        samples(&mut self.clone(), n).await
    }

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
    Ok(measure_counted(name, target, warmup, n, window).await?.0)
}

/// [`measure`], with how many calls were made in all.
async fn measure_counted(
    name: &'static str,
    target: &Target,
    warmup: usize,
    n: usize,
    window: Duration,
) -> Res<(Row, u64)> {
    for _ in 0..warmup {
        target.call().await?;
    }
    let latency = Latency::of(target.samples(n).await?);
    let mut calls = (warmup + n) as u64;
    let mut throughput = [0.0; 3];
    for (i, n) in IN_FLIGHT.iter().enumerate() {
        let (rate, done) = concurrent_counted(target, *n, window).await?;
        throughput[i] = rate;
        calls += done;
    }
    let row = Row {
        name,
        latency,
        throughput,
    };
    Ok((row, calls))
}

/// `tasks` callers each calling in a loop for `window`; calls per second.
async fn concurrent(target: &Target, tasks: usize, window: Duration) -> Res<f64> {
    Ok(concurrent_counted(target, tasks, window).await?.0)
}

/// [`concurrent`], with how many calls were made.
async fn concurrent_counted(target: &Target, tasks: usize, window: Duration) -> Res<(f64, u64)> {
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
    let done = done.load(Ordering::Relaxed);
    Ok((done as f64 / start.elapsed().as_secs_f64(), done))
}

fn one_hook_config(paths: &Paths, command: Vec<String>) -> Config {
    let mut config = Config::empty(&paths.bench_dir);
    config.processes.insert(
        "bench".into(),
        ProcessConfig::new(command, vec![Stage::BeforeTool]),
    );
    config
}

/// A row through a host started from `config`; every hook in it must have
/// answered every call, none failed, each in a process of its own.
async fn host_row(name: &'static str, config: Config, plan: Plan) -> Res<Row> {
    let hooks = config.processes.len() + config.remotes.len();
    let host = Host::start(config).await;
    let measured = async {
        checks::ready(&host, hooks)?;
        let target = Target::Host(host.clone(), Arc::new(params()));
        let (row, calls) =
            measure_counted(name, &target, plan.warmup, plan.sequential, plan.window).await?;
        checks::every_call(&host, calls)?;
        Ok(row)
    }
    .await;
    host.shutdown().await;
    measured
}

async fn rust_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let command = vec![paths.bin("bench-hook").display().to_string()];
    host_row(RUST_ROW, one_hook_config(paths, command), plan).await
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
    host_row(PYTHON_ROW, one_hook_config(paths, command), plan).await
}

/// Row 19: row 3's path to `bench/node_hook.mjs`, the same hook written with
/// the Node SDK (`sdk-node`), run by the `node` on PATH.
async fn node_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let command = vec![
        "node".to_string(),
        paths.script("node_hook.mjs").display().to_string(),
    ];
    host_row(NODE_ROW, one_hook_config(paths, command), plan).await
}

/// Row 12: row 3's path to `py_echo.py`, the least a Python hook can be
/// (stdlib json, no SDK), started the same way.
async fn python_echo_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let command = vec![
        paths.python.clone(),
        paths.script("py_echo.py").display().to_string(),
    ];
    host_row(PY_ECHO_ROW, one_hook_config(paths, command), plan).await
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

/// alone, for a profiler to watch.
/// `--profile rust|python|sidecar SECONDS IN_FLIGHT`: one hook row's load
/// alone, for a profiler to watch.
async fn profile_main(args: &[String]) -> Res<()> {
    let [which, secs, in_flight] = args else {
        return Err(
            "usage: [HOOKHOST_BIN=PATH] --profile rust|python|sidecar|http SECONDS IN_FLIGHT"
                .into(),
        );
    };
    let bench_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bins = std::env::current_exe()?
        .parent()
        .ok_or("no folder")?
        .to_path_buf();
    let root = bench_dir.parent().unwrap_or(&bench_dir).to_path_buf();
    // A profile wants symbols, which the binary users install has not:
    // `HOOKHOST_BIN=target/release/hookhost` profiles that one instead.
    let hookhost = match std::env::var_os("HOOKHOST_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => build_dist(&root)?,
    };
    let paths = Paths {
        hookhost,
        bench_dir,
        bins,
        python: resolve_python()?,
    };
    let window = Duration::from_secs_f64(secs.parse()?);
    if which == "http" {
        return agents::profile_http(&paths, secs.parse()?, in_flight.parse()?).await;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_names_rows_of_the_table_only() {
        let rows = row_set("9,18").expect("rows 9 and 18");
        let plan = Plan::new(true, false, Some(rows));
        let wanted: Vec<u32> = (1..=ROW_COUNT).filter(|n| plan.wants(*n)).collect();
        assert_eq!(wanted, [9, 18]);
        for bad in ["0", "20", "9,x", ""] {
            assert!(row_set(bad).is_err(), "{bad:?} accepted");
        }
        assert!(Plan::new(true, false, None).wants(18));
    }
}
