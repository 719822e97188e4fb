//! The `hookhost` command line.
fn main() {}
