//! The report's charts: difficulty and moves by tier, time per seed,
//! rejection reasons, and the campaigns' difficulty ramp, each one inline
//! `<svg>` drawn by [`crate::svg`] from the levels, rejects and campaign
//! slots the report read.

use std::collections::BTreeMap;
use std::fmt::Write;

use pregen_pack::refusal_key;

use crate::svg::{self, PALETTE, Series};

use super::{Level, Reject, Slot, short};

pub(super) fn charts(html: &mut String, levels: &[Level], rejects: &[Reject], campaigns: &[Slot]) {
    html.push_str("<h2>Levels</h2>\n");
    if !levels.is_empty() {
        level_charts(html, levels);
    }
    time_chart(html, levels, rejects);
    if !rejects.is_empty() {
        reasons_chart(html, rejects);
    }
    if !campaigns.is_empty() {
        campaign_chart(html, campaigns);
    }
}

/// Difficulty and moves of the accepted levels, by tier.
fn level_charts(html: &mut String, levels: &[Level]) {
    let tiers: Vec<u32> = levels
        .iter()
        .map(|l| l.tier)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let per_tier = |bin_of: &dyn Fn(&Level) -> Option<usize>, bins: usize| -> Vec<Series> {
        tiers
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let mut values = vec![0.0; bins];
                for l in levels.iter().filter(|l| l.tier == t) {
                    if let Some(b) = bin_of(l) {
                        values[b] += 1.0;
                    }
                }
                Series {
                    name: format!("tier {t:02}"),
                    values,
                    colour: svg::ramp(i, tiers.len()),
                }
            })
            .collect()
    };
    // Difficulty in bins of a round width (about 25 of them) starting at a
    // round value, coloured by tier.
    let lo = levels.iter().map(|l| l.difficulty).fold(f64::MAX, f64::min);
    let hi = levels.iter().map(|l| l.difficulty).fold(f64::MIN, f64::max);
    let width = if hi > lo {
        svg::nice_step(hi - lo, 25.0)
    } else {
        1.0
    };
    let start = (lo / width).floor() * width;
    let bins = (((hi - start) / width).floor() as usize + 1).max(1);
    let bin = |l: &Level| Some((((l.difficulty - start) / width) as usize).min(bins - 1));
    let categories: Vec<String> = (0..bins).map(|b| short(start + width * b as f64)).collect();
    html.push_str(&svg::columns(
        "Difficulty of the accepted levels, by tier",
        "difficulty (bin start)",
        "levels",
        &categories,
        &per_tier(&bin, bins),
    ));
    // Optimal moves, one column per count.
    let (lo, hi) = (
        levels.iter().map(|l| l.moves).min().unwrap_or(0),
        levels.iter().map(|l| l.moves).max().unwrap_or(0),
    );
    let categories: Vec<String> = (lo..=hi).map(|m| m.to_string()).collect();
    let bin = |l: &Level| Some((l.moves - lo) as usize);
    html.push_str(&svg::columns(
        "Moves of the accepted levels, by tier",
        "moves",
        "levels",
        &categories,
        &per_tier(&bin, categories.len()),
    ));
}

/// Time per seed in logarithmic bins: 1, 2, 5 times powers of ten (ms).
fn time_chart(html: &mut String, levels: &[Level], rejects: &[Reject]) {
    let all_ms = levels
        .iter()
        .map(|l| l.ms)
        .chain(rejects.iter().map(|r| r.ms));
    let max_ms = all_ms.clone().fold(0.0, f64::max);
    let min_ms = all_ms.filter(|&m| m > 0.0).fold(f64::MAX, f64::min);
    if max_ms <= 0.0 {
        return;
    }
    let mut edges = Vec::new();
    let mut power = 10f64.powf(min_ms.log10().floor());
    'outer: loop {
        for m in [1.0, 2.0, 5.0] {
            edges.push(m * power);
            if m * power > max_ms {
                break 'outer;
            }
        }
        power *= 10.0;
    }
    let bins = edges.len() - 1;
    let bin = |ms: f64| {
        edges
            .iter()
            .rposition(|&e| e <= ms)
            .unwrap_or(0)
            .min(bins - 1)
    };
    let mut accepted = vec![0.0; bins];
    let mut other = vec![0.0; bins];
    for l in levels {
        accepted[bin(l.ms)] += 1.0;
    }
    for r in rejects {
        other[bin(r.ms)] += 1.0;
    }
    let categories: Vec<String> = edges[..bins].iter().map(|&e| short(e)).collect();
    html.push_str(&svg::columns(
        "Time per seed (generate + verify)",
        "milliseconds (bin start; bins grow 1, 2, 5, 10, ...)",
        "seeds",
        &categories,
        &[
            Series {
                name: "accepted".into(),
                values: accepted,
                colour: PALETTE[6].into(),
            },
            Series {
                name: "not accepted".into(),
                values: other,
                colour: PALETTE[2].into(),
            },
        ],
    ));
}

/// Seeds not accepted, by status and reason code, most first.
fn reasons_chart(html: &mut String, rejects: &[Reject]) {
    let mut reasons: BTreeMap<String, f64> = BTreeMap::new();
    for r in rejects {
        *reasons
            .entry(refusal_key(&r.status, &r.reason))
            .or_default() += 1.0;
    }
    let mut rows: Vec<(String, f64)> = reasons.into_iter().collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    html.push_str("<h2>Seeds not accepted</h2>\n");
    html.push_str(&svg::bars(
        "Seeds not accepted, by reason",
        "seeds",
        &rows,
        PALETTE[2],
    ));
}

/// The campaigns' difficulty ramp: the median and the middle 80% by
/// position. Not the extremes: one outlier a position would stretch the
/// axis and flatten the ramp a player feels; the table of tiers has them.
fn campaign_chart(html: &mut String, campaigns: &[Slot]) {
    let mut by_position: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for s in campaigns {
        by_position
            .entry(s.position)
            .or_default()
            .push(s.difficulty);
    }
    for values in by_position.values_mut() {
        values.sort_by(f64::total_cmp);
    }
    let xs: Vec<f64> = by_position.keys().map(|&p| f64::from(p)).collect();
    let at = |q: f64| -> Vec<f64> {
        by_position
            .values()
            .map(|d| crate::quantile(d, q))
            .collect()
    };
    html.push_str("<h2>Campaigns</h2>\n");
    let _ = writeln!(
        html,
        "<p>{} campaigns of {} levels; level i of every campaign is drawn from difficulty \
         group i. The lines are the median difficulty at each position and the 10th and \
         90th percentiles around it.</p>",
        by_position.values().next().map_or(0, Vec::len),
        by_position.len()
    );
    html.push_str(&svg::lines(
        "Difficulty by position in the campaign",
        "position",
        "difficulty",
        &xs,
        &[
            Series {
                name: "90th percentile".into(),
                values: at(0.9),
                colour: PALETTE[8].into(),
            },
            Series {
                name: "median".into(),
                values: at(0.5),
                colour: PALETTE[4].into(),
            },
            Series {
                name: "10th percentile".into(),
                values: at(0.1),
                colour: PALETTE[0].into(),
            },
        ],
    ));
}
