//! `hookhost bundle`: build, sign and verify signed policy bundles, and
//! make the key pair that signs them (docs/src/bundles.md). `serve
//! --policy` loads what these make.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::policy::signature::signature_path;
use crate::policy::{archive, files, signature};
use crate::shared::exit::usage_error;

/// Build, sign and verify signed policy bundles for `serve --policy`.
#[derive(Args)]
#[command(
    after_help = "A bundle is a tar of a folder's hooks.toml and the hook programs and \
scripts it names, with a manifest (version, sha256 of each file). Its signature (FILE.minisig) \
is minisign's format; its trusted comment carries the bundle's version and sha256.\n\n\
Examples:\n  \
hookhost bundle keygen --secret team.key --public team.pub\n  \
hookhost bundle build policy/ -o policy.bundle\n  \
hookhost bundle sign policy.bundle --key team.key\n  \
hookhost bundle verify policy.bundle --pub team.pub\n  \
hookhost serve --listen 127.0.0.1:7070 --policy https://example.org/policy.bundle --policy-key team.pub"
)]
pub struct BundleArgs {
    #[command(subcommand)]
    command: BundleCommand,
}

#[derive(Subcommand)]
enum BundleCommand {
    /// Make a signing key pair (the secret key file is written 0600).
    Keygen {
        /// Where to write the secret key.
        #[arg(long, value_name = "FILE")]
        secret: PathBuf,
        /// Where to write the public key (what gateways are given).
        #[arg(long, value_name = "FILE")]
        public: PathBuf,
        /// Replace key files that exist.
        #[arg(long)]
        force: bool,
    },
    /// Pack DIR's hooks.toml and the files its hooks run into a bundle.
    Build {
        /// The folder holding hooks.toml.
        dir: PathBuf,
        /// The bundle to write.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
        /// The bundle's version (default: now, in unix seconds); a gateway
        /// never loads a version lower than the one in force.
        #[arg(long, value_name = "N")]
        version: Option<u64>,
        /// Also pack this file, or every file in this folder (relative to
        /// DIR, inside it): what a hook reads that the config does not
        /// name, such as a script's own modules. Repeatable.
        #[arg(long, value_name = "PATH")]
        include: Vec<PathBuf>,
    },
    /// Sign a bundle: writes FILE.minisig.
    Sign {
        /// The bundle.
        file: PathBuf,
        /// The secret key (from `bundle keygen`).
        #[arg(long, value_name = "SECRET")]
        key: PathBuf,
    },
    /// Check a bundle against FILE.minisig and a public key: exit 0 and its
    /// digest and version, or exit 1 and why not.
    Verify {
        /// The bundle.
        file: PathBuf,
        /// The public key.
        #[arg(long = "pub", value_name = "PUBLIC")]
        public: PathBuf,
    },
}

pub fn run(args: BundleArgs) -> ExitCode {
    let done = match args.command {
        BundleCommand::Keygen {
            secret,
            public,
            force,
        } => keygen(&secret, &public, force),
        BundleCommand::Build {
            dir,
            output,
            version,
            include,
        } => build(&dir, &output, version, &include),
        BundleCommand::Sign { file, key } => sign(&file, &key),
        BundleCommand::Verify { file, public } => return verify(&file, &public),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(format!("bundle: {e}")),
    }
}

fn keygen(secret: &Path, public: &Path, force: bool) -> Result<(), String> {
    for path in [secret, public] {
        if !force && std::fs::symlink_metadata(path).is_ok() {
            return Err(format!("{} exists (--force replaces it)", path.display()));
        }
    }
    let (secret_text, public_text) = signature::keygen()?;
    if force {
        let _ = std::fs::remove_file(secret);
    }
    let io = |e: &dyn std::fmt::Display, p: &Path| format!("{}: {e}", p.display());
    let created = crate::shared::paths::create_secret_file(secret, &secret_text)
        .map_err(|e| io(&e, secret))?;
    if !created {
        return Err(format!(
            "{} appeared meanwhile; not replaced",
            secret.display()
        ));
    }
    std::fs::write(public, public_text).map_err(|e| io(&e, public))?;
    outln!(
        "secret key {} (0600; keep it off the gateways)",
        secret.display()
    );
    outln!("public key {}", public.display());
    Ok(())
}

fn build(
    dir: &Path,
    output: &Path,
    version: Option<u64>,
    include: &[PathBuf],
) -> Result<(), String> {
    let files = files::collect(dir, include)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let version = version.unwrap_or(now);
    let bundle = archive::pack(dir, &files, version, now)?;
    std::fs::write(output, &bundle).map_err(|e| format!("{}: {e}", output.display()))?;
    outln!(
        "{}: version {version}, {} files, sha256 {}",
        output.display(),
        files.len(),
        archive::sha256_hex(&bundle)
    );
    for f in &files {
        outln!("  {f}");
    }
    Ok(())
}

fn sign(file: &Path, key: &Path) -> Result<(), String> {
    let bundle = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let manifest = archive::read(&bundle, None).map_err(|e| format!("{}: {e}", file.display()))?;
    let secret = std::fs::read_to_string(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let text = signature::sign(&bundle, manifest.version, &secret)
        .map_err(|e| format!("{}: {e}", key.display()))?;
    let out = signature_path(file);
    std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    outln!("{} (version {})", out.display(), manifest.version);
    Ok(())
}

/// Verifies signature, digest, version and every entry; exit 1 on any
/// failure, with the reason.
fn verify(file: &Path, public: &Path) -> ExitCode {
    match check(file, public) {
        Ok((version, digest)) => {
            outln!("ok: {} version {version} sha256 {digest}", file.display());
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!(
                "hookhost: bundle verify: {}: refused: {why}",
                file.display()
            );
            ExitCode::from(1)
        }
    }
}

fn check(file: &Path, public: &Path) -> Result<(u64, String), String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let bundle = read(file)?;
    let sig_path = signature_path(file);
    let sig = String::from_utf8(read(&sig_path)?)
        .map_err(|_| format!("{} is not text", sig_path.display()))?;
    let key = String::from_utf8(read(public)?)
        .map_err(|_| format!("{} is not text", public.display()))?;
    let signed = signature::verify(&bundle, &sig, &key)?;
    let manifest = archive::read(&bundle, None)?;
    if manifest.version != signed.version {
        return Err(format!(
            "the manifest's version {} is not the signed version {}",
            manifest.version, signed.version
        ));
    }
    Ok((signed.version, signed.digest))
}
