//! The relay's way to a team's gateway: one HTTP/1.1 request to
//! `https://HOST[:PORT][/PREFIX]` (or `http://` on a loopback address), as
//! blocking as the Unix-socket client ([`super::client`]) and bounded by
//! the same deadline. The server's certificate is checked against the
//! system's roots, or the file `SSL_CERT_FILE` names (a team's private CA),
//! as other TLS clients on the machine read them.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;

use super::client::{Failed, split_response};

/// The largest answer read from a gateway.
const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// A gateway's address, from `relay --connect URL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gateway {
    tls: bool,
    host: String,
    port: u16,
    /// The path the routes hang under (`""` or `/team`).
    prefix: String,
}

impl Gateway {
    /// `https://HOST[:PORT][/PREFIX]`, or `http://` on a loopback
    /// address (plain text crosses no network there).
    pub fn parse(url: &str) -> Result<Gateway, String> {
        let (tls, rest) = match url.split_once("://") {
            Some(("https", rest)) => (true, rest),
            Some(("http", rest)) => (false, rest),
            _ => return Err(format!("{url:?}: give https://HOST[:PORT][/PATH]")),
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (host, port) = split_port(authority, if tls { 443 } else { 80 })
            .ok_or_else(|| format!("{url:?}: no host, or a port that is not a number"))?;
        if !tls && !is_loopback(&host) {
            return Err(format!(
                "{url:?}: plain http only reaches a loopback address; use https://"
            ));
        }
        let prefix = path.trim_end_matches('/').to_string();
        if prefix.contains(['?', '#', ' ']) {
            return Err(format!("{url:?}: the path may not hold '?', '#' or spaces"));
        }
        Ok(Gateway {
            tls,
            host,
            port,
            prefix,
        })
    }

    fn shown(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}:{}{}", self.host, self.port, self.prefix)
    }

    /// Sends `method path` (under the prefix) with `headers` (whole lines,
    /// each ending `\r\n`), `Authorization: Bearer token` when given, and
    /// `body`; the body of a 200 answer, by `until`.
    pub fn request(
        &self,
        route: (&str, &str),
        headers: &str,
        token: Option<&str>,
        body: &[u8],
        until: Instant,
    ) -> Result<Vec<u8>, Failed> {
        let response = self.exchange(route, headers, token, body, until)?;
        self.answer_of(&response)
    }

    /// [`Gateway::request`], answered whatever the status: the status and
    /// the body (for `hookhost doctor`, which reports them).
    pub fn send(
        &self,
        route: (&str, &str),
        headers: &str,
        body: &[u8],
        until: Instant,
    ) -> Result<(u16, Vec<u8>), Failed> {
        let response = self.exchange(route, headers, None, body, until)?;
        split_response(&response)
            .map(|(status, body)| (status, body.to_vec()))
            .ok_or_else(|| Failed::Because(format!("{} gave no answer", self.shown())))
    }

    fn exchange(
        &self,
        (method, path): (&str, &str),
        headers: &str,
        token: Option<&str>,
        body: &[u8],
        until: Instant,
    ) -> Result<Vec<u8>, Failed> {
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let host = match self.host.contains(':') {
            true => format!("[{}]:{}", self.host, self.port),
            false => format!("{}:{}", self.host, self.port),
        };
        let head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n{auth}{headers}\r\n",
            self.prefix,
            body.len()
        );
        let mut message = head.into_bytes();
        message.extend_from_slice(body);
        let tcp = self.connect(until)?;
        match self.tls {
            true => self.exchange_tls(tcp, &message, until),
            false => {
                let stream = tcp.try_clone().map_err(|e| self.lost(e))?;
                exchange(stream, &tcp, &message, until).map_err(|e| self.lost(e))
            }
        }
    }

    fn connect(&self, until: Instant) -> Result<TcpStream, Failed> {
        let addrs = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| Failed::Because(format!("cannot resolve {}: {e}", self.shown())))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, left(until)?) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => self.lost(e),
            None => Failed::Because(format!("{} resolves to no address", self.shown())),
        })
    }

    fn exchange_tls(
        &self,
        tcp: TcpStream,
        message: &[u8],
        until: Instant,
    ) -> Result<Vec<u8>, Failed> {
        let name = ServerName::try_from(self.host.clone())
            .map_err(|e| Failed::Because(format!("{}: {e}", self.shown())))?;
        let config = client_config().map_err(Failed::Because)?;
        let session = rustls::ClientConnection::new(config, name)
            .map_err(|e| Failed::Because(format!("{}: TLS: {e}", self.shown())))?;
        let socket = tcp.try_clone().map_err(|e| self.lost(e))?;
        let stream = rustls::StreamOwned::new(session, tcp);
        exchange(stream, &socket, message, until).map_err(|e| self.lost(e))
    }

    fn lost(&self, e: std::io::Error) -> Failed {
        match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => Failed::Late,
            _ => Failed::Because(format!(
                "no answer from the gateway at {}: {e}",
                self.shown()
            )),
        }
    }

    fn answer_of(&self, response: &[u8]) -> Result<Vec<u8>, Failed> {
        match split_response(response) {
            Some((200, body)) => Ok(body.to_vec()),
            Some((status, body)) => Err(Failed::Because(format!(
                "the gateway at {} answered {status}: {}",
                self.shown(),
                String::from_utf8_lossy(body).trim()
            ))),
            None => Err(Failed::Because(format!(
                "the gateway at {} gave no answer",
                self.shown()
            ))),
        }
    }
}

/// Writes `message` and reads the response until its `Content-Length` is
/// in (or the peer closes), every wait bounded by `until` through the
/// socket's timeouts.
fn exchange<S: Read + Write>(
    mut stream: S,
    socket: &TcpStream,
    message: &[u8],
    until: Instant,
) -> std::io::Result<Vec<u8>> {
    socket.set_write_timeout(Some(time_left(until)?))?;
    stream.write_all(message)?;
    stream.flush()?;
    let mut response = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    while !complete(&response) {
        socket.set_read_timeout(Some(time_left(until)?))?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) if response.len() + n > MAX_ANSWER_BYTES => {
                return Err(std::io::Error::other("the answer is too long"));
            }
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // A peer that closes without TLS's close_notify after a whole
            // answer has said all it meant to.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof && complete(&response) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(response)
}

/// Whether `response` holds its head and the body its `Content-Length`
/// announces.
fn complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]);
    let length = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    length.is_some_and(|n| response.len() >= end + 4 + n)
}

/// The TLS client of every https request hookhost makes from the binary
/// (the relay to a gateway, a gateway fetching its policy): rustls with
/// ring, trusting `SSL_CERT_FILE` (and `SSL_CERT_DIR`) when set, else the
/// system's roots, as other TLS clients on the machine do.
pub fn client_config() -> Result<Arc<rustls::ClientConfig>, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(format!(
            "no trusted certificate authority to check the gateway with (SSL_CERT_FILE?) {why}"
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

fn left(until: Instant) -> Result<Duration, Failed> {
    time_left(until).map_err(|_| Failed::Late)
}

fn time_left(until: Instant) -> std::io::Result<Duration> {
    match until.saturating_duration_since(Instant::now()) {
        Duration::ZERO => Err(ErrorKind::TimedOut.into()),
        left => Ok(left),
    }
}

/// `HOST[:PORT]` or `[V6][:PORT]`.
fn split_port(authority: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default,
    };
    (!host.is_empty() && !host.contains('@')).then(|| (host.to_string(), port))
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_url_is_https_or_loopback_http() {
        let g = Gateway::parse("https://hooks.acme.example/team/").unwrap();
        assert_eq!(
            (g.tls, g.host.as_str(), g.port, g.prefix.as_str()),
            (true, "hooks.acme.example", 443, "/team")
        );
        let g = Gateway::parse("http://127.0.0.1:7070").unwrap();
        assert_eq!((g.tls, g.port, g.prefix.as_str()), (false, 7070, ""));
        let g = Gateway::parse("https://[::1]:8443").unwrap();
        assert_eq!((g.host.as_str(), g.port), ("::1", 8443));
        for bad in [
            "http://hooks.acme.example",
            "ftp://x",
            "hooks.acme.example",
            "https://:443",
            "https://user@host",
            "https://host:port",
            "https://host/a?b",
        ] {
            assert!(Gateway::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_response_is_complete_once_its_body_is_in() {
        assert!(!complete(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{"));
        assert!(complete(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"));
        assert!(!complete(b"HTTP/1.1 200 OK\r\n"));
    }
}
