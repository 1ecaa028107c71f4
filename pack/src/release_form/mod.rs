//! The release's level files, one form a file: how a level's entry is
//! written (the pack's writer) and read back (`release verify`), side by
//! side, so that the two cannot drift. The job's [`ReleaseFormat`] names
//! the form; every use matches it exhaustively, so a new form is one file
//! here and one variant there.

use crate::dir;
use crate::job::{Job, ReleaseFormat, Solutions};
use crate::record::{LevelRecord, SeedRecord};

mod jsonl;
mod text;

/// Where a level stands: in its release file (`level 3` of a tier's file,
/// `position 2` of a campaign), in its tier, and in the whole release
/// (from 1, easiest first).
pub(crate) struct Place {
    pub(crate) word: &'static str,
    /// The campaign, for a level of the campaigns' file.
    pub(crate) campaign: Option<u64>,
    pub(crate) number: u64,
    pub(crate) rank: u64,
    pub(crate) overall: u64,
}

/// A level to write in a release file.
struct Written<'a> {
    id: String,
    seed: u64,
    tier: u32,
    place: Place,
    level: &'a LevelRecord,
    solutions: Solutions,
}

/// A level as a release file gives it.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Where: the file and the level's id.
    pub(crate) at: String,
    /// The level's id as the file gives it.
    pub(crate) id: String,
    pub(crate) seed: u64,
    /// The tier and difficulty the file claims (campaign files too).
    pub(crate) tier: Option<u32>,
    pub(crate) difficulty: Option<f64>,
    pub(crate) layout: String,
    pub(crate) level_json: Option<String>,
    pub(crate) level_hash: Option<String>,
    pub(crate) solution: Option<String>,
    pub(crate) moves: u32,
    pub(crate) moves_optimal: bool,
    /// Its rank in its tier and in the whole release, as the file claims
    /// (releases written before ranks hold none).
    pub(crate) rank: Option<u64>,
    pub(crate) overall: Option<u64>,
    /// The campaign of a level of the campaigns' file.
    pub(crate) campaign: Option<u64>,
}

/// Why a release file's levels cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FormError {
    /// A JSON Lines line that is not a level's object.
    #[error("line {line}: {source}")]
    Json {
        /// The line, from 1.
        line: usize,
        /// What the JSON reader found.
        source: serde_json::Error,
    },
    /// A `; campaign` line without a campaign's number.
    #[error("`{0}` names no campaign")]
    NoCampaign(String),
    /// A level's text with no `; id` line above it.
    #[error("a level with no `; id` line: `{0}`")]
    NoId(String),
    /// An `; id` line without one of its fields, or with one that is not a
    /// number.
    #[error("`; id {header}` has no {field}")]
    NoField {
        /// The line, after `; id `.
        header: String,
        /// The field.
        field: &'static str,
    },
}

impl ReleaseFormat {
    /// The form of a release file, by its extension.
    pub(crate) fn of_file(name: &str) -> Option<ReleaseFormat> {
        [ReleaseFormat::Text, ReleaseFormat::Jsonl]
            .into_iter()
            .find(|form| name.ends_with(&format!(".{}", form.extension())))
    }

    /// Appends one level's entry to `out`, in this form.
    pub(crate) fn write_entry(
        self,
        out: &mut String,
        job: &Job,
        (record, level): (&SeedRecord, &LevelRecord),
        tier: u32,
        place: Place,
    ) {
        let entry = Written {
            id: dir::level_id(job.game_name(), record.seed),
            seed: record.seed,
            tier,
            place,
            level,
            solutions: job.release.solutions,
        };
        match self {
            ReleaseFormat::Text => text::write(out, &entry),
            ReleaseFormat::Jsonl => jsonl::write(out, &entry),
        }
    }

    /// The levels of the release file `name` (named so in each entry's
    /// `at`), in this form.
    pub(crate) fn read_entries(self, name: &str, text: &str) -> Result<Vec<Entry>, FormError> {
        match self {
            ReleaseFormat::Text => text::read(name, text),
            ReleaseFormat::Jsonl => jsonl::read(name, text),
        }
    }

    /// The lines a file of levels starts with, before its first level
    /// (`about`: what the file holds, after the game's name, as
    /// ` tier 03: 40 levels, easiest first`).
    pub(crate) fn file_header(self, job: &Job, about: &str) -> Option<String> {
        match self {
            ReleaseFormat::Text => Some(text::header(job, about)),
            ReleaseFormat::Jsonl => None,
        }
    }
}
