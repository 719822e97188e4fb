//! The `hook.hello` handshake as every peer performs it, whatever carries
//! it: the params the host offers, and reading the answer into an agreed
//! version (spec/protocol.md section 4).

use std::time::Duration;

use hookhost_protocol::{HelloParams, HelloResult, PROTOCOL_VERSION, Stage, hello::HostInfo};
use serde::Deserialize;
use serde_json::Value;

use crate::error::StartError;

/// What one successful start (spawn or connect, plus hello) reported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hello {
    /// The protocol version agreed on.
    pub(crate) version: u32,
    /// How long spawn or connect plus the handshake took.
    pub(crate) took: Duration,
}

/// The `hook.hello` params for a hook configured with `intercept` (and
/// some `observe` list when `observes`): the modes it will be used in.
pub(crate) fn hello_params(
    name: &str,
    intercept: &[Stage],
    observes: bool,
) -> Result<Value, StartError> {
    let mut modes: Vec<String> = Vec::new();
    if observes {
        modes.push("observe".into());
    }
    for s in intercept {
        let m = s.mode().to_string();
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    let params = HelloParams {
        name: name.to_string(),
        version: PROTOCOL_VERSION,
        modes,
        host: Some(HostInfo {
            name: "hookhost".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }),
    };
    serde_json::to_value(&params).map_err(|e| StartError::Settings(e.to_string()))
}

/// Reads a hello answer and agrees on the version, or says why not.
pub(crate) fn accept_hello(reply: &Value) -> Result<(u32, HelloResult), StartError> {
    let result =
        HelloResult::deserialize(reply).map_err(|e| StartError::InvalidHello(e.to_string()))?;
    let version = result
        .negotiate(PROTOCOL_VERSION)
        .map_err(StartError::Refused)?;
    Ok((version, result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_params_offer_each_mode_once_with_observe_first() {
        let p = hello_params("h", &[Stage::BeforeTool, Stage::AfterTool], true).unwrap();
        assert_eq!(p["name"], "h");
        assert_eq!(p["version"], PROTOCOL_VERSION);
        let modes = p["modes"].as_array().unwrap();
        assert_eq!(modes[0], "observe");
        let mut sorted = modes.clone();
        sorted.dedup();
        assert_eq!(&sorted, modes);
    }

    #[test]
    fn a_refusal_and_a_garbled_answer_read_as_before() {
        let refused = accept_hello(&json!({"ok": false})).unwrap_err();
        assert!(
            refused.to_string().starts_with("handshake refused: "),
            "{refused}"
        );
        let garbled = accept_hello(&json!("hello")).unwrap_err();
        assert!(
            garbled
                .to_string()
                .starts_with("invalid hook.hello result: "),
            "{garbled}"
        );
        assert_eq!(accept_hello(&json!({"version": 1})).unwrap().0, 1);
    }
}
