//! The `url` form of a command hook (Claude Code's `type: "http"`
//! handlers): the event the script would read on stdin is POSTed as JSON,
//! and the response body is read as its stdout. A 2xx answer is exit 0;
//! anything else is a failure of the hook, decided by its `on_error`.
//! There is no exit 2: to block, the body says so.
//!
//! Bounded like a spawn: the deadline covers connecting, sending and the
//! whole body; the body is capped at [`OUTPUT_CAP`]; redirects are not
//! followed (a redirect is a failure).

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::time::Instant;

use super::run::{Captured, Finished, OUTPUT_CAP};
use crate::error::CallError;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// Where and how to POST.
#[derive(Debug)]
pub(super) struct Target {
    url: hyper::Uri,
    headers: Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)>,
    client: Client<Https, Full<Bytes>>,
}

/// A `url` or header that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HttpConfigError(pub(crate) String);

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

fn client() -> Result<Client<Https, Full<Bytes>>, HttpConfigError> {
    use rustls_platform_verifier::ConfigVerifierExt;
    let tls = rustls::ClientConfig::with_platform_verifier();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(https))
}

impl Target {
    /// Parses the URL and headers once, at config time.
    pub(super) fn new(
        url: &str,
        headers: &BTreeMap<String, String>,
        allowed: &[String],
    ) -> Result<Target, HttpConfigError> {
        let bad = |what: String| HttpConfigError(what);
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| bad(format!("`url` {url:?}: {e}")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(bad(format!(
                "`url` {url:?}: only http:// and https:// are supported"
            )));
        }
        let mut parsed = Vec::new();
        for (k, v) in headers {
            let name = k
                .parse()
                .map_err(|_| bad(format!("`headers`: {k:?} is not a header name")))?;
            let value = interpolate(v, allowed).parse().map_err(|_| {
                bad(format!(
                    "`headers`: the value of {k:?} is not a header value"
                ))
            })?;
            parsed.push((name, value));
        }
        Ok(Target {
            url: uri,
            headers: parsed,
            client: client()?,
        })
    }

    /// POSTs `input` and reads the answer by `deadline`.
    pub(super) async fn post(
        &self,
        input: &Value,
        deadline: Instant,
    ) -> Result<Finished, CallError> {
        let budget = deadline.saturating_duration_since(Instant::now());
        let mut req = hyper::Request::post(self.url.clone())
            .header(hyper::header::CONTENT_TYPE, "application/json");
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let body = Full::new(Bytes::from(input.to_string()));
        let req = req
            .body(body)
            .map_err(|e| CallError::Unavailable(format!("cannot build the request: {e}")))?;
        let exchange = async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| CallError::Unavailable(format!("POST {}: {e}", self.url)))?;
            let status = resp.status();
            let body = Limited::new(resp.into_body(), OUTPUT_CAP)
                .collect()
                .await
                .map_err(|e| {
                    CallError::Crashed(format!("POST {}: reading the answer: {e}", self.url))
                })?;
            Ok::<_, CallError>((status, body.to_bytes()))
        };
        let (status, bytes) = tokio::time::timeout_at(deadline, exchange)
            .await
            .map_err(|_| CallError::Timeout(budget))??;
        if !status.is_success() {
            let tail = String::from_utf8_lossy(&bytes[..bytes.len().min(500)]).into_owned();
            return Err(CallError::Crashed(format!(
                "POST {}: HTTP {status}: {tail}",
                self.url
            )));
        }
        Ok(Finished {
            status: ExitStatus::from_raw(0),
            stdout: Captured {
                bytes: bytes.to_vec(),
                dropped: 0,
            },
            stderr: Captured::default(),
        })
    }
}
