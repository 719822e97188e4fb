//! The audit log's hash chain: each record names its writer (one per
//! process and file), its place in that writer's sequence, the hash of the
//! record before it, and its own hash, so that an edited, removed,
//! inserted or reordered record is found by [`verify`]
//! (`hookhost audit verify`). A record's hash is the sha256 of its line
//! as written, up to the `hash` member: the text itself, not a
//! re-serialization, so any change of a byte shows.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::io::BufRead;

use sha2::{Digest, Sha256};

/// The `prev` of a writer's first record.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One writer's place in its chain.
#[derive(Debug)]
pub(crate) struct Link {
    /// This writer's id: 16 hex digits, new for each process and file.
    pub(crate) writer: String,
    /// The last record's sequence number (0 before the first).
    pub(crate) seq: u64,
    /// The last record's hash, or [`GENESIS`].
    pub(crate) prev: String,
}

impl Link {
    /// A new writer's chain.
    pub(crate) fn start() -> Link {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(nanos);
        Link {
            writer: format!("{:016x}", h.finish()),
            seq: 0,
            prev: GENESIS.to_string(),
        }
    }

    /// Seals `body` (one JSON object holding this link's `writer`, `seq`
    /// and `prev`, ending in `}`) into `out` with its `hash` and a newline,
    /// and moves the chain on.
    pub(crate) fn seal(&mut self, body: &[u8], out: &mut Vec<u8>) {
        let hash = hex(&Sha256::digest(body));
        out.extend_from_slice(&body[..body.len() - 1]);
        out.extend_from_slice(b",\"hash\":\"");
        out.extend_from_slice(hash.as_bytes());
        out.extend_from_slice(b"\"}\n");
        self.prev = hash;
    }

    /// The next record's sequence number.
    pub(crate) fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
}

/// Bytes as lower-case hex digits, as digests are written.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What [`verify`] found: each writer's records, and the first break.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ChainReport {
    /// Records read.
    pub records: u64,
    /// Writers (chains) seen, in order of first appearance, with their
    /// record counts.
    pub writers: Vec<(String, u64)>,
    /// The first line that breaks a chain (1-based) and why; `None` when
    /// every chain holds.
    pub broken: Option<(u64, String)>,
}

/// Reads an audit log's lines and checks every writer's chain: each
/// record's own hash, its `prev` against the record before it of the same
/// writer, and its `seq` one past that record's. A record without the
/// chain's members, or a line that is not JSON, is a break too.
pub fn verify(reader: impl BufRead) -> std::io::Result<ChainReport> {
    let mut verifier = Verifier::default();
    for line in reader.lines() {
        if !verifier.feed(&line?) {
            break;
        }
    }
    Ok(verifier.report())
}

/// [`verify`] one line at a time, for backends that are not a reader.
#[derive(Debug, Default)]
pub(crate) struct Verifier {
    report: ChainReport,
    last: HashMap<String, (u64, String)>,
}

impl Verifier {
    /// Checks the next line; `false` once a chain is broken (the rest
    /// need not be read).
    pub(crate) fn feed(&mut self, line: &str) -> bool {
        let report = &mut self.report;
        report.records += 1;
        if let Err(why) = check(line, &mut self.last, &mut report.writers) {
            report.broken = Some((report.records, why));
            return false;
        }
        true
    }

    pub(crate) fn report(self) -> ChainReport {
        self.report
    }
}

fn check(
    line: &str,
    last: &mut HashMap<String, (u64, String)>,
    writers: &mut Vec<(String, u64)>,
) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not a JSON record: {e}"))?;
    let field = |k: &str| value.get(k).and_then(serde_json::Value::as_str);
    let (Some(writer), Some(prev), Some(hash)) = (field("writer"), field("prev"), field("hash"))
    else {
        return Err("a record without writer, prev and hash".into());
    };
    let seq = value
        .get("seq")
        .and_then(serde_json::Value::as_u64)
        .ok_or("no seq")?;
    let suffix = format!(",\"hash\":\"{hash}\"}}");
    let body = line
        .strip_suffix(&suffix)
        .map(|b| format!("{b}}}"))
        .ok_or("the hash is not the record's last member")?;
    if hex(&Sha256::digest(body.as_bytes())) != hash {
        return Err(format!("writer {writer} seq {seq}: the record was changed"));
    }
    let (want_seq, want_prev) = match last.get(writer) {
        Some((s, h)) => (s + 1, h.as_str()),
        None => (1, GENESIS),
    };
    if seq != want_seq || prev != want_prev {
        return Err(format!(
            "writer {writer}: seq {seq} follows seq {} (a record removed, added or moved)",
            want_seq - 1
        ));
    }
    last.insert(writer.to_string(), (seq, hash.to_string()));
    match writers.iter_mut().find(|(w, _)| w == writer) {
        Some((_, count)) => *count += 1,
        None => writers.push((writer.to_string(), 1)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: u64) -> String {
        let mut link = Link::start();
        let mut out = Vec::new();
        for _ in 0..n {
            let seq = link.next();
            let body = format!(
                r#"{{"ts":"t","writer":"{}","seq":{seq},"prev":"{}","hook":"h"}}"#,
                link.writer, link.prev
            );
            link.seal(body.as_bytes(), &mut out);
        }
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn an_intact_chain_holds_and_every_tampering_breaks_it() {
        let log = chain(4);
        let ok = verify(log.as_bytes()).unwrap_or_default();
        assert_eq!((ok.records, ok.broken.is_none()), (4, true));
        let lines: Vec<&str> = log.lines().collect();
        let edited = log.replacen("\"hook\":\"h\"", "\"hook\":\"x\"", 1);
        let removed = [lines[0], lines[1], lines[3]].join("\n");
        let swapped = [lines[0], lines[2], lines[1], lines[3]].join("\n");
        for (what, text) in [
            ("edited", edited),
            ("removed", removed),
            ("swapped", swapped),
        ] {
            let r = verify(text.as_bytes()).unwrap_or_default();
            assert!(r.broken.is_some(), "{what} went unseen");
        }
    }
}
