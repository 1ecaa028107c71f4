//! A tier's files: its Parquet parts and its release files (levels,
//! solutions, seeds), written as its levels come.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pregen_games::seeds::{SeedHeader, SeedStratum};

use crate::PackError;
use crate::dir;
use crate::job::Job;
use crate::record::SeedRecord;
use crate::schema::{self};

use super::files::{Delivery, HashingFile};
use super::table::{Stamp, TableFile, levels_columns};
use crate::release_form::Place;

use super::{BATCH_ROWS, RELEASE_ENTRY_BYTES, WriteOptions, Written};

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

/// A tier's seed file (`file`: one of a cut tier's), opened with its
/// header counting its `levels`.
fn open_seeds(
    (root, delivery): (&Path, Option<&Delivery>),
    job: &Job,
    tier: u32,
    file: Option<u64>,
    levels: u64,
) -> Result<HashingFile, PackError> {
    let rel = format!("{}/{}", dir::RELEASE, dir::release_seeds(tier, file));
    let mut seeds = HashingFile::create(root, &rel)?.delivered(delivery, &rel);
    seeds.write_text(&seeds_header(job, tier, levels)?)?;
    Ok(seeds)
}

/// The files of the tier being written: Parquet parts and the release files.
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
    /// The level file being written and its solutions file, when apart.
    pub(super) text: Option<(HashingFile, Option<HashingFile>)>,
    /// The level files of the tier so far (`[release] levels_per_file`).
    pub(super) files: u64,
    /// The seed file being written (a cut tier has one a level file).
    pub(super) seeds: Option<HashingFile>,
    pub(super) levels: u64,
    /// The tier's size.
    pub(super) size: u64,
    /// The release's levels before the tier's first.
    pub(super) before: u64,
    pub(super) parts: Vec<(String, String)>,
    /// The release files closed so far, in order.
    pub(super) release: Vec<(String, String)>,
    pub(super) stratum_of: Job,
    /// The text being written to a release file, kept from level to level.
    pub(super) line: String,
}

impl TierFiles {
    pub(super) fn open(
        root: &Path,
        job: &Job,
        stamp: &Stamp,
        (tier, size, before): (u32, u64, u64),
        options: WriteOptions,
    ) -> Result<Self, PackError> {
        // Cut tiers have a seed file beside each level file (`next_file`).
        let seeds = match job.release.levels_per_file {
            0 => Some(open_seeds(
                (root, options.delivery.as_ref()),
                job,
                tier,
                None,
                size,
            )?),
            _ => None,
        };
        Ok(TierFiles {
            tier,
            root: root.to_path_buf(),
            job_game: job.game_name().to_string(),
            stamp: stamp.clone(),
            options,
            part: None,
            next_part: 0,
            batch: Vec::with_capacity(BATCH_ROWS),
            text: None,
            files: 0,
            seeds,
            levels: 0,
            size,
            before,
            parts: Vec::new(),
            release: Vec::new(),
            stratum_of: job.clone(),
            line: String::with_capacity(RELEASE_ENTRY_BYTES),
        })
    }

    /// The number of the level file being written, `None` when the tier is
    /// one file.
    fn file_number(&self) -> Option<u64> {
        (self.stratum_of.release.levels_per_file > 0).then(|| self.files.saturating_sub(1))
    }

    /// Opens the tier's next level file (and its solutions file), with its
    /// header in text: the previous one is full, or none is open.
    fn next_file(&mut self) -> Result<(), PackError> {
        self.close_file()?;
        let job = &self.stratum_of;
        let per_file = job.release.levels_per_file;
        self.files += 1;
        let file = self.file_number();
        let (tier, size) = (self.tier, self.size);
        let path = |name: String| format!("{}/{name}", dir::RELEASE);
        let rel = path(dir::release_tier(tier, file, job.release.format));
        let delivery = self.options.delivery.clone();
        let mut text = HashingFile::create(&self.root, &rel)?.delivered(delivery.as_ref(), &rel);
        let about = match file {
            None => format!(" tier {tier:02}: {size} levels, easiest first"),
            Some(k) => format!(
                " tier {tier:02} file {k}: {} of its {size} levels, easiest first",
                per_file.min(size - k * per_file),
            ),
        };
        if let Some(header) = job.release.format.file_header(job, &about) {
            text.write_text(&header)?;
        }
        let solutions = job
            .release
            .solutions_apart()
            .then(|| {
                let rel = path(dir::release_solutions(tier, file));
                HashingFile::create(&self.root, &rel).map(|f| f.delivered(delivery.as_ref(), &rel))
            })
            .transpose()?;
        self.text = Some((text, solutions));
        if let Some(k) = file {
            let levels = per_file.min(size - k * per_file);
            let at = (self.root.as_path(), self.options.delivery.as_ref());
            self.seeds = Some(open_seeds(at, job, tier, file, levels)?);
        }
        Ok(())
    }

    /// Closes the level file being written (and its solutions file).
    fn close_file(&mut self) -> Result<(), PackError> {
        let file = self.file_number();
        if let Some((text, solutions)) = self.text.take() {
            let format = self.stratum_of.release.format;
            self.release
                .push((dir::release_tier(self.tier, file, format), text.close()?));
            if let Some(solutions) = solutions {
                self.release
                    .push((dir::release_solutions(self.tier, file), solutions.close()?));
            }
        }
        if file.is_some()
            && let Some(seeds) = self.seeds.take()
        {
            self.release
                .push((dir::release_seeds(self.tier, file), seeds.close()?));
        }
        Ok(())
    }

    pub(super) fn add(&mut self, record: SeedRecord) -> Result<(), PackError> {
        self.levels += 1;
        if let Some(level) = record.accepted() {
            let per_file = self.stratum_of.release.levels_per_file;
            let place = match per_file {
                0 => self.levels,
                n => (self.levels - 1) % n + 1,
            };
            if self.text.is_none() || place == 1 {
                self.next_file()?;
            }
            let line = &mut self.line;
            line.clear();
            let place = Place {
                word: "level",
                campaign: None,
                number: place,
                rank: self.levels,
                overall: self.before + self.levels,
            };
            self.stratum_of.release.format.write_entry(
                line,
                &self.stratum_of,
                (&record, level),
                self.tier,
                place,
            );
            let Some((text, solutions)) = &mut self.text else {
                return Err(PackError::Job("no level file open".into()));
            };
            text.write_text(line)?;
            if let Some(solutions) = solutions {
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
            if let Some(seeds) = &mut self.seeds {
                seeds.write_text(line)?;
            }
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
                    &self.options,
                    &self.stamp,
                )?;
                self.part.insert((n, table))
            }
        };
        table.write(levels_columns(
            (&self.job_game, &self.stamp.flag_keys),
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
        if self.text.is_none() {
            // A tier with no level still has its (empty) level file.
            self.next_file()?;
        }
        self.close_file()?;
        let mut written = Written {
            files: std::mem::take(&mut self.parts),
            release: Vec::new(),
        };
        for (name, sum) in std::mem::take(&mut self.release) {
            written.release_file(name, sum);
        }
        if let Some(seeds) = self.seeds {
            written.close_release(seeds, dir::release_seeds(self.tier, None))?;
        }
        Ok(written)
    }
}
