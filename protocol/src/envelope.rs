//! The JSON-RPC 2.0 envelope: requests, notifications, responses and errors.
//!
//! Every line on the wire is exactly one of these. The types here are the
//! wire shape only; what a method's `params` or `result` mean lives in the
//! stage modules. Decoding is strict about the envelope (a wrong `jsonrpc`
//! tag or a message that is neither request, notification nor response is an
//! error) so that a peer's bug shows up as a clear log line instead of a
//! silently mismatched call.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The only JSON-RPC version this protocol speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// Standard JSON-RPC error codes, plus the range this protocol reserves.
///
/// Hooks and host use these numbers so that a failure can be classified by a
/// program without parsing the message text.
pub mod error_code {
    /// The line was not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON was not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not offered by this peer.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params did not match the method's schema.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The handler failed (an exception in a hook, say).
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The request was cancelled by `$/cancel_request` before it finished.
    pub const REQUEST_CANCELLED: i64 = -32800;
}

/// A request id. The host always sends integers, but a peer may use strings
/// and they must round-trip unchanged; a lost string id is how a call times
/// out for no visible reason.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
// Closed: JSON-RPC allows only number and string ids.
#[allow(clippy::exhaustive_enums)]
pub enum Id {
    /// An integer id (what the host uses).
    Number(i64),
    /// A string id, echoed back verbatim.
    String(String),
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(n)
    }
}

/// A call that expects exactly one response with the same id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Request {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// Correlates the response with this request.
    pub id: Id,
    /// The method name, e.g. `hook.before_tool`.
    pub method: String,
    /// The method's params; every method of this protocol takes an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A one-way message; the receiver must never answer it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Notification {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The method name, e.g. `hook.runtime_event`.
    pub method: String,
    /// The notification's params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// The answer to a request: exactly one of `result` or `error`.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request this answers; `None` only for an error about a
    /// line whose id could not be read (JSON-RPC sends `null` then).
    pub id: Option<Id>,
    /// The outcome.
    pub payload: Result<Value, ErrorObject>,
}

/// The `error` member of a failed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorObject {
    /// One of [`error_code`], or an application code.
    pub code: i64,
    /// A short human-readable description.
    pub message: String,
    /// Anything else the peer wants to attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// `$/cancel_request` params: the id of the request to stop working on.
///
/// The host sends it when a call passed its deadline, so a hook can drop
/// work whose answer nobody will read. A late answer is still legal and is
/// ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CancelParams {
    /// The request to cancel.
    pub id: Id,
}

/// The `"jsonrpc": "2.0"` tag. A unit type so that any other value is a
/// decode error naming the bad tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(JSONRPC_VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if s == JSONRPC_VERSION {
            Ok(Version)
        } else {
            Err(serde::de::Error::custom(format!(
                "unsupported jsonrpc version {s:?}, expected \"2.0\""
            )))
        }
    }
}

impl JsonSchema for Version {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JsonRpcVersion".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "const": "2.0" })
    }
}

/// Any one line of the wire, classified.
#[derive(Debug, Clone, PartialEq)]
// Closed: JSON-RPC 2.0 has requests, notifications and responses.
#[allow(clippy::exhaustive_enums)]
pub enum Message {
    /// Has `method` and `id`.
    Request(Request),
    /// Has `method` and no `id`.
    Notification(Notification),
    /// Has `result` or `error`, and no `method`.
    Response(Response),
}

/// Why a line could not be decoded as a message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON at all (a stray `print`, usually).
    #[error("not JSON: {0}")]
    Parse(String),
    /// JSON, but not a JSON-RPC 2.0 message. `id` is set when it could be
    /// read, so a caller waiting on that id can be failed at once instead of
    /// timing out.
    #[error("invalid JSON-RPC message: {reason}")]
    Invalid {
        /// What is wrong, naming the member.
        reason: String,
        /// The message's id, if it had a readable one.
        id: Option<Id>,
    },
}

impl Message {
    /// Decodes one line (without its `\n`).
    pub fn decode(line: &[u8]) -> Result<Message, DecodeError> {
        let value: Value =
            serde_json::from_slice(line).map_err(|e| DecodeError::Parse(e.to_string()))?;
        Message::from_value(value)
    }

    /// Classifies an already parsed JSON value.
    pub fn from_value(value: Value) -> Result<Message, DecodeError> {
        let Value::Object(mut obj) = value else {
            return Err(invalid("a message must be a JSON object", None));
        };
        let id = read_id(&obj)?;
        let readable_id = id.clone().flatten();
        check_version(&obj, &readable_id)?;
        let params = obj.remove("params");
        // Every method of this protocol takes named params, so positional
        // (array) params are rejected here rather than half-decoded later.
        if let Some(p) = &params
            && !p.is_object()
        {
            return Err(invalid("`params` must be an object", readable_id));
        }
        match obj.remove("method") {
            Some(method) => call(&obj, id, method, params),
            None => response(obj, id),
        }
    }

    /// Encodes as one compact line, without the trailing `\n`, in the
    /// member order of [`Message::to_value`], from borrowed parts: params
    /// and results are not copied into an envelope first.
    pub fn encode(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Wire<'a> {
            jsonrpc: &'static str,
            /// Absent for a notification; `null` for a response to no id.
            #[serde(skip_serializing_if = "Option::is_none")]
            id: Option<Option<&'a Id>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            method: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            params: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a ErrorObject>,
        }
        let mut wire = Wire {
            jsonrpc: JSONRPC_VERSION,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        };
        match self {
            Message::Request(r) => {
                (wire.id, wire.method) = (Some(Some(&r.id)), Some(r.method.as_str()));
                wire.params = r.params.as_ref();
            }
            Message::Notification(n) => {
                (wire.method, wire.params) = (Some(n.method.as_str()), n.params.as_ref());
            }
            Message::Response(r) => {
                wire.id = Some(r.id.as_ref());
                (wire.result, wire.error) = (r.payload.as_ref().ok(), r.payload.as_ref().err());
            }
        }
        // Ids, strings, Values and error objects always serialize.
        serde_json::to_vec(&wire).unwrap_or_default()
    }

    /// The message as a JSON value, in wire shape.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("jsonrpc".into(), Value::String(JSONRPC_VERSION.into()));
        match self {
            Message::Request(r) => {
                obj.insert("id".into(), id_value(Some(&r.id)));
                obj.insert("method".into(), Value::String(r.method.clone()));
                if let Some(p) = &r.params {
                    obj.insert("params".into(), p.clone());
                }
            }
            Message::Notification(n) => {
                obj.insert("method".into(), Value::String(n.method.clone()));
                if let Some(p) = &n.params {
                    obj.insert("params".into(), p.clone());
                }
            }
            Message::Response(r) => {
                obj.insert("id".into(), id_value(r.id.as_ref()));
                match &r.payload {
                    Ok(v) => {
                        obj.insert("result".into(), v.clone());
                    }
                    Err(e) => {
                        obj.insert(
                            "error".into(),
                            serde_json::to_value(e).unwrap_or(Value::Null),
                        );
                    }
                }
            }
        }
        Value::Object(obj)
    }
}

fn id_value(id: Option<&Id>) -> Value {
    match id {
        None => Value::Null,
        Some(Id::Number(n)) => Value::from(*n),
        Some(Id::String(s)) => Value::String(s.clone()),
    }
}

/// The message's `id`: absent (`None`), `null` (`Some(None)`), or an
/// integer or string.
fn read_id(obj: &Map<String, Value>) -> Result<Option<Option<Id>>, DecodeError> {
    match obj.get("id") {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(v) => match Id::deserialize(v) {
            Ok(id) => Ok(Some(Some(id))),
            Err(_) => Err(invalid("`id` must be an integer or a string", None)),
        },
    }
}

/// `jsonrpc` must be exactly `"2.0"`.
fn check_version(obj: &Map<String, Value>, id: &Option<Id>) -> Result<(), DecodeError> {
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == JSONRPC_VERSION => Ok(()),
        Some(other) => Err(invalid(
            format!("`jsonrpc` must be \"2.0\", got {other}"),
            id.clone(),
        )),
        None => Err(invalid("missing `jsonrpc: \"2.0\"`", id.clone())),
    }
}

/// A message with a `method`: a request (with an id) or a notification.
fn call(
    obj: &Map<String, Value>,
    id: Option<Option<Id>>,
    method: Value,
    params: Option<Value>,
) -> Result<Message, DecodeError> {
    let readable_id = id.clone().flatten();
    let Value::String(method) = method else {
        return Err(invalid("`method` must be a string", readable_id));
    };
    if obj.contains_key("result") || obj.contains_key("error") {
        return Err(invalid(
            "a message cannot have both `method` and `result`/`error`",
            readable_id,
        ));
    }
    match id {
        None => Ok(Message::Notification(Notification {
            jsonrpc: Version,
            method,
            params,
        })),
        Some(None) => Err(invalid("a request id must not be null", None)),
        Some(Some(id)) => Ok(Message::Request(Request {
            jsonrpc: Version,
            id,
            method,
            params,
        })),
    }
}

/// A message without a `method`: a response, with exactly one of
/// `result` (to a request's id) and `error`.
fn response(mut obj: Map<String, Value>, id: Option<Option<Id>>) -> Result<Message, DecodeError> {
    let Some(id) = id else {
        return Err(invalid("a response must have an `id`", None));
    };
    let payload = match (obj.remove("result"), obj.remove("error")) {
        (Some(_), None) if id.is_none() => {
            return Err(invalid(
                "a result response needs the request's id, not null",
                None,
            ));
        }
        (Some(r), None) => Ok(r),
        (None, Some(e)) => match ErrorObject::deserialize(&e) {
            Ok(e) => Err(e),
            Err(err) => return Err(invalid(format!("bad `error` object: {err}"), id)),
        },
        (Some(_), Some(_)) => {
            return Err(invalid(
                "a response must not have both `result` and `error`",
                id,
            ));
        }
        (None, None) => {
            return Err(invalid(
                "a message needs `method` (request) or `result`/`error` (response)",
                id,
            ));
        }
    };
    Ok(Message::Response(Response { id, payload }))
}

fn invalid(reason: impl Into<String>, id: Option<Id>) -> DecodeError {
    DecodeError::Invalid {
        reason: reason.into(),
        id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_the_wire_value_written_compactly_for_every_kind() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":7,"method":"hook.before_tool","params":{"tool":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":"s","method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"hook.runtime_event","params":{"a":[1,"é"]}}"#,
            r#"{"jsonrpc":"2.0","method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-3,"result":{"action":"continue"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":"e","error":{"code":1,"message":"m","data":{"k":null}}}"#,
        ];
        for line in lines {
            let msg = Message::decode(line.as_bytes()).expect("valid");
            let encoded = msg.encode();
            assert_eq!(String::from_utf8_lossy(&encoded), line);
            assert_eq!(
                encoded,
                serde_json::to_vec(&msg.to_value()).expect("a value")
            );
        }
    }

    #[test]
    fn classifies_the_three_kinds() {
        let r = Message::decode(br#"{"jsonrpc":"2.0","id":1,"method":"hook.hello","params":{}}"#);
        assert!(matches!(
            r,
            Ok(Message::Request(Request {
                id: Id::Number(1),
                ..
            }))
        ));
        let n = Message::decode(br#"{"jsonrpc":"2.0","method":"hook.runtime_event","params":{}}"#);
        assert!(matches!(n, Ok(Message::Notification(_))));
        let ok = Message::decode(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#);
        assert!(matches!(
            ok,
            Ok(Message::Response(Response {
                id: Some(Id::String(_)),
                payload: Ok(_)
            }))
        ));
    }

    #[test]
    fn string_ids_round_trip() {
        let line = br#"{"jsonrpc":"2.0","id":"req-7","result":{"action":"continue"}}"#;
        let msg = Message::decode(line).expect("valid");
        let again = Message::decode(&msg.encode()).expect("valid");
        assert_eq!(msg, again);
        let Message::Response(r) = again else {
            panic!("not a response")
        };
        assert_eq!(r.id, Some(Id::String("req-7".into())));
    }

    #[test]
    fn a_wrong_version_keeps_the_id_for_fast_failure() {
        let err = Message::decode(br#"{"jsonrpc":"1.0","id":9,"result":{}}"#).unwrap_err();
        assert_eq!(
            err,
            DecodeError::Invalid {
                reason: "`jsonrpc` must be \"2.0\", got \"1.0\"".into(),
                id: Some(Id::Number(9))
            }
        );
    }

    #[test]
    fn non_json_is_a_parse_error() {
        assert!(matches!(
            Message::decode(b"hello world"),
            Err(DecodeError::Parse(_))
        ));
    }
}
