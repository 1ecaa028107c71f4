//! Every level of a release accounted for: tiers against their seed
//! files and the manifest, campaigns against the job's draw.

use std::collections::{BTreeMap, HashSet};

use super::{Manifest, ReleaseReport, Seeds};
use crate::job::Job;

/// Every level accounted for: each tier's level files hold the levels of
/// its seed file, each once, in its order, easiest first (ties by seed),
/// no tier easier than the one before; every tier the manifest counts is
/// there with its count.
pub(super) fn account(
    manifest: &Manifest,
    seeds: &Seeds,
    tier_files: &BTreeMap<u32, Vec<(u64, f64)>>,
    report: &mut ReleaseReport,
) {
    let none = Vec::new();
    for (&tier, listed) in &seeds.by_tier {
        let at = format!("tier {tier:02}");
        let held: Vec<u64> = tier_files
            .get(&tier)
            .unwrap_or(&none)
            .iter()
            .map(|(s, _)| *s)
            .collect();
        if &held != listed {
            let known: HashSet<&u64> = held.iter().collect();
            let missing: Vec<&u64> = listed.iter().filter(|s| !known.contains(s)).collect();
            let mut seen = HashSet::new();
            let twice: Vec<&u64> = held.iter().filter(|s| !seen.insert(**s)).collect();
            let what = match (missing.first(), twice.first()) {
                (Some(s), _) => format!(
                    "{} of its levels are missing (seed {s} first)",
                    missing.len()
                ),
                (None, Some(s)) => format!(
                    "seed {s} is there {} times",
                    held.iter().filter(|h| h == s).count()
                ),
                (None, None) if held.len() != listed.len() => {
                    format!(
                        "it holds {} levels, its seed file {}",
                        held.len(),
                        listed.len()
                    )
                }
                (None, None) => "its levels are not in its seed file's order".to_string(),
            };
            report.failures.push((
                at.clone(),
                format!("the level files do not hold its seed file's levels: {what}"),
            ));
        }
    }
    for (&tier, held) in tier_files {
        let sorted = held
            .windows(2)
            .all(|w| (w[0].1, w[0].0) <= (w[1].1, w[1].0) || w.iter().any(|l| l.1.is_nan()));
        if !sorted {
            report.failures.push((
                format!("tier {tier:02}"),
                "its levels are not easiest first (difficulty, then seed)".into(),
            ));
        }
    }
    let bounds: Vec<(u32, f64, f64)> = tier_files
        .iter()
        .filter_map(|(&tier, held)| {
            let d = held.iter().map(|l| l.1).filter(|d| !d.is_nan());
            let (lo, hi) = d.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                (lo.min(d), hi.max(d))
            });
            (lo <= hi).then_some((tier, lo, hi))
        })
        .collect();
    for w in bounds.windows(2) {
        if w[1].1 < w[0].2 {
            report.failures.push((
                format!("tier {:02}", w[1].0),
                format!(
                    "it holds a level easier ({}) than tier {:02}'s hardest ({})",
                    w[1].1, w[0].0, w[0].2
                ),
            ));
        }
    }
    if let Some(counts) = &manifest.counts {
        for (key, &count) in &counts.by_tier {
            let tier: Option<u32> = key.parse().ok();
            let held = tier
                .and_then(|t| seeds.by_tier.get(&t))
                .map_or(0, |l| l.len() as u64);
            if held != count {
                report.failures.push((
                    format!("tier {key}"),
                    format!("the manifest counts {count} levels, the release holds {held}"),
                ));
            }
        }
    }
}

/// Every campaign as the job draws it: over the pack's levels ranked by
/// (difficulty, seed), which the tiers' seed files hold in order, campaign
/// k's position i is the level the job's draw puts there, and every
/// campaign drawn has its file.
pub(super) fn account_campaigns(
    job: &Job,
    seeds: &Seeds,
    campaign_files: &BTreeMap<u64, Vec<u64>>,
    report: &mut ReleaseReport,
) {
    let ranked: Vec<u64> = seeds.by_tier.values().flatten().copied().collect();
    let mut drawn: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let draw = crate::tiers::draw_campaigns(
        ranked.len(),
        job.campaigns.length,
        job.campaign_count(),
        job.first_seed,
    );
    for (campaign, _, rank) in draw {
        if let Some(seed) = ranked.get(rank) {
            drawn.entry(campaign).or_default().push(*seed);
        }
    }
    for (campaign, want) in &drawn {
        let at = format!("campaign {campaign}");
        match campaign_files.get(campaign) {
            None => report
                .failures
                .push((at, "the job draws it; the release has no file of it".into())),
            Some(held) if held != want => {
                let position = held
                    .iter()
                    .zip(want)
                    .position(|(h, w)| h != w)
                    .unwrap_or(held.len().min(want.len()));
                report.failures.push((
                    at,
                    format!(
                        "it is not the campaign the job draws: position {} holds {}, the draw \
                         puts seed {} there ({} levels, {} drawn)",
                        position + 1,
                        held.get(position)
                            .map_or("nothing".to_string(), |s| format!("seed {s}")),
                        want.get(position)
                            .map_or("none".to_string(), u64::to_string),
                        held.len(),
                        want.len()
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    for campaign in campaign_files.keys().filter(|k| !drawn.contains_key(k)) {
        report.failures.push((
            format!("campaign {campaign}"),
            "the job draws no such campaign".into(),
        ));
    }
}
