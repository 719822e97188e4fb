//! `hook.hello`: the handshake that opens every connection.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::stage::Stage;

/// The protocol version this crate implements.
pub const PROTOCOL_VERSION: u32 = 1;

/// Who the host is; informational, for a hook's logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostInfo {
    /// The host program, e.g. `hookhost`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// `hook.hello` params: sent once, before anything else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HelloParams {
    /// The hook's name in the host's config.
    pub name: String,
    /// The highest protocol version the host speaks.
    pub version: u32,
    /// What the config asks of this hook, in PicoClaw's vocabulary:
    /// `observe`, `llm`, `tool`, `approve`. Informational.
    #[serde(default)]
    pub modes: Vec<String>,
    /// The host program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostInfo>,
}

/// `hook.hello` result: the hook's side of the handshake.
///
/// A hook declares here what it intercepts and observes. The host calls it
/// for the intersection of this and its config, so a hook is never sent a
/// stage it did not ask for. When `intercept` (or `observe`) is absent the
/// hook made no declaration and the config alone decides; that is how a
/// PicoClaw hook answering `{"ok": true}` keeps working.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HelloResult {
    /// The hook's own name for itself, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The protocol version the hook will speak; absent means 1. Must not be
    /// higher than the host's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The stages this hook answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intercept: Option<Vec<Stage>>,
    /// The runtime event kinds this hook wants: exact kinds, `prefix.*`, or `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe: Option<Vec<String>>,
    /// PicoClaw's acceptance flag; `false` refuses the handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// Unknown keys, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why a hello result cannot open the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HelloError {
    /// The hook answered `ok: false`.
    #[error("the hook refused the handshake (ok: false)")]
    Refused,
    /// The hook wants a version the host does not speak.
    #[error("the hook speaks protocol version {hook}, the host supports {host}")]
    UnsupportedVersion {
        /// What the hook answered.
        hook: u32,
        /// What the host offered.
        host: u32,
    },
    /// An `observe` entry that is not a valid pattern.
    #[error("bad observe pattern: {0}")]
    BadPattern(#[from] crate::event::PatternError),
}

impl HelloResult {
    /// The version both sides will speak, or why there is none.
    pub fn negotiate(&self, host_version: u32) -> Result<u32, HelloError> {
        if self.ok == Some(false) {
            return Err(HelloError::Refused);
        }
        let v = self.version.unwrap_or(1);
        if v == 0 || v > host_version {
            return Err(HelloError::UnsupportedVersion {
                hook: v,
                host: host_version,
            });
        }
        if let Some(patterns) = &self.observe {
            for p in patterns {
                crate::event::EventPattern::parse(p)?;
            }
        }
        Ok(v)
    }
}
