//! The keys every kind of hook shares ([`HookSettings`]), declared and
//! decoded once, and the strict reading of a section that is those keys
//! plus its kind's own ([`decode_section`]).
//!
//! serde cannot flatten one struct into another and still refuse unknown
//! keys, so a section is read in two halves: the shared keys go to
//! [`HookSettings`], the rest to the kind's struct, each decoded strictly,
//! and a key neither knows is refused naming both lists.

use hookhost_protocol::{OnError, Stage};
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::{Map, Value};

use super::on_error::FailurePolicy;
use crate::policy::breaker::BreakerConfig;
use crate::policy::filter::{Filter, FilterError};
use crate::policy::quality_gate::QualityGate;
use crate::policy::scope::{Scope, ScopeError};

/// What every hook is configured with, whatever runs it: whether it runs,
/// where in the chain, how long it may take, what its failure decides,
/// which calls it sees, its breaker, who it is for, and its quality gate.
///
/// Each key means the same for every kind; where a kind reads one its own
/// way it says so here (the `matcher` of a command hook follows its
/// dialect's rules; its deadline defaults to the dialect's).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HookSettings {
    /// Off switch for one hook.
    #[serde(default = "super::hooks::yes")]
    pub enabled: bool,
    /// Lower runs first; ties break by name, across every kind of hook.
    #[serde(default)]
    pub priority: i64,
    /// The deadline of one call, in milliseconds; the stage's default (a
    /// command hook: its dialect's) when absent.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// What a failure decides (`block`, `warn`, `ignore`, or their aliases
    /// `deny`, `allow`); the stage's default when absent
    /// ([`FailurePolicy::resolve`]).
    #[serde(default)]
    pub on_error: Option<FailurePolicy>,
    /// Which tools it sees: an anchored regex on the tool name, or for a
    /// command hook its dialect's matcher.
    #[serde(default)]
    pub matcher: Option<String>,
    /// A CEL condition over `stage`, `tool`, `arguments`, `meta`, `model`;
    /// the hook is called only when it is true (`if` in the file).
    #[serde(default, rename = "if")]
    pub condition: Option<String>,
    /// `false` turns this hook's breaker off. Unset, it is on unless the
    /// hook fails closed (its policy is deny at a stage it intercepts): an
    /// open breaker would refuse every call for the cool-down, and whoever
    /// can make the hook fail five times could trigger that.
    #[serde(default)]
    pub breaker: Option<bool>,
    /// Overrides `[hooks.defaults] breaker_failures` for this hook.
    #[serde(default)]
    pub breaker_failures: Option<u32>,
    /// Overrides `breaker_window_ms` for this hook.
    #[serde(default)]
    pub breaker_window_ms: Option<u64>,
    /// Overrides `breaker_cooldown_ms` for this hook.
    #[serde(default)]
    pub breaker_cooldown_ms: Option<u64>,
    /// Who the hook is for: `{ agents, tenants, sessions }` from the call's
    /// `meta`; every call when absent (`policy/scope.rs`).
    #[serde(default)]
    pub scope: Scope,
    /// At `subagent_stop`: `false` makes this hook's block a logged
    /// failure that lets the result through (GoClaw's quality gate);
    /// default `true` when `max_retries` is set.
    #[serde(default)]
    pub block_on_failure: Option<bool>,
    /// At `subagent_stop`: how many of this hook's blocks in a row send
    /// the sub-agent back with the reason as feedback, before the result
    /// is let through with the failure recorded (GoClaw's quality gate).
    #[serde(default)]
    pub max_retries: Option<u32>,
}

impl Default for HookSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            priority: 0,
            timeout_ms: None,
            on_error: None,
            matcher: None,
            condition: None,
            breaker: None,
            breaker_failures: None,
            breaker_window_ms: None,
            breaker_cooldown_ms: None,
            scope: Scope::default(),
            block_on_failure: None,
            max_retries: None,
        }
    }
}

impl HookSettings {
    /// Its breaker overrides.
    pub fn breaker(&self) -> BreakerConfig {
        BreakerConfig {
            enabled: self.breaker,
            breaker_failures: self.breaker_failures,
            breaker_window_ms: self.breaker_window_ms,
            breaker_cooldown_ms: self.breaker_cooldown_ms,
        }
    }

    /// Its quality gate at `subagent_stop`, when it sets either key.
    pub fn quality_gate(&self) -> Option<QualityGate> {
        QualityGate::from_keys(self.block_on_failure, self.max_retries)
    }

    /// The checks of the shared keys serde cannot make, the same for every
    /// kind: `if` (and `matcher`, where the chain applies it as a regex)
    /// compiles, a deadline is at least 1 ms, and no `scope` list is empty
    /// (it would match nothing).
    pub(crate) fn check(&self, filters_by_matcher: bool) -> Result<(), SettingsError> {
        let matcher = self.matcher.as_deref().filter(|_| filters_by_matcher);
        Filter::new(matcher, self.condition.as_deref())?;
        if self.timeout_ms == Some(0) {
            return Err(SettingsError::ZeroTimeout);
        }
        self.scope.validate()?;
        Ok(())
    }

    /// The policy for a failure at `stage`, before any kind's own rule
    /// (a fail-closed event) is applied.
    pub fn policy(&self, stage: Stage) -> OnError {
        FailurePolicy::resolve(self.on_error, stage)
    }
}

/// What is wrong with a hook's shared keys; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// `matcher` or `if` does not compile.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// `timeout_ms = 0`.
    #[error("key `timeout_ms`: must be at least 1")]
    ZeroTimeout,
    /// A `scope` list that would match nothing.
    #[error(transparent)]
    Scope(#[from] ScopeError),
}

/// A config section: the shared settings and its kind's own keys. Each
/// section type holds its [`HookSettings`] and reads as them (`deref`), so
/// that `hook.priority` is the section's `priority`, as the file writes it.
pub(crate) trait Section: Sized {
    /// Decodes the kind's own keys strictly (serde's derive, through
    /// `#[serde(remote = "Self")]`).
    fn own<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
    /// Where its settings go.
    fn settings_mut(&mut self) -> &mut HookSettings;
}

/// Implements `Deserialize` (both halves, strictly), `Deref` and
/// `DerefMut` to [`HookSettings`] for a section type whose derive is
/// `#[serde(remote = "Self")]` and whose settings are in `settings`.
macro_rules! section {
    ($t:ty) => {
        impl $crate::config::settings::Section for $t {
            fn own<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$t>::deserialize(d)
            }
            fn settings_mut(&mut self) -> &mut $crate::config::settings::HookSettings {
                &mut self.settings
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::config::settings::decode_section(d)
            }
        }
        impl std::ops::Deref for $t {
            type Target = $crate::config::settings::HookSettings;
            fn deref(&self) -> &Self::Target {
                &self.settings
            }
        }
        impl std::ops::DerefMut for $t {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.settings
            }
        }
    };
}
pub(crate) use section;

/// Reads a section: the shared keys into its settings, the rest into its
/// own struct, each strictly; an unknown key is refused naming every key
/// the section takes.
pub(crate) fn decode_section<'de, D: Deserializer<'de>, T: Section>(d: D) -> Result<T, D::Error> {
    let table = Map::<String, Value>::deserialize(d)?;
    let shared = fields(|d| HookSettings::deserialize(d));
    let own = fields(|d| T::own(d));
    if let Some(key) = table
        .keys()
        .find(|k| !shared.contains(&k.as_str()) && !own.contains(&k.as_str()))
    {
        let known: Vec<String> = own
            .iter()
            .chain(&shared)
            .map(|k| format!("`{k}`"))
            .collect();
        return Err(de::Error::custom(format!(
            "key `{key}`: unknown field `{key}`, expected one of {}",
            known.join(", ")
        )));
    }
    let (settings, rest): (Map<String, Value>, Map<String, Value>) = table
        .into_iter()
        .partition(|(k, _)| shared.contains(&k.as_str()));
    let settings: HookSettings = strict(settings, |d| HookSettings::deserialize(d))?;
    let mut section: T = strict(rest, |d| T::own(d))?;
    *section.settings_mut() = settings;
    Ok(section)
}

/// Decodes one half, naming the key a failure is at.
fn strict<T, E: de::Error>(
    table: Map<String, Value>,
    decode: impl FnOnce(
        serde_path_to_error::Deserializer<'_, '_, Value>,
    ) -> Result<T, serde_json::Error>,
) -> Result<T, E> {
    let mut track = serde_path_to_error::Track::new();
    let tracked = serde_path_to_error::Deserializer::new(Value::Object(table), &mut track);
    decode(tracked).map_err(|e| {
        let path = track.path().to_string();
        match path.as_str() {
            "" | "." => E::custom(e),
            _ => E::custom(format!("key `{path}`: {e}")),
        }
    })
}

/// The keys a derived struct takes, as serde's derive declares them: it
/// asks the deserializer for a struct with those fields, and this one
/// only notes them.
fn fields<T>(
    decode: impl FnOnce(FieldNames<'_>) -> Result<T, de::value::Error>,
) -> Vec<&'static str> {
    let mut names = Vec::new();
    let _ = decode(FieldNames(&mut names));
    names
}

/// A deserializer that answers nothing and records the fields a struct asks for.
struct FieldNames<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("field names only"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend_from_slice(fields);
        Err(de::Error::custom("field names only"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::super::Config;

    /// One minimal section of each kind this build reads, as TOML.
    fn kinds() -> Vec<(&'static str, &'static str)> {
        let mut kinds = vec![
            (
                "processes",
                "command = [\"x\"]\nintercept = [\"before_tool\"]\n",
            ),
            ("builtins", "config = { tools = [\"curl\"] }\n"),
            ("commands", "command = \"x\"\nevents = [\"pre_tool_use\"]\n"),
        ];
        if cfg!(feature = "remote") {
            kinds.extend([
                ("remotes", "url = \"ws://127.0.0.1:9/\"\nintercept = [\"before_tool\"]\n"),
                (
                    "prompts",
                    "provider = \"openai\"\nmodel = \"m\"\nprompt = \"p\"\nevents = [\"PreToolUse\"]\nmatcher = \"Bash\"\n",
                ),
                ("webhooks", "url = \"https://example.com/\"\nevents = [\"PreToolUse\"]\n"),
            ]);
        }
        kinds
    }

    fn load(section: &str, body: &str) -> Result<Config, String> {
        let name = if section == "builtins" {
            "deny_tools"
        } else {
            "h"
        };
        let text = format!("[hooks.{section}.{name}]\n{body}");
        Config::parse(&text, false, Path::new("hooks.toml"), PathBuf::from("/cfg"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_kind_reads_and_checks_the_shared_keys_alike() {
        let shared = "priority = 7\non_error = \"deny\"\ntimeout_ms = 1500\nbreaker_failures = 2\n";
        for (section, body) in kinds() {
            let c = load(section, &format!("{body}{shared}")).expect(section);
            let spec = c.hooks().pop().expect(section);
            assert_eq!(spec.settings.priority, 7, "{section}");
            assert_eq!(spec.settings.timeout_ms, Some(1500), "{section}");
            assert_eq!(spec.settings.breaker_failures, Some(2), "{section}");
            let zero = load(section, &format!("{body}timeout_ms = 0\n")).expect_err(section);
            assert!(
                zero.contains("key `timeout_ms`: must be at least 1"),
                "{section}: {zero}"
            );
            let empty = load(section, &format!("{body}scope = {{ agents = [] }}\n"));
            assert!(
                empty.expect_err(section).contains("`scope.agents`"),
                "{section}"
            );
        }
    }

    #[test]
    fn an_unknown_key_is_refused_naming_the_shared_keys_and_the_kinds_own() {
        for (section, body) in kinds() {
            let err = load(section, &format!("{body}colour = 1\n")).expect_err(section);
            assert!(
                err.contains("key `colour`: unknown field `colour`"),
                "{err}"
            );
            assert!(err.contains("`priority`") && err.contains("`if`"), "{err}");
            let own = body.split(" =").next().unwrap_or_default();
            assert!(err.contains(&format!("`{own}`")), "{section}: {err}");
            let typo = load(section, &format!("{body}priority = \"high\"\n")).expect_err(section);
            assert!(
                typo.contains("key `priority`: invalid type"),
                "{section}: {typo}"
            );
        }
    }
}
