//! The connector under the guarded client: for every new connection it
//! resolves the host itself, checks each address with the [`Policy`], and
//! opens the TCP connection to an address it checked. hyper-util's own
//! `HttpConnector` skips its resolver for an IP-literal host, so a custom
//! resolver alone would let `http://127.0.0.1/` through; and checking a
//! name before handing it to a connector that resolves again would let a
//! rebinding name answer public to the check and private to the connect.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::guard::{Policy, Refused};

/// Why a connection was not opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ConnectError {
    /// The URL names no host.
    #[error("the URL names no host")]
    NoHost,
    /// The name did not resolve.
    #[error("cannot resolve `{host}`: {source}")]
    Resolve { host: String, source: io::Error },
    /// A resolved address is one the policy refuses.
    #[error("refused `{host}`: {refused}")]
    Refused { host: String, refused: Refused },
    /// Every checked address refused the connection.
    #[error("cannot connect to {addr}: {source}")]
    Connect { addr: SocketAddr, source: io::Error },
}

/// A `tower` connector for hyper-util's client that connects only to
/// addresses its policy allows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guarded {
    policy: Policy,
}

impl Guarded {
    pub(crate) fn new(policy: Policy) -> Guarded {
        Guarded { policy }
    }
}

impl tower_service::Service<Uri> for Guarded {
    type Response = TokioIo<TcpStream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let policy = self.policy;
        Box::pin(async move { connect(policy, &uri).await.map(TokioIo::new) })
    }
}

/// Resolves, checks every address, and connects to the first checked one
/// that answers. A name with any refused address is refused whole: its
/// owner pointed it at a range this hook may not reach.
async fn connect(policy: Policy, uri: &Uri) -> Result<TcpStream, ConnectError> {
    let host = uri.host().ok_or(ConnectError::NoHost)?;
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    let addrs = resolve(host, port).await?;
    for addr in &addrs {
        policy
            .check(addr.ip())
            .map_err(|refused| ConnectError::Refused {
                host: host.to_string(),
                refused,
            })?;
    }
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(source) => last = Some(ConnectError::Connect { addr, source }),
        }
    }
    Err(last.unwrap_or_else(|| ConnectError::Resolve {
        host: host.to_string(),
        source: io::Error::new(io::ErrorKind::NotFound, "no address"),
    }))
}

/// The addresses of `host`: itself when it is an IP literal (brackets
/// and all), else what the system resolver answers now.
async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, ConnectError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let resolve_error = |source| ConnectError::Resolve {
        host: host.to_string(),
        source,
    };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(resolve_error)?
        .collect();
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> Uri {
        s.parse().expect("a test URI")
    }

    /// From GoClaw's agent hooks (seeds/goclaw-agent-hooks.txt, "checked
    /// after DNS resolution"): an IP literal, a bracketed IPv6 literal and a
    /// name that resolves to loopback are all refused before any connect.
    #[tokio::test]
    async fn literals_and_names_are_checked_after_resolution() {
        for url in [
            "http://127.0.0.1:9/",
            "http://[::1]:9/",
            "http://[::ffff:127.0.0.1]:9/",
            "http://localhost:9/",
        ] {
            let err = connect(Policy::default(), &uri(url))
                .await
                .expect_err("loopback is refused");
            assert!(matches!(err, ConnectError::Refused { .. }), "{url}: {err}");
        }
    }

    #[tokio::test]
    async fn an_allowed_address_is_connected_to() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let policy = Policy {
            allow_loopback: true,
            ..Policy::default()
        };
        let stream = connect(policy, &uri(&format!("http://127.0.0.1:{port}/")))
            .await
            .expect("connects");
        assert_eq!(stream.peer_addr().expect("peer").port(), port);
    }
}
