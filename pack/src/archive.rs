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
//! owner 0, modified at 0), zstd at a fixed level, and nothing in it that
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

/// The zstd level of the archive (fixed, so that the bytes are too).
pub const ZSTD_LEVEL: i32 = 19;

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
    /// `release/campaigns/`.
    Campaigns,
}

impl ReleasePart {
    fn folder(self) -> &'static str {
        match self {
            ReleasePart::Solutions => "solutions/",
            ReleasePart::Seeds => "seeds/",
            ReleasePart::Campaigns => "campaigns/",
        }
    }
}

/// Writes the release archive of the finished pack to `dest` (atomically: a
/// temporary file renamed into place), without the folders of `leave_out`
/// (the archive's `SHA256SUMS` and manifest then list only what it holds).
pub fn write_release_archive(
    pack: &PackDir,
    dest: &Path,
    leave_out: &[ReleasePart],
) -> Result<ArchiveSummary, PackError> {
    let name = pack_name(pack)?;
    let manifest = pack.read_manifest()?;
    if leave_out.contains(&ReleasePart::Solutions)
        && manifest.job.release.solutions == crate::job::Solutions::Inline
    {
        return Err(PackError::invalid(
            pack.root(),
            "its levels hold their solutions inline (`[release] solutions = \"inline\"`), \
             so `--without solutions` cannot leave them out; write the pack with \
             `solutions = \"apart\"` (or \"none\") to ship levels without solutions",
        ));
    }
    let left_out = |path: &str| leave_out.iter().any(|p| path.starts_with(p.folder()));
    let mut kept = checked_release_files(pack)?;
    kept.retain(|path, _| !left_out(path));
    if let Some(sums) = kept.get_mut(dir::SHA256SUMS) {
        let text = String::from_utf8_lossy(sums).into_owned();
        *sums = text
            .lines()
            .filter(|line| {
                line.split_once("  ")
                    .is_none_or(|(_, path)| !left_out(path))
            })
            .flat_map(|line| [line, "\n"])
            .collect::<String>()
            .into_bytes();
    }
    let mut files: BTreeMap<String, Vec<u8>> = kept
        .into_iter()
        .map(|(path, content)| (format!("{}/{path}", dir::RELEASE), content))
        .collect();
    let sums = files
        .iter()
        .map(|(path, content)| (path.clone(), sha256_hex(content)))
        .collect();
    let manifest = ReleaseManifest::new(&manifest, sums).to_json()?;
    files.insert(dir::MANIFEST.into(), manifest.into_bytes());
    let file_name = dest
        .file_name()
        .ok_or_else(|| PackError::invalid(dest, "is not a file name"))?;
    let tmp = dest.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
    let file = Hashing {
        inner: BufWriter::new(fs::File::create(&tmp).map_err(PackError::io("create", &tmp))?),
        sha256: Sha256::new(),
        bytes: 0,
    };
    let encoder = zstd::Encoder::new(file, ZSTD_LEVEL).map_err(PackError::io("write", &tmp))?;
    let mut tar = tar::Builder::new(encoder);
    let mut bytes = 0u64;
    for (path, content) in &files {
        let mut header = tar::Header::new_ustar();
        header
            .set_path(format!("{name}/{path}"))
            .map_err(PackError::io("archive", path))?;
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_cksum();
        tar.append(&header, content.as_slice())
            .map_err(PackError::io("write", &tmp))?;
        bytes += content.len() as u64;
    }
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
        files: files.len(),
        bytes,
        archive_bytes: written.bytes,
        sha256: format!("{:x}", written.sha256.finalize()),
    })
}

/// A writer that hashes and counts what goes through it, so that the archive
/// is not read back for its checksum.
struct Hashing<W> {
    inner: W,
    sha256: Sha256,
    bytes: u64,
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
    if !pack.is_complete() {
        return Err(PackError::invalid(
            pack.root(),
            "is not a finished pack (no _SUCCESS)",
        ));
    }
    Ok(pack.read_manifest()?.pack)
}

/// Every file of `release/` by its path there, each checked against
/// `SHA256SUMS`; a file missing from either side is an error.
fn checked_release_files(pack: &PackDir) -> Result<BTreeMap<String, Vec<u8>>, PackError> {
    let release = pack.release();
    let sums_path = release.join(dir::SHA256SUMS);
    let sums = fs::read_to_string(&sums_path).map_err(PackError::io("read", &sums_path))?;
    let mut files = BTreeMap::new();
    for (i, line) in sums.lines().enumerate() {
        let (want, name) = line.split_once("  ").ok_or_else(|| {
            PackError::invalid(
                &sums_path,
                format!("line {}: expected `SHA256  NAME`", i + 1),
            )
        })?;
        let path = release.join(name);
        let content = fs::read(&path).map_err(PackError::io("read", &path))?;
        let got = sha256_hex(&content);
        if got != want {
            return Err(PackError::invalid(
                &path,
                format!(
                    "does not match SHA256SUMS (sha256 {got}, listed {want}): the pack is damaged"
                ),
            ));
        }
        files.insert(name.to_string(), content);
    }
    let on_disk = list_files(&release, &release)?;
    if let Some(stray) = on_disk
        .iter()
        .find(|f| *f != dir::SHA256SUMS && !files.contains_key(*f))
    {
        return Err(PackError::invalid(
            release.join(stray),
            "is not listed in SHA256SUMS",
        ));
    }
    files.insert(dir::SHA256SUMS.into(), sums.into_bytes());
    Ok(files)
}

/// Paths of the files below `dir`, relative to `root`, with `/` separators.
fn list_files(root: &Path, folder: &Path) -> Result<Vec<String>, PackError> {
    let mut out = Vec::new();
    for entry in fs::read_dir(folder).map_err(PackError::io("list", folder))? {
        let path = entry.map_err(PackError::io("list", folder))?.path();
        if path.is_dir() {
            out.extend(list_files(root, &path)?);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(out)
}
