//! What the probe writes back: the hello declaration the options ask for,
//! the neutral answer of each stage, and the errors a good hook sends. The
//! probe answers like a well-behaved hook so that whatever goes wrong on
//! the wire is the host's doing.

use hookhost_protocol::envelope::{DecodeError, ErrorObject, Message, Response, error_code};
use hookhost_protocol::stage::method;
use hookhost_protocol::{Id, Stage};
use serde_json::{Value, json};

use super::Options;

/// The probe's name for itself in its hello answer.
pub(super) const NAME: &str = "hookhost-probe";

/// What to do about one line.
#[derive(Debug, PartialEq)]
pub(super) enum Reply {
    /// Nothing: a notification, a stalled call, a response.
    Nothing,
    /// The hello answer for this id, once the hello delay has passed.
    Hello(Id),
    /// This line, now.
    Now(Value),
}

/// Decides the reply to one decoded line.
pub(super) fn reply(message: &Result<Message, DecodeError>, opts: &Options) -> Reply {
    match message {
        Ok(Message::Request(r)) if r.method == method::HELLO => Reply::Hello(r.id.clone()),
        Ok(Message::Request(r)) => match Stage::from_method(&r.method) {
            Some(stage) if opts.stall.contains(&stage) => Reply::Nothing,
            Some(stage) => Reply::Now(result(&r.id, neutral(stage))),
            None => Reply::Now(error(
                Some(r.id.clone()),
                error_code::METHOD_NOT_FOUND,
                format!("method not found: {}", r.method),
            )),
        },
        Ok(Message::Notification(_) | Message::Response(_)) => Reply::Nothing,
        Err(DecodeError::Parse(why)) => Reply::Now(error(None, error_code::PARSE_ERROR, why)),
        Err(DecodeError::Invalid { reason, id }) => Reply::Now(error(
            id.clone(),
            error_code::INVALID_REQUEST,
            reason.clone(),
        )),
        // A kind of undecodable line added later: invalid, with no id to answer.
        Err(e) => Reply::Now(error(None, error_code::INVALID_REQUEST, e.to_string())),
    }
}

/// The hello result: PicoClaw's `{"ok": true, "name": ...}` (no
/// declaration, so the host's config alone decides), or the lists the
/// options declare.
pub(super) fn hello_result(opts: &Options) -> Value {
    let mut result = json!({"ok": true, "name": NAME});
    if let Some(stages) = &opts.intercept {
        result["version"] = json!(1);
        result["intercept"] = json!(stages);
    }
    if let Some(patterns) = &opts.observe {
        result["version"] = json!(1);
        result["observe"] = json!(patterns);
    }
    result
}

/// The answer that changes nothing at `stage` (at approve_tool it
/// decides nothing, leaving the decision to the agent).
fn neutral(stage: Stage) -> Value {
    match stage {
        Stage::Lifecycle => json!({}),
        _ => json!({"action": "continue"}),
    }
}

/// A result response, as a wire value.
pub(super) fn result(id: &Id, value: Value) -> Value {
    Message::Response(Response {
        id: Some(id.clone()),
        payload: Ok(value),
    })
    .to_value()
}

fn error(id: Option<Id>, code: i64, message: impl Into<String>) -> Value {
    Message::Response(Response {
        id,
        payload: Err(ErrorObject::new(code, message)),
    })
    .to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(line: &str) -> Result<Message, DecodeError> {
        Message::decode(line.as_bytes())
    }

    #[test]
    fn stages_get_their_neutral_answer_unless_stalled() {
        let mut opts = Options::new();
        let call = decode(r#"{"jsonrpc":"2.0","id":4,"method":"hook.approve_tool","params":{}}"#);
        assert_eq!(
            reply(&call, &opts),
            Reply::Now(json!({"jsonrpc":"2.0","id":4,"result":{"action":"continue"}}))
        );
        opts.stall.push(Stage::ApproveTool);
        assert_eq!(reply(&call, &opts), Reply::Nothing);
    }

    #[test]
    fn unknown_methods_and_bad_lines_get_errors_and_notifications_nothing() {
        let opts = Options::new();
        let unknown = decode(r#"{"jsonrpc":"2.0","id":"x","method":"hook.nope","params":{}}"#);
        let Reply::Now(v) = reply(&unknown, &opts) else {
            panic!("no reply")
        };
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!("x"), json!(-32601))
        );
        let Reply::Now(v) = reply(&decode("not json"), &opts) else {
            panic!("no reply")
        };
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let note = decode(r#"{"jsonrpc":"2.0","method":"hook.runtime_event","params":{}}"#);
        assert_eq!(reply(&note, &opts), Reply::Nothing);
    }

    #[test]
    fn the_hello_declares_only_when_asked() {
        let mut opts = Options::new();
        assert_eq!(hello_result(&opts), json!({"ok": true, "name": NAME}));
        opts.declare_all();
        let r = hello_result(&opts);
        assert_eq!(r["intercept"].as_array().map(Vec::len), Some(6));
        assert_eq!(r["observe"], json!(["*"]));
    }
}
