//! A release archive unpacked for its check: entry by entry, bounded.

use std::path::Path;

use crate::PackError;

/// The most an archive may unpack to: this many times its own size, plus a
/// floor. A real release (text and JSON compressed by zstd) unpacks to far
/// less; a zstd bomb stops here, before it fills the disk.
const UNPACK_RATIO: u64 = 1_000;

const UNPACK_FLOOR: u64 = 64 << 20;

/// Unpacks a release archive into `into`, entry by entry: folders and
/// regular files only (a link, a device or a sparse entry is refused before
/// anything is read through it), no entry outside `into`, and no more bytes
/// than [`UNPACK_RATIO`] times the archive (plus [`UNPACK_FLOOR`]).
pub(super) fn unpack(archive: &Path, into: &Path) -> Result<(), PackError> {
    use tar::EntryType;
    let invalid = |why: String| {
        PackError::invalid(
            archive,
            format!("is not a release archive (.tar.zst): {why}"),
        )
    };
    let file = std::fs::File::open(archive).map_err(PackError::io("open", archive))?;
    let size = file
        .metadata()
        .map_err(PackError::io("read", archive))?
        .len();
    let most = size
        .saturating_mul(UNPACK_RATIO)
        .saturating_add(UNPACK_FLOOR);
    let zstd = zstd::Decoder::new(file).map_err(PackError::io("read", archive))?;
    let mut tar = tar::Archive::new(zstd);
    let mut unpacked = 0u64;
    for entry in tar.entries().map_err(|e| invalid(e.to_string()))? {
        let mut entry = entry.map_err(|e| invalid(e.to_string()))?;
        let name = entry
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match entry.header().entry_type() {
            EntryType::Regular | EntryType::Directory => {}
            other => {
                return Err(invalid(format!(
                    "`{name}` is a {other:?} entry: a release holds folders and files alone"
                )));
            }
        }
        unpacked = unpacked.saturating_add(entry.size());
        if unpacked > most {
            return Err(invalid(format!(
                "it unpacks to more than {most} bytes, {UNPACK_RATIO} times its size: refused"
            )));
        }
        let inside = entry
            .unpack_in(into)
            .map_err(|e| invalid(format!("`{name}`: {e}")))?;
        if !inside {
            return Err(invalid(format!(
                "`{name}` lies outside the archive's folder"
            )));
        }
    }
    Ok(())
}
