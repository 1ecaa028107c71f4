//! Compiles the wire contract in pure Rust: protox parses the .proto files, so no
//! system `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(["pregen/v1/pregen.proto"], ["proto"])?;
    tonic_prost_build::configure()
        // The games keep metrics in a BTreeMap: the wire form's map is one
        // too, so a level's metrics move between them instead of being
        // hashed into a new map each way (and are encoded in key order).
        .btree_map(".pregen.v1.Level.metrics")
        // A game program's spec is rare and large: boxed, so that every
        // message enum stays small.
        .boxed(".pregen.v1.JobSpec.external")
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
