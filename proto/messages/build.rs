//! Compiles the stored level's message (`level.proto`) in pure Rust: protox
//! parses it (no system `protoc`), prost writes it. `pregen-proto`
//! generates the rest of the wire contract over it (an extern path).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=../proto");
    let fds = protox::compile(["pregen/v1/level.proto"], ["../proto"])?;
    prost_build::Config::new()
        // The games keep metrics in a BTreeMap: the wire form's map is one
        // too, so a level's metrics move between them instead of being
        // hashed into a new map each way (and are encoded in key order).
        .btree_map([".pregen.v1.Level.metrics"])
        .compile_fds(fds)?;
    Ok(())
}
