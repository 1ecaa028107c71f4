//! Two packs compared level by level, as a release engineer asks after a
//! generator change: which seeds' levels changed, appeared or vanished, which
//! moved tier, and how each tier's difficulty shifted.
//!
//! Levels are matched by seed (and stratum: seeds of different strata never
//! meet); a level is the same when its hash is. [`diff`] builds a [`PackDiff`],
//! whose `Display` is the text `pregen analysis diff A B` prints (the first
//! [`LISTED`] seeds of each kind of change) and whose serde form is its
//! `--json` (every seed). What differs between the two jobs (game, params per
//! stratum, budget, tiers, rating model, generator) is named first.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use pregen_pack::read::{f64_column, read_batches, text_column, u32_column, u64_column};
use pregen_pack::schema::columns as c;
use pregen_pack::{Manifest, PackDir};
use serde::Serialize;

use crate::{AnalysisError, Percentiles};

/// Seeds the text lists per kind of change, at most (the counts are always
/// whole; `--json` lists every seed).
pub const LISTED: usize = 20;

/// One level as the diff sees it.
#[derive(Debug, Clone, PartialEq)]
struct Level {
    tier: u32,
    stratum: u32,
    difficulty: f64,
    hash: String,
}

/// Tier moves written as a JSON object keyed `"FROM -> TO"`, in the tiers'
/// order.
fn moves_by_words<S: serde::Serializer>(
    moves: &BTreeMap<(u32, u32), u64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(moves.len()))?;
    for ((from, to), n) in moves {
        map.serialize_entry(&format!("{from} -> {to}"), n)?;
    }
    map.end()
}

/// What differs between pack `a` (before) and pack `b` (after).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PackDiff {
    /// The two packs' names, job ids and generator versions.
    pub packs: [PackFacts; 2],
    /// What differs between the two jobs: `field: a -> b` (game, params per
    /// stratum, budget, tiers, campaigns, rating model, generator).
    pub job_changes: Vec<String>,
    /// Per stratum (by name; `-` without strata), the same counts.
    pub strata: BTreeMap<String, StratumDiff>,
    /// Levels in both, the same level (hash) in both.
    pub same: u64,
    /// Seeds in both whose level differs.
    pub changed: Changes,
    /// Seeds with a level only in `b`.
    pub appeared: Changes,
    /// Seeds with a level only in `a`.
    pub vanished: Changes,
    /// Seeds of the same level in both that changed tier, counted by (from,
    /// to) in the tiers' order (in JSON keyed `"FROM -> TO"`).
    #[serde(serialize_with = "moves_by_words")]
    pub tier_moves: BTreeMap<(u32, u32), u64>,
    /// Per tier, the difficulty before and after.
    #[serde(serialize_with = "crate::by_tier_key")]
    pub tiers: BTreeMap<u32, TierShift>,
}

/// Who made a pack.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PackFacts {
    /// The pack's folder.
    pub dir: String,
    /// The pack's name.
    pub pack: String,
    /// The game.
    pub game: String,
    /// The job's id.
    pub job_id: String,
    /// The generator version.
    pub generator: String,
    /// Levels in the pack.
    pub levels: u64,
}

/// A kind of change: how many seeds, and which.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Changes {
    /// Seeds so changed.
    pub count: u64,
    /// Every one of them, in order.
    pub seeds: Vec<u64>,
}

/// One stratum's part of a [`PackDiff`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StratumDiff {
    /// Its levels in `a` and in `b`.
    pub levels: [u64; 2],
    /// The same level in both.
    pub same: u64,
    /// Levels that differ, appeared or vanished.
    pub changed: u64,
    /// Levels only in `b`.
    pub appeared: u64,
    /// Levels only in `a`.
    pub vanished: u64,
    /// Its band of difficulty in `a` and in `b`, if any.
    pub bands: [Option<pregen_pack::job::Band>; 2],
    /// The share of its seeds in the pack that gave one of its levels, in
    /// `a` and in `b`.
    pub fill: [f64; 2],
    /// CPU seconds its seeds in the pack took per level, in `a` and in `b`.
    pub seconds_per_level: [f64; 2],
}

impl Changes {
    fn add(&mut self, seed: u64) {
        self.count += 1;
        self.seeds.push(seed);
    }

    fn finish(&mut self) {
        self.seeds.sort_unstable();
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
    let (facts_a, manifest_a, levels_a) = read(a)?;
    let (facts_b, manifest_b, mut levels_b) = read(b)?;
    let name_a = stratum_names(&manifest_a);
    let name_b = stratum_names(&manifest_b);
    let mut out = PackDiff {
        job_changes: job_changes(&manifest_a, &manifest_b),
        packs: [facts_a, facts_b],
        ..PackDiff::default()
    };
    let stratum = |names: &[String], level: &Level| -> String {
        names
            .get(level.stratum as usize)
            .cloned()
            .unwrap_or_else(|| level.stratum.to_string())
    };
    for level in levels_a.values() {
        out.strata
            .entry(stratum(&name_a, level))
            .or_default()
            .levels[0] += 1;
    }
    for level in levels_b.values() {
        out.strata
            .entry(stratum(&name_b, level))
            .or_default()
            .levels[1] += 1;
    }
    let mut difficulties: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (seed, before) in levels_a {
        difficulties
            .entry(before.tier)
            .or_default()
            .0
            .push(before.difficulty);
        let st = out.strata.entry(stratum(&name_a, &before)).or_default();
        match levels_b.remove(&seed) {
            None => {
                st.vanished += 1;
                st.changed += 1;
                out.vanished.add(seed);
            }
            Some(after) => {
                difficulties
                    .entry(after.tier)
                    .or_default()
                    .1
                    .push(after.difficulty);
                if after.hash != before.hash {
                    st.changed += 1;
                    out.changed.add(seed);
                } else {
                    st.same += 1;
                    out.same += 1;
                    if after.tier != before.tier {
                        let key = (before.tier, after.tier);
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
        let st = out.strata.entry(stratum(&name_b, &after)).or_default();
        st.appeared += 1;
        st.changed += 1;
        out.appeared.add(seed);
    }
    for changes in [&mut out.changed, &mut out.appeared, &mut out.vanished] {
        changes.finish();
    }
    out.tiers = tier_shifts(difficulties);
    // Each stratum's band, fill rate and cost, as `analysis summary` gives
    // them.
    for (side, (dir, names)) in [(a, &name_a), (b, &name_b)].into_iter().enumerate() {
        for (st, name) in crate::summarize(dir)?.strata.into_iter().zip(names) {
            let entry = out.strata.entry(name.clone()).or_default();
            let levels = st.statuses.get("accepted").copied().unwrap_or(0);
            entry.bands[side] = st.band;
            entry.fill[side] = levels as f64 / st.seeds_in_pack.max(1) as f64;
            entry.seconds_per_level[side] = st.seconds_per_level;
        }
    }
    Ok(out)
}

/// Each tier's difficulty before and after, from the levels' difficulties
/// by tier (before, after).
fn tier_shifts(difficulties: BTreeMap<u32, (Vec<f64>, Vec<f64>)>) -> BTreeMap<u32, TierShift> {
    difficulties
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
        .collect()
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

/// The strata's names of a pack (`-` for a job without strata).
fn stratum_names(manifest: &Manifest) -> Vec<String> {
    manifest
        .strata
        .iter()
        .map(|s| {
            if s.name.is_empty() {
                "-".into()
            } else {
                s.name.clone()
            }
        })
        .collect()
}

/// What differs between the jobs of two manifests, as `field: a -> b`.
fn job_changes(a: &Manifest, b: &Manifest) -> Vec<String> {
    let mut changes = Vec::new();
    let mut compare = |field: String, x: String, y: String| {
        if x != y {
            changes.push(format!("{field}: {x} -> {y}"));
        }
    };
    compare("game".into(), a.job.game.clone(), b.job.game.clone());
    compare(
        "generator".into(),
        a.versions.generator.clone(),
        b.versions.generator.clone(),
    );
    compare("rating model".into(), a.rating.label(), b.rating.label());
    let debug = |v: &dyn fmt::Debug| format!("{v:?}");
    compare("budget".into(), debug(&a.job.budget), debug(&b.job.budget));
    compare("tiers".into(), debug(&a.job.tiers), debug(&b.job.tiers));
    compare(
        "campaigns".into(),
        debug(&a.job.campaigns),
        debug(&b.job.campaigns),
    );
    compare(
        "first_seed".into(),
        a.job.first_seed.to_string(),
        b.job.first_seed.to_string(),
    );
    let strata = a.strata.len().max(b.strata.len());
    for i in 0..strata {
        let (sa, sb) = (a.strata.get(i), b.strata.get(i));
        let label = |s: Option<&pregen_pack::manifest::StratumEntry>| {
            s.map_or("(none)".to_string(), |s| s.name.clone())
        };
        let at = if strata > 1 {
            format!("strata[{i}].")
        } else {
            String::new()
        };
        if strata > 1 {
            compare(format!("strata[{i}].name"), label(sa), label(sb));
            compare(
                format!("strata[{i}].count"),
                sa.map_or("-".into(), |s| s.count.to_string()),
                sb.map_or("-".into(), |s| s.count.to_string()),
            );
        }
        let band = |s: Option<&pregen_pack::manifest::StratumEntry>| {
            s.and_then(|s| s.band)
                .map_or_else(|| "none".to_string(), |b| b.to_string())
        };
        compare(format!("{at}difficulty band"), band(sa), band(sb));
        let params = |s: Option<&pregen_pack::manifest::StratumEntry>| {
            s.and_then(|s| s.params.as_object().cloned())
                .unwrap_or_default()
        };
        let (pa, pb) = (params(sa), params(sb));
        let keys: std::collections::BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
        for key in keys {
            let show = |v: Option<&_>| v.map_or("(unset)".to_string(), |v| format!("{v}"));
            compare(
                format!("{at}params.{key}"),
                show(pa.get(key)),
                show(pb.get(key)),
            );
        }
    }
    changes
}

/// A pack's facts, its manifest and its levels by seed.
fn read(dir: &Path) -> Result<(PackFacts, Manifest, BTreeMap<u64, Level>), AnalysisError> {
    let pack = PackDir::new(dir);
    pack.require_complete()?;
    let manifest = pack.read_manifest()?;
    let mut levels = BTreeMap::new();
    for (tier, part) in pack.level_parts()? {
        for batch in read_batches(&part)? {
            let seeds = u64_column(&batch, c::SEED, &part)?;
            let hashes = text_column(&batch, c::LEVEL_HASH, &part)?;
            let difficulty = f64_column(&batch, c::DIFFICULTY, &part)?;
            let strata = u32_column(&batch, c::STRATUM, &part)?;
            for (i, difficulty) in difficulty.into_iter().enumerate() {
                let level = Level {
                    tier,
                    stratum: strata[i],
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
        pack: manifest.pack.clone(),
        game: manifest.job.game.clone(),
        job_id: manifest.job_id.clone(),
        generator: manifest.versions.generator.clone(),
        levels: levels.len() as u64,
    };
    Ok((facts, manifest, levels))
}

impl PackDiff {
    /// The levels of both packs that changed tier, as a from/to matrix.
    fn write_tier_moves(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tier_moves.is_empty() {
            writeln!(f, "\nno level of both packs changed tier")?;
        } else {
            writeln!(
                f,
                "\nsame level, another tier: levels by tier in a (rows) and in b (columns)"
            )?;
            let froms: std::collections::BTreeSet<u32> =
                self.tier_moves.keys().map(|&(a, _)| a).collect();
            let tos: std::collections::BTreeSet<u32> =
                self.tier_moves.keys().map(|&(_, b)| b).collect();
            write!(f, "  {:>8}", "a \\ b")?;
            for to in &tos {
                write!(f, " {to:>6}")?;
            }
            writeln!(f)?;
            for from in &froms {
                write!(f, "  {from:>8}")?;
                for to in &tos {
                    match self.tier_moves.get(&(*from, *to)) {
                        Some(n) => write!(f, " {n:>6}")?,
                        None => write!(f, " {:>6}", ".")?,
                    }
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }

    /// Each stratum's counts, fill, cost and band, when there is more than
    /// one stratum or a band.
    fn write_strata(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let banded = self
            .strata
            .values()
            .any(|s| s.bands.iter().any(Option::is_some));
        if self.strata.len() > 1 || banded {
            writeln!(
                f,
                "\nstratum          levels a   levels b       same    changed   appeared   vanished  \
                 fill a -> b        s/level a -> b     band"
            )?;
            for (name, s) in &self.strata {
                let band = |b: Option<pregen_pack::job::Band>| {
                    b.map_or_else(|| "-".to_string(), |b| b.to_string())
                };
                let bands = if s.bands[0] == s.bands[1] {
                    band(s.bands[0])
                } else {
                    format!("{} -> {}", band(s.bands[0]), band(s.bands[1]))
                };
                writeln!(
                    f,
                    "{name:<16} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}  {:>6.1}% -> {:>5.1}%  \
                     {:>7.3} -> {:<7.3}  {bands}",
                    s.levels[0],
                    s.levels[1],
                    s.same,
                    s.changed,
                    s.appeared,
                    s.vanished,
                    100.0 * s.fill[0],
                    100.0 * s.fill[1],
                    s.seconds_per_level[0],
                    s.seconds_per_level[1],
                )?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for PackDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (label, p) in ["a", "b"].iter().zip(&self.packs) {
            writeln!(
                f,
                "{label}: {} (pack {}, game {}, job {}, generator {}): {} levels",
                p.dir, p.pack, p.game, p.job_id, p.generator, p.levels
            )?;
        }
        if self.packs[0].game != self.packs[1].game {
            writeln!(
                f,
                "\nwarning: the packs are of different games ({} and {}): their levels never match",
                self.packs[0].game, self.packs[1].game
            )?;
        }
        if self.job_changes.is_empty() {
            writeln!(f, "\nthe jobs differ in nothing that makes levels")?;
        } else {
            writeln!(f, "\nthe jobs differ (a -> b):")?;
            for change in &self.job_changes {
                writeln!(f, "  {change}")?;
            }
        }
        writeln!(f, "\nsame level in both: {}", self.same)?;
        for (name, c) in [
            ("changed", &self.changed),
            ("appeared", &self.appeared),
            ("vanished", &self.vanished),
        ] {
            write!(f, "{name:<9} {:>8}", c.count)?;
            if !c.seeds.is_empty() {
                let seeds: Vec<String> = c.seeds.iter().take(LISTED).map(u64::to_string).collect();
                let more = if c.count > LISTED as u64 {
                    ", ... (--json lists every one)"
                } else {
                    ""
                };
                write!(f, "   seeds {}{more}", seeds.join(", "))?;
            }
            writeln!(f)?;
        }
        self.write_tier_moves(f)?;
        self.write_strata(f)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Tier moves read in the tiers' order, as a from/to matrix in text and
    /// `"FROM -> TO"` keys in JSON: 2 -> 1 before 10 -> 7.
    #[test]
    fn tier_moves_are_in_the_tiers_order() {
        let mut d = PackDiff::default();
        d.tier_moves.insert((10, 7), 2);
        d.tier_moves.insert((2, 1), 1);
        d.tier_moves.insert((2, 3), 4);
        let text = d.to_string();
        let matrix: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.contains("levels by tier in a (rows)"))
            .skip(1)
            .take(3)
            .collect();
        assert_eq!(
            matrix,
            [
                "     a \\ b      1      3      7",
                "         2      1      4      .",
                "        10      .      .      2",
            ],
            "{text}"
        );
        let json = serde_json::to_string(&d).expect("json");
        assert!(
            json.contains(r#""tier_moves":{"2 -> 1":1,"2 -> 3":4,"10 -> 7":2}"#),
            "{json}"
        );
    }
}
