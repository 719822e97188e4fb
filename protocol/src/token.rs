//! The shared-token check both ends of a network hop make the same way:
//! `hookhost serve --listen --token-file` (spec/sidecar.md §1.2) and the
//! SDKs' `--listen --token-file` (spec/protocol.md §2.2). Pure functions,
//! so the host and the SDKs cannot drift apart on what they accept.

/// The credentials of an `Authorization: Bearer CREDENTIALS` value, the
/// scheme in any case, surrounding spaces and tabs trimmed.
pub fn bearer(value: &[u8]) -> Option<&[u8]> {
    let value = trim_ows(value);
    let space = value.iter().position(|&b| is_ows(b))?;
    let (scheme, rest) = value.split_at(space);
    scheme
        .eq_ignore_ascii_case(b"bearer")
        .then(|| trim_ows(rest))
}

/// Whether `presented` is `token`, in a time that depends on the lengths
/// only, so a timing probe learns nothing of where they differ.
pub fn token_matches(presented: &[u8], token: &[u8]) -> bool {
    if presented.len() != token.len() {
        return false;
    }
    let diff = presented
        .iter()
        .zip(token)
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// HTTP's optional whitespace: spaces and tabs.
fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// `value` without HTTP's optional whitespace (spaces and tabs) around
/// it, as header values are compared.
pub fn trim_ows(value: &[u8]) -> &[u8] {
    let start = value
        .iter()
        .position(|&b| !is_ows(b))
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|&b| !is_ows(b))
        .map_or(start, |i| i + 1);
    &value[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_takes_the_scheme_in_any_case_and_trims() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"  bEaReR \t abc  "), Some(&b"abc"[..]));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bearer"), None);
        assert_eq!(bearer(b"Bearerabc"), None);
    }

    #[test]
    fn a_token_matches_only_itself() {
        assert!(token_matches(b"token", b"token"));
        assert!(!token_matches(b"token", b"tokem"));
        assert!(!token_matches(b"toke", b"token"));
        assert!(!token_matches(b"", b"token"));
    }
}
