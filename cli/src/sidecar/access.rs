//! Who may open a WebSocket session. A browser lets any page open
//! `ws://127.0.0.1:PORT`, and any local process can connect to a loopback
//! port, so the sidecar decides at the upgrade, before a session exists:
//! - an `Origin` header means a browser sent the request: refused unless
//!   that origin is listed (native agents send none);
//! - bound to loopback, `Host` must name a loopback address, so a page
//!   that rebinds its own DNS name to 127.0.0.1 is refused;
//! - with a token, `Authorization: Bearer TOKEN` must carry it, compared
//!   in constant time; as a gateway (`--auth tokens:FILE`), it must be one
//!   of the file's, and the identity it stands for is the caller's.

use std::net::IpAddr;
use std::sync::Arc;

use hookhost::Identity;
use hookhost_protocol::token;

use crate::gateway::jwt::Jwt;
use crate::gateway::tokens::Tokens;

/// What an upgrade request must satisfy.
#[derive(Debug, Clone, Default)]
pub struct Access {
    allowed_origins: Vec<String>,
    auth: Auth,
    loopback_host: bool,
}

/// Who may call, by credential.
#[derive(Debug, Clone, Default)]
enum Auth {
    /// Anyone who passes the origin and host rules.
    #[default]
    Open,
    /// Whoever holds this one token (`--token-file`); no identity.
    Token(Vec<u8>),
    /// Whoever holds a token of the gateway's file, as whom it says.
    Tokens(Arc<Tokens>),
    /// Whoever holds a JWT the team's identity provider signed.
    Jwt(Arc<Jwt>),
}

/// Why an upgrade was refused: the HTTP status sent and a line for the
/// log (and the response body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 401, 403 or 400.
    pub status: u16,
    /// What was wrong, without echoing any secret.
    pub why: String,
}

impl Access {
    /// Admits native agents only, checks nothing else: add what applies.
    pub fn new() -> Access {
        Access::default()
    }

    /// Admits requests whose `Origin` is exactly `origin` (for example
    /// `https://app.example`), for an agent that runs in a browser.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Access {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Requires `Authorization: Bearer <token>` on every upgrade.
    pub fn token(mut self, token: impl Into<Vec<u8>>) -> Access {
        self.auth = Auth::Token(token.into());
        self
    }

    /// Requires a bearer token of `tokens`; the caller is who its line
    /// says.
    pub fn tokens(mut self, tokens: Arc<Tokens>) -> Access {
        self.auth = Auth::Tokens(tokens);
        self
    }

    /// Requires a bearer JWT that `jwt` verifies; the caller is who its
    /// claims say.
    pub fn jwt(mut self, jwt: Arc<Jwt>) -> Access {
        self.auth = Auth::Jwt(jwt);
        self
    }

    /// Requires `Host` to name a loopback address (what a sidecar bound
    /// to loopback expects): refuses DNS-rebinding pages.
    pub fn loopback_host(mut self, on: bool) -> Access {
        self.loopback_host = on;
        self
    }

    /// Checks one upgrade request's headers (name, value), names in any
    /// case. Origin first: a browser gets 403 whatever else it sent. The
    /// caller's identity when the credential carries one.
    pub fn check<'a>(
        &self,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])> + Clone,
    ) -> Result<Option<Identity>, Refusal> {
        let find = |name: &str| {
            headers
                .clone()
                .into_iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        };
        if let Some(origin) = find("origin") {
            if !self.origin_listed(origin) {
                return Err(refuse(
                    403,
                    "cross-origin request: this Origin is not allowed (--allow-origin)",
                ));
            }
        }
        self.check_host(find("host"))?;
        self.identify(find("authorization").and_then(token::bearer))
    }

    /// Whether `origin` is one `--allow-origin` listed.
    pub(crate) fn origin_listed(&self, origin: &[u8]) -> bool {
        self.allowed_origins.iter().any(|o| o.as_bytes() == origin)
    }

    /// Bound to loopback, `host` must name a loopback address.
    pub(crate) fn check_host(&self, host: Option<&[u8]>) -> Result<(), Refusal> {
        match self.loopback_host && !host.is_some_and(names_loopback) {
            true => Err(refuse(
                403,
                "the Host header does not name a loopback address",
            )),
            false => Ok(()),
        }
    }

    /// Who the bearer token `presented` stands for, by the credential
    /// this access asks for: `Ok(None)` for a credential that names no
    /// one (the daemon's one token) or when none is asked.
    pub(crate) fn identify(&self, presented: Option<&[u8]>) -> Result<Option<Identity>, Refusal> {
        let wrong = || refuse(401, "missing or wrong bearer token");
        match &self.auth {
            Auth::Open => Ok(None),
            Auth::Token(token) => match presented {
                Some(p) if token::token_matches(p, token) => Ok(None),
                _ => Err(wrong()),
            },
            Auth::Tokens(tokens) => presented
                .and_then(|p| tokens.identify(p))
                .map(Some)
                .ok_or_else(wrong),
            Auth::Jwt(jwt) => presented
                .and_then(|p| jwt.identify(p))
                .map(Some)
                .ok_or_else(wrong),
        }
    }

    /// Whether no credential is asked for (a loopback port without a
    /// token, which any local user can reach).
    #[cfg(feature = "ui")]
    pub(crate) fn is_open(&self) -> bool {
        matches!(self.auth, Auth::Open)
    }

    /// Whether the one credential is the daemon's own token: whoever
    /// holds it is the user the daemon runs as (a gateway's callers are
    /// not).
    #[cfg(feature = "ui")]
    pub(crate) fn is_owner_token(&self) -> bool {
        matches!(self.auth, Auth::Token(_))
    }
}

fn refuse(status: u16, why: &str) -> Refusal {
    Refusal {
        status,
        why: why.to_string(),
    }
}

/// Whether `Host` (`name` or `name:port`, IPv6 in brackets) is
/// `localhost` or a loopback address.
fn names_loopback(host: &[u8]) -> bool {
    let Ok(host) = std::str::from_utf8(host) else {
        return false;
    };
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _port)| name)
    };
    let name = name.strip_suffix('.').unwrap_or(name);
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &Access, headers: &[(&str, &str)]) -> Result<(), u16> {
        let h: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
        a.check(h.iter().copied()).map(|_| ()).map_err(|r| r.status)
    }

    #[test]
    fn an_origin_is_refused_unless_listed() {
        let a = Access::new();
        assert_eq!(check(&a, &[]), Ok(()), "native agents send no Origin");
        assert_eq!(check(&a, &[("Origin", "https://evil.example")]), Err(403));
        assert_eq!(check(&a, &[("Origin", "null")]), Err(403));
        let a = a.allow_origin("https://app.example");
        assert_eq!(check(&a, &[("origin", "https://app.example")]), Ok(()));
        assert_eq!(
            check(&a, &[("Origin", "https://app.example.evil")]),
            Err(403)
        );
    }

    #[test]
    fn bound_to_loopback_the_host_must_name_loopback() {
        let a = Access::new().loopback_host(true);
        for ok in [
            "127.0.0.1:7070",
            "127.0.0.1",
            "localhost:1",
            "LOCALHOST.",
            "[::1]:7070",
            "127.1.2.3",
        ] {
            assert_eq!(check(&a, &[("Host", ok)]), Ok(()), "{ok}");
        }
        for bad in [
            "evil.example:7070",
            "10.0.0.1",
            "localhost.evil.example",
            "",
        ] {
            assert_eq!(check(&a, &[("Host", bad)]), Err(403), "{bad}");
        }
        assert_eq!(check(&a, &[]), Err(403), "no Host at all");
    }

    #[test]
    fn a_token_must_be_presented_exactly() {
        let a = Access::new().token("s3cret");
        assert_eq!(check(&a, &[]), Err(401));
        assert_eq!(check(&a, &[("Authorization", "Bearer s3cret")]), Ok(()));
        assert_eq!(check(&a, &[("authorization", "bearer  s3cret ")]), Ok(()));
        assert_eq!(check(&a, &[("Authorization", "Bearer s3cre")]), Err(401));
        assert_eq!(check(&a, &[("Authorization", "Bearer s3cret2")]), Err(401));
        assert_eq!(check(&a, &[("Authorization", "Basic s3cret")]), Err(401));
        assert_eq!(check(&a, &[("Authorization", "Bearers3cret")]), Err(401));
    }

    #[test]
    fn origin_is_checked_before_the_token() {
        let a = Access::new().token("t");
        let h = [
            ("Authorization", "Bearer t"),
            ("Origin", "https://x.example"),
        ];
        assert_eq!(check(&a, &h), Err(403));
    }
}
