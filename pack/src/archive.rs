//! The release archive: one reproducible `.tar.zst` of a finished pack's
//! release files and its manifest, for release pipelines.
//!
//! Layout: `<pack>/manifest.json` (a [`ReleaseManifest`]: the job, versions,
//! counts, and the SHA-256 of every other file by its path below `<pack>/`)
//! and `<pack>/release/...` (the release files and `SHA256SUMS`), so the paths
//! in the archive are the manifest's.
//!
//! Every file is checked against `release/SHA256SUMS` first, so an archive
//! never ships a damaged or stray file. The archive is reproducible: entries
//! in path order, headers that differ only in path and size (mode 0644,
//! owner 0, modified at 0), zstd at the level asked for (its multithreaded
//! mode, whose frames do not depend on the threads), and nothing in it that
//! describes the run rather than the levels (no Parquet, no timings, no
//! worker names). The same job gives the same bytes with any number of
//! workers, after any restarts.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use pregen_games::sha256_hex;
use sha2::{Digest, Sha256};

use crate::PackError;
use crate::dir::{self, PackDir};
use crate::manifest::ReleaseManifest;

/// The archive's zstd level unless told (`pregen archive --level`): on two
/// cores about 40 times faster than level 19 on one thread, the archive 15%
/// to 19% larger (docs/release.md has the figures).
pub const DEFAULT_LEVEL: i32 = 12;

/// The bytes of input each compression job takes (zstd's default is four
/// times the window, 16 MiB and more at the levels used here).
const JOB_SIZE: u32 = 4 << 20;

/// The log2 of the match finder's tables (and one less than the window's):
/// at most 2^20 entries, so that each compression thread holds about 8 MiB
/// whatever the level (level 12 alone would take 4 times that).
const TABLE_LOG: u32 = 20;

/// How the archive is compressed. Its bytes depend on the level, never on
/// the workers: zstd's multithreaded mode gives the same frames for any
/// number of them (one included), so the archive is the same on any machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveOptions {
    /// The zstd level, 1 to 22.
    pub level: i32,
    /// Compression threads (at least 1).
    pub workers: u32,
}

impl Default for ArchiveOptions {
    fn default() -> Self {
        ArchiveOptions {
            level: DEFAULT_LEVEL,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        }
    }
}

/// What [`write_release_archive`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveSummary {
    /// The archive file.
    pub path: PathBuf,
    /// Files in it.
    pub files: usize,
    /// Their total size before compression.
    pub bytes: u64,
    /// The archive's size.
    pub archive_bytes: u64,
    /// The archive's SHA-256.
    pub sha256: String,
}

/// The default archive name for a pack: `<pack>-release.tar.zst`.
pub fn default_archive_name(pack: &PackDir) -> Result<String, PackError> {
    Ok(format!("{}-release.tar.zst", pack_name(pack)?))
}

/// Folders of `release/` an archive can leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleasePart {
    /// `release/solutions/`: ship the levels without their solutions.
    Solutions,
    /// `release/seeds/`: the seed-only release.
    Seeds,
    /// The campaigns: `release/campaigns.txt` (`.jsonl`), or the
    /// `release/campaigns/` folder of releases written before it.
    Campaigns,
}

impl ReleasePart {
    /// The part's name, as `--without` and the release manifest's
    /// `left_out` give it.
    pub fn name(self) -> &'static str {
        match self {
            ReleasePart::Solutions => "solutions",
            ReleasePart::Seeds => "seeds",
            ReleasePart::Campaigns => "campaigns",
        }
    }

    /// Whether the release file at `path` (below `release/`) is of this part.
    fn holds(self, path: &str) -> bool {
        match self {
            ReleasePart::Solutions => path.starts_with("solutions/"),
            ReleasePart::Seeds => path.starts_with("seeds/"),
            ReleasePart::Campaigns => {
                path.starts_with("campaigns/")
                    || path == "campaigns.txt"
                    || path == "campaigns.jsonl"
            }
        }
    }
}

/// Writes the release archive of the finished pack to `dest` (atomically: a
/// temporary file renamed into place), without the folders of `leave_out`
/// (the archive's `SHA256SUMS` and manifest then list only what it holds).
/// Files stream in one at a time, so memory holds one file and zstd's
/// buffers whatever the pack's size.
pub fn write_release_archive(
    pack: &PackDir,
    dest: &Path,
    leave_out: &[ReleasePart],
    options: ArchiveOptions,
) -> Result<ArchiveSummary, PackError> {
    if !(1..=22).contains(&options.level) {
        return Err(PackError::invalid(
            dest,
            format!("zstd level {} is not 1..=22", options.level),
        ));
    }
    let pack_manifest = finished_manifest(pack)?;
    let name = pack_manifest.pack.clone();
    if leave_out.contains(&ReleasePart::Solutions)
        && pack_manifest.job.release.solutions_in_levels()
    {
        return Err(PackError::invalid(
            pack.root(),
            "its level files hold their solutions (`[release] solutions = \"inline\"`, or \
             `format = \"jsonl\"` with solutions), so `--without solutions` cannot leave them \
             out; write the pack with `solutions = \"none\"` (or, in text, \"apart\") to ship \
             levels without solutions",
        ));
    }
    let left_out = |path: &str| leave_out.iter().any(|p| p.holds(path));
    let (sums, mut listed) = checked_release_files(pack, &left_out)?;
    listed.insert(
        format!("{}/{}", dir::RELEASE, dir::SHA256SUMS),
        sha256_hex(sums.as_bytes()),
    );
    // The release manifest's text; its list (path -> SHA-256, as long as the
    // pack) is then the entries to write, in path order, and the sums each
    // file is checked against as it goes in.
    let mut release_manifest = ReleaseManifest::new(pack_manifest, listed);
    let mut left: Vec<String> = leave_out.iter().map(|p| p.name().to_string()).collect();
    left.sort();
    left.dedup();
    release_manifest.left_out = left;
    let manifest = release_manifest.to_json()?;
    let listed = release_manifest.files;
    let sums_path = format!("{}/{}", dir::RELEASE, dir::SHA256SUMS);
    let file_name = dest
        .file_name()
        .ok_or_else(|| PackError::invalid(dest, "is not a file name"))?;
    let tmp = dest.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
    let file = Hashing {
        inner: BufWriter::new(fs::File::create(&tmp).map_err(PackError::io("create", &tmp))?),
        sha256: Sha256::new(),
        bytes: 0,
    };
    let encoder = zstd_encoder(file, &options).map_err(PackError::io("write", &tmp))?;
    let mut tar = tar::Builder::new(encoder);
    let release = Release {
        pack,
        name: &name,
        manifest: &manifest,
        sums: &sums,
        sums_path: &sums_path,
        listed: &listed,
        tmp: &tmp,
    };
    let (files, bytes) = match release.append_to(&mut tar) {
        Ok(counts) => counts,
        Err(e) => {
            drop(tar);
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let written = tar
        .into_inner()
        .and_then(|encoder| encoder.finish())
        .map_err(PackError::io("write", &tmp))?;
    let out = written
        .inner
        .into_inner()
        .map_err(|e| PackError::io("write", &tmp)(e.into_error()))?;
    out.sync_all().map_err(PackError::io("sync", &tmp))?;
    drop(out);
    fs::rename(&tmp, dest).map_err(PackError::io("rename into place", dest))?;
    Ok(ArchiveSummary {
        path: dest.to_path_buf(),
        files,
        bytes,
        archive_bytes: written.bytes,
        sha256: format!("{:x}", written.sha256.finalize()),
    })
}

/// A zstd encoder on every core the options give, with jobs and tables of
/// fixed sizes: the frames are the same for any number of workers, and
/// memory stays bounded by the workers, not the pack.
fn zstd_encoder<W: std::io::Write>(
    file: W,
    options: &ArchiveOptions,
) -> std::io::Result<zstd::Encoder<'static, W>> {
    use zstd::stream::raw::CParameter::{ChainLog, HashLog, JobSize, WindowLog};
    let mut encoder = zstd::Encoder::new(file, options.level)?;
    encoder.multithread(options.workers.max(1))?;
    for p in [
        JobSize(JOB_SIZE),
        WindowLog(TABLE_LOG + 1),
        HashLog(TABLE_LOG),
        ChainLog(TABLE_LOG),
    ] {
        encoder.set_parameter(p)?;
    }
    Ok(encoder)
}

/// What a release archive holds: the release manifest's text, the sums,
/// and the files to stream in (path -> SHA-256).
struct Release<'a> {
    pack: &'a PackDir,
    /// The pack folder's name in the archive.
    name: &'a str,
    manifest: &'a str,
    sums: &'a str,
    sums_path: &'a str,
    listed: &'a std::collections::BTreeMap<String, String>,
    /// The archive's temporary file (named in errors).
    tmp: &'a Path,
}

impl Release<'_> {
    /// Appends the manifest first, then the release files in path order,
    /// each streamed from its file and checked against SHA256SUMS as it goes
    /// in: memory never holds a file, and a file that changed since it was
    /// listed stops the archive. The files and bytes written.
    fn append_to<W: std::io::Write>(
        &self,
        tar: &mut tar::Builder<W>,
    ) -> Result<(usize, u64), PackError> {
        let Release {
            pack,
            name,
            manifest,
            sums,
            sums_path,
            listed,
            tmp,
        } = *self;
        let (mut files, mut bytes) = (0, 0u64);
        let entries = std::iter::once((dir::MANIFEST, None))
            .chain(listed.iter().map(|(path, sum)| (path.as_str(), Some(sum))));
        for (path, listed) in entries {
            let header = |size: u64| {
                let mut header = tar::Header::new_ustar();
                header
                    .set_path(format!("{name}/{path}"))
                    .map_err(PackError::io("archive", path))?;
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(size);
                header.set_mode(0o644);
                header.set_uid(0);
                header.set_gid(0);
                header.set_mtime(0);
                header.set_cksum();
                Ok::<_, PackError>(header)
            };
            files += 1;
            let in_memory = match path {
                dir::MANIFEST => Some(manifest.as_bytes()),
                p if p == sums_path => Some(sums.as_bytes()),
                _ => None,
            };
            if let Some(content) = in_memory {
                bytes += content.len() as u64;
                tar.append(&header(content.len() as u64)?, content)
                    .map_err(PackError::io("write", tmp))?;
                continue;
            }
            let file = pack.root().join(path);
            let opened = fs::File::open(&file).map_err(PackError::io("read", &file))?;
            let size = opened
                .metadata()
                .map_err(PackError::io("read", &file))?
                .len();
            let mut reading = Hashing {
                inner: std::io::Read::take(opened, size),
                sha256: Sha256::new(),
                bytes: 0,
            };
            tar.append(&header(size)?, &mut reading)
                .map_err(PackError::io("write", &tmp))?;
            let got = format!("{:x}", reading.sha256.finalize());
            if reading.bytes != size || listed != Some(&got) {
                return Err(PackError::invalid(
                    &file,
                    format!(
                        "does not match SHA256SUMS (sha256 {got}, listed {}): the pack is damaged",
                        listed.map_or("nothing", String::as_str)
                    ),
                ));
            }
            bytes += size;
        }
        Ok((files, bytes))
    }
}

/// A writer (or reader) that hashes and counts what goes through it, so that
/// the archive is not read back for its checksum, nor a file read twice.
struct Hashing<W> {
    inner: W,
    sha256: Sha256,
    bytes: u64,
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha256.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha256.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The pack's name from its manifest; refuses a folder without `_SUCCESS`.
fn pack_name(pack: &PackDir) -> Result<String, PackError> {
    Ok(finished_manifest(pack)?.pack)
}

/// The manifest of a finished pack; refuses a folder without `_SUCCESS`.
fn finished_manifest(pack: &PackDir) -> Result<crate::Manifest, PackError> {
    if !pack.is_complete() {
        return Err(PackError::invalid(
            pack.root(),
            "is not a finished pack (no _SUCCESS)",
        ));
    }
    pack.read_manifest()
}

/// `SHA256SUMS` as the archive holds it (without the lines `left_out`
/// takes) and every file it keeps, by its path in the pack (`release/...`),
/// with the SHA-256 `SHA256SUMS` lists for it (checked as the file goes into
/// the archive); a file missing from either side (of the folders kept) is
/// an error.
fn checked_release_files(
    pack: &PackDir,
    left_out: &dyn Fn(&str) -> bool,
) -> Result<(String, BTreeMap<String, String>), PackError> {
    let release = pack.release();
    let sums_path = release.join(dir::SHA256SUMS);
    let listed_sums = fs::read_to_string(&sums_path).map_err(PackError::io("read", &sums_path))?;
    let mut sums = String::with_capacity(listed_sums.len());
    let mut files = BTreeMap::new();
    for (i, line) in listed_sums.lines().enumerate() {
        let (want, name) = line.split_once("  ").ok_or_else(|| {
            PackError::invalid(
                &sums_path,
                format!("line {}: expected `SHA256  NAME`", i + 1),
            )
        })?;
        let path = release.join(name);
        if !path.is_file() {
            return Err(PackError::invalid(
                &path,
                "is listed in SHA256SUMS but missing: the pack is damaged",
            ));
        }
        if !left_out(name) {
            sums.push_str(line);
            sums.push('\n');
            files.insert(format!("{}/{name}", dir::RELEASE), want.to_string());
        }
    }
    // A file of a folder left out does not go in, listed or not.
    let listed = |name: &str| {
        name == dir::SHA256SUMS
            || left_out(name)
            || files.contains_key(&format!("{}/{name}", dir::RELEASE))
    };
    let mut stray = None;
    dir::walk_files(&release, &mut |name| {
        let unlisted = !listed(&name);
        if unlisted {
            stray = Some(name);
        }
        unlisted
    })?;
    if let Some(stray) = stray {
        return Err(PackError::invalid(
            release.join(stray),
            "is not listed in SHA256SUMS",
        ));
    }
    Ok((sums, files))
}
