//! What Claude Code checks before it sends an http hook, which the
//! canary (a POST of its own) would not meet: the managed
//! `allowedHttpHookUrls` (a hook whose URL matches no pattern is not sent,
//! and under `onFailure: "block"` every refusable event is then refused),
//! and the managed `httpHookAllowedEnvVars` (a header variable not listed
//! is sent empty, and the gateway refuses the empty token). For hooks
//! that managed settings define, only the managed files' lists count.

use serde_json::Value;

use super::layers::Layer;

/// Why Claude Code would not send `handler` (hookhost's managed http
/// hook) as written.
pub(super) fn problems(layers: &[Layer], handler: &Value) -> Vec<String> {
    let url = handler["url"].as_str().unwrap_or("");
    let mut out = Vec::new();
    if let Some(patterns) = managed_list(layers, "allowedHttpHookUrls") {
        if !patterns.iter().any(|p| glob(p, url)) {
            out.push(format!(
                "the managed allowedHttpHookUrls ({}) does not match {url}: Claude Code does \
                 not send the hook, and refuses every event it guards",
                patterns.join(", ")
            ));
        }
    }
    if let Some(vars) = managed_list(layers, "httpHookAllowedEnvVars") {
        let wanted = handler["allowedEnvVars"].as_array().into_iter().flatten();
        for var in wanted.filter_map(Value::as_str) {
            if !vars.iter().any(|v| v == var) {
                out.push(format!(
                    "the managed httpHookAllowedEnvVars does not list {var}: Claude Code sends \
                     its header empty"
                ));
            }
        }
    }
    out
}

/// The union of `key`'s lists over the managed files; `None` when none
/// sets it (no restriction).
fn managed_list(layers: &[Layer], key: &str) -> Option<Vec<String>> {
    let lists: Vec<&Vec<Value>> = layers
        .iter()
        .filter(|l| l.managed)
        .filter_map(|l| l.get(key)?.as_array())
        .collect();
    if lists.is_empty() {
        return None;
    }
    let items = lists.into_iter().flatten().filter_map(Value::as_str);
    Some(items.map(String::from).collect())
}

/// Whether `text` matches `pattern`, where `*` stands for any run of
/// characters (Claude Code's URL patterns).
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(split) => split,
        None => return text.is_empty(),
    };
    let Some(mut left) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for part in middle {
        match left.find(part) {
            Some(at) => left = &left[at + part.len()..],
            None => return false,
        }
    }
    left.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn url_patterns_match_as_claude_code_reads_them() {
        assert!(glob(
            "https://hooks.corp/*",
            "https://hooks.corp/hooks/claude-code"
        ));
        assert!(glob(
            "https://*.corp/*",
            "https://hooks.corp/hooks/claude-code"
        ));
        assert!(glob(
            "http://127.0.0.1:7070/hooks/claude-code",
            "http://127.0.0.1:7070/hooks/claude-code"
        ));
        assert!(!glob(
            "https://hooks.corp/*",
            "http://hooks.corp/hooks/claude-code"
        ));
        assert!(!glob("https://a/*/x", "https://a/b/y"));
        assert!(!glob("https://a", "https://ab"));
    }
}
