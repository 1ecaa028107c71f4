//! The durable commit log: `commit/` in the pack's output folder.
//!
//! `commit/job.json` names the job the log belongs to. Results are appended as
//! numbered segments (`seg-00000001.jsonl`, one JSON record per line), each
//! written to a temporary file, fsynced, and renamed into place, then the folder
//! is fsynced: a segment is either wholly there or absent, so a coordinator
//! killed at any instant resumes from exactly the segments it finished.

use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use pregen_pack::durable::write_durably;
use pregen_pack::{Job, PackError, SeedRecord};

use crate::CoordinatorError;

/// An open commit log.
#[derive(Debug)]
pub struct CommitLog {
    dir: PathBuf,
    next_segment: u64,
}

impl CommitLog {
    /// Opens (or creates) the log for `job` in `dir` and returns it with every
    /// record already committed. Refuses a log written for another job.
    pub fn open(dir: &Path, job: &Job) -> Result<(CommitLog, Vec<SeedRecord>), CoordinatorError> {
        fs::create_dir_all(dir).map_err(PackError::io("create", dir))?;
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
            if stored.id() != job.id() {
                return Err(CoordinatorError::Resume(format!(
                    "{} holds job {} but this job is {}; use another pack name or output folder",
                    dir.display(),
                    stored.id(),
                    job.id()
                )));
            }
        } else {
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
        let mut records = Vec::new();
        for (_, path) in &segments {
            let file = File::open(path).map_err(PackError::io("open", path))?;
            for (i, line) in BufReader::new(file).lines().enumerate() {
                let line = line.map_err(PackError::io("read", path))?;
                let record: SeedRecord = serde_json::from_str(&line).map_err(|e| {
                    CoordinatorError::Resume(format!("{} line {}: {e}", path.display(), i + 1))
                })?;
                records.push(record);
            }
        }
        let next_segment = segments.last().map_or(1, |(n, _)| n + 1);
        Ok((
            CommitLog {
                dir: dir.to_path_buf(),
                next_segment,
            },
            records,
        ))
    }

    /// Appends records as one durable segment (nothing for an empty batch).
    pub fn append(&mut self, records: &[SeedRecord]) -> Result<(), CoordinatorError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(records.len() * 512);
        for r in records {
            serde_json::to_writer(&mut bytes, r).map_err(|source| PackError::Json {
                path: self.dir.clone(),
                source,
            })?;
            bytes.push(b'\n');
        }
        write_durably(
            &self.dir,
            &format!("seg-{:08}.jsonl", self.next_segment),
            &bytes,
        )?;
        self.next_segment += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pregen_pack::Status;

    fn job(count: u64) -> Job {
        Job::parse(&format!("pack = \"t\"\ngame = \"tilt\"\ncount = {count}\n")).expect("valid job")
    }

    fn rec(seed: u64) -> SeedRecord {
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
        let (mut log, old) = CommitLog::open(dir.path(), &job(5)).expect("open");
        assert!(old.is_empty());
        log.append(&[rec(1), rec(2)]).expect("append");
        log.append(&[]).expect("empty batch");
        log.append(&[rec(3)]).expect("append");
        drop(log);
        let (mut log, old) = CommitLog::open(dir.path(), &job(5)).expect("reopen");
        assert_eq!(
            old.iter().map(|r| r.seed).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        log.append(&[rec(4)]).expect("append after reopen");
        let (_, old) = CommitLog::open(dir.path(), &job(5)).expect("reopen");
        assert_eq!(old.len(), 4);
        // A leftover temp file from a crash mid-write is ignored.
        fs::write(dir.path().join(".seg-00000009.jsonl.tmp"), b"{garbage").expect("write");
        assert_eq!(
            CommitLog::open(dir.path(), &job(5))
                .expect("reopen")
                .1
                .len(),
            4
        );
    }

    #[test]
    fn another_job_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        CommitLog::open(dir.path(), &job(5)).expect("open");
        let err = CommitLog::open(dir.path(), &job(6)).expect_err("different job");
        assert!(err.to_string().contains("holds job"), "{err}");
    }

    #[test]
    fn every_float_reads_back_bit_for_bit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, _) = CommitLog::open(dir.path(), &job(5)).expect("open");
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
                ..rec(i as u64)
            })
            .collect();
        log.append(&records).expect("append");
        let (_, back) = CommitLog::open(dir.path(), &job(5)).expect("reopen");
        for (a, b) in records.iter().zip(&back) {
            assert_eq!(a.generate_ms.to_bits(), b.generate_ms.to_bits());
            assert_eq!(a.solve_ms.to_bits(), b.solve_ms.to_bits());
        }
    }
}
