//! Signed policy bundles (docs/src/bundles.md): `hookhost bundle` builds,
//! signs and verifies them ([`archive`], [`signature`], [`files`]), and
//! `serve --policy` fetches one ([`fetch`]), verifies it, unpacks it into
//! a private folder and swaps it in through the sidecar's reload, polling
//! for newer ones ([`Policy::run`]). Until the first valid bundle loads,
//! the [`gate`] refuses every refusable event.

pub mod archive;
pub mod fetch;
pub mod files;
mod gate;
pub mod signature;
mod state;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use hookhost::{BuiltinRegistry, Config};

use crate::sidecar::Sidecar;
use fetch::{Fetched, Fetcher, Source};
use signature::Signed;
pub use state::Root;
use state::record;
pub use state::status;

/// `serve`'s policy flags.
#[derive(Args, Debug, Clone)]
pub struct PolicyArgs {
    /// Serve the signed policy bundle at this https URL or file path
    /// (docs/src/bundles.md) instead of a config file: until a first valid
    /// bundle is loaded every refusable event is refused.
    #[arg(
        long = "policy",
        value_name = "URL_OR_PATH",
        requires = "policy_key",
        conflicts_with = "config"
    )]
    pub policy: Option<String>,
    /// The minisign public key bundles must be signed with.
    #[arg(long = "policy-key", value_name = "PUB", requires = "policy")]
    pub policy_key: Option<PathBuf>,
    /// Check for a new bundle every SECS seconds (an https URL with ETag,
    /// a file path by reading it).
    #[arg(
        long = "policy-poll",
        value_name = "SECS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub policy_poll: u64,
}

/// A gateway's policy: where bundles come from, the key they must be
/// signed with, and the bundle in force.
pub struct Policy {
    fetcher: Fetcher,
    public_key: String,
    poll: Duration,
    root: Arc<Root>,
    current: Option<Signed>,
    /// The digest of the last bundle refused, so a bad bundle left in
    /// place is logged once, not at every poll.
    refused: Option<String>,
}

impl Policy {
    /// The policy `args` ask for (`None` without `--policy`): the key is
    /// read and parsed, the private folder made.
    pub fn prepare(args: &PolicyArgs) -> Result<Option<Policy>, String> {
        let (Some(from), Some(key)) = (&args.policy, &args.policy_key) else {
            return Ok(None);
        };
        let source = Source::parse(from)?;
        let public_key = std::fs::read_to_string(key)
            .map_err(|e| format!("--policy-key {}: {e}", key.display()))?;
        minisign::PublicKeyBox::from_string(&public_key)
            .and_then(|b| b.into_public_key())
            .map_err(|e| {
                format!(
                    "--policy-key {}: not a minisign public key: {e}",
                    key.display()
                )
            })?;
        let root = Root::create(&source.to_string())?;
        Ok(Some(Policy {
            fetcher: Fetcher::new(source)?,
            public_key,
            poll: Duration::from_secs(args.policy_poll),
            root: Arc::new(root),
            current: None,
            refused: None,
        }))
    }

    /// The path the sidecar reloads from: the bundle in force's hooks.toml
    /// (through the `current` link, swapped atomically).
    pub fn config_path(&self) -> PathBuf {
        self.root.current().join(archive::CONFIG)
    }

    /// The private folder, removed when the last holder drops it: `serve`
    /// holds it until its hooks are stopped.
    pub fn folder(&self) -> Arc<Root> {
        self.root.clone()
    }

    /// The config and builtins served until a bundle loads.
    pub fn waiting(&self) -> Result<(Config, BuiltinRegistry), String> {
        let source = self.fetcher.source().to_string();
        Ok((gate::config(self.root.path())?, gate::registry(&source)))
    }

    /// Checks for a new bundle now and every poll, for ever.
    pub async fn run(mut self, sidecar: Arc<Sidecar>) {
        loop {
            self.check(&sidecar).await;
            tokio::time::sleep(self.poll).await;
        }
    }

    /// One check: fetch, and load what is new and valid.
    async fn check(&mut self, sidecar: &Sidecar) {
        let fetched = self.fetcher.fetch().await;
        record(|s| s.checked = Some(state::now()));
        let (bundle, signature, etag) = match fetched {
            Ok(Fetched::NotModified) => return,
            Ok(Fetched::Bundle {
                bundle,
                signature,
                etag,
            }) => (bundle, signature, etag),
            Err(why) => return self.refuse(None, format!("cannot fetch the bundle: {why}")),
        };
        let digest = archive::sha256_hex(&bundle);
        let known = self.current.as_ref().is_some_and(|c| c.digest == digest);
        if known || self.refused.as_deref() == Some(&digest) {
            self.fetcher.remember(etag);
            return;
        }
        let judged = self.admit(&bundle, &signature, sidecar).await;
        self.fetcher.remember(etag);
        match judged {
            Ok(signed) => self.loaded(signed),
            Err(why) => self.refuse(Some(digest), why),
        }
    }

    fn loaded(&mut self, signed: Signed) {
        tracing::warn!(
            "policy: loaded bundle version {} (sha256 {}) from {}",
            signed.version,
            signed.digest,
            self.fetcher.source()
        );
        record(|s| {
            s.version = Some(signed.version);
            s.digest = Some(signed.digest.clone());
            s.loaded = Some(state::now());
            s.error = None;
        });
        self.current = Some(signed);
        self.refused = None;
    }

    fn refuse(&mut self, digest: Option<String>, why: String) {
        let keeping = match &self.current {
            Some(c) => format!("version {} stays in force", c.version),
            None => "every refusable event is still refused".into(),
        };
        let what = digest
            .as_deref()
            .map(|d| format!(" (sha256 {d})"))
            .unwrap_or_default();
        // A source that stays unreachable is said once, not every poll.
        if state::error() != Some(why.clone()) {
            tracing::error!(
                "policy: bundle from {}{what} refused: {why}; {keeping}",
                self.fetcher.source()
            );
        }
        record(|s| s.error = Some(why));
        if digest.is_some() {
            self.refused = digest;
        }
    }

    /// Verifies, checks the version rule, unpacks and loads one bundle;
    /// the signed facts, or why it was refused (the policy in force kept).
    async fn admit(
        &self,
        bundle: &[u8],
        signature: &[u8],
        sidecar: &Sidecar,
    ) -> Result<Signed, String> {
        let signature = std::str::from_utf8(signature).map_err(|_| "the signature is not text")?;
        let signed = signature::verify(bundle, signature, &self.public_key)?;
        if let Some(current) = &self.current {
            version_rule(current, &signed)?;
        }
        let dir = self.root.unpack(bundle, &signed)?;
        match self.swap_in(&dir, sidecar).await {
            Ok(()) => {
                // Every decision record from now on names it.
                let policy = format!("version={} sha256={}", signed.version, signed.digest);
                sidecar.host().set_policy(Some(policy));
                Ok(signed)
            }
            Err(why) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(why)
            }
        }
    }

    /// Checks the unpacked config, points `current` at it and reloads; on
    /// failure `current` points where it did.
    async fn swap_in(&self, dir: &Path, sidecar: &Sidecar) -> Result<(), String> {
        crate::shared::config::load_config(&dir.join(archive::CONFIG))?;
        let before = self.root.point_current(dir)?;
        if let Err(e) = sidecar.reload().await {
            let _ = self.root.restore_current(before.as_deref());
            return Err(format!("its config did not load: {}", e.message));
        }
        if let Some(old) = before.filter(|b| b != dir) {
            let _ = std::fs::remove_dir_all(old);
        }
        Ok(())
    }
}

/// A gateway never goes back: a lower version is refused, and so is the
/// running version with other contents.
fn version_rule(current: &Signed, new: &Signed) -> Result<(), String> {
    if new.version < current.version {
        return Err(format!(
            "version {} is older than version {} in force",
            new.version, current.version
        ));
    }
    if new.version == current.version && new.digest != current.digest {
        return Err(format!(
            "version {} is the version in force, with other contents (sha256 {} in force): \
             give a new bundle a higher version",
            new.version, current.digest
        ));
    }
    Ok(())
}
