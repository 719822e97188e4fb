//! The checks serde cannot make, one function per section: a program to
//! run, parsable `observe` patterns, positive deadlines, sane environment
//! names, a remote's scheme, host and headers. Each error names the key;
//! [`super::Config::parse`] adds the file and the hook.

use hookhost_protocol::Stage;
use hookhost_protocol::event::{EventPattern, PatternError};

use super::remote::{EnvError, RemoteConfig, RemoteConfigError, RemoteTransport, expand_env};
use super::{Defaults, ProcessConfig, QualityGate, ScopeError};
use crate::observe::redact::display_url;

/// What is wrong with one section, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Invalid {
    /// A process hook whose `command` is an empty list.
    #[error("key `command`: must name a program (an argv list, not empty)")]
    NoProgram,
    /// A process hook whose program is blank.
    #[error("key `command`: the program name is empty")]
    EmptyProgram,
    /// An `observe` entry that is not a pattern.
    #[error("key `observe[{index}]`: {source}")]
    Observe {
        /// Its position in the list.
        index: usize,
        /// Why.
        source: PatternError,
    },
    /// A deadline, size or count that must be positive is 0.
    #[error("key `{0}`: must be at least 1")]
    Zero(&'static str),
    /// An `env` or `inherit_env` name a process cannot carry.
    #[error("invalid environment variable name {0:?}")]
    EnvName(String),
    /// A remote URL with nothing between `://` and the path.
    #[error("key `url`: {0:?} names no host")]
    NoHost(String),
    /// `observe` on an http:// remote.
    #[error(
        "key `observe`: an http:// hook gets requests only (no runtime events); use ws:// to observe"
    )]
    ObserveOverHttp,
    /// A header name with characters HTTP does not allow.
    #[error("key `headers`: {0:?} is not a valid header name")]
    HeaderName(String),
    /// A header value that would split the request.
    #[error("key `headers.{0}`: a header value cannot hold a line break or NUL")]
    HeaderValue(String),
    /// A header's `${env:NAME}` template that cannot be read.
    #[error("key `headers.{name}`: {source}")]
    HeaderTemplate {
        /// The header.
        name: String,
        /// Why.
        source: EnvError,
    },
    /// The URL's scheme.
    #[error(transparent)]
    Remote(#[from] RemoteConfigError),
    /// A `scope` list that would match nothing.
    #[error(transparent)]
    Scope(#[from] ScopeError),
    /// `block_on_failure` or `max_retries` on a hook that is never asked
    /// at `subagent_stop`.
    #[error(
        "keys `block_on_failure` and `max_retries` apply at subagent_stop only, and `intercept` does not list `lifecycle`"
    )]
    GateOffLifecycle,
}

/// A hook's quality-gate keys only on a hook asked at the lifecycle
/// stage (`intercept`; `None` when the kind decides its stages itself).
pub(crate) fn gate(gate: Option<QualityGate>, intercept: Option<&[Stage]>) -> Result<(), Invalid> {
    let off = intercept.is_some_and(|i| !i.contains(&Stage::Lifecycle));
    if gate.is_some() && off {
        return Err(Invalid::GateOffLifecycle);
    }
    Ok(())
}

/// `[hooks.processes.NAME]`.
pub(crate) fn process(hook: &ProcessConfig) -> Result<(), Invalid> {
    match hook.command.first() {
        None => return Err(Invalid::NoProgram),
        Some(p) if p.trim().is_empty() => return Err(Invalid::EmptyProgram),
        Some(_) => {}
    }
    observe(&hook.observe)?;
    match hook
        .env
        .keys()
        .chain(hook.inherit_env.iter())
        .find(|name| name.is_empty() || name.contains('=') || name.contains('\0'))
    {
        Some(bad) => Err(Invalid::EnvName(bad.clone())),
        None => Ok(()),
    }
}

/// `[hooks.remotes.NAME]`.
pub(crate) fn remote(hook: &RemoteConfig) -> Result<(), Invalid> {
    let transport = hook.transport()?;
    let host = hook
        .url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""))
        .unwrap_or("");
    if host.is_empty() {
        return Err(Invalid::NoHost(display_url(&hook.url).to_string()));
    }
    observe(&hook.observe)?;
    if transport == RemoteTransport::Http && !hook.observe.is_empty() {
        return Err(Invalid::ObserveOverHttp);
    }
    if hook.connect_timeout_ms == Some(0) {
        return Err(Invalid::Zero("connect_timeout_ms"));
    }
    hook.headers
        .iter()
        .try_for_each(|(name, value)| header(name, value))
}

/// One header: a token name, a value without line breaks, and a template
/// whose syntax is right. The variables are read when the host connects,
/// so that a rotated token is picked up on reconnect.
fn header(name: &str, value: &str) -> Result<(), Invalid> {
    let valid_name = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !valid_name {
        return Err(Invalid::HeaderName(name.to_string()));
    }
    if value.contains(['\r', '\n', '\0']) {
        return Err(Invalid::HeaderValue(name.to_string()));
    }
    expand_env(value, &|_| Some(String::new()))
        .map(|_| ())
        .map_err(|source| Invalid::HeaderTemplate {
            name: name.to_string(),
            source,
        })
}

/// Every `observe` entry parses.
fn observe(patterns: &[String]) -> Result<(), Invalid> {
    patterns.iter().enumerate().try_for_each(|(index, p)| {
        EventPattern::parse(p)
            .map(|_| ())
            .map_err(|source| Invalid::Observe { index, source })
    })
}

/// `[hooks.defaults]`: every deadline, size and count that a 0 would make
/// useless (or a division by zero) is positive.
pub(crate) fn defaults(d: &Defaults) -> Result<(), Invalid> {
    let nonzero = [
        ("observer_timeout_ms", d.observer_timeout_ms),
        ("interceptor_timeout_ms", d.interceptor_timeout_ms),
        ("approval_timeout_ms", d.approval_timeout_ms),
        ("hello_timeout_ms", d.hello_timeout_ms),
        ("max_line_bytes", d.max_line_bytes as u64),
        ("event_queue", d.event_queue as u64),
        ("chain_budget_ms", d.chain_budget_ms),
        ("breaker_failures", d.breaker_failures as u64),
        ("breaker_window_ms", d.breaker_window_ms),
        ("restart_backoff_max_ms", d.restart_backoff_max_ms),
    ];
    match nonzero.into_iter().find(|(_, v)| *v == 0) {
        Some((key, _)) => Err(Invalid::Zero(key)),
        None => Ok(()),
    }
}
