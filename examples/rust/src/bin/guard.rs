//! guard: denies dangerous shell commands at before_tool.
//!
//! Rules, checked in this order (the first that matches any simple command
//! decides): `sudo`, `rm-recursive-force`, `mkfs`, `dd`, `fork-bomb`. The
//! reason names the rule and quotes the command, so the model learns what
//! was refused and why.

use hookhost_examples::{shell_command, simple_commands};
use hookhost_sdk::params::ToolCall;
use hookhost_sdk::{Hook, Stage, ToolVerdict};

/// A rule: its name in the reason, and whether it matches a command line.
type Rule = (&'static str, fn(&str) -> bool);

const RULES: [Rule; 5] = [
    ("sudo", |line| any_simple(line, |w| w[0] == "sudo")),
    ("rm-recursive-force", |line| {
        any_simple(line, rm_recursive_force)
    }),
    ("mkfs", |line| {
        any_simple(line, |w| w[0] == "mkfs" || w[0].starts_with("mkfs."))
    }),
    ("dd", |line| {
        any_simple(line, |w| {
            w[0] == "dd" && w.iter().any(|x| x.starts_with("if="))
        })
    }),
    ("fork-bomb", |line| {
        let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        squeezed.contains(":(){:|:&};:")
    }),
];

/// Whether some simple command of `line` (never empty) satisfies `test`.
fn any_simple(line: &str, test: impl Fn(&[&str]) -> bool) -> bool {
    simple_commands(line).iter().any(|words| test(words))
}

/// `rm` with both a recursive and a force option, in any spelling or order.
fn rm_recursive_force(words: &[&str]) -> bool {
    if words[0] != "rm" {
        return false;
    }
    let (mut recursive, mut force) = (false, false);
    for w in words[1..].iter().filter(|w| w.starts_with('-')) {
        if let Some(long) = w.strip_prefix("--") {
            recursive |= long == "recursive";
            force |= long == "force";
        } else {
            recursive |= w.contains(['r', 'R']);
            force |= w.contains('f');
        }
    }
    recursive && force
}

/// The rule that denies `line`, if any.
fn verdict(line: &str) -> Option<&'static str> {
    RULES
        .iter()
        .find(|(_, hit)| hit(line))
        .map(|(name, _)| *name)
}

struct Guard;

impl Hook for Guard {
    fn intercepts(&self) -> Vec<Stage> {
        vec![Stage::BeforeTool]
    }

    fn name(&self) -> Option<String> {
        Some("guard".into())
    }

    async fn before_tool(&self, call: ToolCall) -> ToolVerdict {
        let Some(line) = shell_command(&call) else {
            return ToolVerdict::Continue;
        };
        match verdict(line) {
            Some(rule) => {
                let reason = format!("guard: rule `{rule}` denies this command: {line}");
                // Plain println! on purpose: while serving, the SDK points
                // fd 1 at stderr, so this lands in the host's log of the
                // hook's stderr and cannot corrupt the wire.
                println!("{reason}");
                ToolVerdict::deny(reason)
            }
            None => ToolVerdict::Continue,
        }
    }
}

fn main() -> std::io::Result<()> {
    hookhost_sdk::run(Guard)
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn rules_match_as_documented() {
        assert_eq!(verdict("sudo rm -rf /"), Some("sudo"));
        assert_eq!(verdict("rm -r -f x"), Some("rm-recursive-force"));
        assert_eq!(verdict("rm --recursive -f x"), Some("rm-recursive-force"));
        assert_eq!(verdict("rm -r x"), None);
        assert_eq!(verdict("rm -- -f"), None);
        assert_eq!(verdict("mkfs /dev/x"), Some("mkfs"));
        assert_eq!(verdict("dd of=/dev/x"), None);
        assert_eq!(verdict(":(){ :|:& };:"), Some("fork-bomb"));
    }
}
