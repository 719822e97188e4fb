//! `hookhost conformance` passes a well-behaved hook and fails each kind of
//! misbehaving one, with the summary line last and exit status 1.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::{HOOKHOST, TEST_HOOK};

struct Run {
    code: Option<i32>,
    lines: Vec<String>,
}

fn conformance(hook_args: &[&str]) -> Run {
    let out = Command::new(HOOKHOST)
        .args(["conformance", "--timeout-ms", "1500", "--", &TEST_HOOK])
        .args(hook_args)
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        lines: String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect(),
    }
}

fn failed(run: &Run) -> Vec<&str> {
    run.lines
        .iter()
        .filter(|l| l.starts_with("FAIL "))
        .map(String::as_str)
        .collect()
}

#[test]
fn a_well_behaved_hook_passes_everything() {
    let run = conformance(&[]);
    assert_eq!(failed(&run), Vec::<&str>::new());
    let last = run.lines.last().unwrap();
    assert!(last.ends_with(" passed, 0 failed"), "{last}");
    assert!(
        run.lines
            .iter()
            .any(|l| l == "PASS before_tool: 1 MiB argument")
    );
    assert_eq!(run.code, Some(0));
}

#[test]
fn a_banner_on_stdout_fails_and_exits_1() {
    let run = conformance(&["--banner"]);
    assert_eq!(run.code, Some(1));
    let fails = failed(&run);
    assert_eq!(fails.len(), 1, "{fails:?}");
    assert!(
        fails[0].starts_with("FAIL only JSON-RPC on stdout:"),
        "{}",
        fails[0]
    );
    assert!(fails[0].contains("my hook v1.0 starting"));
    assert!(run.lines.last().unwrap().ends_with(" passed, 1 failed"));
}

#[test]
fn each_kind_of_misbehaviour_is_named() {
    let cases: [(&[&str], &str); 4] = [
        (&["--no-hello"], "FAIL hello:"),
        (
            &["--answer", r#"{"action":"respond"}"#],
            "FAIL before_tool: plain: action `respond` needs",
        ),
        (
            &["--answer", r#"{"action":"modify","call":{"tool":null}}"#],
            "FAIL before_tool: plain: its modify patch breaks the params",
        ),
        (&["--stall-stdin"], "FAIL exits within 2 s of stdin EOF"),
    ];
    for (args, want) in cases {
        let run = conformance(args);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert!(
            run.lines.iter().any(|l| l.starts_with(want)),
            "{args:?}: no line starting {want:?} in {:#?}",
            run.lines
        );
    }
}
