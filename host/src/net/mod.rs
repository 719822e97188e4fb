//! Outbound HTTP for hooks the host calls by URL (webhooks, `url` command
//! hooks), guarded against SSRF: every connection goes to an address the
//! [`Policy`] checked after resolving the host ([`connect`]), redirects are
//! never followed (the caller sees the 3xx), and a response body bigger
//! than the caller's cap is an error, never cut and read.
//!
//! The API is one type, [`Client`]: `Client::new(policy)` and `send`, so
//! other outbound callers (LLM providers) get the same guard.

mod connect;
mod guard;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{HeaderMap, Request, StatusCode};
use hyper_util::client::legacy::Client as Legacy;
use hyper_util::rt::TokioExecutor;

pub(crate) use guard::Policy;

type Https = hyper_rustls::HttpsConnector<connect::Guarded>;

/// An HTTP/1 client (TLS through rustls and the platform's roots) whose
/// every connection passes the [`Policy`]. Cheap to clone; connections
/// are pooled per host, each one checked when it was opened.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    inner: Legacy<Https, Full<Bytes>>,
}

/// A whole response: its status, headers and body.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// Why a request got no whole response.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum NetError {
    /// Not sent, or no response head: the connector's reason (a refused
    /// address among them) and hyper's.
    #[error("{0}")]
    Send(String),
    /// The body is bigger than the cap; it was not read further.
    #[error("the response body is over the {cap}-byte cap")]
    TooLarge { cap: usize },
    /// The body broke off.
    #[error("reading the response body: {0}")]
    Body(String),
}

impl Client {
    /// A client whose connections pass `policy`.
    pub(crate) fn new(policy: Policy) -> Client {
        use rustls_platform_verifier::ConfigVerifierExt;
        let tls = rustls::ClientConfig::with_platform_verifier();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connect::Guarded::new(policy));
        Client {
            inner: Legacy::builder(TokioExecutor::new()).build(https),
        }
    }

    /// Sends `req` and reads the whole response, its body at most `cap`
    /// bytes. No deadline of its own: the caller bounds the future.
    pub(crate) async fn send(
        &self,
        req: Request<Full<Bytes>>,
        cap: usize,
    ) -> Result<Response, NetError> {
        let resp = self
            .inner
            .request(req)
            .await
            .map_err(|e| NetError::Send(chain(&e)))?;
        let (head, body) = resp.into_parts();
        let declared = head
            .headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > cap as u64) {
            return Err(NetError::TooLarge { cap });
        }
        let body = Limited::new(body, cap).collect().await.map_err(|e| {
            match e.downcast_ref::<http_body_util::LengthLimitError>() {
                Some(_) => NetError::TooLarge { cap },
                None => NetError::Body(chain(e.as_ref())),
            }
        })?;
        Ok(Response {
            status: head.status,
            headers: head.headers,
            body: body.to_bytes(),
        })
    }
}

/// An error and its sources, `: `-joined: hyper's own message alone
/// ("client error (Connect)") would hide the refused address.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        next = s.source();
    }
    text
}
