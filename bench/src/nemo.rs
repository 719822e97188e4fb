//! Row 18: the competitor, NeMo Guardrails, deciding the same Claude Code
//! PreToolUse call.
//!
//! NVIDIA's notes put NeMo Guardrails' hooks server in 0.25.0; the newest
//! release the registry serves is 0.24.1, which has none. So this row
//! measures 0.24.1's API server (`nemoguardrails.server.api`, FastAPI under
//! uvicorn, as its `nemoguardrails server` command runs it) answering
//! `POST /v1/checks` with one regex input rail and no model
//! (`bench/nemo/config`): the event's Bash command is the user message, and
//! `{"status":"passed",…}` is its allow. Its CLI binds 0.0.0.0 with no
//! option to change that, so `bench/nemo/serve.py` starts the same app the
//! CLI's way on a socket bound to 127.0.0.1; and as a production
//! deployment would, without the verbose trace its server hard-codes
//! (most of a check's time otherwise: the competitor at its best).
//!
//! The harness installs it itself, pinned (`bench/nemo/requirements.txt`),
//! into a venv under the target dir, once; where pip cannot install it
//! (no network), the row is left out and the report says why.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use super::agents::{
    Agent, HTTP_ROW, HttpCall, HttpConn, Sizes, claude_event, measure, post_request, scratch,
};
use super::report::{find, micros, rate, ratio};
use super::{Paths, Plan, Res, Row};

pub(super) const NEMO_ROW: &str = "18. NeMo Guardrails 0.24.1 `/v1/checks`, regex rail (no model)";

/// How long the server may take from spawn to answering `/v1/health`
/// (importing nemoguardrails alone takes seconds).
const READY_WITHIN: Duration = Duration::from_secs(90);

/// What became of the row.
pub(super) enum Competitor {
    Measured(Row),
    /// Why it was not measured, for the report.
    LeftOut(String),
}

/// Row 18, or why it was left out; an error is a failure of the row
/// itself (its server did not start, an answer was wrong).
pub(super) async fn nemo_row(paths: &Paths, plan: Plan) -> Res<Competitor> {
    let python = match venv(paths).await? {
        Ok(python) => python,
        Err(why) => return Ok(Competitor::LeftOut(why)),
    };
    let server = Server::start(paths, &python).await?;
    let measured = measure_server(server.addr, plan).await;
    server.finish(measured).await.map(Competitor::Measured)
}

/// The sanity check, then row 9's measurement against the server.
async fn measure_server(addr: SocketAddr, plan: Plan) -> Res<Row> {
    denies(addr).await?;
    let agent = Agent::Http(Arc::new(check_call(addr, &command()?)));
    let sizes = Sizes {
        warmup: plan.warmup,
        sequential: plan.sequential,
        window: plan.window,
    };
    Ok(measure(NEMO_ROW, &agent, sizes).await?.0)
}

/// The Bash command of the event the other agent rows send.
fn command() -> Res<String> {
    let event = claude_event();
    let command = event["tool_input"]["command"].as_str();
    Ok(command.ok_or("the event has no Bash command")?.to_string())
}

/// `POST /v1/checks` asking the input rails about `command` as a user
/// message. Its schema requires a model name; the regex rail never calls a
/// model (its log counts 0 LLM calls).
fn check_call(addr: SocketAddr, command: &str) -> HttpCall {
    HttpCall {
        addr,
        path: "/v1/checks",
        body: json!({
            "model": "none",
            "messages": [{"role": "user", "content": command}],
            "guardrails": {"config_id": "config", "rail_types": ["input"]},
        }),
        allows: passed,
        expected: "`{\"status\":\"passed\",…}`",
    }
}

/// Its allow: status `passed`, no rail named.
fn passed(body: &[u8]) -> bool {
    let answer: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    answer["status"] == "passed" && answer.get("rail").is_none()
}

/// Before measuring: a recursive force delete must come back blocked by
/// the regex rail, or the row would time a server that lets all through.
async fn denies(addr: SocketAddr) -> Res<()> {
    let call = check_call(addr, "rm -rf /home/agent/projects/hookhost");
    let mut conn = HttpConn::new(TcpStream::connect(addr).await?);
    let status = conn
        .exchange(&post_request(&addr.to_string(), &call)?)
        .await?;
    let answer: Value = serde_json::from_slice(&conn.body).unwrap_or(Value::Null);
    if status == 200 && answer["status"] == "blocked" && answer["rail"] == "regex check input" {
        return Ok(());
    }
    let body = String::from_utf8_lossy(&conn.body);
    Err(format!("`rm -rf` should be blocked by the regex rail; got {status}: {body}").into())
}

// ---------------------------------------------------------------- venv

/// The venv's python, with `bench/nemo/requirements.txt` installed: made
/// once under the target dir, installed again when that file changes;
/// `Err(why)` when it cannot be installed.
async fn venv(paths: &Paths) -> Res<Result<PathBuf, String>> {
    let target = paths
        .bins
        .parent()
        .ok_or("the binaries have no target dir")?;
    let venv = target.join("bench-nemo").join("venv");
    let python = venv.join("bin").join("python");
    let requirements = paths.bench_dir.join("nemo").join("requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)?;
    let stamp = venv.join("requirements.installed");
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_ref() == Some(&wanted) {
        return Ok(Ok(python));
    }
    eprint!(" installing NeMo Guardrails into {} ...", venv.display());
    if let Err(why) = install(paths, &venv, &requirements).await {
        return Ok(Err(why));
    }
    std::fs::write(&stamp, wanted)?;
    Ok(Ok(python))
}

/// Makes the venv unless it is there, then pip-installs `requirements`
/// into it; `Err` says which step failed and how.
async fn install(paths: &Paths, venv: &Path, requirements: &Path) -> Result<(), String> {
    let python = venv.join("bin").join("python");
    if !python.exists() {
        let venv = venv.display().to_string();
        run(Path::new(&paths.python), &["-m", "venv", &venv]).await?;
    }
    let requirements = requirements.display().to_string();
    let pip = ["-m", "pip", "install", "--disable-pip-version-check"];
    run(
        &python,
        &[&pip[..], &["--no-input", "-q", "-r", &requirements]].concat(),
    )
    .await
}

/// Runs `program args`; `Err` says what failed, with the end of its output.
async fn run(program: &Path, args: &[&str]) -> Result<(), String> {
    let what = format!("`{} {}`", program.display(), args.join(" "));
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| format!("{what} could not run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = said.lines().rev().take(3).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!(
        "{what} failed ({}): {}",
        out.status,
        tail.join(" / ")
    ))
}

// ---------------------------------------------------------------- server

/// `serve.py` running, its output in a log file of its own scratch folder.
struct Server {
    child: Child,
    dir: PathBuf,
    log: PathBuf,
    addr: SocketAddr,
}

impl Server {
    /// Spawns the server, reads its address from its log and waits until
    /// `GET /v1/health` answers 200.
    async fn start(paths: &Paths, python: &Path) -> Res<Server> {
        let dir = scratch("nemo");
        std::fs::create_dir_all(&dir)?;
        let log = dir.join("server.log");
        let out = std::fs::File::create(&log)?;
        let nemo = paths.bench_dir.join("nemo");
        let child = Command::new(python)
            .arg(nemo.join("serve.py"))
            .arg(nemo.join("config"))
            .current_dir(&dir)
            .env("NEMO_GUARDRAILS_NO_USAGE_STATS", "1")
            .env("DO_NOT_TRACK", "1")
            .env("HF_HUB_OFFLINE", "1")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .kill_on_drop(true)
            .spawn()?;
        let mut server = Server {
            child,
            dir,
            log,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        match server.wait_ready().await {
            Ok(()) => Ok(server),
            Err(e) => Err(server.failed(e).await),
        }
    }

    /// Its address from the log's `listening on` line, then its health.
    async fn wait_ready(&mut self) -> Res<()> {
        let deadline = Instant::now() + READY_WITHIN;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Err(format!("the server exited with {status}").into());
            }
            if self.addr.port() == 0 {
                self.addr = self.listening_on()?.unwrap_or(self.addr);
            } else if healthy(self.addr).await {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("the server was not ready within {READY_WITHIN:?}").into())
    }

    /// The address `serve.py` printed, once it has.
    fn listening_on(&self) -> Res<Option<SocketAddr>> {
        let log = std::fs::read_to_string(&self.log)?;
        let line = log.lines().find_map(|l| l.strip_prefix("listening on "));
        match line {
            Some(addr) if addr.starts_with("127.0.0.1:") => Ok(Some(addr.trim().parse()?)),
            Some(addr) => Err(format!("the server listens on {addr}, not loopback").into()),
            None => Ok(None),
        }
    }

    /// Stops the server after the row: the row, or the first failure.
    async fn finish(self, measured: Res<Row>) -> Res<Row> {
        match measured {
            Ok(row) => self.stop().await.map(|()| row),
            Err(e) => Err(self.failed(e).await),
        }
    }

    /// `e`, with the end of the server's log; the server stopped.
    async fn failed(self, e: super::Error) -> super::Error {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let _ = self.stop().await;
        format!("{e}\n  the server's log ends:\n    {}", tail.join("\n    ")).into()
    }

    /// SIGTERM, as uvicorn expects to be stopped, SIGKILL if it has not
    /// exited within 10 s; its folder removed either way.
    async fn stop(mut self) -> Res<()> {
        let pid = self.child.id().ok_or("the server has exited already")?;
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
        let waited = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        let _ = std::fs::remove_dir_all(&self.dir);
        if waited.is_ok() {
            return Ok(());
        }
        let _ = self.child.kill().await;
        Err("the NeMo server did not exit within 10 s of SIGTERM (killed)".into())
    }
}

/// Whether `GET /v1/health` answers 200.
async fn healthy(addr: SocketAddr) -> bool {
    let Ok(stream) = TcpStream::connect(addr).await else {
        return false;
    };
    let mut conn = HttpConn::new(stream);
    let asked = tokio::time::timeout(Duration::from_secs(5), conn.get("/v1/health"));
    matches!(asked.await, Ok(Ok(200)))
}

// ---------------------------------------------------------------- report

/// The paragraph under the table: which NeMo server, how bound, its rail;
/// or why the row is missing.
pub(super) fn summary(rows: &[Row], left_out: Option<&str>) -> String {
    if let Some(why) = left_out {
        return format!(
            "Competitor (row 18): NeMo Guardrails was **not measured** in this run: {why}.\n\n"
        );
    }
    let (Some(nemo), Some(http)) = (find(rows, NEMO_ROW), find(rows, HTTP_ROW)) else {
        return String::new();
    };
    format!(
        "Competitor (row 18): NeMo Guardrails 0.24.1, the newest release on PyPI, which has no \
         hooks server (NVIDIA's notes put that in 0.25.0). Measured instead: its API server \
         (`nemoguardrails.server.api`'s FastAPI app under uvicorn, the `server` extra's packages \
         pinned in `bench/nemo/requirements.txt`), started as its `nemoguardrails server` command \
         starts it, but on a socket bound to 127.0.0.1 (the command binds 0.0.0.0 and has no \
         option for it) and, as a production deployment would run it, without the verbose trace \
         its server hard-codes for every config (`LLMRails(…, verbose=True)`: a console trace of \
         every event, most of a check's time), warnings only, no access log (`bench/nemo/serve.py`). \
         Its config (`bench/nemo/config`) has one regex input rail denying `rm -rf`-style commands \
         and no model: no model is called, only the regex. Each call POSTs `/v1/checks` with the \
         event's Bash command as the user message (kept-alive connections, measured as row 9), and \
         each answer must be `\"status\":\"passed\"`; before measuring, an `rm -rf` command must \
         come back blocked by that rail. p50 **{}**, row 9's {} ({} lower); at 64 connections {}, \
         row 9's {} ({}).\n\n",
        micros(nemo.latency.p50),
        micros(http.latency.p50),
        ratio(nemo.latency.p50 as f64 / http.latency.p50.max(1) as f64),
        rate(nemo.throughput[2]),
        rate(http.throughput[2]),
        ratio(http.throughput[2] / nemo.throughput[2].max(1e-9)),
    )
}

/// Issue 35's targets against it: hookhost's HTTP route (row 9) ≥ 10× its
/// throughput at 8 and at 64 connections, and ≤ 0.1× its p50.
pub(super) fn targets(rows: &[Row]) -> Vec<(String, bool, String)> {
    let (Some(nemo), Some(http)) = (find(rows, NEMO_ROW), find(rows, HTTP_ROW)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, conns) in [(1, 8), (2, 64)] {
        let (h, n) = (http.throughput[i], nemo.throughput[i]);
        out.push((
            format!("HTTP route (row 9) at {conns} connections ≥ 10× NeMo Guardrails' (row 18)"),
            h >= 10.0 * n,
            format!("{} vs {} ({})", rate(h), rate(n), ratio(h / n.max(1e-9))),
        ));
    }
    let (h, n) = (http.latency.p50 as f64, nemo.latency.p50 as f64);
    out.push((
        "HTTP route (row 9) p50 ≤ 0.1× NeMo Guardrails' (row 18)".into(),
        h <= 0.1 * n,
        format!(
            "{} vs {} ({} lower)",
            micros(http.latency.p50),
            micros(nemo.latency.p50),
            ratio(n / h.max(1.0))
        ),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_passed_answer_without_a_rail_counts_as_allow() {
        assert!(passed(br#"{"status":"passed","content":"ls"}"#));
        let blocked = br#"{"status":"blocked","content":"I'm sorry","rail":"regex check input"}"#;
        assert!(!passed(blocked));
        assert!(!passed(br#"{"status":"passed","content":"ls","rail":"x"}"#));
        assert!(!passed(br#"{"detail":"messages must be non-empty"}"#));
        assert!(!passed(b"Internal Server Error"));
    }

    #[test]
    fn the_check_asks_the_input_rails_about_the_events_command() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 9));
        let command = command().expect("the event has a command");
        let call = check_call(addr, &command);
        assert_eq!(call.body["messages"][0]["content"], command.as_str());
        assert_eq!(call.body["guardrails"]["rail_types"], json!(["input"]));
    }
}
