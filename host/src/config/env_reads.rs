//! Which environment variables a command hook reads that it will not get.
//!
//! A script written for an agent may read what that agent's process had
//! (an API key, a variable of its own shell). hookhost gives a command hook
//! only `PATH`, the user's identity and locale, what it names
//! (`inherit_env`, `env`) and its agent's variables (spec/dialects.md §3),
//! so `install --adopt` and `hookhost check` name what else it reads: in
//! its command (`$NAME`, `${NAME}`, `os.environ["NAME"]`,
//! `process.env.NAME`, `os.getenv("NAME")`) and, when the command names a
//! readable script file, in that script.
//!
//! This is a scan of text, not a parse: it errs towards naming a variable
//! (a `$NAME` in a comment counts) but leaves out what cannot be missing:
//! the shell's own variables, names the script assigns, and
//! `${NAME:-default}` reads that say what to do when it is unset.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::CommandConfig;
use super::command::expand_project;
use crate::dialect::Dialect;
use crate::dialect::spec::{FAMILIES, is_identity};

/// A variable a hook reads and will not get.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnmetEnv {
    /// The variable's name.
    pub name: String,
    /// Where it is read: the script file, or `None` for the command itself.
    pub script: Option<PathBuf>,
}

/// The largest script read for variables; a bigger file is no hook script.
const MAX_SCRIPT_BYTES: u64 = 1024 * 1024;

/// How a text reads the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Language {
    /// A shell script.
    Shell,
    /// A Python script.
    Python,
    /// A JavaScript or TypeScript script.
    Node,
    /// A command line: any of them (`python3 -c '...os.environ...'`).
    Any,
}

static SHELL: LazyLock<Regex> =
    LazyLock::new(|| re(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=+]?))"));
static ASSIGNED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)(?:^|[\s;&|(])(?:(?:export|local|readonly|declare(?:\s+-\w+)*)\s+)?([A-Za-z_][A-Za-z0-9_]*)=|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b|\bread\s+(?:-\w+\s+)*([A-Za-z_][A-Za-z0-9_]*)",
    )
});
static PYTHON: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"os\.(?:environ\s*\[\s*|environ\.get\(\s*|getenv\(\s*)["']([A-Za-z_][A-Za-z0-9_]*)["']"#)
});
static NODE: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([A-Za-z_][A-Za-z0-9_]*)["']\s*\])"#)
});

fn re(pattern: &str) -> Regex {
    // The patterns are constants, checked by the tests below.
    Regex::new(pattern).unwrap_or_else(|e| panic!("bad built-in pattern: {e}"))
}

/// Variables a shell sets itself, which a script never misses.
const SHELL_OWN: [&str; 22] = [
    "PWD",
    "OLDPWD",
    "IFS",
    "RANDOM",
    "LINENO",
    "SECONDS",
    "REPLY",
    "OPTARG",
    "OPTIND",
    "PPID",
    "UID",
    "EUID",
    "BASH",
    "BASH_SOURCE",
    "BASH_VERSION",
    "BASHPID",
    "FUNCNAME",
    "PIPESTATUS",
    "SHLVL",
    "HOSTNAME",
    "GROUPS",
    "EPOCHSECONDS",
];

/// The environment variables `text` reads, as `language` spells a read,
/// less those it can do without.
pub fn reads(text: &str, language: Language) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let shell = matches!(language, Language::Shell | Language::Any);
    if shell {
        for c in SHELL.captures_iter(text) {
            let defaulted = c.get(3).is_some_and(|m| !m.as_str().is_empty());
            if let Some(name) = c.get(1).or(c.get(2)).filter(|_| !defaulted) {
                out.insert(name.as_str().to_string());
            }
        }
        for c in ASSIGNED.captures_iter(text) {
            if let Some(name) = c.get(1).or(c.get(2)).or(c.get(3)) {
                out.remove(name.as_str());
            }
        }
        out.retain(|n| !SHELL_OWN.contains(&n.as_str()));
    }
    let patterns: &[&Regex] = match language {
        Language::Shell => &[],
        Language::Python => &[&PYTHON],
        Language::Node => &[&NODE],
        Language::Any => &[&PYTHON, &NODE],
    };
    for p in patterns {
        for c in p.captures_iter(text) {
            if let Some(name) = c.get(1).or(c.get(2)) {
                out.insert(name.as_str().to_string());
            }
        }
    }
    out
}

/// Whether a hook of `dialect` gets `name` whatever it names: `PATH`, an
/// identity or locale variable, or one its agent (or a family member of
/// it) sets.
pub fn passed(dialect: Dialect, name: &str) -> bool {
    let agent = |env: &[(&str, _)]| env.iter().any(|(k, _)| *k == name);
    name == "PATH"
        || is_identity(name)
        || agent(dialect.spec().env)
        || FAMILIES
            .iter()
            .any(|f| f.dialect == dialect && agent(f.env))
}

impl CommandConfig {
    /// The variables its command, and the script it names, read that it
    /// will not get (spec/dialects.md §3), run in folder `dir`.
    pub fn unmet_env(&self, dir: &Path) -> Vec<UnmetEnv> {
        let given = |n: &str| {
            passed(self.dialect, n)
                || self.env.contains_key(n)
                || self.inherit_env.iter().any(|i| i == n)
                || self.agent_env().iter().any(|(k, _)| *k == n)
        };
        let words = self.words();
        let mut out = Vec::new();
        let line = words.join(" ");
        for name in reads(&line, Language::Any)
            .into_iter()
            .filter(|n| !given(n))
        {
            out.push(UnmetEnv { name, script: None });
        }
        for path in words.iter().filter_map(|w| self.script(w, dir)) {
            let Some((text, language)) = script_text(&path) else {
                continue;
            };
            for name in reads(&text, language).into_iter().filter(|n| !given(n)) {
                let script = Some(path.clone());
                out.push(UnmetEnv { name, script });
            }
        }
        out
    }

    /// The words of its command line (or argv), quotes dropped.
    fn words(&self) -> Vec<String> {
        let argv = self.args.clone().unwrap_or_default();
        let command = self.command.iter().flat_map(|c| c.split_whitespace());
        command
            .map(str::to_string)
            .chain(argv)
            .map(|w| w.replace(['"', '\''], ""))
            .collect()
    }

    /// The script file `word` names, if it is one: its project and plugin
    /// variables filled in, `~/` read as `$HOME`, relative to `dir`.
    fn script(&self, word: &str, dir: &Path) -> Option<PathBuf> {
        let mut w = expand_project(word, &self.project_vars(), dir);
        for (k, v) in &self.env {
            w = w
                .replace(&format!("${{{k}}}"), v)
                .replace(&format!("${k}"), v);
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let path = match (w.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if w.contains('$') || w.starts_with('~') || !w.contains('/') => return None,
            _ => dir.join(&w),
        };
        let meta = std::fs::metadata(&path).ok()?;
        (meta.is_file() && meta.len() <= MAX_SCRIPT_BYTES).then_some(path)
    }
}

/// A script's text and how it reads the environment, by its name or its
/// `#!` line.
fn script_text(path: &Path) -> Option<(String, Language)> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let first = text.lines().next().unwrap_or_default();
    let language = match ext {
        "py" => Language::Python,
        "js" | "mjs" | "cjs" | "ts" => Language::Node,
        _ if first.starts_with("#!") && first.contains("python") => Language::Python,
        _ if first.starts_with("#!") && (first.contains("node") || first.contains("bun")) => {
            Language::Node
        }
        _ => Language::Shell,
    };
    Some((text, language))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn names(text: &str, language: Language) -> Vec<String> {
        reads(text, language).into_iter().collect()
    }

    #[test]
    fn each_language_spells_a_read_its_way() {
        let sh = "set -u\nTOKEN=x\necho \"$API_KEY ${REGION} ${OPT:-none} $TOKEN $1 $PWD\"\nfor f in a; do echo $f; done";
        assert_eq!(names(sh, Language::Shell), ["API_KEY", "REGION"]);
        let py = "import os\nk = os.environ[\"OPENAI_API_KEY\"]\nr = os.getenv('REGION')\ns = os.environ.get(\"SLACK\")\n# $NOT_SHELL";
        assert_eq!(
            names(py, Language::Python),
            ["OPENAI_API_KEY", "REGION", "SLACK"]
        );
        let js = "const k = process.env.GH_TOKEN; const t = `${notenv}`; process.env['X_Y']";
        assert_eq!(names(js, Language::Node), ["GH_TOKEN", "X_Y"]);
        assert_eq!(
            names(
                "python3 -c 'import os; os.environ[\"A\"]' $B",
                Language::Any
            ),
            ["A", "B"]
        );
    }

    #[test]
    fn identity_and_the_agents_variables_are_passed() {
        assert!(passed(Dialect::ClaudeCode, "HOME"));
        assert!(passed(Dialect::ClaudeCode, "LC_ALL"));
        assert!(passed(Dialect::ClaudeCode, "CLAUDE_PROJECT_DIR"));
        assert!(passed(Dialect::ClaudeCode, "QWEN_PROJECT_DIR"));
        assert!(passed(Dialect::GeminiCli, "GEMINI_PLANS_DIR"));
        assert!(!passed(Dialect::Codex, "CLAUDE_PROJECT_DIR"));
        assert!(!passed(Dialect::ClaudeCode, "ANTHROPIC_API_KEY"));
    }

    #[test]
    fn a_named_script_is_read_and_what_is_given_is_left_out() {
        let dir = std::env::temp_dir().join(format!("hookhost-env-reads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("hooks")).unwrap();
        std::fs::write(
            dir.join("hooks/guard.py"),
            "import os\nos.environ['SLACK_TOKEN']\nos.getenv('HOME')\nos.getenv('SHARED')",
        )
        .unwrap();
        let hook = CommandConfig {
            dialect: Dialect::ClaudeCode,
            command: Some("python3 \"$CLAUDE_PROJECT_DIR\"/hooks/guard.py --tag $TAG".into()),
            inherit_env: vec!["SHARED".into()],
            ..CommandConfig::default()
        };
        let unmet = hook.unmet_env(&dir);
        let script = Some(dir.join("hooks/guard.py"));
        assert_eq!(
            unmet,
            [
                UnmetEnv {
                    name: "TAG".into(),
                    script: None
                },
                UnmetEnv {
                    name: "SLACK_TOKEN".into(),
                    script
                },
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
