//! Signed policy bundles (docs/src/bundles.md): `hookhost bundle` builds,
//! signs and verifies them ([`archive`], [`signature`], [`files`]).

pub mod archive;
pub mod files;
pub mod signature;
