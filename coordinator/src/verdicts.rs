//! What the coordinator keeps of each recorded seed: a 12-byte [`Verdict`],
//! not the record. Records go to the commit log as they arrive; the pack is
//! written from the log, picking for each seed the record its verdict names
//! ([`Selection`]). So the coordinator's memory grows by a few bytes per seed,
//! whatever the levels weigh.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash, RandomState};
use std::num::NonZeroU16;

use pregen_pack::{Code, Reason, Refusal, SeedRecord, Status};
use sha2::{Digest, Sha256};

/// A seed's verdict as the scheduler keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// A keyed hash of every deterministic field of the result
    /// ([`Verdicts::fingerprint`]): two results with one fingerprint are the
    /// same verdict.
    pub fingerprint: u32,
    /// The worker that sent the result counted ([`Names`] id + 1; 0: none).
    pub worker: u32,
    /// The status.
    pub status: Status,
    /// The code of its reason, when refused; [`Code::OutOfBand`] on an
    /// accepted level outside its stratum's band (its status stays the
    /// record's: the cross-check compares what the workers sent).
    /// Held by number, so that a verdict stays small.
    code: Option<NonZeroU16>,
    /// Set once the pack writer took the seed's record.
    pub taken: bool,
}

impl Verdict {
    /// The verdict of a seed, its worker's id and its record's fingerprint
    /// given.
    pub fn new(fingerprint: u32, worker: u32, status: Status, code: Option<Code>) -> Verdict {
        Verdict {
            fingerprint,
            worker,
            status,
            code: code.map(compact),
            taken: false,
        }
    }

    /// The code of its reason, when refused; [`Code::OutOfBand`] on an
    /// accepted level outside its stratum's band.
    pub fn code(&self) -> Option<Code> {
        self.code
            .map(|n| pregen_games::code_of_number(u32::from(n.get())).expect("a known code"))
    }

    /// Marks an accepted level outside its stratum's band.
    pub fn set_out_of_band(&mut self) {
        self.code = Some(compact(Code::OutOfBand));
    }

    /// Whether the seed gives one of its stratum's levels: accepted, in its
    /// band.
    pub fn counts(&self) -> bool {
        self.status == Status::Accepted && self.code.is_none()
    }

    /// How the seed counts when it gives no level (an accepted level
    /// outside its band: `rejected: out of band`).
    pub fn refusal(&self) -> Refusal {
        match (self.status, self.code()) {
            (Status::Accepted, Some(code)) => Refusal {
                status: Status::Rejected,
                code: Some(code),
            },
            (status, code) => Refusal { status, code },
        }
    }

    /// What the seed's result said, as the cross-check names it.
    pub fn reported(&self) -> Refusal {
        Refusal {
            status: self.status,
            code: self.code().filter(|_| self.status != Status::Accepted),
        }
    }
}

/// A code's number as a verdict holds it: every code's number is below
/// 2^16 ([`pregen_games::Code::new`]).
fn compact(code: Code) -> NonZeroU16 {
    u16::try_from(code.number())
        .ok()
        .and_then(NonZeroU16::new)
        .expect("code numbers lie in 1..2^16")
}

/// A seed's verdict made from its record: the fingerprint's hasher and the
/// interned names of workers.
#[derive(Debug)]
pub struct Verdicts {
    chunks: BTreeMap<u64, Box<[Option<Verdict>]>>,
    len: u64,
    hasher: RandomState,
    /// Worker names by id.
    pub workers: Names,
}

/// Seeds per chunk: a dense range costs 12-16 bytes a seed, a far-off seed
/// one chunk.
const CHUNK: u64 = 4096;

impl Default for Verdicts {
    fn default() -> Self {
        Verdicts {
            chunks: BTreeMap::new(),
            len: 0,
            hasher: RandomState::new(),
            workers: Names::default(),
        }
    }
}

impl Verdicts {
    /// The verdict of `record` (its worker interned).
    pub fn of(&mut self, record: &SeedRecord) -> Verdict {
        Verdict::new(
            self.fingerprint(record),
            self.workers.intern(&record.worker) + 1,
            record.status,
            record.reason.as_ref().map(|r| r.code),
        )
    }

    /// The keyed fingerprint of every deterministic field of a record: its
    /// status, reason and nodes, and for a level every field a worker sends
    /// (difficulty and metrics bit for bit, moves, the optimal flag, layout,
    /// JSON, solution, hashes). What describes the run (times, worker,
    /// attempt) is left out. The key is drawn per process, so a worker cannot
    /// craft a result that collides.
    pub fn fingerprint(&self, r: &SeedRecord) -> u32 {
        use std::hash::Hasher;
        let mut h = self.hasher.build_hasher();
        r.status.hash(&mut h);
        r.reason.hash(&mut h);
        // A watchdog timeout's nodes are what the clock allowed.
        if r.status != Status::Timeout {
            h.write_u64(r.nodes);
        }
        if let Some(l) = &r.level {
            h.write_u64(l.difficulty.to_bits());
            h.write_u32(l.moves);
            l.moves_optimal.hash(&mut h);
            l.layout.hash(&mut h);
            l.level_json.hash(&mut h);
            l.solution.hash(&mut h);
            l.level_hash.hash(&mut h);
            l.canonical.hash(&mut h);
            h.write_usize(l.metrics.len());
            for (key, value) in &l.metrics {
                key.hash(&mut h);
                h.write_u64(value.to_bits());
            }
        }
        h.finish() as u32
    }

    /// The name of a verdict's worker.
    pub fn worker(&self, v: &Verdict) -> &str {
        self.workers.name(v.worker.wrapping_sub(1))
    }

    /// Seeds recorded.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The verdict of `seed`, if recorded.
    pub fn get(&self, seed: u64) -> Option<Verdict> {
        self.chunks.get(&(seed / CHUNK))?[(seed % CHUNK) as usize]
    }

    /// Whether `seed` is recorded.
    pub fn contains(&self, seed: u64) -> bool {
        self.get(seed).is_some()
    }

    /// Records `seed`'s verdict; false (and nothing changed) if it has one.
    pub fn insert(&mut self, seed: u64, v: Verdict) -> bool {
        let chunk = self
            .chunks
            .entry(seed / CHUNK)
            .or_insert_with(|| vec![None; CHUNK as usize].into_boxed_slice());
        let slot = &mut chunk[(seed % CHUNK) as usize];
        if slot.is_some() {
            return false;
        }
        *slot = Some(v);
        self.len += 1;
        true
    }

    /// Marks `seed`'s record taken.
    pub fn set_taken(&mut self, seed: u64) {
        if let Some(Some(v)) = self
            .chunks
            .get_mut(&(seed / CHUNK))
            .map(|c| &mut c[(seed % CHUNK) as usize])
        {
            v.taken = true;
        }
    }

    /// The recorded seeds in `from..to`, in order, with their verdicts.
    pub fn range(&self, from: u64, to: u64) -> impl Iterator<Item = (u64, Verdict)> + '_ {
        let chunks = if from < to {
            self.chunks.range(from / CHUNK..=(to - 1) / CHUNK)
        } else {
            self.chunks.range(1..1)
        };
        chunks.flat_map(move |(&c, slots)| {
            slots.iter().enumerate().filter_map(move |(i, v)| {
                let seed = c * CHUNK + i as u64;
                (from <= seed && seed < to).then_some((seed, (*v)?))
            })
        })
    }

    /// The highest recorded seed in `from..to`.
    pub fn last_in(&self, from: u64, to: u64) -> Option<u64> {
        if from >= to {
            return None;
        }
        for (&c, slots) in self.chunks.range(from / CHUNK..=(to - 1) / CHUNK).rev() {
            for i in (0..CHUNK as usize).rev() {
                let seed = c * CHUNK + i as u64;
                if seed < to && seed >= from && slots[i].is_some() {
                    return Some(seed);
                }
            }
        }
        None
    }

    /// Drops every verdict `drop` says; gives how many.
    pub fn remove_where(&mut self, mut drop: impl FnMut(&Verdict) -> bool) -> u64 {
        let mut removed = 0;
        for slots in self.chunks.values_mut() {
            for slot in slots.iter_mut() {
                if slot.as_ref().is_some_and(&mut drop) {
                    *slot = None;
                    removed += 1;
                }
            }
        }
        self.chunks
            .retain(|_, slots| slots.iter().any(Option::is_some));
        self.len -= removed;
        removed
    }

    /// Takes every verdict out, in seed order.
    pub fn drain(&mut self) -> Vec<(u64, Verdict)> {
        let all: Vec<(u64, Verdict)> = self.range(0, u64::MAX).collect();
        self.chunks.clear();
        self.len = 0;
        all
    }
}

/// Strings interned as dense ids.
#[derive(Debug, Default)]
pub struct Names {
    list: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Names {
    /// The id of `name`, added if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    /// The id of `name`, if known.
    pub fn id(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The name of `id` (empty if unknown).
    pub fn name(&self, id: u32) -> &str {
        self.list.get(id as usize).map_or("", String::as_str)
    }

    /// Names interned.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The 128-bit key of a canonical form (its SHA-256's head), kept instead of
/// the text.
pub fn canonical_key(canonical: &str) -> u128 {
    let digest = Sha256::digest(canonical.as_bytes());
    let mut head = [0u8; 16];
    head.copy_from_slice(&digest[..16]);
    u128::from_le_bytes(head)
}

/// What the pack is made of, handed by the scheduler once complete: for each
/// stratum the seeds of its complete prefix, each with the verdict whose
/// record the pack takes from the log, and the duplicates by canonical form.
#[derive(Debug)]
pub struct Selection {
    /// Per stratum, the seeds of its pack: `first..end`.
    pub prefixes: Vec<(u64, u64)>,
    /// Per stratum, the band its levels must lie in, if any.
    pub bands: Vec<Option<pregen_pack::job::Band>>,
    /// The verdicts (their `taken` marks which records were found).
    pub verdicts: Verdicts,
    /// Accepted seeds whose level a lower seed of the stratum has: seed -> that seed.
    pub duplicates: HashMap<u64, u64>,
}

impl Selection {
    /// The pack's record for its seed, if `record` is the one the verdict
    /// names and the first such: the same worker and verdict; an accepted
    /// duplicate comes back as `rejected: duplicate`, a level outside its
    /// stratum's band as `rejected: out of band`.
    pub fn take(&mut self, record: SeedRecord) -> Option<SeedRecord> {
        let seed = record.seed;
        if !self.prefixes.iter().any(|&(a, b)| a <= seed && seed < b) {
            return None;
        }
        let v = self.verdicts.get(seed)?;
        if v.taken
            || self.verdicts.worker(&v) != record.worker
            || self.verdicts.fingerprint(&record) != v.fingerprint
        {
            return None;
        }
        self.verdicts.set_taken(seed);
        if v.code() == Some(Code::OutOfBand)
            && let Some(level) = record.accepted()
        {
            let detail = self
                .prefixes
                .iter()
                .position(|&(a, b)| a <= seed && seed < b)
                .and_then(|i| self.bands.get(i).copied().flatten())
                .map_or_else(
                    || format!("difficulty {} outside its band", level.difficulty),
                    |b| b.refusal_detail(level.difficulty),
                );
            return Some(SeedRecord {
                status: Status::Rejected,
                reason: Some(Reason::new(Code::OutOfBand, detail)),
                level: None,
                ..record
            });
        }
        Some(match self.duplicates.get(&seed) {
            Some(original) => SeedRecord {
                status: Status::Rejected,
                reason: Some(Reason::new(
                    Code::Duplicate,
                    format!("the level of seed {original}"),
                )),
                level: None,
                ..record
            },
            None => record,
        })
    }

    /// Seeds of the pack whose record was not found (none after a pass over
    /// an intact log).
    pub fn missing(&self) -> Vec<u64> {
        self.prefixes
            .iter()
            .flat_map(|&(a, b)| self.verdicts.range(a, b))
            .filter(|(_, v)| !v.taken)
            .map(|(s, _)| s)
            .collect()
    }

    /// Seeds the pack holds.
    pub fn seeds(&self) -> u64 {
        self.prefixes.iter().map(|&(a, b)| b - a).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_small() {
        assert!(std::mem::size_of::<Option<Verdict>>() <= 12);
    }

    #[test]
    fn ranges_and_removal_cross_chunks() {
        let mut v = Verdicts::default();
        let verdict = Verdict::new(1, 1, Status::Rejected, Some(Code::TooEasy));
        for seed in [5, 4095, 4096, 9000, 1 << 40] {
            assert!(v.insert(seed, verdict));
        }
        assert!(!v.insert(5, verdict));
        assert_eq!(v.len(), 5);
        let seeds: Vec<u64> = v.range(4, 9001).map(|(s, _)| s).collect();
        assert_eq!(seeds, [5, 4095, 4096, 9000]);
        assert_eq!(v.last_in(0, 9000), Some(4096));
        assert_eq!(v.last_in(0, u64::MAX), Some(1 << 40));
        assert_eq!(v.remove_where(|_| true), 5);
        assert!(v.is_empty() && v.range(0, u64::MAX).next().is_none());
    }
}
