//! Audit log: one JSON line per hook execution (being written).
