//! `[hooks.remotes.NAME]`: a hook served over the network, and the
//! `${env:NAME}` templates of its headers (read when the host connects, so
//! a token is never written into the file and a rotated one is picked up
//! on reconnect).
//!
//! The section is always understood, so that a build without the `remote`
//! feature can refuse it by name ([`super::ConfigError::MissingFeature`])
//! rather than as an unknown key.

use std::collections::BTreeMap;

use hookhost_protocol::Stage;
use hookhost_protocol::event::EventPattern;
use serde::Deserialize;

use super::hooks::{BreakerConfig, QualityGate, Scope, yes};
use super::on_error::FailurePolicy;
use crate::observe::redact::display_url;

/// `[hooks.remotes.NAME]`: a hook that runs as a network service, reached
/// over WebSocket (`ws://`, `wss://`) or HTTP (`http://`, `https://`) with
/// the same protocol as a process (spec/protocol.md section 2.2).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteConfig {
    /// Off switch for one hook.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Lower runs first; ties break by name, across every kind of hook.
    #[serde(default)]
    pub priority: i64,
    /// Where the hook service listens.
    pub url: String,
    /// Sent on the WebSocket upgrade and on every HTTP request. A value may
    /// name environment variables as `${env:NAME}`, read when the host
    /// connects, so a token never has to be written into the file.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Event kinds to forward (WebSocket only: HTTP carries requests only).
    #[serde(default)]
    pub observe: Vec<String>,
    /// Stages to call the hook for.
    #[serde(default)]
    pub intercept: Vec<Stage>,
    /// Overrides the stage default deadline for this hook.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// How long one connection attempt (TCP, TLS and upgrade) may take;
    /// `hello_timeout_ms` when absent.
    #[serde(default)]
    pub connect_timeout_ms: Option<u64>,
    /// What a failure of this hook decides, as for process hooks; per
    /// stage default when absent.
    #[serde(default)]
    pub on_error: Option<FailurePolicy>,
    /// Regex on the tool name (anchored), as for process hooks.
    #[serde(default)]
    pub matcher: Option<String>,
    /// A CEL condition, as for process hooks.
    #[serde(default, rename = "if")]
    pub condition: Option<String>,
    /// `false` turns this hook's breaker off. Unset, it is on unless the
    /// hook fails closed (its policy is deny at a stage it intercepts): an
    /// open breaker would refuse every call for the cool-down, and whoever
    /// can make the hook fail five times could trigger that.
    #[serde(default)]
    pub breaker: Option<bool>,
    /// Overrides `breaker_failures` for this hook.
    #[serde(default)]
    pub breaker_failures: Option<u32>,
    /// Overrides `breaker_window_ms` for this hook.
    #[serde(default)]
    pub breaker_window_ms: Option<u64>,
    /// Overrides `breaker_cooldown_ms` for this hook.
    #[serde(default)]
    pub breaker_cooldown_ms: Option<u64>,
    /// Who the hook is for, as for process hooks.
    #[serde(default)]
    pub scope: Scope,
    /// Its quality gate at `subagent_stop`, as for process hooks.
    #[serde(default)]
    pub block_on_failure: Option<bool>,
    /// Its quality gate's retries, as for process hooks.
    #[serde(default)]
    pub max_retries: Option<u32>,
}

/// How a remote hook is reached, from its URL's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteTransport {
    /// `ws://` or `wss://`: one long-lived connection, reconnected with
    /// backoff; requests and runtime events.
    WebSocket,
    /// `http://` or `https://`: one POST per request; no events.
    Http,
}

impl RemoteConfig {
    /// A remote at `url` that intercepts `intercept`, every other setting at
    /// its default; handy for embedding and tests.
    pub fn new(url: impl Into<String>, intercept: Vec<Stage>) -> Self {
        Self {
            enabled: true,
            priority: 0,
            url: url.into(),
            headers: BTreeMap::new(),
            observe: Vec::new(),
            intercept,
            timeout_ms: None,
            connect_timeout_ms: None,
            on_error: None,
            matcher: None,
            condition: None,
            breaker: None,
            breaker_failures: None,
            breaker_window_ms: None,
            breaker_cooldown_ms: None,
            scope: Scope::default(),
            block_on_failure: None,
            max_retries: None,
        }
    }

    /// WebSocket or HTTP, from the URL's scheme; the error names the key.
    pub fn transport(&self) -> Result<RemoteTransport, RemoteConfigError> {
        let scheme = self
            .url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase())
            .ok_or_else(|| RemoteConfigError::NoScheme {
                url: display_url(&self.url).to_string(),
            })?;
        match scheme.as_str() {
            "ws" | "wss" => Ok(RemoteTransport::WebSocket),
            "http" | "https" => Ok(RemoteTransport::Http),
            _ => Err(RemoteConfigError::Scheme { scheme }),
        }
    }

    /// Its breaker overrides.
    pub fn breaker(&self) -> BreakerConfig {
        BreakerConfig {
            enabled: self.breaker,
            breaker_failures: self.breaker_failures,
            breaker_window_ms: self.breaker_window_ms,
            breaker_cooldown_ms: self.breaker_cooldown_ms,
        }
    }

    /// Its quality gate at `subagent_stop`, when it sets either key.
    pub fn quality_gate(&self) -> Option<QualityGate> {
        QualityGate::from_keys(self.block_on_failure, self.max_retries)
    }

    /// The parsed `observe` list (validated at load).
    pub fn observe_patterns(&self) -> Vec<EventPattern> {
        self.observe
            .iter()
            .filter_map(|p| EventPattern::parse(p).ok())
            .collect()
    }

    /// The headers with every `${env:NAME}` replaced from `lookup`; the
    /// error names the header and the variable, never the value.
    pub fn resolved_headers(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<(String, String)>, RemoteConfigError> {
        resolve_headers(&self.headers, &lookup)
            .map_err(|(name, source)| RemoteConfigError::Header { name, source })
    }
}

/// Headers with every `${env:NAME}` replaced from `lookup`; the error is
/// the header's name and why, never its value. Remotes and webhooks alike.
pub(crate) fn resolve_headers(
    headers: &BTreeMap<String, String>,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, (String, EnvError)> {
    headers
        .iter()
        .map(|(name, template)| {
            expand_env(template, lookup)
                .map(|v| (name.clone(), v))
                .map_err(|source| (name.clone(), source))
        })
        .collect()
}

/// What is wrong with a remote hook's URL or headers; the message names
/// the key, never a header's value or the URL's credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteConfigError {
    /// The URL has no `scheme://`.
    #[error("key `url`: {url:?} has no scheme")]
    NoScheme {
        /// The URL with any credentials masked.
        url: String,
    },
    /// A scheme other than ws, wss, http, https.
    #[error("key `url`: scheme `{scheme}` is not one of ws, wss, http, https")]
    Scheme {
        /// The scheme, lower-cased.
        scheme: String,
    },
    /// A header's `${env:NAME}` template cannot be expanded.
    #[error("header `{name}`: {source}")]
    Header {
        /// The header.
        name: String,
        /// Why.
        source: EnvError,
    },
}

/// Why a `${env:NAME}` template cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// `${env:` with no `}` after it.
    #[error("`${{env:` without its closing `}}`")]
    Unclosed,
    /// An empty name, or one with `=` or NUL.
    #[error("invalid environment variable name {0:?}")]
    BadName(String),
    /// The variable is not set.
    #[error("environment variable `{0}` is not set")]
    Unset(String),
}

/// Replaces each `${env:NAME}` in `template`; any other `$` is literal.
pub(crate) fn expand_env(
    template: &str,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<String, EnvError> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find("${env:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "${env:".len()..];
        let end = after.find('}').ok_or(EnvError::Unclosed)?;
        let name = &after[..end];
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(EnvError::BadName(name.to_string()));
        }
        let value = lookup(name).ok_or_else(|| EnvError::Unset(name.to_string()))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
