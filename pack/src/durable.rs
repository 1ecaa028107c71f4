//! Durable writes and checksums: a file is written to a temporary name,
//! synced and renamed into place, so it exists whole or not at all.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use pregen_games::sha256_hex;

use crate::PackError;

/// Writes `name` in `dir` atomically: temp file, fsync, rename, fsync the folder.
pub fn write_durably(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), PackError> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut w = BufWriter::new(File::create(&tmp).map_err(PackError::io("create", &tmp))?);
        w.write_all(bytes).map_err(PackError::io("write", &tmp))?;
        let file = w
            .into_inner()
            .map_err(|e| PackError::io("write", &tmp)(e.into_error()))?;
        file.sync_all().map_err(PackError::io("sync", &tmp))?;
    }
    fs::rename(&tmp, &path).map_err(PackError::io("rename into place", &path))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(PackError::io("sync", dir))
}

/// SHA-256 of a file, lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String, PackError> {
    let bytes = fs::read(path).map_err(PackError::io("read", path))?;
    Ok(sha256_hex(&bytes))
}

/// Writes `(path relative to dir, bytes)` pairs on a few threads (creating many
/// small files is latency-bound) and returns each file's SHA-256.
pub fn write_files(
    dir: &Path,
    outputs: Vec<(String, Vec<u8>)>,
) -> Result<BTreeMap<String, String>, PackError> {
    let parents: BTreeSet<PathBuf> = outputs
        .iter()
        .filter_map(|(rel, _)| dir.join(rel).parent().map(Path::to_path_buf))
        .collect();
    for parent in parents {
        fs::create_dir_all(&parent).map_err(PackError::io("create", &parent))?;
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let chunk = outputs.len().div_ceil(threads).max(1);
    let hashed = std::thread::scope(|scope| {
        let handles: Vec<_> = outputs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(rel, bytes)| {
                            let path = dir.join(rel);
                            fs::write(&path, bytes).map_err(PackError::io("write", &path))?;
                            Ok((rel.clone(), sha256_hex(bytes)))
                        })
                        .collect::<Result<Vec<_>, PackError>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(PackError::invalid(dir, "a file writer panicked")))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    Ok(hashed.into_iter().flatten().collect())
}

/// Makes the written files durable before a manifest names them: one
/// `syncfs` on Linux, a sync per file elsewhere.
pub fn sync_filesystem<'a>(
    dir: &Path,
    files: impl Iterator<Item = &'a String>,
) -> Result<(), PackError> {
    #[cfg(target_os = "linux")]
    {
        let _ = files;
        let handle = File::open(dir).map_err(PackError::io("open", dir))?;
        rustix::fs::syncfs(&handle).map_err(|e| PackError::io("sync", dir)(e.into()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        for rel in files {
            let path = dir.join(rel);
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(PackError::io("sync", &path))?;
        }
        Ok(())
    }
}
