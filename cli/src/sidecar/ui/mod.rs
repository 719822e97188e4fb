//! `GET /ui`: the console of a daemon or a gateway, one page served from
//! files built into the binary. It shows the decisions as they are made
//! (server-sent events), the hooks with their state and latency, the
//! hooks awaiting the user's trust (approved or revoked from the page),
//! an event tried through the chain, and the audit log.
//!
//! Nothing of it is served without the credential the other routes ask
//! (`login.rs` says how a browser carries it); the sign-in page and its
//! style are all a stranger gets. The routes are stated once, in
//! [`route`].

mod api;
mod approve;
mod assets;
mod feed;
mod login;
mod stream;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hookhost::Observer;
use serde_json::json;

use super::Sidecar;
use super::access::Access;
use super::http::{Head, Reply};
pub(crate) use feed::with_steps;
use feed::{Feed, Watch};
use login::{Logins, Visitor};
pub(crate) use stream::{Held, run as stream_events};

/// The console's part of the sidecar.
pub(crate) struct Ui {
    pub(crate) feed: Arc<Feed>,
    logins: Logins,
    /// Served behind TLS: the session cookie is `Secure`.
    tls: AtomicBool,
}

impl Ui {
    pub(crate) fn new() -> Ui {
        Ui {
            feed: Arc::new(Feed::new()),
            logins: Logins::new(),
            tls: AtomicBool::new(false),
        }
    }

    /// The host's observer that feeds the console.
    pub(crate) fn observer(&self) -> Arc<dyn Observer> {
        Arc::new(Watch(self.feed.clone()))
    }

    /// Says the console is served over TLS.
    pub(crate) fn behind_tls(&self) {
        self.tls.store(true, Ordering::Relaxed);
    }

    /// Adds one answered event to the stream.
    pub(crate) fn publish(&self, item: serde_json::Value) {
        self.feed.publish(item);
    }
}

/// The most characters of an event's input the console shows.
const INPUT_CHARS: usize = 4096;

/// One answered event as the console lists it: when, whose (agent,
/// session, caller), what (event, tool and input, masked as the audit
/// log masks it), what decided it, and each hook's step and time.
pub(crate) fn item(
    event: &hookhost::ForeignEvent,
    record: &hookhost::DecisionRecord,
    caller: Option<&hookhost::Identity>,
    steps: Vec<serde_json::Value>,
    tried: bool,
) -> serde_json::Value {
    let params = event.params();
    let input = match (params.get("arguments"), params.get("payload")) {
        (Some(args), _) => args.to_string(),
        (None, Some(payload)) => payload.to_string(),
        (None, None) => String::new(),
    };
    let input = shorten(&hookhost::redact_secrets(&input), INPUT_CHARS);
    json!({
        "ts": hookhost::protocol::time::rfc3339(std::time::SystemTime::now()),
        "agent": event.dialect().as_str(),
        "session": params["meta"]["session_key"],
        "event": event.name(),
        "tool": params.get("tool"),
        "input": input,
        "decision": record.decision,
        "hook": record.hook,
        "reason": record.reason.as_deref().map(|r| hookhost::redact_secrets(r).into_owned()),
        "failed_open": record.failed_open,
        "caller": caller.map(|c| json!({"tenant": c.tenant, "user": c.user, "agent": c.agent})),
        "steps": steps,
        "tried": tried,
    })
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// Whether `path` is the console's.
pub(crate) fn is_ui(path: &str) -> bool {
    path == "/ui" || path.starts_with("/ui/")
}

/// What the console answers: a reply, or the event stream (which then
/// owns the connection).
pub(crate) enum Served {
    Reply(Reply),
    Stream(Held),
}

/// Answers one request to the console.
pub(crate) async fn serve(
    sidecar: &Sidecar,
    head: &Head,
    body: &[u8],
    access: Option<&Access>,
) -> Served {
    let visitor = match sidecar.ui.logins.admit(head, access) {
        Ok(v) => v,
        Err(refused) => return Served::Reply(with_headers(refused)),
    };
    match route(sidecar, head, body, access, visitor).await {
        Served::Reply(reply) => Served::Reply(with_headers(reply)),
        stream => stream,
    }
}

fn with_headers(mut reply: Reply) -> Reply {
    for (name, value) in assets::HEADERS {
        reply = reply.with_header(name, value);
    }
    reply
}

/// The console's routes, in one table.
async fn route(
    sidecar: &Sidecar,
    head: &Head,
    body: &[u8],
    access: Option<&Access>,
    visitor: Visitor,
) -> Served {
    let path = head.path.trim_start_matches("/ui").trim_start_matches('/');
    let method = head.method.as_str();
    let reply = match (method, path, &visitor) {
        ("POST", "login", _) => {
            let tls = sidecar.ui.tls.load(Ordering::Relaxed);
            sidecar.ui.logins.sign_in(body, access, tls)
        }
        ("GET", "style.css", _) => asset(path),
        ("GET", "", Visitor::Stranger) => assets::login_page(200, ""),
        (_, _, Visitor::Stranger) => Reply::text(401, "sign in at /ui first"),
        ("POST", "logout", _) => sidecar.ui.logins.sign_out(head),
        ("GET", "api/events", _) => match Held::take() {
            Some(held) => return Served::Stream(held),
            None => Reply::text(503, "too many console streams are open"),
        },
        ("GET", "api/session", Visitor::Known { caller, csrf }) => session(sidecar, caller, csrf),
        ("GET", "api/hooks", _) => api::hooks(sidecar),
        ("GET", "api/latency", _) => Reply::json(sidecar.ui.feed.latency().to_string()),
        ("GET", "api/trust", _) => api::trust_list(sidecar, access),
        ("GET", "api/audit", _) => api::audit(sidecar, &head.query).await,
        ("POST", _, Visitor::Known { csrf, .. }) if !csrf_matches(head, csrf) => {
            Reply::text(403, "the request lacks the console's X-Hookhost-CSRF value")
        }
        ("POST", "api/trust", _) => api::trust_change(sidecar, access, body),
        ("POST", "api/try", Visitor::Known { caller, .. }) => {
            api::try_event(sidecar, body, caller.as_ref()).await
        }
        ("GET", _, _) => asset(path),
        _ => Reply::text(404, "no such console route"),
    };
    Served::Reply(reply)
}

/// A built-in file.
fn asset(path: &str) -> Reply {
    match assets::file(path) {
        Some((kind, bytes)) => Reply {
            status: 200,
            kind,
            headers: String::new(),
            body: bytes.to_vec(),
        },
        None => Reply::text(404, "no such console file"),
    }
}

/// What the page learns first: its CSRF value, who it is for, and the
/// daemon's name for itself.
fn session(sidecar: &Sidecar, caller: &Option<hookhost::Identity>, csrf: &str) -> Reply {
    let who = caller
        .as_ref()
        .map(|c| json!({"tenant": c.tenant, "user": c.user, "agent": c.agent}));
    Reply::json(
        json!({
            "csrf": csrf,
            "caller": who,
            "version": env!("CARGO_PKG_VERSION"),
            "config": sidecar.config_path(),
        })
        .to_string(),
    )
}

/// Whether the request carries the session's CSRF value, compared in
/// constant time.
fn csrf_matches(head: &Head, csrf: &str) -> bool {
    head.header("x-hookhost-csrf")
        .is_some_and(|v| hookhost_protocol::token::token_matches(v, csrf.as_bytes()))
}
