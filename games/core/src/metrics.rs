//! A level's published figures: the [`Metrics`] map and the [`MetricDoc`]
//! of each key, as the data dictionary documents them. A leaf: it imports
//! nothing from the crate.

use std::collections::BTreeMap;

/// A rating rounded to 1e-6, so it prints and sorts the same everywhere.
pub fn rounded_rating(raw: f64) -> f64 {
    (raw * 1e6).round() / 1e6
}

/// The published form of a game's figures: the Parquet `metrics` map.
pub type Metrics = BTreeMap<String, f64>;

/// One key of a game's [`Metrics`], as the data dictionary documents it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricDoc {
    /// The key in the `metrics` map.
    pub name: &'static str,
    /// Its unit (`count`, `share` for 0..=1, `points`, `flag` for 0 or 1...).
    pub unit: &'static str,
    /// What it measures, and when it is present if not in every row.
    pub doc: &'static str,
}

impl MetricDoc {
    /// The unit of a figure that is 0 or 1.
    pub const FLAG: &'static str = "flag";

    /// Whether the figure is 0 or 1 (the levels' `metric_flags` column holds it as
    /// a boolean too).
    pub fn is_flag(&self) -> bool {
        self.unit == Self::FLAG
    }
}

/// A [`MetricDoc`], briefly.
pub const fn metric(name: &'static str, unit: &'static str, doc: &'static str) -> MetricDoc {
    MetricDoc { name, unit, doc }
}
