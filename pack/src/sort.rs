//! An external sort of records by a `u128` key: records are held in memory
//! up to a byte limit, then sorted and spilled to a run file; at the end the
//! runs are merged. With no spill it is a plain in-memory sort. The order is
//! the key's, and keys are unique (they end in the seed), so the output never
//! depends on the limit.
//!
//! Merges read at most [`FAN_IN`] runs at once, so memory stays bounded
//! however many runs a small limit makes: runs carry a level (a spill is
//! level 0), and whenever [`FAN_IN`] runs of one level are the newest, they
//! are merged into one run of the next level (every record is rewritten
//! about log_FAN_IN(runs) times).
//!
//! A run file is a sequence of `key (16 bytes, big-endian) | length (4 bytes)
//! | item` in the item's binary form ([`Spill`]; a record's is that of
//! [`crate::codec`]), unnamed in the spill folder (gone when closed, even
//! after a crash).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::PackError;
use crate::codec;
use crate::record::SeedRecord;

/// Runs merged at once at most.
pub const FAN_IN: usize = 16;

/// Bytes of read buffer per run being merged.
const RUN_BUFFER: usize = 1 << 16;

/// What a [`Sorter`] can hold: an item with a memory estimate and a binary
/// form to spill in.
pub trait Spill: Sized {
    /// About how many bytes the item takes in memory.
    fn memory(&self) -> usize;
    /// Appends the binary form to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Why bytes are not an item's binary form.
    type Error: std::fmt::Display;
    /// The item back from its binary form, or why it is not one.
    fn decode(bytes: Vec<u8>) -> Result<Self, Self::Error>;
}

impl Spill for SeedRecord {
    fn memory(&self) -> usize {
        SeedRecord::memory(self)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        codec::encode(self, out);
    }

    type Error = codec::DecodeError;

    fn decode(bytes: Vec<u8>) -> Result<Self, codec::DecodeError> {
        codec::decode(&bytes)
    }
}

/// What a string is taken to cost in memory beyond its text.
const STRING_OVERHEAD: usize = 64;

impl Spill for String {
    fn memory(&self) -> usize {
        STRING_OVERHEAD + self.len()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }

    type Error = std::string::FromUtf8Error;

    fn decode(bytes: Vec<u8>) -> Result<Self, Self::Error> {
        String::from_utf8(bytes)
    }
}

/// Items (records unless named) by key, sorted in memory up to a limit and
/// on disk beyond it.
#[derive(Debug)]
pub struct Sorter<T = SeedRecord> {
    buffer: Vec<(u128, T)>,
    held: usize,
    limit: usize,
    spill_dir: PathBuf,
    /// Runs on disk with their levels, levels never rising toward the end.
    runs: Vec<(u32, File)>,
    spills: usize,
    len: u64,
}

impl<T: Spill> Sorter<T> {
    /// A sorter holding about `limit` bytes of items before it spills
    /// into `spill_dir`.
    pub fn new(limit: usize, spill_dir: &Path) -> Self {
        Sorter {
            buffer: Vec::new(),
            held: 0,
            limit,
            spill_dir: spill_dir.to_path_buf(),
            runs: Vec::new(),
            spills: 0,
            len: 0,
        }
    }

    /// Records pushed.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Times the records in memory were spilled to disk so far.
    pub fn spills(&self) -> usize {
        self.spills
    }

    /// Runs on disk now (merged as they come, so at most about
    /// `(FAN_IN - 1) * log_FAN_IN(spills)`).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Room for `items` in memory, so that the buffer is sized once instead
    /// of copied each time it doubles: at most half the limit in the
    /// buffer's own bytes (an item's memory counts its place in the buffer
    /// and more, so a fuller buffer spills soon; past that it grows as before).
    pub fn reserve(&mut self, items: u64) {
        let most = self.limit / (2 * std::mem::size_of::<(u128, T)>()).max(1);
        let room = usize::try_from(items).unwrap_or(usize::MAX).min(most);
        self.buffer.reserve(room.saturating_sub(self.buffer.len()));
    }

    /// Adds an item under `key`.
    pub fn push(&mut self, key: u128, record: T) -> Result<(), PackError> {
        self.held += record.memory();
        self.buffer.push((key, record));
        self.len += 1;
        if self.held > self.limit {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<(), PackError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.spill_dir)
            .map_err(PackError::io("create", &self.spill_dir))?;
        self.buffer.sort_unstable_by_key(|(k, _)| *k);
        // Drained, not taken: the buffer keeps its capacity for the next run.
        let file = write_run(&self.spill_dir, self.buffer.drain(..).map(Ok))?;
        self.runs.push((0, file));
        self.held = 0;
        self.spills += 1;
        // The newest FAN_IN runs of one level become one of the next level.
        while self.runs.len() >= FAN_IN {
            let tail = self.runs.split_off(self.runs.len() - FAN_IN);
            let level = tail[0].0;
            if tail.iter().any(|(l, _)| *l != level) {
                self.runs.extend(tail);
                break;
            }
            let merged: Sorted<T> = merge(tail.into_iter().map(|(_, f)| f), &self.spill_dir)?;
            self.runs
                .push((level + 1, write_run(&self.spill_dir, merged)?));
        }
        Ok(())
    }

    /// Every item in key order.
    pub fn finish(mut self) -> Result<Sorted<T>, PackError> {
        if self.runs.is_empty() {
            self.buffer.sort_unstable_by_key(|(k, _)| *k);
            return Ok(Sorted(Source::Memory(self.buffer.into_iter())));
        }
        self.spill()?;
        merge(self.runs.into_iter().map(|(_, f)| f), &self.spill_dir)
    }
}

/// Records in key order written as a run to an unnamed file in `dir`,
/// rewound for reading.
fn write_run<T: Spill>(
    dir: &Path,
    records: impl IntoIterator<Item = Result<(u128, T), PackError>>,
) -> Result<File, PackError> {
    let file = tempfile::tempfile_in(dir).map_err(PackError::io("write a sort run in", dir))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut bytes = Vec::new();
    for item in records {
        let (key, record) = item?;
        bytes.clear();
        record.encode(&mut bytes);
        out.write_all(&key.to_be_bytes())
            .and_then(|()| out.write_all(&(bytes.len() as u32).to_be_bytes()))
            .and_then(|()| out.write_all(&bytes))
            .map_err(PackError::io("write a sort run in", dir))?;
    }
    let mut file = out
        .into_inner()
        .map_err(|e| PackError::io("write a sort run in", dir)(e.into_error()))?;
    file.rewind()
        .map_err(PackError::io("rewind a sort run in", dir))?;
    Ok(file)
}

/// The records of `files` (each a run, in key order) merged.
fn merge<T: Spill>(
    files: impl IntoIterator<Item = File>,
    dir: &Path,
) -> Result<Sorted<T>, PackError> {
    let mut runs: Vec<Run> = files
        .into_iter()
        .map(|f| Run {
            reader: BufReader::with_capacity(RUN_BUFFER, f),
            dir: dir.to_path_buf(),
        })
        .collect();
    let mut heads = BinaryHeap::new();
    for (i, run) in runs.iter_mut().enumerate() {
        if let Some((key, record)) = run.next()? {
            heads.push(Head {
                key: Reverse(key),
                run: i,
                record,
            });
        }
    }
    Ok(Sorted(Source::Merge { runs, heads }))
}

/// A spilled run, read back in order.
#[derive(Debug)]
struct Run {
    reader: BufReader<File>,
    dir: PathBuf,
}

impl Run {
    fn next<T: Spill>(&mut self) -> Result<Option<(u128, T)>, PackError> {
        let mut head = [0u8; 20];
        match self.reader.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(PackError::io("read a sort run in", &self.dir)(e)),
        }
        let (key, len) = head.split_at(16);
        let key = u128::from_be_bytes(key.try_into().unwrap_or_default());
        let len = u32::from_be_bytes(len.try_into().unwrap_or_default()) as usize;
        let mut bytes = vec![0; len];
        self.reader
            .read_exact(&mut bytes)
            .map_err(PackError::io("read a sort run in", &self.dir))?;
        let record = T::decode(bytes)
            .map_err(|e| PackError::invalid(&self.dir, format!("a sort run is damaged: {e}")))?;
        Ok(Some((key, record)))
    }
}

/// The smallest key of a run not yet given out.
#[derive(Debug)]
struct Head<T> {
    key: Reverse<u128>,
    run: usize,
    record: T,
}

impl<T> PartialEq for Head<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Head<T> {}
impl<T> PartialOrd for Head<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Head<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// A sorter's items in key order.
#[derive(Debug)]
pub struct Sorted<T = SeedRecord>(Source<T>);

#[derive(Debug)]
enum Source<T> {
    /// Nothing spilled.
    Memory(std::vec::IntoIter<(u128, T)>),
    /// Runs merged: the runs, and the smallest item of each not yet given out.
    Merge {
        runs: Vec<Run>,
        heads: BinaryHeap<Head<T>>,
    },
}

impl<T: Spill> Iterator for Sorted<T> {
    type Item = Result<(u128, T), PackError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Source::Memory(it) => it.next().map(Ok),
            Source::Merge { runs, heads } => {
                let head = heads.pop()?;
                match runs[head.run].next() {
                    Ok(Some((key, record))) => heads.push(Head {
                        key: Reverse(key),
                        run: head.run,
                        record,
                    }),
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                }
                Some(Ok((head.key.0, head.record)))
            }
        }
    }
}

/// The key that orders by (difficulty, seed): the float's bits made to sort
/// as unsigned integers (negative values first, `total_cmp`'s order).
pub fn difficulty_key(difficulty: f64, seed: u64) -> u128 {
    let bits = difficulty.to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    };
    (u128::from(ordered) << 64) | u128::from(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Reason, Status};

    fn record(seed: u64) -> SeedRecord {
        SeedRecord {
            seed,
            status: Status::Rejected,
            reason: Some(Reason::new(
                pregen_games::doors::reasons::DEFECT,
                format!("r{seed}"),
            )),
            level: None,
            generate_ms: 0.0,
            solve_ms: 0.0,
            nodes: seed,
            worker: "w".into(),
            attempt: 1,
        }
    }

    #[test]
    fn spilled_and_in_memory_sorts_agree() {
        let dir = tempfile::tempdir().expect("tempdir");
        let keys: Vec<u64> = (0..5000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40)
            .collect();
        let sorted = |limit: usize| {
            let mut s = Sorter::new(limit, dir.path());
            for &k in &keys {
                s.push(u128::from(k), record(k)).expect("push");
            }
            let runs = (s.spills(), s.runs());
            let out: Vec<u64> = s
                .finish()
                .expect("finish")
                .map(|r| r.expect("read").1.seed)
                .collect();
            (runs, out)
        };
        let (none, in_memory) = sorted(usize::MAX);
        let (many, spilled) = sorted(10_000);
        assert_eq!(none, (0, 0));
        assert!(many.0 > 2 * FAN_IN, "{many:?} spills and runs");
        assert!(
            many.1 < FAN_IN * 2,
            "{many:?} spills and runs: merged as they come"
        );
        assert_eq!(in_memory, spilled);
        assert!(in_memory.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(in_memory.len(), keys.len());
    }

    #[test]
    fn strings_spill_and_read_back_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s: Sorter<String> = Sorter::new(1 << 10, dir.path());
        let texts: Vec<String> = (0..300u64)
            .map(|i| format!("; position {i}\n; é{}\n\n", "#".repeat(i as usize % 40)))
            .collect();
        for (i, t) in texts.iter().enumerate().rev() {
            s.push(i as u128, t.clone()).expect("push");
        }
        assert!(s.spills() > 1, "{} spills", s.spills());
        let back: Vec<String> = s
            .finish()
            .expect("finish")
            .map(|r| r.expect("read").1)
            .collect();
        assert_eq!(back, texts);
    }

    #[test]
    fn room_is_reserved_within_half_the_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let place = std::mem::size_of::<(u128, SeedRecord)>();
        let mut small: Sorter = Sorter::new(100 * place, dir.path());
        small.reserve(10);
        assert!(small.buffer.capacity() >= 10);
        let mut large: Sorter = Sorter::new(100 * place, dir.path());
        large.reserve(1_000_000);
        assert!(
            (50..60).contains(&large.buffer.capacity()),
            "{}",
            large.buffer.capacity()
        );
    }

    #[test]
    fn difficulty_keys_sort_like_total_cmp() {
        let mut values = [3.5, -0.0, 0.0, -2.0, f64::INFINITY, 1e-300, -1e300, 0.5];
        let mut by_key = values.to_vec();
        by_key.sort_by_key(|&d| difficulty_key(d, 0));
        values.sort_by(f64::total_cmp);
        assert_eq!(
            by_key.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
            values.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
        );
        assert!(difficulty_key(1.0, 5) < difficulty_key(1.0, 6));
    }
}
