//! RFC 7386 JSON Merge Patch, as `modify` results change params.
//!
//! Proves, for any target and patch: `apply_merge_patch` never panics and
//! agrees with `merged`; the result is what RFC 7386 section 2 says, checked
//! key by key (a `null` in the patch removes its key, an object merges, any
//! other value replaces, keys the patch does not name keep the target's
//! value); and applying the same patch again changes nothing (idempotence).
//!
//! Input: the target's JSON, `\n`, the patch's JSON.
#![no_main]

use hookhost_protocol::apply_merge_patch;
use hookhost_protocol::merge_patch::merged;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Checks `result` against RFC 7386 for `target` patched with `patch`.
fn check(target: &Value, patch: &Value, result: &Value) {
    let Value::Object(patch) = patch else {
        assert_eq!(result, patch, "a non-object patch replaces the target");
        return;
    };
    let Value::Object(result) = result else {
        panic!("an object patch gave {result}");
    };
    let empty = serde_json::Map::new();
    let target = target.as_object().unwrap_or(&empty);
    for (key, value) in target {
        if !patch.contains_key(key) {
            assert_eq!(
                result.get(key),
                Some(value),
                "untouched key {key:?} changed"
            );
        }
    }
    for (key, value) in patch {
        match (value, result.get(key)) {
            (Value::Null, None) => {}
            (Value::Null, Some(v)) => panic!("key {key:?} set to null in the patch is {v}"),
            (_, None) => panic!("key {key:?} of the patch is missing"),
            (_, Some(got)) => check(target.get(key).unwrap_or(&Value::Null), value, got),
        }
    }
    for key in result.keys() {
        assert!(
            target.contains_key(key) || patch.contains_key(key),
            "extra key {key:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == b'\n') else {
        return;
    };
    let (Ok(target), Ok(patch)) = (
        serde_json::from_slice::<Value>(&data[..split]),
        serde_json::from_slice::<Value>(&data[split + 1..]),
    ) else {
        return;
    };
    let mut once = target.clone();
    apply_merge_patch(&mut once, &patch);
    assert_eq!(once, merged(&target, &patch));
    check(&target, &patch, &once);
    let mut twice = once.clone();
    apply_merge_patch(&mut twice, &patch);
    assert_eq!(twice, once, "applying the patch twice changed the result");
});
