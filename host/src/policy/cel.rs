//! `if = "…"`: a hook's CEL condition, compiled once when the config
//! loads and evaluated per call by [`super::filter::Filter`].
//!
//! Only built with the `cel` feature. Compiling also walks the expression
//! to refuse an unknown variable at load, which cel itself would only
//! notice when a call evaluates it; evaluating binds only the variables
//! the expression names, converting JSON to CEL values that borrow its
//! strings, and never panics (cel's few `panic!`s are caught).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

use cel::common::ast::{EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue};
use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use cel::{Context, Env, ExecutionError, ParseErrors, Program};
use hookhost_protocol::Stage;
use serde_json::Value;

use super::filter::{FilterError, FilterVerdict, collapse_whitespace, is_tool_stage, string_param};

/// The variables an `if` expression may use, in the order of the error text
/// and of [`Uses`].
pub(super) const VARIABLES: [&str; 5] = ["stage", "tool", "arguments", "meta", "model"];
const STAGE: usize = 0;
const TOOL: usize = 1;
const ARGUMENTS: usize = 2;
const META: usize = 3;
const MODEL: usize = 4;

/// Function namespaces of the CEL standard environment: `optional.of(x)`
/// calls the function `optional.of`, so `optional` there is not a variable.
/// cel 0.15's `Env::stdlib` declares no other.
const FUNCTION_NAMESPACES: [&str; 1] = ["optional"];

/// How deep JSON nesting may go before a call's params are refused. Params
/// that came over the wire are at most 128 deep (serde_json's parse limit);
/// the bound only keeps a hand-built value from exhausting the stack.
const MAX_DEPTH: usize = 256;

/// Longest error text [`FilterVerdict::Error`] carries. cel's errors quote
/// the values involved, which may be a whole tool argument: the text goes to
/// logs, so it is cut.
const MAX_ERROR_LEN: usize = 300;

/// A compiled `if` expression.
pub(super) struct Condition {
    /// The expression as written, for `Debug`.
    source: String,
    program: Program,
    /// Which of [`VARIABLES`] the expression names, so a call binds only
    /// those (an expression on `tool` does not convert `arguments`).
    uses: Uses,
}

/// One flag per entry of [`VARIABLES`].
type Uses = [bool; VARIABLES.len()];

/// The CEL environment every filter compiles and runs in: the standard
/// library, built once per process rather than per call, with `matches`
/// answered from compiled patterns ([`super::patterns`]) rather than
/// compiled per call.
fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // cel's own `matches` is left out (its `regex` feature is off), so
        // these are the only ones: declaring them cannot fail.
        let global = cel::add_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>,
            id = "matches");
        let member =
            cel::add_member_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>);
        debug_assert!(global.is_ok() && member.is_ok());
        Arc::new(env)
    })
}

/// `text.matches(pattern)` (and `matches(text, pattern)`): RE2 syntax, as
/// CEL's own, from a pattern compiled once.
fn matches(text: &CelString<'_>, pattern: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let compiled =
        super::patterns::get(pattern.inner()).map_err(|err| ExecutionError::FunctionError {
            function: "matches".to_string(),
            message: format!("'{}' not a valid regex: {err}", pattern.inner()),
        })?;
    Ok(CelBool::from(compiled.is_match(text.inner())))
}

/// Compiles every constant pattern of the expression's `matches()` calls
/// now, so that a bad one is refused at load and none is compiled per call.
fn pin_patterns(expr: &IdedExpr) -> Result<(), FilterError> {
    let mut found = Vec::new();
    constant_patterns(expr, &mut found);
    found.into_iter().try_for_each(|p| {
        super::patterns::pin(p).map_err(|e| FilterError::Pattern {
            pattern: p.to_string(),
            why: collapse_whitespace(&e.to_string()),
        })
    })
}

/// Calls `visit` on `expr` and on every expression inside it.
fn walk<'e>(expr: &'e IdedExpr, visit: &mut impl FnMut(&'e IdedExpr)) {
    visit(expr);
    match &expr.expr {
        Expr::Unspecified | Expr::Literal(_) | Expr::Ident(_) => {}
        Expr::Select(select) => walk(&select.operand, visit),
        Expr::Call(call) => {
            call.target.iter().for_each(|t| walk(t, visit));
            call.args.iter().for_each(|a| walk(a, visit));
        }
        Expr::List(list) => list.elements.iter().for_each(|e| walk(e, visit)),
        Expr::Map(map) => walk_entries(&map.entries, visit),
        Expr::Struct(object) => walk_entries(&object.entries, visit),
        Expr::Comprehension(c) => [
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ]
        .into_iter()
        .for_each(|e| walk(e, visit)),
    }
}

/// [`walk`] for the entries of a map or struct literal.
fn walk_entries<'e>(entries: &'e [IdedEntryExpr], visit: &mut impl FnMut(&'e IdedExpr)) {
    for entry in entries {
        match &entry.expr {
            EntryExpr::StructField(field) => walk(&field.value, visit),
            EntryExpr::MapEntry(pair) => {
                walk(&pair.key, visit);
                walk(&pair.value, visit);
            }
        }
    }
}

/// The string literals given as the pattern of a `matches()` call: its one
/// argument as a method, its second as a function.
fn constant_patterns<'e>(expr: &'e IdedExpr, found: &mut Vec<&'e str>) {
    walk(expr, &mut |e| {
        let Expr::Call(call) = &e.expr else { return };
        let at = if call.target.is_some() { 0 } else { 1 };
        if call.func_name == "matches" {
            if let Some(Expr::Literal(LiteralValue::String(s))) = call.args.get(at).map(|a| &a.expr)
            {
                found.push(s.inner());
            }
        }
    });
}

impl Condition {
    /// Compiles an `if` expression and checks that it names only known
    /// variables. cel itself would only notice an unknown one when a call
    /// evaluates it, too late for a config error.
    pub(super) fn compile(source: &str) -> Result<Condition, FilterError> {
        let program = env()
            .compile(source)
            .map_err(|e| FilterError::Syntax(describe_parse_errors(&e)))?;
        let mut uses = [false; VARIABLES.len()];
        let mut scope = Vec::new();
        if let Err(name) = check_names(program.expression(), &mut scope, &mut uses) {
            return Err(FilterError::UnknownVariable(name.to_string()));
        }
        pin_patterns(program.expression())?;
        Ok(Condition {
            source: source.to_string(),
            program,
            uses,
        })
    }

    /// The expression as written.
    pub(super) fn source(&self) -> &str {
        &self.source
    }
}

/// cel's parse errors on one line each, joined with "; ": its own text adds
/// a snippet and a caret line per error.
fn describe_parse_errors(errors: &ParseErrors) -> String {
    let described: Vec<String> = errors
        .errors
        .iter()
        .map(|e| {
            format!(
                "line {}, column {}: {}",
                e.pos.0,
                e.pos.1,
                // cel's messages start with their own "Syntax error: ".
                collapse_whitespace(e.msg.strip_prefix("Syntax error: ").unwrap_or(&e.msg))
            )
        })
        .collect();
    if described.is_empty() {
        collapse_whitespace(&errors.to_string())
    } else {
        described.join("; ")
    }
}

/// Walks the expression and fails with the first identifier that is neither
/// one of [`VARIABLES`], nor bound by an enclosing comprehension (the `x` of
/// `list.exists(x, ...)`), nor a type name (`type(x) == string`), nor a
/// function namespace. Records in `uses` which variables it names.
///
/// `Program::references` is not enough: it lists comprehension variables
/// and type names as variables too.
fn check_names<'e>(
    expr: &'e IdedExpr,
    scope: &mut Vec<&'e str>,
    uses: &mut Uses,
) -> Result<(), &'e str> {
    match &expr.expr {
        Expr::Unspecified | Expr::Literal(_) => Ok(()),
        Expr::Ident(name) => check_ident(name, scope, uses),
        Expr::Select(select) => check_names(&select.operand, scope, uses),
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                if !names_function_namespace(target, scope) {
                    check_names(target, scope, uses)?;
                }
            }
            call.args
                .iter()
                .try_for_each(|arg| check_names(arg, scope, uses))
        }
        Expr::List(list) => list
            .elements
            .iter()
            .try_for_each(|element| check_names(element, scope, uses)),
        Expr::Map(map) => check_entries(&map.entries, scope, uses),
        Expr::Struct(object) => check_entries(&object.entries, scope, uses),
        Expr::Comprehension(comprehension) => {
            // The range and the accumulator's start are evaluated outside the
            // comprehension's scope; the rest inside it.
            check_names(&comprehension.iter_range, scope, uses)?;
            check_names(&comprehension.accu_init, scope, uses)?;
            let depth = scope.len();
            scope.push(&comprehension.iter_var);
            if let Some(second) = &comprehension.iter_var2 {
                scope.push(second);
            }
            scope.push(&comprehension.accu_var);
            let inner = [
                &comprehension.loop_cond,
                &comprehension.loop_step,
                &comprehension.result,
            ]
            .into_iter()
            .try_for_each(|e| check_names(e, scope, uses));
            scope.truncate(depth);
            inner
        }
    }
}

/// [`check_names`] for the entries of a map or struct literal.
fn check_entries<'e>(
    entries: &'e [IdedEntryExpr],
    scope: &mut Vec<&'e str>,
    uses: &mut Uses,
) -> Result<(), &'e str> {
    entries.iter().try_for_each(|entry| match &entry.expr {
        EntryExpr::StructField(field) => check_names(&field.value, scope, uses),
        EntryExpr::MapEntry(pair) => {
            check_names(&pair.key, scope, uses)?;
            check_names(&pair.value, scope, uses)
        }
    })
}

/// [`check_names`] for one identifier.
fn check_ident<'e>(name: &'e str, scope: &[&str], uses: &mut Uses) -> Result<(), &'e str> {
    // `.tool` is the absolute spelling of `tool`; `@result` and the like are
    // the accumulators macros introduce.
    let plain = name.strip_prefix('.').unwrap_or(name);
    if plain.starts_with('@') || scope.contains(&plain) {
        return Ok(());
    }
    if let Some(index) = VARIABLES.iter().position(|v| *v == plain) {
        uses[index] = true;
        return Ok(());
    }
    if env().types().find_type(plain).is_some() {
        return Ok(());
    }
    Err(name)
}

/// Whether a call's target is a function namespace (`optional` in
/// `optional.of(x)`), which cel resolves as part of the function's name.
fn names_function_namespace(target: &IdedExpr, scope: &[&str]) -> bool {
    match &target.expr {
        Expr::Ident(name) => {
            FUNCTION_NAMESPACES.contains(&name.as_str()) && !scope.contains(&name.as_str())
        }
        _ => false,
    }
}

impl Condition {
    /// Runs the expression on one call. `tool` is the tool name as the
    /// matcher saw it ("" at the LLM stages).
    pub(super) fn evaluate(&self, stage: Stage, tool: &str, params: &Value) -> FilterVerdict {
        let context = match self.bind(stage, tool, params) {
            Ok(context) => context,
            Err(why) => return FilterVerdict::Error(why),
        };
        // cel has a few `panic!`s for expressions its parser should never
        // produce; one must not take the agent down.
        let result = catch_unwind(AssertUnwindSafe(|| self.program.execute(&context)));
        match result {
            Ok(Ok(cel::Value::Bool(true))) => FilterVerdict::Run,
            Ok(Ok(cel::Value::Bool(false))) => FilterVerdict::Skip,
            Ok(Ok(other)) => FilterVerdict::Error(format!(
                "`if` evaluated to a {}, not a bool",
                other.type_of()
            )),
            Ok(Err(error)) => {
                let text = bounded(format!("`if` failed: {error}"));
                FilterVerdict::Error(collapse_whitespace(&text))
            }
            Err(_) => FilterVerdict::Error("`if` failed: the CEL interpreter panicked".to_string()),
        }
    }

    /// A context with the variables the expression names, and only those;
    /// the error says which one cannot be read.
    fn bind<'p, 'v>(
        &self,
        stage: Stage,
        tool: &'v str,
        params: &'v Value,
    ) -> Result<Context<'p, 'v>, String> {
        let mut context = Context::with_env(Arc::clone(env()));
        if self.uses[STAGE] {
            context
                .add_variable_as_val(VARIABLES[STAGE], Box::new(CelString::from(stage.as_str())));
        }
        if self.uses[TOOL] {
            context.add_variable_as_val(VARIABLES[TOOL], Box::new(CelString::from(tool)));
        }
        for index in [ARGUMENTS, META] {
            if !self.uses[index] {
                continue;
            }
            let value = match params.get(VARIABLES[index]) {
                None | Some(Value::Null) => Box::new(CelMap::from(HashMap::new())),
                Some(value) => match to_cel(value, 0) {
                    Ok(value) => value,
                    Err(why) => {
                        return Err(format!("`if`: cannot read `{}`: {why}", VARIABLES[index]));
                    }
                },
            };
            context.add_variable_as_val(VARIABLES[index], value);
        }
        if self.uses[MODEL] {
            let model = if is_tool_stage(stage) {
                ""
            } else {
                string_param(params, "model")
            };
            context.add_variable_as_val(VARIABLES[MODEL], Box::new(CelString::from(model)));
        }
        Ok(context)
    }
}

/// `text` cut to at most [`MAX_ERROR_LEN`] bytes, on a character boundary.
fn bounded(mut text: String) -> String {
    if text.len() > MAX_ERROR_LEN {
        let mut end = MAX_ERROR_LEN;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// Converts JSON to a CEL value that borrows the JSON's strings, so a call
/// copies no string bytes, however long a tool argument is.
///
/// Integers become CEL `int` when they fit, so `arguments.count + 1` works:
/// cel's own serde conversion makes every non-negative JSON integer a
/// `uint`, and `uint + int` has no overload. Only integers above `i64::MAX`
/// stay `uint`.
fn to_cel(value: &Value, depth: usize) -> Result<Box<dyn Val + '_>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH} levels"));
    }
    Ok(match value {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Box::new(CelInt::from(i))
            } else if let Some(u) = n.as_u64() {
                Box::new(CelUInt::from(u))
            } else if let Some(f) = n.as_f64() {
                Box::new(CelDouble::from(f))
            } else {
                return Err(format!("the number {n} has no CEL value"));
            }
        }
        Value::String(s) => Box::new(CelString::from(s.as_str())),
        Value::Array(items) => {
            let list = items
                .iter()
                .map(|item| to_cel(item, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            Box::new(CelList::from(list))
        }
        Value::Object(object) => {
            let mut map = HashMap::with_capacity(object.len());
            for (key, item) in object {
                map.insert(CelMapKey::from(key.as_str()), to_cel(item, depth + 1)?);
            }
            Box::new(CelMap::from(map))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::filter::tests::{assert_error, call, filter, new_error, verdict};
    use serde_json::json;

    #[test]
    fn issue_example() {
        let cond = r#"tool == "shell" && size(arguments.command) > 80"#;
        let long = json!({"tool": "shell", "arguments": {"command": "x".repeat(81)}});
        let short = json!({"tool": "shell", "arguments": {"command": "ls"}});
        let other = json!({"tool": "read", "arguments": {"path": "/etc"}});
        assert_eq!(verdict(cond, Stage::BeforeTool, &long), FilterVerdict::Run);
        assert_eq!(
            verdict(cond, Stage::BeforeTool, &short),
            FilterVerdict::Skip
        );
        // `&&` short-circuits: `arguments.command` is never looked up.
        assert_eq!(
            verdict(cond, Stage::BeforeTool, &other),
            FilterVerdict::Skip
        );
        // A shell call without `command` is an error here...
        let bare = json!({"tool": "shell", "arguments": {}});
        assert_error(verdict(cond, Stage::BeforeTool, &bare), "command");
        // ...which the README's spelling, with `has()` first, avoids.
        let guarded =
            r#"tool == "shell" && has(arguments.command) && size(arguments.command) > 80"#;
        assert_eq!(
            verdict(guarded, Stage::BeforeTool, &bare),
            FilterVerdict::Skip
        );
        assert_eq!(
            verdict(guarded, Stage::BeforeTool, &long),
            FilterVerdict::Run
        );
    }

    #[test]
    fn stage_variable() {
        let p = call("shell");
        assert_eq!(
            verdict(r#"stage == "before_tool""#, Stage::BeforeTool, &p),
            FilterVerdict::Run
        );
        assert_eq!(
            verdict(r#"stage == "before_tool""#, Stage::AfterTool, &p),
            FilterVerdict::Skip
        );
        assert_eq!(
            verdict(r#"stage == "approve_tool""#, Stage::ApproveTool, &p),
            FilterVerdict::Run
        );
    }

    #[test]
    fn meta_variable() {
        let cond = "meta.iteration > 3";
        let late = json!({"tool": "shell", "meta": {"iteration": 4}});
        let early = json!({"tool": "shell", "meta": {"iteration": 3}});
        assert_eq!(verdict(cond, Stage::BeforeTool, &late), FilterVerdict::Run);
        assert_eq!(
            verdict(cond, Stage::BeforeTool, &early),
            FilterVerdict::Skip
        );
        // meta absent is {}: the key is missing, an error rather than a guess.
        assert_error(
            verdict(cond, Stage::BeforeTool, &call("shell")),
            "iteration",
        );
        assert_eq!(
            verdict("size(meta) == 0", Stage::BeforeTool, &call("shell")),
            FilterVerdict::Run
        );
        assert_eq!(
            verdict("has(meta.iteration)", Stage::BeforeTool, &call("shell")),
            FilterVerdict::Skip
        );
    }

    #[test]
    fn model_variable() {
        let cond = r#"model.startsWith("gpt")"#;
        let gpt = json!({"model": "gpt-4o", "messages": []});
        let claude = json!({"model": "claude-3", "messages": []});
        assert_eq!(verdict(cond, Stage::BeforeLlm, &gpt), FilterVerdict::Run);
        assert_eq!(verdict(cond, Stage::AfterLlm, &claude), FilterVerdict::Skip);
        // "" at the tool stages, even if the params carried a model.
        let tool = json!({"tool": "shell", "model": "gpt-4o"});
        assert_eq!(
            verdict(r#"model == """#, Stage::BeforeTool, &tool),
            FilterVerdict::Run
        );
    }

    #[test]
    fn tool_is_empty_and_arguments_empty_at_llm_stages() {
        let p = json!({"model": "gpt-4o", "tool": "shell", "messages": []});
        assert_eq!(
            verdict(
                r#"tool == "" && size(arguments) == 0"#,
                Stage::BeforeLlm,
                &p
            ),
            FilterVerdict::Run
        );
    }

    #[test]
    fn absent_arguments_are_an_empty_map() {
        let p = json!({"tool": "shell"});
        assert_eq!(
            verdict("size(arguments) == 0", Stage::BeforeTool, &p),
            FilterVerdict::Run
        );
        let p = json!({"tool": "shell", "arguments": null});
        assert_eq!(
            verdict("arguments == {}", Stage::BeforeTool, &p),
            FilterVerdict::Run
        );
    }

    #[test]
    fn json_integers_are_cel_ints() {
        let p = json!({"tool": "t", "arguments": {"n": 1, "neg": -2, "f": 1.5, "big": u64::MAX}});
        assert_eq!(
            verdict(
                "arguments.n + 1 == 2 && arguments.neg < 0",
                Stage::BeforeTool,
                &p
            ),
            FilterVerdict::Run
        );
        assert_eq!(
            verdict("arguments.f > 1.0", Stage::BeforeTool, &p),
            FilterVerdict::Run
        );
        assert_eq!(
            verdict(
                "arguments.big == 18446744073709551615u",
                Stage::BeforeTool,
                &p
            ),
            FilterVerdict::Run
        );
    }

    #[test]
    fn macros_types_and_namespaces_are_not_unknown_variables() {
        let p = json!({"tool": "write", "arguments": {"paths": ["/tmp/a", "/etc/passwd"], "n": 2}});
        for (cond, expected) in [
            (
                r#"arguments.paths.exists(p, p.startsWith("/etc"))"#,
                FilterVerdict::Run,
            ),
            (
                r#"arguments.paths.all(p, p.startsWith("/tmp"))"#,
                FilterVerdict::Skip,
            ),
            (
                "arguments.paths.map(p, size(p)).exists(n, n > 10)",
                FilterVerdict::Run,
            ),
            ("type(arguments.n) == int", FilterVerdict::Run),
            ("type(tool) == string", FilterVerdict::Run),
            ("optional.of(tool).hasValue()", FilterVerdict::Run),
            ("has(arguments.paths)", FilterVerdict::Run),
            (
                r#"arguments.?missing.orValue("") == """#,
                FilterVerdict::Run,
            ),
            (r#"tool.matches("^wr")"#, FilterVerdict::Run),
            (r#"arguments.exists(k, k == "paths")"#, FilterVerdict::Run),
        ] {
            assert_eq!(verdict(cond, Stage::BeforeTool, &p), expected, "{cond}");
        }
    }

    #[test]
    fn syntax_error_is_a_new_error() {
        for cond in ["tool ==", "tool == 'a", "", "a b", "(("] {
            let e = new_error(None, Some(cond));
            assert!(
                e.starts_with("`if`: syntax error: line 1, column "),
                "{cond:?}: {e}"
            );
            assert!(!e.contains('\n'), "{e:?}");
        }
    }

    #[test]
    fn unknown_variable_is_a_new_error() {
        assert_eq!(
            new_error(None, Some(r#"toool == "shell""#)),
            "`if`: unknown variable `toool` (known: stage, tool, arguments, meta, model)"
        );
        // A comprehension variable is known only inside its comprehension.
        assert_eq!(
            new_error(None, Some("[1].exists(x, x == 1) && x == 1")),
            "`if`: unknown variable `x` (known: stage, tool, arguments, meta, model)"
        );
        // Even where evaluation would never reach it.
        let e = new_error(None, Some("false && nope"));
        assert!(e.contains("`nope`"), "{e}");
        // A matcher error wins over nothing: each is reported by name.
        let e = new_error(Some("["), Some("toool"));
        assert!(e.starts_with("`matcher`"), "{e}");
    }

    #[test]
    fn evaluation_errors() {
        // A pattern built from the call is compiled when evaluated: a bad one
        // is the call's error. (A constant one is refused at load.)
        let p = json!({"tool": "shell", "arguments": {"command": "ls", "pattern": "("}});
        assert_error(
            verdict("arguments.missing == 1", Stage::BeforeTool, &p),
            "missing",
        );
        assert_error(verdict(r#"size(tool) > "x""#, Stage::BeforeTool, &p), "_>_");
        assert_error(
            verdict("1 / 0 == 1", Stage::BeforeTool, &p),
            "Division by zero",
        );
        assert_error(
            verdict("tool.matches(arguments.pattern)", Stage::BeforeTool, &p),
            "matches",
        );
        // An unknown function is only found when evaluated.
        assert_error(
            verdict("tool.lowerAscii() == 1", Stage::BeforeTool, &p),
            "lowerAscii",
        );
        for v in [
            verdict("arguments.missing == 1", Stage::BeforeTool, &p),
            verdict("1 / 0 == 1", Stage::BeforeTool, &p),
            verdict("tool.matches(arguments.pattern)", Stage::BeforeTool, &p),
        ] {
            let FilterVerdict::Error(text) = v else {
                panic!("not an error")
            };
            assert!(text.starts_with("`if` failed: "), "{text}");
            assert!(!text.contains('\n'), "{text:?}");
        }
    }

    #[test]
    fn a_constant_matches_pattern_is_compiled_at_load_and_a_bad_one_refused() {
        for bad in [r#"tool.matches("(")"#, r#"matches(tool, "[z-a]")"#] {
            let err = new_error(None, Some(bad));
            assert!(err.contains("not a valid regex"), "{bad}: {err}");
        }
        let p = json!({"tool": "shell", "arguments": {"command": "rm -rf /"}});
        let cond = r#"arguments.command.matches("^rm -rf") && tool.matches("sh")"#;
        assert_eq!(verdict(cond, Stage::BeforeTool, &p), FilterVerdict::Run);
        assert!(
            super::super::patterns::get("^rm -rf").is_ok(),
            "pinned at compile"
        );
    }

    #[test]
    fn non_bool_result_is_an_error_naming_the_type() {
        let p = json!({"tool": "shell", "arguments": {"n": 1, "l": [1]}});
        assert_eq!(
            verdict("tool", Stage::BeforeTool, &p),
            FilterVerdict::Error("`if` evaluated to a string, not a bool".to_string())
        );
        assert_error(verdict("arguments.n", Stage::BeforeTool, &p), "a int,");
        assert_error(verdict("arguments.l", Stage::BeforeTool, &p), "a list,");
        assert_error(verdict("arguments", Stage::BeforeTool, &p), "a map,");
        assert_error(verdict("null", Stage::BeforeTool, &p), "a null,");
    }

    #[test]
    fn error_text_is_bounded() {
        let huge = "secret ".repeat(100_000);
        let p = json!({"tool": "shell", "arguments": {"command": huge}});
        let v = verdict("arguments.command + 1 == 2", Stage::BeforeTool, &p);
        let FilterVerdict::Error(text) = v else {
            panic!("expected an error, got {v:?}")
        };
        assert!(text.len() <= MAX_ERROR_LEN + 3, "{} bytes", text.len());
        // Cut on a char boundary.
        let p = json!({"tool": "shell", "arguments": {"command": "é".repeat(1000)}});
        assert_error(
            verdict("arguments.command + 1 == 2", Stage::BeforeTool, &p),
            "...",
        );
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let huge = "ü".repeat(1 << 20);
        let odd = json!({
            "tool": "shell",
            "arguments": {
                "command": huge,
                "nested": [[[1, [2, [3, null]]], {"a": [{"b": []}]}], []],
                "null": null,
                "unicode": "日本語 🦀 \u{0000} \u{FFFF}",
                "": "empty key",
                "f": -0.0,
                "max": i64::MIN,
            },
            "meta": {"iteration": null, "extra": {"x": [true, false]}},
        });
        let exprs = [
            "size(arguments.command) > 80",
            r#"arguments.unicode.contains("🦀")"#,
            "arguments.nested[0][0][1][1][1] == null",
            "arguments.nested[5] == 1",
            r#"arguments["null"] == null"#,
            r#"arguments[""] == "empty key""#,
            "meta.iteration > 3",
            "meta.extra.x.all(b, b)",
            "arguments.max - 1 < 0",
            "-arguments.max > 0",
            "arguments.f == 0.0",
            "arguments.command.matches(\"^(ü)+$\")",
            "string(arguments.nested) == \"\"",
        ];
        let stranger = [
            odd.clone(),
            json!(null),
            json!([1, 2, 3]),
            json!("shell"),
            json!({"tool": 42, "arguments": "not a map", "meta": [1], "model": {}}),
            json!({"tool": null, "arguments": [null]}),
        ];
        for cond in exprs {
            let f = filter(Some("sh.*|"), Some(cond));
            for params in &stranger {
                for stage in Stage::ALL {
                    // Any verdict will do; reaching here without a panic is the point.
                    let _ = f.evaluate(stage, params);
                }
            }
        }
        // Spot checks that the odd values really went through.
        assert_eq!(
            verdict(
                r#"arguments.unicode.contains("🦀")"#,
                Stage::BeforeTool,
                &odd
            ),
            FilterVerdict::Run
        );
        assert_eq!(
            verdict(
                "arguments.nested[0][0][1][1][1] == null",
                Stage::BeforeTool,
                &odd
            ),
            FilterVerdict::Run
        );
        assert_eq!(
            verdict(
                "size(arguments.command) == 1048576",
                Stage::BeforeTool,
                &odd
            ),
            FilterVerdict::Run
        );
        assert_error(
            verdict("arguments.max - 1 < 0", Stage::BeforeTool, &odd),
            "Overflow",
        );
        // A non-string tool counts as "": the matcher `sh.*|` accepts "".
        let p = json!({"tool": 42});
        assert_eq!(
            verdict(r#"tool == """#, Stage::BeforeTool, &p),
            FilterVerdict::Run
        );
        assert_eq!(
            filter(Some("sh.*"), None).evaluate(Stage::BeforeTool, &p),
            FilterVerdict::Skip
        );
        // `arguments` that is not an object fails loudly when used as one.
        let p = json!({"tool": "shell", "arguments": "not a map"});
        assert_error(verdict("arguments.command == 1", Stage::BeforeTool, &p), "");
    }

    #[test]
    fn too_deep_params_are_an_error() {
        let mut deep = json!(1);
        for _ in 0..(MAX_DEPTH + 5) {
            deep = json!([deep]);
        }
        let p = json!({"tool": "shell", "arguments": {"deep": deep}});
        assert_error(
            verdict("size(arguments) == 1", Stage::BeforeTool, &p),
            "nested deeper",
        );
        // An expression that does not name `arguments` does not convert it.
        assert_eq!(
            verdict(r#"tool == "shell""#, Stage::BeforeTool, &p),
            FilterVerdict::Run
        );
        let mut fine = json!(1);
        for _ in 0..100 {
            fine = json!([fine]);
        }
        let p = json!({"tool": "shell", "arguments": {"deep": fine}});
        assert_eq!(
            verdict("size(arguments) == 1", Stage::BeforeTool, &p),
            FilterVerdict::Run
        );
    }
}
