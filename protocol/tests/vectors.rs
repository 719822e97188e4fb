//! Runs the language-neutral test vectors under `spec/vectors/` against this
//! crate. The formats are described in `spec/vectors/README.md`; the Python
//! SDK runs the same files with its own implementation.
//!
//! Each test collects every failing case of its file(s) and reports them all
//! at once, each line naming the file and the case.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use hookhost_protocol::chain::{Chain, Flow, OnError, validate_params};
use hookhost_protocol::envelope::{CancelParams, DecodeError, Id, Message};
use hookhost_protocol::event::RuntimeEvent;
use hookhost_protocol::hello::{HelloParams, HelloResult};
use hookhost_protocol::lifecycle::LifecycleEvent;
use hookhost_protocol::merge_patch::merged;
use hookhost_protocol::stage::{Stage, method};
use hookhost_protocol::{PROTOCOL_VERSION, decode_answer, decode_lifecycle_result};
use serde::Deserialize;
use serde_json::{Map, Value, json};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/vectors");

fn path(rel: &str) -> PathBuf {
    Path::new(DIR).join(rel)
}

fn load(file: &Path) -> Value {
    let text =
        fs::read_to_string(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", file.display()))
}

/// A short name for a vector file in messages: its path under spec/vectors.
fn display(file: &Path) -> String {
    file.strip_prefix(DIR)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned()
}

/// Failures of one test, each already prefixed with file and case.
#[derive(Default)]
struct Report {
    failures: Vec<String>,
    cases: usize,
}

impl Report {
    fn fail(&mut self, file: &str, case: &str, msg: impl AsRef<str>) {
        self.failures
            .push(format!("{file}: case {case:?}: {}", msg.as_ref()));
    }

    fn finish(self, what: &str) {
        assert!(
            self.cases > 0,
            "{what}: no vectors were run; is spec/vectors empty?"
        );
        assert!(
            self.failures.is_empty(),
            "{} of {} {what} vector(s) failed:\n  {}",
            self.failures.len(),
            self.cases,
            self.failures.join("\n  ")
        );
    }
}

/// The members of `obj` that are not in `allowed`: a typo in a vector file
/// must not silently turn a check off.
fn unknown_keys(obj: &Map<String, Value>, allowed: &[&str]) -> Vec<String> {
    obj.keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .cloned()
        .collect()
}

fn as_cases<'a>(value: &'a Value, file: &str) -> &'a [Value] {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{file}: expected a JSON array of cases"))
}

/// `name` of a case, checked for presence and uniqueness within its list.
fn case_name<'a>(case: &'a Value, file: &str, seen: &mut BTreeSet<String>) -> &'a str {
    let name = case
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{file}: a case without a string `name`: {case}"));
    assert!(
        seen.insert(name.to_string()),
        "{file}: duplicate case name {name:?}"
    );
    name
}

fn id_value(id: Option<&Id>) -> Value {
    serde_json::to_value(id).expect("an id serializes")
}

// ---------------------------------------------------------------- envelope

#[test]
fn envelope_vectors() {
    run_file("envelope.json", "envelope", check_envelope_case);
}

fn check_envelope_case(case: &Value) -> Result<(), String> {
    let obj = case.as_object().ok_or("a case must be an object")?;
    let unknown = unknown_keys(
        obj,
        &["name", "line", "expect", "id", "method", "error_code"],
    );
    if !unknown.is_empty() {
        return Err(format!("unknown keys {unknown:?}"));
    }
    let line = case
        .get("line")
        .and_then(Value::as_str)
        .ok_or("`line` must be a string")?;
    let expect = case
        .get("expect")
        .and_then(Value::as_str)
        .ok_or("`expect` must be a string")?;
    // An absent `id` means null: no id (notification, parse error,
    // invalid message whose id could not be read, null-id response).
    let want_id = case.get("id").cloned().unwrap_or(Value::Null);
    let want_method = case.get("method").and_then(Value::as_str);
    let want_code = case.get("error_code");
    let decoded = Message::decode(line.as_bytes());
    let got_kind = match &decoded {
        Ok(Message::Request(_)) => "request",
        Ok(Message::Notification(_)) => "notification",
        Ok(Message::Response(_)) => "response",
        Err(DecodeError::Parse(_)) => "parse_error",
        Err(DecodeError::Invalid { .. }) => "invalid",
        Err(_) => "a decode error the vectors do not name",
    };
    if got_kind != expect {
        return Err(format!(
            "expected {expect}, decoded as {got_kind}: {decoded:?}"
        ));
    }
    let (got_id, got_method, got_code) = match &decoded {
        Ok(Message::Request(r)) => (id_value(Some(&r.id)), Some(r.method.as_str()), None),
        Ok(Message::Notification(n)) => (Value::Null, Some(n.method.as_str()), None),
        Ok(Message::Response(r)) => (
            id_value(r.id.as_ref()),
            None,
            r.payload.as_ref().err().map(|e| json!(e.code)),
        ),
        Err(DecodeError::Parse(_)) => (Value::Null, None, None),
        Err(DecodeError::Invalid { id, .. }) => (id_value(id.as_ref()), None, None),
        Err(e) => return Err(format!("a decode error the vectors do not name: {e}")),
    };
    if got_id != want_id {
        return Err(format!("expected id {want_id}, got {got_id}: {decoded:?}"));
    }
    if want_method.is_some() && got_method != want_method {
        return Err(format!(
            "expected method {want_method:?}, got {got_method:?}"
        ));
    }
    if expect == "response" && got_code.as_ref() != want_code {
        return Err(format!(
            "expected error_code {}, got {} (null means a `result` response)",
            want_code.unwrap_or(&Value::Null),
            got_code.unwrap_or(Value::Null)
        ));
    }
    if expect != "response" && want_code.is_some() {
        return Err("`error_code` only applies to responses".into());
    }
    Ok(())
}

// ----------------------------------------------------------------- methods

/// What a method file's `params` entries are checked with.
fn check_params(method_name: &str, value: &Value) -> Result<(), String> {
    fn de<T: for<'de> Deserialize<'de>>(v: &Value) -> Result<(), String> {
        T::deserialize(v).map(drop).map_err(|e| e.to_string())
    }
    if let Some(stage) = Stage::from_method(method_name) {
        return validate_params(stage, value).map_err(|e| e.to_string());
    }
    match method_name {
        method::HELLO => de::<HelloParams>(value),
        method::RUNTIME_EVENT => de::<RuntimeEvent>(value),
        method::CANCEL_REQUEST => de::<CancelParams>(value),
        other => panic!("vectors.rs does not know method {other:?}; teach it"),
    }
}

/// Whether a method is a request, whose file has `results`.
fn has_results(method_name: &str) -> bool {
    Stage::from_method(method_name).is_some() || method_name == method::HELLO
}

/// The members a method's result cases may have beyond the common ones:
/// a lifecycle result is decoded for its case's `event`.
fn result_case_keys(method_name: &str) -> &'static [&'static str] {
    if method_name == method::LIFECYCLE {
        &["event"]
    } else {
        &[]
    }
}

/// What a method file's `results` entries are checked with, giving the
/// canonical `decision`. `None` for notifications, which have no result.
/// `case` is the whole case, for members such as `event`.
fn check_result(
    method_name: &str,
    case: &Map<String, Value>,
    value: &Value,
) -> Option<Result<Value, String>> {
    if method_name == method::LIFECYCLE {
        let event = case
            .get("event")
            .and_then(Value::as_str)
            .ok_or("a hook.lifecycle result case needs a string `event`")
            .and_then(|e| e.parse::<LifecycleEvent>().map_err(|_| "unknown `event`"));
        return Some(match event {
            Ok(event) => decode_lifecycle_result(event, value)
                .map(|d| d.to_value())
                .map_err(|e| e.to_string()),
            Err(e) => Err(format!("bad vector: {e}")),
        });
    }
    if let Some(stage) = Stage::from_method(method_name) {
        return Some(
            decode_answer(stage, value)
                .map(|a| a.to_value())
                .map_err(|e| e.to_string()),
        );
    }
    match method_name {
        method::HELLO => Some(
            HelloResult::deserialize(value)
                .map_err(|e| e.to_string())
                .and_then(|r| {
                    let version = r.negotiate(PROTOCOL_VERSION).map_err(|e| e.to_string())?;
                    Ok(json!({
                        "version": version,
                        "intercept": r.intercept,
                        "observe": r.observe,
                    }))
                }),
        ),
        _ => None,
    }
}

/// The file name a method's vectors live in: the method name without a
/// leading `$/`, plus `.json`.
fn file_name_for(method_name: &str) -> String {
    format!("{}.json", method_name.trim_start_matches("$/"))
}

/// Checks one case's `value`, given the whole case (for members such as
/// `event`), and gives the canonical decoded form.
type CaseCheck<'a> = &'a dyn Fn(&Map<String, Value>, &Value) -> Result<Value, String>;

fn run_list(
    report: &mut Report,
    file: &str,
    section: &str,
    list: Option<&Value>,
    check: CaseCheck<'_>,
    valid: bool,
    extra_keys: &[&str],
) {
    let Some(cases) = list.and_then(Value::as_array) else {
        report.fail(file, section, "missing or not an array");
        return;
    };
    if cases.is_empty() {
        report.fail(file, section, "empty list");
    }
    let mut seen = BTreeSet::new();
    for case in cases {
        let name = case_name(case, &format!("{file} {section}"), &mut seen);
        let label = format!("{section}/{name}");
        report.cases += 1;
        let obj = case.as_object().expect("case is an object");
        let has_decision = section.starts_with("results");
        let common: &[&str] = match (valid, has_decision) {
            (true, true) => &["name", "value", "decision"],
            (true, false) => &["name", "value"],
            (false, _) => &["name", "value", "error_contains"],
        };
        let allowed: Vec<&str> = common.iter().chain(extra_keys).copied().collect();
        let unknown = unknown_keys(obj, &allowed);
        if !unknown.is_empty() {
            report.fail(file, &label, format!("unknown keys {unknown:?}"));
            continue;
        }
        let Some(value) = case.get("value") else {
            report.fail(file, &label, "missing `value`");
            continue;
        };
        match (valid, check(obj, value)) {
            (true, Ok(got)) => {
                if has_decision {
                    match case.get("decision") {
                        Some(want) if *want == got => {}
                        Some(want) => report.fail(
                            file,
                            &label,
                            format!("decision: expected {want}, got {got}"),
                        ),
                        None => report.fail(file, &label, "missing `decision`"),
                    }
                }
            }
            (true, Err(e)) => report.fail(file, &label, format!("expected valid, got error: {e}")),
            (false, Ok(got)) => report.fail(
                file,
                &label,
                format!("expected an error, but it was accepted: {got}"),
            ),
            (false, Err(e)) => match case.get("error_contains").and_then(Value::as_str) {
                Some(want) if e.contains(want) => {}
                Some(want) => report.fail(
                    file,
                    &label,
                    format!("error {e:?} does not contain {want:?}"),
                ),
                None => report.fail(file, &label, "missing string `error_contains`"),
            },
        }
    }
}

#[test]
fn method_vectors() {
    let dir = path("methods");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "{} has no .json files; the method vectors are missing",
        dir.display()
    );
    let mut report = Report::default();
    for file_path in &files {
        let file = display(file_path);
        let doc = load(file_path);
        let obj = doc
            .as_object()
            .unwrap_or_else(|| panic!("{file}: expected a JSON object"));
        let unknown = unknown_keys(obj, &["method", "params", "results"]);
        assert!(unknown.is_empty(), "{file}: unknown keys {unknown:?}");
        let method_name = obj
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{file}: missing string `method`"));
        let base = file_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert_eq!(
            base,
            file_name_for(method_name),
            "{file}: the file name must be the method name without `$/`"
        );

        let params = obj
            .get("params")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("{file}: `params` must be an object"));
        let check_p =
            |_: &Map<String, Value>, v: &Value| check_params(method_name, v).map(|()| Value::Null);
        run_list(
            &mut report,
            &file,
            "params.valid",
            params.get("valid"),
            &check_p,
            true,
            &[],
        );
        run_list(
            &mut report,
            &file,
            "params.invalid",
            params.get("invalid"),
            &check_p,
            false,
            &[],
        );

        let results = obj
            .get("results")
            .unwrap_or_else(|| panic!("{file}: missing `results` (null for notifications)"));
        match (has_results(method_name), results) {
            (false, Value::Null) => {}
            (false, _) => report.fail(
                &file,
                "results",
                format!("{method_name} is a notification; `results` must be null"),
            ),
            (true, Value::Object(results)) => {
                let check_r = |case: &Map<String, Value>, v: &Value| {
                    check_result(method_name, case, v).expect("the method has results")
                };
                let extra = result_case_keys(method_name);
                run_list(
                    &mut report,
                    &file,
                    "results.valid",
                    results.get("valid"),
                    &check_r,
                    true,
                    extra,
                );
                run_list(
                    &mut report,
                    &file,
                    "results.invalid",
                    results.get("invalid"),
                    &check_r,
                    false,
                    extra,
                );
            }
            (true, _) => report.fail(
                &file,
                "results",
                format!("{method_name} is a request; `results` must be an object"),
            ),
        }
    }
    report.finish("method");
}

// ------------------------------------------------------------- merge patch

/// Runs `check` on every case of a list file and reports every failure
/// with the file and case name.
fn run_file(rel: &str, kind: &str, check: impl Fn(&Value) -> Result<(), String>) {
    let file_path = path(rel);
    let file = display(&file_path);
    let doc = load(&file_path);
    let mut report = Report::default();
    let mut seen = BTreeSet::new();
    for case in as_cases(&doc, &file) {
        let name = case_name(case, &file, &mut seen);
        report.cases += 1;
        if let Err(msg) = check(case) {
            report.fail(&file, name, msg);
        }
    }
    report.finish(kind);
}

#[test]
fn merge_patch_vectors() {
    run_file("merge_patch.json", "merge patch", |case| {
        let obj = case.as_object().ok_or("a case must be an object")?;
        let unknown = unknown_keys(obj, &["name", "target", "patch", "expected"]);
        if !unknown.is_empty() {
            return Err(format!("unknown keys {unknown:?}"));
        }
        let (Some(target), Some(patch), Some(expected)) =
            (obj.get("target"), obj.get("patch"), obj.get("expected"))
        else {
            return Err("needs `target`, `patch` and `expected`".into());
        };
        let got = merged(target, patch);
        if got != *expected {
            return Err(format!("expected {expected}, got {got}"));
        }
        Ok(())
    });
}

// ------------------------------------------------------------------- chain

#[test]
fn chain_vectors() {
    run_file("chain.json", "chain", run_chain_case);
}

fn run_chain_case(case: &Value) -> Result<(), String> {
    let obj = case.as_object().ok_or("a case must be an object")?;
    let unknown = unknown_keys(
        obj,
        &[
            "name",
            "stage",
            "params",
            "hooks",
            "expected",
            "decided_by",
            "called",
            "sees",
        ],
    );
    if !unknown.is_empty() {
        return Err(format!("unknown keys {unknown:?}"));
    }
    let stage: Stage = obj
        .get("stage")
        .and_then(Value::as_str)
        .ok_or("missing string `stage`")?
        .parse()
        .map_err(|e| format!("{e}"))?;
    let params = obj.get("params").ok_or("missing `params`")?;
    let hooks = obj
        .get("hooks")
        .and_then(Value::as_array)
        .ok_or("`hooks` must be an array")?;
    let expected = obj.get("expected").ok_or("missing `expected`")?;
    let want_by = obj.get("decided_by").ok_or("missing `decided_by`")?;
    let want_called: Vec<&str> = obj
        .get("called")
        .and_then(Value::as_array)
        .ok_or("`called` must be an array")?
        .iter()
        .map(|v| v.as_str().ok_or("`called` entries must be strings"))
        .collect::<Result<_, _>>()?;
    let empty = Map::new();
    let sees = match obj.get("sees") {
        None => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return Err("`sees` must be an object".into()),
    };

    let mut names = BTreeSet::new();
    for hook in hooks {
        let name = hook
            .get("name")
            .and_then(Value::as_str)
            .ok_or("every hook needs a string `name`")?;
        if !names.insert(name) {
            return Err(format!("duplicate hook name {name:?}"));
        }
    }
    if let Some(k) = sees.keys().find(|k| !names.contains(k.as_str())) {
        return Err(format!("`sees` names {k:?}, which is not in `hooks`"));
    }

    let mut chain =
        Chain::new(stage, params.clone()).map_err(|e| format!("Chain::new failed: {e}"))?;
    let mut called: Vec<&str> = Vec::new();
    for hook in hooks {
        let hook = hook.as_object().ok_or("a hook must be an object")?;
        let unknown = unknown_keys(hook, &["name", "on_error", "result", "error"]);
        if !unknown.is_empty() {
            return Err(format!("hook: unknown keys {unknown:?}"));
        }
        let name = hook.get("name").and_then(Value::as_str).unwrap_or_default();
        let on_error = match hook.get("on_error") {
            None => OnError::default_for(stage),
            Some(v) => OnError::deserialize(v)
                .map_err(|e| format!("hook {name:?}: bad `on_error`: {e}"))?,
        };
        if let Some(want) = sees.get(name)
            && chain.params() != want
        {
            return Err(format!(
                "hook {name:?} should see {want}, but would be sent {}",
                chain.params()
            ));
        }
        called.push(name);
        let flow = match (hook.get("result"), hook.get("error")) {
            (Some(result), None) => chain.step(name, on_error, Ok(result)),
            (None, Some(Value::String(error))) => chain.step(name, on_error, Err(error.clone())),
            _ => {
                return Err(format!(
                    "hook {name:?} needs exactly one of `result` or a string `error`"
                ));
            }
        };
        if flow == Flow::Stop {
            break;
        }
    }
    let outcome = chain.finish();
    let mut errors = Vec::new();
    if called != want_called {
        errors.push(format!("called {called:?}, expected {want_called:?}"));
    }
    if let Some(k) = sees.keys().find(|k| !called.contains(&k.as_str())) {
        errors.push(format!(
            "`sees` names {k:?}, which was never called, so its check did not run"
        ));
    }
    let got = outcome.to_wire(stage);
    if got != *expected {
        errors.push(format!("expected {expected}, got {got}"));
    }
    let got_by = outcome.decided_by().map_or(Value::Null, Value::from);
    if got_by != *want_by {
        errors.push(format!("decided_by: expected {want_by}, got {got_by}"));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
