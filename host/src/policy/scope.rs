//! A hook's `scope`: the agents, tenants, users and sessions it is for
//! (GoClaw's global / tenant / agent scopes), read from the `meta` the
//! agent passes with each call, or that a gateway set from the caller's
//! credential.
//!
//! One chain serves every agent, tenant and session; a scoped hook is
//! filtered per call like a `matcher` (`policy/filter.rs` checks the scope
//! first, and the chain counts a call it leaves out as `filtered`). A list
//! that is absent matches any value; a present list matches only a call
//! whose meta carries one of its values as a string. A call that lacks the
//! key does not match: a hook scoped to tenant `acme` is never called for
//! a call that names no tenant, fail-closed guard or not, exactly as a
//! `matcher` never calls a guard for a tool it does not name.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

/// `scope = { agents = [...], tenants = [...], sessions = [...] }` on any
/// hook: who the hook is for. Absent lists match any call; see the module
/// docs for the rule. Reusable by every hook kind's config section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Scope {
    /// `meta.agent_id` values the hook is for.
    #[serde(default)]
    pub agents: Option<Vec<String>>,
    /// `meta.tenant_id` values the hook is for.
    #[serde(default)]
    pub tenants: Option<Vec<String>>,
    /// `meta.session_key` values the hook is for.
    #[serde(default)]
    pub sessions: Option<Vec<String>>,
    /// `meta.user_id` values the hook is for: the people a team's gateway
    /// knows by their credential.
    #[serde(default)]
    pub users: Option<Vec<String>>,
}

/// Why a `scope` table cannot load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// A present but empty list would match no call at all, which is never
    /// what was meant: leaving the key out means "any".
    #[error("`scope.{0}` is empty, so the hook would never run; leave `{0}` out to match any")]
    EmptyList(&'static str),
}

impl Scope {
    /// A scope with these lists (`None`: any); for embedding and tests.
    pub fn new(
        agents: Option<Vec<String>>,
        tenants: Option<Vec<String>>,
        sessions: Option<Vec<String>>,
    ) -> Scope {
        Scope {
            agents,
            tenants,
            sessions,
            users: None,
        }
    }

    /// This scope, for these users only (`meta.user_id`).
    pub fn with_users(mut self, users: Vec<String>) -> Scope {
        self.users = Some(users);
        self
    }

    /// Each list with the `meta` key it reads and its name in the config.
    fn lists(&self) -> [(&'static str, &'static str, &Option<Vec<String>>); 4] {
        [
            ("agents", "agent_id", &self.agents),
            ("tenants", "tenant_id", &self.tenants),
            ("users", "user_id", &self.users),
            ("sessions", "session_key", &self.sessions),
        ]
    }

    /// Refuses an empty list, which would silently disable the hook.
    pub fn validate(&self) -> Result<(), ScopeError> {
        match self
            .lists()
            .into_iter()
            .find(|(_, _, l)| l.as_ref().is_some_and(Vec::is_empty))
        {
            Some((name, _, _)) => Err(ScopeError::EmptyList(name)),
            None => Ok(()),
        }
    }

    /// True when no list is set: the hook is for every call.
    pub fn is_global(&self) -> bool {
        self.lists().iter().all(|(_, _, l)| l.is_none())
    }

    /// Whether a call with this `meta` is in scope: every present list
    /// holds the call's value for its key. A missing key, or one that is
    /// not a string, matches no present list. Never panics.
    pub fn matches(&self, meta: Option<&Value>) -> bool {
        self.lists().into_iter().all(|(_, key, list)| match list {
            None => true,
            Some(allowed) => meta
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .is_some_and(|v| allowed.iter().any(|a| a == v)),
        })
    }
}

/// `agents=a1,a2;tenants=acme`, or `global` when nothing is set; how
/// `hookhost check` shows it.
impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_global() {
            return f.write_str("global");
        }
        let parts: Vec<String> = self
            .lists()
            .into_iter()
            .filter_map(|(name, _, list)| list.as_ref().map(|l| format!("{name}={}", l.join(","))))
            .collect();
        f.write_str(&parts.join(";"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope(v: Value) -> Scope {
        serde_json::from_value(v).unwrap()
    }

    /// From GoClaw docs/agent-hooks "Scopes": a tenant hook applies to any
    /// agent of that tenant, an agent hook only to its `agent_ids`.
    #[test]
    fn every_present_list_must_hold_the_calls_value() {
        let s = scope(json!({"agents": ["a1", "a2"], "tenants": ["acme"]}));
        let meta = json!({"agent_id": "a2", "tenant_id": "acme"});
        assert!(s.matches(Some(&meta)));
        let other_tenant = json!({"agent_id": "a2", "tenant_id": "globex"});
        assert!(!s.matches(Some(&other_tenant)));
        let other_agent = json!({"agent_id": "a3", "tenant_id": "acme"});
        assert!(!s.matches(Some(&other_agent)));
    }

    #[test]
    fn a_call_without_the_key_is_out_of_scope() {
        let s = scope(json!({"tenants": ["acme"]}));
        assert!(!s.matches(None));
        assert!(!s.matches(Some(&json!({"agent_id": "a1"}))));
        // Not a string: no match, never a panic.
        assert!(!s.matches(Some(&json!({"tenant_id": ["acme"]}))));
        assert!(!s.matches(Some(&json!("acme"))));
    }

    #[test]
    fn a_users_list_matches_the_user_id_only() {
        let s = scope(json!({"tenants": ["acme"], "users": ["ann"]}));
        assert!(s.matches(Some(&json!({"tenant_id": "acme", "user_id": "ann"}))));
        assert!(!s.matches(Some(&json!({"tenant_id": "acme", "user_id": "bob"}))));
        assert!(!s.matches(Some(&json!({"tenant_id": "acme"}))));
        assert_eq!(s.to_string(), "tenants=acme;users=ann");
    }

    #[test]
    fn no_list_is_global() {
        let s = Scope::default();
        assert!(s.is_global());
        assert!(s.matches(None));
        assert_eq!(s.to_string(), "global");
    }

    #[test]
    fn unknown_keys_and_empty_lists_are_refused() {
        let unknown = serde_json::from_value::<Scope>(json!({"agent": ["a1"]}));
        assert!(
            unknown
                .unwrap_err()
                .to_string()
                .contains("unknown field `agent`")
        );
        let empty = scope(json!({"sessions": []}));
        assert_eq!(empty.validate(), Err(ScopeError::EmptyList("sessions")));
    }

    #[test]
    fn shown_as_its_lists() {
        let s = scope(json!({"agents": ["a1", "a2"], "sessions": ["s-1"]}));
        assert_eq!(s.to_string(), "agents=a1,a2;sessions=s-1");
    }
}
