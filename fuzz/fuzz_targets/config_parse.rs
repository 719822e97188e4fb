//! Config loading, TOML and PicoClaw JSON.
//!
//! Proves, for any UTF-8 text read either way: `Config::parse` returns a
//! config or a `ConfigError` naming the file, never panics (CEL and regex
//! filters are compiled at load, so their parsers are fuzzed too); and a
//! config that loads is usable: every accessor the host calls works, and
//! every deadline it implies (`Instant::now() + timeout`, as the host
//! computes them per call) is representable, so no loaded config can
//! make a later call panic.
//!
//! Input: the config text.
#![no_main]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hookhost::Config;
use hookhost_protocol::Stage;
use libfuzzer_sys::fuzz_target;

fn deadline(what: &str, d: Duration) {
    assert!(
        Instant::now().checked_add(d).is_some(),
        "{what} of {d:?} overflows a deadline"
    );
}

fn usable(c: &Config) {
    let d = &c.defaults;
    for (what, ms) in [
        ("observer_timeout_ms", d.observer_timeout_ms),
        ("hello_timeout_ms", d.hello_timeout_ms),
        ("shutdown_grace_ms", d.shutdown_grace_ms),
        ("restart_window_ms", d.restart_window_ms),
        ("chain_budget_ms", d.chain_budget_ms),
        ("breaker_window_ms", d.breaker_window_ms),
        ("breaker_cooldown_ms", d.breaker_cooldown_ms),
    ] {
        deadline(what, Duration::from_millis(ms));
    }
    for stage in Stage::ALL {
        deadline("stage timeout", d.stage_timeout(stage));
        for p in c.processes.values() {
            let _ = p.policy(stage);
            deadline("hook timeout", p.timeout(stage, d));
        }
    }
    for p in c.processes.values() {
        assert_eq!(
            p.observe_patterns().len(),
            p.observe.len(),
            "observe checked at load"
        );
        let _ = (p.spawn_key(), p.breaker(), c.hook_dir(p));
    }
    for b in c.builtins.values() {
        let _ = b.breaker();
    }
    for cmd in c.commands.values() {
        let _ = (
            cmd.policy(hookhost::protocol::Stage::ApproveTool),
            cmd.stages(),
            c.command_dir(cmd),
        );
        deadline("command timeout", cmd.timeout());
    }
    let _ = c.audit_store();
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for (is_json, name) in [(false, "hooks.toml"), (true, "config.json")] {
        match Config::parse(text, is_json, Path::new(name), PathBuf::from("/cfg")) {
            Ok(c) => usable(&c),
            Err(e) => assert!(e.to_string().starts_with(name), "{e}"),
        }
    }
});
