//! Edits of a settings file's `hooks` object, in either shape: put
//! hookhost's entries in (in place of its old ones, so a second install
//! changes nothing), take them out, or take the user's own out for
//! `--adopt`. Every other key, event and handler stays where it was.

use hookhost::Dialect;
use serde_json::{Map, Value};

use super::route::{Route, is_ours};
use super::target::Shape;

/// Handlers taken out of a file, by event: matcher groups holding only
/// them, or flat entries.
pub(super) type Taken = Vec<(String, Vec<Value>)>;

/// What an install did to the file's events.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tally {
    /// Events that had no hookhost entry.
    pub(super) added: usize,
    /// Events whose hookhost entry was different (another binary, URL or
    /// failure setting).
    pub(super) updated: usize,
    /// Events hookhost no longer routes whose entry was removed.
    pub(super) removed: usize,
}

/// Writes `routes` into `root`'s `hooks`: each event's old hookhost entry
/// is replaced where it stood (or the new one appended), other hooks
/// untouched; hookhost's entries under events not routed are removed.
pub(super) fn install(
    root: &mut Map<String, Value>,
    shape: Shape,
    agent: Dialect,
    routes: &[Route],
) -> Result<Tally, String> {
    let hooks = hooks_mut(root, true)?.ok_or("no hooks object")?;
    let ours = |h: &Value| is_ours(agent, h);
    let mut tally = Tally::default();
    let stale: Vec<String> = hooks
        .keys()
        .filter(|k| !routes.iter().any(|r| r.event == k.as_str()))
        .cloned()
        .collect();
    for event in stale {
        if !take_from(hooks, &event, shape, &ours)?.is_empty() {
            tally.removed += 1;
        }
    }
    for route in routes {
        let list = list_mut(hooks, route.event, true)?;
        let before = text(list);
        let (taken, at) = take(list, shape, &ours);
        list.insert(at.unwrap_or(list.len()), route.item.clone());
        if taken.is_empty() {
            tally.added += 1;
        } else if text(list) != before {
            tally.updated += 1;
        }
    }
    Ok(tally)
}

/// A list as compact JSON, key order included.
fn text(list: &[Value]) -> String {
    Value::Array(list.to_vec()).to_string()
}

/// Removes hookhost's entries; a list, or the `hooks` object, that held
/// only them goes too. Returns how many events had one.
pub(super) fn uninstall(
    root: &mut Map<String, Value>,
    shape: Shape,
    agent: Dialect,
) -> Result<usize, String> {
    let taken = take_all(root, shape, &|_, h| is_ours(agent, h))?;
    Ok(taken.len())
}

/// Takes the handlers `pick` (given the event and the handler) selects
/// out of every event, as `(event, items)` in file order (the items are
/// matcher groups holding only the taken handlers, or flat entries);
/// lists and a `hooks` object left empty by it are removed.
pub(super) fn take_all(
    root: &mut Map<String, Value>,
    shape: Shape,
    pick: &dyn Fn(&str, &Value) -> bool,
) -> Result<Taken, String> {
    let Some(hooks) = hooks_mut(root, false)? else {
        return Ok(Vec::new());
    };
    let events: Vec<String> = hooks.keys().cloned().collect();
    let mut out = Vec::new();
    for event in events {
        let taken = take_from(hooks, &event, shape, &|h| pick(&event, h))?;
        if !taken.is_empty() {
            out.push((event, taken));
        }
    }
    if !out.is_empty() && hooks.is_empty() {
        root.shift_remove("hooks");
    }
    Ok(out)
}

/// [`take`] on one event's list, which goes if it is left empty.
fn take_from(
    hooks: &mut Map<String, Value>,
    event: &str,
    shape: Shape,
    pick: &dyn Fn(&Value) -> bool,
) -> Result<Vec<Value>, String> {
    // Keys that are settings, not events (Gemini's `disabled` list,
    // Codex's `state` table), hold no handlers: nothing to take.
    let Some(Value::Array(list)) = hooks.get_mut(event) else {
        return Ok(Vec::new());
    };
    let (taken, _) = take(list, shape, pick);
    if !taken.is_empty() && list.is_empty() {
        hooks.shift_remove(event);
    }
    Ok(taken)
}

/// Takes what `pick` selects out of one event's list. Returns the taken
/// items and the index where the first of them stood.
fn take(
    list: &mut Vec<Value>,
    shape: Shape,
    pick: &dyn Fn(&Value) -> bool,
) -> (Vec<Value>, Option<usize>) {
    let mut taken = Vec::new();
    let mut at = None;
    let mut kept = Vec::with_capacity(list.len());
    for item in list.drain(..) {
        let (took, stays) = split(item, shape, pick);
        if let Some(t) = took {
            at.get_or_insert(kept.len());
            taken.push(t);
        }
        kept.extend(stays);
    }
    *list = kept;
    (taken, at)
}

/// One item of a list, split into what `pick` takes and what stays. A
/// matcher group keeps its other keys in both halves.
fn split(
    item: Value,
    shape: Shape,
    pick: &dyn Fn(&Value) -> bool,
) -> (Option<Value>, Option<Value>) {
    if shape == Shape::Flat {
        return if pick(&item) {
            (Some(item), None)
        } else {
            (None, Some(item))
        };
    }
    let Value::Object(mut group) = item else {
        return (None, Some(item));
    };
    let handlers = match group.get_mut("hooks") {
        Some(Value::Array(handlers)) => std::mem::take(handlers),
        _ => return (None, Some(Value::Object(group))),
    };
    let (picked, rest): (Vec<Value>, Vec<Value>) = handlers.into_iter().partition(|h| pick(h));
    let with = |mut g: Map<String, Value>, hs: Vec<Value>| {
        g.insert("hooks".into(), Value::Array(hs));
        Value::Object(g)
    };
    match (picked.is_empty(), rest.is_empty()) {
        (true, _) => (None, Some(with(group, rest))),
        (false, true) => (Some(with(group, picked)), None),
        (false, false) => (Some(with(group.clone(), picked)), Some(with(group, rest))),
    }
}

/// The `hooks` object, created (at the end) when `create` and missing.
fn hooks_mut(
    root: &mut Map<String, Value>,
    create: bool,
) -> Result<Option<&mut Map<String, Value>>, String> {
    if create && root.get("hooks").is_none_or(Value::is_null) {
        root.insert("hooks".into(), Value::Object(Map::new()));
    }
    match root.get_mut("hooks") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(hooks)) => Ok(Some(hooks)),
        Some(_) => Err("key `hooks` is not an object of events".into()),
    }
}

/// One event's list, created (at the end) when `create` and missing.
fn list_mut<'a>(
    hooks: &'a mut Map<String, Value>,
    event: &str,
    create: bool,
) -> Result<&'a mut Vec<Value>, String> {
    if create && !hooks.contains_key(event) {
        hooks.insert(event.into(), Value::Array(Vec::new()));
    }
    match hooks.get_mut(event) {
        Some(Value::Array(list)) => Ok(list),
        _ => Err(format!("key `hooks.{event}` is not a list")),
    }
}

/// Every handler of `root`'s `hooks`, with its event, in file order.
pub(super) fn handlers(root: &Map<String, Value>, shape: Shape) -> Vec<(String, &Value)> {
    let Some(Value::Object(hooks)) = root.get("hooks") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, list) in hooks {
        let Value::Array(list) = list else {
            continue;
        };
        for item in list {
            match (shape, item.get("hooks")) {
                (Shape::Flat, _) => out.push((event.clone(), item)),
                (Shape::Grouped, Some(Value::Array(hs))) => {
                    out.extend(hs.iter().map(|h| (event.clone(), h)));
                }
                (Shape::Grouped, _) => {}
            }
        }
    }
    out
}

/// How many handlers `items` (as [`take_all`] returns them) hold.
pub(super) fn count(items: &Taken, shape: Shape) -> usize {
    let each = |item: &Value| match shape {
        Shape::Flat => 1,
        Shape::Grouped => item
            .get("hooks")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
    };
    items.iter().flat_map(|(_, list)| list).map(each).sum()
}

/// Appends `items` to the lists of `root`'s `hooks`, event by event
/// (what `--adopt` does to the adopted file when it already exists).
pub(super) fn append(root: &mut Map<String, Value>, items: &Taken) -> Result<(), String> {
    let hooks = hooks_mut(root, true)?.ok_or("no hooks object")?;
    for (event, taken) in items {
        list_mut(hooks, event, true)?.extend(taken.iter().cloned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn a_mixed_group_keeps_its_keys_on_both_sides() {
        let mut list =
            vec![json!({"matcher": "Bash", "hooks": [{"command": "a"}, {"command": "b"}]})];
        let (taken, at) = take(&mut list, Shape::Grouped, &|h| h["command"] == "a");
        assert_eq!(at, Some(0));
        assert_eq!(
            taken,
            [json!({"matcher": "Bash", "hooks": [{"command": "a"}]})]
        );
        assert_eq!(
            list,
            [json!({"matcher": "Bash", "hooks": [{"command": "b"}]})]
        );
    }

    #[test]
    fn emptied_lists_and_hooks_go_but_other_keys_stay() {
        let mut root =
            obj(json!({"a": 1, "hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}, "z": 2}));
        let taken = take_all(&mut root, Shape::Grouped, &|_, _| true).unwrap();
        assert_eq!(taken.len(), 1);
        assert_eq!(Value::Object(root).to_string(), r#"{"a":1,"z":2}"#);
    }
}
