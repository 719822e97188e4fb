//! What `hookhost serve --listen` adds when it is a team's gateway rather
//! than one user's sidecar: TLS on the port (`tls`), and callers known by
//! their credential (`tokens`: `--auth tokens:FILE`; `jwt`: `--auth
//! jwt:JWKS`, a signed token of the team's identity provider), each standing for a
//! tenant, a user and optionally an agent that the chain's scopes hold to.
//! With replicas, the counts they must agree on live in Redis (`state`:
//! `--state redis://`); its traces go to an OpenTelemetry collector
//! (`otel`: `--otlp URL`).

pub mod jwt;
pub mod otel;
pub mod state;
pub mod tls;
pub mod tokens;
