//! `[hooks.webhooks.NAME]`: GoClaw's and Claude Code's `http` handler as
//! its own kind. The event is POSTed as the JSON a command hook of the
//! chosen dialect reads on stdin (not JSON-RPC), and the response body is
//! read as that hook's stdout. It runs as a command hook with a `url`
//! ([`WebhookConfig::command`]), so events, matcher, `rule`, `on_error`
//! and fail-closed events mean exactly what they mean there; what it adds
//! is the SSRF guard (loopback, private and link-local targets refused
//! unless allowed) and `${env:NAME}` headers read at every request.
//!
//! The section is always understood, so that a build without the `remote`
//! feature refuses it by name.

use super::read::Kind;
use super::settings::{HookSettings, section};
use super::{Config, HookSpec};
use std::collections::BTreeMap;

use serde::Deserialize;

use super::command::{CommandConfig, CommandConfigError};
use super::hooks::claude_code;
use super::remote::{EnvError, resolve_headers};
use crate::dialect::Dialect;
use crate::observe::redact::display_url;

/// `[hooks.webhooks.NAME]`: one webhook as configured. Every key is part
/// of the contract; an unknown one is a load error naming it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct WebhookConfig {
    /// The keys every kind shares (read as the section's own: `deref`).
    #[serde(skip)]
    pub settings: HookSettings,
    /// Where the event is POSTed: `http://` or `https://`.
    pub url: String,
    /// Whose hook format the body and the answer are in; Claude Code's
    /// when absent (the format most webhook servers are written for).
    #[serde(default = "claude_code")]
    pub dialect: Dialect,
    /// The dialect's event names (`PreToolUse`, `Stop`, ...).
    #[serde(default)]
    pub events: Vec<String>,
    /// A Claude Code permission rule (`Bash(rm *)`) the call must match.
    #[serde(default)]
    pub rule: Option<String>,
    /// Sent on every request. `${env:NAME}` is read from the host's
    /// environment at each request; an unset variable fails the call
    /// rather than sending an empty secret.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Allow 127.0.0.0/8 and ::1 (and their IPv6 forms).
    #[serde(default)]
    pub allow_loopback: bool,
    /// Allow RFC 1918, 100.64.0.0/10 and fc00::/7.
    #[serde(default)]
    pub allow_private: bool,
    /// Allow 169.254.0.0/16 and fe80::/10.
    #[serde(default)]
    pub allow_link_local: bool,
}

section!(WebhookConfig);

/// What a webhook adds to the command hook it runs as: its SSRF
/// allowances and its `${env:NAME}` header templates, read at every
/// request. Part of [`CommandConfig`], so a change to either rebuilds the
/// hook on reload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct WebhookGuard {
    /// Allow 127.0.0.0/8 and ::1.
    pub allow_loopback: bool,
    /// Allow RFC 1918, 100.64.0.0/10 and fc00::/7.
    pub allow_private: bool,
    /// Allow 169.254.0.0/16 and fe80::/10.
    pub allow_link_local: bool,
    /// Header templates, `${env:NAME}` read per request.
    pub headers: BTreeMap<String, String>,
}

/// What is wrong with a webhook's settings; the message names the key,
/// never a header's value or the URL's credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookConfigError {
    /// Not an `http://` or `https://` URL with a host.
    #[error("key `url`: {url:?} is not an http:// or https:// URL with a host")]
    Url {
        /// The URL with any credentials masked.
        url: String,
    },
    /// A header name HTTP does not allow.
    #[error("key `headers`: {0:?} is not a header name")]
    HeaderName(String),
    /// A header's `${env:NAME}` template cannot be expanded.
    #[error("header `{name}`: {source}")]
    Header {
        /// The header.
        name: String,
        /// Why.
        source: EnvError,
    },
    /// What the command hook it runs as refuses (events, matcher, ...).
    #[error(transparent)]
    Command(#[from] CommandConfigError),
}

impl WebhookConfig {
    /// A webhook POSTing Claude Code events `events` to `url`, every other
    /// setting at its default (no local targets); for embedding and tests.
    pub fn new(url: impl Into<String>, events: &[&str]) -> Self {
        Self {
            settings: HookSettings::default(),
            url: url.into(),
            dialect: Dialect::ClaudeCode,
            events: events.iter().map(|e| e.to_string()).collect(),
            rule: None,
            headers: BTreeMap::new(),
            allow_loopback: false,
            allow_private: false,
            allow_link_local: false,
        }
    }

    /// The command hook it runs as: the same events, filters and policy,
    /// with `url` in place of a program and its allowances and header
    /// templates as the command's [`WebhookGuard`].
    pub fn command(&self) -> CommandConfig {
        CommandConfig {
            settings: self.settings.clone(),
            events: self.events.clone(),
            rule: self.rule.clone(),
            dialect: self.dialect,
            url: Some(self.url.clone()),
            webhook: Some(Box::new(WebhookGuard {
                allow_loopback: self.allow_loopback,
                allow_private: self.allow_private,
                allow_link_local: self.allow_link_local,
                headers: self.headers.clone(),
            })),
            ..CommandConfig::default()
        }
    }

    /// Checks what serde cannot: the URL, header names and templates, and
    /// everything the command hook it runs as checks.
    pub fn validate(&self) -> Result<(), WebhookConfigError> {
        let bad_url = || WebhookConfigError::Url {
            url: display_url(&self.url).to_string(),
        };
        let (scheme, rest) = self.url.split_once("://").ok_or_else(bad_url)?;
        let host_empty = rest.split(['/', '?', '#']).next().is_none_or(str::is_empty);
        if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") || host_empty {
            return Err(bad_url());
        }
        for name in self.headers.keys() {
            if http_token(name).is_none() {
                return Err(WebhookConfigError::HeaderName(name.clone()));
            }
        }
        self.resolved_headers(|_| Some(String::new()))?;
        self.command().validate()?;
        Ok(())
    }

    /// The headers with every `${env:NAME}` replaced from `lookup`; the
    /// error names the header and the variable, never the value.
    pub fn resolved_headers(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<(String, String)>, WebhookConfigError> {
        resolve_headers(&self.headers, &lookup)
            .map_err(|(name, source)| WebhookConfigError::Header { name, source })
    }
}

/// `name` when it is an HTTP token (RFC 9110 section 5.6.2), the whole
/// alphabet of a header name.
fn http_token(name: &str) -> Option<&str> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    (!name.is_empty() && name.chars().all(ok)).then_some(name)
}

// A webhook's validation needs the `remote` feature (without it every
// webhook is refused, as config/mod.rs's feature test shows).
#[cfg(all(test, feature = "remote"))]
mod tests {
    use super::*;

    fn parse(toml: &str) -> Result<WebhookConfig, String> {
        let c: WebhookConfig = toml::from_str(toml).map_err(|e| e.to_string())?;
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn a_webhook_runs_as_a_claude_command_hook_with_its_url() {
        let c = parse("url = 'https://h.example/x'\nevents = ['PreToolUse']\n").expect("loads");
        assert_eq!(c.dialect, Dialect::ClaudeCode);
        assert!(!c.allow_loopback && !c.allow_private && !c.allow_link_local);
        let cmd = c.command();
        assert_eq!(cmd.url.as_deref(), Some("https://h.example/x"));
        assert_eq!(cmd.events, ["PreToolUse"]);
    }

    #[test]
    fn each_bad_setting_names_its_key() {
        let cases = [
            (
                "url = 'https://x/'\nevents = ['PreToolUse']\nallow_lopback = true\n",
                "allow_lopback",
            ),
            ("url = 'ftp://x/'\nevents = ['PreToolUse']\n", "key `url`"),
            ("url = 'http:///x'\nevents = ['PreToolUse']\n", "key `url`"),
            (
                "url = 'https://x/'\nevents = ['pre_tool_use']\n",
                "pre_tool_use",
            ),
            (
                "url = 'https://x/'\nevents = ['PreToolUse']\nheaders = {'a b' = '1'}\n",
                "a b",
            ),
            (
                "url = 'https://x/'\nevents = ['PreToolUse']\nheaders = {A = '${env:T'}\n",
                "header `A`",
            ),
            ("events = ['PreToolUse']\n", "url"),
        ];
        for (toml, part) in cases {
            let err = parse(toml).expect_err(toml);
            assert!(err.contains(part), "{toml}: {err}");
        }
    }

    #[test]
    fn an_unset_variable_is_an_error_never_an_empty_value() {
        let mut c = WebhookConfig::new("https://x/", &["PreToolUse"]);
        c.headers
            .insert("Authorization".into(), "Bearer ${env:TOKEN}".into());
        let set = c.resolved_headers(|n| (n == "TOKEN").then(|| "t0k".to_string()));
        assert_eq!(set, Ok(vec![("Authorization".into(), "Bearer t0k".into())]));
        let err = c.resolved_headers(|_| None).expect_err("unset");
        assert!(err.to_string().contains("`TOKEN` is not set"), "{err}");
    }
}

impl Kind for WebhookConfig {
    const NOUN: &'static str = "webhook";
    const NEEDS: Option<(&'static str, &'static str, bool)> =
        Some(("a webhook", "remote", cfg!(feature = "remote")));

    fn section(config: &mut Config) -> &mut BTreeMap<String, Self> {
        &mut config.webhooks
    }

    fn spec(&self, name: &str, tool_names: &std::sync::Arc<BTreeMap<String, String>>) -> HookSpec {
        HookSpec::command(name, self.command(), tool_names)
    }

    fn check(&self, _: &Config, _: &str) -> Result<(), String> {
        self.validate().map_err(|e| e.to_string())
    }
}
