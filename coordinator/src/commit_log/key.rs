//! The log's key, `commit/cross-check.key` (32 hex digits): drawn when the
//! log is made and kept beside it, never sent. It keys the cross-check's
//! sample, the workers' identities and every segment's checksum
//! (HMAC-SHA256), so a segment rewritten by someone who cannot read the key
//! is refused however consistent its sums; whoever can read the key can
//! write the log, as the coordinator does.

use std::path::Path;

use hmac::{Hmac, Mac};
use pregen_pack::PackError;
use pregen_pack::durable::write_durably;
use sha2::Sha256;

use crate::{CoordinatorError, ResumeError};

/// The key's file in the log's folder.
pub const KEY_FILE: &str = "cross-check.key";

/// The key of a commit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogKey {
    bytes: [u8; 16],
    /// Drawn now: written beside the log once the log is opened (never into
    /// another job's folder).
    new: bool,
}

impl LogKey {
    /// A key of these bytes, as if read from beside a log (for tools that
    /// make segments of their own, such as the fuzzers).
    pub fn from_bytes(bytes: [u8; 16]) -> LogKey {
        LogKey { bytes, new: false }
    }

    /// The key beside the log in `commit`, or a new one when there is none.
    pub fn read_or_draw(commit: &Path) -> Result<LogKey, CoordinatorError> {
        if let Some(key) = Self::read(commit)? {
            return Ok(key);
        }
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| {
            CoordinatorError::server("no randomness for the log's key")(e.to_string().into())
        })?;
        Ok(LogKey { bytes, new: true })
    }

    /// The key beside the log in `commit`, `None` when there is none.
    pub fn read(commit: &Path) -> Result<Option<LogKey>, CoordinatorError> {
        let path = commit.join(KEY_FILE);
        // A regular file, read to a bound: a key that is a device or a
        // FIFO is refused, never read without end nor waited on.
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => {
                return Err(ResumeError::BadKey {
                    path: path.to_path_buf(),
                }
                .into());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(PackError::io("read", &path)(e).into()),
        }
        let mut text = String::new();
        std::fs::File::open(&path)
            .and_then(|file| {
                std::io::Read::read_to_string(&mut std::io::Read::take(file, 64), &mut text)
            })
            .map_err(|e| PackError::io("read", &path)(e))?;
        let bytes: Option<Vec<u8>> = (text.len() == 32)
            .then(|| {
                (0..16)
                    .map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect()
            })
            .flatten();
        let bytes = bytes
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .ok_or_else(|| ResumeError::BadKey {
                path: path.to_path_buf(),
            })?;
        Ok(Some(LogKey { bytes, new: false }))
    }

    /// The key's bytes.
    pub fn bytes(&self) -> [u8; 16] {
        self.bytes
    }

    /// Whether the key was drawn now, not read.
    pub(super) fn is_new(&self) -> bool {
        self.new
    }

    /// Writes the key beside the log in `commit` if it was drawn now (or
    /// `always`).
    pub fn keep(&mut self, commit: &Path, always: bool) -> Result<(), CoordinatorError> {
        if self.new || always {
            write_durably(commit, KEY_FILE, pregen_games::hex(&self.bytes).as_bytes())?;
            self.new = false;
        }
        Ok(())
    }

    /// The keyed checksum of segment `n` of job `job_id`, holding `records`
    /// entries in `body` (compressed): hex HMAC-SHA256 over all of them, so
    /// neither the body nor its header's fields can change alone.
    pub fn seal(&self, job_id: &str, n: u64, records: u64, body: &[u8]) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.bytes)
            .expect("HMAC takes a key of any length");
        mac.update(b"pregen-commit-log segment\0");
        mac.update(job_id.as_bytes());
        mac.update(b"\0");
        mac.update(&n.to_le_bytes());
        mac.update(&records.to_le_bytes());
        mac.update(&(body.len() as u64).to_le_bytes());
        mac.update(body);
        pregen_games::hex(&mac.finalize().into_bytes())
    }
}
