//! The repository's guardrails, as tests (`tests/tidy.rs`): limits that
//! reviews used to keep, checked on every `cargo test` instead.
