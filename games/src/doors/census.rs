//! Every level of an (n, b) search space, counted: how many are good (no
//! defect, planar), how many of those are unique by their solutions, as the
//! source's Table 3 "total unique" column counts them, and how many differ by
//! more than a renaming of rooms and colours.
//!
//! A space has 2^M levels, so only small ones can be walked; callers split
//! the range of feature bits into chunks, count each, and [`Census::merge`].

use std::collections::BTreeSet;
use std::ops::Range;

use super::grade::{SOLUTION_CAP, is_good};
use super::level::{Features, Rules, structure_key, uniqueness_key};

/// Largest M a census walks (2^26 levels, a few minutes on two cores).
pub const MAX_FEATURES: usize = 26;

/// Counts over a range of levels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Census {
    /// Levels looked at.
    pub levels: u64,
    /// Good levels among them.
    pub good: u64,
    /// The good levels' uniqueness keys.
    pub unique: BTreeSet<Vec<String>>,
    /// The good levels' structure keys (equal up to renaming).
    pub structures: BTreeSet<u64>,
}

impl Census {
    /// Counts the levels whose feature bits are in `bits`, with exit colour 1.
    pub fn count(features: Features, bits: Range<u64>) -> Census {
        let mut census = Census::default();
        for b in bits {
            census.levels += 1;
            let level = features.level(b, 1);
            if is_good(&level) {
                census.good += 1;
                census
                    .unique
                    .insert(uniqueness_key(&Rules::new(&level).solutions(SOLUTION_CAP)));
                census.structures.insert(structure_key(&level));
            }
        }
        census
    }

    /// Adds another range's counts.
    pub fn merge(mut self, other: Census) -> Census {
        self.levels += other.levels;
        self.good += other.good;
        self.unique.extend(other.unique);
        self.structures.extend(other.structures);
        self
    }
}
