//! Per-hook filters, evaluated in the host before a hook is called, so a
//! hook that is filtered out costs no IPC at all.
//!
//! A hook may set three filters in its config:
//!
//! - `scope`: the agents, tenants and sessions it is for, read from the
//!   call's `meta` (`policy/scope.rs`). Checked first, at every stage.
//! - `matcher`: a regex on the tool name, anchored as `^(?:pattern)$`, so
//!   `Edit` matches `Edit` and not `NotebookEdit`. `"*"`, `""` or no matcher
//!   match every tool. It applies to the tool stages only.
//! - `if`: a CEL expression over `stage`, `tool`, `arguments`, `meta` and
//!   `model`, e.g. `tool == "shell" && has(arguments.command) &&
//!   size(arguments.command) > 80` (`has()` first, since the model decides
//!   which keys `arguments` has).
//!
//! Both are compiled once, when the config loads ([`Filter::new`]): a bad
//! regex, a CEL syntax error or an unknown variable is a config error, not a
//! surprise at the first call. At run time ([`Filter::evaluate`]) an `if`
//! that fails to evaluate says why ([`FilterVerdict::Error`]); the chain
//! counts it and treats it as a failure of the hook, which its `on_error`
//! decides, so a model that leaves out a key cannot walk past a fail-closed
//! guard.
//!
//! The CEL side (compiling, the name check, evaluating) is in `cel`, built
//! with the `cel` feature; without it an `if` does not compile
//! (`FilterError::CelNotBuilt`), and the config refuses it at load.

use std::fmt;
use std::sync::Arc;

use hookhost_protocol::Stage;
use regex::Regex;
use serde_json::Value;

#[cfg(feature = "cel")]
use super::cel::{Condition, VARIABLES};
use super::scope::Scope;

/// What a filter says about one call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FilterVerdict {
    /// Call the hook.
    Run,
    /// Do not call it: the scope, the matcher or the `if` expression said
    /// no.
    Skip,
    /// The `if` expression failed to evaluate (wrong type, missing key,
    /// non-bool result...): the caller counts it and hands it to the hook's
    /// `on_error` policy as a failure of that hook, so a broken filter is
    /// never silently treated as "run" or "skip".
    // Only an `if` fails to evaluate, so a build without `cel` never
    // makes one; the chain still handles it the same way.
    #[cfg_attr(not(feature = "cel"), allow(dead_code))]
    Error(String),
}

/// Why a filter does not compile; the message says which of the two is
/// wrong and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// The tool-name regex.
    #[error("`matcher`: {0}")]
    Matcher(String),
    /// The `if` expression does not parse.
    #[cfg(feature = "cel")]
    #[error("`if`: syntax error: {0}")]
    Syntax(String),
    /// A constant pattern of the `if` expression's `matches()` is not a
    /// regex.
    #[cfg(feature = "cel")]
    #[error("`if`: `matches` pattern {pattern:?} is not a valid regex: {why}")]
    Pattern {
        /// The pattern as written.
        pattern: String,
        /// The regex crate's reason, on one line.
        why: String,
    },
    /// The `if` expression names a variable the host does not bind.
    #[cfg(feature = "cel")]
    #[error("`if`: unknown variable `{0}` (known: {known})", known = VARIABLES.join(", "))]
    UnknownVariable(String),
    /// An `if` in a build without CEL.
    #[cfg(not(feature = "cel"))]
    #[error("`if` needs hookhost built with the `cel` feature")]
    CelNotBuilt,
}

/// A hook's compiled filters; cheap to evaluate, shared across calls (Send +
/// Sync), so the chain can decide whether to call a hook without IPC and
/// without compiling anything per call.
#[derive(Clone, Default)]
pub(crate) struct Filter {
    /// Who the hook is for; `None` is every call.
    scope: Option<Arc<Scope>>,
    /// The anchored tool-name regex; `None` matches every tool.
    matcher: Option<Regex>,
    /// The compiled `if` expression; `None` always runs.
    #[cfg(feature = "cel")]
    condition: Option<Arc<Condition>>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Filter");
        out.field("scope", &self.scope);
        out.field("matcher", &self.matcher.as_ref().map(Regex::as_str));
        #[cfg(feature = "cel")]
        out.field("if", &self.condition.as_ref().map(|c| c.source()));
        out.finish()
    }
}

impl Filter {
    /// Compiles `matcher` (None, "" or "*" = match all) and `if` (None =
    /// always), once, when the config loads, so that mistakes are config
    /// errors and calls pay no compile cost. The error says which of the
    /// two is wrong and why, e.g. "`matcher`: regex parse error: ..." or
    /// "`if`: unknown variable `toool` (known: stage, tool, arguments, meta,
    /// model)" or "`if`: syntax error: ...". Without the `cel` feature any
    /// `if` is an error that names the feature.
    pub(crate) fn new(
        matcher: Option<&str>,
        condition: Option<&str>,
    ) -> Result<Filter, FilterError> {
        let matcher = match matcher {
            None | Some("") | Some("*") => None,
            Some(pattern) => Some(compile_matcher(pattern)?),
        };
        #[cfg(feature = "cel")]
        let condition = condition.map(Condition::compile).transpose()?.map(Arc::new);
        #[cfg(not(feature = "cel"))]
        if condition.is_some() {
            return Err(FilterError::CelNotBuilt);
        }
        Ok(Filter {
            scope: None,
            matcher,
            #[cfg(feature = "cel")]
            condition,
        })
    }

    /// The same filter, for the calls `scope` covers only (a global scope
    /// changes nothing).
    pub(crate) fn scoped(mut self, scope: &Scope) -> Filter {
        self.scope = (!scope.is_global()).then(|| Arc::new(scope.clone()));
        self
    }

    /// True when none is set, so the chain can skip evaluation entirely.
    pub(crate) fn is_empty(&self) -> bool {
        #[cfg(feature = "cel")]
        let no_condition = self.condition.is_none();
        #[cfg(not(feature = "cel"))]
        let no_condition = true;
        self.scope.is_none() && self.matcher.is_none() && no_condition
    }

    /// Evaluates them against one call's params, to decide whether the hook
    /// is called at all. The matcher applies only at before_tool, after_tool
    /// and approve_tool (at the LLM stages it is ignored). CEL variables:
    /// `stage` (string, e.g. "before_tool"), `tool` (string; "" at LLM
    /// stages), `arguments` (map; {} when absent), `meta` (map; {} when
    /// absent), `model` (string; "" at tool stages). The scope runs first,
    /// then the matcher; once one says Skip, the expression is not
    /// evaluated.
    ///
    /// A `tool` or `model` that is not a string counts as "", for the matcher
    /// and for the expression alike; `arguments` or `meta` that are present
    /// but not objects are passed as they are, so an expression that treats
    /// them as maps fails loudly. Never panics.
    pub(crate) fn evaluate(&self, stage: Stage, params: &Value) -> FilterVerdict {
        if let Some(scope) = &self.scope {
            if !scope.matches(params.get("meta")) {
                return FilterVerdict::Skip;
            }
        }
        let tool_stage = is_tool_stage(stage);
        let tool = if tool_stage {
            string_param(params, "tool")
        } else {
            ""
        };
        if let Some(matcher) = &self.matcher {
            if tool_stage && !matcher.is_match(tool) {
                return FilterVerdict::Skip;
            }
        }
        #[cfg(feature = "cel")]
        if let Some(condition) = &self.condition {
            return condition.evaluate(stage, tool, params);
        }
        FilterVerdict::Run
    }
}

/// The stages whose params name a tool, where `matcher` applies.
pub(super) fn is_tool_stage(stage: Stage) -> bool {
    matches!(
        stage,
        Stage::BeforeTool | Stage::AfterTool | Stage::ApproveTool
    )
}

/// `params[key]` when it is a string, else "".
pub(super) fn string_param<'v>(params: &'v Value, key: &str) -> &'v str {
    params.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Compiles a tool-name regex anchored at both ends.
///
/// The pattern is first compiled on its own: that rejects a pattern that
/// would only parse once wrapped, such as `a)|(b`, which would turn
/// `^(?:a)|(b)$` into two half-anchored alternatives. It also makes the
/// error quote what the user wrote.
fn compile_matcher(pattern: &str) -> Result<Regex, FilterError> {
    Regex::new(pattern).map_err(|e| FilterError::Matcher(describe_regex_error(&e)))?;
    // Valid alone but not once wrapped: a `#` comment in `(?x)` mode runs
    // over the closing parenthesis.
    Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
        FilterError::Matcher(format!(
            "{} (once anchored as `^(?:{pattern})$`)",
            describe_regex_error(&e)
        ))
    })
}

/// A regex error on one line: the regex crate's text spreads over several
/// (pattern, carets, message), which reads badly inside a config error.
fn describe_regex_error(error: &regex::Error) -> String {
    match error {
        regex::Error::Syntax(text) => {
            let reason = text
                .lines()
                .find_map(|line| line.strip_prefix("error: "))
                .unwrap_or_else(|| text.lines().last().unwrap_or_default());
            format!("regex parse error: {}", reason.trim())
        }
        other => collapse_whitespace(&other.to_string()),
    }
}

/// `text` with every run of whitespace (newlines included) as one space.
pub(super) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    pub(in crate::policy) fn filter(matcher: Option<&str>, condition: Option<&str>) -> Filter {
        match Filter::new(matcher, condition) {
            Ok(f) => f,
            Err(e) => panic!("filter {matcher:?} / {condition:?} should compile: {e}"),
        }
    }

    pub(in crate::policy) fn call(tool: &str) -> Value {
        json!({"tool": tool, "arguments": {}})
    }

    #[cfg(feature = "cel")]
    pub(in crate::policy) fn verdict(
        condition: &str,
        stage: Stage,
        params: &Value,
    ) -> FilterVerdict {
        filter(None, Some(condition)).evaluate(stage, params)
    }

    pub(in crate::policy) fn new_error(matcher: Option<&str>, condition: Option<&str>) -> String {
        match Filter::new(matcher, condition) {
            Ok(f) => panic!("{matcher:?} / {condition:?} should not compile: {f:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[cfg(feature = "cel")]
    pub(in crate::policy) fn assert_error(v: FilterVerdict, contains: &str) {
        match v {
            FilterVerdict::Error(text) => {
                assert!(text.contains(contains), "{text:?} lacks {contains:?}")
            }
            other => panic!("expected an error containing {contains:?}, got {other:?}"),
        }
    }

    #[test]
    fn matcher_is_anchored() {
        let f = filter(Some("Edit"), None);
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("Edit")),
            FilterVerdict::Run
        );
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("NotebookEdit")),
            FilterVerdict::Skip
        );
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("EditFile")),
            FilterVerdict::Skip
        );
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("edit")),
            FilterVerdict::Skip
        );
    }

    #[test]
    fn matcher_alternation_is_anchored_as_a_whole() {
        let f = filter(Some("Bash|shell"), None);
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("Bash")),
            FilterVerdict::Run
        );
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("shell")),
            FilterVerdict::Run
        );
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("Bashful")),
            FilterVerdict::Skip
        );
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("myshell")),
            FilterVerdict::Skip
        );
    }

    #[test]
    fn matcher_applies_at_every_tool_stage() {
        let f = filter(Some("shell"), None);
        for stage in [Stage::BeforeTool, Stage::AfterTool, Stage::ApproveTool] {
            assert_eq!(
                f.evaluate(stage, &call("shell")),
                FilterVerdict::Run,
                "{stage}"
            );
            assert_eq!(
                f.evaluate(stage, &call("read")),
                FilterVerdict::Skip,
                "{stage}"
            );
        }
    }

    #[test]
    fn star_empty_and_absent_matchers_match_all() {
        for m in [None, Some(""), Some("*")] {
            let f = filter(m, None);
            assert!(f.is_empty(), "{m:?}");
            for tool in ["shell", "NotebookEdit", "", "ünï"] {
                assert_eq!(
                    f.evaluate(Stage::BeforeTool, &call(tool)),
                    FilterVerdict::Run
                );
            }
        }
        assert!(Filter::default().is_empty());
        assert_eq!(
            Filter::default().evaluate(Stage::ApproveTool, &call("x")),
            FilterVerdict::Run
        );
    }

    #[test]
    #[cfg(feature = "cel")]
    fn is_empty_is_false_when_either_is_set() {
        assert!(!filter(Some("shell"), None).is_empty());
        assert!(!filter(None, Some("true")).is_empty());
    }

    #[test]
    fn invalid_matcher_is_an_error_naming_matcher() {
        let e = new_error(Some("("), None);
        assert!(e.starts_with("`matcher`: regex parse error: "), "{e}");
        assert!(!e.contains('\n'), "{e:?}");
        // Would parse once wrapped as `^(?:a)|(b)$`, half anchored: refused.
        let e = new_error(Some("a)|(b"), None);
        assert!(e.starts_with("`matcher`: regex parse error: "), "{e}");
        // Valid alone, but its comment would swallow the anchoring `)$`.
        let e = new_error(Some("(?x)Edit # the edit tool"), None);
        assert!(e.contains("once anchored as"), "{e}");
    }

    #[test]
    fn matcher_is_ignored_at_llm_stages() {
        let f = filter(Some("shell"), None);
        let params = json!({"model": "gpt-4o", "messages": []});
        assert_eq!(f.evaluate(Stage::BeforeLlm, &params), FilterVerdict::Run);
        assert_eq!(f.evaluate(Stage::AfterLlm, &params), FilterVerdict::Run);
    }

    #[test]
    #[cfg(feature = "cel")]
    fn matcher_runs_first_and_spares_the_expression() {
        // The expression would fail on this call; the matcher says no first.
        let f = filter(Some("shell"), Some("arguments.missing == 1"));
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("read")),
            FilterVerdict::Skip
        );
        assert_error(f.evaluate(Stage::BeforeTool, &call("shell")), "missing");
    }

    #[test]
    #[cfg(feature = "cel")]
    fn filter_is_shareable() {
        fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}
        assert_send_sync_clone::<Filter>();
        let f = filter(Some("shell"), Some("size(arguments) == 0"));
        let copy = f.clone();
        let handle = std::thread::spawn(move || copy.evaluate(Stage::BeforeTool, &call("shell")));
        assert_eq!(handle.join().ok(), Some(FilterVerdict::Run));
        assert_eq!(
            f.evaluate(Stage::BeforeTool, &call("shell")),
            FilterVerdict::Run
        );
        let shown = format!("{f:?}");
        assert!(shown.contains("size(arguments) == 0"), "{shown}");
    }

    #[test]
    #[cfg(not(feature = "cel"))]
    fn an_if_needs_the_cel_feature() {
        assert_eq!(
            new_error(None, Some("true")),
            "`if` needs hookhost built with the `cel` feature"
        );
        assert!(
            filter(Some("shell"), None).evaluate(Stage::BeforeTool, &call("shell"))
                == FilterVerdict::Run
        );
    }
}
