//! Matchers as each dialect reads them, and Claude Code's permission-rule
//! `if` (`Bash(git *)`): which calls a hook runs for.

use regex::Regex;

use super::spec::Matching;

/// A compiled `matcher`.
#[derive(Debug, Clone)]
pub(crate) enum Matcher {
    /// Every name (absent, empty or `*`).
    All,
    /// Exact names.
    Names(Vec<String>),
    /// A regex (anchored or not, as compiled).
    Pattern(Regex),
}

/// A matcher that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`matcher` {matcher:?} is not a valid pattern: {message}")]
pub struct MatcherError {
    matcher: String,
    message: String,
}

/// Whether Claude Code reads `m` as a plain list of names; Codex
/// (`codex`) takes fewer characters in one.
fn is_plain_list(m: &str, codex: bool) -> bool {
    m.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || c == '_'
            || c == '|'
            || (!codex && matches!(c, ',' | ' ' | '-'))
    })
}

fn names(m: &str) -> Matcher {
    Matcher::Names(
        m.split(['|', ','])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

fn pattern(m: &str, anchored: bool) -> Result<Matcher, MatcherError> {
    // The pattern alone must compile: `a)|(b` is balanced only once wrapped.
    Regex::new(m).map_err(|e| MatcherError {
        matcher: m.to_string(),
        message: e.to_string(),
    })?;
    let source = if anchored {
        format!("^(?:{m})$")
    } else {
        m.to_string()
    };
    Regex::new(&source)
        .map(Matcher::Pattern)
        .map_err(|e| MatcherError {
            matcher: m.to_string(),
            message: e.to_string(),
        })
}

impl Matcher {
    /// Compiles `matcher` under `rule`; `tool_event` says whether it is
    /// matched against a tool name (Gemini reads lifecycle matchers as
    /// exact strings).
    pub(crate) fn new(
        matcher: Option<&str>,
        rule: Matching,
        tool_event: bool,
    ) -> Result<Matcher, MatcherError> {
        let m = matcher.map(str::trim).unwrap_or_default();
        if m.is_empty() || m == "*" {
            return Ok(Matcher::All);
        }
        match rule {
            Matching::ClaudeList if is_plain_list(m, false) => Ok(names(m)),
            Matching::CodexList if is_plain_list(m, true) => Ok(names(m)),
            Matching::ClaudeList | Matching::CodexList => pattern(m, false),
            Matching::Anchored => pattern(m, true),
            Matching::RegexTools if tool_event => pattern(m, false),
            Matching::RegexTools => Ok(Matcher::Names(vec![m.to_string()])),
        }
    }

    /// Whether `target` (a native tool name, or the lifecycle field the
    /// event matches on) is selected. An event with nothing to match on
    /// (`None`) runs whatever the matcher says, as Claude Code ignores
    /// matchers there.
    pub(crate) fn matches(&self, target: Option<&str>) -> bool {
        let Some(t) = target else { return true };
        match self {
            Matcher::All => true,
            Matcher::Names(n) => n.iter().any(|x| x == t),
            Matcher::Pattern(p) => p.is_match(t),
        }
    }
}

/// A Claude Code permission rule: `Tool` or `Tool(pattern)`, where the
/// pattern is a glob (`*` any text) over the command for `Bash`, the path
/// for file tools, the domain (`domain:host`) for `WebFetch`, else over
/// the input as JSON.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    tool: String,
    pattern: Option<Regex>,
}

/// A rule that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`rule` {0:?} is not a permission rule such as `Bash(git *)`")]
pub struct RuleError(String);

impl Rule {
    /// Parses `Tool` or `Tool(glob)`.
    pub(crate) fn new(rule: &str) -> Result<Rule, RuleError> {
        let bad = || RuleError(rule.to_string());
        let rule = rule.trim();
        let (tool, glob) = match rule.split_once('(') {
            None => (rule, None),
            Some((t, rest)) => (t, Some(rest.strip_suffix(')').ok_or_else(bad)?)),
        };
        if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad());
        }
        let pattern = match glob {
            None | Some("*") => None,
            Some(g) => {
                let g = g.strip_prefix("domain:").unwrap_or(g);
                let body = g
                    .split('*')
                    .map(regex::escape)
                    .collect::<Vec<_>>()
                    .join(".*");
                Some(Regex::new(&format!("^{body}$")).map_err(|_| bad())?)
            }
        };
        Ok(Rule {
            tool: tool.to_string(),
            pattern,
        })
    }

    /// Whether a call of native tool `tool` with native `input` matches.
    pub(crate) fn matches(&self, tool: &str, input: &serde_json::Value) -> bool {
        if self.tool != tool {
            return false;
        }
        let Some(p) = &self.pattern else { return true };
        let text = ["command", "file_path", "path", "url"]
            .iter()
            .find_map(|k| input.get(*k).and_then(|v| v.as_str()))
            .map(|s| match input.get("url") {
                Some(_) => host_of(s).to_string(),
                None => s.to_string(),
            })
            .unwrap_or_else(|| input.to_string());
        p.is_match(&text)
    }
}

/// The host part of a URL, for `domain:` rules.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', ':', '?', '#']).next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_reads_plain_strings_as_lists_and_the_rest_as_unanchored_regexes() {
        let m = Matcher::new(Some("Edit|Write"), Matching::ClaudeList, true).expect("compiles");
        assert!(m.matches(Some("Edit")) && m.matches(Some("Write")));
        assert!(!m.matches(Some("NotebookEdit")));
        let m = Matcher::new(Some("Edit.*"), Matching::ClaudeList, true).expect("compiles");
        assert!(
            m.matches(Some("NotebookEdit")),
            "unanchored, as Claude Code"
        );
        let m = Matcher::new(Some("mcp__.*"), Matching::ClaudeList, true).expect("compiles");
        assert!(m.matches(Some("mcp__gh__list")));
        assert!(Matcher::new(Some("a)|(b"), Matching::ClaudeList, true).is_err());
    }

    /// What Codex 0.169.0 ran for each matcher, driven offline with a
    /// hook that denies: the tool is `Bash` (exec_command) or
    /// `apply_patch`.
    #[test]
    fn codex_reads_matchers_as_codex_does_and_edit_selects_apply_patch() {
        let codex = crate::dialect::Dialect::Codex.spec();
        let selects = |m: &str, tool: &str| {
            let m = Matcher::new(Some(m), codex.matching, true).expect("compiles");
            codex.matcher_names(tool).any(|n| m.matches(Some(n)))
        };
        for (m, tool) in [
            ("Edit|Write", "apply_patch"),
            ("Write", "apply_patch"),
            ("^Edit$", "apply_patch"),
            ("Ed.*", "apply_patch"),
            ("apply_patch", "apply_patch"),
            ("B.s", "Bash"),
            ("ash$", "Bash"),
            ("as|Nope-", "Bash"),
            ("as|No pe", "Bash"),
            ("Bash|Nope", "Bash"),
        ] {
            assert!(selects(m, tool), "{m:?} selects {tool}");
        }
        for (m, tool) in [
            ("Edi", "apply_patch"),
            ("apply", "apply_patch"),
            ("NotebookEdit", "apply_patch"),
            ("Bas", "Bash"),
            ("as|Nope", "Bash"),
            ("^as", "Bash"),
            ("Bash,Edit", "Bash"),
            ("Bash, Edit", "Bash"),
            ("Edit", "Bash"),
        ] {
            assert!(!selects(m, tool), "{m:?} does not select {tool}");
        }
    }

    #[test]
    fn copilot_anchors_and_gemini_is_exact_at_lifecycle() {
        let m = Matcher::new(Some("bash"), Matching::Anchored, true).expect("compiles");
        assert!(m.matches(Some("bash")) && !m.matches(Some("bash2")));
        let m = Matcher::new(Some("start.*"), Matching::RegexTools, false).expect("compiles");
        assert!(!m.matches(Some("startup")), "exact at lifecycle events");
        let m =
            Matcher::new(Some("write_file|replace"), Matching::RegexTools, true).expect("compiles");
        assert!(m.matches(Some("replace")));
        assert!(
            Matcher::new(None, Matching::Anchored, true)
                .expect("all")
                .matches(Some("x"))
        );
    }

    #[test]
    fn permission_rules_match_the_command_path_or_domain() {
        let r = Rule::new("Bash(git *)").expect("parses");
        assert!(r.matches("Bash", &json!({"command": "git push"})));
        assert!(!r.matches("Bash", &json!({"command": "rm -rf /"})));
        assert!(!r.matches("Edit", &json!({"command": "git push"})));
        let r = Rule::new("Edit(*.ts)").expect("parses");
        assert!(r.matches("Edit", &json!({"file_path": "src/a.ts"})));
        let r = Rule::new("WebFetch(domain:example.com)").expect("parses");
        assert!(r.matches("WebFetch", &json!({"url": "https://example.com/x"})));
        assert!(Rule::new("Bash(git *").is_err());
        assert!(Rule::new("Ba sh").is_err());
        assert!(Rule::new("Bash").expect("bare").matches("Bash", &json!({})));
    }
}
