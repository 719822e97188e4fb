//! Whether params have their stage's shape, read in place.
//!
//! The chain checks the caller's params, and the params after every patch,
//! against the stage's typed params ([`crate::params`]). Decoding them into
//! those types only to drop them copied every string and every argument,
//! about one call's worth of allocations, on every call. These checks walk
//! the `Value` instead and allocate nothing. They accept exactly what the
//! typed decoders accept (a test holds them to that); when they refuse, the
//! caller decodes the typed params once more, for serde's own message
//! naming the field.

use serde_json::Value;

use crate::lifecycle::LifecycleEvent;
use crate::stage::Stage;

/// What one field may hold.
#[derive(Clone, Copy)]
enum Ty {
    /// A string (`String`).
    Str,
    /// A non-negative integer (`u64`).
    Uint,
    /// `true` or `false`.
    Bool,
    /// An object of anything (`Map<String, Value>`).
    Object,
    /// An array of anything (`Vec<Value>`).
    Array,
    /// Anything at all (`Value`).
    Any,
    /// An object of this shape (a struct whose unknown keys are kept).
    Shape(&'static [Field]),
    /// An array whose items have this shape.
    ArrayOf(&'static [Field]),
    /// A request event's name ([`LifecycleEvent`]).
    Event,
}

/// Whether a field may be missing or `null`.
#[derive(Clone, Copy, PartialEq)]
enum Absent {
    /// It must be there and not `null` (a plain field).
    Refused,
    /// Missing or `null` reads as its default (an `Option`, or a field
    /// read with `null_as_default`).
    Allowed,
}

/// One field of a shape.
struct Field(&'static str, Ty, Absent);

use Absent::{Allowed, Refused};

const META: &[Field] = &[
    Field("agent_id", Ty::Str, Allowed),
    Field("session_key", Ty::Str, Allowed),
    Field("turn_id", Ty::Str, Allowed),
    Field("parent_turn_id", Ty::Str, Allowed),
    Field("iteration", Ty::Uint, Allowed),
    Field("source", Ty::Str, Allowed),
    Field("transcript_path", Ty::Str, Allowed),
    Field("cwd", Ty::Str, Allowed),
    Field("permission_mode", Ty::Str, Allowed),
    Field("model", Ty::Str, Allowed),
    Field("tenant_id", Ty::Str, Allowed),
    Field("user_id", Ty::Str, Allowed),
];

const TOOL_CALL: &[Field] = &[
    Field("meta", Ty::Shape(META), Allowed),
    Field("tool", Ty::Str, Refused),
    Field("arguments", Ty::Object, Allowed),
    Field("tool_call_id", Ty::Str, Allowed),
    Field("channel", Ty::Str, Allowed),
    Field("chat_id", Ty::Str, Allowed),
];

const TOOL_RESULT: &[Field] = &[
    Field("for_llm", Ty::Str, Refused),
    Field("for_user", Ty::Str, Allowed),
    Field("silent", Ty::Bool, Allowed),
    Field("is_error", Ty::Bool, Allowed),
];

const AFTER_TOOL: &[Field] = &[
    Field("meta", Ty::Shape(META), Allowed),
    Field("tool", Ty::Str, Refused),
    Field("arguments", Ty::Object, Allowed),
    Field("tool_call_id", Ty::Str, Allowed),
    Field("result", Ty::Shape(TOOL_RESULT), Refused),
    Field("duration_ms", Ty::Uint, Allowed),
    Field("channel", Ty::Str, Allowed),
    Field("chat_id", Ty::Str, Allowed),
];

const LLM_MESSAGE: &[Field] = &[
    Field("role", Ty::Str, Refused),
    Field("content", Ty::Any, Allowed),
];

const BEFORE_LLM: &[Field] = &[
    Field("meta", Ty::Shape(META), Allowed),
    Field("model", Ty::Str, Refused),
    Field("messages", Ty::ArrayOf(LLM_MESSAGE), Allowed),
    Field("tools", Ty::Array, Allowed),
    Field("options", Ty::Object, Allowed),
    Field("channel", Ty::Str, Allowed),
    Field("chat_id", Ty::Str, Allowed),
];

const LLM_RESPONSE: &[Field] = &[
    Field("content", Ty::Str, Allowed),
    Field("tool_calls", Ty::Array, Allowed),
    Field("finish_reason", Ty::Str, Allowed),
    Field("usage", Ty::Any, Allowed),
];

const AFTER_LLM: &[Field] = &[
    Field("meta", Ty::Shape(META), Allowed),
    Field("model", Ty::Str, Refused),
    Field("response", Ty::Shape(LLM_RESPONSE), Refused),
    Field("channel", Ty::Str, Allowed),
    Field("chat_id", Ty::Str, Allowed),
];

const LIFECYCLE: &[Field] = &[
    Field("event", Ty::Event, Refused),
    Field("meta", Ty::Shape(META), Allowed),
    Field("payload", Ty::Object, Allowed),
];

/// Whether `params` decode as `stage`'s params type.
pub(crate) fn fits(stage: Stage, params: &Value) -> bool {
    let fields = match stage {
        Stage::BeforeLlm => BEFORE_LLM,
        Stage::AfterLlm => AFTER_LLM,
        Stage::BeforeTool | Stage::ApproveTool => TOOL_CALL,
        Stage::AfterTool => AFTER_TOOL,
        Stage::Lifecycle => LIFECYCLE,
    };
    is_shape(params, fields)
}

fn is_shape(value: &Value, fields: &[Field]) -> bool {
    let Some(object) = value.as_object() else {
        return false;
    };
    fields.iter().all(
        |Field(name, ty, absent)| match (object.get(*name), absent) {
            (None, Refused) => false,
            (None, Allowed) | (Some(Value::Null), Allowed) => true,
            (Some(v), _) => is_ty(v, *ty),
        },
    )
}

fn is_ty(value: &Value, ty: Ty) -> bool {
    match ty {
        Ty::Str => value.is_string(),
        Ty::Uint => value.is_u64(),
        Ty::Bool => value.is_boolean(),
        Ty::Object => value.is_object(),
        Ty::Array => value.is_array(),
        Ty::Any => true,
        Ty::Shape(fields) => is_shape(value, fields),
        Ty::ArrayOf(fields) => value
            .as_array()
            .is_some_and(|items| items.iter().all(|item| is_shape(item, fields))),
        Ty::Event => value
            .as_str()
            .is_some_and(|name| name.parse::<LifecycleEvent>().is_ok()),
    }
}

#[cfg(test)]
mod tests;
