//! `--since` as `hookhost audit query` and the console's audit search
//! read it: a UTC time as the records spell it, or a span back from now.

use std::time::{Duration, SystemTime};

/// `--since`: a UTC time as the records spell it (any precision), or a
/// span back from now (`90s`, `15m`, `2h`, `7d`).
pub fn since_time(text: &str) -> Result<String, String> {
    let unit = match text.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3600,
        Some('d') => 86_400,
        _ => return Ok(text.to_string()),
    };
    let Ok(n) = text[..text.len() - 1].parse::<u64>() else {
        return Ok(text.to_string());
    };
    let back = Duration::from_secs(n.saturating_mul(unit));
    let at = SystemTime::now()
        .checked_sub(back)
        .ok_or_else(|| format!("--since {text}: before the epoch"))?;
    Ok(hookhost::protocol::time::rfc3339(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_spans_back_from_now_and_passes_times_on() {
        assert_eq!(since_time("2026-11-27"), Ok("2026-11-27".to_string()));
        let hour_ago = since_time("1h").unwrap_or_default();
        let now = hookhost::protocol::time::rfc3339(SystemTime::now());
        assert!(hour_ago < now && hour_ago.len() == now.len(), "{hour_ago}");
        assert_eq!(since_time("xh"), Ok("xh".to_string()));
    }
}
