//! `pregen archive`: the reproducible release archive of a finished pack.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use pregen_pack::PackDir;
use pregen_pack::archive::{default_archive_name, write_release_archive};

/// Flags of `pregen archive`.
#[derive(Args)]
pub struct ArchiveArgs {
    /// The pack's folder (`<out>/<pack>`).
    pack: PathBuf,
    /// The archive to write (default: `<pack>-release.tar.zst` here).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Writes the archive and prints its size and checksum.
pub fn run(args: ArchiveArgs) -> Result<()> {
    let pack = PackDir::new(args.pack);
    let dest = match args.output {
        Some(path) => path,
        None => PathBuf::from(default_archive_name(&pack)?),
    };
    let written = write_release_archive(&pack, &dest)?;
    println!(
        "wrote {}: {} files, {} bytes ({} before compression), sha256 {}",
        written.path.display(),
        written.files,
        written.archive_bytes,
        written.bytes,
        written.sha256
    );
    Ok(())
}
