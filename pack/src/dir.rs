//! The layout of a pack folder:
//!
//! ```text
//! <out>/<pack>/
//!   manifest.json                    job, versions, counts, checksums
//!   levels/tier-NN-part-KKKKK.parquet  accepted levels, by (difficulty, seed)
//!   campaigns/campaigns.parquet
//!   rejects/rejects.parquet
//!   release/tier-NN.txt (or tier-NN-FFFFF.txt, .jsonl), release/solutions/tier-NN.txt,
//!   release/seeds/tier-NN.txt, release/campaigns.txt, release/SHA256SUMS
//!   commit/                          the coordinator's commit log
//!   _SUCCESS                         written last
//! ```

use std::path::{Path, PathBuf};

use crate::PackError;
use crate::job::ReleaseFormat;
use crate::manifest::Manifest;

/// The marker written last: a pack folder without it is not a pack.
pub const SUCCESS: &str = "_SUCCESS";
/// The manifest's file name.
pub const MANIFEST: &str = crate::manifest::FILE;
/// The levels' folder (the tiers' parts side by side).
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
        let path = self.root.join(LEVELS);
        let mut all = Vec::new();
        for entry in std::fs::read_dir(&path).map_err(PackError::io("list", &path))? {
            let file = entry.map_err(PackError::io("list", &path))?.path();
            if let Some(key) = file.file_name().and_then(|n| n.to_str()).and_then(part_of) {
                all.push((key, file));
            }
        }
        all.sort();
        Ok(all
            .into_iter()
            .map(|((tier, _), file)| (tier, file))
            .collect())
    }
}

/// A tier's Parquet part relative to the pack: `levels/tier-03-part-00000.parquet`
/// (numbered so that names sort in tier and part order up to 99 tiers). The
/// parts lie side by side in `levels/`, and the files hold `tier` as a
/// column, not as a Hive folder (`tier=3`) whose value each reader types its
/// own way (pandas: an unordered category; DataFusion: text): so pandas,
/// pyarrow, polars, DuckDB, DataFusion and Spark read `levels/` with no
/// options and `tier` as an integer.
pub fn tier_part(tier: u32, part: u32) -> String {
    format!("{LEVELS}/tier-{tier:02}-part-{part:05}.parquet")
}

/// The folder of the pack writer's sort runs while it writes (removed after).
pub const SPILL: &str = ".sort";

/// Walks the files below `root`, handing each to `visit` by its path
/// relative to `root` (with `/` separators), without listing them all; a
/// `visit` that answers `true` stops the walk, and the walk then answers
/// `true` too.
pub fn walk_files(root: &Path, visit: &mut dyn FnMut(String) -> bool) -> Result<bool, PackError> {
    fn walk(
        root: &Path,
        folder: &Path,
        visit: &mut dyn FnMut(String) -> bool,
    ) -> Result<bool, PackError> {
        for entry in std::fs::read_dir(folder).map_err(PackError::io("list", folder))? {
            let entry = entry.map_err(PackError::io("list", folder))?;
            let path = entry.path();
            // The entry's own type: a link to a folder is a file here,
            // never followed (a link to `/` would walk the host).
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                if walk(root, &path, visit)? {
                    return Ok(true);
                }
            } else if let Ok(rel) = path.strip_prefix(root) {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if visit(parts.join("/")) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
    walk(root, root, visit)
}

/// The rejects' Parquet file relative to the pack.
pub const REJECTS_FILE: &str = "rejects/rejects.parquet";
/// The campaigns' Parquet file relative to the pack.
pub const CAMPAIGNS_FILE: &str = "campaigns/campaigns.parquet";

/// A tier's level file inside `release/`: `tier-03.txt` when the tier is
/// one file, `tier-03-00002.txt` for its third file of
/// `[release] levels_per_file`; `.jsonl` in JSON Lines.
pub fn release_tier(tier: u32, file: Option<u64>, format: ReleaseFormat) -> String {
    let ext = format.extension();
    match file {
        None => format!("tier-{tier:02}.{ext}"),
        Some(k) => format!("tier-{tier:02}-{k:05}.{ext}"),
    }
}

/// A tier's solutions inside `release/`: `solutions/tier-03.txt` (or
/// `solutions/tier-03-00002.txt`, beside the level file it goes with).
pub fn release_solutions(tier: u32, file: Option<u64>) -> String {
    format!(
        "solutions/{}",
        release_tier(tier, file, ReleaseFormat::Text)
    )
}

/// A tier's seed file inside `release/`: `seeds/tier-03.txt` (or
/// `seeds/tier-03-00002.txt`, beside the level file it goes with).
pub fn release_seeds(tier: u32, file: Option<u64>) -> String {
    format!("seeds/{}", release_tier(tier, file, ReleaseFormat::Text))
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

/// The campaigns' release file inside `release/`: `campaigns.txt`
/// (`.jsonl` in JSON Lines), every campaign's levels in order, each level
/// naming its campaign and position.
pub fn release_campaigns(format: ReleaseFormat) -> String {
    format!("campaigns.{}", format.extension())
}

/// The tier and part a level file's name `tier-NN-part-KKKKK.parquet` names.
fn part_of(name: &str) -> Option<(u32, u32)> {
    let (tier, part) = name
        .strip_prefix("tier-")?
        .strip_suffix(".parquet")?
        .split_once("-part-")?;
    Some((tier.parse().ok()?, part.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_layout() {
        assert_eq!(tier_part(3, 0), "levels/tier-03-part-00000.parquet");
        assert_eq!(tier_part(10, 1), "levels/tier-10-part-00001.parquet");
        assert_eq!(tier_part(100, 0), "levels/tier-100-part-00000.parquet");
        assert_eq!(release_tier(10, None, ReleaseFormat::Text), "tier-10.txt");
        assert_eq!(release_campaigns(ReleaseFormat::Text), "campaigns.txt");
        assert_eq!(release_campaigns(ReleaseFormat::Jsonl), "campaigns.jsonl");
        assert_eq!(release_tier(3, None, ReleaseFormat::Text), "tier-03.txt");
        assert_eq!(
            release_tier(3, Some(2), ReleaseFormat::Jsonl),
            "tier-03-00002.jsonl"
        );
        assert_eq!(release_solutions(3, Some(2)), "solutions/tier-03-00002.txt");
        assert_eq!(part_of("tier-07-part-00002.parquet"), Some((7, 2)));
        assert_eq!(part_of("tier-123-part-00000.parquet"), Some((123, 0)));
        assert_eq!(part_of("tier-07-part-00002.txt"), None);
        assert_eq!(part_of("other"), None);
        let dir = PackDir::under(Path::new("/nonexistent"), "p");
        assert!(!dir.is_complete());
        let err = dir.require_complete().expect_err("no _SUCCESS");
        assert!(err.to_string().contains("does not exist"), "{err}");
    }

    /// A folder that is not a pack says which of the three it is: missing,
    /// a run not finished, or no pack at all.
    #[test]
    fn a_folder_that_is_no_pack_says_why() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let says = |dir: &PackDir| dir.require_complete().expect_err("no pack").to_string();
        let missing = PackDir::new(tmp.path().join("nowhere"));
        assert!(says(&missing).contains("does not exist"));
        let empty = PackDir::new(tmp.path());
        assert!(says(&empty).contains("is not a pack (no _SUCCESS, no commit log)"));
        std::fs::create_dir(empty.commit()).expect("commit folder");
        assert!(says(&empty).contains("is the job still running?"));
    }
}
