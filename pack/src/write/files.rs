//! A file written through a buffer with its SHA-256 computed on the way
//! (a Parquet file's footer patched as it closes).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::PackError;

/// A file written through a buffer with its SHA-256 computed on the way.
pub(super) struct HashingFile {
    pub(super) out: BufWriter<File>,
    pub(super) hasher: Sha256,
    pub(super) path: PathBuf,
    /// A Parquet file's last bytes, held back until it is closed so that its
    /// footer's float column orders can be made readable (`footer.rs`).
    pub(super) held: Option<Vec<u8>>,
    /// What takes the file once it is closed, with its name in the pack.
    pub(super) delivery: Option<(Delivery, String)>,
}

/// What takes each file of a pack as soon as it is written whole and closed
/// (given the pack's folder and the file's name in it): a pack kept in an
/// object store uploads it there and removes the local copy, so the local
/// disk holds only the files being written. The files are never read back.
#[derive(Clone)]
pub struct Delivery(pub Arc<dyn Fn(&Path, &str) -> Result<(), PackError> + Send + Sync>);

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Delivery")
    }
}

/// The bytes a Parquet file holds back: more than its footer ever takes.
pub(super) const HELD: usize = 1 << 20;

impl HashingFile {
    /// Creates `rel` under `root` (and its folder).
    pub(super) fn create(root: &Path, rel: &str) -> Result<Self, PackError> {
        Self::with_buffer(root, rel, 64 << 10)
    }

    /// [`HashingFile::create`] with `buffer` bytes of write buffer: small for
    /// the many small release files (a large one per file is an allocation
    /// and page faults each), large for the Parquet files.
    pub(super) fn with_buffer(root: &Path, rel: &str, buffer: usize) -> Result<Self, PackError> {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(PackError::io("create", parent))?;
        }
        let file = File::create(&path).map_err(PackError::io("create", &path))?;
        Ok(HashingFile {
            out: BufWriter::with_capacity(buffer, file),
            hasher: Sha256::new(),
            path,
            held: None,
            delivery: None,
        })
    }

    /// The file handed to `delivery` once closed (none: it stays).
    pub(super) fn delivered(mut self, delivery: Option<&Delivery>, rel: &str) -> Self {
        self.delivery = delivery.map(|d| (d.clone(), rel.to_string()));
        self
    }

    /// [`HashingFile::create`] for a Parquet file, whose footer is patched
    /// as it is closed.
    pub(super) fn create_parquet(root: &Path, rel: &str) -> Result<Self, PackError> {
        let mut file = Self::with_buffer(root, rel, 1 << 20)?;
        file.held = Some(Vec::with_capacity(2 * HELD));
        Ok(file)
    }

    pub(super) fn pass(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.hasher.update(bytes);
        Ok(())
    }

    pub(super) fn write_text(&mut self, text: &str) -> Result<(), PackError> {
        self.write_all(text.as_bytes())
            .map_err(PackError::io("write", &self.path))
    }

    /// Flushes and gives the file's SHA-256, lower-case hex.
    pub(super) fn close(mut self) -> Result<String, PackError> {
        if let Some(mut tail) = self.held.take() {
            if let Some(len) = crate::footer::metadata_len(&tail) {
                let end = tail.len() - 8;
                // A footer this module does not know is written as it is.
                let _ = crate::footer::type_defined_float_orders(&mut tail[end - len..end]);
            }
            self.pass(&tail)
                .map_err(PackError::io("write", &self.path))?;
        }
        self.out
            .flush()
            .map_err(PackError::io("write", &self.path))?;
        let sum = pregen_games::hex(&self.hasher.finalize());
        if let Some((delivery, rel)) = self.delivery {
            // The file closed before it is handed on.
            drop(self.out);
            let root = self
                .path
                .ancestors()
                .nth(Path::new(&rel).components().count())
                .unwrap_or(Path::new("."));
            (delivery.0)(root, &rel)?;
        }
        Ok(sum)
    }
}

impl Write for HashingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(mut tail) = self.held.take() else {
            let n = self.out.write(buf)?;
            self.hasher.update(&buf[..n]);
            return Ok(n);
        };
        tail.extend_from_slice(buf);
        let mut passed = Ok(());
        if tail.len() > 2 * HELD {
            let spill = tail.len() - HELD;
            passed = self.pass(&tail[..spill]);
            tail.drain(..spill);
        }
        self.held = Some(tail);
        passed.map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// For a job whose `[release] program` is set, the game program's files
/// (and its checker's) copied into the release's `program/` folder: each
/// with its name there (`program/rushhour.py`) and its SHA-256, in the
/// order the programs list them. A file named outside the program's folder
/// (an absolute path, a `..`) cannot be carried, and is refused.
pub(super) fn copy_program(
    root: &Path,
    job: &crate::Job,
    delivery: Option<&Delivery>,
) -> Result<Vec<(String, String)>, PackError> {
    use crate::dir::RELEASE;
    use crate::job::PROGRAM_FOLDER;
    let Some(spec) = job.external.as_ref().filter(|_| job.release.program) else {
        return Ok(Vec::new());
    };
    let programs = std::iter::once(spec.program()).chain(spec.checker_program());
    let mut copied: Vec<(String, String)> = Vec::new();
    for program in programs {
        for (name, path) in program.identity_files() {
            let inside = Path::new(&name)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !inside {
                return Err(PackError::Job(format!(
                    "field `release.program`: the program's file `{name}` lies outside its \
                     folder; list its files relative to it in `external.files`"
                )));
            }
            let name = format!("{PROGRAM_FOLDER}/{name}");
            if copied.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let bytes = fs::read(&path).map_err(PackError::io("read", &path))?;
            let rel = format!("{RELEASE}/{name}");
            let mut file = HashingFile::create(root, &rel)?.delivered(delivery, &rel);
            file.pass(&bytes)
                .map_err(PackError::io("write", &file.path))?;
            copied.push((name, file.close()?));
        }
    }
    Ok(copied)
}
