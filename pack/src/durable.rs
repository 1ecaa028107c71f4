//! Durable writes and checksums: a file is written to a temporary name,
//! synced and renamed into place, so it exists whole or not at all.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

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
    sync_folder(dir)
}

/// Publishes a written pack in three durable steps: the manifest's bytes go to
/// a temporary name and one sync makes them and every file of `files` durable;
/// the manifest is renamed into place and the folder synced; then the empty
/// `marker` is created and the folder synced again. So the marker never exists
/// without the manifest, nor the manifest without the files it names, with
/// three syncs where a sync per file would take one each.
pub fn publish<'a>(
    dir: &Path,
    files: impl Iterator<Item = &'a String>,
    manifest: (&str, &[u8]),
    marker: &str,
) -> Result<(), PackError> {
    let (name, bytes) = manifest;
    let tmp_name = format!(".{name}.tmp");
    let tmp = dir.join(&tmp_name);
    fs::write(&tmp, bytes).map_err(PackError::io("write", &tmp))?;
    sync_filesystem(dir, files.map(|f| f.as_str()).chain([tmp_name.as_str()]))?;
    let path = dir.join(name);
    fs::rename(&tmp, &path).map_err(PackError::io("rename into place", &path))?;
    sync_folder(dir)?;
    let marker = dir.join(marker);
    File::create(&marker).map_err(PackError::io("create", &marker))?;
    sync_folder(dir)
}

fn sync_folder(dir: &Path) -> Result<(), PackError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(PackError::io("sync", dir))
}

/// SHA-256 of a file, lower-case hex, streamed (a file is never held
/// whole in memory).
pub fn sha256_file(path: &Path) -> Result<String, PackError> {
    use sha2::Digest;
    let mut file = fs::File::open(path).map_err(PackError::io("read", path))?;
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(PackError::io("read", path))?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// Makes the written files durable before a manifest names them: one
/// `syncfs` on Linux, a sync per file elsewhere.
pub fn sync_filesystem(
    dir: &Path,
    files: impl Iterator<Item = impl AsRef<str>>,
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
            let path = dir.join(rel.as_ref());
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(PackError::io("sync", &path))?;
        }
        Ok(())
    }
}
