//! What a test needs beyond a Rust toolchain: Python 3 and Node.js (for
//! the example game programs) and Python's Parquet readers, Chromium, Java,
//! openssl, the wasm target, the S3 test servers (moto and s3s-fs). Plain `cargo test` on a machine
//! without one of them skips the tests that need it, each with one line
//! saying so; `.ci/run` installs them all and sets
//! `PREGEN_TESTS_NEED_EVERYTHING=1`, under which a missing tool fails the
//! test instead, so that CI never skips one.

use std::process::{Command, Stdio};

/// A tool a test needs.
#[derive(Debug, Clone, Copy)]
pub enum Need {
    /// Python 3 with these modules (none: Python 3 alone).
    Python(&'static [&'static str]),
    /// Node.js (`node`).
    Node,
    /// Headless Chromium (`chromium`, or `$CHROMIUM`).
    Chromium,
    /// A Java runtime (Spark's).
    Java,
    /// The `openssl` command.
    Openssl,
    /// Rust's `wasm32-unknown-unknown` target.
    Wasm,
    /// An S3 test server (moto's `moto_server`, or `s3s-fs`).
    S3(pregen_store::testing::Kind),
}

/// Python 3 alone, as the example game program `rushhour.py` needs it.
pub const PYTHON: Need = Need::Python(&[]);

/// Python's Parquet readers, as `analysis/python/check_pack.py` uses them.
pub const PARQUET_READERS: Need =
    Need::Python(&["pyarrow", "pandas", "polars", "duckdb", "datafusion"]);

impl Need {
    fn available(self) -> bool {
        let quiet = |program: &str, args: &[&str]| {
            Command::new(program)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        match self {
            Need::Python([]) => quiet("python3", &["-c", "pass"]),
            Need::Python(modules) => quiet(
                "python3",
                &["-c", &format!("import {}", modules.join(", "))],
            ),
            Need::Chromium => {
                let binary = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
                quiet(&binary, &["--version"])
            }
            Need::Node => quiet("node", &["--version"]),
            Need::Java => quiet("java", &["-version"]),
            Need::Openssl => quiet("openssl", &["version"]),
            Need::S3(kind) => kind.available(),
            Need::Wasm => Command::new("rustup")
                .args(["target", "list", "--installed"])
                .output()
                .is_ok_and(|o| {
                    String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown")
                }),
        }
    }

    fn describe(self) -> String {
        match self {
            Need::Python([]) => "python3".into(),
            Need::Python(modules) => format!("python3 with {}", modules.join(", ")),
            Need::Node => "Node.js".into(),
            Need::Chromium => "headless Chromium".into(),
            Need::Java => "a Java runtime".into(),
            Need::Openssl => "openssl".into(),
            Need::Wasm => "the wasm32-unknown-unknown target".into(),
            Need::S3(kind) => format!("the S3 server {}", kind.name()),
        }
    }
}

/// Whether the calling test (or the part of it that needs them) may run:
/// every one of `needs` is there. Otherwise one line says what is skipped
/// and why, or, under `PREGEN_TESTS_NEED_EVERYTHING=1`, the test fails.
pub fn needs(needs: &[Need]) -> bool {
    let missing: Vec<String> = needs
        .iter()
        .filter(|n| !n.available())
        .map(|n| n.describe())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let what = missing.join(", ");
    if std::env::var_os("PREGEN_TESTS_NEED_EVERYTHING").is_some() {
        panic!("{test} needs {what}, which this machine lacks (.ci/run installs it)");
    }
    // Straight to stderr, past the harness's capture: a skip is always seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: needs {what} (.ci/run installs it)"
    );
    false
}
