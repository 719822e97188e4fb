//! Who may talk to a hook served over the network: the checks every
//! request and every WebSocket upgrade passes before jsonrpsee sees it.
//!
//! A hook listening on `127.0.0.1` is reachable by every local process and
//! by every web page the user opens: a browser lets any page open
//! `ws://127.0.0.1:PORT` or `POST` to it. So, in this order:
//!
//! 1. A request carrying an `Origin` header is refused with 403. Browsers
//!    send one on every WebSocket upgrade and every cross-site `POST`;
//!    native hosts (hookhost's jsonrpsee clients) send none.
//! 2. With a token configured ([`NetConfig::token`], `--token-file`), a
//!    request without `Authorization: Bearer TOKEN` (scheme in any case,
//!    token compared in constant time) is refused with 401 and
//!    `WWW-Authenticate: Bearer`.
//! 3. A `POST` whose `Content-Type` is not `application/json` (parameters
//!    such as `; charset=utf-8` allowed) is refused with 415: the types a
//!    page may `POST` without a CORS preflight are never JSON.
//!
//! The Python SDK (`netserve.py`) applies the same rules, in the same
//! order, with the same statuses.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::Either;
use hookhost_protocol::token::{bearer, token_matches, trim_ows};
use jsonrpsee::server::{HttpBody, HttpRequest, HttpResponse};

/// How [`crate::serve_ws_with`] serves, beyond the address: today, an
/// optional shared token.
///
/// ```no_run
/// # async fn example(hook: impl hookhost_sdk::Hook) -> std::io::Result<()> {
/// use hookhost_sdk::{NetConfig, serve_ws_with};
/// let config = NetConfig::new().token_file("/run/secrets/hook-token")?;
/// let server = serve_ws_with(hook, "127.0.0.1:8700", config).await?;
/// # drop(server); Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct NetConfig {
    pub(crate) token: Option<String>,
}

impl fmt::Debug for NetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let token = self.token.as_ref().map(|_| "<redacted>");
        f.debug_struct("NetConfig").field("token", &token).finish()
    }
}

impl NetConfig {
    /// No token: any request without an `Origin` header is served.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requires `Authorization: Bearer TOKEN` on every request and every
    /// WebSocket upgrade. Surrounding whitespace is trimmed; what is left
    /// must be printable ASCII without spaces, else [`crate::serve_ws_with`]
    /// fails with [`io::ErrorKind::InvalidInput`].
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// [`NetConfig::token`] with the content of the file at `path`, as
    /// `--token-file PATH` does.
    ///
    /// # Errors
    ///
    /// When the file cannot be read, holds nothing but whitespace, or a
    /// token that is not printable ASCII without spaces; the message names
    /// the file.
    pub fn token_file(self, path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("--token-file {}: cannot read it: {e}", path.display()),
            )
        })?;
        if text.trim().is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "--token-file {}: the file is empty; put the token in it",
                    path.display()
                ),
            ));
        }
        let config = self.token(text);
        config.checked_token().map_err(|e| {
            io::Error::new(e.kind(), format!("--token-file {}: {e}", path.display()))
        })?;
        Ok(config)
    }

    /// The token to require, checked; `None` when there is none.
    pub(crate) fn checked_token(&self) -> io::Result<Option<Arc<[u8]>>> {
        let Some(token) = &self.token else {
            return Ok(None);
        };
        let token = token.trim();
        if token.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the token is empty",
            ));
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the token must be printable ASCII without spaces (it travels in an HTTP header)",
            ));
        }
        Ok(Some(Arc::from(token.as_bytes())))
    }
}

/// The HTTP middleware that applies the checks: outermost, so that a
/// refused request never reaches jsonrpsee.
#[derive(Clone)]
pub(crate) struct Gate<S> {
    pub(crate) inner: S,
    pub(crate) token: Option<Arc<[u8]>>,
}

impl<S, B> tower::Service<HttpRequest<B>> for Gate<S>
where
    S: tower::Service<HttpRequest<B>, Response = HttpResponse>,
{
    type Response = HttpResponse;
    type Error = S::Error;
    type Future = Either<std::future::Ready<Result<HttpResponse, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: HttpRequest<B>) -> Self::Future {
        match check(&mut request, self.token.as_deref()) {
            Ok(()) => Either::Right(self.inner.call(request)),
            Err(refusal) => {
                eprintln!("hookhost-sdk: {}", refusal.log);
                Either::Left(std::future::ready(Ok(refusal.response())))
            }
        }
    }
}

/// A refused request: its status, the body that says why, and the line
/// logged on stderr.
#[derive(Debug)]
struct Refusal {
    status: u16,
    body: &'static str,
    log: String,
}

impl Refusal {
    fn response(&self) -> HttpResponse {
        let mut builder = HttpResponse::builder()
            .status(self.status)
            .header("content-type", "text/plain; charset=utf-8");
        if self.status == 401 {
            builder = builder.header("www-authenticate", "Bearer");
        }
        builder.body(HttpBody::from(self.body)).unwrap_or_default()
    }
}

/// The checks of the module docs, in order. An accepted JSON `POST` has
/// its `Content-Type` set to plain `application/json`, the one spelling
/// jsonrpsee's own check is sure to take.
fn check<B>(request: &mut HttpRequest<B>, token: Option<&[u8]>) -> Result<(), Refusal> {
    let headers = request.headers();
    if let Some(origin) = headers.get("origin") {
        return Err(Refusal {
            status: 403,
            body: "refused: requests from web pages (with an Origin header) are not served\n",
            log: format!("refused a request with Origin {origin:?} (403)"),
        });
    }
    if let Some(token) = token {
        let given = headers.get("authorization").map(|v| v.as_bytes());
        if !given
            .and_then(bearer)
            .is_some_and(|t| token_matches(t, token))
        {
            let why = if given.is_some() { "a wrong" } else { "no" };
            return Err(Refusal {
                status: 401,
                body: "refused: send `Authorization: Bearer <token>` with the hook's token\n",
                log: format!("refused a request with {why} token (401)"),
            });
        }
    }
    if request.method() == "POST" {
        let content_type = headers.get("content-type").map(|v| v.as_bytes());
        if !content_type.is_some_and(is_json) {
            return Err(Refusal {
                status: 415,
                body: "refused: the body must be JSON, sent with Content-Type: application/json\n",
                log: format!(
                    "refused a POST with Content-Type {:?} (415)",
                    String::from_utf8_lossy(content_type.unwrap_or(b"(none)"))
                ),
            });
        }
        if let Ok(plain) = "application/json".try_into() {
            request.headers_mut().insert("content-type", plain);
        }
    }
    Ok(())
}

/// `application/json`, in any case, with or without parameters.
fn is_json(value: &[u8]) -> bool {
    let media = value.split(|&b| b == b';').next().unwrap_or_default();
    trim_ows(media).eq_ignore_ascii_case(b"application/json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json ;charset=UTF-8",
        ] {
            assert!(is_json(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "",
            "text/plain",
            "application/json-rpc",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "application/jsonx",
        ] {
            assert!(!is_json(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn tokens_are_trimmed_and_checked() {
        let token = |t: &str| NetConfig::new().token(t).checked_token();
        assert_eq!(token(" abc\n").unwrap().as_deref(), Some(&b"abc"[..]));
        assert!(NetConfig::new().checked_token().unwrap().is_none());
        for bad in ["", " \n", "a b", "é"] {
            let err = token(bad).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        assert!(!format!("{:?}", NetConfig::new().token("secret")).contains("secret"));
    }
}
