//! One agent connection, whatever carries it: a task per request, the
//! answers written by the task that has one (over a line stream) or
//! queued for the transport's one writer (WebSocket frames), and the
//! bytes each request holds until its answer is handed on.

use std::sync::Arc;

use hookhost::Identity;
use hookhost_protocol::envelope::{DecodeError, Message, Response};
use hookhost_protocol::outbox::Outbox;
use hookhost_protocol::{ErrorObject, Id, error_code};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::budget::{self, Charge, Pool};
use super::{BUSY, MAX_IN_FLIGHT, MAX_REQUEST_BYTES, Sidecar};

pub(super) fn response(id: Option<Id>, payload: Result<Value, ErrorObject>) -> Vec<u8> {
    Message::Response(Response { id, payload }).encode()
}

/// Where a session's answers go.
#[derive(Clone)]
enum Answers {
    /// To the transport's writer (WebSocket frames).
    Queue(mpsc::Sender<Answer>),
    /// Straight onto the line stream, by whoever has the answer.
    Lines(Arc<Outbox>),
}

impl Answers {
    /// Hands an answer on; its request's bytes are released once it is
    /// written or queued.
    async fn send(&self, bytes: Vec<u8>, charge: Charge) {
        match self {
            Answers::Queue(tx) => {
                let _ = tx
                    .send(Answer {
                        bytes,
                        _charge: charge,
                    })
                    .await;
            }
            Answers::Lines(out) => {
                // As long as the agent takes to read: requests stop being
                // read meanwhile (MAX_IN_FLIGHT, the byte budgets).
                let _ = out.send_when_room(&bytes).await;
            }
        }
    }
}

/// One answer on its way out, holding the bytes its request was charged
/// until it has been written.
pub(super) struct Answer {
    pub(super) bytes: Vec<u8>,
    _charge: Charge,
}

/// One message read from the agent, whatever the transport.
pub(super) enum Inbound<'a> {
    /// One JSON-RPC message's text, and what it was charged.
    Message(&'a [u8], Charge),
    /// A message over [`MAX_REQUEST_BYTES`], of this many bytes, skipped.
    TooLong(usize),
    /// A message skipped because [`budget::GLOBAL_BYTES`] were in flight.
    Busy,
    /// A WebSocket binary frame: not JSON-RPC text.
    Binary,
}

/// One agent connection's requests in flight and its answer queue. The
/// transport reads messages into [`Session::handle`] and writes what comes
/// out of the queue; everything else is the same over stdio and WebSocket.
pub(super) struct Session {
    sidecar: Arc<Sidecar>,
    answers: Answers,
    running: JoinSet<()>,
    /// This session's bytes in flight ([`budget::SESSION_BYTES`]).
    bytes: Pool,
    /// Who the gateway's credential says is calling, if it says.
    caller: Option<Arc<Identity>>,
}

impl Session {
    /// A session whose answers are queued for the transport's writer;
    /// every call in it is `caller`'s.
    pub(super) fn new(
        sidecar: Arc<Sidecar>,
        caller: Option<Identity>,
    ) -> (Session, mpsc::Receiver<Answer>) {
        let (answers, rx) = mpsc::channel::<Answer>(MAX_IN_FLIGHT);
        let mut session = Session::with(sidecar, Answers::Queue(answers));
        session.caller = caller.map(Arc::new);
        (session, rx)
    }

    /// A session over a line stream: each answer is written by the task
    /// that has it when nothing else is being written.
    pub(super) fn over_lines(sidecar: Arc<Sidecar>, out: Arc<Outbox>) -> Session {
        Session::with(sidecar, Answers::Lines(out))
    }

    fn with(sidecar: Arc<Sidecar>, answers: Answers) -> Session {
        Session {
            sidecar,
            answers,
            running: JoinSet::new(),
            bytes: Pool::new(budget::SESSION_BYTES),
            caller: None,
        }
    }

    async fn reply(&self, id: Option<Id>, error: ErrorObject) {
        let bytes = response(id, Err(error));
        self.answers.send(bytes, Charge::default()).await;
    }

    /// Whether requests of this session are still running.
    pub(super) fn busy(&mut self) -> bool {
        while self.running.try_join_next().is_some() {}
        !self.running.is_empty()
    }

    /// Starts a request, applies a notification, or answers an error; then
    /// waits while [`MAX_IN_FLIGHT`] requests are running.
    pub(super) async fn handle(&mut self, inbound: Inbound<'_>) {
        match inbound {
            Inbound::TooLong(n) => {
                let e = ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    format!("a {n}-byte message is longer than {MAX_REQUEST_BYTES} bytes"),
                );
                self.reply(None, e).await;
            }
            Inbound::Busy => {
                let e = ErrorObject::new(
                    BUSY,
                    format!(
                        "hookhost is busy: requests in flight hold {} bytes; send it again",
                        budget::GLOBAL_BYTES
                    ),
                );
                self.reply(None, e).await;
            }
            Inbound::Binary => {
                let e = ErrorObject::new(
                    error_code::INVALID_REQUEST,
                    "a binary frame: send each message as one text frame",
                );
                self.reply(None, e).await;
            }
            Inbound::Message(m, _) if m.iter().all(u8::is_ascii_whitespace) => {}
            Inbound::Message(m, charge) => self.message(m, charge).await,
        }
        // Reap finished requests so the set does not grow with the session.
        while self.running.try_join_next().is_some() {}
        while self.running.len() >= MAX_IN_FLIGHT {
            self.running.join_next().await;
        }
    }

    async fn message(&mut self, m: &[u8], mut charge: Charge) {
        match Message::decode(m) {
            Ok(Message::Request(req)) => {
                // Backpressure by bytes: wait for this session's earlier
                // requests to be answered before taking more of its input.
                self.bytes.grow(&mut charge, m.len()).await;
                let (sidecar, tx) = (self.sidecar.clone(), self.answers.clone());
                let caller = self.caller.clone();
                self.running.spawn(async move {
                    let params = req.params.unwrap_or(Value::Null);
                    let reply = sidecar
                        .call_as(&req.method, params, caller.as_deref())
                        .await;
                    let bytes = response(Some(req.id), reply);
                    tx.send(bytes, charge).await;
                });
            }
            Ok(Message::Notification(n)) if n.method == "host.emit" => {
                let params = n.params.unwrap_or(Value::Null);
                if let Err(e) = self.sidecar.emit_as(params, self.caller.as_deref()) {
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
                self.reply(None, e).await;
            }
            Err(DecodeError::Invalid { reason, id }) => {
                let e = ErrorObject::new(error_code::INVALID_REQUEST, reason);
                self.reply(id, e).await;
            }
            // A kind of undecodable line added later: invalid, with no id to answer.
            Err(e) => {
                let e = ErrorObject::new(error_code::INVALID_REQUEST, e.to_string());
                self.reply(None, e).await;
            }
        }
    }

    /// Waits for every request read so far to be answered, then closes the
    /// answer queue, which ends the writer once it has written them.
    pub(super) async fn finish(mut self) {
        while self.running.join_next().await.is_some() {}
    }
}
