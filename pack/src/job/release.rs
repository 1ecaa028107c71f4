//! The job's `[release]` table: what the release files hold and their form.

use serde::{Deserialize, Serialize};

/// What the release files hold (the job's `[release]` table).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReleaseScheme {
    /// Where solutions go: `apart` (default) in `release/solutions/`, `inline`
    /// in the level files, `none` nowhere.
    pub solutions: Solutions,
    /// The level files' form: `text` (default; a `;` header above each
    /// level's text form) or `jsonl` (JSON Lines, one level an object).
    #[serde(skip_serializing_if = "ReleaseFormat::is_text")]
    pub format: ReleaseFormat,
    /// Levels per level file, each tier cut into files of this many (0, the
    /// default: one file a tier).
    #[serde(skip_serializing_if = "is_zero")]
    pub levels_per_file: u64,
    /// For a game program's job: the release carries the program's files
    /// (and its checker's) in `release/program/`, so that `release verify`
    /// of the release, or of its archive, runs them from there and needs
    /// nothing beside it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub program: bool,
}

/// The folder of the release that holds the game program's files.
pub const PROGRAM_FOLDER: &str = "program";

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The most levels a level file may be asked to hold.
pub const MOST_LEVELS_PER_FILE: u64 = 100_000_000;

impl ReleaseScheme {
    pub(super) fn is_default(&self) -> bool {
        *self == ReleaseScheme::default()
    }

    /// Whether the level files hold the solutions (`inline`, or JSON Lines
    /// unless `none`): then they cannot be left out of an archive.
    pub fn solutions_in_levels(&self) -> bool {
        matches!(
            (self.format, self.solutions),
            (_, Solutions::Inline) | (ReleaseFormat::Jsonl, Solutions::Apart)
        )
    }

    /// Whether the solutions have files of their own.
    pub fn solutions_apart(&self) -> bool {
        self.format == ReleaseFormat::Text && self.solutions == Solutions::Apart
    }
}

/// The form of a release's level files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReleaseFormat {
    /// `.txt`: each level's text form under `;` header lines.
    #[default]
    Text,
    /// `.jsonl`: one JSON object a line: id, seed, tier, position,
    /// difficulty, moves, moves_optimal, level_json, level_hash, text and
    /// (unless `solutions = "none"`) solution.
    Jsonl,
}

impl ReleaseFormat {
    fn is_text(&self) -> bool {
        *self == ReleaseFormat::Text
    }

    /// The level files' extension.
    pub fn extension(self) -> &'static str {
        match self {
            ReleaseFormat::Text => "txt",
            ReleaseFormat::Jsonl => "jsonl",
        }
    }
}

/// Where a release's solutions go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Solutions {
    /// In their own files, `release/solutions/tier-NN.txt`: level id and
    /// solution per line, in the tier file's order.
    #[default]
    Apart,
    /// In the level files, a `; solution` line above each level.
    Inline,
    /// Not shipped.
    None,
}
