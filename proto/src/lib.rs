//! The pregen wire contract, `pregen.v1`, and its generated Rust.
//!
//! Only the gRPC adapters (the worker's client and the coordinator's service) use
//! these types; every other module works with its own domain types and converts
//! at the edge, through the conversions of [`convert`]. [`PROTOCOL_VERSION`]
//! is checked in the session's `Hello`.

pub mod convert;

/// The protocol version a worker announces in `Hello`; the coordinator refuses others.
pub const PROTOCOL_VERSION: u32 = 5;

/// Metadata key carrying the shared token (`authorization: Bearer <token>`).
pub const AUTH_HEADER: &str = "authorization";

/// Generated types and services of `pregen.v1`, the stored level's
/// message (`Level`) from `pregen-messages`.
#[allow(missing_docs)]
pub mod v1 {
    pub use pregen_messages::v1::Level;
    tonic::include_proto!("pregen.v1");
}
