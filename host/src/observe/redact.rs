//! Masks secret-looking tokens in text: API keys, bearer tokens, JWTs,
//! passwords in URLs, private key blocks. Used wherever hookhost writes or
//! passes on text it did not produce (audit records, the `redact_secrets`
//! builtin, a hook's stray output in the log), so that a key a tool
//! printed does not end up in a log file or in front of the model.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// What replaces each secret.
pub(crate) const MASK: &str = "[REDACTED]";

/// Patterns in the order they apply. A match keeps what a `${1}` names:
/// the word `Bearer`, a URL's scheme, an AWS key's name. A private key
/// with no END line is masked to the end of the text (a cut-off key is
/// still a key). Lowercase `bearer` needs a digit in its token, so that
/// "the bearer of this letter" stays as it is.
static PATTERNS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let p = |re: &str, with: &'static str| {
        // The patterns are constants; a typo is caught by the tests below.
        Regex::new(re).map(|r| (r, with)).ok()
    };
    [
        p(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
            MASK,
        ),
        p(r"([A-Za-z][A-Za-z0-9+.-]{0,31}://)[^\s/@:]{1,256}:[^\s/@]{1,256}@", "${1}[REDACTED]@"),
        p(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+", "${1}[REDACTED]"),
        p(
            r"((?i:bearer)\s+)[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*",
            "${1}[REDACTED]",
        ),
        p(r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", MASK),
        p(r"sk-[A-Za-z0-9_-]{16,}", MASK),
        p(r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", MASK),
        p(r"AKIA[0-9A-Z]{16}", MASK),
        p(
            r#"((?i:(?:aws[_-]?)?secret[_-]?access[_-]?key)["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40,}"#,
            "${1}[REDACTED]",
        ),
        p(r"gh[pousr]_[A-Za-z0-9]{36,}", MASK),
        p(r"github_pat_[A-Za-z0-9_]{20,}", MASK),
        p(r"xox[abprs]-[A-Za-z0-9-]{10,}", MASK),
        p(r"AIza[0-9A-Za-z_-]{35}", MASK),
        p(
            r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]+",
            "${1}[REDACTED]",
        ),
        p(r"npm_[A-Za-z0-9]{36}", MASK),
        p(r"glpat-[A-Za-z0-9_-]{20,}", MASK),
        p(r"hf_[A-Za-z0-9]{30,}", MASK),
        p(
            r"((?i:AccountKey|SharedAccessKey)\s*=\s*)[A-Za-z0-9+/=]{16,}",
            "${1}[REDACTED]",
        ),
        p(
            r#"((?i:[A-Za-z0-9_-]*passw(?:or)?d)["']?\s*=\s*["']?)[^\s"'&;,]+"#,
            "${1}[REDACTED]",
        ),
        p(
            r#"("(?i:[A-Za-z0-9_-]*passw(?:or)?d)"\s*:\s*")[^"]+"#,
            "${1}[REDACTED]",
        ),
        p(QUERY_SECRET, "${1}[REDACTED]"),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// A credential in a URL's query (`?key=…`, `&access_token=…`): the
/// parameter's name is kept, its value masked.
const QUERY_SECRET: &str = r"([?&](?i:key|api[_-]?key|apikey|token|access[_-]?token|auth|secret|client[_-]?secret|password|sig|signature|code)=)[^&\s#\x22']+";

/// The query-credential pattern alone, for [`display_url`].
static QUERY_SECRET_RE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(QUERY_SECRET).ok());

/// `text` with every secret-looking token replaced by `[REDACTED]`;
/// borrowed when there was nothing to mask. Public (as `hookhost::redact_secrets`)
/// so that what an embedder shows of an event (the gateway's console) is
/// masked exactly as the audit log masks it.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for (re, with) in PATTERNS.iter() {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, *with).into_owned());
        }
    }
    out
}

/// `url` as it may be shown: in a deny reason the model reads, an audit
/// record, a log line, `hookhost check`. Its userinfo (`user:password@`)
/// is left out and the value of a credential-looking query parameter
/// (`?key=`, `&token=`, …) masked: the URL is configuration, and a
/// password in it must reach the server only. Everything else is kept, so
/// the URL still says where. Every place that shows a hook's URL goes
/// through this.
pub(crate) fn display_url(url: &str) -> Cow<'_, str> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let shown = match url[start..authority_end].rfind('@') {
        Some(at) => Cow::Owned(format!("{}{}", &url[..start], &url[start + at + 1..])),
        None => Cow::Borrowed(url),
    };
    match QUERY_SECRET_RE.as_ref() {
        Some(re) if re.is_match(&shown) => {
            Cow::Owned(re.replace_all(&shown, "${1}[REDACTED]").into_owned())
        }
        _ => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(PATTERNS.len(), 21);
        assert!(QUERY_SECRET_RE.is_some());
    }

    #[test]
    fn masks_each_kind_and_leaves_clean_text_borrowed() {
        let cases = [
            (
                "OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234 x",
                "OPENAI_API_KEY=[REDACTED] x",
            ),
            ("AKIAIOSFODNN7EXAMPLE", "[REDACTED]"),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
            ("xoxb-1234567890-abcdef", "[REDACTED]"),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig",
                "Authorization: Bearer [REDACTED]",
            ),
            (
                "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nb",
                "a\n[REDACTED]\nb",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want);
        }
        assert!(matches!(redact("nothing secret here"), Cow::Borrowed(_)));
    }

    #[test]
    fn masks_the_secrets_the_first_patterns_missed() {
        let cases = [
            (
                "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz end",
                "token [REDACTED] end",
            ),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED]"),
            ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED]"),
            ("key=sk_test_4eC39HqLyjWDarjtT1zdp7dc;", "key=[REDACTED];"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
                "aws_secret_access_key = [REDACTED]\n",
            ),
            (
                r#"{"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#,
                r#"{"AWS_SECRET_ACCESS_KEY": "[REDACTED]"}"#,
            ),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
                "jwt [REDACTED] ok",
            ),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED]"),
            (
                "cloning https://alice:s3cr3t@git.example.com/repo.git",
                "cloning https://[REDACTED]@git.example.com/repo.git",
            ),
            ("ws://user:pass@host:9/hook", "ws://[REDACTED]@host:9/hook"),
            (
                "authorization: bearer abc123def456",
                "authorization: bearer [REDACTED]",
            ),
            (
                "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA",
                "x\n[REDACTED]",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    /// The red team's misses: Slack webhook URLs, npm, GitLab and Hugging
    /// Face tokens, Azure account keys, `password=`.
    #[test]
    fn masks_webhook_urls_registry_tokens_and_passwords() {
        let cases = [
            (
                "post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX now",
                "post to https://hooks.slack.com/services/[REDACTED] now",
            ),
            (
                "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
                "//registry.npmjs.org/:_authToken=[REDACTED]",
            ),
            (
                "GITLAB_TOKEN=glpat-abcdEFGH1234ijklMNOP",
                "GITLAB_TOKEN=[REDACTED]",
            ),
            (
                "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
                "HF_TOKEN=[REDACTED]",
            ),
            (
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abcdEFGH1234+/abcdEFGH==;EndpointSuffix=x",
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=[REDACTED];EndpointSuffix=x",
            ),
            (
                "db password=hunter2 host=x",
                "db password=[REDACTED] host=x",
            ),
            ("DB_PASSWORD='hunter2'", "DB_PASSWORD='[REDACTED]'"),
            (
                r#"{"password": "hunter2"}"#,
                r#"{"password": "[REDACTED]"}"#,
            ),
            (
                "GET https://x.example/v1?key=AIzaXYZ&q=1",
                "GET https://x.example/v1?key=[REDACTED]&q=1",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    #[test]
    fn a_url_is_shown_without_its_userinfo() {
        for (url, shown) in [
            ("ws://alice:s3cr3t@host:9/hook?x=1", "ws://host:9/hook?x=1"),
            ("wss://token@host", "wss://host"),
            ("https://a:b@c@host/p@q", "https://host/p@q"),
            ("user:pass@host/x", "host/x"),
            (
                "https://api.example.com/v1?key=AIzaSECRET&alt=json",
                "https://api.example.com/v1?key=[REDACTED]&alt=json",
            ),
            (
                "https://u:p@h/x?a=1&access_token=abc#f",
                "https://h/x?a=1&access_token=[REDACTED]#f",
            ),
        ] {
            assert_eq!(display_url(url), shown);
        }
        for url in ["ws://host:9/hook", "http://host/a@b", "ws://host?u=a@b"] {
            assert!(matches!(display_url(url), Cow::Borrowed(_)), "{url}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "The bearer of this letter may pass; the bearer bonds are gone.",
            "Send it to alice@example.com or see https://example.com/a:b@c today.",
            "git@github.com:owner/repo.git and ssh://git@host/repo",
            "eyJ is how base64 JSON starts; sk_live is a prefix; AIza alone is not a key.",
            "aws_secret_access_key is unset",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "risk_live_events and desk_test_plan are table names",
            "npm_config_cache and npm_lifecycle_event are npm's variables",
            "hf_hub_download and hf_transfer are functions; glpat- is a prefix",
            "Enter your password: the password is checked; passwords = []",
            "PWD=/home/alice and the AccountKey is rotated",
            "hooks.slack.com is where Slack webhooks live",
            "see https://example.com/search?q=token&page=2",
        ] {
            assert!(
                matches!(redact(text), Cow::Borrowed(_)),
                "{text}: {}",
                redact(text)
            );
        }
    }
}
