//! `[hooks.remotes.NAME]`: a hook served over the network, and the
//! `${env:NAME}` templates of its headers (read when the host connects, so
//! a token is never written into the file and a rotated one is picked up
//! on reconnect).
//!
//! The section is always understood, so that a build without the `remote`
//! feature can refuse it by name ([`super::ConfigError::MissingFeature`])
//! rather than as an unknown key.

use super::read::Kind;
use super::settings::{HookSettings, section};
use super::{Config, HookSpec, validate};
use std::collections::BTreeMap;

use hookhost_protocol::Stage;
use hookhost_protocol::event::EventPattern;
use serde::Deserialize;

use crate::observe::redact::display_url;

/// `[hooks.remotes.NAME]`: a hook that runs as a network service, reached
/// over WebSocket (`ws://`, `wss://`) or HTTP (`http://`, `https://`) with
/// the same protocol as a process (spec/protocol.md section 2.2).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct RemoteConfig {
    /// The keys every kind shares (read as the section's own: `deref`).
    #[serde(skip)]
    pub settings: HookSettings,
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
    /// How long one connection attempt (TCP, TLS and upgrade) may take;
    /// `hello_timeout_ms` when absent.
    #[serde(default)]
    pub connect_timeout_ms: Option<u64>,
}

section!(RemoteConfig);

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
            settings: HookSettings::default(),
            url: url.into(),
            headers: BTreeMap::new(),
            observe: Vec::new(),
            intercept,
            connect_timeout_ms: None,
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

impl Kind for RemoteConfig {
    const NOUN: &'static str = "remote hook";
    const NEEDS: Option<(&'static str, &'static str, bool)> =
        Some(("a remote hook", "remote", cfg!(feature = "remote")));

    fn section(config: &mut Config) -> &mut BTreeMap<String, Self> {
        &mut config.remotes
    }

    fn spec(&self, name: &str, _: &std::sync::Arc<BTreeMap<String, String>>) -> HookSpec {
        HookSpec::remote(name, self)
    }

    fn check(&self, _: &Config, _: &str) -> Result<(), String> {
        validate::remote(self).map_err(|e| e.to_string())?;
        validate::gate(self.quality_gate(), Some(&self.intercept)).map_err(|e| e.to_string())
    }
}
