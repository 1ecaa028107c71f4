//! Compiles the wire contract in pure Rust: protox parses the .proto files,
//! so no system `protoc` is needed. The stored level's message is
//! `pregen-messages`' (an extern path), generated there once.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(["pregen/v1/pregen.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .extern_path(".pregen.v1.Level", "::pregen_messages::v1::Level")
        // A game program's spec is rare and large: boxed, so that every
        // message enum stays small.
        .boxed(".pregen.v1.JobSpec.external")
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
