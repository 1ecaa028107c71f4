//! A tier's files: its Parquet parts and its release files (levels,
//! solutions, seeds), written as its levels come.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pregen_games::seeds::{SeedHeader, SeedStratum};

use crate::PackError;
use crate::dir;
use crate::job::{Job, Solutions};
use crate::record::{LevelRecord, SeedRecord};
use crate::schema::{self};

use super::files::HashingFile;
use super::table::{Stamp, TableFile, levels_columns};
use super::{BATCH_ROWS, RELEASE_ENTRY_BYTES, WriteOptions, Written};

/// Appends one level's entry in a release file to `out`: a comment header
/// (with the solution when the job ships them inline) and its layout.
pub(super) fn write_release_entry(
    out: &mut String,
    job: &Job,
    record: &SeedRecord,
    level: &LevelRecord,
    tier: u32,
    title: std::fmt::Arguments<'_>,
) {
    let id = dir::LevelId {
        game: job.game_name(),
        seed: record.seed,
    };
    let best = if level.moves_optimal {
        ""
    } else {
        " (best found)"
    };
    // Writing to a string cannot fail.
    let _ = writeln!(
        out,
        "; {title}\n; id {id} seed {} tier {tier} difficulty {} moves {}{best}",
        record.seed, level.difficulty, level.moves,
    );
    if let Solutions::Inline = job.release.solutions {
        let _ = writeln!(out, "; solution {}", level.solution);
    }
    out.push_str(level.layout.trim_end());
    out.push_str("\n\n");
}

/// The first line of a tier's seed file: what a client that links the games
/// crate needs to regenerate every level of it from its seed.
pub(super) fn seeds_header(job: &Job, tier: u32, size: u64) -> Result<String, PackError> {
    let header = SeedHeader {
        pack: job.pack.clone(),
        game: job.game_name().to_string(),
        generator: match &job.external {
            Some(e) if job.is_external() => format!("{} {}", e.name, e.version),
            _ => pregen_games::GENERATOR_VERSION.to_string(),
        },
        program: job
            .external
            .as_ref()
            .filter(|_| job.is_external())
            .map(|e| e.identity.clone()),
        tier,
        levels: size,
        max_nodes: job.budget.max_nodes,
        strata: job
            .plan()
            .into_iter()
            .map(|p| SeedStratum {
                first_seed: p.first_seed,
                params: p.params,
            })
            .collect(),
    };
    serde_json::to_string(&header)
        .map(|line| line + "\n")
        .map_err(|source| PackError::Json {
            path: dir::RELEASE.into(),
            source,
        })
}

/// The files of the tier being written: Parquet parts and the release file.
pub(super) struct TierFiles {
    pub(super) tier: u32,
    pub(super) root: PathBuf,
    pub(super) job_game: String,
    pub(super) stamp: Stamp,
    pub(super) options: WriteOptions,
    /// The part being written, with its number.
    pub(super) part: Option<(u32, TableFile)>,
    pub(super) next_part: u32,
    pub(super) batch: Vec<SeedRecord>,
    pub(super) text: HashingFile,
    pub(super) solutions: Option<HashingFile>,
    pub(super) seeds: HashingFile,
    pub(super) levels: u64,
    pub(super) parts: Vec<(String, String)>,
    pub(super) stratum_of: Job,
    /// The text being written to a release file, kept from level to level.
    pub(super) line: String,
}

impl TierFiles {
    pub(super) fn open(
        root: &Path,
        job: &Job,
        stamp: &Stamp,
        tier: u32,
        size: u64,
        options: WriteOptions,
    ) -> Result<Self, PackError> {
        let mut text = HashingFile::create(
            root,
            &format!("{}/{}", dir::RELEASE, dir::release_tier(tier)),
        )?;
        text.write_text(&format!(
            "; pack {} game {} tier {tier:02}: {size} levels, easiest first\n\n",
            job.pack,
            job.game_name()
        ))?;
        let solutions = match job.release.solutions {
            Solutions::Apart => Some(HashingFile::create(
                root,
                &format!("{}/{}", dir::RELEASE, dir::release_solutions(tier)),
            )?),
            Solutions::Inline | Solutions::None => None,
        };
        let mut seeds = HashingFile::create(
            root,
            &format!("{}/{}", dir::RELEASE, dir::release_seeds(tier)),
        )?;
        seeds.write_text(&seeds_header(job, tier, size)?)?;
        Ok(TierFiles {
            tier,
            root: root.to_path_buf(),
            job_game: job.game_name().to_string(),
            stamp: stamp.clone(),
            options,
            part: None,
            next_part: 0,
            batch: Vec::with_capacity(BATCH_ROWS),
            text,
            solutions,
            seeds,
            levels: 0,
            parts: Vec::new(),
            stratum_of: job.clone(),
            line: String::with_capacity(RELEASE_ENTRY_BYTES),
        })
    }

    pub(super) fn add(&mut self, record: SeedRecord) -> Result<(), PackError> {
        self.levels += 1;
        if let Some(level) = record.accepted() {
            let line = &mut self.line;
            line.clear();
            let title = format_args!("level {}", self.levels);
            write_release_entry(line, &self.stratum_of, &record, level, self.tier, title);
            self.text.write_text(line)?;
            if let Some(solutions) = &mut self.solutions {
                line.clear();
                let id = dir::LevelId {
                    game: &self.job_game,
                    seed: record.seed,
                };
                let _ = writeln!(line, "{id} {}", level.solution);
                solutions.write_text(line)?;
            }
            line.clear();
            let _ = writeln!(line, "{} {}", record.seed, level.level_hash);
            self.seeds.write_text(line)?;
        }
        self.batch.push(record);
        let rows = self.part.as_ref().map_or(0, |(_, t)| t.rows) + self.batch.len() as u64;
        if self.batch.len() == BATCH_ROWS || rows == self.options.rows_per_part {
            self.flush()?;
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> Result<(), PackError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let (_, table) = match &mut self.part {
            Some(p) => p,
            None => {
                let n = self.next_part;
                self.next_part += 1;
                let path = dir::tier_part(self.tier, n);
                let table = TableFile::create(
                    &self.root,
                    &path,
                    &schema::LEVELS,
                    self.options,
                    &self.stamp,
                )?;
                self.part.insert((n, table))
            }
        };
        table.write(levels_columns(
            &self.job_game,
            &self.stratum_of,
            self.tier,
            &self.batch,
        )?)?;
        self.batch.clear();
        if table.rows >= self.options.rows_per_part {
            self.close_part()?;
        }
        Ok(())
    }

    pub(super) fn close_part(&mut self) -> Result<(), PackError> {
        if let Some((n, table)) = self.part.take() {
            self.parts
                .push((dir::tier_part(self.tier, n), table.close()?));
        }
        Ok(())
    }

    pub(super) fn close(mut self) -> Result<Written, PackError> {
        self.flush()?;
        self.close_part()?;
        let mut written = Written {
            files: std::mem::take(&mut self.parts),
            release: Vec::new(),
        };
        written.close_release(self.text, dir::release_tier(self.tier))?;
        if let Some(solutions) = self.solutions {
            written.close_release(solutions, dir::release_solutions(self.tier))?;
        }
        written.close_release(self.seeds, dir::release_seeds(self.tier))?;
        Ok(written)
    }
}
