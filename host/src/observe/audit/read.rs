//! Reading an audit log back, from any backend: `hookhost audit verify`
//! follows every writer's hash chain over the lines in the order they were
//! written; `hookhost audit query` prints the lines a filter keeps. A
//! database does the filtering in SQL over the stored line's JSON, so both
//! read the same text the chain seals.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde_json::Value;

use super::store::{AuditError, AuditStore};
use crate::observe::chain::{ChainReport, Verifier};

/// What `hookhost audit query` looks for; every field set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditQuery {
    /// The agent's session (`session`).
    pub session: Option<String>,
    /// The outcome: a hook's (`deny_tool`, `continue`, `timeout`, ...) or an
    /// event's decision (`deny`, `allow`, ...), as the record's `outcome`.
    pub decision: Option<String>,
    /// The hook's name (`hook`).
    pub hook: Option<String>,
    /// Records at or after this time: RFC 3339 in UTC at any precision
    /// (`2026-11-27`, `2026-11-27T19:05Z`, `2026-11-27T19:05:00.5Z`).
    pub since: Option<String>,
}

impl AuditQuery {
    /// An empty query: every record.
    pub fn new() -> AuditQuery {
        AuditQuery::default()
    }
}

/// The canonical record time (`2026-11-22T03:25:09.123456Z`) at which a
/// shorter one is padded, so that times compare as text.
const TIME_SHAPE: &str = "0000-01-01T00:00:00.000000";

/// A query made ready for a backend: the exact matches and the lower time
/// bound in the records' own format.
#[derive(Debug, Default)]
pub(super) struct Filter {
    eq: Vec<(&'static str, String)>,
    since: Option<String>,
}

impl Filter {
    fn of(q: &AuditQuery) -> Result<Filter, String> {
        let mut eq = Vec::new();
        for (key, value) in [
            ("session", &q.session),
            ("outcome", &q.decision),
            ("hook", &q.hook),
        ] {
            if let Some(v) = value {
                eq.push((key, v.clone()));
            }
        }
        let since = q.since.as_deref().map(canonical_time).transpose()?;
        Ok(Filter { eq, since })
    }

    /// Whether a JSONL line passes; a line that is not a JSON object
    /// passes no filter (and `verify` reports it).
    fn keeps(&self, line: &str) -> bool {
        if self.eq.is_empty() && self.since.is_none() {
            return true;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return false;
        };
        let text = |k: &str| v.get(k).and_then(Value::as_str);
        self.eq.iter().all(|(k, want)| text(k) == Some(want))
            && self.since.as_deref().is_none_or(|s| text("ts") >= Some(s))
    }

    /// The `WHERE` clause (with a leading space, or empty) and its
    /// arguments, given how the database spells the n-th placeholder and a
    /// member of the stored line. Member names are this module's own,
    /// never a caller's, so they can be spliced in.
    #[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
    pub(super) fn sql(
        &self,
        placeholder: impl Fn(usize) -> String,
        member: impl Fn(&str) -> String,
    ) -> (String, Vec<String>) {
        let mut terms = Vec::new();
        let mut args = Vec::new();
        for (key, value) in &self.eq {
            args.push(value.clone());
            terms.push(format!("{} = {}", member(key), placeholder(args.len())));
        }
        if let Some(since) = &self.since {
            args.push(since.clone());
            terms.push(format!("{} >= {}", member("ts"), placeholder(args.len())));
        }
        if terms.is_empty() {
            return (String::new(), args);
        }
        (format!(" WHERE {}", terms.join(" AND ")), args)
    }
}

/// `t` padded to the records' format: a prefix of it, in UTC (`Z` or
/// nothing after it).
fn canonical_time(t: &str) -> Result<String, String> {
    let bare = t.strip_suffix('Z').unwrap_or(t);
    let fits = bare.len() <= TIME_SHAPE.len()
        && bare.bytes().zip(TIME_SHAPE.bytes()).all(|(c, shape)| {
            if shape.is_ascii_digit() {
                c.is_ascii_digit()
            } else {
                c == shape
            }
        });
    // A date, minutes, seconds, or seconds with a fraction.
    let whole = matches!(bare.len(), 10 | 16 | 19 | 21..=26);
    if !fits || !whole {
        return Err(format!(
            "`{t}` is not a UTC time such as 2026-11-27, 2026-11-27T19:05Z or 2026-11-27T19:05:00.5Z"
        ));
    }
    Ok(format!("{bare}{}Z", &TIME_SHAPE[bare.len()..]))
}

impl AuditStore {
    /// Follows every writer's hash chain through the whole log, in the
    /// order written; the report names the first record that breaks one.
    pub fn verify(&self) -> Result<ChainReport, AuditError> {
        let mut verifier = Verifier::default();
        self.read(&Filter::default(), &mut |line| verifier.feed(line))?;
        Ok(verifier.report())
    }

    /// Calls `each` with every record's line that `query` matches, in the
    /// order written, and returns how many there were.
    pub fn query(&self, query: &AuditQuery, each: &mut dyn FnMut(&str)) -> Result<u64, AuditError> {
        let filter = Filter::of(query).map_err(|why| AuditError::Url {
            url: self.to_string(),
            why,
        })?;
        let mut n = 0;
        self.read(&filter, &mut |line| {
            n += 1;
            each(line);
            true
        })?;
        Ok(n)
    }

    fn read(&self, filter: &Filter, each: &mut dyn FnMut(&str) -> bool) -> Result<(), AuditError> {
        let result = match self {
            AuditStore::Jsonl(path) => read_jsonl(path, filter, each),
            #[cfg(feature = "audit-sqlite")]
            AuditStore::Sqlite(path) => super::sqlite::read(path, filter, each),
            #[cfg(feature = "audit-postgres")]
            AuditStore::Postgres(url) => super::postgres::read(url, filter, each),
            #[allow(unreachable_patterns)]
            _ => Err(std::io::Error::other("this build lacks the backend")),
        };
        result.map_err(|e| self.io_error(e))
    }
}

fn read_jsonl(
    path: &Path,
    filter: &Filter,
    each: &mut dyn FnMut(&str) -> bool,
) -> std::io::Result<()> {
    let file = BufReader::new(File::open(path)?);
    for line in file.lines() {
        let line = line?;
        if filter.keeps(&line) && !each(&line) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_any_precision_compare_as_the_records_do() {
        assert_eq!(
            canonical_time("2026-11-27").as_deref(),
            Ok("2026-11-27T00:00:00.000000Z")
        );
        assert_eq!(
            canonical_time("2026-11-27T19:05Z").as_deref(),
            Ok("2026-11-27T19:05:00.000000Z")
        );
        for bad in [
            "yesterday",
            "2026-11-27T19:05+01:00",
            "27/11/2026",
            "2026-1",
            "2026-11-27T19",
        ] {
            assert!(canonical_time(bad).is_err(), "{bad}");
        }
        let q = AuditQuery {
            hook: Some("guard".into()),
            since: Some("2026-11-27T19:05Z".into()),
            ..AuditQuery::new()
        };
        let f = Filter::of(&q).unwrap_or_default();
        let line = |ts: &str, hook: &str| format!(r#"{{"ts":"{ts}","hook":"{hook}"}}"#);
        assert!(f.keeps(&line("2026-11-27T19:05:00.000001Z", "guard")));
        assert!(!f.keeps(&line("2026-11-27T19:04:59.999999Z", "guard")));
        assert!(!f.keeps(&line("2026-11-27T19:06:00.000000Z", "other")));
        assert!(!f.keeps("not json"));
        #[cfg(any(feature = "audit-sqlite", feature = "audit-postgres"))]
        {
            let (clause, args) = f.sql(|n| format!("${n}"), |k| format!("m({k})"));
            assert_eq!(clause, " WHERE m(hook) = $1 AND m(ts) >= $2");
            assert_eq!(args, ["guard", "2026-11-27T19:05:00.000000Z"]);
        }
    }
}
