//! Bundle signatures in minisign's format (ed25519, prehashed), through
//! the `minisign` crate: `minisign -Vm FILE -p KEY` checks a bundle too.
//! The trusted comment, which the signature covers, names the bundle's
//! version and sha256: `hookhost-bundle version=N sha256=HEX`, so neither
//! can be changed without the secret key.

use std::io::Cursor;

use minisign::{PublicKeyBox, SecretKeyBox, SignatureBox};

use super::archive::sha256_hex;

/// Where a bundle's signature is: FILE.minisig (a URL likewise).
pub fn signature_path(file: &std::path::Path) -> std::path::PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".minisig");
    std::path::PathBuf::from(name)
}

/// The trusted comment's first word.
const TAG: &str = "hookhost-bundle";

/// What a valid signature vouches for.
#[derive(Debug, Clone, PartialEq)]
pub struct Signed {
    /// The bundle's version, from the signed trusted comment.
    pub version: u64,
    /// The bundle's sha256 (hex), computed and equal to the signed one.
    pub digest: String,
}

/// A new key pair as minisign writes it: (secret key file text, public
/// key file text). The secret key is not password-protected: a gateway's
/// CI signs without a person at a prompt; its file is kept 0600.
pub fn keygen() -> Result<(String, String), String> {
    let pair = minisign::KeyPair::generate_unencrypted_keypair().map_err(|e| e.to_string())?;
    let secret = pair.sk.to_box(None).map_err(|e| e.to_string())?;
    let public = pair.pk.to_box().map_err(|e| e.to_string())?;
    Ok((secret.to_string(), public.to_string()))
}

/// The trusted comment for a bundle of `version` whose bytes have
/// `digest`.
fn trusted_comment(version: u64, digest: &str) -> String {
    format!("{TAG} version={version} sha256={digest}")
}

/// Signs `bundle` (of `version`) with the secret key file's text; the
/// `.minisig` file's text.
pub fn sign(bundle: &[u8], version: u64, secret_key: &str) -> Result<String, String> {
    let sk = SecretKeyBox::from_string(secret_key)
        .and_then(|b| b.into_unencrypted_secret_key())
        .map_err(|e| format!("not a minisign secret key without password: {e}"))?;
    let comment = trusted_comment(version, &sha256_hex(bundle));
    let untrusted = format!("signature from hookhost, bundle version {version}");
    let sig = minisign::sign(
        None,
        &sk,
        Cursor::new(bundle),
        Some(&comment),
        Some(&untrusted),
    )
    .map_err(|e| e.to_string())?;
    Ok(sig.to_string())
}

/// Checks `signature` (a `.minisig` file's text) over `bundle` with the
/// public key file's text; what it vouches for, or why not.
pub fn verify(bundle: &[u8], signature: &str, public_key: &str) -> Result<Signed, String> {
    let pk = PublicKeyBox::from_string(public_key)
        .and_then(|b| b.into_public_key())
        .map_err(|e| format!("not a minisign public key: {e}"))?;
    let sig = SignatureBox::from_string(signature)
        .map_err(|e| format!("not a minisign signature: {e}"))?;
    if !sig.is_prehashed() {
        return Err("a legacy (not prehashed) signature: sign again".into());
    }
    // Without a trusted comment there is no signed version: refused.
    let comment = sig
        .trusted_comment()
        .map_err(|_| "the signature has no trusted comment".to_string())?;
    minisign::verify(&pk, &sig, Cursor::new(bundle), true, false, false)
        .map_err(|e| format!("bad signature: {e}"))?;
    let signed = parse_comment(&comment)?;
    let digest = sha256_hex(bundle);
    if signed.digest != digest {
        return Err(format!(
            "the signed sha256 {} is not the bundle's {digest}",
            signed.digest
        ));
    }
    Ok(signed)
}

/// Reads `hookhost-bundle version=N sha256=HEX`.
fn parse_comment(comment: &str) -> Result<Signed, String> {
    let bad = || format!("the trusted comment {comment:?} is not `{TAG} version=N sha256=HEX`");
    let mut words = comment.split_ascii_whitespace();
    if words.next() != Some(TAG) {
        return Err(bad());
    }
    let version = words
        .next()
        .and_then(|w| w.strip_prefix("version="))
        .and_then(|v| v.parse().ok())
        .ok_or_else(bad)?;
    let digest = words
        .next()
        .and_then(|w| w.strip_prefix("sha256="))
        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(bad)?;
    if words.next().is_some() {
        return Err(bad());
    }
    Ok(Signed {
        version,
        digest: digest.to_ascii_lowercase(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_the_signed_bytes_with_the_right_key_verify() {
        let (secret, public) = keygen().unwrap();
        let sig = sign(b"bundle", 7, &secret).unwrap();
        let ok = verify(b"bundle", &sig, &public).unwrap();
        assert_eq!(ok.version, 7);
        assert_eq!(ok.digest, sha256_hex(b"bundle"));
        assert!(verify(b"bundlf", &sig, &public).is_err());
        let (_, other) = keygen().unwrap();
        assert!(verify(b"bundle", &sig, &other).is_err());
    }

    #[test]
    fn a_comment_without_version_and_digest_is_refused() {
        assert!(parse_comment("timestamp:1700000000").is_err());
        assert!(parse_comment("hookhost-bundle version=1").is_err());
        assert!(parse_comment("hookhost-bundle version=x sha256=00").is_err());
    }
}
