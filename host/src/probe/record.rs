//! What arrived on the probe's stdin and when, and what the probe did in
//! reply: the whole run as data, so that every check is a pure function of
//! it and can be tested without a process.

use std::collections::HashMap;
use std::time::Duration;

use hookhost_protocol::envelope::{CancelParams, DecodeError, Message};
use hookhost_protocol::stage::method;
use hookhost_protocol::{Id, Stage};
use serde::Deserialize;
use serde_json::Value;

use super::report::Ending;

/// One non-blank line of stdin.
#[derive(Debug, Clone)]
pub(super) struct Arrival {
    /// Its line number on stdin, from 1 (blank lines count).
    pub line: usize,
    /// When it was read, since the probe started.
    pub at: Duration,
    /// The `id` member exactly as sent, when the line was an object with
    /// one: a null or fractional id does not decode as a message, and the
    /// `ids` check must still name it.
    pub raw_id: Option<Value>,
    /// Whether the line was an object with a `method` member: what makes
    /// it a request (or notification) in the host's intent.
    pub has_method: bool,
    /// The line decoded as a JSON-RPC message, or why it is not one.
    pub message: Result<Message, DecodeError>,
}

impl Arrival {
    /// Classifies one line read at `at`.
    pub(super) fn from_line(line: usize, at: Duration, bytes: &[u8]) -> Self {
        let value = match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => v,
            Err(e) => return Self::unreadable(line, at, DecodeError::Parse(e.to_string())),
        };
        let raw_id = value.get("id").cloned();
        let has_method = value.get("method").is_some();
        let message = if value.is_array() {
            Err(DecodeError::Invalid {
                reason: "a batch (JSON array); the protocol has no batches".into(),
                id: None,
            })
        } else {
            Message::from_value(value)
        };
        Arrival {
            line,
            at,
            raw_id,
            has_method,
            message,
        }
    }

    /// A line that is not JSON at all (or too long to read).
    pub(super) fn unreadable(line: usize, at: Duration, why: DecodeError) -> Self {
        Arrival {
            line,
            at,
            raw_id: None,
            has_method: false,
            message: Err(why),
        }
    }

    /// The request on this line: its id, method and params.
    pub(super) fn request(&self) -> Option<(&Id, &str, Option<&Value>)> {
        match &self.message {
            Ok(Message::Request(r)) => Some((&r.id, r.method.as_str(), r.params.as_ref())),
            _ => None,
        }
    }

    /// The notification on this line: its method and params.
    pub(super) fn notification(&self) -> Option<(&str, Option<&Value>)> {
        match &self.message {
            Ok(Message::Notification(n)) => Some((n.method.as_str(), n.params.as_ref())),
            _ => None,
        }
    }

    /// The stage this line's request calls, if it is a stage call.
    pub(super) fn stage(&self) -> Option<Stage> {
        self.request().and_then(|(_, m, _)| Stage::from_method(m))
    }

    /// The id a `$/cancel_request` on this line names, when its params
    /// have one.
    pub(super) fn cancel_id(&self) -> Option<Id> {
        match self.notification() {
            Some((method::CANCEL_REQUEST, Some(params))) => {
                CancelParams::deserialize(params).ok().map(|p| p.id)
            }
            _ => None,
        }
    }

    /// A short name for the line in a detail: `hook.before_tool id 3`.
    pub(super) fn describe(&self) -> String {
        match (&self.message, &self.raw_id) {
            (Ok(Message::Request(r)), _) => format!("{} id {}", r.method, r.id),
            (Ok(Message::Notification(n)), _) => n.method.clone(),
            (Ok(Message::Response(_)), _) => "a response".into(),
            (Err(_), Some(id)) => format!("an invalid message with id {id}"),
            (Err(_), None) => "an invalid line".into(),
        }
    }
}

/// The whole run.
#[derive(Debug, Clone, Default)]
pub(super) struct Record {
    /// Every non-blank line, in arrival order.
    pub arrivals: Vec<Arrival>,
    /// When the probe finished writing its (first) hello answer.
    pub hello_answered: Option<Duration>,
    /// The requests the probe answered, and when.
    pub answered: HashMap<Id, Duration>,
    /// When stdin reached EOF (or failed).
    pub eof: Option<Duration>,
    /// When SIGTERM arrived.
    pub term: Option<Duration>,
    /// When a write to stdout failed.
    pub stdout_closed: Option<Duration>,
    /// Why the run stopped.
    pub ended: Option<Ending>,
}

impl Record {
    /// The requests before `line` that had `id`: the latest one.
    pub(super) fn request_before(&self, line: usize, id: &Id) -> Option<&Arrival> {
        self.arrivals
            .iter()
            .take_while(|a| a.line < line)
            .filter(|a| a.request().is_some_and(|(rid, _, _)| rid == id))
            .last()
    }
}
