//! Who may see the console. A browser cannot put a bearer token on a page
//! load or an event stream, so the page's credential is a cookie: the
//! token is given once to `POST /ui/login` (a form), checked as every
//! route checks it, and kept in memory against a random session id that
//! the cookie carries (`HttpOnly`, `SameSite=Strict`, `Path=/ui`, and
//! `Secure` behind TLS). Each request checks the token again, so a token
//! removed from the gateway's file, or an expired JWT, ends its sessions.
//!
//! A request is refused unless, in this order:
//! - its `Origin`, when it has one, is the console's own or a listed one
//!   (a page elsewhere cannot drive the console);
//! - bound to loopback, its `Host` names loopback (DNS rebinding);
//! - it carries the credential: a bearer token or a session cookie (none
//!   is asked on a loopback port that asks none of any route);
//! - a request that changes something (`POST`) carries the session's
//!   CSRF value in `X-Hookhost-CSRF`, which only the console's own page
//!   can read.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hookhost::Identity;

use super::super::access::Access;
use super::super::http::{Head, Reply};
use crate::shared::paths::random_token;

/// The cookie's name.
const COOKIE: &str = "hookhost_ui";
/// How long a console session lasts.
const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Console sessions at once; past it the oldest is forgotten.
const MAX_SESSIONS: usize = 64;

/// One signed-in browser.
struct Session {
    token: Vec<u8>,
    csrf: String,
    since: Instant,
}

/// The console's sessions, in memory only (a restart signs everyone out).
pub(crate) struct Logins {
    sessions: Mutex<HashMap<String, Session>>,
    /// The CSRF value of a port that asks no credential.
    open_csrf: String,
}

/// Who a request to the console is from.
pub(crate) enum Visitor {
    /// No credential: the sign-in page only.
    Stranger,
    /// Signed in (or on a port that asks no credential).
    Known {
        /// Who the gateway's credential names, when it names someone.
        caller: Option<Identity>,
        /// The value a `POST` must carry.
        csrf: String,
    },
}

impl Logins {
    pub(crate) fn new() -> Logins {
        Logins {
            sessions: Mutex::new(HashMap::new()),
            open_csrf: random_token().unwrap_or_default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks a request against the rules above; a refusal is a reply.
    pub(crate) fn admit(&self, head: &Head, access: Option<&Access>) -> Result<Visitor, Reply> {
        let Some(access) = access else {
            // The daemon's Unix socket: its folder is its access check.
            return Ok(self.known(None, self.open_csrf.clone()));
        };
        if let Some(origin) = head.header("origin") {
            if !same_origin(origin, head.header("host")) && !access.origin_listed(origin) {
                return Err(Reply::text(403, "cross-origin request to the console"));
            }
        }
        access
            .check_host(head.header("host"))
            .map_err(|r| Reply::text(r.status, r.why))?;
        if access.is_open() {
            return Ok(self.known(None, self.open_csrf.clone()));
        }
        let bearer = head
            .header("authorization")
            .and_then(hookhost_protocol::token::bearer);
        if let Some(token) = bearer {
            let caller = access
                .identify(Some(token))
                .map_err(|r| Reply::text(r.status, r.why))?;
            return Ok(self.known(caller, self.open_csrf.clone()));
        }
        Ok(self.by_cookie(head, access))
    }

    fn known(&self, caller: Option<Identity>, csrf: String) -> Visitor {
        Visitor::Known { caller, csrf }
    }

    /// The visitor a session cookie names, its token checked again.
    fn by_cookie(&self, head: &Head, access: &Access) -> Visitor {
        let Some(sid) = cookie(head) else {
            return Visitor::Stranger;
        };
        let mut sessions = self.lock();
        let Some(session) = sessions.get(&sid) else {
            return Visitor::Stranger;
        };
        let checked = access.identify(Some(&session.token));
        match (checked, session.since.elapsed() < LIFETIME) {
            (Ok(caller), true) => {
                let csrf = session.csrf.clone();
                self.known(caller, csrf)
            }
            _ => {
                sessions.remove(&sid);
                Visitor::Stranger
            }
        }
    }

    /// `POST /ui/login`'s form (`token=…`): a session and its cookie, or
    /// why not.
    pub(crate) fn sign_in(&self, body: &[u8], access: Option<&Access>, tls: bool) -> Reply {
        let token = form_value(body, "token").unwrap_or_default();
        let Some(access) = access else {
            return see_other("/ui", None);
        };
        if access.is_open() {
            return see_other("/ui", None);
        }
        if access.identify(Some(token.as_bytes())).is_err() {
            return super::assets::login_page(401, "That token is not one this gateway takes.");
        }
        let (Ok(sid), Ok(csrf)) = (random_token(), random_token()) else {
            return Reply::text(500, "no randomness for a session id");
        };
        let mut sessions = self.lock();
        if sessions.len() >= MAX_SESSIONS {
            let oldest = sessions.iter().min_by_key(|(_, s)| s.since);
            if let Some(k) = oldest.map(|(k, _)| k.clone()) {
                sessions.remove(&k);
            }
        }
        let session = Session {
            token: token.into_bytes(),
            csrf,
            since: Instant::now(),
        };
        sessions.insert(sid.clone(), session);
        let secure = if tls { "; Secure" } else { "" };
        let cookie = format!(
            "{COOKIE}={sid}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
            LIFETIME.as_secs()
        );
        see_other("/ui", Some(cookie))
    }

    /// Ends the session the request's cookie names.
    pub(crate) fn sign_out(&self, head: &Head) -> Reply {
        if let Some(sid) = cookie(head) {
            self.lock().remove(&sid);
        }
        let gone = format!("{COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0");
        see_other("/ui", Some(gone))
    }
}

/// A 303 to `to`, setting `cookie` when given.
fn see_other(to: &str, cookie: Option<String>) -> Reply {
    let mut reply = Reply::text(303, "see the console").with_header("Location", to);
    if let Some(c) = cookie {
        reply = reply.with_header("Set-Cookie", &c);
    }
    reply
}

/// Whether `origin` (`scheme://host[:port]`) names the host the request
/// was sent to: the console's own page.
fn same_origin(origin: &[u8], host: Option<&[u8]>) -> bool {
    let Some(host) = host else {
        return false;
    };
    let origin = origin
        .strip_prefix(b"http://")
        .or_else(|| origin.strip_prefix(b"https://"));
    origin.is_some_and(|o| o.eq_ignore_ascii_case(host.trim_ascii()))
}

/// The console's session id in the `Cookie` header.
fn cookie(head: &Head) -> Option<String> {
    let header = std::str::from_utf8(head.header("cookie")?).ok()?;
    header.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name == COOKIE && !value.is_empty() && value.len() <= 128).then(|| value.to_string())
    })
}

/// `name`'s value in a form body (`application/x-www-form-urlencoded`).
pub(crate) fn form_value(body: &[u8], name: &str) -> Option<String> {
    let body = std::str::from_utf8(body).ok()?;
    body.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| percent_decode(v))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = || std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok();
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match hex().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_value_is_decoded() {
        assert_eq!(
            form_value(b"a=1&token=ab%2Bc+d%zz", "token").as_deref(),
            Some("ab+c d%zz")
        );
        assert_eq!(form_value(b"token", "token"), None);
    }

    #[test]
    fn same_origin_is_the_host_the_request_went_to() {
        let host = Some(&b"127.0.0.1:7070"[..]);
        assert!(same_origin(b"http://127.0.0.1:7070", host));
        assert!(same_origin(b"https://127.0.0.1:7070", host));
        assert!(!same_origin(b"http://127.0.0.1:7071", host));
        assert!(!same_origin(b"http://evil.example", host));
        assert!(!same_origin(b"null", host));
        assert!(!same_origin(b"http://127.0.0.1:7070", None));
    }
}
