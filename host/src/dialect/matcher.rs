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
            // Gemini CLI matches the exact name when the pattern is no
            // regex (`matchesToolName`, hookPlanner.ts, gemini-cli
            // 5411f113).
            Matching::RegexTools if tool_event => {
                Ok(pattern(m, false).unwrap_or_else(|_| Matcher::Names(vec![m.to_string()])))
            }
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
/// pattern is a glob (`*` any text, newlines included) over the command
/// for `Bash`, the path for file tools, the domain (`domain:host`) for
/// `WebFetch`, else over the input as JSON. `prefix:*` is `prefix` alone
/// or followed by a space and anything, and so is `prefix *` (Claude
/// Code's trailing wildcard is optional).
///
/// A rule selects a guard, so a command matches when ANY simple command
/// in it does: the command line is split on `;`, `&&`, `||`, `|`, `&`,
/// newlines, `$(`, backticks and parentheses, each part trimmed, its
/// blanks collapsed, leading shell keywords (`then`, `do`, `!`, …) and
/// `NAME=value` assignments dropped, and its program compared by path and
/// by basename (`/bin/rm` is `rm`). spec/dialects.md §5.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    tool: String,
    pattern: Option<Regex>,
}

/// A rule that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`rule` {0:?} is not a permission rule such as `Bash(git *)`")]
pub struct RuleError(String);

/// The regex of a rule's glob: `*` is any text (newlines too); a glob
/// ending in `:*`, or in ` *` with no other `*`, also matches its prefix
/// alone.
fn glob_regex(glob: &str) -> Result<Regex, regex::Error> {
    let prefix = glob
        .strip_suffix(":*")
        .or_else(|| glob.strip_suffix(" *").filter(|p| !p.contains('*')));
    if let Some(prefix) = prefix {
        return Regex::new(&format!("(?s)^{}(?: .*)?$", regex::escape(prefix)));
    }
    let body = glob
        .split('*')
        .map(regex::escape)
        .collect::<Vec<_>>()
        .join(".*");
    Regex::new(&format!("(?s)^{body}$"))
}

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
                Some(glob_regex(g).map_err(|_| bad())?)
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
        if let Some(command) = input.get("command").and_then(|v| v.as_str()) {
            return p.is_match(command)
                || simple_commands(command).any(|c| command_forms(&c).any(|f| p.is_match(&f)));
        }
        let text = ["file_path", "path", "url"]
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

/// Words that may stand before a command without being it.
const SHELL_PREFIXES: &[&str] = &[
    "!", "{", "then", "do", "else", "elif", "if", "while", "until", "time", "exec", "command",
    "builtin", "nohup",
];

/// The simple commands of a command line, each trimmed, its blanks
/// collapsed to one space and its leading keywords and assignments
/// dropped. Quoting is not honoured: a separator inside quotes splits too,
/// which can only add candidates (a rule selects a guard, so more
/// candidates is the safe direction).
fn simple_commands(line: &str) -> impl Iterator<Item = String> + '_ {
    line.split([';', '&', '|', '\n', '\r', '`', '(', ')'])
        .map(|part| part.trim_start_matches('$'))
        .filter_map(|part| {
            let mut words = part.split_whitespace().peekable();
            while let Some(w) = words.peek() {
                let assignment = w
                    .split_once('=')
                    .is_some_and(|(name, _)| is_shell_name(name));
                if !(SHELL_PREFIXES.contains(w) || assignment) {
                    break;
                }
                words.next();
            }
            let words: Vec<&str> = words.collect();
            (!words.is_empty()).then(|| words.join(" "))
        })
}

/// Whether `name` can be a shell variable's name.
fn is_shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A simple command as written, and with its program's path cut to the
/// basename (`/bin/rm -rf ~` is also `rm -rf ~`).
fn command_forms(command: &str) -> impl Iterator<Item = String> {
    let (program, rest) = command.split_once(' ').unwrap_or((command, ""));
    let base = program.rsplit('/').next().unwrap_or(program);
    let short = (base != program && !base.is_empty()).then(|| match rest {
        "" => base.to_string(),
        _ => format!("{base} {rest}"),
    });
    std::iter::once(command.to_string()).chain(short)
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

    /// The red team's bypasses of `Bash(rm *)`: each of these runs `rm`,
    /// so the guard the rule selects must run.
    #[test]
    fn a_command_rule_matches_any_simple_command_of_the_line() {
        let r = Rule::new("Bash(rm *)").expect("parses");
        for command in [
            "rm -rf ~",
            "rm -rf ~\n",
            " rm -rf ~",
            "/bin/rm -rf ~",
            "rm\t-rf ~",
            "rm\t-rf\t~",
            "echo hi; rm -rf ~",
            "echo hi && rm -rf ~",
            "false || rm -rf ~",
            "echo y | rm -rf ~",
            "sleep 1 & rm -rf ~",
            "echo hi\nrm -rf ~",
            "echo $(rm -rf ~)",
            "echo `rm -rf ~`",
            "(cd /; rm -rf ~)",
            "if true; then rm -rf ~; fi",
            "FOO=1 rm -rf ~",
            "rm",
        ] {
            assert!(
                r.matches("Bash", &json!({ "command": command })),
                "{command:?} runs rm"
            );
        }
        for command in ["ls -la", "echo rm -rf", "grep rm file", "rmdir x", "farm x"] {
            assert!(
                !r.matches("Bash", &json!({ "command": command })),
                "{command:?} does not run rm"
            );
        }
        let r = Rule::new("Bash(git push:*)").expect("parses");
        assert!(r.matches("Bash", &json!({"command": "cd x && git push origin"})));
        assert!(r.matches("Bash", &json!({"command": "git push"})));
        assert!(!r.matches("Bash", &json!({"command": "git pushx"})));
        let r = Rule::new("Bash(curl * | sh)").expect("parses");
        assert!(
            r.matches("Bash", &json!({"command": "curl x | sh"})),
            "the whole line too"
        );
    }
}
