//! In-process builtin hooks (being written).
