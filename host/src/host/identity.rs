//! Who a call comes from, when a gateway knows: the tenant, user and
//! agent a credential stands for, written into the call's `meta` over
//! whatever the call itself claimed. Scopes (`scope.tenants`, `users`,
//! `agents`) then hold against the credential, never against the event.

use serde_json::{Map, Value};

/// The identity a gateway established from a caller's credential (a
/// token's line, a signed JWT's claims). An event is written by whoever
/// sends it, so nothing in it may say whose it is once a gateway has
/// checked a credential: [`Identity::stamp`] overwrites those keys.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// `meta.tenant_id`: the team or organisation.
    pub tenant: String,
    /// `meta.user_id`: the person.
    pub user: String,
    /// `meta.agent_id`, when the credential is for one agent only; when it
    /// names none, a call carries no agent id at all (it cannot claim one).
    pub agent: Option<String>,
}

impl Identity {
    /// The identity of a credential for `tenant` and `user`, and for one
    /// agent when `agent` names it.
    pub fn new(tenant: impl Into<String>, user: impl Into<String>, agent: Option<String>) -> Self {
        Identity {
            tenant: tenant.into(),
            user: user.into(),
            agent,
        }
    }

    /// Writes the identity into `params.meta` (a stage's params; made an
    /// object when it is absent or not one), replacing `tenant_id`,
    /// `user_id` and `agent_id`; every other key of `meta` is kept.
    pub fn stamp(&self, params: &mut Value) {
        if let Value::Object(params) = params {
            let meta = params.entry("meta").or_insert(Value::Null);
            self.stamp_meta(meta);
        }
    }

    /// [`Identity::stamp`] on a `meta` object itself (a runtime event's
    /// `scope`, for instance).
    pub fn stamp_meta(&self, meta: &mut Value) {
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        let Value::Object(meta) = meta else {
            return;
        };
        meta.insert("tenant_id".into(), Value::String(self.tenant.clone()));
        meta.insert("user_id".into(), Value::String(self.user.clone()));
        match &self.agent {
            Some(agent) => meta.insert("agent_id".into(), Value::String(agent.clone())),
            None => meta.remove("agent_id"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_credential_wins_over_what_the_call_claims() {
        let id = Identity::new("acme", "ann", None);
        let mut params = json!({"tool": "shell", "meta": {
            "tenant_id": "globex", "user_id": "root", "agent_id": "admin", "session_key": "s"}});
        id.stamp(&mut params);
        assert_eq!(
            params["meta"],
            json!({"tenant_id": "acme", "user_id": "ann", "session_key": "s"})
        );
        let id = Identity::new("acme", "ann", Some("codex".into()));
        let mut params = json!({"tool": "shell", "meta": "not an object"});
        id.stamp(&mut params);
        assert_eq!(
            params["meta"],
            json!({"tenant_id": "acme", "user_id": "ann", "agent_id": "codex"})
        );
    }
}
