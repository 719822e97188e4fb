//! hookhost-sdk: write hookhost hooks in Rust.
