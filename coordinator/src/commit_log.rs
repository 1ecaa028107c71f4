//! The durable commit log: `commit/` in the pack's output folder.
//!
//! `commit/job.json` names the job the log belongs to. Results are appended as
//! numbered segments (`seg-00000001.bin`), each written to a temporary
//! file, fsynced, and renamed into place, then the folder is fsynced: a
//! segment is either wholly there or absent, so a coordinator killed at any
//! instant resumes from exactly the segments it finished.
//!
//! A segment is a header line (JSON: the format version, the job id, the
//! segment's number and record count, and its body's length and SHA-256)
//! followed by the body: a zstd frame of length-delimited entries, each
//! `u32 LE length | kind | payload`, kind 0 a seed's result in its binary
//! form ([`pregen_pack::codec`]), kind 1 a worker the cross-check refused
//! (JSON `{"worker":…,"reason":…}`; its results before it no longer count).
//! Logs of versions 2 and 3 (`seg-00000001.jsonl`, one checksummed JSON line
//! per entry) are still read, and a log goes on in the binary form.
//!
//! The log checks itself: a segment of another job, an edited or damaged
//! body, a renamed or missing segment is refused with an error naming the
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

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, Write};
use std::path::{Path, PathBuf};

use pregen_games::sha256_hex;
use pregen_pack::codec;
use pregen_pack::durable::write_durably;
use pregen_pack::job::STRATUM_SEEDS;
use pregen_pack::{Job, PackError, SeedRecord};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::CoordinatorError;

/// The segment format this build writes.
pub const FORMAT_VERSION: u32 = 4;
/// The newest format of JSON-lines segments, and the oldest this build reads.
const LAST_TEXT_VERSION: u32 = 3;
const OLDEST_VERSION: u32 = 2;

/// The zstd level of segment bodies: level 1 compresses a run's segments
/// about half again as fast as level 3, for 5 to 9% more bytes.
const ZSTD_LEVEL: i32 = 1;
/// The encoder's buffers keep at most this much between segments.
const KEPT_BUFFER: usize = 4 << 20;
/// The largest entry a segment may hold (a hostile length is refused before
/// anything is allocated for it).
const MAX_ENTRY_BYTES: usize = 64 << 20;
const KIND_RESULT: u8 = 0;
const KIND_REFUSED: u8 = 1;

/// One entry of the log, replayed in order on resume.
#[derive(Debug, Clone, PartialEq)]
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

    #[cfg(test)]
    fn to_json(&self) -> serde_json::Result<String> {
        match self {
            Entry::Result(r) => serde_json::to_string(r),
            Entry::Refused { worker, reason } => serde_json::to_string(&RefusedLine {
                refused: Refusal {
                    worker: worker.clone(),
                    reason: reason.clone(),
                },
            }),
        }
    }

    /// Appends the entry's length-delimited binary form to `out`.
    fn encode(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        match self {
            Entry::Result(r) => {
                out.push(KIND_RESULT);
                codec::encode(r, out);
            }
            Entry::Refused { worker, reason } => {
                out.push(KIND_REFUSED);
                serde_json::to_writer(
                    &mut *out,
                    &Refusal {
                        worker: worker.clone(),
                        reason: reason.clone(),
                    },
                )?;
            }
        }
        let len = (out.len() - start - 4) as u32;
        out[start..start + 4].copy_from_slice(&len.to_le_bytes());
        Ok(())
    }

    /// An entry from its kind and payload.
    fn decode(kind: u8, payload: &[u8]) -> Result<Entry, String> {
        match kind {
            KIND_RESULT => codec::decode(payload).map(Entry::Result),
            KIND_REFUSED => serde_json::from_slice::<Refusal>(payload)
                .map(|r| Entry::Refused {
                    worker: r.worker,
                    reason: r.reason,
                })
                .map_err(|e| e.to_string()),
            other => Err(format!("unknown kind {other}")),
        }
    }

    fn from_json(json: &str) -> serde_json::Result<Entry> {
        if json.starts_with(REFUSED_PREFIX) {
            let line: RefusedLine = serde_json::from_str(json)?;
            return Ok(Entry::Refused {
                worker: line.refused.worker,
                reason: line.refused.reason,
            });
        }
        serde_json::from_str(json).map(Entry::Result)
    }
}

const REFUSED_PREFIX: &str = "{\"refused\":";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RefusedLine {
    refused: Refusal,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Refusal {
    worker: String,
    reason: String,
}

/// A segment's first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    format: String,
    version: u32,
    job_id: String,
    segment: u64,
    records: u64,
    /// The binary body (version 4 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<Body>,
}

impl Header {
    fn new(version: u32, job_id: &str, segment: u64, records: usize, body: Option<Body>) -> Header {
        Header {
            format: FORMAT_NAME.into(),
            version,
            job_id: job_id.into(),
            segment,
            records: records as u64,
            body,
        }
    }
}

/// A binary segment's body, as its header describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    /// Its length in bytes (compressed).
    bytes: u64,
    /// The SHA-256 of those bytes, hex.
    sha256: String,
}

const FORMAT_NAME: &str = "pregen-commit-log";

/// Whether opening the log may change it (write `job.json`, cut a torn
/// record back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
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
    /// Opens (or creates) the log for `job` in `dir`, handing every entry
    /// already committed to `on_entry` in log order, one segment in memory at
    /// a time. Refuses a log written for another job, a damaged segment, and
    /// a folder another coordinator is using.
    pub fn open(
        dir: &Path,
        job: &Job,
        mut on_entry: impl FnMut(Entry),
    ) -> Result<CommitLog, CoordinatorError> {
        fs::create_dir_all(dir).map_err(PackError::io("create", dir))?;
        let lock = lock(dir)?;
        let next_segment = Self::load(dir, job, Mode::Repair, &mut on_entry)?;
        Ok(CommitLog {
            dir: dir.to_path_buf(),
            job_id: job.id(),
            next_segment,
            kept: None,
            encoder: SegmentEncoder::new()
                .map_err(|e| CoordinatorError::server("a zstd compressor")(e.into()))?,
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
        Self::load(dir, job, Mode::ReadOnly, &mut on_entry).map(|_| ())
    }

    /// Every entry of the log in `dir` for `job`, read as
    /// [`CommitLog::for_each`] does: for tests and small logs.
    pub fn read(dir: &Path, job: &Job) -> Result<Vec<Entry>, CoordinatorError> {
        let mut entries = Vec::new();
        Self::for_each(dir, job, |e| entries.push(e))?;
        Ok(entries)
    }

    /// Checks `job.json` (writing it for a new log) and reads every segment
    /// into `on_entry`; returns the next segment's number.
    fn load(
        dir: &Path,
        job: &Job,
        mode: Mode,
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
            let stored: Job = serde_json::from_str(&stored).map_err(|e| {
                CoordinatorError::Resume(format!("{} is not a job: {e}", job_file.display()))
            })?;
            // Compared as stored: run limits such as `max_seeds` are not
            // part of the job.
            if stored.id() != job_id {
                return Err(CoordinatorError::Resume(format!(
                    "{} holds job {} but this job is {}; use another pack name or output folder",
                    dir.display(),
                    stored.id(),
                    job_id
                )));
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
        self.next_segment += 1;
        Ok(())
    }
}

fn segment_name(n: u64) -> String {
    format!("seg-{n:08}.bin")
}

/// Encodes binary segments. The zstd context and the buffers are kept from
/// one segment to the next: a fresh context allocates (and the kernel zeroes)
/// its tables, and fresh buffers of a segment's size are fresh pages each
/// flush.
struct SegmentEncoder {
    zstd: zstd::bulk::Compressor<'static>,
    /// The entries of the segment being encoded, before compression.
    raw: Vec<u8>,
    /// Its compressed body.
    body: Vec<u8>,
}

impl std::fmt::Debug for SegmentEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SegmentEncoder")
    }
}

impl SegmentEncoder {
    fn new() -> std::io::Result<SegmentEncoder> {
        Ok(SegmentEncoder {
            zstd: zstd::bulk::Compressor::new(ZSTD_LEVEL)?,
            raw: Vec::new(),
            body: Vec::new(),
        })
    }

    /// A binary segment: its header line and its zstd body.
    fn encode(&mut self, job_id: &str, n: u64, records: &[Entry]) -> std::io::Result<Vec<u8>> {
        self.raw.clear();
        for r in records {
            r.encode(&mut self.raw)?;
        }
        self.body.clear();
        self.body
            .reserve(zstd::zstd_safe::compress_bound(self.raw.len()));
        self.zstd.compress_to_buffer(&self.raw, &mut self.body)?;
        let header = Header::new(
            FORMAT_VERSION,
            job_id,
            n,
            records.len(),
            Some(Body {
                bytes: self.body.len() as u64,
                sha256: sha256_hex(&self.body),
            }),
        );
        let mut bytes = serde_json::to_vec(&header)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&self.body);
        // A segment of a log that fell behind can be large; what is kept
        // between flushes stays small.
        self.raw.shrink_to(KEPT_BUFFER);
        self.body.shrink_to(KEPT_BUFFER);
        Ok(bytes)
    }
}

/// A record line's checksum: the first 16 hex digits of its JSON's SHA-256.
fn checksum(json: &str) -> String {
    let mut sum = sha256_hex(json.as_bytes());
    sum.truncate(16);
    sum
}

fn damaged(path: &Path, what: String) -> CoordinatorError {
    CoordinatorError::Resume(format!(
        "{}: {what}; the commit log was edited, damaged or mixed with another job's (move this \
         segment and every later one away to recompute their seeds: segments are numbered \
         without gaps)",
        path.display()
    ))
}

/// A segment file and what it must hold.
struct Segment<'a> {
    path: &'a Path,
    job_id: &'a str,
    /// The job's seeds: a range per stratum.
    seeds: &'a [(u64, u64)],
    /// Its number.
    n: u64,
    /// Whether it is the last (whose torn tail may be cut back).
    last: bool,
}

impl Segment<'_> {
    fn damaged(&self, what: String) -> CoordinatorError {
        damaged(self.path, what)
    }

    /// Refuses a result whose seed is not one of the job's.
    fn check_seed(
        &self,
        entry: &Entry,
        at: impl FnOnce() -> String,
    ) -> Result<(), CoordinatorError> {
        match entry {
            Entry::Result(r) if !self.seeds.iter().any(|&(a, b)| (a..b).contains(&r.seed)) => {
                Err(self.damaged(format!(
                    "{} holds seed {}, not one of the job's",
                    at(),
                    r.seed
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Reads a segment into `records`, checking its header and every entry.
fn read_segment(
    segment: &Segment<'_>,
    mode: Mode,
    records: &mut Vec<Entry>,
) -> Result<(), CoordinatorError> {
    let path = segment.path;
    let bytes = fs::read(path).map_err(PackError::io("read", path))?;
    let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
        return Err(segment.damaged("no whole header line".into()));
    };
    let header: Header = std::str::from_utf8(&bytes[..end])
        .map_err(|e| e.to_string())
        .and_then(|h| serde_json::from_str(h).map_err(|e| e.to_string()))
        .map_err(|e| segment.damaged(format!("line 1 is not a segment header ({e})")))?;
    if header.format != FORMAT_NAME || !(OLDEST_VERSION..=FORMAT_VERSION).contains(&header.version)
    {
        return Err(segment.damaged(format!(
            "format {} version {}, this build reads {FORMAT_NAME} versions {OLDEST_VERSION} to \
             {FORMAT_VERSION}",
            header.format, header.version
        )));
    }
    if header.job_id != segment.job_id {
        return Err(segment.damaged(format!(
            "written for job {}, this job is {}",
            header.job_id, segment.job_id
        )));
    }
    if header.segment != segment.n {
        return Err(segment.damaged(format!(
            "holds segment {} under the name of segment {}",
            header.segment, segment.n
        )));
    }
    let binary = path.extension().is_some_and(|e| e == "bin");
    let rest = &bytes[end + 1..];
    match (&header.body, binary) {
        (Some(body), true) if header.version > LAST_TEXT_VERSION => {
            read_binary(segment, &header, body, rest, mode, records)
        }
        (None, false) if header.version <= LAST_TEXT_VERSION => {
            read_text(segment, header, rest, mode, records)
        }
        _ => Err(segment.damaged(format!(
            "a version {} segment in a .{} file",
            header.version,
            if binary { "bin" } else { "jsonl" }
        ))),
    }
}

/// Reads a binary body (version 4 on).
fn read_binary(
    segment: &Segment<'_>,
    header: &Header,
    body: &Body,
    rest: &[u8],
    mode: Mode,
    records: &mut Vec<Entry>,
) -> Result<(), CoordinatorError> {
    let (have, declared) = (rest.len() as u64, body.bytes);
    if have > declared || (have < declared && !segment.last) {
        return Err(segment.damaged(format!(
            "a body of {have} bytes, the header says {declared}"
        )));
    }
    let torn = have < declared;
    if !torn && sha256_hex(rest) != body.sha256 {
        return Err(segment.damaged("the body fails its checksum".into()));
    }
    let start = records.len();
    let mut reader = zstd::stream::read::Decoder::with_buffer(rest)
        .map_err(|e| segment.damaged(format!("the body is not zstd ({e})")))?;
    let mut index = 0u64;
    let outcome: Result<(), String> = loop {
        let mut len = [0u8; 4];
        match fill(&mut reader, &mut len) {
            Ok(false) => break Ok(()),
            Ok(true) => {}
            Err(e) => break Err(format!("entry {} is cut short ({e})", index + 1)),
        }
        index += 1;
        if index > header.records {
            break Err(format!("more entries than the header's {}", header.records));
        }
        let len = u32::from_le_bytes(len) as usize;
        if !(1..=MAX_ENTRY_BYTES).contains(&len) {
            break Err(format!("entry {index} has a length of {len} bytes"));
        }
        let mut entry = vec![0u8; len];
        if let Err(e) = fill(&mut reader, &mut entry).and_then(|whole| {
            whole
                .then_some(())
                .ok_or_else(|| ErrorKind::UnexpectedEof.into())
        }) {
            break Err(format!("entry {index} is cut short ({e})"));
        }
        match Entry::decode(entry[0], &entry[1..]) {
            Ok(e) => {
                segment.check_seed(&e, || format!("entry {index}"))?;
                records.push(e);
            }
            Err(e) => break Err(format!("entry {index} is not an entry ({e})")),
        }
    };
    let read = (records.len() - start) as u64;
    match outcome {
        Ok(()) if read == header.records => {}
        Ok(()) if !torn => {
            return Err(segment.damaged(format!(
                "{read} entries, the header says {}",
                header.records
            )));
        }
        Err(e) if !torn => return Err(segment.damaged(e)),
        // Torn: the body's checksum covers the whole of it, so no entry of
        // what is left can be proven; none is taken, and their seeds are
        // run again (a write cut short loses at most one segment's work).
        _ => records.truncate(start),
    }
    if torn && mode == Mode::Repair {
        tracing::warn!(file = %segment.path.display(), lost = header.records,
            "a torn last segment: its entries are dropped and their seeds run again");
        let bytes = SegmentEncoder::new()
            .and_then(|mut encoder| encoder.encode(segment.job_id, segment.n, &records[start..]))
            .map_err(|e| CoordinatorError::server("re-encoding a torn segment")(e.into()))?;
        let dir = segment.path.parent().unwrap_or(Path::new("."));
        write_durably(dir, &segment_name(segment.n), &bytes)?;
    }
    Ok(())
}

/// Fills `buf` from `reader`; `false` at a clean end before its first byte.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Reads a JSON-lines body (versions 2 and 3): `<checksum> <JSON>` a line.
fn read_text(
    segment: &Segment<'_>,
    header: Header,
    rest: &[u8],
    mode: Mode,
    records: &mut Vec<Entry>,
) -> Result<(), CoordinatorError> {
    let path = segment.path;
    let text = std::str::from_utf8(rest).map_err(|_| segment.damaged("not UTF-8 text".into()))?;
    let mut body: Vec<&str> = text.split_inclusive('\n').collect();
    let torn = segment.last && body.last().is_some_and(|l| !l.ends_with('\n'));
    if torn {
        body.pop();
    }
    if body.len() as u64 + u64::from(torn) != header.records {
        return Err(segment.damaged(format!(
            "{} records, the header says {}",
            body.len(),
            header.records
        )));
    }
    for (i, line) in body.iter().enumerate() {
        let line_no = i + 2;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let (sum, json) = line
            .split_once(' ')
            .ok_or_else(|| segment.damaged(format!("line {line_no} has no checksum")))?;
        if checksum(json) != sum {
            return Err(segment.damaged(format!("line {line_no} fails its checksum")));
        }
        let record = Entry::from_json(json)
            .map_err(|e| segment.damaged(format!("line {line_no} is not an entry ({e})")))?;
        segment.check_seed(&record, || format!("line {line_no}"))?;
        records.push(record);
    }
    if torn && mode == Mode::Repair {
        tracing::warn!(file = %path.display(), "cutting back a torn last record");
        let header = Header {
            records: body.len() as u64,
            ..header
        };
        let mut bytes = serde_json::to_vec(&header).map_err(|source| PackError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        bytes.push(b'\n');
        bytes.extend(body.iter().flat_map(|l| l.bytes()));
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        write_durably(dir, name, &bytes)?;
    }
    Ok(())
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
        return Err(CoordinatorError::Resume(format!(
            "{} is in use by another coordinator ({}); stop it first or use another output folder",
            dir.display(),
            holder.trim()
        )));
    }
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "this host".into());
    let holder = format!("pid {} on {host}", std::process::id());
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(holder.as_bytes()))
        .map_err(PackError::io("write", &path))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pregen_pack::Status;

    fn job(count: u64) -> Job {
        Job::parse(&format!("pack = \"t\"\ngame = \"tilt\"\ncount = {count}\n")).expect("valid job")
    }

    /// Opens the log and collects what it held.
    fn open(dir: &Path, job: &Job) -> Result<(CommitLog, Vec<Entry>), CoordinatorError> {
        let mut entries = Vec::new();
        let log = CommitLog::open(dir, job, |e| entries.push(e))?;
        Ok((log, entries))
    }

    fn rec(seed: u64) -> Entry {
        Entry::Result(record(seed))
    }

    fn seeds(entries: &[Entry]) -> Vec<u64> {
        entries
            .iter()
            .filter_map(|e| e.result().map(|r| r.seed))
            .collect()
    }

    fn record(seed: u64) -> SeedRecord {
        SeedRecord {
            seed,
            status: Status::Unsolvable,
            reason: String::new(),
            level: None,
            generate_ms: 1.5,
            solve_ms: 0.5,
            nodes: 7,
            worker: "w1".into(),
            attempt: 1,
        }
    }

    #[test]
    fn segments_survive_reopen_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, old) = open(dir.path(), &job(5)).expect("open");
        assert!(old.is_empty());
        log.append(&[rec(1), rec(2)]).expect("append");
        log.append(&[]).expect("empty batch");
        log.append(&[rec(3)]).expect("append");
        drop(log);
        let (mut log, old) = open(dir.path(), &job(5)).expect("reopen");
        assert_eq!(seeds(&old), vec![1, 2, 3]);
        log.append(&[rec(4)]).expect("append after reopen");
        drop(log);
        let (_, old) = open(dir.path(), &job(5)).expect("reopen");
        assert_eq!(old.len(), 4);
        // A leftover temp file from a crash mid-write is ignored.
        fs::write(dir.path().join(".seg-00000009.jsonl.tmp"), b"{garbage").expect("write");
        assert_eq!(open(dir.path(), &job(5)).expect("reopen").1.len(), 4);
    }

    #[test]
    fn the_copy_in_memory_is_the_log_while_it_fits() {
        let append = |log: &mut CommitLog, batch: Vec<Entry>| {
            log.append(&batch).expect("append");
            log.keep(batch);
        };
        let taken = |log: &mut CommitLog| {
            let mut entries = Vec::new();
            log.take_entries(&job(5), |e| entries.push(e))
                .expect("entries");
            entries
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = open(dir.path(), &job(5)).expect("open");
        log.keep_in_memory(1 << 20);
        let refused = Entry::Refused {
            worker: "w1".into(),
            reason: "why".into(),
        };
        append(&mut log, vec![rec(1), refused, rec(2)]);
        append(&mut log, vec![rec(3)]);
        assert!(log.kept.is_some());
        let from_memory = taken(&mut log);
        assert_eq!(
            from_memory,
            CommitLog::read(dir.path(), &job(5)).expect("read")
        );
        // Taken once; then read back from disk, alike.
        assert!(log.kept.is_none());
        assert_eq!(taken(&mut log), from_memory);

        // Past the limit the copy is dropped whole and the log read back.
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = open(dir.path(), &job(5)).expect("open");
        log.keep_in_memory(3 * rec(1).result().expect("a result").memory());
        append(&mut log, vec![rec(1), rec(2)]);
        assert!(log.kept.is_some());
        append(&mut log, vec![rec(3), rec(4)]);
        assert!(log.kept.is_none(), "dropped past the limit");
        append(&mut log, vec![rec(5)]);
        assert_eq!(seeds(&taken(&mut log)), vec![1, 2, 3, 4, 5]);

        // A resumed log is on disk: nothing is kept.
        drop(log);
        let (mut log, _) = open(dir.path(), &job(5)).expect("reopen");
        log.keep_in_memory(1 << 20);
        assert!(log.kept.is_none());
        append(&mut log, vec![rec(6)]);
        assert_eq!(seeds(&taken(&mut log)), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn refusals_are_entries_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = open(dir.path(), &job(5)).expect("open");
        let refused = Entry::Refused {
            worker: "w1".into(),
            reason: "seed 1: it reported \"x\"".into(),
        };
        log.append(&[rec(1), refused.clone(), rec(2)])
            .expect("append");
        let back = CommitLog::read(dir.path(), &job(5)).expect("read");
        assert_eq!(back, vec![rec(1), refused, rec(2)]);
    }

    #[test]
    fn another_job_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        open(dir.path(), &job(5)).expect("open");
        let err = open(dir.path(), &job(6)).expect_err("different job");
        assert!(err.to_string().contains("holds job"), "{err}");
    }

    #[test]
    fn every_float_reads_back_bit_for_bit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = open(dir.path(), &job(5)).expect("open");
        // Values whose shortest decimal form a best-effort parser reads one
        // ULP off, and a spread of bit patterns.
        let mut values = vec![0.1 + 0.2, 2.0f64.sqrt(), 1.0 / 3.0, 5e-324, f64::MAX];
        let mut bits = 0x3ff0_0000_0000_0001u64;
        for _ in 0..2000 {
            bits = bits
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = f64::from_bits(bits >> 2 | 0x3000_0000_0000_0000);
            values.push(v);
        }
        let records: Vec<SeedRecord> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| SeedRecord {
                generate_ms: v,
                solve_ms: v / 7.0,
                ..record(i as u64)
            })
            .collect();
        let entries: Vec<Entry> = records.iter().cloned().map(Entry::Result).collect();
        log.append(&entries).expect("append");
        let back = CommitLog::read(dir.path(), &job(5)).expect("read");
        let back: Vec<&SeedRecord> = back.iter().filter_map(Entry::result).collect();
        for (a, b) in records.iter().zip(back) {
            assert_eq!(a.generate_ms.to_bits(), b.generate_ms.to_bits());
            assert_eq!(a.solve_ms.to_bits(), b.solve_ms.to_bits());
        }
    }

    fn job_b() -> Job {
        Job::parse("pack = \"t\"\ngame = \"tilt\"\ncount = 5\n[params]\nwidth = 4\n")
            .expect("valid job")
    }

    fn error(dir: &Path, job: &Job) -> String {
        open(dir, job).expect_err("refused").to_string()
    }

    #[test]
    fn a_second_coordinator_is_refused_while_the_first_holds_the_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = open(dir.path(), &job(5)).expect("open");
        let err = error(dir.path(), &job(5));
        assert!(err.contains("in use by another coordinator (pid"), "{err}");
        drop(first);
        open(dir.path(), &job(5)).expect("free again");
    }

    #[test]
    fn foreign_edited_and_missing_segments_are_refused_naming_the_file() {
        let a = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = open(a.path(), &job(5)).expect("open");
        log.append(&[rec(1), rec(2)]).expect("append");
        log.append(&[rec(3)]).expect("append");
        drop(log);
        let seg1 = a.path().join("seg-00000001.bin");

        // Another job's segment, copied in (same pack name, other params).
        let b = tempfile::tempdir().expect("tempdir");
        open(b.path(), &job_b()).expect("open b");
        fs::copy(&seg1, b.path().join("seg-00000001.bin")).expect("copy");
        let err = error(b.path(), &job_b());
        assert!(err.contains("seg-00000001.bin: written for job"), "{err}");

        // job.json deleted and the folder opened for another job.
        fs::remove_file(a.path().join("job.json")).expect("rm");
        let err = error(a.path(), &job_b());
        assert!(err.contains("written for job"), "{err}");
        fs::write(
            a.path().join("job.json"),
            serde_json::to_string(&job(5)).expect("json"),
        )
        .expect("restore");

        // A byte of the body changed, or the body cut short.
        let bytes = fs::read(&seg1).expect("read");
        let mut edited = bytes.clone();
        let last = edited.len() - 1;
        edited[last] ^= 1;
        fs::write(&seg1, &edited).expect("edit");
        let err = error(a.path(), &job(5));
        assert!(
            err.contains("seg-00000001.bin: the body fails its checksum"),
            "{err}"
        );
        fs::write(&seg1, &bytes[..bytes.len() - 3]).expect("cut");
        let err = error(a.path(), &job(5));
        assert!(err.contains("the header says"), "{err}");

        // A seed the job never had, in a segment otherwise whole.
        let foreign = SeedRecord {
            seed: 2199023255552,
            ..record(2)
        };
        let segment = SegmentEncoder::new()
            .and_then(|mut e| e.encode(&job(5).id(), 1, &[rec(1), Entry::Result(foreign)]))
            .expect("encode");
        fs::write(&seg1, segment).expect("write");
        let err = error(a.path(), &job(5));
        assert!(
            err.contains("entry 2 holds seed 2199023255552, not one of the job's"),
            "{err}"
        );
        fs::write(&seg1, &bytes).expect("restore");
        open(a.path(), &job(5)).expect("whole again");

        // Two segments under one number, and one removed from the middle.
        fs::write(a.path().join("seg-00000001.jsonl"), b"{}\n").expect("write");
        let err = error(a.path(), &job(5));
        assert!(err.contains("a second segment numbered 1"), "{err}");
        fs::remove_file(a.path().join("seg-00000001.jsonl")).expect("rm");
        fs::rename(&seg1, a.path().join("moved-away")).expect("move");
        let err = error(a.path(), &job(5));
        assert!(err.contains("segment 1 is missing"), "{err}");
    }

    #[test]
    fn a_torn_last_segment_is_cut_back_and_the_log_goes_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = open(dir.path(), &job(5)).expect("open");
        log.append(&[rec(1)]).expect("append");
        // Big enough for several zstd blocks, so a cut keeps some whole.
        let many: Vec<Entry> = (2..40_000)
            .map(|seed| {
                Entry::Result(SeedRecord {
                    reason: format!("rejected: {:x}", seed * 7919),
                    nodes: seed * 31,
                    ..record(seed)
                })
            })
            .collect();
        log.append(&many).expect("append");
        drop(log);
        let seg2 = dir.path().join("seg-00000002.bin");
        let bytes = fs::read(&seg2).expect("read");
        fs::write(&seg2, &bytes[..bytes.len() - bytes.len() / 3]).expect("tear");
        let (mut log, old) = open(dir.path(), &job(5)).expect("cut back");
        let kept = seeds(&old);
        assert_eq!(kept, [1], "nothing of a torn segment is taken");
        log.append(&[rec(40_000)]).expect("append");
        drop(log);
        let (_, again) = open(dir.path(), &job(5)).expect("reopen");
        assert_eq!(seeds(&again).len(), kept.len() + 1);
        // Now that a segment follows it, a cut in segment 2 is damage.
        let whole = fs::read(&seg2).expect("read");
        fs::write(&seg2, &whole[..whole.len() - 5]).expect("tear");
        let err = error(dir.path(), &job(5));
        assert!(err.contains("seg-00000002.bin: a body of"), "{err}");
    }

    /// A segment as versions 2 and 3 wrote it: JSON lines, each checksummed.
    fn text_segment(job: &Job, n: u64, entries: &[Entry]) -> String {
        let header = Header::new(LAST_TEXT_VERSION, &job.id(), n, entries.len(), None);
        let mut text = serde_json::to_string(&header).expect("json") + "\n";
        for e in entries {
            let json = e.to_json().expect("json");
            text += &format!("{} {json}\n", checksum(&json));
        }
        text
    }

    #[test]
    fn a_json_lines_log_is_read_checked_and_goes_on_in_binary() {
        let dir = tempfile::tempdir().expect("tempdir");
        drop(open(dir.path(), &job(5)).expect("open"));
        let refused = Entry::Refused {
            worker: "w9".into(),
            reason: "wrong".into(),
        };
        let seg1 = dir.path().join("seg-00000001.jsonl");
        let text = text_segment(&job(5), 1, &[rec(1), refused.clone(), rec(2)]);
        fs::write(&seg1, &text).expect("write");
        let (mut log, old) = open(dir.path(), &job(5)).expect("reads v3");
        assert_eq!(old, [rec(1), refused.clone(), rec(2)]);
        log.append(&[rec(3)]).expect("append");
        drop(log);
        assert!(dir.path().join("seg-00000002.bin").exists());
        assert_eq!(
            seeds(&CommitLog::read(dir.path(), &job(5)).expect("read")),
            [1, 2, 3]
        );

        // A value edited by hand, a seed not the job's with a fresh checksum.
        fs::write(&seg1, text.replace("\"nodes\":7", "\"nodes\":8")).expect("edit");
        let err = error(dir.path(), &job(5));
        assert!(
            err.contains("seg-00000001.jsonl: line 2 fails its checksum"),
            "{err}"
        );
        let foreign = Entry::Result(SeedRecord {
            seed: 2199023255552,
            ..record(2)
        });
        fs::write(&seg1, text_segment(&job(5), 1, &[rec(1), foreign])).expect("edit");
        let err = error(dir.path(), &job(5));
        assert!(err.contains("line 3 holds seed 2199023255552"), "{err}");

        // A torn last line of the last segment is cut back.
        fs::remove_file(dir.path().join("seg-00000002.bin")).expect("rm");
        fs::write(&seg1, &text[..text.len() - 20]).expect("tear");
        let (_, old) = open(dir.path(), &job(5)).expect("cut back");
        assert_eq!(old, [rec(1), refused]);
        assert_eq!(CommitLog::read(dir.path(), &job(5)).expect("read").len(), 2);
    }
}
