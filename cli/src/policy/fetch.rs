//! Fetching a bundle and its `.minisig`: from a file path (read whole,
//! each poll) or an https URL (GET with `If-None-Match`, so an unchanged
//! bundle costs a 304). Both are capped at [`MAX_BUNDLE_BYTES`]; a request
//! that takes longer than [`REQUEST_TIMEOUT`] fails. Nothing fetched is
//! trusted here: the caller verifies it.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::archive::MAX_BUNDLE_BYTES;

/// The longest a signature file may be (minisign's are about 300 bytes).
const MAX_SIGNATURE_BYTES: u64 = 16 * 1024;

/// How long one request (headers and body) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Where bundles come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file path; its signature is the same path plus `.minisig`.
    File(PathBuf),
    /// An https URL; its signature is the same URL plus `.minisig`.
    Https(hyper::Uri),
}

impl Source {
    /// `https://...` is a URL, anything else with a scheme is refused, and
    /// the rest is a file path.
    pub fn parse(text: &str) -> Result<Source, String> {
        if text.starts_with("https://") {
            let uri = text
                .parse::<hyper::Uri>()
                .map_err(|e| format!("--policy {text}: {e}"))?;
            return Ok(Source::Https(uri));
        }
        if text.contains("://") {
            return Err(format!(
                "--policy {text}: only https:// URLs and file paths are fetched"
            ));
        }
        Ok(Source::File(PathBuf::from(text)))
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Https(u) => write!(f, "{u}"),
        }
    }
}

/// What one fetch brought.
pub enum Fetched {
    /// The server said 304: the bundle is the one it sent before.
    NotModified,
    /// A bundle, its signature, and its ETag when the server gave one.
    Bundle {
        bundle: Vec<u8>,
        signature: Vec<u8>,
        etag: Option<String>,
    },
}

/// Fetches from one source, remembering the ETag it was told to.
pub struct Fetcher {
    source: Source,
    client: Option<Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>>,
    etag: Option<String>,
}

impl Fetcher {
    /// A fetcher for `source`; for https, the TLS client trusting the
    /// system's roots (and `SSL_CERT_FILE`, as other TLS clients do).
    pub fn new(source: Source) -> Result<Fetcher, String> {
        let client = match source {
            Source::File(_) => None,
            Source::Https(_) => Some(https_client()?),
        };
        Ok(Fetcher {
            source,
            client,
            etag: None,
        })
    }

    /// The source it fetches from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Sends `If-None-Match: etag` from now on (once a bundle with it was
    /// judged, loaded or refused).
    pub fn remember(&mut self, etag: Option<String>) {
        self.etag = etag;
    }

    /// Fetches the bundle and, when it changed, its signature.
    pub async fn fetch(&self) -> Result<Fetched, String> {
        match (&self.source, &self.client) {
            (Source::File(path), _) => {
                let path = path.clone();
                let sig = super::signature::signature_path(&path);
                let read = move || {
                    let bundle = read_capped(&path, MAX_BUNDLE_BYTES)?;
                    let signature = read_capped(&sig, MAX_SIGNATURE_BYTES)?;
                    Ok::<_, String>((bundle, signature))
                };
                let (bundle, signature) = tokio::task::spawn_blocking(read)
                    .await
                    .map_err(|e| e.to_string())??;
                Ok(Fetched::Bundle {
                    bundle,
                    signature,
                    etag: None,
                })
            }
            (Source::Https(uri), Some(client)) => self.fetch_https(client, uri).await,
            (Source::Https(_), None) => Err("no https client".into()),
        }
    }

    async fn fetch_https(&self, client: &HttpsClient, uri: &hyper::Uri) -> Result<Fetched, String> {
        let (status, etag, bundle) =
            get(client, uri, self.etag.as_deref(), MAX_BUNDLE_BYTES).await?;
        if status == hyper::StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        let sig_uri: hyper::Uri = format!("{uri}.minisig")
            .parse()
            .map_err(|e| format!("{uri}.minisig: {e}"))?;
        let (sig_status, _, signature) = get(client, &sig_uri, None, MAX_SIGNATURE_BYTES).await?;
        if sig_status != hyper::StatusCode::OK {
            return Err(format!("{sig_uri}: HTTP {sig_status} (no signature)"));
        }
        Ok(Fetched::Bundle {
            bundle,
            signature,
            etag,
        })
    }
}

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>;

/// hyper's client over rustls (ring), trusting the system's roots as
/// rustls-native-certs finds them (`SSL_CERT_FILE` and `SSL_CERT_DIR`
/// first), https only, HTTP/1.1.
fn https_client() -> Result<HttpsClient, String> {
    let tls = crate::shared::remote::client_config()?;
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config((*tls).clone())
        .https_only()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// One GET: status, ETag and body (at most `cap` bytes), within
/// [`REQUEST_TIMEOUT`]. Any status but 200 and 304 is an error.
async fn get(
    client: &HttpsClient,
    uri: &hyper::Uri,
    etag: Option<&str>,
    cap: u64,
) -> Result<(hyper::StatusCode, Option<String>, Vec<u8>), String> {
    let mut request = hyper::Request::get(uri.clone()).header("user-agent", "hookhost");
    if let Some(etag) = etag {
        request = request.header("if-none-match", etag);
    }
    let request = request.body(Empty::new()).map_err(|e| e.to_string())?;
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        let status = response.status();
        let etag = response
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if status != hyper::StatusCode::OK && status != hyper::StatusCode::NOT_MODIFIED {
            return Err(format!("{uri}: HTTP {status}"));
        }
        let limit = usize::try_from(cap).unwrap_or(usize::MAX);
        let body = Limited::new(response.into_body(), limit)
            .collect()
            .await
            .map_err(|e| format!("{uri}: body: {e} (at most {cap} bytes)"))?;
        Ok((status, etag, body.to_bytes().to_vec()))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("{uri}: no answer within {} s", REQUEST_TIMEOUT.as_secs()))?
}

/// A file's bytes, refused past `cap`.
fn read_capped(path: &std::path::Path, cap: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > cap {
        return Err(format!("{}: larger than {cap} bytes", path.display()));
    }
    Ok(bytes)
}
