//! The agents' own hook tests, ported to `hookhost relay`.
//!
//! Each case under `tests/ported/<agent>/*.json` is one test of an agent's
//! own suite (Codex's `codex-rs`, Gemini CLI's `packages/core/src/hooks/`)
//! or one documented behaviour (Cursor, Copilot), named after it, with the
//! source file and commit in its file. A case is the settings file the test
//! implies (the agent's own format, in the user's settings folder), the
//! event the agent sends, tiny hook scripts that answer as the test's hooks
//! do, and what the AGENT does with the answer. The relay stands in for the
//! whole chain as one command hook of that agent; its exit code, stdout and
//! stderr are read here exactly as that agent reads a command hook (the
//! readers in `ported/readers/` follow the agents' own parsers), and the
//! outcome must be the one the agent reaches with the hooks run by itself.
//! `ported/<agent>/INDEX.md` maps every source test to its case, or says
//! why it has no effect at a command hook's boundary.
//!
//! A case: `name`, `event` (the agent's own name), `input` (keys over the
//! agent's default payload), `hooks` (each `stdout`/`stderr`/`exit`, or its
//! own `run` script; `matcher`, `entry` and `group` keys for the settings,
//! `same_group`), or the whole `settings` / a `settings_file` in another
//! format, `extra_files`, and `expect`: the agent's outcome (`compare`
//! limits it to documented keys; `addition` names a listed hookhost
//! addition and its answer; `diverges` says why hookhost still differs
//! there). `{{H0}}`, `{{HOME}}`, `{{DIR}}` stand for a hook's command, the
//! user's home and the scratch folder.
//!
//! One run (`cargo test -p hookhost-cli --test ported`) reports every
//! diverging case by name with expected and actual, then fails if any
//! diverged that is not marked `diverges`, or if a marked one no longer
//! does. `PORTED_FILTER=substring` runs a subset.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

#[path = "ported/readers/mod.rs"]
mod readers;

use readers::Answer;

const HOOKHOST: &str = env!("CARGO_BIN_EXE_hookhost");

/// One ported case, with the file it came from.
struct Case {
    agent: String,
    file: String,
    spec: Value,
}

fn ported_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ported")
}

/// Every case of every agent, in file order.
fn load_cases() -> Vec<Case> {
    let mut out = Vec::new();
    for agent in ["codex", "gemini-cli", "cursor", "copilot"] {
        let dir = ported_dir().join(agent);
        if !dir.exists() {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let doc: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                doc["source"].is_string() && doc["commit"].is_string(),
                "{}: names no source and commit",
                path.display()
            );
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            for spec in doc["cases"].as_array().unwrap() {
                out.push(Case {
                    agent: agent.to_string(),
                    file: file.clone(),
                    spec: spec.clone(),
                });
            }
        }
    }
    out
}

/// A scratch folder: `home/` (the user's settings folder lives there, so
/// its hooks are the user's own and trusted), `proj/` (the session's
/// folder), `xdg/` and the hook scripts.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(index: usize) -> Self {
        let root =
            std::env::temp_dir().join(format!("hookhost-ported-{}-{index}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["home", "proj", "xdg"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        Self { root }
    }
    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Writes hook `i` of a case as an executable script and returns the
/// command that runs it. A hook is `stdout` (text, or JSON written as is),
/// `stderr` and `exit`, or its own `run` (sh; `$DIR` is the scratch folder).
fn write_hook(s: &Scratch, i: usize, hook: &Value) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = s.root.display().to_string();
    let body = if let Some(run) = hook["run"].as_str() {
        run.replace("$DIR", &dir)
    } else {
        let out = match &hook["stdout"] {
            Value::Null => String::new(),
            Value::String(t) => t.clone(),
            v => v.to_string(),
        };
        std::fs::write(s.path(&format!("h{i}.out")), out).unwrap();
        std::fs::write(
            s.path(&format!("h{i}.err")),
            hook["stderr"].as_str().unwrap_or_default(),
        )
        .unwrap();
        format!(
            "cat >/dev/null\ncat '{dir}/h{i}.out'\ncat '{dir}/h{i}.err' >&2\nexit {}",
            hook["exit"].as_i64().unwrap_or(0)
        )
    };
    let script = s.path(&format!("h{i}.sh"));
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// Merges `extra`'s keys into `target` (an object).
pub(crate) fn merge(target: &mut Value, extra: &Value) {
    if let (Some(t), Some(e)) = (target.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            t.insert(k.clone(), v.clone());
        }
    }
}

/// The settings file a case implies, in its agent's own format: each hook
/// its own matcher group (or the previous one, with `same_group`), in case
/// order; or the case's own `settings` with `{{H0}}`... for the commands.
fn settings(agent: &str, case: &Value, commands: &[String], root: &Path) -> Value {
    if let Some(raw) = case.get("settings") {
        return serde_json::from_str(&subst(&raw.to_string(), commands, root)).unwrap();
    }
    let event = case["event"].as_str().unwrap();
    let hooks = case["hooks"].as_array().cloned().unwrap_or_default();
    let mut list: Vec<Value> = Vec::new();
    for (hook, command) in hooks.iter().zip(commands) {
        let entry = hook_entry(agent, hook, command);
        if matches!(agent, "cursor" | "copilot") {
            list.push(entry);
            continue;
        }
        if hook["same_group"] == true
            && let Some(last) = list.last_mut()
        {
            last["hooks"].as_array_mut().unwrap().push(entry);
            continue;
        }
        let mut group = json!({"hooks": [entry]});
        if let Some(m) = hook.get("matcher") {
            group["matcher"] = m.clone();
        }
        merge(&mut group, &hook["group"]);
        list.push(group);
    }
    let mut doc = json!({"hooks": {event: list}});
    if matches!(agent, "cursor" | "copilot") {
        doc["version"] = json!(1);
    }
    merge(&mut doc, &case["settings_extra"]);
    doc
}

/// One hook's entry in its agent's settings format.
fn hook_entry(agent: &str, hook: &Value, command: &str) -> Value {
    let mut entry = match agent {
        "cursor" => json!({"command": command}),
        "copilot" => json!({"type": "command", "bash": command}),
        _ => json!({"type": "command", "command": command}),
    };
    if agent == "cursor"
        && let Some(m) = hook.get("matcher")
    {
        entry["matcher"] = m.clone();
    }
    merge(&mut entry, &hook["entry"]);
    entry
}

/// `{{H0}}`, `{{H1}}`... replaced by the hooks' commands, `{{HOME}}` by
/// the user's home and `{{DIR}}` by the scratch folder.
fn subst(text: &str, commands: &[String], root: &Path) -> String {
    let mut text = text
        .replace("{{HOME}}", &root.join("home").display().to_string())
        .replace("{{DIR}}", &root.display().to_string());
    for (i, c) in commands.iter().enumerate() {
        text = text.replace(&format!("{{{{H{i}}}}}"), c);
    }
    text
}

/// Writes the case's settings file under `home/` and returns its path:
/// the generated JSON, or `settings_file` (`path`, `text` with `{{H0}}`...)
/// for other formats (Codex's `config.toml`).
fn write_settings(agent: &str, case: &Value, commands: &[String], s: &Scratch) -> PathBuf {
    let (rel, text) = match case.get("settings_file") {
        Some(f) => {
            let text = subst(f["text"].as_str().unwrap(), commands, &s.root);
            (f["path"].as_str().unwrap().to_string(), text)
        }
        None => (
            settings_path(agent).to_string(),
            serde_json::to_string_pretty(&settings(agent, case, commands, &s.root)).unwrap(),
        ),
    };
    let file = s.path("home").join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    // Files the case's agent would also find (a plugin's manifest).
    if let Some(extra) = case["extra_files"].as_object() {
        for (rel, text) in extra {
            let path = s.path("home").join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(
                path,
                subst(text.as_str().unwrap_or_default(), commands, &s.root),
            )
            .unwrap();
        }
    }
    file
}

/// Where the agent keeps the user's settings file (relative to `home/`).
fn settings_path(agent: &str) -> &'static str {
    match agent {
        "codex" => ".codex/hooks.json",
        "gemini-cli" => ".gemini/settings.json",
        "cursor" => ".cursor/hooks.json",
        _ => ".copilot/hooks/ported.json",
    }
}

/// The event exactly as the agent sends it: its defaults for the event,
/// then the case's `input` keys (a key set to `"$DELETE"` is removed).
fn event_input(agent: &str, event: &str, case: &Value, proj: &Path) -> Value {
    let cwd = proj.display().to_string();
    let mut input = readers::input(agent, event, &cwd);
    if let Some(extra) = case["input"].as_object() {
        let obj = input.as_object_mut().unwrap();
        for (k, v) in extra {
            if v == "$DELETE" {
                obj.remove(k);
            } else {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    input
}

fn run_relay(agent: &str, case: &Value, s: &Scratch) -> Answer {
    let hooks = case["hooks"].as_array().cloned().unwrap_or_default();
    let commands: Vec<String> = hooks
        .iter()
        .enumerate()
        .map(|(i, h)| write_hook(s, i, h))
        .collect();
    let file = write_settings(agent, case, &commands, s);
    let event = case["event"].as_str().unwrap();
    let input = event_input(agent, event, case, &s.path("proj"));
    let input = subst(&input.to_string(), &commands, &s.root);
    let mut cmd = Command::new(HOOKHOST);
    cmd.args(["relay", "--dialect", agent, "-c"]).arg(&file);
    if agent == "copilot" && !event.starts_with(|c: char| c.is_ascii_uppercase()) {
        cmd.args(["--event", event]);
    }
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", s.path("home"))
        .env("XDG_CONFIG_HOME", s.path("xdg"))
        .env("USER", "ported")
        .envs(agent_env(agent, &input, s))
        .current_dir(s.path("proj"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(input.as_bytes());
    }
    finish(child)
}

/// What the agent sets for its command hooks, and so for the relay
/// standing in for them: Gemini CLI's project, session and plans folder
/// (hookRunner.ts `env`), from the event it sends.
fn agent_env(agent: &str, input: &str, s: &Scratch) -> Vec<(String, String)> {
    if agent != "gemini-cli" {
        return Vec::new();
    }
    let event: Value = serde_json::from_str(input).unwrap_or_default();
    let text = |k: &str| event[k].as_str().unwrap_or_default().to_string();
    let plans = s.path("plans").display().to_string();
    vec![
        ("GEMINI_PROJECT_DIR".into(), text("cwd")),
        ("GEMINI_CWD".into(), text("cwd")),
        ("CLAUDE_PROJECT_DIR".into(), text("cwd")),
        ("GEMINI_SESSION_ID".into(), text("session_id")),
        ("GEMINI_PLANS_DIR".into(), plans),
    ]
}

/// Waits for the relay (at most 30 s: a relay that hangs is a divergence,
/// not a hung suite), reading its pipes as it runs.
fn finish(mut child: std::process::Child) -> Answer {
    use std::io::Read;
    let pipe = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut text);
            }
            text
        })
    };
    let out = pipe(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = pipe(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().unwrap_or(-1),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break -2;
            }
        }
    };
    Answer {
        code,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Texts the agent hands the model as one or several messages (context,
/// a stop hook's next prompt, PostToolUse feedback, Codex's user
/// instructions) compare as their
/// non-empty lines: two hooks' contexts as two messages or one joined
/// message reach the model alike.
fn normalize(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["context", "continuation", "feedback", "instructions"] {
            let lines = |s: &str| -> Vec<Value> {
                s.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| json!(l))
                    .collect()
            };
            let new = match o.get(k) {
                Some(Value::String(s)) => lines(s),
                Some(Value::Array(a)) => a
                    .iter()
                    .flat_map(|x| lines(x.as_str().unwrap_or_default()))
                    .collect(),
                _ => continue,
            };
            o.insert(k.into(), Value::Array(new));
        }
    }
    v
}

/// At most 400 characters of `s`, for the report.
fn clip(s: &str) -> String {
    match s.char_indices().nth(400) {
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

/// Runs one case; a divergence report, or None when the agent's outcome
/// is reached.
fn check(index: usize, case: &Case) -> Option<String> {
    let spec = &case.spec;
    let name = spec["name"].as_str().unwrap();
    let event = spec["event"].as_str().unwrap();
    let scratch = Scratch::new(index);
    let answer = run_relay(&case.agent, spec, &scratch);
    let mut got = normalize(readers::read(&case.agent, event, &answer));
    let want = normalize(spec["expect"].clone());
    // `compare`: only these outcome keys are documented for the case.
    if let (Some(keys), Some(o)) = (spec["compare"].as_array(), got.as_object_mut()) {
        o.retain(|k, _| keys.iter().any(|x| x == k.as_str()));
    }
    // A listed addition (spec/dialects.md): hookhost's documented answer
    // where it deliberately differs, allowed only when it adds.
    let addition = spec["addition"]["expect"].clone();
    let mut problems = Vec::new();
    if got != want && (addition.is_null() || got != normalize(addition)) {
        problems.push(format!(
            "  expected (agent): {}\n  actual (relay):   {}",
            clip(&want.to_string()),
            clip(&got.to_string())
        ));
    }
    // Gemini reads stderr as the hook's text when stdout is empty, and
    // the agents show it: the relay writes there only a refusal's reason.
    if answer.code == -2 {
        problems.push("  the relay did not answer within 30 s".to_string());
    }
    if answer.code == 0 && !answer.stderr.trim().is_empty() && spec["stderr_ok"] != true {
        problems.push("  relay wrote on stderr with exit 0 (the agent may read it)".to_string());
    }
    if problems.is_empty() {
        return None;
    }
    Some(format!(
        "{name}  [{}/{}]\n{}\n  relay exit {}, stdout: {}, stderr: {}",
        case.agent,
        case.file,
        problems.join("\n"),
        answer.code,
        clip(answer.stdout.trim()),
        clip(answer.stderr.trim())
    ))
}

/// Runs every case on a few threads; the divergence reports, by case index.
fn run_all(cases: &[Case]) -> Vec<(usize, String)> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(8, |n| (n.get() * 4).max(8));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    if let Some(report) = check(i, case) {
                        failures.lock().unwrap().push((i, report));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    failures
}

/// Per agent: cases, how many reach the agent's outcome, how many diverge.
fn summary(cases: &[Case], failures: &[(usize, String)]) {
    let mut per_agent = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    for (i, c) in cases.iter().enumerate() {
        let e = per_agent.entry(c.agent.as_str()).or_default();
        e.0 += 1;
        if failures.iter().any(|(j, _)| *j == i) {
            e.1 += 1;
        }
    }
    for (agent, (total, bad)) in &per_agent {
        eprintln!(
            "{agent}: {total} cases, {} as the agent, {bad} diverge",
            total - bad
        );
    }
}

#[test]
fn ported_agent_hook_tests() {
    let filter = std::env::var("PORTED_FILTER").unwrap_or_default();
    let cases: Vec<Case> = load_cases()
        .into_iter()
        .filter(|c| c.spec["name"].as_str().unwrap().contains(&filter))
        .collect();
    let mut names = std::collections::HashSet::new();
    for c in &cases {
        let name = c.spec["name"].as_str().unwrap();
        assert!(names.insert(name.to_string()), "duplicate case name {name}");
    }
    let failures = run_all(&cases);
    for (_, report) in &failures {
        eprintln!("DIVERGES {report}\n");
    }
    summary(&cases, &failures);
    // A case marked `diverges` is a divergence hookhost still has, named
    // with why: it is reported above and counted, never called a pass, and
    // the mark must go once the case reaches the agent's outcome.
    let open = |i: &usize| cases[*i].spec["diverges"].is_string();
    let unknown: Vec<&str> = failures
        .iter()
        .filter(|(i, _)| !open(i))
        .map(|(i, _)| cases[*i].spec["name"].as_str().unwrap_or_default())
        .collect();
    let stale: Vec<&str> = (0..cases.len())
        .filter(|i| open(i) && !failures.iter().any(|(j, _)| j == i))
        .map(|i| cases[i].spec["name"].as_str().unwrap_or_default())
        .collect();
    eprintln!(
        "{} of {} ported cases diverge from their agent; {} of them are marked `diverges` (still open)",
        failures.len(),
        cases.len(),
        failures.len() - unknown.len()
    );
    assert!(unknown.is_empty(), "unmarked divergences: {unknown:?}");
    assert!(
        stale.is_empty(),
        "marked `diverges` but now as the agent: {stale:?}"
    );
}
