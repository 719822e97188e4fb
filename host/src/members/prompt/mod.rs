//! Prompt hooks: a language model asked for a hook's decision, through
//! the provider's HTTP API with the answer forced into a `decide` tool
//! call (never read from free text).
//!
//! An [`Evaluator`] is the runner of a command hook whose config carries a
//! [`ModelConfig`]: the command hook selects the call and renders the
//! event in its dialect as usual; the evaluator asks the model and hands
//! back the [`Reply`] a script would have printed. Around the request,
//! in this order: the cache (an identical question within the TTL is
//! answered from memory), the spend caps (per session, per process,
//! counted in tokens), the concurrency limit, then the POST within the
//! hook's deadline. Every way of not getting a decision is a
//! [`CallError`], decided by the hook's `on_error`: `block` unless set
//! otherwise, so a guard that could not ask its model refuses. A gateway's
//! replicas share the session caps and the cache through the host's
//! state store ([`Evaluator::share`]).

mod cache;
mod decide;
mod provider;
mod spend;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::config::{ModelConfig, expand_env};
use crate::dialect::reply::Reply;
use crate::dialect::spec::Event;
use crate::error::CallError;
use crate::observe::usage::{Answer, ModelUsage};
use crate::policy::deadline::Deadline;
use crate::policy::shared::StateStore;
use cache::Cache;
use decide::{Decision, Form};
use provider::{Endpoint, Failure, Tokens};
use spend::Held;

/// What a prompt hook has cost and saved since it started.
#[derive(Debug, Default)]
pub(crate) struct ModelCounters {
    /// Requests sent to the provider (a retried 429 counts once).
    pub(crate) requests: AtomicU64,
    /// Calls answered from the cache.
    pub(crate) cache_hits: AtomicU64,
    /// Prompt tokens, as the provider counted them.
    pub(crate) tokens_in: AtomicU64,
    /// Answer tokens.
    pub(crate) tokens_out: AtomicU64,
    /// Calls refused because a spend cap was reached.
    pub(crate) capped: AtomicU64,
}

/// One prompt hook's model, bounds and memory.
#[derive(Debug)]
pub(crate) struct Evaluator {
    name: String,
    config: ModelConfig,
    /// The endpoint, or why `base_url` cannot be used (an unset variable,
    /// a bad URL): then every call fails and `on_error` answers, so a
    /// guard whose endpoint is wrong refuses rather than disappearing
    /// from the chain.
    endpoint: Result<Endpoint, String>,
    cache: Cache,
    spend: spend::Spend,
    permits: Semaphore,
    pub(crate) counters: ModelCounters,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Evaluator {
    /// Sets up the endpoint once. A `base_url` that cannot be used (or
    /// names an unset variable) is logged here and fails every call.
    pub(crate) fn new(name: &str, config: &ModelConfig) -> Evaluator {
        let endpoint = expand_env(&config.base_url, &env)
            .map_err(|e| format!("`base_url`: {e}"))
            .and_then(|base| Endpoint::new(config.provider, &base));
        if let Err(why) = &endpoint {
            tracing::error!(hook = %name, "prompt hook `{name}` cannot reach its model: {why}");
        }
        Evaluator {
            name: name.to_string(),
            config: config.clone(),
            endpoint,
            cache: Cache::new(name, Duration::from_millis(config.cache_ttl_ms)),
            spend: spend::Spend::new(name, config.session_token_cap, config.process_token_cap),
            permits: Semaphore::new(config.max_concurrency.max(1)),
            counters: ModelCounters::default(),
        }
    }

    /// The prompt with the event in place of `$ARGUMENTS`, or after it.
    fn render(&self, input: &Value) -> String {
        let event = input.to_string();
        match self.config.prompt.contains("$ARGUMENTS") {
            true => self.config.prompt.replace("$ARGUMENTS", &event),
            false => format!("{}\n\nThe event:\n{event}", self.config.prompt),
        }
    }

    /// Asks the model about `input` (the event as the hook's dialect
    /// renders it) at `event`, charging `session`, by `limit`: the reply a
    /// command hook would have given, or why there is none, with what the
    /// model spent on it.
    pub(crate) async fn decide(
        &self,
        event: &Event,
        input: &Value,
        session: &str,
        limit: Instant,
    ) -> Answer<Reply> {
        let form = Form::of(event);
        let size = input.to_string().len();
        if size > self.config.max_input_bytes {
            return Answer::from(Err(CallError::Model(format!(
                "prompt hook `{}`: the event is {size} bytes, over max_input_bytes = {}; \
                 it is not sent (a guard never judges a cut event)",
                self.name, self.config.max_input_bytes
            ))));
        }
        let user = self.render(input);
        let key = format!("{form:?}\n{}\n{user}", self.config.model);
        if let Some(d) = self.cache.get(&key).await {
            self.counters.cache_hits.fetch_add(1, Ordering::Relaxed);
            let usage = Some(self.usage(Tokens::default(), true));
            return Answer {
                reply: Ok(d.reply(&self.name)),
                usage,
            };
        }
        if let Err(held) = self.spend.check(session).await {
            let why = match held {
                Held::Capped(why) => {
                    self.counters.capped.fetch_add(1, Ordering::Relaxed);
                    why
                }
                Held::Unknown(why) => why,
            };
            let why = format!("prompt hook `{}`: {why}", self.name);
            return Answer::from(Err(CallError::Model(why)));
        }
        let deadline = Deadline::until(limit);
        let _permit = match deadline.bound(self.permits.acquire()).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) => return Answer::from(Err(CallError::Unavailable("shut down".into()))),
            Err(expired) => return Answer::from(Err(expired)),
        };
        let Answer { reply, usage } = self.ask(form, &user, session, deadline).await;
        let reply = reply.map(|decision| {
            tracing::debug!(hook = %self.name, decision = decision.name(), "prompt hook decided");
            self.cache.put(key, decision.clone());
            decision.reply(&self.name)
        });
        Answer { reply, usage }
    }

    /// One evaluation by the provider, its tokens charged and returned
    /// whether or not the answer is usable.
    async fn ask(
        &self,
        form: Form,
        user: &str,
        session: &str,
        deadline: Deadline,
    ) -> Answer<Decision> {
        let request = self.request(form, user);
        let (endpoint, body, key) = match request {
            Ok(request) => request,
            Err(e) => return Answer::from(Err(e)),
        };
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let protocol =
            |why: String| CallError::Protocol(format!("prompt hook `{}`: {why}", self.name));
        match endpoint.ask(&body, key.as_deref(), deadline.at()).await {
            Ok((calls, tokens)) => Answer {
                reply: Decision::strictest(form, &calls).map_err(protocol),
                usage: Some(self.charge(session, tokens).await),
            },
            Err(Failure::Malformed(why, tokens)) => Answer {
                reply: Err(protocol(why)),
                usage: Some(self.charge(session, tokens).await),
            },
            Err(Failure::Timeout) => Answer::from(Err(deadline.expired())),
            Err(Failure::Failed(why)) => Answer::from(Err(CallError::Model(why))),
        }
    }

    /// The endpoint to ask, the request's body and the API key, or why
    /// the model cannot be asked.
    fn request(
        &self,
        form: Form,
        user: &str,
    ) -> Result<(&Endpoint, Value, Option<String>), CallError> {
        let key = match &self.config.api_key {
            Some(t) => {
                Some(expand_env(t, &env).map_err(|e| CallError::Model(format!("`api_key`: {e}")))?)
            }
            None => None,
        };
        let endpoint = self
            .endpoint
            .as_ref()
            .map_err(|why| CallError::Model(format!("prompt hook `{}`: {why}", self.name)))?;
        let body = endpoint.body(&self.config.model, self.config.max_tokens, form, user);
        Ok((endpoint, body, key))
    }

    /// Charges `tokens` to `session` and the hook's figures; what the
    /// call's record is given.
    async fn charge(&self, session: &str, tokens: Tokens) -> ModelUsage {
        self.spend.charge(session, tokens.total()).await;
        let c = &self.counters;
        c.tokens_in.fetch_add(tokens.input, Ordering::Relaxed);
        c.tokens_out.fetch_add(tokens.output, Ordering::Relaxed);
        self.usage(tokens, false)
    }

    /// Keeps its session spend and cached decisions in `store` from now
    /// on, as every replica does.
    pub(crate) fn share(&self, store: &Arc<dyn StateStore>) {
        let _ = self.spend.shared.set(store.clone());
        let _ = self.cache.shared.set(store.clone());
    }

    fn usage(&self, tokens: Tokens, cached: bool) -> ModelUsage {
        ModelUsage {
            model: self.config.model.clone(),
            tokens_in: tokens.input,
            tokens_out: tokens.output,
            cached,
        }
    }
}
