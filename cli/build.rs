//! Records the commit the binary is built from, for `pregen --version`
//! (`unknown commit` outside a git checkout), and builds the games'
//! WebAssembly module that `pregen web` writes out, so that the binary
//! carries it and its users need no Rust toolchain.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    record_commit();
    web_module();
}

fn record_commit() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).map_or_else(
        || "unknown commit".to_string(),
        |hash| format!("commit {hash}"),
    );
    println!("cargo:rustc-env=PREGEN_COMMIT={commit}");
    // Rebuilt when HEAD moves (a commit, a checkout).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head}");
        }
    }
}

/// The wasm target's name.
const WASM: &str = "wasm32-unknown-unknown";

/// Writes `$OUT_DIR/pregen_web.wasm`, which the binary includes: the module
/// at `$PREGEN_WEB_MODULE` when set (a module built once, elsewhere), else
/// one built here from `web/` when the wasm target is installed, else an
/// empty file, and `PREGEN_WEB_MODULE_NOTE` says why there is none.
///
/// The module is built by a cargo of its own, in `target/wasm-build` (its
/// own target folder, so that it never waits on this build's lock), with
/// the `wasm` profile; it shares this build's jobserver.
fn web_module() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let workspace = manifest.parent().expect("the workspace").to_path_buf();
    println!("cargo:rerun-if-env-changed=PREGEN_WEB_MODULE");
    let module = match std::env::var_os("PREGEN_WEB_MODULE") {
        Some(given) => std::fs::read(&given).map_err(|e| {
            format!(
                "cannot read $PREGEN_WEB_MODULE {}: {e}",
                Path::new(&given).display()
            )
        }),
        None => build_module(&workspace, &out),
    };
    let (bytes, note) = match module {
        Ok(bytes) => (bytes, String::new()),
        Err(why) => {
            println!("cargo:warning=pregen web: the binary carries no WebAssembly module: {why}");
            (Vec::new(), why)
        }
    };
    std::fs::write(out.join("pregen_web.wasm"), bytes).expect("write the module");
    println!("cargo:rustc-env=PREGEN_WEB_MODULE_NOTE={note}");
}

fn build_module(workspace: &Path, out: &Path) -> Result<Vec<u8>, String> {
    // What the module is made of: a change there builds it again.
    for source in ["web", "pictures", "games", "Cargo.lock", "Cargo.toml"] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(source).display()
        );
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", WASM])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    // Installing the target later builds the module on the next build.
    if let Some(rustlib) = libdir.as_ref().and_then(|d| d.parent()?.parent()) {
        println!("cargo:rerun-if-changed={}", rustlib.display());
    }
    if !libdir.is_some_and(|d| d.is_dir()) {
        return Err(format!(
            "the {WASM} target is not installed (`rustup target add {WASM}`, then build again)"
        ));
    }
    let target_dir = target_root(out)
        .unwrap_or_else(|| out.to_path_buf())
        .join("wasm-build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(workspace)
        .args([
            "build",
            "--locked",
            "-p",
            "pregen-web",
            "--target",
            WASM,
            "--profile",
            "wasm",
        ])
        .env("CARGO_TARGET_DIR", &target_dir);
    // This build's flags are for the host, not for the module; and a
    // workspace wrapper (clippy's driver under `cargo clippy`) would make
    // the module's build differ from one command to the next.
    for host_only in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        build.env_remove(host_only);
    }
    let made = build
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "its build failed: {}",
            String::from_utf8_lossy(&made.stderr)
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join(" / ")
        ));
    }
    let module = target_dir.join(WASM).join("wasm").join("pregen_web.wasm");
    std::fs::read(&module).map_err(|e| format!("cannot read {}: {e}", module.display()))
}

/// The build's target folder: the nearest folder above `out` that cargo
/// marked as its own (`CACHEDIR.TAG`).
fn target_root(out: &Path) -> Option<PathBuf> {
    out.ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}
