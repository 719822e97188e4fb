//! The rules a host must keep, one function each, over the [`Record`] of
//! a whole run. Each returns the violations it found, in arrival order;
//! [`run_all`] names them and fixes their order (spec/conformance.md §4).

use std::collections::HashMap;
use std::time::Duration;

use hookhost_protocol::chain::validate_params;
use hookhost_protocol::event::{EventPattern, RuntimeEvent};
use hookhost_protocol::stage::method;
use hookhost_protocol::{HelloParams, Id, Message};
use serde::Deserialize;
use serde_json::Value;

use super::Options;
use super::record::{Arrival, Record};
use super::report::{Check, Violation};

/// Every check, named, in the report's order.
pub(super) fn run_all(rec: &Record, opts: &Options) -> Vec<Check> {
    vec![
        Check::new("hello_first", hello_first(rec)),
        Check::new(
            "nothing_before_hello_answer",
            nothing_before_hello_answer(rec),
        ),
        Check::new("ids", ids(rec)),
        Check::new("jsonrpc", jsonrpc(rec)),
        Check::new("methods", methods(rec)),
        Check::new("params", params(rec)),
        Check::new("notifications", notifications(rec)),
        Check::new("declared", declared(rec, opts)),
        Check::new("cancel_after_deadline", cancel_after_deadline(rec, opts)),
        Check::new("eof_before_term", eof_before_term(rec)),
    ]
}

/// Milliseconds, for a detail.
pub(super) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn is_hello(a: &Arrival) -> bool {
    a.request().is_some_and(|(_, m, _)| m == method::HELLO)
}

/// The first message is a `hook.hello` request with valid params, and it
/// is the only one on the connection (spec §4).
fn hello_first(rec: &Record) -> Vec<Violation> {
    let Some(first) = rec.arrivals.first() else {
        return vec![Violation::run("no message arrived at all")];
    };
    let mut out = Vec::new();
    if !is_hello(first) {
        out.push(Violation::at(
            first.line,
            format!(
                "the first message is {}, not a hook.hello request",
                first.describe()
            ),
        ));
    } else if let Err(why) = hello_params(first.request().and_then(|(_, _, p)| p)) {
        out.push(Violation::at(first.line, why));
    }
    let hellos = rec.arrivals.iter().filter(|a| is_hello(a)).skip(1);
    out.extend(hellos.map(|a| {
        Violation::at(
            a.line,
            "hook.hello sent again: the handshake is once per connection",
        )
    }));
    out
}

fn hello_params(params: Option<&Value>) -> Result<(), String> {
    let p = HelloParams::deserialize(params.unwrap_or(&Value::Null))
        .map_err(|e| format!("hook.hello params do not decode: {e}"))?;
    if p.version == 0 {
        return Err("hook.hello params: version 0; the host speaks at least version 1".into());
    }
    Ok(())
}

/// Nothing arrives between the hello request and the probe's answer to it
/// (spec §4): the probe holds its answer back to give a host the chance.
fn nothing_before_hello_answer(rec: &Record) -> Vec<Violation> {
    let Some(pos) = rec.arrivals.iter().position(is_hello) else {
        return Vec::new();
    };
    let early = rec.arrivals[pos + 1..]
        .iter()
        .filter(|a| rec.hello_answered.is_none_or(|t| a.at < t));
    early
        .map(|a| {
            let when = match rec.hello_answered {
                Some(t) => format!("{} ms before the hello answer", ms(t - a.at)),
                None => "while the hello was still unanswered".into(),
            };
            Violation::at(a.line, format!("{} arrived {when}", a.describe()))
        })
        .collect()
}

/// Request ids are integers, never 0, unique and increasing (spec §3).
fn ids(rec: &Record) -> Vec<Violation> {
    let mut first_line: HashMap<i64, usize> = HashMap::new();
    let mut highest: Option<(i64, usize)> = None;
    let mut out = Vec::new();
    let requests = rec.arrivals.iter().filter(|a| a.has_method);
    for a in requests {
        let Some(raw) = &a.raw_id else { continue };
        let n = match integer_id(raw) {
            Ok(n) => n,
            Err(why) => {
                out.push(Violation::at(a.line, why));
                continue;
            }
        };
        if let Some(line) = first_line.get(&n) {
            out.push(Violation::at(a.line, format!("id {n} repeats line {line}")));
        } else if let Some((top, line)) = highest.filter(|(top, _)| n <= *top) {
            let why = format!("id {n} is not greater than id {top} on line {line}");
            out.push(Violation::at(a.line, why));
        }
        first_line.entry(n).or_insert(a.line);
        highest = highest.filter(|(top, _)| *top >= n).or(Some((n, a.line)));
    }
    out
}

fn integer_id(raw: &Value) -> Result<i64, String> {
    match raw {
        Value::Number(n) => match n.as_i64() {
            Some(0) => Err("id 0: the host never sends 0 (PicoClaw's hooks take a falsy id for a notification)".into()),
            Some(i) => Ok(i),
            None if n.is_u64() => Err(format!("id {n} is past the signed 64-bit range")),
            None => Err(format!("id {n} is not an integer")),
        },
        Value::String(_) => Err(format!("id {raw} is a string; the host sends integer ids")),
        Value::Null => Err("id null: a request id is never null".into()),
        other => Err(format!("id {other} is neither an integer nor a string")),
    }
}

/// Every line is one JSON-RPC 2.0 request or notification: no response,
/// no batch, `"jsonrpc":"2.0"`, params an object (spec §2, §3).
fn jsonrpc(rec: &Record) -> Vec<Violation> {
    let bad = rec.arrivals.iter().filter_map(|a| match &a.message {
        Ok(Message::Request(_) | Message::Notification(_)) => None,
        Ok(Message::Response(_)) => Some(Violation::at(
            a.line,
            "a response: in version 1 a hook sends no request, so the host answers nothing",
        )),
        Err(e) => Some(Violation::at(a.line, e.to_string())),
    });
    bad.collect()
}

/// Every request is `hook.hello` or one of the six stages (spec §5).
fn methods(rec: &Record) -> Vec<Violation> {
    let requests = rec.arrivals.iter().filter_map(|a| Some((a, a.request()?)));
    requests
        .filter(|(a, (_, m, _))| *m != method::HELLO && a.stage().is_none())
        .map(|(a, (_, m, _))| {
            Violation::at(
                a.line,
                format!("request {m:?} is not a method of protocol version 1"),
            )
        })
        .collect()
}

/// Each stage call's params decode as that stage's params type (spec §5.2
/// to §5.6, §5.9), the check `Chain::new` makes.
fn params(rec: &Record) -> Vec<Violation> {
    let calls = rec.arrivals.iter().filter_map(|a| Some((a, a.stage()?)));
    calls
        .filter_map(|(a, stage)| {
            let params = a.request().and_then(|(_, _, p)| p).unwrap_or(&Value::Null);
            let err = validate_params(stage, params).err()?;
            Some(Violation::at(a.line, format!("{}: {err}", a.describe())))
        })
        .collect()
}

/// The only notifications are `hook.runtime_event` and
/// `$/cancel_request`, each with params of its shape (spec §5.7, §5.8).
fn notifications(rec: &Record) -> Vec<Violation> {
    let bad = rec.arrivals.iter().filter_map(|a| {
        let (m, params) = a.notification()?;
        let why = notification_problem(a, m, params.unwrap_or(&Value::Null))?;
        Some(Violation::at(a.line, format!("{m}: {why}")))
    });
    bad.collect()
}

fn notification_problem(a: &Arrival, name: &str, params: &Value) -> Option<String> {
    match name {
        method::RUNTIME_EVENT => RuntimeEvent::deserialize(params)
            .err()
            .map(|e| e.to_string()),
        method::CANCEL_REQUEST => a
            .cancel_id()
            .is_none()
            .then(|| "params are not {\"id\": <integer or string>}".into()),
        _ => Some("not a notification of protocol version 1".into()),
    }
}

/// When the probe declared its lists, the host sends no stage and no
/// event outside them (spec §4.3: the config may narrow a declaration,
/// never widen it). Without a declaration there is nothing to hold the
/// host to, so this passes.
fn declared(rec: &Record, opts: &Options) -> Vec<Violation> {
    let mut out = Vec::new();
    if let Some(stages) = &opts.intercept {
        let calls = rec.arrivals.iter().filter_map(|a| Some((a, a.stage()?)));
        out.extend(calls.filter(|(_, s)| !stages.contains(s)).map(|(a, s)| {
            Violation::at(
                a.line,
                format!("{}: the probe did not declare {s}", a.describe()),
            )
        }));
    }
    if let Some(observe) = &opts.observe {
        let patterns: Vec<EventPattern> = observe
            .iter()
            .filter_map(|p| EventPattern::parse(p).ok())
            .collect();
        for a in &rec.arrivals {
            let Some(kind) = event_kind(a) else { continue };
            if !patterns.iter().any(|p| p.matches(kind)) {
                let why = format!("runtime event {kind:?}: the probe observes only {observe:?}");
                out.push(Violation::at(a.line, why));
            }
        }
    }
    out
}

fn event_kind(a: &Arrival) -> Option<&str> {
    match a.notification()? {
        (method::RUNTIME_EVENT, Some(params)) => params.get("kind")?.as_str(),
        _ => None,
    }
}

/// Every call the probe stalls is followed by a `$/cancel_request` for
/// its id (spec §5.8, §10), and no cancel names an id never sent.
fn cancel_after_deadline(rec: &Record, opts: &Options) -> Vec<Violation> {
    let mut out = Vec::new();
    for a in &rec.arrivals {
        let (Some(stage), Some((id, _, _))) = (a.stage(), a.request()) else {
            continue;
        };
        if opts.stall.contains(&stage) && cancel_of(rec, id, a.line).is_none() {
            let why = format!("{} was stalled and never cancelled", a.describe());
            out.push(Violation::at(a.line, why));
        }
    }
    for a in &rec.arrivals {
        let Some(id) = a.cancel_id() else { continue };
        if rec.request_before(a.line, &id).is_none() {
            let why = format!("$/cancel_request for id {id}, which no earlier request had");
            out.push(Violation::at(a.line, why));
        }
    }
    out
}

/// The first cancel of `id` after line `after`.
pub(super) fn cancel_of<'r>(rec: &'r Record, id: &Id, after: usize) -> Option<&'r Arrival> {
    rec.arrivals
        .iter()
        .filter(|a| a.line > after)
        .find(|a| a.cancel_id().as_ref() == Some(id))
}

/// Shutdown closes stdin first and sends SIGTERM only after (spec §12).
fn eof_before_term(rec: &Record) -> Vec<Violation> {
    match (rec.term, rec.eof) {
        (Some(t), None) => vec![Violation::run(format!(
            "SIGTERM at {} ms while stdin was still open: the host closes stdin first",
            ms(t)
        ))],
        (Some(t), Some(e)) if t < e => vec![Violation::run(format!(
            "SIGTERM at {} ms came before stdin EOF at {} ms",
            ms(t),
            ms(e)
        ))],
        _ => Vec::new(),
    }
}
