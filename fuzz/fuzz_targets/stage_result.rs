//! Result decoding at every stage, and the chain fold over it.
//!
//! Proves, for any JSON value a hook could send as `result`: decoding never
//! panics at any stage or lifecycle event; a decoded decision is one the
//! stage allows; folding the value through a two-hook `Chain` (the first
//! hook failing open, the second closed) never leaves params that break
//! the stage's shape; the chain's verdict in wire form (`to_wire`, what
//! `hookhost call` prints) decodes as a legal result of that stage; a value
//! accepted as a stage's params passes a `continue` chain unchanged; and a
//! `hook.hello` result decodes and negotiates without panicking.
//!
//! Input: JSON text.
#![no_main]

use hookhost_protocol::chain::validate_params;
use hookhost_protocol::{
    Chain, Decision, Flow, HelloResult, LifecycleEvent, OnError, Outcome, PROTOCOL_VERSION,
    ResultError, Stage, check_lifecycle_decision, decode_lifecycle_result, decode_result,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fn params(stage: Stage) -> Value {
    match stage {
        Stage::BeforeLlm => json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        Stage::AfterLlm => json!({"model": "m", "response": {"content": "hi"}}),
        Stage::BeforeTool | Stage::ApproveTool => {
            json!({"tool": "shell", "arguments": {"command": "ls", "cwd": "/tmp"}})
        }
        Stage::AfterTool => json!({
            "tool": "shell", "arguments": {"command": "ls"}, "result": {"for_llm": "ok"}
        }),
        Stage::Lifecycle => unreachable!("lifecycle params name an event"),
    }
}

fn allowed(stage: Stage, d: &Decision) -> bool {
    match d {
        Decision::Approval { .. } => stage == Stage::ApproveTool,
        Decision::Respond(_)
        | Decision::DenyTool(_)
        | Decision::Ask(_)
        | Decision::Allow { .. } => stage == Stage::BeforeTool,
        Decision::Modify(_) => stage.payload_key().is_some(),
        // At approve_tool `continue` is the abstention.
        Decision::Continue => stage != Stage::Lifecycle,
        Decision::Abort { .. } => !matches!(stage, Stage::ApproveTool | Stage::Lifecycle),
        Decision::Lifecycle { .. } => false,
    }
}

fn fold(stage: Stage, event: Option<LifecycleEvent>, params: Value, result: &Value) {
    let mut chain = Chain::new(stage, params).expect("the fixed params are valid");
    for (hook, policy) in [("open", OnError::Allow), ("closed", OnError::Deny)] {
        let flow = chain.step(hook, policy, Ok(result));
        validate_params(stage, chain.params()).expect("the chain's params keep their shape");
        assert_eq!(flow == Flow::Stop, chain.is_done());
        if flow == Flow::Stop {
            break;
        }
    }
    let wire = chain.finish().to_wire(stage);
    let back = match event {
        Some(event) => decode_lifecycle_result(event, &wire),
        None => decode_result(stage, &wire),
    };
    if let Err(e) = back {
        panic!("the verdict {wire} is not a legal {stage} result: {e}");
    }
}

fn as_params(stage: Stage, value: &Value) {
    let Ok(mut chain) = Chain::new(stage, value.clone()) else {
        return;
    };
    // The chain fills in what the host always sends (`arguments`,
    // `messages`, `response.content`); a no-op hook changes nothing
    // after that, and filling in again changes nothing either.
    let start = chain.params().clone();
    if let Ok(again) = Chain::new(stage, start.clone()) {
        assert_eq!(again.params(), &start, "filling in is not idempotent");
    }
    // At approve_tool the no-op is the abstention: `{}` lacks `approved`,
    // and `approved: true` decides.
    let answer = match stage {
        Stage::ApproveTool => json!({"action": "continue"}),
        _ => json!({}),
    };
    chain.step("noop", OnError::Deny, Ok(&answer));
    match chain.finish() {
        Outcome::Continue {
            params,
            modified,
            contexts,
        } => {
            assert!(!modified && contexts.is_empty());
            assert_eq!(params, start);
        }
        Outcome::Lifecycle {
            contexts,
            system_messages,
            summary,
        } => {
            assert!(contexts.is_empty() && system_messages.is_empty() && summary.is_none());
        }
        other => panic!("a no-op hook decided {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(result) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(hello) = serde_json::from_value::<HelloResult>(result.clone()) {
        let _ = hello.negotiate(PROTOCOL_VERSION);
    }
    for stage in Stage::ALL {
        as_params(stage, &result);
        if stage == Stage::Lifecycle {
            assert_eq!(
                decode_result(stage, &result),
                Err(ResultError::LifecycleNeedsEvent)
            );
            continue;
        }
        if let Ok(d) = decode_result(stage, &result) {
            assert!(allowed(stage, &d), "{d:?} decoded at {stage}");
        }
        fold(stage, None, params(stage), &result);
    }
    for event in LifecycleEvent::ALL {
        let decoded = decode_lifecycle_result(event, &result);
        if !event.is_request() {
            assert_eq!(decoded, Err(ResultError::NotARequestEvent { event }));
            continue;
        }
        if let Ok(d) = &decoded {
            assert!(matches!(d, Decision::Lifecycle { .. }), "{d:?} at {event}");
            check_lifecycle_decision(event, d).expect("a decoded answer passes the event's check");
        }
        let params = json!({"event": event.as_str(), "payload": {"prompt": "hi"}});
        fold(Stage::Lifecycle, Some(event), params, &result);
    }
});
