//! `pregen archive`: the reproducible release archive of a finished pack.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use pregen_pack::PackDir;
use pregen_store::Location;

use super::stored::{Log, Output, fetch};
use pregen_pack::archive::{
    ArchiveOptions, DEFAULT_LEVEL, ReleasePart, default_archive_name, write_release_archive,
};

/// Flags of `pregen archive`.
#[derive(Args)]
pub struct ArchiveArgs {
    /// The pack's folder (`<out>/<pack>`), or its URL in an object store.
    pack: Location,
    /// The archive to write (default: `<pack>-release.tar.zst` here), a
    /// file or an object's URL (uploaded whole once written).
    #[arg(long, short)]
    output: Option<Location>,
    /// Leave a part of `release/` out of the archive (repeatable):
    /// `solutions` ships the levels without their solutions.
    #[arg(long, value_name = "PART")]
    without: Vec<Part>,
    /// The zstd level, 1 (fastest) to 22 (smallest). The archive's bytes
    /// depend on it, never on the machine's cores.
    #[arg(long, default_value_t = DEFAULT_LEVEL,
          value_parser = clap::value_parser!(i32).range(1..=22))]
    level: i32,
    /// Compression threads (default: every core); the bytes are the same
    /// with any number.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Option<u32>,
}

/// A folder of `release/`.
#[derive(Clone, Copy, ValueEnum)]
enum Part {
    /// release/solutions/
    Solutions,
    /// release/seeds/ (the seed-only release)
    Seeds,
    /// release/campaigns.txt (or .jsonl)
    Campaigns,
}

/// Writes the archive and prints its size and checksum.
pub fn run(args: ArchiveArgs) -> Result<()> {
    let fetched = fetch(&args.pack, Log::Without)?;
    let pack = PackDir::new(fetched.path());
    let output = match &args.output {
        Some(location) => Output::new(location)?,
        None => Output::new(&Location::Local(PathBuf::from(default_archive_name(
            &pack,
        )?)))?,
    };
    let dest = output.path().to_path_buf();
    let leave_out: Vec<ReleasePart> = args
        .without
        .iter()
        .map(|p| match p {
            Part::Solutions => ReleasePart::Solutions,
            Part::Seeds => ReleasePart::Seeds,
            Part::Campaigns => ReleasePart::Campaigns,
        })
        .collect();
    let mut options = ArchiveOptions {
        level: args.level,
        ..ArchiveOptions::default()
    };
    if let Some(threads) = args.threads {
        options.workers = threads;
    }
    let written = write_release_archive(&pack, &dest, &leave_out, options)?;
    let at = output.deliver()?;
    println!(
        "wrote {at}: {} files, {} bytes ({} before compression), sha256 {}",
        written.files, written.archive_bytes, written.bytes, written.sha256
    );
    Ok(())
}
