//! Rows 9 to 11: one hook decision of an agent that cannot embed hookhost
//! (Claude Code here), reached the ways those agents can reach it.
//!
//! 9. its `type: "http"` hook POSTs the PreToolUse event to
//!    `hookhost serve --listen ADDR` at `/hooks/claude-code`, over a
//!    connection kept alive between calls (as Node's fetch does);
//! 10. its command hook is `hookhost relay --dialect claude-code --connect
//!     SOCKET`: one small native process per call, with the event on stdin,
//!     forwarding it to `hookhost serve --socket SOCKET`;
//! 11. the comparison: the same event fed to a Python command hook spawned
//!     per call (`sh -c "<python> oneshot_guard.py"`), as these agents run
//!     hooks today.
//!
//! In rows 9 and 10 the daemon's chain is the Rust SDK hook of row 2 (a
//! process hook) answering `continue`, so Claude reads allow: `{}` from the
//! HTTP route, exit 0 and no output from the relay and the Python hook.
//! Every answer is checked, and at the end of rows 9 and 10 the daemon's
//! own `GET /status` must count exactly the calls made, all of them through
//! the hook, none failed.

use std::net::SocketAddr;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixStream};
use tokio::process::{Child, ChildStdout, Command};

use super::report::find;
use super::{IN_FLIGHT, Latency, Paths, Plan, Res, Row, params, ratio, write_hook_config};

pub(super) const HTTP_ROW: &str = "9. Claude Code HTTP hook → `hookhost serve` → Rust SDK hook";
const RELAY_ROW: &str =
    "10. Claude Code command hook: `hookhost relay` per call → daemon → Rust SDK hook";
const PYTHON_ROW: &str = "11. Claude Code command hook: sh -c python guard per call";
pub(super) const HTTP_FLOOR_ROW: &str =
    "16. floor of row 9: minimal tokio HTTP/1.1 server answering `{}`, no chain";
pub(super) const RELAY_FLOOR_ROW: &str =
    "17. floor of row 10: static binary per call, reads stdin, connects to the socket, exits";

/// The PreToolUse event Claude Code sends (to a command hook's stdin or an
/// HTTP hook's body) for the work of the other rows: its Bash call with
/// the params' arguments as `tool_input` (hookhost maps Bash to `shell`).
pub(super) fn claude_event() -> Value {
    let p = params();
    json!({
        "session_id": "3f2b8c1e-7a4d-4e5f-9b21-6c8d0e1f2a3b",
        "transcript_path": "/home/agent/.claude/projects/-home-agent-projects-hookhost/3f2b8c1e-7a4d-4e5f-9b21-6c8d0e1f2a3b.jsonl",
        "cwd": "/home/agent/projects/hookhost",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": p["arguments"],
        "tool_use_id": "toolu_01A01Xq7bK2mV9sR4tY8wZ3nP"
    })
}

/// The event's size in bytes, as sent.
pub(super) fn event_bytes() -> usize {
    serde_json::to_vec(&claude_event()).map_or(0, |v| v.len())
}

// ---------------------------------------------------------------- HTTP/1.1

/// A kept-alive HTTP/1.1 connection: requests written whole, answers read
/// by their `Content-Length`.
pub(super) struct HttpConn<S> {
    io: BufReader<S>,
    line: String,
    pub(super) body: Vec<u8>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> HttpConn<S> {
    pub(super) fn new(stream: S) -> HttpConn<S> {
        HttpConn {
            io: BufReader::with_capacity(16 * 1024, stream),
            line: String::with_capacity(256),
            body: Vec::with_capacity(1024),
        }
    }

    /// Sends one request; the answer's status (its body in `self.body`).
    pub(super) async fn exchange(&mut self, request: &[u8]) -> Res<u16> {
        let stream = self.io.get_mut();
        stream.write_all(request).await?;
        stream.flush().await?;
        let (status, len) = self.read_head().await?;
        self.body.resize(len, 0);
        self.io.read_exact(&mut self.body).await?;
        Ok(status)
    }

    /// The status and `Content-Length` of the answer's head.
    async fn read_head(&mut self) -> Res<(u16, usize)> {
        let (mut status, mut len) = (None, None);
        loop {
            self.line.clear();
            if self.io.read_line(&mut self.line).await? == 0 {
                return Err("the daemon closed the connection".into());
            }
            let line = self.line.trim_end();
            if line.is_empty() {
                break;
            }
            if status.is_none() {
                status = line.split(' ').nth(1).and_then(|s| s.parse().ok());
            } else if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    len = value.trim().parse().ok();
                }
            }
        }
        match (status, len) {
            (Some(s), Some(n)) => Ok((s, n)),
            _ => Err("an answer without a status or a Content-Length".into()),
        }
    }

    /// `GET /status`, as JSON.
    async fn status(&mut self) -> Res<Value> {
        match self.get("/status").await? {
            200 => Ok(serde_json::from_slice(&self.body)?),
            s => Err(format!("GET /status answered {s}").into()),
        }
    }

    /// `GET path`: the answer's status (its body in `self.body`).
    pub(super) async fn get(&mut self, path: &str) -> Res<u16> {
        let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        self.exchange(request.as_bytes()).await
    }
}

/// One POST of `call.body` to `call.path` as Node's fetch writes it; the
/// body is serialized per call, as an agent does.
pub(super) fn post_request(host: &str, call: &HttpCall) -> Res<Vec<u8>> {
    let body = serde_json::to_vec(&call.body)?;
    let mut out = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nConnection: keep-alive\r\n\
         Content-Type: application/json\r\nAccept: */*\r\nContent-Length: {}\r\n\r\n",
        call.path,
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    Ok(out)
}

/// What one HTTP row POSTs, where, and which answer is its allow: rows
/// differ in their server's route, request and answer, not in the client.
pub(super) struct HttpCall {
    pub(super) addr: SocketAddr,
    pub(super) path: &'static str,
    pub(super) body: Value,
    /// Whether a 200 answer's body is the allow this row expects.
    pub(super) allows: fn(&[u8]) -> bool,
    /// That allow, for the error when another answer comes.
    pub(super) expected: &'static str,
}

/// Row 9's allow: Claude Code's HTTP hook reads `{}` as "no objection".
fn empty_object(body: &[u8]) -> bool {
    body == b"{}"
}

// ---------------------------------------------------------------- callers

/// A command run per call with the event on stdin, as an agent runs a
/// command hook: stdout and stderr read, exit awaited.
pub(super) struct Spawn {
    program: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
    input: Vec<u8>,
}

impl Spawn {
    /// One call; allow is exit 0 with nothing on stdout or stderr.
    async fn call(&self) -> Res<()> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        stdin.write_all(&self.input).await?;
        drop(stdin);
        let out = child.wait_with_output().await?;
        let said = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        let (stdout, stderr) = (said(&out.stdout), said(&out.stderr));
        if out.status.success() && stdout.is_empty() && stderr.is_empty() {
            return Ok(());
        }
        Err(format!(
            "expected allow (exit 0, no output), got {}: stdout {stdout:?}, stderr {stderr:?}",
            out.status
        )
        .into())
    }
}

/// How an agent reaches the decision; each caller task gets its own
/// [`Conn`] from it.
#[derive(Clone)]
pub(super) enum Agent {
    Http(Arc<HttpCall>),
    Spawn(Arc<Spawn>),
}

/// One caller's means: its own kept-alive connection, or the command.
enum Conn {
    Http(Box<HttpConn<TcpStream>>, String, Arc<HttpCall>),
    Spawn(Arc<Spawn>),
}

impl Agent {
    async fn connect(&self) -> Res<Conn> {
        match self {
            Agent::Http(call) => {
                let stream = TcpStream::connect(call.addr).await?;
                stream.set_nodelay(true)?;
                let conn = Box::new(HttpConn::new(stream));
                Ok(Conn::Http(conn, call.addr.to_string(), call.clone()))
            }
            Agent::Spawn(spawn) => Ok(Conn::Spawn(spawn.clone())),
        }
    }
}

impl Conn {
    /// One decision, checked to be allow.
    async fn call(&mut self) -> Res<()> {
        match self {
            Conn::Http(conn, host, call) => {
                let request = post_request(host, call)?;
                let status = conn.exchange(&request).await?;
                if status == 200 && (call.allows)(&conn.body) {
                    return Ok(());
                }
                let body = String::from_utf8_lossy(&conn.body).into_owned();
                let expected = call.expected;
                Err(format!("expected 200 {expected}, got {status}: {body}").into())
            }
            Conn::Spawn(spawn) => spawn.call().await,
        }
    }
}

// ---------------------------------------------------------------- measuring

/// How one row is measured.
pub(super) struct Sizes {
    pub(super) warmup: usize,
    pub(super) sequential: usize,
    pub(super) window: Duration,
}

/// Sequential latency on one caller, then throughput with 1, 8 and 64
/// callers; the row and how many calls were made in all.
pub(super) async fn measure(name: &'static str, agent: &Agent, sizes: Sizes) -> Res<(Row, u64)> {
    let mut conn = agent.connect().await?;
    for _ in 0..sizes.warmup {
        conn.call().await?;
    }
    let mut samples = Vec::with_capacity(sizes.sequential);
    for _ in 0..sizes.sequential {
        let t = Instant::now();
        conn.call().await?;
        samples.push(t.elapsed().as_nanos() as u64);
    }
    drop(conn);
    let mut calls = (sizes.warmup + sizes.sequential) as u64;
    let mut throughput = [0.0; 3];
    for (i, n) in IN_FLIGHT.iter().enumerate() {
        let (rate, done) = concurrent(agent, *n, sizes.window).await?;
        throughput[i] = rate;
        calls += done;
    }
    let latency = Latency::of(samples);
    Ok((
        Row {
            name,
            latency,
            throughput,
        },
        calls,
    ))
}

/// `tasks` callers, each with its own connection opened before the clock
/// starts, calling in a loop for `window`; calls per second and calls made.
async fn concurrent(agent: &Agent, tasks: usize, window: Duration) -> Res<(f64, u64)> {
    let mut conns = Vec::with_capacity(tasks);
    for _ in 0..tasks {
        conns.push(agent.connect().await?);
    }
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + window;
    let mut set = tokio::task::JoinSet::new();
    for mut conn in conns {
        let done = done.clone();
        set.spawn(async move {
            while Instant::now() < end {
                conn.call().await?;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<(), super::Error>(())
        });
    }
    while let Some(r) = set.join_next().await {
        r??;
    }
    let done = done.load(Ordering::Relaxed);
    Ok((done as f64 / start.elapsed().as_secs_f64(), done))
}

// ---------------------------------------------------------------- daemon

/// `hookhost serve` with row 2's hook, in a folder of its own (its config
/// and, for the relay row, its socket: never the user's runtime dir).
struct Daemon {
    child: Child,
    dir: PathBuf,
    /// What it printed after `listening on `.
    at: String,
    /// Kept open: the daemon's stdout.
    _stdout: BufReader<ChildStdout>,
}

impl Daemon {
    /// Starts `hookhost serve -c DIR/hooks.json --no-watch ARGS` in `dir`
    /// and waits for its `listening on` line.
    async fn start(paths: &Paths, dir: PathBuf, args: &[String]) -> Res<Daemon> {
        // Its user's only, as the daemon's runtime dir would be.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        write_hook_config(paths, &dir)?;
        let mut command = Command::new(paths.hookhost.clone());
        command
            .arg("serve")
            .arg("-c")
            .arg(dir.join("hooks.json"))
            .arg("--no-watch")
            .args(args);
        Daemon::spawn(command, dir).await
    }

    /// Starts `hookhost serve --socket` in a scratch folder of `row`'s,
    /// checked to listen on that socket; the daemon and its socket.
    async fn on_socket(paths: &Paths, row: &str) -> Res<(Daemon, PathBuf)> {
        let dir = scratch(row);
        let socket = dir.join("hookhost.sock");
        let args = ["--socket".to_string(), socket.display().to_string()];
        let daemon = Daemon::start(paths, dir, &args).await?;
        if daemon.at != format!("unix:{}", socket.display()) {
            let at = daemon.at.clone();
            daemon.stop().await?;
            return Err(format!("hookhost serve listens on {at:?}").into());
        }
        Ok((daemon, socket))
    }

    /// Starts `command` (a server that prints `listening on ADDR` first)
    /// and waits for that line; `dir` is removed when it stops.
    async fn spawn(mut command: Command, dir: PathBuf) -> Res<Daemon> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut line))
            .await
            .map_err(|_| "the server printed no address within 10 s")??;
        let at = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| format!("the server printed {line:?}"))?
            .to_string();
        Ok(Daemon {
            child,
            dir,
            at,
            _stdout: stdout,
        })
    }

    /// The TCP address of a server listening on `ws://ADDR`.
    fn tcp_addr(&self) -> Res<SocketAddr> {
        Ok(self
            .at
            .strip_prefix("ws://")
            .ok_or_else(|| format!("the server listens on {:?}", self.at))?
            .parse()?)
    }

    /// Stops the daemon after a row measured against it: the row, or the
    /// first of the two failures.
    async fn finish(self, measured: Res<Row>) -> Res<Row> {
        let stopped = self.stop().await;
        let row = measured?;
        stopped?;
        Ok(row)
    }

    /// Kills a server that has no orderly stop (the floors).
    async fn kill(mut self) {
        let _ = self.child.kill().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    /// SIGTERM, as a service manager stops it; it must exit 0 within 10 s.
    async fn stop(mut self) -> Res<()> {
        let pid = self.child.id().ok_or("the daemon has exited already")?;
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()?;
        if !sent.success() {
            return Err(format!("kill -TERM {pid} failed").into());
        }
        let waited = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        let _ = std::fs::remove_dir_all(&self.dir);
        match waited {
            Ok(status) if status.as_ref().is_ok_and(|s| s.success()) => Ok(()),
            Ok(status) => Err(format!("the daemon ended badly after SIGTERM: {status:?}").into()),
            Err(_) => Err("the daemon did not exit within 10 s of SIGTERM".into()),
        }
    }
}

/// A fresh folder for one row's server.
pub(super) fn scratch(row: &str) -> PathBuf {
    std::env::temp_dir().join(format!("hookhost-bench-{row}-{}", std::process::id()))
}

/// Whether the daemon's status counts `calls` Claude Code events, each a
/// call of its one hook, none failed.
fn check_counts(status: &Value, calls: u64) -> Res<()> {
    let agent = status["agents"]["claude-code"]["calls"].as_u64();
    let hooks = status["hooks"].as_array().map_or(&[][..], Vec::as_slice);
    let hook = match hooks {
        [hook] => hook,
        _ => return Err(format!("expected one hook in the daemon: {status}").into()),
    };
    let seen = (agent, hook["calls"].as_u64(), hook["errors"].as_u64());
    if seen == (Some(calls), Some(calls), Some(0)) {
        return Ok(());
    }
    Err(
        format!("made {calls} calls; the daemon counts (events, hook calls, hook errors) {seen:?}")
            .into(),
    )
}

// ---------------------------------------------------------------- rows

/// Row 9: the HTTP route, kept-alive connections.
pub(super) async fn http_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let listen = ["--listen".to_string(), "127.0.0.1:0".to_string()];
    let daemon = Daemon::start(paths, scratch("http"), &listen).await?;
    let measured = async {
        let addr = daemon.tcp_addr()?;
        let (row, calls) = measure(HTTP_ROW, &http_agent(addr), plan_sizes(plan)).await?;
        let mut conn = HttpConn::new(TcpStream::connect(addr).await?);
        check_counts(&conn.status().await?, calls)?;
        Ok::<Row, super::Error>(row)
    }
    .await;
    daemon.finish(measured).await
}

/// Claude Code's HTTP hook POSTing its event to `addr`.
fn http_agent(addr: SocketAddr) -> Agent {
    Agent::Http(Arc::new(HttpCall {
        addr,
        path: "/hooks/claude-code",
        body: claude_event(),
        allows: empty_object,
        expected: "`{}`",
    }))
}

/// The sizes of the rows making one call per request.
fn plan_sizes(plan: Plan) -> Sizes {
    Sizes {
        warmup: plan.warmup,
        sequential: plan.sequential,
        window: plan.window,
    }
}

/// Row 16: row 9's requests to `bench-http-floor`, the same stack
/// answering the same bytes with no chain behind it.
pub(super) async fn http_floor_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let server = Command::new(paths.bin("bench-http-floor"));
    let floor = Daemon::spawn(server, scratch("http-floor")).await?;
    let measured = async {
        let agent = http_agent(floor.tcp_addr()?);
        Ok(measure(HTTP_FLOOR_ROW, &agent, plan_sizes(plan)).await?.0)
    }
    .await;
    floor.kill().await;
    measured
}

/// `--profile http SECONDS IN_FLIGHT`: row 9's daemon under that many
/// kept-alive connections for that long, its pid printed first, to
/// attach a profiler to.
pub(super) async fn profile_http(paths: &Paths, secs: f64, in_flight: usize) -> Res<()> {
    let listen = ["--listen".to_string(), "127.0.0.1:0".to_string()];
    let daemon = Daemon::start(paths, scratch("http"), &listen).await?;
    println!("daemon pid {:?}", daemon.child.id());
    let window = Duration::from_secs_f64(secs);
    let measured = async {
        let (rate, _) = concurrent(&http_agent(daemon.tcp_addr()?), in_flight, window).await?;
        println!("http: {rate:.0} calls/s at {in_flight} connections");
        Ok(())
    }
    .await;
    let stopped = daemon.stop().await;
    measured.and(stopped)
}

/// The sizes of the rows that spawn a process per call (as row 4).
fn spawn_sizes(plan: Plan) -> Sizes {
    Sizes {
        warmup: plan.warmup.min(10),
        sequential: plan.oneshot_sequential,
        window: plan.oneshot_window,
    }
}

/// Row 10: `hookhost relay` per call, the daemon on a socket.
pub(super) async fn relay_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let (daemon, socket) = Daemon::on_socket(paths, "relay").await?;
    let measured = async {
        let relay = Spawn {
            program: paths.hookhost.clone(),
            args: ["relay", "--dialect", "claude-code", "--connect"]
                .map(String::from)
                .into_iter()
                .chain([socket.display().to_string()])
                .collect(),
            dir: paths.bench_dir.clone(),
            input: serde_json::to_vec(&claude_event())?,
        };
        let agent = Agent::Spawn(Arc::new(relay));
        let (row, calls) = measure(RELAY_ROW, &agent, spawn_sizes(plan)).await?;
        check_counts(&unix_status(&socket).await?, calls)?;
        Ok::<Row, super::Error>(row)
    }
    .await;
    daemon.finish(measured).await
}

/// Row 17: the relay's floor, `bench-connect-floor` spawned per call
/// against a running daemon's socket, as row 10 spawns the relay.
pub(super) async fn relay_floor_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let (daemon, socket) = Daemon::on_socket(paths, "relay-floor").await?;
    let measured = async {
        let floor = Spawn {
            program: paths.bin(CONNECT_FLOOR),
            args: vec![socket.display().to_string()],
            dir: paths.bench_dir.clone(),
            input: serde_json::to_vec(&claude_event())?,
        };
        let agent = Agent::Spawn(Arc::new(floor));
        Ok(measure(RELAY_FLOOR_ROW, &agent, spawn_sizes(plan)).await?.0)
    }
    .await;
    daemon.finish(measured).await
}

/// The relay floor's executable, built by [`build_connect_floor`].
pub(super) const CONNECT_FLOOR: &str = "bench-connect-floor";

/// Builds `bench/floor/connect.rs` as a static executable into `bins`
/// (cargo cannot link one binary of a package statically and not the
/// others, so rustc is called directly).
pub(super) fn build_connect_floor(root: &Path, bins: &Path) -> Res<()> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let status = std::process::Command::new(rustc)
        .args(["--edition", "2024", "-O", "-C", "panic=abort"])
        .args(["-C", "target-feature=+crt-static", "-o"])
        .arg(bins.join(CONNECT_FLOOR))
        .arg(root.join("bench").join("floor").join("connect.rs"))
        .status()?;
    match status.success() {
        true => Ok(()),
        false => Err(format!("building {CONNECT_FLOOR} failed: {status}").into()),
    }
}

/// The daemon's `GET /status` on its socket.
async fn unix_status(socket: &Path) -> Res<Value> {
    HttpConn::new(UnixStream::connect(socket).await?)
        .status()
        .await
}

/// Row 11: the comparison, row 4's guard fed Claude's event and run as
/// Claude runs a command hook.
pub(super) async fn python_row(paths: &Paths, plan: Plan) -> Res<Row> {
    let guard = Spawn {
        program: "sh".into(),
        args: vec!["-c".into(), format!("{} oneshot_guard.py", paths.python)],
        dir: paths.bench_dir.clone(),
        input: serde_json::to_vec(&claude_event())?,
    };
    let agent = Agent::Spawn(Arc::new(guard));
    Ok(measure(PYTHON_ROW, &agent, spawn_sizes(plan)).await?.0)
}

// ---------------------------------------------------------------- report

/// The paragraph under the table about rows 9 to 11.
pub(super) fn summary(rows: &[Row], plan: Plan) -> String {
    let (Some(http), Some(relay), Some(py)) = (
        find(rows, HTTP_ROW),
        find(rows, RELAY_ROW),
        find(rows, PYTHON_ROW),
    ) else {
        return String::new();
    };
    let faster = |r: &Row| ratio(py.latency.p50 as f64 / r.latency.p50.max(1) as f64);
    let row4 = rows.iter().find(|r| r.name.starts_with("4. "));
    let row4 = row4.map_or(String::new(), |r| {
        format!(
            " (row 4, the params object: {})",
            super::micros(r.latency.p50)
        )
    });
    format!(
        "Agents (rows 9 to 11): one Claude Code PreToolUse event ({} bytes: `tool_name` Bash, \
         `tool_input` the params object's `arguments`, with `session_id`, `transcript_path`, `cwd`, \
         `permission_mode`, `hook_event_name`, `tool_use_id`), decided allow. In rows 9 and 10 the \
         chain is row 2's hook in `hookhost serve`. Row 9 POSTs the event to `/hooks/claude-code` \
         ({} sequential calls on one kept-alive connection, then 1, 8 and 64 kept-alive \
         connections). Row 10 spawns `hookhost relay --dialect claude-code --connect SOCKET` \
         directly (no shell), row 11 `sh -c \"python3 oneshot_guard.py\"`, per call, the event on \
         stdin, stdout and stderr read, the exit awaited ({} sequential calls, then 1, 8 and 64 \
         spawning at once). Every answer is checked, and the daemon's own status must count every \
         call, each through its hook. p50: HTTP route **{}** ({} faster than row 11), relay \
         **{}** ({} faster), Python command hook per call **{}**{row4}.\n\n",
        event_bytes(),
        plan.sequential,
        plan.oneshot_sequential,
        super::micros(http.latency.p50),
        faster(http),
        super::micros(relay.latency.p50),
        faster(relay),
        super::micros(py.latency.p50),
    )
}

/// Issue 35's: the HTTP route (row 9) and the relay (row 10) against
/// their floors (rows 16 and 17), measured the same way in the same run.
pub(super) fn floor_targets(rows: &[Row]) -> Vec<(String, bool, String)> {
    let (Some(http), Some(http_floor), Some(relay), Some(relay_floor)) = (
        find(rows, HTTP_ROW),
        find(rows, HTTP_FLOOR_ROW),
        find(rows, RELAY_ROW),
        find(rows, RELAY_FLOOR_ROW),
    ) else {
        return Vec::new();
    };
    let (at8, at64, floor64) = (
        http.throughput[1],
        http.throughput[2],
        http_floor.throughput[2],
    );
    let p50 = |r: &Row| r.latency.p50 as f64;
    let vs = |a: f64, b: f64, show: fn(f64) -> String| {
        format!("{} vs {} ({})", show(a), show(b), ratio(a / b.max(1e-9)))
    };
    let us = |ns: f64| super::micros(ns as u64);
    vec![
        (
            "HTTP route (row 9): 64 connections ≥ 8 connections".into(),
            at64 >= at8,
            vs(at64, at8, super::report::rate),
        ),
        (
            "HTTP route (row 9) at 64 connections ≥ 0.5× its floor's (row 16)".into(),
            at64 >= 0.5 * floor64,
            vs(at64, floor64, super::report::rate),
        ),
        (
            "HTTP route (row 9) p50 ≤ 1.3× its floor's (row 16)".into(),
            p50(http) <= 1.3 * p50(http_floor),
            vs(p50(http), p50(http_floor), us),
        ),
        (
            "`hookhost relay` (row 10) p50 ≤ 1.5× its floor's (row 17)".into(),
            p50(relay) <= 1.5 * p50(relay_floor),
            vs(p50(relay), p50(relay_floor), us),
        ),
    ]
}

/// Issue 18's targets for rows 9 and 10.
pub(super) fn targets(rows: &[Row]) -> Vec<(String, bool, String)> {
    let (Some(http), Some(relay), Some(py)) = (
        find(rows, HTTP_ROW),
        find(rows, RELAY_ROW),
        find(rows, PYTHON_ROW),
    ) else {
        return Vec::new();
    };
    let p50 = |r: &Row| r.latency.p50 as f64;
    let faster = |r: &Row| format!("{} faster", ratio(p50(py) / p50(r).max(1.0)));
    vec![
        (
            "Claude Code HTTP route (row 9) p50 ≤ 1 ms".into(),
            p50(http) <= 1e6,
            super::micros(http.latency.p50),
        ),
        (
            "`hookhost relay` (row 10) p50 ≤ 5 ms".into(),
            p50(relay) <= 5e6,
            super::micros(relay.latency.p50),
        ),
        (
            "HTTP route p50 ≥ 20× faster than the per-call Python hook (row 11)".into(),
            p50(py) >= 20.0 * p50(http),
            faster(http),
        ),
        (
            "relay p50 ≥ 20× faster than the per-call Python hook (row 11)".into(),
            p50(py) >= 20.0 * p50(relay),
            faster(relay),
        ),
    ]
}
