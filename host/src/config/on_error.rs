//! `on_error`: what a hook's failure decides, in one vocabulary for every
//! kind of hook (process, remote, builtin, command, webhook, prompt).
//!
//! Process hooks and remotes used to say `allow` / `deny` and command
//! hooks `warn` / `ignore` / `block`; both spellings stay, so no config
//! breaks, but they are one type, read by one deserializer and mapped
//! onto the chain's [`OnError`] in one place, with the default rule
//! (which stages fail closed when nothing is configured) stated once in
//! [`FailurePolicy::resolve`].

use std::fmt;

use hookhost_protocol::{OnError, Stage};
use serde::de::{self, Deserialize, Deserializer, Visitor};

/// What a failure of a hook (a crash, a timeout, an error or unreadable
/// answer, an `if` that fails to evaluate, an open breaker) decides, as
/// configured by `on_error`. Per hook, because a security guard must fail
/// closed while a logger must not take the agent down with it.
///
/// Accepted spellings: `block` (or `deny`), `warn` (or `allow`) and
/// `ignore`; anything else is a config error naming them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Refuse: deny the tool, refuse approval, block the lifecycle event
    /// or abort the turn, as the stage allows (the chain's `deny`). Also
    /// spelled `deny`.
    Block,
    /// Go on as if the hook had answered `continue`, and log a warning
    /// (the chain's `allow`). Also spelled `allow`.
    Warn,
    /// Go on as `warn` does, but log each failed call at debug level
    /// only: for a hook whose failures are expected and not worth a
    /// warning. It quiets that line and nothing else: a hook that cannot
    /// start is still reported, an opened breaker is still a warning, and
    /// a command hook that could not be spawned still warns (the guard
    /// never ran, which is never a silent allow).
    Ignore,
}

/// Every accepted word and what it means, canonical spellings first.
const WORDS: [(&str, FailurePolicy); 5] = [
    ("block", FailurePolicy::Block),
    ("warn", FailurePolicy::Warn),
    ("ignore", FailurePolicy::Ignore),
    ("deny", FailurePolicy::Block),
    ("allow", FailurePolicy::Warn),
];

/// The accepted words, as an error message lists them.
const EXPECTED: &str =
    "one of `block`, `warn`, `ignore` (or `deny` for `block`, `allow` for `warn`)";

impl FailurePolicy {
    /// The policy a word names, aliases included; `None` for any other
    /// word (matched exactly, as every config enum is).
    pub fn parse(word: &str) -> Option<FailurePolicy> {
        WORDS.iter().find(|(w, _)| *w == word).map(|(_, p)| *p)
    }

    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Block => "block",
            FailurePolicy::Warn => "warn",
            FailurePolicy::Ignore => "ignore",
        }
    }

    /// What the chain does with the failure: `block` denies, `warn` and
    /// `ignore` allow (they differ only in how loudly it is logged). The
    /// one place the config's words meet the chain's two policies.
    pub fn policy(self) -> OnError {
        match self {
            FailurePolicy::Block => OnError::Deny,
            FailurePolicy::Warn | FailurePolicy::Ignore => OnError::Allow,
        }
    }

    /// Whether a failure the chain lets pass is logged only at debug level.
    pub fn is_quiet(self) -> bool {
        self == FailurePolicy::Ignore
    }

    /// The chain policy of a hook configured with `on_error` (or not) at
    /// `stage`: what it says, else the stage's default, which fails closed
    /// only at approve_tool (an approver that cannot answer has not
    /// approved; [`OnError::default_for`]). Rules of one kind on top of
    /// this (a docker-agent guard that refuses whatever `on_error` says, a
    /// prompt hook's `block` default) are that kind's.
    pub fn resolve(on_error: Option<FailurePolicy>, stage: Stage) -> OnError {
        on_error.map_or(OnError::default_for(stage), FailurePolicy::policy)
    }
}

/// The chain's policy as a config word: `allow` is `warn`, `deny` is
/// `block`, as the aliases say.
impl From<OnError> for FailurePolicy {
    fn from(policy: OnError) -> FailurePolicy {
        match policy {
            OnError::Allow => FailurePolicy::Warn,
            OnError::Deny => FailurePolicy::Block,
        }
    }
}

impl fmt::Display for FailurePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FailurePolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Words)
    }
}

/// Reads a word of [`WORDS`]; an unknown one is refused in serde's words
/// (`unknown variant`), naming the accepted ones.
struct Words;

impl Visitor<'_> for Words {
    type Value = FailurePolicy;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_str<E: de::Error>(self, word: &str) -> Result<FailurePolicy, E> {
        FailurePolicy::parse(word)
            .ok_or_else(|| E::custom(format!("unknown variant `{word}`, expected {EXPECTED}")))
    }
}

/// The name [`FailurePolicy`] had when only command hooks, webhooks and
/// prompt hooks used these words; the same type, kept so that code
/// written against it still builds.
pub type CommandOnError = FailurePolicy;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{
        BuiltinConfig, CommandConfig, ProcessConfig, PromptConfig, RemoteConfig, WebhookConfig,
    };

    /// What one kind's section made of `on_error`: the value kept and the
    /// chain policy its failure at before_tool gets.
    type Read = Result<(Option<FailurePolicy>, OnError), String>;

    /// Reads one kind's section with the given `on_error` line.
    type Reader = fn(&str) -> Read;

    fn process(on_error: &str) -> Read {
        let text = format!("command = [\"x\"]\n{on_error}");
        let c: ProcessConfig = toml::from_str(&text).map_err(|e| e.to_string())?;
        Ok((c.on_error, c.policy(Stage::BeforeTool)))
    }

    fn remote(on_error: &str) -> Read {
        let text = format!("url = \"ws://x\"\n{on_error}");
        let c: RemoteConfig = toml::from_str(&text).map_err(|e| e.to_string())?;
        Ok((
            c.on_error,
            FailurePolicy::resolve(c.on_error, Stage::BeforeTool),
        ))
    }

    fn builtin(on_error: &str) -> Read {
        let c: BuiltinConfig = toml::from_str(on_error).map_err(|e| e.to_string())?;
        Ok((
            c.on_error,
            FailurePolicy::resolve(c.on_error, Stage::BeforeTool),
        ))
    }

    fn command(on_error: &str) -> Read {
        let text = format!("command = \"x\"\nevents = [\"stop\"]\n{on_error}");
        let c: CommandConfig = toml::from_str(&text).map_err(|e| e.to_string())?;
        Ok((c.on_error, c.policy(Stage::BeforeTool)))
    }

    fn webhook(on_error: &str) -> Read {
        let text = format!("url = \"http://x\"\nevents = [\"PreToolUse\"]\n{on_error}");
        let c: WebhookConfig = toml::from_str(&text).map_err(|e| e.to_string())?;
        Ok((c.on_error, c.command().policy(Stage::BeforeTool)))
    }

    fn prompt(on_error: &str) -> Read {
        let text = format!(
            "provider = \"openai\"\nmodel = \"m\"\nprompt = \"p\"\nevents = [\"PreToolUse\"]\n{on_error}"
        );
        let c: PromptConfig = toml::from_str(&text).map_err(|e| e.to_string())?;
        Ok((c.on_error, c.command().policy(Stage::BeforeTool)))
    }

    const KINDS: [(&str, Reader); 6] = [
        ("process", process),
        ("remote", remote),
        ("builtin", builtin),
        ("command", command),
        ("webhook", webhook),
        ("prompt", prompt),
    ];

    /// Every kind of hook reads every spelling, and an alias means what
    /// its word means: `deny` is `block`, `allow` is `warn`. Before one
    /// vocabulary, `warn`, `ignore` and `block` were config errors on a
    /// process hook, a remote and a builtin, and `deny` and `allow` on a
    /// command hook, a webhook and a prompt hook.
    #[test]
    fn every_kind_accepts_every_spelling_and_aliases_mean_the_same() {
        let spellings = [
            ("block", FailurePolicy::Block, OnError::Deny),
            ("deny", FailurePolicy::Block, OnError::Deny),
            ("warn", FailurePolicy::Warn, OnError::Allow),
            ("allow", FailurePolicy::Warn, OnError::Allow),
            ("ignore", FailurePolicy::Ignore, OnError::Allow),
        ];
        for (kind, read) in KINDS {
            for (word, policy, chain) in spellings {
                let got = read(&format!("on_error = \"{word}\"\n"));
                assert_eq!(got, Ok((Some(policy), chain)), "{kind}: {word}");
            }
        }
    }

    /// An unset `on_error` keeps each kind's default: the stage's (allow
    /// at before_tool) for every kind but the prompt hook, whose guard
    /// refuses when it could not ask its model.
    #[test]
    fn unset_keeps_each_kinds_default() {
        for (kind, read) in KINDS {
            let (_, chain) = read("").unwrap_or_else(|e| panic!("{kind}: {e}"));
            let want = if kind == "prompt" {
                OnError::Deny
            } else {
                OnError::Allow
            };
            assert_eq!(chain, want, "{kind}");
        }
        assert_eq!(
            FailurePolicy::resolve(None, Stage::ApproveTool),
            OnError::Deny
        );
    }

    /// A word that is not one of them is a config error, for every kind,
    /// that names the words it could have been; so is a word in another
    /// case, as for every enum of the config.
    #[test]
    fn an_unknown_word_is_refused_naming_the_accepted_ones() {
        for (kind, read) in KINDS {
            for word in ["maybe", "Deny", "fail"] {
                let err = read(&format!("on_error = \"{word}\"\n")).expect_err(kind);
                assert!(
                    err.contains(&format!("unknown variant `{word}`")),
                    "{kind}: {err}"
                );
                for accepted in ["`block`", "`warn`", "`ignore`", "`deny`", "`allow`"] {
                    assert!(err.contains(accepted), "{kind}: {err}");
                }
            }
            let err = read("on_error = 1\n").expect_err(kind);
            assert!(err.contains("`block`, `warn`, `ignore`"), "{kind}: {err}");
        }
    }

    /// The canonical word is what `Display` shows, and reads back as the
    /// same policy; the chain's policies convert to their config words.
    #[test]
    fn words_round_trip() {
        for p in [
            FailurePolicy::Block,
            FailurePolicy::Warn,
            FailurePolicy::Ignore,
        ] {
            assert_eq!(FailurePolicy::parse(&p.to_string()), Some(p));
            assert_eq!(FailurePolicy::parse(p.as_str()), Some(p));
        }
        assert_eq!(FailurePolicy::from(OnError::Deny), FailurePolicy::Block);
        assert_eq!(FailurePolicy::from(OnError::Allow), FailurePolicy::Warn);
        assert!(FailurePolicy::Ignore.is_quiet());
        assert!(!FailurePolicy::Warn.is_quiet());
    }
}
