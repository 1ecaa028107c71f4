//! Tiers and campaigns: levels sorted by (difficulty, seed), cut into tiers,
//! and campaigns drawn from difficulty groups without replacement. Every sort
//! breaks ties by seed, so equal difficulties never make two runs differ.

use pregen_games::rng::Rng;
use serde::Serialize;

use crate::job::TierScheme;

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

/// Tiers of `n` levels sorted by (difficulty, seed): the tier (1-based) of
/// the level at a rank, with its difficulty.
#[derive(Debug, Clone)]
pub struct Tiers {
    /// Equal groups: the first rank of each tier after the first.
    starts: Vec<usize>,
    /// Thresholds: a level's tier is one more than the thresholds at or below it.
    thresholds: Vec<f64>,
}

impl Tiers {
    /// The tiers of `n` sorted levels under `scheme`.
    pub fn new(n: usize, scheme: &TierScheme) -> Self {
        match scheme {
            TierScheme::Equal { count } => Tiers {
                starts: equal_groups(n, *count as usize)
                    .into_iter()
                    .skip(1)
                    .map(|g| g.start)
                    .collect(),
                thresholds: Vec::new(),
            },
            TierScheme::Thresholds { thresholds } => Tiers {
                starts: Vec::new(),
                thresholds: thresholds.clone(),
            },
        }
    }

    /// The tier of the level at `rank` with `difficulty`.
    pub fn tier(&self, rank: usize, difficulty: f64) -> u32 {
        if self.thresholds.is_empty() {
            1 + self.starts.partition_point(|&s| s <= rank) as u32
        } else {
            1 + self.thresholds.iter().filter(|&&t| t <= difficulty).count() as u32
        }
    }
}

/// Source 000's campaign rule over `n` levels sorted by (difficulty, seed):
/// `length` equal difficulty groups; campaign k takes one level from each
/// group, drawn without replacement by a PRNG seeded from the job, so the
/// draw is deterministic. Gives (campaign, position, rank) in campaign and
/// position order.
pub fn draw_campaigns(
    n: usize,
    length: u32,
    campaigns: u64,
    first_seed: u64,
) -> Vec<(u64, u32, usize)> {
    let mut rng = Rng::new(first_seed ^ 0x6361_6d70_6169_676e);
    let groups: Vec<Vec<usize>> = equal_groups(n, length as usize)
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
            slots.push((k as u64 + 1, i as u32 + 1, at));
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiers of levels given as (seed, difficulty), sorted as the pack sorts them.
    fn tiered(levels: &[(u64, f64)], scheme: &TierScheme) -> Vec<(u64, u32)> {
        let mut sorted = levels.to_vec();
        sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let tiers = Tiers::new(sorted.len(), scheme);
        sorted
            .iter()
            .enumerate()
            .map(|(rank, &(seed, d))| (seed, tiers.tier(rank, d)))
            .collect()
    }

    #[test]
    fn equal_tiers_sort_by_difficulty_then_seed() {
        let levels: Vec<(u64, f64)> = (0..10).map(|s| (s, f64::from((s % 4) as u32))).collect();
        assert_eq!(
            tiered(&levels, &TierScheme::Equal { count: 3 }),
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
        let levels = [(0, 0.5), (1, 1.0), (2, 2.5), (3, 9.0)];
        let scheme = TierScheme::Thresholds {
            thresholds: vec![1.0, 3.0],
        };
        assert_eq!(
            tiered(&levels, &scheme)
                .iter()
                .map(|l| l.1)
                .collect::<Vec<_>>(),
            vec![1, 2, 2, 3]
        );
    }

    #[test]
    fn campaign_position_i_comes_from_group_i_without_replacement() {
        let slots = draw_campaigns(40, 4, 10, 7);
        assert_eq!(slots.len(), 40);
        for &(_, position, rank) in &slots {
            let group = (position - 1) as usize;
            assert!((group * 10..group * 10 + 10).contains(&rank), "{rank}");
        }
        let mut ranks: Vec<usize> = slots.iter().map(|s| s.2).collect();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), 40, "no level used twice");
        assert_eq!(slots, draw_campaigns(40, 4, 10, 7), "deterministic");
    }
}
