//! hookhost as a sidecar: an agent not written in Rust speaks JSON-RPC to
//! hookhost itself (`host.before_tool`, ..., `host.emit`, `host.stats`,
//! `host.reload`) and gets the merged verdicts, so it embeds hookhost
//! without linking it. `spec/sidecar.md` is the contract.
//!
//! [`serve`] runs one connection over any line stream: a reader that
//! decodes each line and starts a task per request, and a writer that owns
//! the output, so slow hooks never hold up other requests and nothing but
//! JSON-RPC reaches the output. It returns at end of input once every
//! request read has been answered.

use std::path::PathBuf;
use std::sync::Arc;

use hookhost_protocol::envelope::{DecodeError, Message, Response};
use hookhost_protocol::sidecar::{EmitParams, ReloadResult, StatsResult};
use hookhost_protocol::{ErrorObject, Id, LifecycleParams, Stage, error_code};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::host::Host;
use crate::line_reader::{Line, LineReader};

/// The longest request line accepted; a longer one is answered -32600.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Requests served at once; past this the sidecar stops reading until one
/// is answered, so an agent that floods requests (or stops reading its
/// answers) meets backpressure instead of growing hookhost's memory.
pub const MAX_IN_FLIGHT: usize = 1024;

/// Server error: `host.reload` found the config invalid (hooks unchanged).
pub const RELOAD_FAILED: i64 = -32000;

/// What `host.reload` re-reads.
#[derive(Debug, Clone)]
pub enum ReloadFrom {
    /// The config file the sidecar was started with, through the same
    /// loader (strict keys, preflight, builtins).
    File(PathBuf),
    /// Nothing: `host.reload` is an error (an embedder serving a config it
    /// built in code).
    Nowhere,
}

/// The sidecar's view of the world: the host and where reloads come from.
pub struct Sidecar {
    host: Host,
    reload_from: ReloadFrom,
    loader: fn(&std::path::Path) -> Result<crate::Config, String>,
}

impl Sidecar {
    /// Serves `host`; `loader` reads the config for `host.reload` (the CLI
    /// passes the one that also checks builtins).
    pub fn new(
        host: Host,
        reload_from: ReloadFrom,
        loader: fn(&std::path::Path) -> Result<crate::Config, String>,
    ) -> Arc<Sidecar> {
        Arc::new(Sidecar {
            host,
            reload_from,
            loader,
        })
    }

    /// Re-reads the config and applies it; the report or why not.
    pub async fn reload(&self) -> Result<Value, ErrorObject> {
        let ReloadFrom::File(path) = &self.reload_from else {
            return Err(ErrorObject::new(
                RELOAD_FAILED,
                "this sidecar was not started from a config file",
            ));
        };
        let config = (self.loader)(path).map_err(|e| ErrorObject::new(RELOAD_FAILED, e))?;
        let report = self.host.reload(config).await;
        wire(&ReloadResult {
            unchanged: report.unchanged,
            changed: report.changed,
            removed: report.removed,
        })
    }

    /// Answers one request.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let stage = match method {
            "host.before_tool" => Stage::BeforeTool,
            "host.after_tool" => Stage::AfterTool,
            "host.before_llm" => Stage::BeforeLlm,
            "host.after_llm" => Stage::AfterLlm,
            "host.approve_tool" => Stage::ApproveTool,
            "host.lifecycle" => return self.lifecycle(params).await,
            "host.stats" => {
                no_params(&params)?;
                return wire(&StatsResult {
                    hooks: self.host.stats(),
                });
            }
            "host.reload" => {
                no_params(&params)?;
                return self.reload().await;
            }
            "host.emit" => {
                return Err(ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    "host.emit is a notification: send it without an id",
                ));
            }
            other => {
                return Err(ErrorObject::new(
                    error_code::METHOD_NOT_FOUND,
                    format!("no method {other:?}"),
                ));
            }
        };
        let outcome = self
            .host
            .run_stage(stage, params)
            .await
            .map_err(|e| ErrorObject::new(error_code::INVALID_PARAMS, e.to_string()))?;
        Ok(outcome.to_wire(stage))
    }

    /// A request event runs the chain; any other is emitted and runs the
    /// command hooks that list it.
    async fn lifecycle(&self, params: Value) -> Result<Value, ErrorObject> {
        let p = LifecycleParams::deserialize(&params).map_err(|e| {
            ErrorObject::new(
                error_code::INVALID_PARAMS,
                format!("invalid lifecycle params: {e}"),
            )
        })?;
        if p.event.is_request() {
            let outcome = self
                .host
                .run_stage(Stage::Lifecycle, params)
                .await
                .map_err(|e| ErrorObject::new(error_code::INVALID_PARAMS, e.to_string()))?;
            return Ok(outcome.to_wire(Stage::Lifecycle));
        }
        self.host.lifecycle(p.event, p.payload).await;
        Ok(json!({"action": "continue"}))
    }

    /// `host.emit`: `id` and `time` may be left out; the host fills them.
    fn emit(&self, params: Value) -> Result<(), String> {
        let p = EmitParams::deserialize(&params).map_err(|e| e.to_string())?;
        let event = p.into_event(
            || self.host.next_event_id(),
            || crate::audit::rfc3339(std::time::SystemTime::now()),
        );
        self.host.emit(event);
        Ok(())
    }
}

fn wire<T: Serialize>(value: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(value)
        .map_err(|e| ErrorObject::new(error_code::INTERNAL_ERROR, e.to_string()))
}

fn no_params(params: &Value) -> Result<(), ErrorObject> {
    match params {
        Value::Null => Ok(()),
        Value::Object(m) if m.is_empty() => Ok(()),
        _ => Err(ErrorObject::new(
            error_code::INVALID_PARAMS,
            "this method takes no params",
        )),
    }
}

fn response(id: Option<Id>, payload: Result<Value, ErrorObject>) -> Vec<u8> {
    Message::Response(Response { id, payload }).encode()
}

/// Serves one connection until `input` ends, then waits for every request
/// read so far to be answered and written. The host is not shut down here.
pub async fn serve<R, W>(sidecar: Arc<Sidecar>, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(MAX_IN_FLIGHT);
    let writer = tokio::spawn(async move {
        let mut out = BufWriter::new(output);
        while let Some(line) = rx.recv().await {
            out.write_all(&line).await?;
            out.write_all(b"\n").await?;
            // Flush once the queue is empty, not per line, so a burst of
            // answers goes out in one write.
            if rx.is_empty() {
                out.flush().await?;
            }
        }
        out.flush().await
    });
    let mut reader = LineReader::new(
        BufReader::with_capacity(64 * 1024, input),
        MAX_REQUEST_BYTES,
    );
    let mut buf = Vec::new();
    let mut running = JoinSet::new();
    loop {
        match reader.next(&mut buf).await? {
            Line::Eof => break,
            Line::TooLong(n) => {
                let e = ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    format!("a {n}-byte line is longer than {MAX_REQUEST_BYTES} bytes"),
                );
                let _ = tx.send(response(None, Err(e))).await;
            }
            Line::Complete if buf.iter().all(u8::is_ascii_whitespace) => {}
            Line::Complete => match Message::decode(&buf) {
                Ok(Message::Request(req)) => {
                    let (sidecar, tx) = (sidecar.clone(), tx.clone());
                    running.spawn(async move {
                        let params = req.params.unwrap_or(Value::Null);
                        let reply = sidecar.call(&req.method, params).await;
                        let _ = tx.send(response(Some(req.id), reply)).await;
                    });
                }
                Ok(Message::Notification(n)) if n.method == "host.emit" => {
                    if let Err(e) = sidecar.emit(n.params.unwrap_or(Value::Null)) {
                        tracing::warn!("host.emit: skipped an invalid event: {e}");
                    }
                }
                Ok(Message::Notification(n)) => {
                    tracing::warn!(method = %n.method, "ignored a notification the sidecar does not know");
                }
                Ok(Message::Response(_)) => {
                    tracing::warn!("ignored a response: the sidecar sends no requests");
                }
                Err(DecodeError::Parse(e)) => {
                    let e = ErrorObject::new(error_code::PARSE_ERROR, format!("not JSON: {e}"));
                    let _ = tx.send(response(None, Err(e))).await;
                }
                Err(DecodeError::Invalid { reason, id }) => {
                    let e = ErrorObject::new(error_code::INVALID_REQUEST, reason);
                    let _ = tx.send(response(id, Err(e))).await;
                }
            },
        }
        // Reap finished requests so the set does not grow with the session.
        while running.try_join_next().is_some() {}
        while running.len() >= MAX_IN_FLIGHT {
            running.join_next().await;
        }
    }
    while running.join_next().await.is_some() {}
    drop(tx);
    writer.await.map_err(std::io::Error::other)?
}
