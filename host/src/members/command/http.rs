//! The `url` form of a command hook (Claude Code's `type: "http"`
//! handlers) and `[hooks.webhooks]`, which run as one: the event the
//! script would read on stdin is POSTed as JSON, and the response body is
//! read as its stdout. A 2xx answer whose body is empty or a JSON object
//! is exit 0; anything else (a 2xx HTML page or plain text included, as
//! Claude Code reads an http hook) is a failure of the hook, decided by
//! its `on_error`. There is no exit 2: to block, the body says so.
//!
//! Bounded like a spawn: the deadline covers connecting, sending, a retry
//! and the whole body; a body over [`OUTPUT_CAP`] is a failure, never cut
//! and read; redirects are not followed (a 3xx is a failure naming its
//! `Location`); a 5xx is retried once after [`RETRY_AFTER`] when the
//! deadline leaves room. Every connection passes the hook's SSRF policy
//! ([`crate::net`]): a webhook's own allowances, or all of them for a
//! `url` command hook (Claude Code does not block local targets, and its
//! imported hooks often post to a local daemon).

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;

use super::CommandHook;
use super::run::{Captured, Finished, OUTPUT_CAP};
use crate::config::{WebhookGuard, resolve_headers};
use crate::error::CallError;
use crate::net::{self, Policy};
use crate::observe::redact::display_url;
use crate::policy::deadline::Deadline;

/// How long to wait before the one retry of a 5xx (GoClaw's backoff).
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Where and how to POST.
#[derive(Debug)]
pub(super) struct Target {
    url: hyper::Uri,
    /// The URL as it may be shown (credentials masked).
    shown: String,
    headers: Headers,
    client: net::Client,
    /// Built from `[hooks.webhooks]` rather than a command hook's `url`.
    webhook: bool,
}

/// A hook's headers.
#[derive(Debug)]
enum Headers {
    /// A command hook's: Claude Code's `$NAME` read once, at config time.
    Fixed(Vec<(HeaderName, HeaderValue)>),
    /// A webhook's `${env:NAME}` templates, read at every request.
    Env(BTreeMap<String, String>),
}

/// A `url` or header that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct HttpConfigError(pub(crate) String);

/// `$NAME` and `${NAME}` in a header value, from the host's environment,
/// for names in `allowed`; any other name becomes empty, as Claude Code
/// does, so a header never leaks a variable the hook was not given.
fn interpolate(value: &str, allowed: &[String]) -> String {
    let re = regex::Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)");
    let Ok(re) = re else { return value.to_string() };
    re.replace_all(value, |c: &regex::Captures<'_>| {
        let name = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
        match allowed.iter().any(|a| a == name) {
            true => std::env::var(name).unwrap_or_default(),
            false => String::new(),
        }
    })
    .into_owned()
}

/// An http:// or https:// URL.
fn parse_url(url: &str) -> Result<hyper::Uri, HttpConfigError> {
    let shown = display_url(url);
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| HttpConfigError(format!("`url` {shown:?}: {e}")))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(HttpConfigError(format!(
            "`url` {shown:?}: only http:// and https:// are supported"
        )));
    }
    Ok(uri)
}

/// One header, or an error naming it (never its value).
fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), HttpConfigError> {
    let k = name
        .parse()
        .map_err(|_| HttpConfigError(format!("`headers`: {name:?} is not a header name")))?;
    let v = value.parse().map_err(|_| {
        HttpConfigError(format!(
            "`headers`: the value of {name:?} is not a header value"
        ))
    })?;
    Ok((k, v))
}

impl Target {
    /// A command hook's target: URL and headers parsed once, at config
    /// time; every address allowed but the never-allowed ones.
    pub(super) fn new(
        url: &str,
        headers: &BTreeMap<String, String>,
        allowed: &[String],
    ) -> Result<Target, HttpConfigError> {
        let parsed = headers
            .iter()
            .map(|(k, v)| header(k, &interpolate(v, allowed)))
            .collect::<Result<_, _>>()?;
        Ok(Target {
            url: parse_url(url)?,
            shown: display_url(url).into_owned(),
            headers: Headers::Fixed(parsed),
            client: net::Client::new(Policy::LOCAL_OK),
            webhook: false,
        })
    }

    /// A webhook's target: its allowances as the policy, its headers read
    /// at each request.
    pub(super) fn webhook(url: &str, guard: &WebhookGuard) -> Result<Target, HttpConfigError> {
        let policy = Policy {
            allow_loopback: guard.allow_loopback,
            allow_private: guard.allow_private,
            allow_link_local: guard.allow_link_local,
        };
        Ok(Target {
            url: parse_url(url)?,
            shown: display_url(url).into_owned(),
            headers: Headers::Env(guard.headers.clone()),
            client: net::Client::new(policy),
            webhook: true,
        })
    }

    /// The headers of one request: a webhook's templates expanded now, so
    /// a rotated token is picked up and an unset one fails the call.
    fn headers(&self) -> Result<Vec<(HeaderName, HeaderValue)>, CallError> {
        let unavailable = |e: String| CallError::Unavailable(format!("POST {}: {e}", self.shown));
        match &self.headers {
            Headers::Fixed(h) => Ok(h.clone()),
            Headers::Env(templates) => resolve_headers(templates, &|n: &str| std::env::var(n).ok())
                .map_err(|(name, e)| unavailable(format!("header `{name}`: {e}")))?
                .iter()
                .map(|(k, v)| header(k, v).map_err(|e| unavailable(e.0)))
                .collect(),
        }
    }

    /// POSTs `input` and reads the answer by `deadline`.
    pub(super) async fn post(
        &self,
        input: &Value,
        deadline: Instant,
    ) -> Result<Finished, CallError> {
        let limit = Deadline::until(deadline);
        let headers = self.headers()?;
        let body = Bytes::from(input.to_string());
        let mut retried = false;
        loop {
            let mut req = hyper::Request::post(self.url.clone())
                .header(hyper::header::CONTENT_TYPE, "application/json");
            for (k, v) in &headers {
                req = req.header(k, v);
            }
            let req = req
                .body(Full::new(body.clone()))
                .map_err(|e| CallError::Unavailable(format!("cannot build the request: {e}")))?;
            let resp = limit
                .bound(self.client.send(req, OUTPUT_CAP))
                .await?
                .map_err(|e| self.failed(e))?;
            let room = Instant::now() + RETRY_AFTER < deadline;
            if resp.status.is_server_error() && !retried && room {
                tracing::debug!(url = %self.shown, status = %resp.status, "retrying once");
                retried = true;
                tokio::time::sleep(RETRY_AFTER).await;
                continue;
            }
            return self.finish(resp);
        }
    }

    /// A request that got no whole answer: a refused address or a dead
    /// server is `Unavailable` (the hook never ran), a body over the cap
    /// or broken off is `Crashed`.
    fn failed(&self, e: net::NetError) -> CallError {
        let text = format!("POST {}: {e}", self.shown);
        match e {
            net::NetError::Send(_) => CallError::Unavailable(text),
            _ => CallError::Crashed(text),
        }
    }

    /// A whole answer as the run it stands for.
    fn finish(&self, resp: net::Response) -> Result<Finished, CallError> {
        let status = resp.status;
        if status.is_redirection() {
            let location = resp
                .headers
                .get(hyper::header::LOCATION)
                .map(|l| display_url(&String::from_utf8_lossy(l.as_bytes())).into_owned())
                .unwrap_or_else(|| "nowhere".to_string());
            return Err(CallError::Crashed(format!(
                "POST {}: HTTP {status}: redirects are not followed (to {location})",
                self.shown
            )));
        }
        let body = &resp.body;
        let tail = || String::from_utf8_lossy(&body[..body.len().min(500)]).into_owned();
        if !status.is_success() {
            return Err(CallError::Crashed(format!(
                "POST {}: HTTP {status}: {}",
                self.shown,
                tail()
            )));
        }
        if !is_empty_or_object(body) {
            return Err(CallError::Crashed(format!(
                "POST {}: HTTP {status}: the body is neither empty nor a JSON object: {}",
                self.shown,
                tail()
            )));
        }
        Ok(Finished {
            status: ExitStatus::from_raw(0),
            stdout: Captured {
                bytes: resp.body.to_vec(),
                dropped: 0,
            },
            stderr: Captured::default(),
            // No process: nothing can be left behind.
            pgid: 0,
        })
    }
}

/// Whether a 2xx body is an answer: nothing (blanks only), or one JSON
/// object. A page of HTML, plain text or any other JSON is not.
fn is_empty_or_object(body: &[u8]) -> bool {
    if body.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    serde_json::from_slice::<Value>(body).is_ok_and(|v| v.is_object())
}

impl CommandHook {
    /// Where a webhook posts (credentials masked); `None` for any other
    /// command hook.
    pub(crate) fn webhook_url(&self) -> Option<&str> {
        match &self.run {
            super::Run::Post(t) if t.webhook => Some(t.shown.as_str()),
            _ => None,
        }
    }
}
