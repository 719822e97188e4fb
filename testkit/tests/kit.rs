//! The test hooks answer a hello: this test also makes cargo build them
//! before any package's tests run.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn the_test_hook_answers_hello_and_exits_on_eof() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hookhost-test-hook"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the test hook");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"hook.hello","params":{{"name":"t","version":1,"modes":["tool"]}}}}"#
    )
    .expect("write hello");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read answer");
    let answer: serde_json::Value = serde_json::from_str(&line).expect("JSON answer");
    assert_eq!(answer["id"], 1);
    assert!(answer.get("result").is_some(), "{answer}");
    drop(stdin);
    assert!(child.wait().expect("wait").success());
    assert!(std::path::Path::new(env!("CARGO_BIN_EXE_hookhost-fault-hook")).exists());
}
