//! The two providers' HTTP APIs: the request that forces the `decide`
//! tool call, and the answer read back into the call's arguments and the
//! tokens it cost. One POST per call; a 429 is retried after its
//! `Retry-After` when that still fits the deadline.

use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::decide::{Form, TOOL};
use crate::config::Provider;
use crate::net::{Client, NetError, Policy};
use crate::observe::redact::{display_url, redact};

/// The most a provider's answer may weigh; a decision is a few hundred
/// bytes, so anything near this is not one.
const ANSWER_CAP: usize = 1024 * 1024;
/// 429s retried per call, each after its `Retry-After`.
const MAX_RETRIES: u32 = 2;

/// Tokens one call cost, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    /// Prompt tokens.
    pub(crate) input: u64,
    /// Answer tokens.
    pub(crate) output: u64,
}

impl Tokens {
    pub(crate) fn total(self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

/// How a call to the provider failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// The deadline passed (connecting, waiting, or reading).
    Timeout,
    /// No usable answer; the text says why.
    Failed(String),
    /// An answer that is not the `decide` call, with what it cost.
    Malformed(String, Tokens),
}

/// A configured endpoint.
#[derive(Debug)]
pub(super) struct Endpoint {
    provider: Provider,
    url: hyper::Uri,
    /// The URL as any message shows it: no userinfo, no `?key=` value
    /// (`observe::redact::display_url`), since a failure's text can reach
    /// the model, the agent and the log.
    shown: String,
    client: Client,
}

impl Endpoint {
    /// The endpoint under `base_url` (its `${env:NAME}` already resolved).
    pub(super) fn new(provider: Provider, base_url: &str) -> Result<Endpoint, String> {
        let base = base_url.trim_end_matches('/');
        let path = match provider {
            Provider::Openai => "/chat/completions",
            Provider::Anthropic if base.ends_with("/v1") => "/messages",
            Provider::Anthropic => "/v1/messages",
        };
        let url: hyper::Uri = format!("{base}{path}")
            .parse()
            .map_err(|e| format!("`base_url` {:?}: {e}", display_url(base_url)))?;
        if !matches!(url.scheme_str(), Some("http" | "https")) {
            return Err(format!(
                "`base_url` {:?}: not http:// or https://",
                display_url(base_url)
            ));
        }
        Ok(Endpoint {
            provider,
            shown: display_url(&url.to_string()).into_owned(),
            url,
            // The operator's own endpoint, often a model server on this
            // machine or the local network: every allowance on.
            client: Client::new(Policy::LOCAL_OK),
        })
    }

    /// The request body forcing the `decide` call.
    pub(super) fn body(&self, model: &str, max_tokens: u32, form: Form, user: &str) -> Value {
        let (system, schema) = (form.system(), form.schema());
        match self.provider {
            Provider::Openai => json!({
                "model": model,
                "max_tokens": max_tokens,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                "tools": [{"type": "function", "function": {
                    "name": TOOL, "description": "Record the hook's decision.",
                    "parameters": schema}}],
                "tool_choice": {"type": "function", "function": {"name": TOOL}},
            }),
            Provider::Anthropic => json!({
                "model": model,
                "max_tokens": max_tokens,
                "system": system,
                "messages": [{"role": "user", "content": user}],
                "tools": [{"name": TOOL, "description": "Record the hook's decision.",
                    "input_schema": schema}],
                "tool_choice": {"type": "tool", "name": TOOL},
            }),
        }
    }

    /// POSTs `body` and returns every `decide` call's arguments and the
    /// tokens spent, retrying a 429 while its wait fits before `deadline`.
    pub(super) async fn ask(
        &self,
        body: &Value,
        key: Option<&str>,
        deadline: Instant,
    ) -> Result<(Vec<Value>, Tokens), Failure> {
        let bytes = Bytes::from(body.to_string());
        let mut retries = 0;
        loop {
            let exchange = self.post(bytes.clone(), key);
            let (status, wait, answer) = tokio::time::timeout_at(deadline, exchange)
                .await
                .map_err(|_| Failure::Timeout)??;
            if status == hyper::StatusCode::TOO_MANY_REQUESTS {
                let wait = self.rate_limited(wait, deadline, retries)?;
                tokio::time::sleep(wait).await;
                retries += 1;
                continue;
            }
            if !status.is_success() {
                let tail = String::from_utf8_lossy(&answer[..answer.len().min(300)]);
                let tail = redact(&tail);
                return Err(Failure::Failed(format!(
                    "{}: HTTP {status}: {tail}",
                    self.shown
                )));
            }
            return read(self.provider, &answer);
        }
    }

    /// The wait before retrying a 429, or why there is none.
    fn rate_limited(
        &self,
        wait: Option<Duration>,
        deadline: Instant,
        retries: u32,
    ) -> Result<Duration, Failure> {
        let Some(wait) = wait else {
            return Err(Failure::Failed(format!(
                "{}: HTTP 429 (rate limited) without a usable Retry-After",
                self.shown
            )));
        };
        if retries >= MAX_RETRIES || Instant::now() + wait >= deadline {
            return Err(Failure::Failed(format!(
                "{}: HTTP 429 (rate limited); Retry-After {} ms is past the hook's deadline \
                 or its {MAX_RETRIES} retries",
                self.shown,
                wait.as_millis()
            )));
        }
        Ok(wait)
    }

    /// One POST: the status, the `Retry-After` it names, the capped body.
    async fn post(
        &self,
        body: Bytes,
        key: Option<&str>,
    ) -> Result<(hyper::StatusCode, Option<Duration>, Bytes), Failure> {
        let mut req = hyper::Request::post(self.url.clone())
            .header(hyper::header::CONTENT_TYPE, "application/json");
        req = match (self.provider, key) {
            (Provider::Openai, Some(k)) => req.header("authorization", format!("Bearer {k}")),
            (Provider::Anthropic, Some(k)) => req.header("x-api-key", k),
            (_, None) => req,
        };
        if self.provider == Provider::Anthropic {
            req = req.header("anthropic-version", "2023-06-01");
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| Failure::Failed(format!("cannot build the request: {e}")))?;
        let resp = self
            .client
            .send(req, ANSWER_CAP)
            .await
            .map_err(|e| match e {
                NetError::TooLarge { cap } => {
                    Failure::Failed(format!("{}: the answer is over {cap} bytes", self.shown))
                }
                other => {
                    Failure::Failed(redact(&format!("POST {}: {other}", self.shown)).into_owned())
                }
            })?;
        Ok((resp.status, retry_after(&resp.headers), resp.body))
    }
}

/// `Retry-After` in seconds (whole or fractional); an HTTP date is not
/// honoured (the wait is then unknown, and the call fails).
fn retry_after(headers: &hyper::HeaderMap) -> Option<Duration> {
    let text = headers.get(hyper::header::RETRY_AFTER)?.to_str().ok()?;
    let secs: f64 = text.trim().parse().ok()?;
    (0.0..86_400.0)
        .contains(&secs)
        .then(|| Duration::from_secs_f64(secs))
}

/// Every `decide` call's arguments (at least one) and the tokens, from a
/// 2xx answer.
fn read(provider: Provider, answer: &[u8]) -> Result<(Vec<Value>, Tokens), Failure> {
    let v: Value = serde_json::from_slice(answer).map_err(|e| {
        Failure::Malformed(format!("the answer is not JSON: {e}"), Tokens::default())
    })?;
    let tokens = usage(provider, &v);
    let args = match provider {
        Provider::Openai => openai_args(&v),
        Provider::Anthropic => anthropic_args(&v),
    };
    match args {
        Ok(args) => Ok((args, tokens)),
        Err(why) => Err(Failure::Malformed(why, tokens)),
    }
}

fn usage(provider: Provider, v: &Value) -> Tokens {
    let n = |k: &str| v["usage"][k].as_u64().unwrap_or(0);
    match provider {
        Provider::Openai => Tokens {
            input: n("prompt_tokens"),
            output: n("completion_tokens"),
        },
        Provider::Anthropic => Tokens {
            input: n("input_tokens"),
            output: n("output_tokens"),
        },
    }
}

/// The arguments of each `decide` call in an OpenAI answer.
fn openai_args(v: &Value) -> Result<Vec<Value>, String> {
    let calls = v["choices"][0]["message"]["tool_calls"].as_array();
    let decides: Vec<&Value> = calls
        .map(|c| c.iter().filter(|c| c["function"]["name"] == TOOL).collect())
        .unwrap_or_default();
    if decides.is_empty() {
        return Err(format!("the model did not call `{TOOL}`: {}", excerpt(v)));
    }
    decides
        .into_iter()
        .map(|call| {
            let args = call["function"]["arguments"]
                .as_str()
                .ok_or_else(|| format!("`{TOOL}` arguments are not a string"))?;
            serde_json::from_str(args).map_err(|e| format!("`{TOOL}` arguments are not JSON: {e}"))
        })
        .collect()
}

/// The arguments of each `decide` call in an Anthropic answer.
fn anthropic_args(v: &Value) -> Result<Vec<Value>, String> {
    let decides: Vec<Value> = v["content"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter(|b| b["type"] == "tool_use" && b["name"] == TOOL)
                .map(|b| b["input"].clone())
                .collect()
        })
        .unwrap_or_default();
    if decides.is_empty() {
        return Err(format!("the model did not call `{TOOL}`: {}", excerpt(v)));
    }
    Ok(decides)
}

/// The start of an answer, for an error message.
fn excerpt(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32: a `base_url`'s credentials reached the deny reason.
    #[test]
    fn the_shown_url_carries_no_credentials() {
        let e = Endpoint::new(Provider::Openai, "https://u:pw@api.example/v1?key=K1").unwrap();
        assert!(
            !e.shown.contains("pw") && !e.shown.contains("K1"),
            "{}",
            e.shown
        );
        assert!(e.shown.starts_with("https://api.example/v1"), "{}", e.shown);
        let bad = Endpoint::new(Provider::Openai, "ftp://u:pw@x/?key=K1")
            .err()
            .unwrap();
        assert!(!bad.contains("pw") && !bad.contains("K1"), "{bad}");
    }

    #[test]
    fn anthropic_base_urls_with_or_without_v1() {
        for base in ["http://127.0.0.1:9/", "http://127.0.0.1:9/v1"] {
            let e = Endpoint::new(Provider::Anthropic, base).unwrap();
            assert_eq!(e.url.path(), "/v1/messages");
        }
        let e = Endpoint::new(Provider::Openai, "http://h/v1").unwrap();
        assert_eq!(e.url.path(), "/v1/chat/completions");
        assert!(Endpoint::new(Provider::Openai, "ftp://h").is_err());
    }

    #[test]
    fn reads_each_providers_tool_call_and_usage() {
        let openai = json!({"choices": [{"message": {"tool_calls": [{"type": "function",
            "function": {"name": "decide", "arguments": "{\"decision\":\"deny\",\"reason\":\"no\"}"}}]}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 7}});
        let (args, t) = read(Provider::Openai, openai.to_string().as_bytes()).unwrap();
        assert_eq!(
            (args[0]["decision"].as_str(), t.total()),
            (Some("deny"), 57)
        );
        let anthropic = json!({"content": [{"type": "text", "text": "hm"},
            {"type": "tool_use", "id": "t", "name": "decide", "input": {"decision": "allow", "reason": ""}}],
            "usage": {"input_tokens": 40, "output_tokens": 3}});
        let (args, t) = read(Provider::Anthropic, anthropic.to_string().as_bytes()).unwrap();
        assert_eq!((args[0]["decision"].as_str(), t.input), (Some("allow"), 40));
    }

    #[test]
    fn free_text_is_malformed_and_still_costs_tokens() {
        let text = json!({"content": [{"type": "text", "text": "I'd allow it"}],
            "usage": {"input_tokens": 40, "output_tokens": 9}});
        match read(Provider::Anthropic, text.to_string().as_bytes()) {
            Err(Failure::Malformed(why, t)) => {
                assert!(why.contains("did not call"), "{why}");
                assert_eq!(t.total(), 49);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn retry_after_in_seconds_only() {
        let mut h = hyper::HeaderMap::new();
        h.insert("retry-after", "1.5".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
    }
}
