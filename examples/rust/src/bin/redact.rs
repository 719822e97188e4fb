//! redact: masks secrets in tool output before the model sees it.
//!
//! At after_tool it replaces, in `result.for_llm` and `result.for_user`,
//! every match of the patterns below with `[REDACTED]` (a bearer token
//! keeps its `Bearer ` prefix, a URL its scheme). The patch names only the fields that
//! changed; clean output continues untouched.

use hookhost_sdk::params::AfterToolParams;
use hookhost_sdk::{Hook, Patch, Stage, Verdict};
use regex::Regex;

/// The secret patterns, in the order they are applied, and what each match
/// becomes. `${1}` keeps the word `Bearer`, a URL's scheme or an AWS key's
/// name. A private key cut off before its END line is masked to the end.
/// Lowercase `bearer` needs a digit in its token, so that prose such as
/// "the bearer of this letter" is left alone.
const PATTERNS: [(&str, &str); 13] = [
    (
        r"(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
        "[REDACTED]",
    ),
    (
        r"([A-Za-z][A-Za-z0-9+.-]{0,31}://)[^\s/@:]{1,256}:[^\s/@]{1,256}@",
        "${1}[REDACTED]@",
    ),
    (r"(Bearer\s+)[A-Za-z0-9._~+/=-]+", "${1}[REDACTED]"),
    (
        r"((?i:bearer)\s+)[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*",
        "${1}[REDACTED]",
    ),
    (
        r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        "[REDACTED]",
    ),
    (r"sk-[A-Za-z0-9_-]{16,}", "[REDACTED]"),
    (r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", "[REDACTED]"),
    (r"AKIA[0-9A-Z]{16}", "[REDACTED]"),
    (
        r#"((?i:(?:aws[_-]?)?secret[_-]?access[_-]?key)["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40,}"#,
        "${1}[REDACTED]",
    ),
    (r"gh[pousr]_[A-Za-z0-9]{36,}", "[REDACTED]"),
    (r"github_pat_[A-Za-z0-9_]{20,}", "[REDACTED]"),
    (r"xox[abprs]-[A-Za-z0-9-]{10,}", "[REDACTED]"),
    (r"AIza[0-9A-Za-z_-]{35}", "[REDACTED]"),
];

struct Redact {
    patterns: Vec<(Regex, &'static str)>,
}

impl Redact {
    fn new() -> Result<Redact, regex::Error> {
        let patterns = PATTERNS
            .iter()
            .map(|(re, with)| Regex::new(re).map(|re| (re, *with)))
            .collect::<Result<_, _>>()?;
        Ok(Redact { patterns })
    }

    /// The masked text, or `None` when nothing matched.
    fn mask(&self, text: &str) -> Option<String> {
        let mut out = text.to_string();
        for (re, with) in &self.patterns {
            if re.is_match(&out) {
                out = re.replace_all(&out, *with).into_owned();
            }
        }
        (out != text).then_some(out)
    }
}

impl Hook for Redact {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::AfterTool]
    }

    fn name(&self) -> Option<String> {
        Some("redact".into())
    }

    async fn after_tool(&self, done: AfterToolParams) -> Verdict {
        let mut patch = Patch::new();
        if let Some(masked) = self.mask(&done.result.for_llm) {
            patch = patch.set(&["result", "for_llm"], masked);
        }
        if let Some(masked) = done.result.for_user.as_deref().and_then(|t| self.mask(t)) {
            patch = patch.set(&["result", "for_user"], masked);
        }
        if patch.is_empty() {
            Verdict::Continue
        } else {
            Verdict::modify(patch)
        }
    }
}

fn main() -> std::io::Result<()> {
    let hook = Redact::new().map_err(std::io::Error::other)?;
    hookhost_sdk::run(hook)
}
