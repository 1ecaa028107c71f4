//! Where a release's files are read from: a folder, or a `.tar.zst` archive
//! read as a stream, never unpacked. An archive is read twice: once to hash
//! every file and keep the small ones a check needs whole (the manifest,
//! `SHA256SUMS`, seed files, solutions files and the game program's files),
//! once to hand over the level files one at a time. Nothing is written to
//! disk but a carried game program, to run it ([`Source::program_dir`]); an entry that is
//! not a folder or a regular file (a link, a device, a sparse file) refuses
//! the archive before anything is read through it, and so does an entry
//! named twice; no more than [`UNPACK_RATIO`] times the archive's size is
//! read in a pass.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{PackError, dir};

/// The most a pass may read from an archive: this many times its own size,
/// plus a floor. A real release (text and JSON compressed by zstd) holds far
/// less; a zstd bomb stops here.
const UNPACK_RATIO: u64 = 1_000;

const UNPACK_FLOOR: u64 = 64 << 20;

/// Why a release's file cannot be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unread {
    /// The folder's file cannot be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is not UTF-8 text.
    #[error("{0}")]
    NotText(#[from] std::string::FromUtf8Error),
    /// Its checksum could not be made.
    #[error("{0}")]
    Pack(#[from] PackError),
    /// The archive holds no such file.
    #[error("not in the archive")]
    NotInArchive,
}

/// A release's files, by their path below the pack folder
/// (`manifest.json`, `release/tier-01.txt`).
pub(super) enum Source {
    /// A pack folder or an unpacked archive.
    Folder(PathBuf),
    /// A `.tar.zst` release archive.
    Archive(Archive),
}

/// What the first pass over an archive found.
pub(super) struct Archive {
    path: PathBuf,
    /// Every regular file: its SHA-256.
    sums: BTreeMap<String, String>,
    /// The files a check reads whole before the levels.
    kept: HashMap<String, Vec<u8>>,
    /// The most a pass reads.
    most: u64,
}

/// Whether a check reads the file at `name` whole before the level files.
fn kept(name: &str) -> bool {
    let release = format!("{}/", dir::RELEASE);
    name == dir::MANIFEST
        || name == format!("{release}{}", dir::SHA256SUMS)
        || name.strip_prefix(&release).is_some_and(|n| {
            n.starts_with("seeds/")
                || n.starts_with("solutions/")
                || n.starts_with(&format!("{}/", crate::job::PROGRAM_FOLDER))
        })
}

impl Source {
    /// The files of the archive at `path`, read once through.
    pub(super) fn archive(path: &Path) -> Result<Source, PackError> {
        let size = std::fs::metadata(path)
            .map_err(PackError::io("read", path))?
            .len();
        let most = size
            .saturating_mul(UNPACK_RATIO)
            .saturating_add(UNPACK_FLOOR);
        let (mut sums, mut kept_files) = (BTreeMap::new(), HashMap::new());
        stream(path, most, &mut |name, entry| {
            if sums.contains_key(name) {
                return Err(format!("`{name}` is in it twice"));
            }
            let sha = if kept(name) {
                let mut bytes = Vec::new();
                entry
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("`{name}`: {e}"))?;
                let sha = Sha256::digest(&bytes);
                kept_files.insert(name.to_string(), bytes);
                sha
            } else {
                let mut sha = Sha256::new();
                std::io::copy(entry, &mut sha).map_err(|e| format!("`{name}`: {e}"))?;
                sha.finalize()
            };
            sums.insert(name.to_string(), format!("{sha:x}"));
            Ok(())
        })?;
        Ok(Source::Archive(Archive {
            path: path.to_path_buf(),
            sums,
            kept: kept_files,
            most,
        }))
    }

    /// The text of the file at `name`.
    pub(super) fn read(&self, name: &str) -> Result<String, Unread> {
        match self {
            Source::Folder(root) => Ok(std::fs::read_to_string(root.join(name))?),
            Source::Archive(a) => match a.kept.get(name) {
                Some(bytes) => Ok(String::from_utf8(bytes.clone())?),
                None => Err(Unread::NotInArchive),
            },
        }
    }

    /// The folder of the game program the release carries
    /// (`release/program/`, `[release] program = true`), if it carries one:
    /// a folder's own, or an archive's files written into `unpacked`.
    pub(super) fn program_dir(&self, unpacked: &Path) -> Result<Option<PathBuf>, PackError> {
        let prefix = format!("{}/{}/", dir::RELEASE, crate::job::PROGRAM_FOLDER);
        match self {
            Source::Folder(root) => {
                let at = root.join(dir::RELEASE).join(crate::job::PROGRAM_FOLDER);
                Ok(at.is_dir().then_some(at))
            }
            Source::Archive(a) => {
                let mut any = false;
                for (name, bytes) in &a.kept {
                    let Some(rel) = name.strip_prefix(&prefix) else {
                        continue;
                    };
                    let inside = Path::new(rel)
                        .components()
                        .all(|c| matches!(c, std::path::Component::Normal(_)));
                    if !inside {
                        return Err(PackError::invalid(
                            &a.path,
                            format!("holds `{name}`, outside the program's folder"),
                        ));
                    }
                    let path = unpacked.join(rel);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent).map_err(PackError::io("create", parent))?;
                    }
                    std::fs::write(&path, bytes).map_err(PackError::io("write", &path))?;
                    any = true;
                }
                Ok(any.then(|| unpacked.to_path_buf()))
            }
        }
    }

    /// The SHA-256 of the file at `name`; `None` when it is not a regular
    /// file (a link, a folder or a device: never read).
    pub(super) fn sha256(&self, name: &str) -> Result<Option<String>, Unread> {
        match self {
            Source::Folder(root) => {
                let path = root.join(name);
                let regular = std::fs::symlink_metadata(&path).map(|m| m.file_type().is_file())?;
                match regular {
                    true => Ok(Some(crate::durable::sha256_file(&path)?)),
                    false => Ok(None),
                }
            }
            Source::Archive(a) => a
                .sums
                .get(name)
                .cloned()
                .map(Some)
                .ok_or(Unread::NotInArchive),
        }
    }

    /// Every file below `release/`, by its path there.
    pub(super) fn release_files(&self) -> Result<Vec<String>, PackError> {
        match self {
            Source::Folder(root) => {
                let mut names = Vec::new();
                dir::walk_files(&root.join(dir::RELEASE), &mut |name| {
                    names.push(name);
                    false
                })?;
                Ok(names)
            }
            Source::Archive(a) => {
                let release = format!("{}/", dir::RELEASE);
                Ok(a.sums
                    .keys()
                    .filter_map(|n| n.strip_prefix(&release))
                    .map(String::from)
                    .collect())
            }
        }
    }

    /// Hands each of `names` (paths below `release/`) with its text to
    /// `visit`, in any order; a file that cannot be read as text is skipped
    /// (its checksum already failed, or its check says why).
    pub(super) fn each_release_text(
        &self,
        names: &[&String],
        visit: &mut dyn FnMut(&str, String),
    ) -> Result<(), PackError> {
        match self {
            Source::Folder(root) => {
                for name in names {
                    let path = root.join(dir::RELEASE).join(name);
                    if let Ok(text) = std::fs::read_to_string(path) {
                        visit(name, text);
                    }
                }
                Ok(())
            }
            Source::Archive(a) => {
                let release = format!("{}/", dir::RELEASE);
                let wanted: HashSet<&str> = names.iter().map(|n| n.as_str()).collect();
                stream(&a.path, a.most, &mut |name, entry| {
                    let Some(below) = name.strip_prefix(&release).filter(|n| wanted.contains(n))
                    else {
                        return Ok(());
                    };
                    let mut text = String::new();
                    if entry.read_to_string(&mut text).is_ok() {
                        visit(below, text);
                    }
                    Ok(())
                })
            }
        }
    }
}

/// One pass over the archive at `path`: each regular file handed to `visit`
/// with its path below the one pack folder, read through a bound of `most`
/// bytes in all.
fn stream(
    path: &Path,
    most: u64,
    visit: &mut dyn FnMut(&str, &mut dyn Read) -> Result<(), String>,
) -> Result<(), PackError> {
    use tar::EntryType;
    let invalid = |why: String| {
        PackError::invalid(path, format!("is not a release archive (.tar.zst): {why}"))
    };
    let file = std::fs::File::open(path).map_err(PackError::io("open", path))?;
    let zstd = zstd::Decoder::new(file).map_err(PackError::io("read", path))?;
    let mut tar = tar::Archive::new(zstd);
    let mut root: Option<String> = None;
    let mut read = 0u64;
    // Raw: a GNU long name or link, or a pax header, is an entry of its own
    // here (refused below, unread), never applied to the next. `pregen
    // archive` writes ustar headers alone, and an entry with two names (a
    // GNU long name for one reader, a pax `path` for another) could unpack
    // to something other than what was verified; nor is a header of any
    // size read into memory.
    let entries = tar.entries().map_err(|e| invalid(e.to_string()))?.raw(true);
    for entry in entries {
        let entry = entry.map_err(|e| invalid(e.to_string()))?;
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| invalid(e.to_string()))?;
        let kind = entry.header().entry_type();
        if !matches!(kind, EntryType::Regular | EntryType::Directory) {
            return Err(invalid(format!(
                "`{name}` is a {kind:?} entry: a release holds folders and files alone, in \
                 ustar headers (no GNU long names, no pax headers)"
            )));
        }
        if kind == EntryType::Directory && entry.size() > 0 {
            return Err(invalid(format!(
                "the folder `{name}` carries {} bytes of data: a folder holds none",
                entry.size()
            )));
        }
        let (top, below) = name.split_once('/').unwrap_or((name.as_str(), ""));
        let below = below.trim_end_matches('/');
        let outside = top.is_empty()
            || top == ".."
            || top == "."
            || below
                .split('/')
                .any(|part| part == ".." || part == "." || (part.is_empty() && !below.is_empty()));
        let root = root.get_or_insert_with(|| top.to_string());
        if outside || top != root.as_str() {
            return Err(invalid(format!(
                "`{name}` lies outside its one pack folder `{root}`"
            )));
        }
        if kind == EntryType::Directory || below.is_empty() {
            continue;
        }
        read = read.saturating_add(entry.size());
        if read > most {
            return Err(invalid(format!(
                "it holds more than {most} bytes, {UNPACK_RATIO} times its size: refused"
            )));
        }
        let below = below.to_string();
        let mut bounded = entry.take(most);
        visit(&below, &mut bounded).map_err(invalid)?;
    }
    if root.is_none() {
        return Err(invalid("it holds no pack folder".into()));
    }
    Ok(())
}
