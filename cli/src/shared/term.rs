//! Text a hook (or a repository's settings file) supplied, made safe to
//! print on a terminal: a hook's reason, error or stderr tail can carry
//! escape sequences that move the cursor, retitle the window, rewrite
//! what was printed before or hide a line. `demo`, `check` and the other
//! subcommands print such text through [`sanitize`].

use std::borrow::Cow;

/// `text` with every control character except `\n` and `\t` replaced by
/// a visible escape (`\x1b` as `\u{1b}`, DEL as `\u{7f}`, the C1 controls
/// likewise); borrowed when there was nothing to replace.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        let hostile = "deny\x1b[2J\x1b]0;pwned\x07\r\u{9b}31mX\x7f";
        let shown = sanitize(hostile);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown}");
        assert_eq!(
            shown,
            "deny\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{d}\\u{9b}31mX\\u{7f}"
        );
        assert!(matches!(sanitize("a\tb\nc ✓"), Cow::Borrowed(_)));
    }
}
