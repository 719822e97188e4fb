//! JSON in one HTTP header line: every character past printable ASCII
//! written as a `\u` escape (a JSON string reads it back unchanged), so
//! any value fits where a header may carry only visible ASCII.

use serde_json::Value;

/// `value` as compact JSON of printable ASCII only.
pub fn ascii_json(value: &Value) -> String {
    let json = value.to_string();
    let mut line = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            ' '..='~' => line.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    line.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_text_reads_back_from_one_ascii_line() {
        let v = serde_json::json!({"reason": "née\r\nX-Evil: 1 🦀"});
        let line = ascii_json(&v);
        assert!(line.bytes().all(|b| (b' '..=b'~').contains(&b)), "{line}");
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), v);
    }
}
