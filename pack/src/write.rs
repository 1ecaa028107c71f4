//! Writing a complete pack: tiers, campaigns, the Parquet dataset, release
//! files, the manifest with checksums, and `_SUCCESS` last.
//!
//! Everything here is a function of the pack's records and the job, sorted with
//! ties broken by seed, so two runs of one job write the same levels, tiers,
//! campaigns and release files whatever the number of workers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use pregen_games::seeds::{SeedHeader, SeedStratum};
use pregen_games::sha256_hex;
use sha2::{Digest, Sha256};

use crate::PackError;
use crate::dir::{self, PackDir};
use crate::durable::publish;
use crate::job::{Job, Solutions, TierScheme};
use crate::manifest::{Counts, CrossCheck, Manifest, RatingFacts, Seeds, StratumEntry, Versions};
use crate::record::{LevelRecord, Reason, SeedRecord, Status};
use crate::schema::{self, Table};
use crate::sort::{Sorter, difficulty_key};
use crate::tiers::{CampaignSlot, Tiers, draw_campaigns, equal_groups};

/// Facts for the manifest that only the run knows.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// Results that disagreed with an earlier result for the same seed.
    pub mismatches: u64,
    /// The wire protocol's version the run spoke.
    pub protocol: u32,
    /// What the cross-check did.
    pub cross_check: CrossCheck,
}

/// How a pack is written: the sort's memory and the Parquet layout. The
/// memory limit never changes a byte of the pack; the layout does (so a job's
/// runs use the defaults).
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions {
    /// Bytes of records held in memory before the sort spills to disk.
    pub sort_memory: usize,
    /// Rows per Parquet row group.
    pub rows_per_group: usize,
    /// Rows per tier part file.
    pub rows_per_part: u64,
}

/// The default sort memory: 32 MiB.
pub const SORT_MEMORY: usize = 32 << 20;

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            sort_memory: SORT_MEMORY,
            rows_per_group: 128 * 1024,
            rows_per_part: 1 << 20,
        }
    }
}

/// Rows encoded at a time (a row group is written in batches this long).
const BATCH_ROWS: usize = 4096;

/// Room for a release entry of a small level (a tilt level's takes about
/// 170 bytes); a larger one grows its string.
const RELEASE_ENTRY_BYTES: usize = 256;

/// Writes a pack whose records are all in `records` (in any order).
pub fn write_pack(
    pack: &PackDir,
    job: &Job,
    records: &[SeedRecord],
    facts: &RunFacts,
) -> Result<Manifest, PackError> {
    let mut writer = PackWriter::new(pack, job, WriteOptions::default())?;
    for r in records {
        writer.add(r.clone())?;
    }
    writer.finish(facts)
}

/// How far a pack's writing has come, read from other threads (a progress
/// display): the seeds' records given to the writer, then the levels passed
/// in difficulty order to their tier's files.
#[derive(Debug, Default)]
pub struct WriteProgress {
    records: AtomicU64,
    levels: AtomicU64,
}

impl WriteProgress {
    /// Records given to the writer so far (accepted or not).
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    /// Levels passed to their tier's files so far.
    pub fn levels(&self) -> u64 {
        self.levels.load(Ordering::Relaxed)
    }
}

/// Writes a pack from its records, given one at a time in any order, with
/// bounded memory: accepted levels and rejects go through external sorts;
/// Parquet row groups, release files and checksums are streamed; nothing is
/// held whole.
#[derive(Debug)]
pub struct PackWriter {
    pack: PackDir,
    job: Job,
    options: WriteOptions,
    progress: Arc<WriteProgress>,
    spill: PathBuf,
    accepted: Sorter,
    rejects: Sorter,
    by_status: BTreeMap<&'static str, u64>,
    timeouts: Vec<u64>,
    tried: u64,
    last: Option<u64>,
    /// Levels per tier, for threshold tiers (equal tiers follow from the count).
    threshold_tiers: BTreeMap<u32, u64>,
    stamp: Stamp,
}

impl PackWriter {
    /// A writer for `job`'s pack in `pack` (which holds `commit/`): earlier
    /// outputs are removed.
    pub fn new(pack: &PackDir, job: &Job, options: WriteOptions) -> Result<Self, PackError> {
        let root = pack.root();
        for stale in dir::OUTPUTS {
            let p = root.join(stale);
            let _ = if p.is_dir() {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
        }
        let spill = root.join(dir::SPILL);
        let _ = fs::remove_dir_all(&spill);
        Ok(PackWriter {
            pack: pack.clone(),
            job: job.clone(),
            options,
            progress: Arc::default(),
            accepted: Sorter::new(options.sort_memory / 2, &spill),
            rejects: Sorter::new(options.sort_memory / 4, &spill),
            spill,
            by_status: BTreeMap::new(),
            timeouts: Vec::new(),
            tried: 0,
            last: None,
            threshold_tiers: BTreeMap::new(),
            stamp: Stamp::of(job)?,
        })
    }

    /// Counts its progress in `progress` (shared with whoever displays it).
    pub fn with_progress(mut self, progress: Arc<WriteProgress>) -> Self {
        self.progress = progress;
        self
    }

    /// Room for the records to come, `levels` accepted and `rejects` not,
    /// as far as the sorts' memory allows (a hint: more or fewer may come).
    pub fn expect(&mut self, levels: u64, rejects: u64) {
        self.accepted.reserve(levels);
        self.rejects.reserve(rejects);
    }

    /// Adds one seed's record (each seed once).
    pub fn add(&mut self, record: SeedRecord) -> Result<(), PackError> {
        self.progress.records.fetch_add(1, Ordering::Relaxed);
        self.tried += 1;
        self.last = self.last.max(Some(record.seed));
        *self.by_status.entry(record.status.as_str()).or_default() += 1;
        if record.status == Status::Timeout {
            self.timeouts.push(record.seed);
        }
        match record.accepted() {
            Some(level) => {
                if let TierScheme::Thresholds { .. } = &self.job.tiers {
                    let tier = Tiers::new(0, &self.job.tiers).tier(0, level.difficulty);
                    *self.threshold_tiers.entry(tier).or_default() += 1;
                }
                let key = difficulty_key(level.difficulty, record.seed);
                self.accepted.push(key, record)
            }
            None => self.rejects.push(u128::from(record.seed), record),
        }
    }

    /// Writes every file, syncs them, then the manifest and `_SUCCESS`. The
    /// rejects table is written beside the levels, the tiers beside each
    /// other and beside the campaign files, on the rayon pool.
    pub fn finish(mut self, facts: &RunFacts) -> Result<Manifest, PackError> {
        let started = std::time::Instant::now();
        let root = self.pack.root().to_path_buf();
        let accepted = std::mem::replace(&mut self.accepted, Sorter::new(0, &self.spill));
        let rejects = std::mem::replace(&mut self.rejects, Sorter::new(0, &self.spill));
        let threshold_tiers = std::mem::take(&mut self.threshold_tiers);
        let job = &self.job;
        let n = accepted.len();
        let (levels, rejects) = rayon::join(
            || self.write_levels(accepted, threshold_tiers),
            || self.write_rejects(rejects),
        );
        let LevelsPass {
            tier_sizes,
            mut files,
            release,
            slots,
        } = levels?;
        files.insert(dir::REJECTS_FILE.to_string(), rejects?);
        let path = dir::CAMPAIGNS_FILE;
        let mut table =
            TableFile::create(&root, path, &schema::CAMPAIGNS, self.options, &self.stamp)?;
        for chunk in slots.chunks(BATCH_ROWS) {
            table.write(campaigns_columns(chunk))?;
        }
        files.insert(path.to_string(), table.close()?);
        let mut sums = String::new();
        for (name, sum) in &release {
            sums.push_str(&format!("{sum}  {name}\n"));
        }
        let sums_path = format!("{}/{}", dir::RELEASE, dir::SHA256SUMS);
        fs::write(root.join(&sums_path), &sums)
            .map_err(PackError::io("write", root.join(&sums_path)))?;
        files.insert(sums_path, sha256_hex(sums.as_bytes()));
        let _ = fs::remove_dir_all(&self.spill);
        let written = started.elapsed();
        let manifest = Manifest {
            pack: job.pack.clone(),
            job_id: job.id(),
            job: job.clone(),
            rating: self.stamp.rating.clone(),
            versions: Versions {
                pregen: env!("CARGO_PKG_VERSION").to_string(),
                generator: pregen_games::GENERATOR_VERSION.to_string(),
                protocol: facts.protocol,
            },
            strata: job
                .plan()
                .into_iter()
                .map(|p| StratumEntry {
                    name: p.name,
                    first_seed: p.first_seed,
                    count: p.count,
                    params: p.params,
                })
                .collect(),
            seeds: Seeds {
                first: job.first_seed,
                last: self.last,
                tried: self.tried,
            },
            counts: Counts {
                accepted: n,
                tiers: match &job.tiers {
                    TierScheme::Equal { count } => *count,
                    TierScheme::Thresholds { thresholds } => thresholds.len() as u32 + 1,
                },
                by_tier: tier_sizes
                    .iter()
                    .map(|(t, n)| (format!("{t:02}"), *n))
                    .collect(),
                by_status: self
                    .by_status
                    .iter()
                    .map(|(s, n)| (s.to_string(), *n))
                    .collect(),
                campaigns: job.campaign_count(),
            },
            machine_dependent: !self.timeouts.is_empty(),
            timeouts: {
                self.timeouts.sort_unstable();
                std::mem::take(&mut self.timeouts)
            },
            mismatches: facts.mismatches,
            cross_check: facts.cross_check.clone(),
            files,
        };
        publish(
            &root,
            manifest.files.keys(),
            (dir::MANIFEST, manifest.to_json()?.as_bytes()),
            dir::SUCCESS,
        )?;
        tracing::debug!(
            files = manifest.files.len(),
            ?written,
            published = ?started.elapsed(),
            "pack written"
        );
        Ok(manifest)
    }

    /// The levels' files from the accepted levels in order: each tier's
    /// Parquet parts and release files, then the campaigns' release files.
    ///
    /// One pass over the levels hands each tier whole to the rayon pool, so
    /// tiers are written side by side, while the tiers handed on and not yet
    /// written hold less than half the sort memory; a tier that would pass
    /// that is written here as it comes. The campaigns' levels are set aside
    /// in the pass and their files written after it, beside the tiers still
    /// being written. No byte depends on which tiers went to the pool.
    fn write_levels(
        &self,
        accepted: Sorter,
        threshold_tiers: BTreeMap<u32, u64>,
    ) -> Result<LevelsPass, PackError> {
        let job = &self.job;
        let n = accepted.len() as usize;
        let draw = draw_campaigns(
            n,
            job.campaigns.length,
            job.campaign_count(),
            job.first_seed,
        );
        let tiers = Tiers::new(n, &job.tiers);
        let mut tier_sizes: BTreeMap<u32, u64> = match &job.tiers {
            TierScheme::Equal { count } => equal_groups(n, *count as usize)
                .into_iter()
                .enumerate()
                .filter(|(_, g)| !g.is_empty())
                .map(|(t, g)| (t as u32 + 1, g.len() as u64))
                .collect(),
            TierScheme::Thresholds { .. } => threshold_tiers,
        };
        tier_sizes.retain(|_, n| *n > 0);
        let mut slot_of = vec![u32::MAX; n];
        for (i, &(_, _, rank)) in draw.iter().enumerate() {
            slot_of[rank] = i as u32;
        }
        let mut slots: Vec<CampaignSlot> = draw
            .iter()
            .map(|&(campaign, position, _)| CampaignSlot {
                campaign,
                position,
                seed: 0,
                tier: 0,
                difficulty: 0.0,
            })
            .collect();
        // The draw (24 bytes a level) is in `slot_of` and `slots` now.
        drop(draw);
        // A campaign's levels wait as the text of their release entries.
        let mut in_campaigns: Sorter<String> =
            Sorter::new(self.options.sort_memory / 2, &self.spill);
        let budget = self.options.sort_memory / 2;
        let in_flight = AtomicUsize::new(0);
        let written = Mutex::new(Vec::new());
        let campaigns = rayon::scope(|scope| {
            let mut current: Option<TierOnItsWay> = None;
            for (rank, item) in accepted.finish()?.enumerate() {
                let (_, record) = item?;
                let Some(level) = record.accepted() else {
                    continue;
                };
                self.progress.levels.fetch_add(1, Ordering::Relaxed);
                let tier = tiers.tier(rank, level.difficulty);
                if current.as_ref().is_some_and(|t| t.tier != tier)
                    && let Some(done) = current.take()
                {
                    self.hand_on(done, scope, &in_flight, &written);
                }
                let slot = slot_of[rank];
                if slot != u32::MAX {
                    let s = &mut slots[slot as usize];
                    s.seed = record.seed;
                    s.tier = tier;
                    s.difficulty = level.difficulty;
                    let key = (u128::from(s.campaign) << 32) | u128::from(s.position);
                    let mut entry = String::with_capacity(RELEASE_ENTRY_BYTES);
                    let title = format_args!("position {}", s.position);
                    write_release_entry(&mut entry, job, &record, level, tier, title);
                    in_campaigns.push(key, entry)?;
                }
                let way = current.get_or_insert_with(|| TierOnItsWay {
                    tier,
                    size: tier_sizes.get(&tier).copied().unwrap_or(0),
                    held: Held::Records(Vec::new(), 0),
                });
                match &mut way.held {
                    Held::Records(records, bytes) => {
                        let more = record.memory();
                        if in_flight.load(Ordering::Acquire) + *bytes + more <= budget {
                            *bytes += more;
                            records.push(record);
                        } else {
                            let mut files = self.open_tier(way.tier, way.size)?;
                            for r in records.drain(..) {
                                files.add(r)?;
                            }
                            files.add(record)?;
                            way.held = Held::Streaming(Box::new(files));
                        }
                    }
                    Held::Streaming(files) => files.add(record)?,
                }
            }
            if let Some(done) = current.take() {
                self.hand_on(done, scope, &in_flight, &written);
            }
            let mut campaigns = Written::default();
            self.campaign_files(in_campaigns, &slots, &mut campaigns)?;
            Ok::<Written, PackError>(campaigns)
        })?;
        let mut tiers_written = written
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tiers_written.sort_by_key(|(tier, _)| *tier);
        let mut files = BTreeMap::new();
        let mut release = Vec::new();
        for done in tiers_written
            .into_iter()
            .map(|(_, done)| done)
            .chain([Ok(campaigns)])
        {
            let done = done?;
            files.extend(done.files);
            release.extend(done.release);
        }
        Ok(LevelsPass {
            tier_sizes,
            files,
            release,
            slots,
        })
    }

    /// A tier's files, opened.
    fn open_tier(&self, tier: u32, size: u64) -> Result<TierFiles, PackError> {
        TierFiles::open(
            self.pack.root(),
            &self.job,
            &self.stamp,
            tier,
            size,
            self.options,
        )
    }

    /// A tier whose last level has passed: one held whole is written on the
    /// pool (its memory counted in `in_flight` until then), one being
    /// streamed is closed here; either way its files land in `written`.
    fn hand_on<'s>(
        &'s self,
        way: TierOnItsWay,
        scope: &rayon::Scope<'s>,
        in_flight: &'s AtomicUsize,
        written: &'s Mutex<Vec<(u32, Result<Written, PackError>)>>,
    ) {
        let TierOnItsWay { tier, size, held } = way;
        let push = move |done| {
            written
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((tier, done));
        };
        match held {
            Held::Streaming(files) => push(files.close()),
            Held::Records(records, bytes) => {
                in_flight.fetch_add(bytes, Ordering::AcqRel);
                scope.spawn(move |_| {
                    let done = self.open_tier(tier, size).and_then(|mut files| {
                        for r in records {
                            files.add(r)?;
                        }
                        files.close()
                    });
                    in_flight.fetch_sub(bytes, Ordering::AcqRel);
                    push(done);
                });
            }
        }
    }

    /// The rejects table, in seed order; its checksum.
    fn write_rejects(&self, rejects: Sorter) -> Result<String, PackError> {
        let mut table = TableFile::create(
            self.pack.root(),
            dir::REJECTS_FILE,
            &schema::REJECTS,
            self.options,
            &self.stamp,
        )?;
        let mut batch = Vec::with_capacity(BATCH_ROWS);
        for item in rejects.finish()? {
            batch.push(item?.1);
            if batch.len() == BATCH_ROWS {
                table.write(rejects_columns(&batch))?;
                batch.clear();
            }
        }
        if !batch.is_empty() || table.rows == 0 {
            table.write(rejects_columns(&batch))?;
        }
        table.close()
    }

    /// The campaigns' release files, from their levels sorted by (campaign,
    /// position), one campaign at a time on this thread: creating files in
    /// one folder from several threads only makes them wait on the folder's
    /// lock (and spin on it), so the other threads write the tiers meanwhile.
    fn campaign_files(
        &self,
        levels: Sorter<String>,
        slots: &[CampaignSlot],
        out: &mut Written,
    ) -> Result<(), PackError> {
        let mut slots = slots.iter();
        let mut campaign: Vec<(&CampaignSlot, String)> = Vec::new();
        let mut write = |campaign: &mut Vec<(&CampaignSlot, String)>| {
            if !campaign.is_empty() {
                let (c, sum) = self.campaign_file(campaign)?;
                out.release_file(dir::release_campaign(c), sum);
                campaign.clear();
            }
            Ok::<(), PackError>(())
        };
        for item in levels.finish()? {
            let (_, entry) = item?;
            let Some(slot) = slots.next() else { break };
            if campaign
                .first()
                .is_some_and(|(s, _)| s.campaign != slot.campaign)
            {
                write(&mut campaign)?;
            }
            campaign.push((slot, entry));
        }
        write(&mut campaign)
    }

    /// One campaign's release file, from its levels' release entries; its
    /// number and checksum.
    fn campaign_file(
        &self,
        levels: &[(&CampaignSlot, String)],
    ) -> Result<(u64, String), PackError> {
        let job = &self.job;
        let campaign = levels.first().map_or(0, |(s, _)| s.campaign);
        let name = dir::release_campaign(campaign);
        let mut file = HashingFile::create(self.pack.root(), &format!("{}/{name}", dir::RELEASE))?;
        file.write_text(&format!(
            "; pack {} game {} campaign {campaign}\n\n",
            job.pack, job.game
        ))?;
        for (_, entry) in levels {
            file.write_text(entry)?;
        }
        Ok((campaign, file.close()?))
    }
}

/// What the pass over the levels gives `finish`: the tiers' sizes, the files
/// written with their checksums, the release files in order (tiers, then
/// campaigns), and the campaigns' slots filled in.
struct LevelsPass {
    tier_sizes: BTreeMap<u32, u64>,
    files: BTreeMap<String, String>,
    release: Vec<(String, String)>,
    slots: Vec<CampaignSlot>,
}

/// Files written, with their checksums: every file by its path in the pack,
/// and the release files by name in the order `SHA256SUMS` lists them.
#[derive(Default)]
struct Written {
    files: Vec<(String, String)>,
    release: Vec<(String, String)>,
}

impl Written {
    /// A release file closed: its checksum noted for the manifest and for `SHA256SUMS`.
    fn close_release(&mut self, file: HashingFile, name: String) -> Result<(), PackError> {
        let sum = file.close()?;
        self.release_file(name, sum);
        Ok(())
    }

    fn release_file(&mut self, name: String, sum: String) {
        self.files
            .push((format!("{}/{name}", dir::RELEASE), sum.clone()));
        self.release.push((name, sum));
    }
}

/// A tier between its first level and its files: its levels held, to be
/// handed whole to the pool, or its files being written as the levels come.
struct TierOnItsWay {
    tier: u32,
    /// Its level count (for the release files' headers).
    size: u64,
    held: Held,
}

enum Held {
    /// The levels so far and the memory they take.
    Records(Vec<SeedRecord>, usize),
    Streaming(Box<TierFiles>),
}

/// Appends one level's entry in a release file to `out`: a comment header
/// (with the solution when the job ships them inline) and its layout.
fn write_release_entry(
    out: &mut String,
    job: &Job,
    record: &SeedRecord,
    level: &LevelRecord,
    tier: u32,
    title: std::fmt::Arguments<'_>,
) {
    let id = dir::LevelId {
        game: &job.game,
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
fn seeds_header(job: &Job, tier: u32, size: u64) -> Result<String, PackError> {
    let header = SeedHeader {
        pack: job.pack.clone(),
        game: job.game.clone(),
        generator: pregen_games::GENERATOR_VERSION.to_string(),
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
struct TierFiles {
    tier: u32,
    root: PathBuf,
    job_game: String,
    stamp: Stamp,
    options: WriteOptions,
    /// The part being written, with its number.
    part: Option<(u32, TableFile)>,
    next_part: u32,
    batch: Vec<SeedRecord>,
    text: HashingFile,
    solutions: Option<HashingFile>,
    seeds: HashingFile,
    levels: u64,
    parts: Vec<(String, String)>,
    stratum_of: Job,
    /// The text being written to a release file, kept from level to level.
    line: String,
}

impl TierFiles {
    fn open(
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
            job.pack, job.game
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
            job_game: job.game.clone(),
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

    fn add(&mut self, record: SeedRecord) -> Result<(), PackError> {
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

    fn flush(&mut self) -> Result<(), PackError> {
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
            &self.batch,
        )?)?;
        self.batch.clear();
        if table.rows >= self.options.rows_per_part {
            self.close_part()?;
        }
        Ok(())
    }

    fn close_part(&mut self) -> Result<(), PackError> {
        if let Some((n, table)) = self.part.take() {
            self.parts
                .push((dir::tier_part(self.tier, n), table.close()?));
        }
        Ok(())
    }

    fn close(mut self) -> Result<Written, PackError> {
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

/// A file written through a buffer with its SHA-256 computed on the way.
struct HashingFile {
    out: BufWriter<File>,
    hasher: Sha256,
    path: PathBuf,
    /// A Parquet file's last bytes, held back until it is closed so that its
    /// footer's float column orders can be made readable (`footer.rs`).
    held: Option<Vec<u8>>,
}

/// The bytes a Parquet file holds back: more than its footer ever takes.
const HELD: usize = 1 << 20;

impl HashingFile {
    /// Creates `rel` under `root` (and its folder).
    fn create(root: &Path, rel: &str) -> Result<Self, PackError> {
        Self::with_buffer(root, rel, 64 << 10)
    }

    /// [`HashingFile::create`] with `buffer` bytes of write buffer: small for
    /// the many small release files (a large one per file is an allocation
    /// and page faults each), large for the Parquet files.
    fn with_buffer(root: &Path, rel: &str, buffer: usize) -> Result<Self, PackError> {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(PackError::io("create", parent))?;
        }
        let file = File::create(&path).map_err(PackError::io("create", &path))?;
        Ok(HashingFile {
            out: BufWriter::with_capacity(buffer, file),
            hasher: Sha256::new(),
            path,
            held: None,
        })
    }

    /// [`HashingFile::create`] for a Parquet file, whose footer is patched
    /// as it is closed.
    fn create_parquet(root: &Path, rel: &str) -> Result<Self, PackError> {
        let mut file = Self::with_buffer(root, rel, 1 << 20)?;
        file.held = Some(Vec::with_capacity(2 * HELD));
        Ok(file)
    }

    fn pass(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.hasher.update(bytes);
        Ok(())
    }

    fn write_text(&mut self, text: &str) -> Result<(), PackError> {
        self.write_all(text.as_bytes())
            .map_err(PackError::io("write", &self.path))
    }

    /// Flushes and gives the file's SHA-256, lower-case hex.
    fn close(mut self) -> Result<String, PackError> {
        if let Some(mut tail) = self.held.take() {
            if let Some(len) = crate::footer::metadata_len(&tail) {
                let end = tail.len() - 8;
                // A footer this module does not know is written as it is.
                let _ = crate::footer::type_defined_float_orders(&mut tail[end - len..end]);
            }
            self.pass(&tail)
                .map_err(PackError::io("write", &self.path))?;
        }
        self.out
            .flush()
            .map_err(PackError::io("write", &self.path))?;
        Ok(hex(&self.hasher.finalize()))
    }
}

impl Write for HashingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(mut tail) = self.held.take() else {
            let n = self.out.write(buf)?;
            self.hasher.update(&buf[..n]);
            return Ok(n);
        };
        tail.extend_from_slice(buf);
        let mut passed = Ok(());
        if tail.len() > 2 * HELD {
            let spill = tail.len() - HELD;
            passed = self.pass(&tail[..spill]);
            tail.drain(..spill);
        }
        self.held = Some(tail);
        passed.map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What every table's rows and every Parquet file's key-value metadata say
/// of where they come from.
#[derive(Debug, Clone)]
struct Stamp {
    pack: String,
    job_id: String,
    generator: String,
    game: String,
    rating: RatingFacts,
    rating_label: String,
}

impl Stamp {
    fn of(job: &Job) -> Result<Stamp, PackError> {
        let rating = RatingFacts::of(&job.rating_model()?);
        Ok(Stamp {
            pack: job.pack.clone(),
            job_id: job.id(),
            generator: pregen_games::GENERATOR_VERSION.to_string(),
            game: job.game.clone(),
            rating_label: rating.label(),
            rating,
        })
    }

    /// The key-value metadata, in [`schema::METADATA_KEYS`]' order.
    fn metadata(&self) -> Vec<KeyValue> {
        let values = [
            &self.pack,
            &self.job_id,
            &self.generator,
            &self.game,
            &self.rating_label,
        ];
        schema::METADATA_KEYS
            .iter()
            .zip(values)
            .map(|(key, value)| KeyValue::new(key.to_string(), value.clone()))
            .collect()
    }

    /// The provenance columns of a batch of `rows` rows.
    fn columns(&self, rows: usize) -> [(&'static str, ArrayRef); 3] {
        let repeat = |v: &str| -> ArrayRef { Arc::new(StringArray::from(vec![v; rows])) };
        [
            ("pack", repeat(&self.pack)),
            ("job_id", repeat(&self.job_id)),
            ("generator", repeat(&self.generator)),
        ]
    }
}

/// A Parquet file of one table, written a batch at a time: zstd, page
/// statistics, the sort columns declared, values that never repeat stored plain,
/// the [`Stamp`] in every row and in the footer.
struct TableFile {
    writer: ArrowWriter<HashingFile>,
    table: &'static Table,
    stamp: Stamp,
    path: String,
    rows: u64,
}

impl TableFile {
    fn create(
        root: &Path,
        path: &str,
        table: &'static Table,
        options: WriteOptions,
        stamp: &Stamp,
    ) -> Result<Self, PackError> {
        let parquet = |source| PackError::Parquet {
            path: path.into(),
            source,
        };
        // Level 1: every column chunk gets a zstd context of its own, whose
        // tables are fresh pages to zero; level 3's are several times larger,
        // for files only 0.5% smaller (a 10,000-level tilt pack).
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).map_err(parquet)?))
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_sorting_columns(Some(table.sorting_columns()))
            .set_max_row_group_row_count(Some(options.rows_per_group.max(1)))
            .set_created_by(format!("pregen {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(stamp.metadata()));
        // Why these go without a dictionary: `Column::never_repeats`.
        for column in table.columns.iter().filter(|c| c.never_repeats) {
            props = props.set_column_dictionary_enabled(ColumnPath::from(column.name), false);
        }
        let file = HashingFile::create_parquet(root, path)?;
        let writer =
            ArrowWriter::try_new(file, table.schema(), Some(props.build())).map_err(parquet)?;
        Ok(TableFile {
            writer,
            table,
            stamp: stamp.clone(),
            path: path.to_string(),
            rows: 0,
        })
    }

    /// Writes a batch of the table's own columns (the stamp's are added).
    fn write(&mut self, mut columns: Vec<(&'static str, ArrayRef)>) -> Result<(), PackError> {
        let rows = columns.first().map_or(0, |(_, a)| a.len());
        columns.extend(self.stamp.columns(rows));
        let arrays = self
            .table
            .arrange(columns)
            .ok_or_else(|| PackError::invalid(&self.path, "the columns do not match the schema"))?;
        let batch = RecordBatch::try_new(self.table.schema(), arrays).map_err(|source| {
            PackError::Arrow {
                path: self.path.clone().into(),
                source,
            }
        })?;
        self.rows += batch.num_rows() as u64;
        self.writer
            .write(&batch)
            .map_err(|source| PackError::Parquet {
                path: self.path.clone().into(),
                source,
            })
    }

    fn close(self) -> Result<String, PackError> {
        let path = self.path;
        let file = self
            .writer
            .into_inner()
            .map_err(|source| PackError::Parquet {
                path: path.into(),
                source,
            })?;
        file.close()
    }
}

fn u64s(it: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(it))
}

fn u32s(it: impl Iterator<Item = u32>) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(it))
}

fn f64s(it: impl Iterator<Item = f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(it))
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

/// The levels table of a batch of one tier's levels (the tier itself is the
/// Hive folder name).
fn levels_columns(
    game: &str,
    job: &Job,
    records: &[SeedRecord],
) -> Result<Vec<(&'static str, ArrayRef)>, PackError> {
    let levels: Vec<(&SeedRecord, &LevelRecord)> = records
        .iter()
        .filter_map(|r| Some((r, r.accepted()?)))
        .collect();
    let mut metrics = schema::metrics_builder();
    for (_, l) in &levels {
        for (k, v) in &l.metrics {
            metrics.keys().append_value(k);
            metrics.values().append_value(*v);
        }
        metrics.append(true).map_err(|source| PackError::Arrow {
            path: dir::LEVELS.into(),
            source,
        })?;
    }
    let ids: Vec<String> = levels
        .iter()
        .map(|(r, _)| dir::level_id(game, r.seed))
        .collect();
    Ok(vec![
        ("game", strings(levels.iter().map(|_| game))),
        ("seed", u64s(levels.iter().map(|(r, _)| r.seed))),
        ("level_id", strings(ids.iter().map(String::as_str))),
        ("difficulty", f64s(levels.iter().map(|(_, l)| l.difficulty))),
        ("moves", u32s(levels.iter().map(|(_, l)| l.moves))),
        (
            "moves_optimal",
            Arc::new(BooleanArray::from(
                levels
                    .iter()
                    .map(|(_, l)| l.moves_optimal)
                    .collect::<Vec<_>>(),
            )),
        ),
        (
            "layout",
            strings(levels.iter().map(|(_, l)| l.layout.as_str())),
        ),
        (
            "level_json",
            strings(levels.iter().map(|(_, l)| l.level_json.as_str())),
        ),
        (
            "solution",
            strings(levels.iter().map(|(_, l)| l.solution.as_str())),
        ),
        (
            "level_hash",
            strings(levels.iter().map(|(_, l)| l.level_hash.as_str())),
        ),
        (
            "generate_ms",
            f64s(levels.iter().map(|(r, _)| r.generate_ms)),
        ),
        ("solve_ms", f64s(levels.iter().map(|(r, _)| r.solve_ms))),
        ("nodes", u64s(levels.iter().map(|(r, _)| r.nodes))),
        (
            "worker",
            strings(levels.iter().map(|(r, _)| r.worker.as_str())),
        ),
        ("attempt", u32s(levels.iter().map(|(r, _)| r.attempt))),
        ("metrics", Arc::new(metrics.finish())),
        (
            "stratum",
            u32s(levels.iter().map(|(r, _)| job.stratum_of(r.seed) as u32)),
        ),
    ])
}

fn campaigns_columns(slots: &[CampaignSlot]) -> Vec<(&'static str, ArrayRef)> {
    vec![
        ("campaign", u64s(slots.iter().map(|s| s.campaign))),
        ("position", u32s(slots.iter().map(|s| s.position))),
        ("seed", u64s(slots.iter().map(|s| s.seed))),
        ("tier", u32s(slots.iter().map(|s| s.tier))),
        ("difficulty", f64s(slots.iter().map(|s| s.difficulty))),
    ]
}

fn rejects_columns(rejects: &[SeedRecord]) -> Vec<(&'static str, ArrayRef)> {
    let reasons: Vec<Reason> = rejects.iter().map(|r| Reason::parse(&r.reason)).collect();
    vec![
        ("seed", u64s(rejects.iter().map(|r| r.seed))),
        ("status", strings(rejects.iter().map(|r| r.status.as_str()))),
        ("reason", strings(reasons.iter().map(|r| r.code))),
        ("reason_detail", strings(reasons.iter().map(|r| r.detail))),
        ("generate_ms", f64s(rejects.iter().map(|r| r.generate_ms))),
        ("solve_ms", f64s(rejects.iter().map(|r| r.solve_ms))),
        ("nodes", u64s(rejects.iter().map(|r| r.nodes))),
        ("worker", strings(rejects.iter().map(|r| r.worker.as_str()))),
        ("attempt", u32s(rejects.iter().map(|r| r.attempt))),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::record::{LevelRecord, Status};

    fn job(count: u64) -> Job {
        Job::parse(&format!(
            "pack = \"w\"\ngame = \"tilt\"\ncount = {count}\n[campaigns]\ncount = 3\nlength = 40\n"
        ))
        .expect("valid job")
    }

    /// Seeds 0..n: every third accepted with a scattered difficulty.
    fn records(n: u64) -> Vec<SeedRecord> {
        (0..n)
            .map(|seed| {
                let accepted = seed % 3 == 0;
                SeedRecord {
                    seed,
                    status: if accepted {
                        Status::Accepted
                    } else {
                        Status::Rejected
                    },
                    reason: if accepted {
                        String::new()
                    } else {
                        "rejected: too easy".into()
                    },
                    level: accepted.then(|| LevelRecord {
                        difficulty: (seed.wrapping_mul(2654435761) % 1000) as f64 / 100.0,
                        moves: (seed % 17) as u32,
                        moves_optimal: true,
                        layout: format!("#{seed}#\n"),
                        level_json: format!("{{\"seed\":{seed}}}"),
                        solution: "LR".into(),
                        metrics: [("states".to_string(), seed as f64)].into_iter().collect(),
                        level_hash: format!("{seed:064x}"),
                        canonical: None,
                    }),
                    generate_ms: seed as f64 / 3.0,
                    solve_ms: 0.25,
                    nodes: seed,
                    worker: "w1".into(),
                    attempt: 1,
                }
            })
            .collect()
    }

    fn write(dir: &Path, records: &[SeedRecord], options: WriteOptions) -> Manifest {
        let pack = PackDir::new(dir);
        let count = records.iter().filter(|r| r.accepted().is_some()).count() as u64;
        let mut writer = PackWriter::new(&pack, &job(count), options).expect("writer");
        // Given in an order unlike the seeds'.
        for r in records.iter().rev() {
            writer.add(r.clone()).expect("add");
        }
        writer.finish(&RunFacts::default()).expect("finish")
    }

    #[test]
    fn the_sort_memory_changes_no_byte_of_the_pack() {
        let records = records(6000);
        let (a, b, c) = (
            tempfile::tempdir().expect("tmp"),
            tempfile::tempdir().expect("tmp"),
            tempfile::tempdir().expect("tmp"),
        );
        let memory = |sort_memory| WriteOptions {
            sort_memory,
            ..WriteOptions::default()
        };
        // Every tier handed whole to the pool; about one at a time (the
        // others written as they come); none (and the sorts spilled).
        let roomy = write(a.path(), &records, WriteOptions::default());
        let middling = write(c.path(), &records, memory(256 << 10));
        let tight = write(b.path(), &records, memory(16 << 10));
        assert_eq!(roomy.files, middling.files);
        assert_eq!(roomy.files, tight.files);
        assert_eq!(roomy.counts.accepted, 2000);
        assert!(
            !b.path().join(dir::SPILL).exists(),
            "the spill folder is removed"
        );
    }

    #[test]
    fn the_progress_counts_every_record_then_every_level() {
        let records = records(600);
        let out = tempfile::tempdir().expect("tmp");
        let pack = PackDir::new(out.path());
        let progress = Arc::new(WriteProgress::default());
        let mut writer = PackWriter::new(&pack, &job(200), WriteOptions::default())
            .expect("writer")
            .with_progress(progress.clone());
        for r in &records[..250] {
            writer.add(r.clone()).expect("add");
        }
        assert_eq!((progress.records(), progress.levels()), (250, 0));
        for r in &records[250..] {
            writer.add(r.clone()).expect("add");
        }
        writer.finish(&RunFacts::default()).expect("finish");
        assert_eq!((progress.records(), progress.levels()), (600, 200));
    }

    #[test]
    fn a_tier_splits_into_parts_of_row_groups_in_order() {
        let records = records(6000);
        let out = tempfile::tempdir().expect("tmp");
        let manifest = write(
            out.path(),
            &records,
            WriteOptions {
                sort_memory: 16 << 10,
                rows_per_group: 50,
                rows_per_part: 120,
            },
        );
        let pack = PackDir::new(out.path());
        let mut per_tier: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        let mut parts = 0;
        for (tier, path) in pack.level_parts().expect("parts") {
            parts += 1;
            let batches = crate::read::read_batches(&path).expect("reads");
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            assert!(rows <= 120, "{} holds {rows} rows", path.display());
            let meta = parquet::file::reader::SerializedFileReader::new(
                std::fs::File::open(&path).expect("open"),
            )
            .expect("parquet");
            use parquet::file::reader::FileReader;
            for g in meta.metadata().row_groups() {
                assert!(g.num_rows() <= 50);
            }
            for b in &batches {
                per_tier
                    .entry(tier)
                    .or_default()
                    .extend(crate::read::f64_column(b, "difficulty", &path).expect("difficulty"));
            }
        }
        let total: usize = per_tier.values().map(Vec::len).sum();
        assert_eq!(total as u64, manifest.counts.accepted);
        assert!(parts > per_tier.len(), "some tier has several parts");
        for difficulties in per_tier.values() {
            assert!(
                difficulties.is_sorted(),
                "each tier's parts run in difficulty order"
            );
        }
    }
}
