//! The durable commit log: `commit/` in the pack's output folder.
//!
//! `commit/job.json` names the job the log belongs to. Results are appended as
//! numbered segments (`seg-00000001.bin`), each written to a temporary
//! file, fsynced, and renamed into place, then the folder is fsynced: a
//! segment is either wholly there or absent, so a coordinator killed at any
//! instant resumes from exactly the segments it finished.
//!
//! A segment is a header line (JSON: the format version, the job id, the
//! segment's number and record count, and its body's length and keyed
//! checksum) followed by the body: a zstd frame of length-delimited entries,
//! each `u32 LE length | kind | payload`, kind 0 a seed's result in its
//! binary form ([`pregen_pack::codec`]), kind 1 a worker the cross-check
//! refused (JSON `{"worker":…,"reason":…}`; its results before it no longer
//! count). The checksum is an HMAC-SHA256 under the log's key
//! (`commit/cross-check.key`, [`key`]) over the job id, the segment's number,
//! its record count and its body. Segments of older versions (unkeyed
//! checksums) are refused, naming the version.
//!
//! The log checks itself: a segment of another job, an edited or damaged
//! body, a segment resealed under another key, a renamed or missing segment,
//! segments without their key file are refused with an error naming the
//! file. Only a torn end of the last segment (a write cut short on a file
//! system that does not rename atomically) is taken, with a warning: its
//! binary body's checksum covers the whole body, so none of its entries is
//! kept and their seeds run again (a JSON-lines segment, checksummed a line
//! at a time, keeps its whole lines). On resume the coordinator checks every
//! accepted level again as it checks a worker's (`server`), so a log
//! re-encoded with fresh checksums cannot slip in a level of other params.
//!
//! `commit/LOCK` is held (an advisory lock) while a coordinator uses the log;
//! a second coordinator on the same pack folder is refused, naming the holder.
//!
//! - [`segment`]: the segment format, written and read.
//! - [`key`]: the log's key and the segments' seal.

pub mod key;
mod segment;
#[cfg(test)]
mod tests;

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use pregen_pack::durable::write_durably;
use pregen_pack::job::STRATUM_SEEDS;
use pregen_pack::{Job, PackError, SeedRecord};
use rayon::prelude::*;

use crate::{CoordinatorError, ResumeError};
use key::LogKey;
use segment::{Segment, SegmentEncoder, damaged, read_segment};

/// One entry of the log, replayed in order on resume.
#[derive(Debug, Clone, PartialEq)]
// Results are nearly every entry: boxing them would cost an allocation each.
#[allow(clippy::large_enum_variant)]
pub enum Entry {
    /// A seed's result: its first, or a second run that checked it.
    Result(SeedRecord),
    /// A worker refused by the cross-check.
    Refused {
        /// Its name.
        worker: String,
        /// Why.
        reason: String,
    },
}

impl Entry {
    /// The seed's result, if this is one.
    pub fn result(&self) -> Option<&SeedRecord> {
        match self {
            Entry::Result(r) => Some(r),
            Entry::Refused { .. } => None,
        }
    }

    /// A rough count of the memory the entry takes.
    fn memory(&self) -> usize {
        match self {
            Entry::Result(r) => r.memory(),
            Entry::Refused { worker, reason } => 64 + worker.len() + reason.len(),
        }
    }
}

/// Whether opening the log may change it (write `job.json`, cut a torn
/// record back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Repair,
    ReadOnly,
}

/// An open commit log, locked for this process.
#[derive(Debug)]
pub struct CommitLog {
    dir: PathBuf,
    job_id: String,
    next_segment: u64,
    /// The whole log in memory while this process wrote all of it and it
    /// fits the limit given to [`CommitLog::keep_in_memory`].
    kept: Option<Kept>,
    encoder: SegmentEncoder,
    /// The log's prefix in an object store, where every segment is put
    /// create-only as well ([`CommitLog::mirror_to`]).
    mirror: Option<pregen_store::Remote>,
    /// Holds the advisory lock while the log is open.
    _lock: File,
}

/// The entries of the log in order, as the segments were appended (each
/// segment's entries kept as they came, not copied into one growing list),
/// with the memory they take and may take.
#[derive(Debug)]
struct Kept {
    segments: Vec<Vec<Entry>>,
    bytes: usize,
    limit: usize,
}

impl CommitLog {
    /// Opens (or creates) the log for `job` in `dir` under `key` (the one
    /// beside it, or one drawn for a new log: [`LogKey::read_or_draw`], then
    /// written beside it), handing every entry already committed to
    /// `on_entry` in log order, one segment in memory at a time. Refuses a
    /// log written for another job, a damaged segment, and a folder another
    /// coordinator is using.
    pub fn open(
        dir: &Path,
        job: &Job,
        mut key: LogKey,
        mut on_entry: impl FnMut(Entry),
    ) -> Result<CommitLog, CoordinatorError> {
        fs::create_dir_all(dir).map_err(PackError::io("create", dir))?;
        let lock = lock(dir)?;
        let known = (!key.is_new()).then_some(&key);
        let next_segment = Self::load(dir, job, Mode::Repair, known, &mut on_entry)?;
        key.keep(dir, false)?;
        Ok(CommitLog {
            dir: dir.to_path_buf(),
            job_id: job.id(),
            next_segment,
            kept: None,
            encoder: SegmentEncoder::new(key)
                .map_err(|e| CoordinatorError::server("a zstd compressor")(e.into()))?,
            mirror: None,
            _lock: lock,
        })
    }

    /// Keeps a copy of every entry appended from now on, up to about `limit`
    /// bytes, so that [`CommitLog::take_entries`] need not read the log back:
    /// only for a log opened empty (a resumed log is on disk), and dropped
    /// whole when it outgrows the limit.
    pub fn keep_in_memory(&mut self, limit: usize) {
        if self.next_segment == 1 {
            self.kept = Some(Kept {
                segments: Vec::new(),
                bytes: 0,
                limit,
            });
        }
    }

    /// Hands the entries of a segment just appended to the copy in memory,
    /// if one is kept.
    pub fn keep(&mut self, entries: Vec<Entry>) {
        let Some(kept) = &mut self.kept else {
            return;
        };
        kept.bytes += entries.iter().map(Entry::memory).sum::<usize>();
        if kept.bytes > kept.limit {
            self.kept = None;
        } else {
            kept.segments.push(entries);
        }
    }

    /// Every entry of the log in order, for the pack: the copy in memory when
    /// one was kept from the first segment on (taken: later calls read the
    /// disk), else read back as [`CommitLog::for_each`] reads it.
    pub fn take_entries(
        &mut self,
        job: &Job,
        mut on_entry: impl FnMut(Entry),
    ) -> Result<(), CoordinatorError> {
        match self.kept.take() {
            Some(kept) => {
                kept.segments.into_iter().flatten().for_each(on_entry);
                Ok(())
            }
            None => Self::for_each(&self.dir, job, &mut on_entry),
        }
    }

    /// Hands the entries of the log in `dir` for `job` to `on_entry` in log
    /// order without taking the lock or changing any file (a torn last
    /// record is skipped, not cut), e.g. to write the pack from the log of
    /// the running coordinator, or to inspect it.
    pub fn for_each(
        dir: &Path,
        job: &Job,
        mut on_entry: impl FnMut(Entry),
    ) -> Result<(), CoordinatorError> {
        let key = LogKey::read(dir)?;
        Self::load(dir, job, Mode::ReadOnly, key.as_ref(), &mut on_entry).map(|_| ())
    }

    /// Every entry of the log in `dir` for `job`, read as
    /// [`CommitLog::for_each`] does: for tests and small logs.
    pub fn read(dir: &Path, job: &Job) -> Result<Vec<Entry>, CoordinatorError> {
        let mut entries = Vec::new();
        Self::for_each(dir, job, |e| entries.push(e))?;
        Ok(entries)
    }

    /// Checks `job.json` (writing it for a new log) and reads every segment
    /// into `on_entry`, each proven under `key` (`None`: the log has no key
    /// file, so it must hold no segment); returns the next segment's number.
    fn load(
        dir: &Path,
        job: &Job,
        mode: Mode,
        key: Option<&LogKey>,
        on_entry: &mut dyn FnMut(Entry),
    ) -> Result<u64, CoordinatorError> {
        let job_id = job.id();
        let job_file = dir.join("job.json");
        let job_json = serde_json::to_string_pretty(job).map_err(|source| PackError::Json {
            path: job_file.clone(),
            source,
        })?;
        if job_file.exists() {
            let stored = fs::read_to_string(&job_file).map_err(PackError::io("read", &job_file))?;
            let stored: Job = serde_json::from_str(&stored).map_err(|e| ResumeError::NotAJob {
                path: job_file.clone(),
                why: e.to_string(),
            })?;
            // Compared as stored: run limits such as `max_seeds` are not
            // part of the job.
            if stored.id() != job_id {
                return Err(ResumeError::OtherJob {
                    dir: dir.to_path_buf(),
                    stored: stored.id(),
                    job: job_id.to_string(),
                }
                .into());
            }
        } else if mode == Mode::Repair {
            write_durably(dir, "job.json", job_json.as_bytes())?;
        }
        let mut segments: Vec<(u64, PathBuf)> = fs::read_dir(dir)
            .map_err(PackError::io("list", dir))?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let stem = name.strip_prefix("seg-")?;
                let n = stem
                    .strip_suffix(".bin")
                    .or_else(|| stem.strip_suffix(".jsonl"))?
                    .parse()
                    .ok()?;
                Some((n, e.path()))
            })
            .collect();
        segments.sort();
        let key = match (key, segments.first()) {
            (Some(key), _) => key,
            (None, None) => return Ok(1),
            (None, Some((_, path))) => {
                return Err(damaged(
                    path,
                    format!(
                        "the log's key {} is missing, so no segment can be proven",
                        key::KEY_FILE
                    ),
                ));
            }
        };
        let seeds: Vec<(u64, u64)> = job
            .plan()
            .iter()
            .map(|p| (p.first_seed, p.first_seed.saturating_add(STRATUM_SEEDS)))
            .collect();
        for (i, (n, path)) in segments.iter().enumerate() {
            if *n != i as u64 + 1 {
                let what = if *n == i as u64 {
                    format!("a second segment numbered {n}")
                } else {
                    format!("segment {} is missing before it", i + 1)
                };
                return Err(damaged(path, what));
            }
        }
        // Segments are read and decoded a window at a time in parallel, and
        // handed on in order; the first damaged one in log order is the error.
        let window = 4 * rayon::current_num_threads();
        for (w, chunk) in segments.chunks(window).enumerate() {
            let read: Vec<Result<Vec<Entry>, CoordinatorError>> = chunk
                .par_iter()
                .enumerate()
                .map(|(j, (n, path))| {
                    let segment = Segment {
                        path,
                        job_id: &job_id,
                        key,
                        seeds: &seeds,
                        n: *n,
                        last: w * window + j + 1 == segments.len(),
                    };
                    let mut records = Vec::new();
                    read_segment(&segment, mode, &mut records).map(|()| records)
                })
                .collect();
            for records in read {
                records?.into_iter().for_each(&mut *on_entry);
            }
        }
        Ok(segments.last().map_or(1, |(n, _)| n + 1))
    }

    /// Appends entries as one durable segment (nothing for an empty batch).
    pub fn append(&mut self, records: &[Entry]) -> Result<(), CoordinatorError> {
        if records.is_empty() {
            return Ok(());
        }
        let name = segment_name(self.next_segment);
        let bytes = self
            .encoder
            .encode(&self.job_id, self.next_segment, records)
            .map_err(|e| CoordinatorError::server(format!("encoding {name}"))(e.into()))?;
        write_durably(&self.dir, &name, &bytes)?;
        if let Some(mirror) = &self.mirror
            && let Err(e) = put_once(mirror, &name, bytes)
        {
            // Not in the store, so not in the log: the batch is written
            // again under this number.
            let _ = fs::remove_file(self.dir.join(&name));
            return Err(e);
        }
        self.next_segment += 1;
        Ok(())
    }

    /// Keeps the log in an object store as well: every file of it the
    /// store lacks is put there now (`job.json`, the key, the segments),
    /// and every segment appended from now on, each create-only, so that a
    /// coordinator started with an empty disk resumes from the store alone.
    pub(crate) fn mirror_to(
        &mut self,
        remote: pregen_store::Remote,
    ) -> Result<(), CoordinatorError> {
        let there: std::collections::HashSet<String> =
            remote.list()?.into_iter().map(|o| o.name).collect();
        let mut names: Vec<String> = fs::read_dir(&self.dir)
            .map_err(PackError::io("read", &self.dir))?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n == "job.json" || n == key::KEY_FILE || n.starts_with("seg-"))
            .filter(|n| !n.ends_with(".tmp") && !there.contains(n))
            .collect();
        names.sort();
        for name in names {
            let path = self.dir.join(&name);
            let bytes = fs::read(&path).map_err(PackError::io("read", &path))?;
            put_once(&remote, &name, bytes)?;
        }
        self.mirror = Some(remote);
        Ok(())
    }
}

/// Puts `bytes` as the object `name` unless it is there; one already there
/// must hold the same bytes, else another coordinator wrote it.
fn put_once(
    remote: &pregen_store::Remote,
    name: &str,
    bytes: Vec<u8>,
) -> Result<(), CoordinatorError> {
    if remote.create(name, bytes.clone())? || remote.read(name)?.as_deref() == Some(&bytes[..]) {
        return Ok(());
    }
    Err(CoordinatorError::Fenced(format!(
        "{} was written by another coordinator (or an earlier attempt whose answer was lost)",
        remote.url_of(name)
    )))
}

pub(super) fn segment_name(n: u64) -> String {
    format!("seg-{n:08}.bin")
}

/// Takes `commit/LOCK` for this process, or names who holds it.
fn lock(dir: &Path) -> Result<File, CoordinatorError> {
    let path = dir.join("LOCK");
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(PackError::io("open", &path))?;
    if file.try_lock().is_err() {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        return Err(ResumeError::InUse {
            dir: dir.to_path_buf(),
            holder: holder.trim().to_string(),
        }
        .into());
    }
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "this host".into());
    let holder = format!("pid {} on {host}", std::process::id());
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(holder.as_bytes()))
        .map_err(PackError::io("write", &path))?;
    Ok(file)
}
