//! Writes every JSON Schema of the protocol to `spec/schema/` (or the folder
//! given as the first argument). Run after changing a wire type:
//! `cargo run -p hookhost-protocol --example write_schemas`.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec/schema"));
    std::fs::create_dir_all(&dir)?;
    for (file, schema) in hookhost_protocol::schema::all() {
        let path = dir.join(file);
        std::fs::write(&path, hookhost_protocol::schema::render(&schema))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
