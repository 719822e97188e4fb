//! JSON Schemas for every params and result type, generated from the types
//! themselves so that the published schemas cannot drift from the code.
//!
//! `cargo run -p hookhost-protocol --example write_schemas` writes them to
//! `spec/schema/`; a test fails when the checked-in files differ.

use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};

use crate::action::{
    AfterLlmResult, AfterToolResult, ApproveToolResult, BeforeLlmResult, BeforeToolResult,
    LifecycleResult,
};
use crate::envelope::{CancelParams, ErrorObject, Notification, Request};
use crate::event::RuntimeEvent;
use crate::hello::{HelloParams, HelloResult};
use crate::params::{AfterLlmParams, AfterToolParams, BeforeLlmParams, LifecycleParams, ToolCall};
use crate::sidecar::{EmitParams, ReloadResult, StatsResult};

fn one<T: JsonSchema>(file: &'static str) -> (&'static str, Schema) {
    let generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let mut schema = generator.into_root_schema_for::<T>();
    schema.insert(
        "$id".into(),
        format!("urn:hookhost:protocol:v1:{file}").into(),
    );
    (file, schema)
}

/// Every published schema as `(file name, schema)`, in a stable order.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        one::<Request>("jsonrpc.request.json"),
        one::<Notification>("jsonrpc.notification.json"),
        one::<ErrorObject>("jsonrpc.error.json"),
        one::<HelloParams>("hook.hello.params.json"),
        one::<HelloResult>("hook.hello.result.json"),
        one::<RuntimeEvent>("hook.runtime_event.params.json"),
        one::<BeforeLlmParams>("hook.before_llm.params.json"),
        one::<BeforeLlmResult>("hook.before_llm.result.json"),
        one::<AfterLlmParams>("hook.after_llm.params.json"),
        one::<AfterLlmResult>("hook.after_llm.result.json"),
        one::<ToolCall>("hook.before_tool.params.json"),
        one::<BeforeToolResult>("hook.before_tool.result.json"),
        one::<AfterToolParams>("hook.after_tool.params.json"),
        one::<AfterToolResult>("hook.after_tool.result.json"),
        one::<ToolCall>("hook.approve_tool.params.json"),
        one::<ApproveToolResult>("hook.approve_tool.result.json"),
        one::<LifecycleParams>("hook.lifecycle.params.json"),
        one::<LifecycleResult>("hook.lifecycle.result.json"),
        one::<CancelParams>("cancel_request.params.json"),
        // The sidecar's own (spec/sidecar.md); its stage methods reuse the
        // hook.* schemas above.
        one::<EmitParams>("host.emit.params.json"),
        one::<StatsResult>("host.stats.result.json"),
        one::<ReloadResult>("host.reload.result.json"),
    ]
}

/// A schema rendered as the checked-in file: pretty JSON and a newline.
pub fn render(schema: &Schema) -> String {
    let mut s = serde_json::to_string_pretty(schema).unwrap_or_default();
    s.push('\n');
    s
}
