//! The release archive: one reproducible `.tar.zst` of a finished pack's
//! release files and its manifest, for release pipelines.
//!
//! Every file is checked against `release/SHA256SUMS` first, so an archive
//! never ships a damaged or stray file. The archive is reproducible: entries
//! in path order, headers that differ only in path and size (mode 0644,
//! owner 0, modified at 0), zstd at a fixed level. Two packs with the same
//! release files (any number of workers, any restarts) give the same bytes.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::CoordinatorError;
use crate::pack::hex;

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
pub fn default_archive_name(pack_dir: &Path) -> Result<String, CoordinatorError> {
    Ok(format!("{}-release.tar.zst", pack_name(pack_dir)?))
}

/// Writes the release archive of the finished pack in `pack_dir` to `dest`
/// (atomically: a temporary file renamed into place). The archive holds
/// `<pack>/manifest.json` and every file of `release/` under `<pack>/`.
pub fn write_release_archive(
    pack_dir: &Path,
    dest: &Path,
) -> Result<ArchiveSummary, CoordinatorError> {
    let pack = pack_name(pack_dir)?;
    let mut files = checked_release_files(pack_dir)?;
    let manifest = pack_dir.join("manifest.json");
    files.insert(
        "manifest.json".into(),
        fs::read(&manifest).map_err(|e| read_error(&manifest, e))?,
    );
    let io =
        |e: std::io::Error| CoordinatorError::Io(format!("cannot write {}: {e}", dest.display()));
    let file_name = dest
        .file_name()
        .ok_or_else(|| CoordinatorError::Io(format!("{} is not a file name", dest.display())))?;
    let tmp = dest.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
    let file = Hashing {
        inner: BufWriter::new(fs::File::create(&tmp).map_err(io)?),
        sha256: Sha256::new(),
        bytes: 0,
    };
    let encoder = zstd::Encoder::new(file, ZSTD_LEVEL).map_err(io)?;
    let mut tar = tar::Builder::new(encoder);
    let mut bytes = 0u64;
    for (name, content) in &files {
        let mut header = tar::Header::new_ustar();
        header
            .set_path(format!("{pack}/{name}"))
            .map_err(|e| CoordinatorError::Io(format!("cannot archive {name}: {e}")))?;
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_cksum();
        tar.append(&header, content.as_slice()).map_err(io)?;
        bytes += content.len() as u64;
    }
    let written = tar.into_inner().map_err(io)?.finish().map_err(io)?;
    let out = written.inner.into_inner().map_err(|e| io(e.into_error()))?;
    out.sync_all().map_err(io)?;
    drop(out);
    fs::rename(&tmp, dest).map_err(io)?;
    Ok(ArchiveSummary {
        path: dest.to_path_buf(),
        files: files.len(),
        bytes,
        archive_bytes: written.bytes,
        sha256: hex(&written.sha256.finalize()),
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
fn pack_name(pack_dir: &Path) -> Result<String, CoordinatorError> {
    if !pack_dir.join("_SUCCESS").exists() {
        return Err(CoordinatorError::Io(format!(
            "{} is not a finished pack (no _SUCCESS)",
            pack_dir.display()
        )));
    }
    let path = pack_dir.join("manifest.json");
    let text = fs::read_to_string(&path).map_err(|e| read_error(&path, e))?;
    let manifest: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CoordinatorError::Io(format!("{} is not JSON: {e}", path.display())))?;
    manifest["pack"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| CoordinatorError::Io(format!("{} names no pack", path.display())))
}

/// Every file of `release/` by its path there, each checked against
/// `SHA256SUMS`; a file missing from either side is an error.
fn checked_release_files(pack_dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, CoordinatorError> {
    let release = pack_dir.join("release");
    let sums_path = release.join("SHA256SUMS");
    let sums = fs::read_to_string(&sums_path).map_err(|e| read_error(&sums_path, e))?;
    let mut files = BTreeMap::new();
    for (i, line) in sums.lines().enumerate() {
        let (want, name) = line.split_once("  ").ok_or_else(|| {
            CoordinatorError::Io(format!(
                "{} line {}: expected `SHA256  NAME`",
                sums_path.display(),
                i + 1
            ))
        })?;
        let path = release.join(name);
        let content = fs::read(&path).map_err(|e| read_error(&path, e))?;
        let got = hex(&Sha256::digest(&content));
        if got != want {
            return Err(CoordinatorError::Io(format!(
                "{} does not match SHA256SUMS (sha256 {got}, listed {want}): the pack is damaged",
                path.display()
            )));
        }
        files.insert(name.to_string(), content);
    }
    let on_disk = list_files(&release, &release)?;
    if let Some(stray) = on_disk
        .iter()
        .find(|f| *f != "SHA256SUMS" && !files.contains_key(*f))
    {
        return Err(CoordinatorError::Io(format!(
            "{} is not listed in SHA256SUMS",
            release.join(stray).display()
        )));
    }
    files.insert("SHA256SUMS".into(), sums.into_bytes());
    Ok(files)
}

/// Paths of the files below `dir`, relative to `root`, with `/` separators.
fn list_files(root: &Path, dir: &Path) -> Result<Vec<String>, CoordinatorError> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| read_error(dir, e))? {
        let path = entry.map_err(|e| read_error(dir, e))?.path();
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

fn read_error(path: &Path, e: std::io::Error) -> CoordinatorError {
    CoordinatorError::Io(format!("cannot read {}: {e}", path.display()))
}
