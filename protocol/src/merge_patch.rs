//! RFC 7386 JSON Merge Patch: how a `modify` result changes params.
//!
//! A patch names only what it changes: objects merge key by key, `null`
//! deletes a key, anything else (arrays included) replaces. A full params
//! object is a valid patch too, which is why PicoClaw hooks that send the
//! whole object back keep working, and why a hook that forgets a field no
//! longer zeroes it.

use serde_json::{Map, Value};

/// Applies `patch` to `target` in place, as RFC 7386 section 2 defines.
pub fn apply_merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_obj) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target_obj) = target else {
        return;
    };
    for (key, value) in patch_obj {
        if value.is_null() {
            target_obj.remove(key);
        } else {
            let slot = target_obj.entry(key.clone()).or_insert(Value::Null);
            apply_merge_patch(slot, value);
        }
    }
}

/// Returns `target` with `patch` applied, leaving the input untouched.
pub fn merged(target: &Value, patch: &Value) -> Value {
    let mut out = target.clone();
    apply_merge_patch(&mut out, patch);
    out
}

/// The merge patch that turns `from` into `to`, the inverse of
/// [`apply_merge_patch`]: only what changed, nested objects key by key, a
/// removed key as `null`. `None` when the two are equal.
pub fn merge_patch_between(from: &Value, to: &Value) -> Option<Value> {
    if from == to {
        return None;
    }
    let (Value::Object(a), Value::Object(b)) = (from, to) else {
        return Some(to.clone());
    };
    let mut patch = Map::new();
    for k in a.keys().filter(|k| !b.contains_key(*k)) {
        patch.insert(k.clone(), Value::Null);
    }
    for (k, v) in b {
        let change = match a.get(k) {
            Some(old) => merge_patch_between(old, v),
            None => Some(v.clone()),
        };
        patch.extend(change.map(|c| (k.clone(), c)));
    }
    Some(Value::Object(patch))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// RFC 7386 Appendix A, every row.
    #[test]
    fn rfc7386_appendix_a() {
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (
                json!({"a":"b","b":"c"}),
                json!({"a":null}),
                json!({"b":"c"}),
            ),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (
                json!({"a":{"b":"c"}}),
                json!({"a":{"b":"d","c":null}}),
                json!({"a":{"b":"d"}}),
            ),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"a":"foo"}), json!(null), json!(null)),
            (json!({"a":"foo"}), json!("bar"), json!("bar")),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (
                json!({}),
                json!({"a":{"bb":{"ccc":null}}}),
                json!({"a":{"bb":{}}}),
            ),
        ];
        for (target, patch, expected) in cases {
            assert_eq!(
                merged(&target, &patch),
                expected,
                "patch {patch} over {target}"
            );
        }
    }

    /// The RFC's section 3 example: a nested change, a deletion, an array
    /// replaced, a key added.
    #[test]
    fn rfc7386_section_3_example() {
        let target = json!({
            "title": "Goodbye!",
            "author": {"givenName": "John", "familyName": "Doe"},
            "tags": ["example", "sample"],
            "content": "This will be unchanged"
        });
        let patch = json!({
            "title": "Hello!",
            "phoneNumber": "+01-123-456-7890",
            "author": {"familyName": null},
            "tags": ["example"]
        });
        let expected = json!({
            "title": "Hello!",
            "author": {"givenName": "John"},
            "tags": ["example"],
            "content": "This will be unchanged",
            "phoneNumber": "+01-123-456-7890"
        });
        assert_eq!(merged(&target, &patch), expected);
    }

    #[test]
    fn a_full_object_patch_keeps_fields_it_repeats() {
        let params = json!({"tool":"ls","arguments":{"path":"/tmp"},"meta":{"turn_id":"t1"}});
        let full = json!({"tool":"ls","arguments":{"path":"/tmp","human":true}});
        let out = merged(&params, &full);
        assert_eq!(out["meta"]["turn_id"], "t1");
        assert_eq!(out["arguments"], json!({"path":"/tmp","human":true}));
    }

    /// From docker-agent pkg/hooks/pipeline_test.go
    /// TestPipelineToolInputPatchesCompose: a docker-agent group answers
    /// its composed rewrite as one patch, keeping the keys nobody touched.
    #[test]
    fn the_patch_is_the_whole_rewrite_against_the_original() {
        let from = json!({"tool": "bash", "arguments": {"command": "x", "cwd": "work", "n": {"keep": true}}});
        let to = json!({"tool": "bash", "arguments": {"command": "ls -l -h", "cwd": "work", "n": {"keep": true}}});
        assert_eq!(
            merge_patch_between(&from, &to),
            Some(json!({"arguments": {"command": "ls -l -h"}}))
        );
        let mut back = from.clone();
        apply_merge_patch(
            &mut back,
            &merge_patch_between(&from, &to).unwrap_or_default(),
        );
        assert_eq!(back, to);
        assert_eq!(merge_patch_between(&from, &from), None);
    }
}
