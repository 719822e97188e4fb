//! `hookhost conformance` passes a well-behaved hook, passes PicoClaw's
//! own hooks at the required level with warnings for what only another
//! host would send them, and fails each kind of misbehaving hook for its
//! own reason, with the summary line last and exit status 1.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::{HOOKHOST, TEST_HOOK};

struct Run {
    code: Option<i32>,
    lines: Vec<String>,
}

fn conformance(hook_args: &[&str]) -> Run {
    let hook: &str = &TEST_HOOK;
    let mut argv = vec![hook];
    argv.extend_from_slice(hook_args);
    conformance_of(&[], &argv)
}

/// `hookhost conformance FLAGS -- ARGV`, run from the repository root.
fn conformance_of(flags: &[&str], argv: &[&str]) -> Run {
    let out = Command::new(HOOKHOST)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["conformance", "--timeout-ms", "1500"])
        .args(flags)
        .arg("--")
        .args(argv)
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

fn with_status<'a>(run: &'a Run, status: &str) -> Vec<&'a str> {
    run.lines
        .iter()
        .filter(|l| l.starts_with(status))
        .map(String::as_str)
        .collect()
}

fn failed(run: &Run) -> Vec<&str> {
    with_status(run, "FAIL ")
}

#[test]
fn a_well_behaved_hook_passes_everything() {
    let run = conformance(&[]);
    assert_eq!(failed(&run), Vec::<&str>::new());
    let last = run.lines.last().unwrap();
    assert!(last.ends_with(" passed, 0 warnings, 0 failed"), "{last}");
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
    assert!(
        run.lines
            .last()
            .unwrap()
            .ends_with(" passed, 0 warnings, 1 failed")
    );
}

/// Each broken hook fails for its own reason, and only for it: every FAIL
/// line names that reason, so one fault does not read as many.
#[test]
fn each_kind_of_misbehaviour_fails_for_its_own_reason() {
    // The hook's flags, the line one failure starts with, and the reasons
    // every failure must give (an illegal answer is illegal at each stage).
    let cases: [(&[&str], &str, &[&str]); 4] = [
        (&["--no-hello"], "FAIL hello:", &["hello"]),
        (
            &["--answer", r#"{"action":"respond"}"#],
            "FAIL before_tool: plain: action `respond` needs",
            &[
                "action `respond` needs",
                "is not allowed at",
                "missing field `approved`",
            ],
        ),
        (
            &["--answer", r#"{"action":"modify","call":{"tool":null}}"#],
            "FAIL before_tool: plain: its modify patch breaks the params",
            &[
                "its modify patch breaks the params",
                "is not allowed at",
                "missing field `approved`",
            ],
        ),
        (
            &["--ignore-eof"],
            "FAIL exits within 2 s of stdin EOF",
            &["stdin EOF"],
        ),
    ];
    for (args, first, reasons) in cases {
        let run = conformance(args);
        assert_eq!(run.code, Some(1), "{args:?}");
        let fails = failed(&run);
        assert!(
            fails.iter().any(|l| l.starts_with(first)),
            "{args:?}: no line starting {first:?} in {:#?}",
            run.lines
        );
        for line in &fails {
            assert!(
                reasons.iter().any(|r| line.contains(r)),
                "{args:?}: a failure for another reason: {line}"
            );
        }
    }
}

/// A hook that stops reading its stdin is restarted after each check
/// until it has gone mute three times in a row; the rest is skipped, so
/// the run stays short, and the report does not conform.
#[test]
fn a_mute_hook_has_the_rest_skipped() {
    let run = conformance(&["--stall-stdin"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.lines.iter().any(|l| l.starts_with("note: ")
            && l.contains("checks not run: the hook went mute in 3 checks in a row")),
        "{:#?}",
        run.lines
    );
    assert!(
        run.lines
            .iter()
            .any(|l| l.starts_with("FAIL exits within 2 s of stdin EOF"))
    );
}

/// PicoClaw's own example hook, pasted unchanged from its README: it
/// declares nothing, answers -32000 for an unknown method and converts
/// ids with `int()`. It works under hookhost, so it passes the required
/// level; the string ids it cannot echo and the batch it cannot read are
/// warnings, each with the process restarted after it.
#[test]
fn picoclaws_example_hook_passes_the_required_level_with_warnings() {
    let run = conformance_of(
        &[],
        &[
            "python3",
            "examples/picoclaw_compat/picoclaw_review_gate.py",
        ],
    );
    assert_eq!(failed(&run), Vec::<&str>::new());
    assert_eq!(run.code, Some(0));
    let warns = with_status(&run, "WARN ");
    assert!(
        warns
            .iter()
            .any(|w| w.starts_with("WARN string ids echoed exactly:")
                && w.contains("invalid literal for int()")
                && w.ends_with("[the hook was restarted after this check]")),
        "{warns:#?}"
    );
    assert!(
        warns
            .iter()
            .any(|w| w
                .starts_with("WARN unknown method answered -32601: answered error code -32000"))
    );
    // PicoClaw's five stages, not hookhost's lifecycle, which it never had.
    assert!(run.lines.iter().any(|l| l == "PASS approve_tool: plain"));
    assert!(
        !run.lines.iter().any(|l| l.contains("lifecycle")),
        "{:#?}",
        run.lines
    );
    // Every check after the crash reports its own result.
    assert!(
        run.lines
            .iter()
            .any(|l| l == "PASS $/cancel_request tolerated")
    );
}

/// A hook answering as PicoClaw's Go test helper does (integer ids, a
/// `json.loads` that throws on a bad line) passes likewise; `--strict`
/// turns its warnings into exit status 1.
#[test]
fn a_hook_like_picoclaws_go_test_helper_passes_and_strict_fails_it() {
    let argv = ["python3", "examples/picoclaw_compat/ipc_helper.py"];
    let run = conformance_of(&[], &argv);
    assert_eq!(failed(&run), Vec::<&str>::new());
    assert_eq!(run.code, Some(0));
    let warns = with_status(&run, "WARN ");
    let names: Vec<&str> = warns.iter().map(|w| w.split(':').next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "WARN string ids echoed exactly",
            "WARN malformed lines do not kill it",
            "WARN a batch does not kill it"
        ]
    );
    let strict = conformance_of(&["--strict"], &argv);
    assert_eq!(strict.code, Some(1));
}

/// `--stage` asks a hook that declares nothing for lifecycle too, and a
/// hook that does not offer it fails there; `--json` carries the levels.
#[test]
fn stage_flag_and_json_report() {
    let argv = ["python3", "examples/picoclaw_compat/ipc_helper.py"];
    let run = conformance_of(&["--stage", "before_tool,lifecycle", "--json"], &argv);
    assert_eq!(run.code, Some(0), "{:#?}", run.lines);
    let report: serde_json::Value = serde_json::from_str(&run.lines[0]).unwrap();
    assert_eq!(report["conforms"], true);
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"before_tool: plain"));
    assert!(!names.iter().any(|n| n.starts_with("after_tool")));
    // It answers -32601 at lifecycle: not offered, a note.
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("lifecycle: not offered")
    );
    let warn = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "string ids echoed exactly")
        .unwrap();
    assert_eq!(warn["level"], "robustness");
    assert_eq!(warn["status"], "warn");
    assert_eq!(warn["restarted"], true);
    assert!(!warn["advice"].as_str().unwrap().is_empty());
    assert_eq!(report["restarted_after"].as_array().unwrap().len(), 3);
}
