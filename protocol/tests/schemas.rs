//! The schemas under spec/schema are the contract hook authors read; they
//! must be exactly what the Rust types generate.

use std::path::PathBuf;

#[test]
fn checked_in_schemas_match_the_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec/schema");
    let mut stale = Vec::new();
    let mut expected_files = Vec::new();
    for (file, schema) in hookhost_protocol::schema::all() {
        expected_files.push(file.to_string());
        let want = hookhost_protocol::schema::render(&schema);
        match std::fs::read_to_string(dir.join(file)) {
            Ok(have) if have == want => {}
            Ok(_) => stale.push(format!("{file} differs")),
            Err(e) => stale.push(format!("{file}: {e}")),
        }
    }
    let mut extra = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("spec/schema exists") {
        let name = entry
            .expect("readable dir")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if !expected_files.contains(&name) {
            extra.push(name);
        }
    }
    assert!(
        stale.is_empty() && extra.is_empty(),
        "spec/schema is out of date ({stale:?}, unexpected files {extra:?}); \
         run `cargo run -p hookhost-protocol --example write_schemas` and commit the result"
    );
}
