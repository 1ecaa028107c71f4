//! The durable commit log: `commit/` in the pack's output folder.
//!
//! `commit/job.json` names the job the log belongs to. Results are appended as
//! numbered segments (`seg-00000001.jsonl`), each written to a temporary
//! file, fsynced, and renamed into place, then the folder is fsynced: a
//! segment is either wholly there or absent, so a coordinator killed at any
//! instant resumes from exactly the segments it finished.
//!
//! The log checks itself. A segment's first line is a header naming the
//! format version, the job id and the segment's number and record count;
//! every record line is `<sha256 of the JSON, 16 hex> <JSON>`, the JSON a
//! seed's result or, `{"refused":{"worker":…,"reason":…}}`, a worker the
//! cross-check refused (its results before that line no longer count). A segment of
//! another job, an edited or damaged line, a renamed or missing segment is
//! refused with an error naming the file. Only a torn last line of the last
//! segment (a write cut short on a file system that does not rename
//! atomically) is cut back, with a warning.
//!
//! `commit/LOCK` is held (an advisory lock) while a coordinator uses the log;
//! a second coordinator on the same pack folder is refused, naming the holder.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use pregen_games::sha256_hex;
use pregen_pack::durable::write_durably;
use pregen_pack::job::STRATUM_SEEDS;
use pregen_pack::{Job, PackError, SeedRecord};
use serde::{Deserialize, Serialize};

use crate::CoordinatorError;

/// The segment format this build writes (and the oldest it reads).
pub const FORMAT_VERSION: u32 = 3;
const OLDEST_VERSION: u32 = 2;

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
    /// Holds the advisory lock while the log is open.
    _lock: File,
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
            _lock: lock,
        })
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
                let n = name
                    .strip_prefix("seg-")?
                    .strip_suffix(".jsonl")?
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
        let mut records = Vec::new();
        for (i, (n, path)) in segments.iter().enumerate() {
            if *n != i as u64 + 1 {
                return Err(damaged(
                    path,
                    format!("segment {} is missing before it", i + 1),
                ));
            }
            let last = i + 1 == segments.len();
            let segment = Segment {
                path,
                job_id: &job_id,
                seeds: &seeds,
                n: *n,
                last,
            };
            read_segment(&segment, mode, &mut records)?;
            records.drain(..).for_each(&mut *on_entry);
        }
        Ok(segments.last().map_or(1, |(n, _)| n + 1))
    }

    /// Appends entries as one durable segment (nothing for an empty batch).
    pub fn append(&mut self, records: &[Entry]) -> Result<(), CoordinatorError> {
        if records.is_empty() {
            return Ok(());
        }
        let header = Header {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            job_id: self.job_id.clone(),
            segment: self.next_segment,
            records: records.len() as u64,
        };
        let json_error = |source| PackError::Json {
            path: self.dir.clone(),
            source,
        };
        let mut bytes = Vec::with_capacity(records.len() * 512);
        serde_json::to_writer(&mut bytes, &header).map_err(json_error)?;
        bytes.push(b'\n');
        for r in records {
            let json = r.to_json().map_err(json_error)?;
            bytes.extend_from_slice(checksum(&json).as_bytes());
            bytes.push(b' ');
            bytes.extend_from_slice(json.as_bytes());
            bytes.push(b'\n');
        }
        write_durably(&self.dir, &segment_name(self.next_segment), &bytes)?;
        self.next_segment += 1;
        Ok(())
    }
}

fn segment_name(n: u64) -> String {
    format!("seg-{n:08}.jsonl")
}

/// A record line's checksum: the first 16 hex digits of its JSON's SHA-256.
fn checksum(json: &str) -> String {
    let mut sum = sha256_hex(json.as_bytes());
    sum.truncate(16);
    sum
}

fn damaged(path: &Path, what: String) -> CoordinatorError {
    CoordinatorError::Resume(format!(
        "{}: {what}; the commit log was edited, damaged or mixed with another job's (move the \
         file away to recompute its seeds)",
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

/// Reads a segment into `records`, checking every line.
fn read_segment(
    segment: &Segment<'_>,
    mode: Mode,
    records: &mut Vec<Entry>,
) -> Result<(), CoordinatorError> {
    let &Segment {
        path,
        job_id,
        seeds,
        n,
        last,
    } = segment;
    let text = fs::read(path).map_err(PackError::io("read", path))?;
    let text = String::from_utf8(text).map_err(|_| damaged(path, "not UTF-8 text".into()))?;
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let torn = last && lines.len() > 1 && lines.last().is_some_and(|l| !l.ends_with('\n'));
    if torn {
        lines.pop();
    }
    let Some((head, body)) = lines.split_first() else {
        return Err(damaged(path, "empty segment".into()));
    };
    let header: Header = serde_json::from_str(head.trim_end())
        .map_err(|e| damaged(path, format!("line 1 is not a segment header ({e})")))?;
    if header.format != FORMAT_NAME || !(OLDEST_VERSION..=FORMAT_VERSION).contains(&header.version)
    {
        return Err(damaged(
            path,
            format!(
                "format {} version {}, this build reads {FORMAT_NAME} versions \
                 {OLDEST_VERSION} to {FORMAT_VERSION}",
                header.format, header.version
            ),
        ));
    }
    if header.job_id != job_id {
        return Err(damaged(
            path,
            format!("written for job {}, this job is {job_id}", header.job_id),
        ));
    }
    if header.segment != n {
        return Err(damaged(
            path,
            format!(
                "holds segment {} under the name of segment {n}",
                header.segment
            ),
        ));
    }
    if body.len() as u64 + u64::from(torn) != header.records {
        return Err(damaged(
            path,
            format!("{} records, the header says {}", body.len(), header.records),
        ));
    }
    for (i, line) in body.iter().enumerate() {
        let line_no = i + 2;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let (sum, json) = line
            .split_once(' ')
            .ok_or_else(|| damaged(path, format!("line {line_no} has no checksum")))?;
        if checksum(json) != sum {
            return Err(damaged(path, format!("line {line_no} fails its checksum")));
        }
        let record = Entry::from_json(json)
            .map_err(|e| damaged(path, format!("line {line_no} is not an entry ({e})")))?;
        if let Entry::Result(r) = &record
            && !seeds.iter().any(|&(a, b)| (a..b).contains(&r.seed))
        {
            return Err(damaged(
                path,
                format!("line {line_no} holds seed {}, not one of the job's", r.seed),
            ));
        }
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
        let (dir, name) = (path.parent().unwrap_or(Path::new(".")), segment_name(n));
        write_durably(dir, &name, &bytes)?;
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
        let seg1 = a.path().join("seg-00000001.jsonl");

        // Another job's segment, copied in (same pack name, other params).
        let b = tempfile::tempdir().expect("tempdir");
        open(b.path(), &job_b()).expect("open b");
        fs::copy(&seg1, b.path().join("seg-00000001.jsonl")).expect("copy");
        let err = error(b.path(), &job_b());
        assert!(err.contains("seg-00000001.jsonl: written for job"), "{err}");

        // job.json deleted and the folder opened for another job.
        fs::remove_file(a.path().join("job.json")).expect("rm");
        let err = error(a.path(), &job_b());
        assert!(err.contains("written for job"), "{err}");
        fs::write(
            a.path().join("job.json"),
            serde_json::to_string(&job(5)).expect("json"),
        )
        .expect("restore");

        // A value edited by hand.
        let text = fs::read_to_string(&seg1).expect("read");
        fs::write(&seg1, text.replace("\"nodes\":7", "\"nodes\":8")).expect("edit");
        let err = error(a.path(), &job(5));
        assert!(
            err.contains("seg-00000001.jsonl: line 2 fails its checksum"),
            "{err}"
        );
        fs::write(&seg1, &text).expect("restore");

        // A seed the job never had.
        fs::write(
            &seg1,
            text.replace("\"seed\":2,", "\"seed\":2199023255552,"),
        )
        .expect("edit");
        let err = error(a.path(), &job(5));
        assert!(err.contains("line 3 fails its checksum"), "{err}");
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let json = lines[2]
            .split_once(' ')
            .expect("sum")
            .1
            .replace("\"seed\":2,", "\"seed\":2199023255552,");
        lines[2] = format!("{} {json}", checksum(&json));
        fs::write(&seg1, lines.join("\n") + "\n").expect("edit");
        let err = error(a.path(), &job(5));
        assert!(
            err.contains("line 3 holds seed 2199023255552, not one of the job's"),
            "{err}"
        );
        fs::write(&seg1, &text).expect("restore");

        // A segment removed from the middle.
        fs::rename(&seg1, a.path().join("moved-away")).expect("move");
        let err = error(a.path(), &job(5));
        assert!(err.contains("segment 1 is missing"), "{err}");
    }

    #[test]
    fn a_torn_last_record_is_cut_back_and_the_log_goes_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = open(dir.path(), &job(5)).expect("open");
        log.append(&[rec(1)]).expect("append");
        log.append(&[rec(2), rec(3)]).expect("append");
        drop(log);
        let seg2 = dir.path().join("seg-00000002.jsonl");
        let text = fs::read_to_string(&seg2).expect("read");
        fs::write(&seg2, &text[..text.len() - 20]).expect("tear");
        let (mut log, old) = open(dir.path(), &job(5)).expect("cut back");
        assert_eq!(seeds(&old), [1, 2]);
        log.append(&[rec(3)]).expect("append");
        drop(log);
        let (_, old) = open(dir.path(), &job(5)).expect("reopen");
        assert_eq!(seeds(&old), [1, 2, 3]);
    }
}
