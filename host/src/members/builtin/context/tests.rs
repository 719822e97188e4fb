//! The context builtins against real folders and a real git. The doc
//! comments name the docker-agent test (pkg/hooks/builtins/) each case is
//! written from.

use std::path::Path;
use std::process::Command;

use hookhost_testkit::scratch;
use serde_json::{Value, json};

use super::super::BuiltinRegistry;
use super::*;

async fn call(name: &str, config: Value, event: &str, cwd: Option<&Path>) -> Value {
    let hook = BuiltinRegistry::with_defaults()
        .build(name, &config)
        .expect("valid config");
    let mut params = json!({"event": event, "payload": {}});
    if let Some(cwd) = cwd {
        params["meta"] = json!({"cwd": cwd});
    }
    hook.call(Stage::Lifecycle, &params).await.expect("answers")
}

fn context(answer: &Value) -> &str {
    answer["additional_context"].as_str().unwrap_or_default()
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository with `n` commits of `file.txt` on branch `main`.
fn repo(n: usize) -> std::path::PathBuf {
    let dir = scratch();
    git(&dir, &["init", "-q", "-b", "main"]);
    for i in 0..n {
        std::fs::write(dir.join("file.txt"), format!("line {i}\n")).unwrap();
        git(&dir, &["add", "file.txt"]);
        git(&dir, &["commit", "-q", "-m", &format!("commit number {i}")]);
    }
    dir
}

/// From TestAddDateReturnsTodaysDate: today's date, at turn_start only.
#[tokio::test]
async fn add_date_gives_todays_date_at_turn_start() {
    let answer = call("add_date", Value::Null, "turn_start", None).await;
    assert_eq!(
        context(&answer),
        format!("Today's date: {}", sources::local_date_for_tests())
    );
    let other = call("add_date", Value::Null, "session_start", None).await;
    assert_eq!(other, json!({"action": "continue"}), "not its event");
}

/// From TestAddEnvironmentInfoUsesInputCwd and
/// TestAddEnvironmentInfoNoCwdIsNoop: the call's cwd, never the host's.
#[tokio::test]
async fn add_environment_info_reads_the_calls_cwd_or_nothing() {
    let dir = repo(0);
    let answer = call(
        "add_environment_info",
        Value::Null,
        "session_start",
        Some(&dir),
    )
    .await;
    let text = context(&answer);
    assert!(
        text.contains(&format!("Working directory: {}", dir.display())),
        "{text}"
    );
    assert!(text.contains("Is directory a git repo: yes"), "{text}");
    let none = call("add_environment_info", Value::Null, "session_start", None).await;
    assert_eq!(none, json!({"action": "continue"}));
}

/// From TestAddPromptFilesReadsFromCwd, TestAddPromptFilesListsNestedFiles
/// and TestAddPromptFilesDepthArgIsNotAFilename: the nearest file in full
/// with its path; with `--depth=1` the nested copy is listed, not read.
#[tokio::test]
async fn add_prompt_files_reads_the_nearest_and_lists_nested_ones() {
    let dir = scratch();
    std::fs::write(dir.join("PROMPT.md"), "root rules").unwrap();
    std::fs::create_dir(dir.join("service")).unwrap();
    std::fs::write(dir.join("service/PROMPT.md"), "service rules").unwrap();
    let args = json!({"args": ["--depth=1", "PROMPT.md"]});
    let answer = call("add_prompt_files", args, "turn_start", Some(&dir)).await;
    let text = context(&answer);
    assert!(
        text.contains(&format!(
            "Instructions from: {}\nroot rules",
            dir.join("PROMPT.md").display()
        )),
        "{text}"
    );
    assert!(text.contains("service/PROMPT.md"), "{text}");
    assert!(
        !text.contains("service rules"),
        "nested files are listed, not read: {text}"
    );
    // From the nested folder, the parent's copy is not nearer than its own.
    let nested = call(
        "add_prompt_files",
        json!({"files": ["PROMPT.md"]}),
        "turn_start",
        Some(&dir.join("service")),
    )
    .await;
    assert!(context(&nested).contains("service rules"), "{nested}");
    assert!(!context(&nested).contains("root rules"), "{nested}");
}

/// Issue 32: a repository's `AGENTS.md` that is a symlink to a file out of
/// the project (a private key) put that file in the model's context. A
/// prompt file whose real path is outside the project is not read; a link
/// inside the project still is.
#[tokio::test]
async fn add_prompt_files_does_not_follow_a_link_out_of_the_project() {
    let outside = scratch();
    std::fs::write(outside.join("id_ed25519"), "PRIVATE KEY MATERIAL").unwrap();
    let project = scratch();
    std::fs::create_dir(project.join(".git")).unwrap();
    std::fs::create_dir(project.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.join("id_ed25519"), project.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink("../../x/../AGENTS.md", project.join("sub/ESCAPE.md")).unwrap();
    std::fs::write(project.join("sub/real.md"), "inside rules").unwrap();
    std::os::unix::fs::symlink("real.md", project.join("sub/CLAUDE.md")).unwrap();
    for cwd in [project.clone(), project.join("sub")] {
        let args = json!({"files": ["AGENTS.md", "ESCAPE.md", "CLAUDE.md"]});
        let answer = call("add_prompt_files", args, "turn_start", Some(&cwd)).await;
        let text = context(&answer);
        assert!(!text.contains("PRIVATE KEY"), "{text}");
    }
    let args = json!({"files": ["CLAUDE.md"]});
    let answer = call(
        "add_prompt_files",
        args,
        "turn_start",
        Some(&project.join("sub")),
    )
    .await;
    assert!(context(&answer).contains("inside rules"), "{answer}");
}

/// From TestAddPromptFilesMissingFileIsTolerated and
/// TestAddPromptFilesUnusableDepthIsIgnored: a missing file is skipped, an
/// unusable depth means no listing; neither fails the turn.
#[tokio::test]
async fn add_prompt_files_tolerates_missing_files_and_bad_depths() {
    let dir = scratch();
    std::fs::write(dir.join("OK.md"), "still here").unwrap();
    for depth in ["--depth=-1", "--depth=deep", "--depth="] {
        let args = json!({"args": [depth, "MISSING.md", "OK.md"]});
        let answer = call("add_prompt_files", args, "turn_start", Some(&dir)).await;
        assert!(context(&answer).contains("still here"), "{depth}: {answer}");
    }
    let none = call(
        "add_prompt_files",
        json!({"files": ["MISSING.md"]}),
        "turn_start",
        Some(&dir),
    )
    .await;
    assert_eq!(none, json!({"action": "continue"}));
}

/// Bounded: a prompt file is read up to MAX_FILE bytes, and a file outside
/// the working directory's line cannot be named.
#[tokio::test]
async fn add_prompt_files_is_bounded_to_what_it_names() {
    let dir = scratch();
    std::fs::write(dir.join("BIG.md"), "x".repeat(MAX_FILE * 3)).unwrap();
    let answer = call(
        "add_prompt_files",
        json!({"files": ["BIG.md"]}),
        "turn_start",
        Some(&dir),
    )
    .await;
    let text = context(&answer);
    assert!(text.len() < MAX_FILE + 200, "{}", text.len());
    assert!(
        text.ends_with(&format!("[… cut at {MAX_FILE} bytes]")),
        "{}",
        &text[text.len() - 40..]
    );
    for bad in ["/etc/passwd", "../secret", ""] {
        let err = BuiltinRegistry::with_defaults()
            .build("add_prompt_files", &json!({"files": [bad]}))
            .err()
            .expect("refused");
        assert!(err.to_string().contains("relative path"), "{err}");
    }
}

/// Issue 32: the git builtins ran the repository's own commands inside
/// the daemon (its `filter.*.clean`, `diff.external`). A repository whose
/// `.git/config` names a command for every hook git has (filters,
/// external diff, textconv, fsmonitor, pager, signature checks) and whose
/// `.gitattributes` selects them: none of them runs.
#[tokio::test]
async fn git_builtins_run_none_of_the_repositorys_commands() {
    let dir = repo(1);
    std::fs::write(dir.join(".gitattributes"), "* filter=x diff=y\n").unwrap();
    git(&dir, &["add", ".gitattributes"]);
    git(&dir, &["commit", "-q", "-m", "attributes"]);
    let marker = dir.join("marker");
    let touch = |what: &str| format!("touch '{}.{what}'; cat", marker.display());
    for (key, value) in [
        ("filter.x.clean", touch("clean")),
        ("filter.x.smudge", touch("smudge")),
        ("filter.x.process", touch("process")),
        ("filter.x.required", "true".to_string()),
        ("diff.external", touch("external")),
        ("diff.y.command", touch("command")),
        ("diff.y.textconv", touch("textconv")),
        ("core.fsmonitor", touch("fsmonitor")),
        ("core.pager", touch("pager")),
        ("log.showSignature", "true".to_string()),
        ("gpg.program", touch("gpg")),
    ] {
        git(&dir, &["config", key, &value]);
    }
    std::fs::write(dir.join("file.txt"), "changed\n").unwrap();
    std::fs::write(dir.join("new.txt"), "new\n").unwrap();
    let status = call("add_git_status", Value::Null, "turn_start", Some(&dir)).await;
    assert!(context(&status).contains("M file.txt"), "{status}");
    let full = json!({"args": ["--full"]});
    let diff = call("add_git_diff", full, "turn_start", Some(&dir)).await;
    assert!(context(&diff).contains("+changed"), "{diff}");
    call("add_git_diff", Value::Null, "turn_start", Some(&dir)).await;
    call(
        "add_recent_commits",
        json!({"args": ["2"]}),
        "turn_start",
        Some(&dir),
    )
    .await;
    let ran: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("marker"))
        .collect();
    assert!(ran.is_empty(), "the repository's commands ran: {ran:?}");
}

/// From the builtins' documented commands (builtins.go): git status with
/// the branch, the last N commits, the diff's stat or all of it; nothing
/// outside a repository.
#[tokio::test]
async fn git_builtins_read_the_repository_of_the_call() {
    let dir = repo(3);
    std::fs::write(dir.join("file.txt"), "changed\n").unwrap();
    let status = call("add_git_status", Value::Null, "turn_start", Some(&dir)).await;
    assert_eq!(context(&status), "Git status:\n## main\n M file.txt");
    let log = call(
        "add_recent_commits",
        json!({"args": ["2"]}),
        "session_start",
        Some(&dir),
    )
    .await;
    let lines: Vec<&str> = context(&log).lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[1].ends_with("commit number 2") && lines[2].ends_with("commit number 1"));
    let stat = call("add_git_diff", Value::Null, "turn_start", Some(&dir)).await;
    assert!(context(&stat).contains("file.txt | 2 +-"), "{stat}");
    let full = call(
        "add_git_diff",
        json!({"args": ["--full"]}),
        "turn_start",
        Some(&dir),
    )
    .await;
    assert!(context(&full).contains("+changed"), "{full}");
    let plain = scratch();
    let outside = call("add_git_status", Value::Null, "turn_start", Some(&plain)).await;
    assert_eq!(outside, json!({"action": "continue"}), "not a repository");
}

/// A diff larger than the context cap is cut, and git is stopped rather
/// than read to the end.
#[tokio::test]
async fn a_huge_diff_is_cut_at_the_cap() {
    let dir = repo(1);
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("file.txt"), big).unwrap();
    let full = call(
        "add_git_diff",
        json!({"full": true}),
        "turn_start",
        Some(&dir),
    )
    .await;
    let text = context(&full);
    assert!(text.len() <= MAX_CONTEXT + 40, "{}", text.len());
    assert!(text.ends_with(&format!("[… cut at {MAX_CONTEXT} bytes]")));
}

/// The directory's own entries, sorted, folders marked; the user and host.
#[tokio::test]
async fn listing_and_user_info() {
    let dir = scratch();
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(dir.join("b.txt"), "").unwrap();
    std::fs::write(dir.join("a.txt"), "").unwrap();
    let answer = call(
        "add_directory_listing",
        Value::Null,
        "session_start",
        Some(&dir),
    )
    .await;
    assert_eq!(
        context(&answer),
        format!("Files in {}:\na.txt\nb.txt\nsrc/", dir.display())
    );
    let user = call("add_user_info", Value::Null, "session_start", None).await;
    assert!(context(&user).starts_with("User: "), "{user}");
    assert!(context(&user).contains("\nHost: "), "{user}");
}

/// Config mistakes name the key: another builtin's key, an event that
/// takes no context, args a builtin does not take.
#[test]
fn config_mistakes_are_named() {
    let registry = BuiltinRegistry::with_defaults();
    let cases = [
        (
            "add_date",
            json!({"count": 3}),
            "`config.count` is not read by add_date",
        ),
        (
            "add_git_status",
            json!({"events": ["stop"]}),
            "`config.events`: stop takes no context",
        ),
        (
            "add_user_info",
            json!({"args": ["x"]}),
            "`config.args`: add_user_info takes none",
        ),
        (
            "add_recent_commits",
            json!({"count": 0}),
            "`config.count` must be from 1 to 200",
        ),
        (
            "add_git_diff",
            json!({"args": ["--color"]}),
            "add_git_diff: unknown `--color`",
        ),
        ("add_prompt_files", json!({}), "needs at least one file"),
    ];
    for (name, config, message) in cases {
        let err = registry.build(name, &config).err().expect("refused");
        assert!(err.to_string().contains(message), "{name}: {err}");
    }
}
