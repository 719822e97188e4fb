//! Masks secret-looking tokens in text: API keys, bearer tokens, private
//! key blocks. Used wherever hookhost writes or passes on text it did not
//! produce (audit records, the `redact_secrets` builtin), so that a key a
//! tool printed does not end up in a log file or in front of the model.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// What replaces each secret.
pub const MASK: &str = "[REDACTED]";

/// Patterns in the order they apply; a `Bearer` match keeps the word.
static PATTERNS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let p = |re: &str, with: &'static str| {
        // The patterns are constants; a typo is caught by the tests below.
        Regex::new(re).map(|r| (r, with)).ok()
    };
    [
        p(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            MASK,
        ),
        p(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+", "${1}[REDACTED]"),
        p(r"sk-[A-Za-z0-9_-]{16,}", MASK),
        p(r"AKIA[0-9A-Z]{16}", MASK),
        p(r"gh[pousr]_[A-Za-z0-9]{36,}", MASK),
        p(r"xox[abprs]-[A-Za-z0-9-]{10,}", MASK),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// `text` with every secret-looking token replaced by [`MASK`]; borrowed
/// when there was nothing to mask.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for (re, with) in PATTERNS.iter() {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, *with).into_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(PATTERNS.len(), 6);
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
}
