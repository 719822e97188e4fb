//! Simulated agent sessions for the fleet test: each keeps one HTTP/1.1
//! connection to the balancer and sends Claude Code-shaped hook events
//! (what its HTTP hooks POST) with a pause between them, as a model's
//! turn would make; every answer is recorded with when it came, how long
//! it took, what it said and which replica gave it.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// What a session sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A PreToolUse of a tool nothing denies.
    Allowed,
    /// A PreToolUse of a tool a builtin denies.
    Denied,
    /// A Stop, which a hook always blocks.
    Stop,
}

/// One event's fate.
#[derive(Debug, Clone)]
pub struct Sample {
    pub session: String,
    pub kind: Kind,
    /// When it was sent, from the run's start.
    pub at: Duration,
    pub took: Duration,
    /// The HTTP status; 0 when no answer came (reset, timeout).
    pub status: u16,
    /// Which replica answered (`X-Served-By`).
    pub served_by: String,
    /// The answer refused the tool call or blocked the stop.
    pub refused: bool,
    /// The answer's system message, if any.
    pub message: String,
}

/// How the sessions run.
pub struct Plan {
    pub port: u16,
    pub token: String,
    pub sessions: usize,
    pub run_for: Duration,
    /// The pause between two events of a session.
    pub think: Duration,
}

/// Runs `plan`'s sessions until its time is up; every sample.
pub async fn run(plan: Plan) -> Vec<Sample> {
    let samples = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let plan = Arc::new(plan);
    let mut tasks = Vec::new();
    for n in 0..plan.sessions {
        let (plan, samples) = (plan.clone(), samples.clone());
        tasks.push(tokio::spawn(async move {
            // Spread the starts over a session's length, as agents do not
            // all start (and stop) in the same second.
            let offset = plan.think.mul_f64(17.0 * n as f64 / plan.sessions as f64);
            tokio::time::sleep(offset).await;
            let mut agent = Agent::new(n, &plan);
            while start.elapsed() < plan.run_for {
                let mine = agent.session(start).await;
                samples.lock().unwrap().extend(mine);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    Arc::try_unwrap(samples).unwrap().into_inner().unwrap()
}

struct Agent<'p> {
    n: usize,
    plan: &'p Plan,
    conn: Option<BufReader<TcpStream>>,
    sessions: usize,
}

impl<'p> Agent<'p> {
    fn new(n: usize, plan: &'p Plan) -> Agent<'p> {
        Agent {
            n,
            plan,
            conn: None,
            sessions: 0,
        }
    }

    /// One session: three to ten pairs of an allowed and a denied tool
    /// call, then four stops in a row.
    async fn session(&mut self, start: Instant) -> Vec<Sample> {
        self.sessions += 1;
        let session = format!("fleet-{}-{}", self.n, self.sessions);
        let mut out = Vec::new();
        let pairs = 3 + (self.n * 7 + self.sessions * 3) % 8;
        let kinds = vec![[Kind::Allowed, Kind::Denied]; pairs].concat();
        for kind in kinds.into_iter().chain([Kind::Stop; 4]) {
            tokio::time::sleep(self.plan.think).await;
            if start.elapsed() >= self.plan.run_for {
                break;
            }
            out.push(self.send(&session, kind, start).await);
        }
        out
    }

    async fn send(&mut self, session: &str, kind: Kind, start: Instant) -> Sample {
        let body = event(session, kind);
        let at = start.elapsed();
        let began = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(10), self.exchange(&body)).await;
        let (status, served_by, text) = match answer {
            Ok(Ok(a)) => a,
            Ok(Err(e)) => {
                self.conn = None;
                (0, String::new(), format!("\"{e}\""))
            }
            Err(_) => {
                self.conn = None;
                (0, String::new(), "\"timed out\"".to_string())
            }
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let refused = match kind {
            Kind::Stop => v["decision"] == "block",
            _ => v["hookSpecificOutput"]["permissionDecision"] == "deny",
        };
        Sample {
            session: session.to_string(),
            kind,
            at,
            took: began.elapsed(),
            status,
            served_by,
            refused,
            message: match v.as_str() {
                Some(error) => error.to_string(),
                None => v["systemMessage"].as_str().unwrap_or_default().to_string(),
            },
        }
    }

    /// One request on the session's connection (made again when gone):
    /// status, `X-Served-By` and body.
    async fn exchange(&mut self, body: &str) -> std::io::Result<(u16, String, String)> {
        if self.conn.is_none() {
            let tcp = TcpStream::connect(("127.0.0.1", self.plan.port)).await?;
            tcp.set_nodelay(true)?;
            self.conn = Some(BufReader::new(tcp));
        }
        let conn = self.conn.as_mut().unwrap();
        let request = format!(
            "POST /hooks/claude-code HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.plan.token,
            body.len()
        );
        conn.get_mut().write_all(request.as_bytes()).await?;
        let mut line = String::new();
        conn.read_line(&mut line).await?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let (mut length, mut served_by, mut close) = (0, String::new(), false);
        loop {
            line.clear();
            if conn.read_line(&mut line).await? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "x-served-by" => served_by = value.trim().to_string(),
                "connection" => close = value.trim().eq_ignore_ascii_case("close"),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        conn.read_exact(&mut body).await?;
        if close {
            self.conn = None;
        }
        Ok((
            status,
            served_by,
            String::from_utf8_lossy(&body).into_owned(),
        ))
    }
}

/// A Claude Code hook event of `kind` in `session`.
fn event(session: &str, kind: Kind) -> String {
    let base = serde_json::json!({
        "session_id": session, "transcript_path": "/t", "cwd": "/tmp",
    });
    let mut v = base;
    let extra = match kind {
        Kind::Allowed => serde_json::json!({"hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}}),
        Kind::Denied => serde_json::json!({"hook_event_name": "PreToolUse",
            "tool_name": "Delete", "tool_input": {"path": "/srv"}}),
        Kind::Stop => serde_json::json!({"hook_event_name": "Stop", "stop_hook_active": false}),
    };
    for (k, val) in extra.as_object().unwrap() {
        v[k] = val.clone();
    }
    v.to_string()
}

/// The p-th percentile of `took`, in milliseconds.
pub fn percentile(took: &mut [Duration], p: f64) -> f64 {
    if took.is_empty() {
        return 0.0;
    }
    took.sort_unstable();
    let i = ((took.len() - 1) as f64 * p).round() as usize;
    took[i].as_secs_f64() * 1000.0
}
