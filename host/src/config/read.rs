//! Reading one section of hooks, of any kind, the same way: the feature it
//! needs, decoding (strict, both halves: [`super::settings`]), the shared
//! keys checked once ([`HookSettings::check`]), then the kind's own keys.
//! A kind of hook says only what is its own ([`Kind`]).

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::settings::{HookSettings, Section};
use super::{Config, ConfigError, Format, HookSpec, Source};

/// What a kind of section adds to the common reading.
pub(crate) trait Kind:
    Section + DeserializeOwned + Clone + Deref<Target = HookSettings>
{
    /// How an error names one: `hook`, `remote hook`, `webhook`, ...
    const NOUN: &'static str;
    /// What it needs of this build, when not every build has it: what the
    /// section uses, the cargo feature, and whether this build has it.
    const NEEDS: Option<(&'static str, &'static str, bool)> = None;

    /// Its hooks in a config, by name.
    fn section(config: &mut Config) -> &mut BTreeMap<String, Self>;

    /// The hook as the chain runs it (a command hook translating tool
    /// names by `tool_names`).
    fn spec(&self, name: &str, tool_names: &Arc<BTreeMap<String, String>>) -> HookSpec;

    /// The checks of its own keys (and of how they meet the shared ones:
    /// a quality gate needs a stage it can be asked at), naming the key.
    fn check(&self, config: &Config, name: &str) -> Result<(), String>;

    /// What a PicoClaw `.json` file's entry needs before it is decoded
    /// (PicoClaw's own defaults).
    fn picoclaw(_name: &str, _raw: &mut Value) {}
    /// After decoding, what a PicoClaw file implies.
    fn read_by_picoclaw(&mut self) {}
}

impl Config {
    /// Reads one section's hooks of kind `T` into the config.
    pub(super) fn read_section_of<T: Kind>(
        &mut self,
        src: &Source<'_>,
        raw: BTreeMap<String, Value>,
    ) -> Result<(), ConfigError> {
        for (name, mut raw) in raw {
            let at = format!("{} `{name}`", T::NOUN);
            if let Some((what, feature, built)) = T::NEEDS {
                src.needs(&at, what, feature, built)?;
            }
            let picoclaw = self.format == Format::PicoClaw;
            if picoclaw {
                T::picoclaw(&name, &mut raw);
            }
            let mut hook: T = src.decode(&at, raw)?;
            if picoclaw {
                hook.read_by_picoclaw();
            }
            let cel = hook.condition.is_none() || cfg!(feature = "cel");
            src.needs(&at, "`if`", "cel", cel)?;
            let spec = hook.spec(&name, &Arc::default());
            spec.settings
                .check(spec.backend.filters_by_matcher())
                .map_err(|e| src.invalid(&at, e))?;
            hook.check(self, &name).map_err(|e| src.invalid(&at, e))?;
            T::section(self).insert(name, hook);
        }
        Ok(())
    }
}
