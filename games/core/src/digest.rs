//! The project's one hex form and its SHA-256 of bytes.

use sha2::{Digest, Sha256};

/// SHA-256 of `bytes` as lower-case hex: how level hashes, file checksums and
/// canonical forms are written everywhere in pregen.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// `bytes` in lower-case hex, two digits a byte: the one hex form of the
/// project (checksums, keys, identities, tokens).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}
