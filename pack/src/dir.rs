//! The layout of a pack folder:
//!
//! ```text
//! <out>/<pack>/
//!   manifest.json                    job, versions, counts, checksums
//!   levels/tier=N/part-KKKKK.parquet   accepted levels, by (difficulty, seed)
//!   campaigns/campaigns.parquet
//!   rejects/rejects.parquet
//!   release/tier-NN.txt, release/solutions/tier-NN.txt, release/seeds/tier-NN.txt,
//!   release/campaigns/campaign-KKKKK.txt, release/SHA256SUMS
//!   commit/                          the coordinator's commit log
//!   _SUCCESS                         written last
//! ```

use std::path::{Path, PathBuf};

use crate::PackError;
use crate::manifest::Manifest;

/// The marker written last: a pack folder without it is not a pack.
pub const SUCCESS: &str = "_SUCCESS";
/// The manifest's file name.
pub const MANIFEST: &str = crate::manifest::FILE;
/// The levels' folder (Hive-partitioned by tier).
pub const LEVELS: &str = "levels";
/// The release folder.
pub const RELEASE: &str = "release";
/// The release checksums' file name inside [`RELEASE`].
pub const SHA256SUMS: &str = "SHA256SUMS";
/// Everything a finished pack holds besides `commit/`, removed before a rewrite.
pub const OUTPUTS: &[&str] = &[SUCCESS, MANIFEST, LEVELS, "campaigns", "rejects", RELEASE];

/// A pack folder, `<out>/<pack>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackDir {
    root: PathBuf,
}

impl PackDir {
    /// The pack folder at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The pack `pack` under the output root `out`.
    pub fn under(out: &Path, pack: &str) -> Self {
        Self::new(out.join(pack))
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `_SUCCESS`.
    pub fn success(&self) -> PathBuf {
        self.root.join(SUCCESS)
    }

    /// `manifest.json`.
    pub fn manifest(&self) -> PathBuf {
        self.root.join(MANIFEST)
    }

    /// The commit log's folder.
    pub fn commit(&self) -> PathBuf {
        self.root.join("commit")
    }

    /// `release/`.
    pub fn release(&self) -> PathBuf {
        self.root.join(RELEASE)
    }

    /// Whether `_SUCCESS` is there: the pack was written whole.
    pub fn is_complete(&self) -> bool {
        self.success().exists()
    }

    /// Refuses a folder without `_SUCCESS`.
    pub fn require_complete(&self) -> Result<(), PackError> {
        if self.is_complete() {
            Ok(())
        } else {
            Err(PackError::NotAPack(self.root.clone()))
        }
    }

    /// Reads the manifest.
    pub fn read_manifest(&self) -> Result<Manifest, PackError> {
        Manifest::read(&self.manifest())
    }

    /// The levels' Parquet files with their tier, in tier and part order, as
    /// found on disk.
    pub fn level_parts(&self) -> Result<Vec<(u32, PathBuf)>, PackError> {
        let list = |path: &Path| -> Result<Vec<PathBuf>, PackError> {
            let mut entries = Vec::new();
            for entry in std::fs::read_dir(path).map_err(PackError::io("list", path))? {
                entries.push(entry.map_err(PackError::io("list", path))?.path());
            }
            Ok(entries)
        };
        let mut tier_dirs: Vec<(u32, PathBuf)> = list(&self.root.join(LEVELS))?
            .into_iter()
            .filter_map(|p| Some((tier_of_folder(p.file_name()?.to_str()?)?, p)))
            .collect();
        tier_dirs.sort();
        let mut all = Vec::new();
        for (tier, tier_dir) in tier_dirs {
            let mut parts: Vec<PathBuf> = list(&tier_dir)?
                .into_iter()
                .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
                .collect();
            parts.sort();
            all.extend(parts.into_iter().map(|p| (tier, p)));
        }
        Ok(all)
    }
}

/// A tier's folder relative to the pack: `levels/tier=3`. Not zero-padded:
/// DuckDB, pyarrow and polars all read `3` as an integer partition value,
/// while DuckDB keeps `03` as text.
pub fn tier_folder(tier: u32) -> String {
    format!("{LEVELS}/tier={tier}")
}

/// A tier's Parquet part relative to the pack: `levels/tier=3/part-00000.parquet`
/// (numbered so that names sort in part order).
pub fn tier_part(tier: u32, part: u32) -> String {
    format!("{}/part-{part:05}.parquet", tier_folder(tier))
}

/// The folder of the pack writer's sort runs while it writes (removed after).
pub const SPILL: &str = ".sort";

/// The rejects' Parquet file relative to the pack.
pub const REJECTS_FILE: &str = "rejects/rejects.parquet";
/// The campaigns' Parquet file relative to the pack.
pub const CAMPAIGNS_FILE: &str = "campaigns/campaigns.parquet";

/// A tier's release file name inside `release/`: `tier-03.txt`.
pub fn release_tier(tier: u32) -> String {
    format!("tier-{tier:02}.txt")
}

/// A tier's solutions inside `release/`: `solutions/tier-03.txt`.
pub fn release_solutions(tier: u32) -> String {
    format!("solutions/tier-{tier:02}.txt")
}

/// A tier's seed file inside `release/`: `seeds/tier-03.txt`.
pub fn release_seeds(tier: u32) -> String {
    format!("seeds/tier-{tier:02}.txt")
}

/// A level's id: `<game>-<seed, 20 digits>`.
pub fn level_id(game: &str, seed: u64) -> String {
    LevelId { game, seed }.to_string()
}

/// A level's id ([`level_id`]) written where it is formatted, without a
/// string of its own.
pub struct LevelId<'a> {
    /// The game's name.
    pub game: &'a str,
    /// The level's seed.
    pub seed: u64,
}

impl std::fmt::Display for LevelId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{:020}", self.game, self.seed)
    }
}

/// A campaign's release file name inside `release/`: `campaigns/campaign-00001.txt`.
pub fn release_campaign(campaign: u64) -> String {
    format!("campaigns/campaign-{campaign:05}.txt")
}

/// The tier named by a Hive folder name `tier=N` (`tier=03` too).
fn tier_of_folder(name: &str) -> Option<u32> {
    name.strip_prefix("tier=")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_layout() {
        assert_eq!(tier_part(3, 0), "levels/tier=3/part-00000.parquet");
        assert_eq!(tier_part(10, 1), "levels/tier=10/part-00001.parquet");
        assert_eq!(release_tier(10), "tier-10.txt");
        assert_eq!(release_campaign(7), "campaigns/campaign-00007.txt");
        assert_eq!(tier_of_folder("tier=07"), Some(7));
        assert_eq!(tier_of_folder("other"), None);
        let dir = PackDir::under(Path::new("/nonexistent"), "p");
        assert!(!dir.is_complete());
        let err = dir.require_complete().expect_err("no _SUCCESS");
        assert!(err.to_string().contains("not a complete pack"), "{err}");
    }
}
