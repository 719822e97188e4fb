//! The console's files, built into the binary (no CDN, nothing fetched at
//! run time): the page, its script and style, and two vendored libraries
//! (`cli/ui/vendor/`, pinned by `cli/ui/package.json`; `cli/ui/README.md`
//! says why these). Every response carries a content security policy that
//! lets the page load only its own files and talk only to its own origin.

use super::super::http::Reply;

/// What every console response says to the browser.
pub(crate) const HEADERS: [(&str, &str); 5] = [
    (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
    ("X-Frame-Options", "DENY"),
];

/// A console file by its path under `/ui/`.
pub(crate) fn file(name: &str) -> Option<(&'static str, &'static [u8])> {
    let found: (&str, &[u8]) = match name {
        "" | "index.html" => (
            "text/html; charset=utf-8",
            include_bytes!("../../../ui/index.html"),
        ),
        "app.js" => (
            "text/javascript; charset=utf-8",
            include_bytes!("../../../ui/app.js"),
        ),
        "style.css" => (
            "text/css; charset=utf-8",
            include_bytes!("../../../ui/style.css"),
        ),
        "vendor/htm-preact.mjs" => (
            "text/javascript; charset=utf-8",
            include_bytes!("../../../ui/vendor/htm-preact.mjs"),
        ),
        "vendor/uPlot.esm.js" => (
            "text/javascript; charset=utf-8",
            include_bytes!("../../../ui/vendor/uPlot.esm.js"),
        ),
        "vendor/uPlot.min.css" => (
            "text/css; charset=utf-8",
            include_bytes!("../../../ui/vendor/uPlot.min.css"),
        ),
        _ => return None,
    };
    Some(found)
}

/// The sign-in page: a form for the token, and `message` when the last
/// try failed. It shows nothing of the daemon.
pub(crate) fn login_page(status: u16, message: &str) -> Reply {
    let page = include_str!("../../../ui/login.html").replace("{{message}}", &escape(message));
    let mut reply = Reply::body("text/html; charset=utf-8", page);
    reply.status = status;
    reply
}

/// `text` safe inside HTML.
fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '&' => "&amp;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&#39;".to_string(),
            c => c.to_string(),
        })
        .collect()
}
