//! A TOML table as JSON and back, so that Codex's `requirements.toml`
//! hooks (the same matcher groups as its `hooks.json`) are edited by the
//! one JSON editor ([`super::shape`]) while the rest of the file keeps its
//! comments and layout ([`toml_edit`]).

use serde_json::{Map, Value};
use toml_edit::{Array, ArrayOfTables, InlineTable, Item, Table};

/// `item` as JSON: tables and arrays of tables become objects and lists;
/// a date is its text.
pub(crate) fn to_json(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(v) => value_to_json(v),
        Item::Table(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.to_string(), to_json(v))).collect())
        }
        Item::ArrayOfTables(a) => {
            Value::Array(a.iter().map(|t| to_json(&Item::Table(t.clone()))).collect())
        }
    }
}

fn value_to_json(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => Value::from(s.value().as_str()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => Value::from(*f.value()),
        toml_edit::Value::Boolean(b) => Value::from(*b.value()),
        toml_edit::Value::Datetime(d) => Value::from(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(value_to_json).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_to_json(v)))
                .collect(),
        ),
    }
}

/// `value` as a TOML item: an object is a table, a non-empty list of
/// objects an array of tables (`[[a.b]]`), anything else a value. JSON's
/// `null`, which TOML lacks, leaves the key out.
pub(super) fn to_item(value: &Value) -> Item {
    match value {
        Value::Object(map) => Item::Table(table(map)),
        Value::Array(list) if !list.is_empty() && list.iter().all(Value::is_object) => {
            let mut tables = ArrayOfTables::new();
            for entry in list.iter().filter_map(Value::as_object) {
                tables.push(table(entry));
            }
            Item::ArrayOfTables(tables)
        }
        other => to_value(other).map_or(Item::None, Item::Value),
    }
}

fn table(map: &Map<String, Value>) -> Table {
    let mut t = Table::new();
    for (k, v) in map {
        let item = to_item(v);
        if !item.is_none() {
            t.insert(k, item);
        }
    }
    t
}

fn to_value(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or(0.0).into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(list) => Array::from_iter(list.iter().filter_map(to_value)).into(),
        Value::Object(map) => {
            let mut t = InlineTable::new();
            for (k, v) in map {
                if let Some(v) = to_value(v) {
                    t.insert(k, v);
                }
            }
            t.into()
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hooks_go_to_toml_and_come_back_the_same() {
        let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "x relay", "timeout": 5}]}],
            "managed_dir": "/etc/codex/hooks"});
        let item = to_item(&hooks);
        let mut doc = toml_edit::DocumentMut::new();
        doc.insert("hooks", item);
        let text = doc.to_string();
        assert!(text.contains("[[hooks.PreToolUse.hooks]]"), "{text}");
        let back: toml_edit::DocumentMut = text.parse().unwrap();
        assert_eq!(to_json(&back["hooks"]), hooks);
    }
}
