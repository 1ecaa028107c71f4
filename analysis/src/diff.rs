//! Two packs compared level by level, as a release engineer asks after a
//! generator change: which seeds' levels changed, appeared or vanished, which
//! moved tier, and how each tier's difficulty shifted.
//!
//! Levels are matched by seed (and stratum: seeds of different strata never
//! meet); a level is the same when its hash is. [`diff`] builds a [`PackDiff`],
//! whose `Display` is the text `pregen analysis diff A B` prints and whose
//! serde form is its `--json`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use pregen_pack::PackDir;
use pregen_pack::read::{f64_column, read_batches, text_column, u64_column};
use pregen_pack::schema::columns as c;
use serde::Serialize;

use crate::{AnalysisError, Percentiles};

/// Seeds listed per kind of change, at most (the counts are always whole).
pub const LISTED: usize = 20;

/// One level as the diff sees it.
#[derive(Debug, Clone, PartialEq)]
struct Level {
    tier: u32,
    difficulty: f64,
    hash: String,
}

/// What differs between pack `a` (before) and pack `b` (after).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PackDiff {
    /// The two packs' names, job ids and generator versions.
    pub packs: [PackFacts; 2],
    /// Levels in both, the same level (hash) in both.
    pub same: u64,
    /// Seeds in both whose level differs.
    pub changed: Changes,
    /// Seeds with a level only in `b`.
    pub appeared: Changes,
    /// Seeds with a level only in `a`.
    pub vanished: Changes,
    /// Seeds of the same level in both that changed tier: `(from, to) -> count`.
    pub tier_moves: BTreeMap<String, u64>,
    /// Per tier, the difficulty before and after.
    pub tiers: BTreeMap<u32, TierShift>,
}

/// Who made a pack.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PackFacts {
    /// The pack's folder.
    pub dir: String,
    /// The pack's name.
    pub pack: String,
    /// The job's id.
    pub job_id: String,
    /// The generator version.
    pub generator: String,
    /// Levels in the pack.
    pub levels: u64,
}

/// A kind of change: how many seeds, and the first of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Changes {
    /// Seeds so changed.
    pub count: u64,
    /// The lowest [`LISTED`] of them.
    pub seeds: Vec<u64>,
}

impl Changes {
    fn add(&mut self, seed: u64) {
        self.count += 1;
        self.seeds.push(seed);
    }

    fn finish(&mut self) {
        self.seeds.sort_unstable();
        self.seeds.truncate(LISTED);
    }
}

/// One tier's difficulty in both packs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TierShift {
    /// In `a`.
    pub before: Percentiles,
    /// In `b`.
    pub after: Percentiles,
    /// `after.p50 - before.p50` (0 when either tier is empty).
    pub median_shift: f64,
}

/// Compares the packs in `a` and `b`.
pub fn diff(a: &Path, b: &Path) -> Result<PackDiff, AnalysisError> {
    let (facts_a, levels_a) = read(a)?;
    let (facts_b, mut levels_b) = read(b)?;
    let mut out = PackDiff {
        packs: [facts_a, facts_b],
        ..PackDiff::default()
    };
    let mut difficulties: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (seed, before) in levels_a {
        difficulties
            .entry(before.tier)
            .or_default()
            .0
            .push(before.difficulty);
        match levels_b.remove(&seed) {
            None => out.vanished.add(seed),
            Some(after) => {
                difficulties
                    .entry(after.tier)
                    .or_default()
                    .1
                    .push(after.difficulty);
                if after.hash != before.hash {
                    out.changed.add(seed);
                } else {
                    out.same += 1;
                    if after.tier != before.tier {
                        let key = format!("{} -> {}", before.tier, after.tier);
                        *out.tier_moves.entry(key).or_default() += 1;
                    }
                }
            }
        }
    }
    for (seed, after) in levels_b {
        difficulties
            .entry(after.tier)
            .or_default()
            .1
            .push(after.difficulty);
        out.appeared.add(seed);
    }
    for changes in [&mut out.changed, &mut out.appeared, &mut out.vanished] {
        changes.finish();
    }
    out.tiers = difficulties
        .into_iter()
        .map(|(tier, (before, after))| {
            let (before, after) = (Percentiles::of(before), Percentiles::of(after));
            let median_shift = if before.count > 0 && after.count > 0 {
                after.p50 - before.p50
            } else {
                0.0
            };
            (
                tier,
                TierShift {
                    before,
                    after,
                    median_shift,
                },
            )
        })
        .collect();
    Ok(out)
}

impl PackDiff {
    /// Whether the two packs hold the same levels in the same tiers.
    pub fn is_empty(&self) -> bool {
        self.changed.count == 0
            && self.appeared.count == 0
            && self.vanished.count == 0
            && self.tier_moves.is_empty()
    }
}

/// A pack's facts and its levels by seed.
fn read(dir: &Path) -> Result<(PackFacts, BTreeMap<u64, Level>), AnalysisError> {
    let pack = PackDir::new(dir);
    pack.require_complete()?;
    let manifest = pack.read_manifest()?;
    let mut levels = BTreeMap::new();
    for (tier, part) in pack.level_parts()? {
        for batch in read_batches(&part)? {
            let seeds = u64_column(&batch, c::SEED, &part)?;
            let hashes = text_column(&batch, c::LEVEL_HASH, &part)?;
            let difficulty = f64_column(&batch, c::DIFFICULTY, &part)?;
            for (i, difficulty) in difficulty.into_iter().enumerate() {
                let level = Level {
                    tier,
                    difficulty,
                    hash: hashes.value(i).to_string(),
                };
                if levels.insert(seeds[i], level).is_some() {
                    return Err(AnalysisError::invalid(
                        &part,
                        format!("seed {} appears twice in the pack", seeds[i]),
                    ));
                }
            }
        }
    }
    let facts = PackFacts {
        dir: dir.display().to_string(),
        pack: manifest.pack,
        job_id: manifest.job_id,
        generator: manifest.versions.generator,
        levels: levels.len() as u64,
    };
    Ok((facts, levels))
}

impl fmt::Display for PackDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (label, p) in ["a", "b"].iter().zip(&self.packs) {
            writeln!(
                f,
                "{label}: {} (pack {}, job {}, generator {}): {} levels",
                p.dir, p.pack, p.job_id, p.generator, p.levels
            )?;
        }
        writeln!(f, "\nsame level in both: {}", self.same)?;
        for (name, c) in [
            ("changed", &self.changed),
            ("appeared", &self.appeared),
            ("vanished", &self.vanished),
        ] {
            write!(f, "{name:<9} {:>8}", c.count)?;
            if !c.seeds.is_empty() {
                let seeds: Vec<String> = c.seeds.iter().map(u64::to_string).collect();
                let more = if c.count > c.seeds.len() as u64 {
                    ", ..."
                } else {
                    ""
                };
                write!(f, "   seeds {}{more}", seeds.join(", "))?;
            }
            writeln!(f)?;
        }
        if self.tier_moves.is_empty() {
            writeln!(f, "\nno level of both packs changed tier")?;
        } else {
            writeln!(f, "\nsame level, another tier (from -> to: levels)")?;
            for (moved, n) in &self.tier_moves {
                writeln!(f, "  {moved:>9}: {n}")?;
            }
        }
        writeln!(
            f,
            "\ntier   levels a   levels b   p50 a      p50 b      shift      min a .. max a        min b .. max b"
        )?;
        for (tier, t) in &self.tiers {
            writeln!(
                f,
                "{tier:>4} {:>10} {:>10} {:>10.3} {:>10.3} {:>+10.3}   {:>8.3} .. {:<8.3}   {:>8.3} .. {:<8.3}",
                t.before.count,
                t.after.count,
                t.before.p50,
                t.after.p50,
                t.median_shift,
                t.before.min,
                t.before.max,
                t.after.min,
                t.after.max
            )?;
        }
        Ok(())
    }
}
