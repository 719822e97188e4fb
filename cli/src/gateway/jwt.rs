//! `--auth jwt:JWKS`: callers known by a JSON Web Token that a team's
//! identity provider signed. The gateway holds only public keys (a JWKS
//! file, or an https URL it polls); a token is accepted when its
//! signature checks against the key its header names (`kid`), with the
//! algorithm that key is for (never the one the token asks for: an `HS*`
//! or `none` token cannot slip through a public key), and its `iss`,
//! `aud`, `exp` (and `nbf` when present) hold, with 30 s of leeway.
//!
//! The caller is `tenant` (claim `tenant`), `user` (claim `sub`) and,
//! when the claim is there, `agent` (claim `agent`); a token without a
//! tenant or subject, or with a name hookhost cannot show plainly, is
//! refused.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use hookhost::Identity;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::tokens::valid_name;
use crate::shared::client::Failed;
use crate::shared::remote::Gateway;

/// How often a JWKS URL is fetched again (keys rotate).
const REFRESH: Duration = Duration::from_secs(300);

/// The largest JWKS read.
const MAX_JWKS_BYTES: usize = 1024 * 1024;

/// Where the keys come from.
#[derive(Debug, Clone)]
enum Source {
    File(PathBuf),
    Url(String),
}

/// The verifier: the keys in force, and the claims every token must have.
#[derive(Debug)]
pub struct Jwt {
    source: Source,
    validation: (String, String),
    keys: RwLock<Keys>,
}

#[derive(Debug)]
struct Keys {
    set: Arc<JwkSet>,
    /// The file's modification time.
    stamp: Option<SystemTime>,
    /// When the set was last loaded.
    fetched: Instant,
}

/// The claims hookhost reads; the rest are checked by the validation.
#[derive(Deserialize)]
struct Claims {
    sub: String,
    tenant: String,
    #[serde(default)]
    agent: Option<String>,
}

impl Jwt {
    /// Loads the keys of `source` (a file path, or an https URL) for
    /// tokens of `issuer` meant for `audience`. No key, a symmetric key or
    /// an unreadable set is an error, at start.
    pub fn open(source: &str, issuer: &str, audience: &str) -> Result<Jwt, String> {
        let source = match source.contains("://") {
            true => {
                Gateway::parse(source).map_err(|e| format!("--auth jwt: {e}"))?;
                Source::Url(source.to_string())
            }
            false => Source::File(PathBuf::from(source)),
        };
        let (set, stamp) = load(&source)?;
        let keys = Keys {
            set: Arc::new(set),
            stamp,
            fetched: Instant::now(),
        };
        Ok(Jwt {
            source,
            validation: (issuer.to_string(), audience.to_string()),
            keys: RwLock::new(keys),
        })
    }

    /// The caller `token` stands for, if it verifies.
    pub fn identify(&self, token: &[u8]) -> Option<Identity> {
        let token = std::str::from_utf8(token).ok()?;
        let kid = jsonwebtoken::decode_header(token).ok()?.kid?;
        let set = self.current();
        let jwk = set.find(&kid)?;
        let (key, algorithm) = key_of(jwk).ok()?;
        let mut validation = Validation::new(algorithm);
        validation.set_issuer(&[&self.validation.0]);
        validation.set_audience(&[&self.validation.1]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 30;
        validation.validate_nbf = true;
        let claims = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .ok()?
            .claims;
        let names = [
            Some(&claims.tenant),
            Some(&claims.sub),
            claims.agent.as_ref(),
        ];
        if !names.into_iter().flatten().all(|n| valid_name(n)) {
            return None;
        }
        Some(Identity::new(claims.tenant, claims.sub, claims.agent))
    }

    /// The keys in force; a changed file is read again first (a URL is
    /// fetched by [`Jwt::refresh`], never on a request's path).
    fn current(&self) -> Arc<JwkSet> {
        {
            let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
            let stale = match &self.source {
                Source::File(path) => modified(path) != keys.stamp,
                Source::Url(_) => false,
            };
            if !stale {
                return keys.set.clone();
            }
        }
        self.reload();
        let keys = self.keys.read().unwrap_or_else(|p| p.into_inner());
        keys.set.clone()
    }

    /// Loads the set again; one that no longer loads leaves the one before
    /// in force (logged), so a bad edit or an outage locks no one out.
    fn reload(&self) {
        let loaded = load(&self.source);
        let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
        keys.fetched = Instant::now();
        match loaded {
            Ok((set, stamp)) => {
                keys.set = Arc::new(set);
                keys.stamp = stamp;
            }
            Err(e) => tracing::error!("--auth jwt: {e}; keeping the keys read before"),
        }
    }

    /// Fetches a JWKS URL again every [`REFRESH`] (keys rotate), off the
    /// request path, for the life of the gateway. A file needs none.
    pub async fn refresh(self: Arc<Self>) {
        if !matches!(self.source, Source::Url(_)) {
            return;
        }
        loop {
            tokio::time::sleep(REFRESH).await;
            let jwt = self.clone();
            let _ = tokio::task::spawn_blocking(move || jwt.reload()).await;
        }
    }
}

fn modified(path: &std::path::Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The key set of `source`, checked: every key usable, none symmetric.
fn load(source: &Source) -> Result<(JwkSet, Option<SystemTime>), String> {
    let (bytes, stamp) = match source {
        Source::File(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| format!("cannot read the JWKS {}: {e}", path.display()))?;
            (bytes, modified(path))
        }
        Source::Url(url) => (fetch(url)?, None),
    };
    if bytes.len() > MAX_JWKS_BYTES {
        return Err("the JWKS is over 1 MiB".into());
    }
    let set: JwkSet =
        serde_json::from_slice(&bytes).map_err(|e| format!("the JWKS does not read: {e}"))?;
    if set.keys.is_empty() {
        return Err("the JWKS holds no key".into());
    }
    for jwk in &set.keys {
        let kid = jwk.common.key_id.as_deref().unwrap_or("(no kid)");
        key_of(jwk).map_err(|e| format!("the JWKS key {kid}: {e}"))?;
    }
    Ok((set, stamp))
}

/// GET `url` through the relay's https client, within 10 s.
fn fetch(url: &str) -> Result<Vec<u8>, String> {
    let gateway = Gateway::parse(url)?;
    let until = Instant::now() + Duration::from_secs(10);
    match gateway.send(("GET", ""), "", b"", until) {
        Ok((200, body)) => Ok(body),
        Ok((status, _)) => Err(format!("{url} answered {status}")),
        Err(Failed::Late) => Err(format!("{url}: no answer within 10 s")),
        Err(Failed::Because(why)) => Err(why),
    }
}

/// The key and the one algorithm it verifies: the key's own `alg` when
/// it states one, else its type's (RSA: RS256, EC P-256: ES256, P-384:
/// ES384, OKP: EdDSA). A symmetric key (`oct`) is refused: a gateway
/// holding a shared secret could be impersonated by whoever reads it.
fn key_of(jwk: &Jwk) -> Result<(DecodingKey, Algorithm), String> {
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => Algorithm::ES256,
            EllipticCurve::P384 => Algorithm::ES384,
            _ => return Err("an EC curve other than P-256 or P-384".into()),
        },
        AlgorithmParameters::OctetKeyPair(_) => Algorithm::EdDSA,
        AlgorithmParameters::OctetKey(_) => return Err("a symmetric (oct) key".into()),
    };
    let algorithm = match jwk.common.key_algorithm {
        None => by_type,
        Some(KeyAlgorithm::HS256 | KeyAlgorithm::HS384 | KeyAlgorithm::HS512) => {
            return Err("a symmetric algorithm".into());
        }
        Some(stated) => {
            let name = format!("{stated:?}");
            name.parse::<Algorithm>()
                .map_err(|_| format!("algorithm {name} is not one hookhost verifies"))?
        }
    };
    let key = DecodingKey::from_jwk(jwk).map_err(|e| e.to_string())?;
    Ok((key, algorithm))
}
