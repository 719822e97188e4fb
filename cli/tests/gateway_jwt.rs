//! `hookhost serve --listen … --auth jwt:JWKS`: callers known by a JWT
//! the team's identity provider signed (Ed25519 keys made by openssl, the
//! JWKS a file the gateway re-reads). Through the real relay: the claims'
//! tenant and subject pick the chain; an expired token, another audience
//! or issuer, another key, a symmetric (HS256) token naming the key's id,
//! and a token without a tenant are each refused; a rotated key set takes
//! effect without a restart.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/gateway.rs"]
mod gw;

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

const ISSUER: &str = "https://idp.acme.example";
const AUDIENCE: &str = "hookhost";

/// An Ed25519 key pair made by openssl: the private key's PEM and the
/// public key's JWK with `kid`.
fn keypair(dir: &Path, kid: &str) -> (Vec<u8>, Value) {
    let pem = dir.join(format!("{kid}.pem"));
    let ok = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&pem)
        .status()
        .unwrap();
    assert!(ok.success());
    let der = Command::new("openssl")
        .args(["pkey", "-pubout", "-outform", "DER", "-in"])
        .arg(&pem)
        .output()
        .unwrap()
        .stdout;
    let raw = &der[der.len() - 32..];
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    let jwk =
        json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig"});
    (std::fs::read(&pem).unwrap(), jwk)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token signed with `pem` under `kid`, with `claims` over good ones.
fn mint(pem: &[u8], kid: &str, claims: Value) -> String {
    let mut all = json!({"iss": ISSUER, "aud": AUDIENCE, "exp": now() + 600, "iat": now()});
    for (k, v) in claims.as_object().unwrap() {
        all[k] = v.clone();
    }
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.into());
    let key = EncodingKey::from_ed_pem(pem).unwrap();
    jsonwebtoken::encode(&header, &all, &key).unwrap()
}

fn jwt_gateway(name: &str, jwks: &Value) -> gw::Gateway {
    let jwks = jwks.to_string();
    gw::Gateway::start_with(name, gw::CONFIG, move |dir| {
        let file = dir.join("jwks.json");
        std::fs::write(&file, &jwks).unwrap();
        (vec![], jwt_flags(&file.display().to_string()))
    })
}

fn jwt_flags(source: &str) -> Vec<String> {
    let auth = format!("jwt:{source}");
    let flags = [
        "--auth",
        &auth,
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        AUDIENCE,
    ];
    flags.map(String::from).to_vec()
}

/// The JWKS served over https with the gateway's own certificate (a
/// python3 file server), the gateway trusting the CA through
/// `SSL_CERT_FILE`.
#[test]
fn the_key_set_can_come_from_an_https_url() {
    let keys = gw::scratch("jwt-url-keys");
    let (pem, jwk) = keypair(&keys, "k1");
    let site = keys.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("jwks.json"), json!({"keys": [jwk]}).to_string()).unwrap();
    let mut server = None;
    let gw = gw::Gateway::start_with("jwt-url", gw::CONFIG, |dir| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bundle_https_server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--dir")
            .arg(&site)
            .arg("--cert")
            .arg(dir.join("gw.pem"))
            .arg("--key")
            .arg(dir.join("gw.key"))
            .args(["--seconds", "60"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        // Kept open while the server runs: it logs each request there.
        let mut log = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut log, &mut first).unwrap();
        let port = first.trim().strip_prefix("port ").unwrap().to_string();
        server = Some((child, log));
        let ca = format!("SSL_CERT_FILE={}", dir.join("ca.pem").display());
        (
            vec![ca],
            jwt_flags(&format!("https://localhost:{port}/jwks.json")),
        )
    });
    let ann = mint(&pem, "k1", json!({"sub": "ann", "tenant": "acme"}));
    assert_eq!(gw.relay(&ann, true, &[]), (2, "acme says no\n".into()));
    if let Some((mut server, _log)) = server {
        let _ = server.kill();
        let _ = server.wait();
    }
}

#[test]
fn a_verified_token_names_the_caller_and_every_forgery_is_refused() {
    let keys = gw::scratch("jwt-keys");
    let (pem, jwk) = keypair(&keys, "k1");
    let (other_pem, _) = keypair(&keys, "k2");
    let gw = jwt_gateway("jwt", &json!({"keys": [jwk]}));
    let ann = mint(&pem, "k1", json!({"sub": "ann", "tenant": "acme"}));
    assert_eq!(gw.relay(&ann, true, &[]), (2, "acme says no\n".into()));
    let cat = mint(&pem, "k1", json!({"sub": "cat", "tenant": "globex"}));
    assert_eq!(gw.relay(&cat, true, &[]), (0, String::new()));
    let refused = |token: &str, what: &str| {
        let (code, stderr) = gw.relay(token, true, &[]);
        assert_eq!(code, 2, "{what}");
        assert!(stderr.contains("answered 401"), "{what}: {stderr}");
    };
    refused(
        &mint(
            &pem,
            "k1",
            json!({"sub": "ann", "tenant": "globex", "exp": now() - 120}),
        ),
        "expired",
    );
    refused(
        &mint(
            &pem,
            "k1",
            json!({"sub": "ann", "tenant": "globex", "aud": "other"}),
        ),
        "another audience",
    );
    refused(
        &mint(
            &pem,
            "k1",
            json!({"sub": "ann", "tenant": "globex", "iss": "https://evil"}),
        ),
        "another issuer",
    );
    refused(
        &mint(&other_pem, "k1", json!({"sub": "ann", "tenant": "globex"})),
        "another key",
    );
    refused(&mint(&pem, "k1", json!({"sub": "ann"})), "no tenant");
    refused(
        &mint(&pem, "k1", json!({"sub": "a n n", "tenant": "globex"})),
        "a name not shown plainly",
    );
    // A symmetric token naming the key's id, its secret the public key's
    // bytes: the alg-confusion forgery.
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("k1".into());
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "exp": now() + 600, "sub": "ann", "tenant": "globex"});
    let secret = EncodingKey::from_secret(jwk["x"].as_str().unwrap().as_bytes());
    refused(
        &jsonwebtoken::encode(&header, &claims, &secret).unwrap(),
        "HS256 under k1",
    );
}

#[test]
fn a_rotated_key_set_takes_effect_without_a_restart() {
    let keys = gw::scratch("jwt-rotate");
    let (old_pem, old) = keypair(&keys, "old");
    let (new_pem, new) = keypair(&keys, "new");
    let gw = jwt_gateway("jwt-rotate", &json!({"keys": [old]}));
    let by_old = mint(&old_pem, "old", json!({"sub": "cat", "tenant": "globex"}));
    let by_new = mint(&new_pem, "new", json!({"sub": "cat", "tenant": "globex"}));
    assert_eq!(gw.relay(&by_old, true, &[]).0, 0);
    assert_eq!(
        gw.relay(&by_new, true, &[]).0,
        2,
        "the new key is not known yet"
    );
    // The file's time must change for the gateway to see it.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(gw.dir.join("jwks.json"), json!({"keys": [new]}).to_string()).unwrap();
    assert_eq!(gw.relay(&by_new, true, &[]).0, 0);
    assert_eq!(gw.relay(&by_old, true, &[]).0, 2, "the old key is gone");
}

#[test]
fn a_key_set_with_a_symmetric_key_is_refused_at_start() {
    let dir = gw::scratch("jwt-oct");
    let jwks = json!({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "s"}]});
    std::fs::write(dir.join("jwks.json"), jwks.to_string()).unwrap();
    std::fs::write(dir.join("hooks.toml"), gw::CONFIG).unwrap();
    let out = Command::new(common::HOOKHOST)
        .args(["serve", "--listen", "127.0.0.1:0", "-c"])
        .arg(dir.join("hooks.toml"))
        .arg("--auth")
        .arg(format!("jwt:{}", dir.join("jwks.json").display()))
        .args(["--auth-issuer", ISSUER, "--auth-audience", AUDIENCE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("symmetric"), "{stderr}");
}
