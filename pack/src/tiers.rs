//! Tiers and campaigns: levels sorted by (difficulty, seed), cut into tiers,
//! and campaigns drawn from difficulty groups without replacement. Every sort
//! breaks ties by seed, so equal difficulties never make two runs differ.

use pregen_games::rng::Rng;
use serde::Serialize;

use crate::job::TierScheme;
use crate::record::{LevelRecord, SeedRecord};

/// An accepted level placed in its tier.
#[derive(Debug, Clone)]
pub struct TieredLevel<'a> {
    /// The record (status accepted, level present).
    pub record: &'a SeedRecord,
    /// The level.
    pub level: &'a LevelRecord,
    /// Tier, 1-based.
    pub tier: u32,
}

/// One campaign slot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignSlot {
    /// Campaign number, 1-based.
    pub campaign: u64,
    /// Position in the campaign, 1-based (position i from difficulty group i).
    pub position: u32,
    /// The level's seed.
    pub seed: u64,
    /// Its tier.
    pub tier: u32,
    /// Its difficulty.
    pub difficulty: f64,
}

/// `k` groups of sizes differing by at most one over `n` sorted items.
pub fn equal_groups(n: usize, k: usize) -> Vec<std::ops::Range<usize>> {
    (0..k).map(|i| i * n / k..(i + 1) * n / k).collect()
}

/// Sorts accepted levels by (difficulty, seed) and assigns tiers.
pub fn assign_tiers<'a>(records: &'a [SeedRecord], scheme: &TierScheme) -> Vec<TieredLevel<'a>> {
    let mut levels: Vec<(&SeedRecord, &LevelRecord)> = records
        .iter()
        .filter_map(|r| Some((r, r.accepted()?)))
        .collect();
    levels.sort_by(|a, b| {
        a.1.difficulty
            .total_cmp(&b.1.difficulty)
            .then(a.0.seed.cmp(&b.0.seed))
    });
    let mut tiers = vec![0u32; levels.len()];
    match scheme {
        TierScheme::Equal { count } => {
            for (t, group) in equal_groups(levels.len(), *count as usize)
                .into_iter()
                .enumerate()
            {
                for i in group {
                    tiers[i] = t as u32 + 1;
                }
            }
        }
        TierScheme::Thresholds { thresholds } => {
            for (i, (_, l)) in levels.iter().enumerate() {
                tiers[i] = 1 + thresholds.iter().filter(|&&t| t <= l.difficulty).count() as u32;
            }
        }
    }
    levels
        .into_iter()
        .zip(tiers)
        .map(|((record, level), tier)| TieredLevel {
            record,
            level,
            tier,
        })
        .collect()
}

/// Source 000's campaign rule: `length` equal difficulty groups; campaign k takes
/// one level from each group, drawn without replacement by a PRNG seeded from
/// the job, so the draw is deterministic.
pub fn draw_campaigns(
    sorted: &[TieredLevel<'_>],
    length: u32,
    campaigns: u64,
    first_seed: u64,
) -> Vec<CampaignSlot> {
    let mut rng = Rng::new(first_seed ^ 0x6361_6d70_6169_676e);
    let groups: Vec<Vec<usize>> = equal_groups(sorted.len(), length as usize)
        .into_iter()
        .map(|g| {
            let mut idx: Vec<usize> = g.collect();
            rng.shuffle(&mut idx);
            idx
        })
        .collect();
    let mut slots = Vec::new();
    for k in 0..campaigns as usize {
        for (i, group) in groups.iter().enumerate() {
            let Some(&at) = group.get(k) else { continue };
            let l = &sorted[at];
            slots.push(CampaignSlot {
                campaign: k as u64 + 1,
                position: i as u32 + 1,
                seed: l.record.seed,
                tier: l.tier,
                difficulty: l.level.difficulty,
            });
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::record::Status;

    fn level(seed: u64, difficulty: f64) -> SeedRecord {
        SeedRecord {
            seed,
            status: Status::Accepted,
            reason: String::new(),
            level: Some(LevelRecord {
                difficulty,
                moves: 3,
                moves_optimal: true,
                layout: "#####\n#1.1#\n#####\n".into(),
                level_json: "{}".into(),
                solution: "R".into(),
                metrics: BTreeMap::from([("states".to_string(), 4.0)]),
                level_hash: format!("{seed}"),
                canonical: None,
            }),
            generate_ms: 0.1,
            solve_ms: 0.2,
            nodes: 4,
            worker: "w".into(),
            attempt: 1,
        }
    }

    #[test]
    fn equal_tiers_sort_by_difficulty_then_seed() {
        let records: Vec<SeedRecord> = (0..10)
            .map(|s| level(s, f64::from((s % 4) as u32)))
            .collect();
        let t = assign_tiers(&records, &TierScheme::Equal { count: 3 });
        let order: Vec<(u64, u32)> = t.iter().map(|l| (l.record.seed, l.tier)).collect();
        assert_eq!(
            order,
            vec![
                (0, 1),
                (4, 1),
                (8, 1),
                (1, 2),
                (5, 2),
                (9, 2),
                (2, 3),
                (6, 3),
                (3, 3),
                (7, 3)
            ]
        );
    }

    #[test]
    fn threshold_tiers() {
        let records: Vec<SeedRecord> = [0.5, 1.0, 2.5, 9.0]
            .iter()
            .enumerate()
            .map(|(s, &d)| level(s as u64, d))
            .collect();
        let t = assign_tiers(
            &records,
            &TierScheme::Thresholds {
                thresholds: vec![1.0, 3.0],
            },
        );
        assert_eq!(
            t.iter().map(|l| l.tier).collect::<Vec<_>>(),
            vec![1, 2, 2, 3]
        );
    }

    #[test]
    fn campaign_position_i_comes_from_group_i_without_replacement() {
        let records: Vec<SeedRecord> = (0..40).map(|s| level(s, s as f64)).collect();
        let t = assign_tiers(&records, &TierScheme::Equal { count: 4 });
        let slots = draw_campaigns(&t, 4, 10, 7);
        assert_eq!(slots.len(), 40);
        for s in &slots {
            let group = (s.position - 1) as u64;
            assert!((group * 10..group * 10 + 10).contains(&s.seed), "{s:?}");
        }
        let mut seeds: Vec<u64> = slots.iter().map(|s| s.seed).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 40, "no level used twice");
        assert_eq!(slots, draw_campaigns(&t, 4, 10, 7), "deterministic");
    }
}
