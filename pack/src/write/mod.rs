//! Writing a complete pack: tiers, campaigns, the Parquet dataset, release
//! files, the manifest with checksums, and `_SUCCESS` last.
//!
//! Everything here is a function of the pack's records and the job, sorted with
//! ties broken by seed, so two runs of one job write the same levels, tiers,
//! campaigns and release files whatever the number of workers.
//!
//! - [`tier`]: a tier's files, its Parquet parts and release files;
//! - [`table`]: a Parquet file of one table, the stamp, each table's columns;
//! - [`files`]: a file hashed as it is written.

use std::collections::BTreeMap;
use std::fs::{self};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pregen_games::sha256_hex;

use crate::PackError;
use crate::dir::{self, PackDir};
use crate::durable::publish;
use crate::job::{Job, TierScheme};
use crate::manifest::{
    Counts, CrossCheck, Manifest, Seeds, StatusCounts, StratumEntry, TierKey, Versions,
};
use crate::record::{SeedRecord, Status};
use crate::release_form::Place;
use crate::schema::{self};
use crate::sort::{Sorter, difficulty_key};
use crate::tiers::{CampaignSlot, Tiers, draw_campaigns, equal_groups};
pub use files::Delivery;
use files::HashingFile;
use table::{Stamp, TableFile, campaigns_columns, rejects_columns};
use tier::TierFiles;

mod files;
mod table;
/// The levels per tier, empty tiers left out: equal groups of `n`, or the
/// thresholds' counts as the pass over the records found them.
fn tier_sizes(
    scheme: &TierScheme,
    n: usize,
    threshold_tiers: BTreeMap<u32, u64>,
) -> BTreeMap<u32, u64> {
    let mut sizes: BTreeMap<u32, u64> = match scheme {
        TierScheme::Equal { count } => equal_groups(n, *count as usize)
            .into_iter()
            .enumerate()
            .filter(|(_, g)| !g.is_empty())
            .map(|(t, g)| (t as u32 + 1, g.len() as u64))
            .collect(),
        TierScheme::Thresholds { .. } => threshold_tiers,
    };
    sizes.retain(|_, n| *n > 0);
    sizes
}

/// The campaigns' draw as the pass uses it: per rank of the `n` levels, its
/// slot (`u32::MAX`: in no campaign), and the slots, their levels to fill.
fn campaign_slots(draw: Vec<(u64, u32, usize)>, n: usize) -> (Vec<u32>, Vec<CampaignSlot>) {
    let mut slot_of = vec![u32::MAX; n];
    for (i, &(_, _, rank)) in draw.iter().enumerate() {
        slot_of[rank] = i as u32;
    }
    let slots = draw
        .iter()
        .map(|&(campaign, position, _)| CampaignSlot {
            campaign,
            position,
            seed: 0,
            tier: 0,
            difficulty: 0.0,
        })
        .collect();
    (slot_of, slots)
}

#[cfg(test)]
mod tests;
mod tier;

/// Facts for the manifest that only the run knows.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// Results that disagreed with an earlier result for the same seed.
    pub mismatches: u64,
    /// The wire protocol's version the run spoke.
    pub protocol: u32,
    /// What the cross-check did.
    pub cross_check: CrossCheck,
    /// Seeds computed per stratum, those past the pack included.
    pub computed: Vec<u64>,
}

/// How a pack is written: the sort's memory and the Parquet layout. The
/// memory limit never changes a byte of the pack; the layout does (so a job's
/// runs use the defaults).
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Bytes of records held in memory before the sort spills to disk.
    pub sort_memory: usize,
    /// Rows per Parquet row group.
    pub rows_per_group: usize,
    /// Rows per tier part file.
    pub rows_per_part: u64,
    /// What takes each file once written (`files::Delivery`); none: the
    /// files stay in the pack's folder.
    pub delivery: Option<Delivery>,
}

/// The default sort memory: 32 MiB.
pub const SORT_MEMORY: usize = 32 << 20;

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            sort_memory: SORT_MEMORY,
            rows_per_group: 128 * 1024,
            rows_per_part: 1 << 20,
            delivery: None,
        }
    }
}

/// Rows encoded at a time (a row group is written in batches this long).
const BATCH_ROWS: usize = 4096;

/// Room for a release entry of a small level (a tilt level's takes about
/// 170 bytes); a larger one grows its string.
const RELEASE_ENTRY_BYTES: usize = 256;

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
    by_status: StatusCounts,
    timeouts: Vec<u64>,
    tried: u64,
    /// Seeds per stratum the pack holds.
    tried_by_stratum: Vec<u64>,
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
            progress: Arc::default(),
            accepted: Sorter::new(options.sort_memory / 2, &spill),
            rejects: Sorter::new(options.sort_memory / 4, &spill),
            options,
            spill,
            by_status: StatusCounts::default(),
            timeouts: Vec::new(),
            tried: 0,
            tried_by_stratum: vec![0; job.strata.len().max(1)],
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
        if let Some(n) = self
            .tried_by_stratum
            .get_mut(self.job.stratum_of(record.seed))
        {
            *n += 1;
        }
        self.last = self.last.max(Some(record.seed));
        *self.by_status.of(record.status) += 1;
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
            TableFile::create(&root, path, &schema::CAMPAIGNS, &self.options, &self.stamp)?;
        for chunk in slots.chunks(BATCH_ROWS) {
            table.write(campaigns_columns(&self.job, chunk))?;
        }
        files.insert(path.to_string(), table.close()?);
        let mut release = release;
        for (name, sum) in files::copy_program(&root, job, self.options.delivery.as_ref())? {
            files.insert(format!("{}/{name}", dir::RELEASE), sum.clone());
            release.push((name, sum));
        }
        let (sums_path, sums) = write_sums(&root, &release)?;
        files.insert(sums_path, sums);
        let _ = fs::remove_dir_all(&self.spill);
        let written = started.elapsed();
        let manifest = Manifest {
            program: job
                .game_kind()
                .ok()
                .and_then(|game| game.description().cloned()),
            pack: job.pack.clone(),
            job_id: job.id(),
            job: job.clone(),
            rating: self.stamp.rating.clone(),
            versions: Versions {
                pregen: env!("CARGO_PKG_VERSION").to_string(),
                generator: pregen_games::GENERATOR_VERSION.to_string(),
                protocol: facts.protocol,
            },
            strata: self.strata_entries(facts),
            seeds: Seeds {
                first: job.first_seed,
                last: self.last,
                tried: self.tried,
                computed: facts.computed.iter().sum(),
            },
            counts: Counts {
                accepted: n,
                tiers: match &job.tiers {
                    TierScheme::Equal { count } => *count,
                    TierScheme::Thresholds { thresholds } => thresholds.len() as u32 + 1,
                },
                by_tier: tier_sizes.iter().map(|(&t, &n)| (TierKey(t), n)).collect(),
                by_status: std::mem::take(&mut self.by_status),
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

    /// The manifest's strata: each with its plan and its seeds, in the pack
    /// and computed.
    fn strata_entries(&self, facts: &RunFacts) -> Vec<StratumEntry> {
        self.job
            .plan()
            .into_iter()
            .enumerate()
            .map(|(i, p)| StratumEntry {
                name: p.name,
                first_seed: p.first_seed,
                count: p.count,
                params: p.params,
                band: p.band,
                seeds: self.tried_by_stratum.get(i).copied().unwrap_or(0),
                computed: facts.computed.get(i).copied().unwrap_or(0),
            })
            .collect()
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
        let tier_sizes = tier_sizes(&job.tiers, n, threshold_tiers);
        // The draw (24 bytes a level) goes into `slot_of` and `slots`.
        let (slot_of, mut slots) = campaign_slots(draw, n);
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
                // The release's levels before this tier's first: this one's
                // rank when it starts the tier.
                let tier_before = current.as_ref().map_or(rank as u64, |t| t.before);
                let slot = slot_of[rank];
                if slot != u32::MAX {
                    let s = &mut slots[slot as usize];
                    s.seed = record.seed;
                    s.tier = tier;
                    s.difficulty = level.difficulty;
                    let key = (u128::from(s.campaign) << 32) | u128::from(s.position);
                    let mut entry = String::with_capacity(RELEASE_ENTRY_BYTES);
                    let place = Place {
                        word: "position",
                        campaign: Some(s.campaign),
                        number: u64::from(s.position),
                        rank: rank as u64 + 1 - tier_before,
                        overall: rank as u64 + 1,
                    };
                    job.release
                        .format
                        .write_entry(&mut entry, job, (&record, level), tier, place);
                    in_campaigns.push(key, entry)?;
                }
                let way = current.get_or_insert_with(|| TierOnItsWay {
                    tier,
                    size: tier_sizes.get(&tier).copied().unwrap_or(0),
                    before: tier_before,
                    held: Held::Records(Vec::new(), 0),
                });
                self.hold(way, record, in_flight.load(Ordering::Acquire), budget)?;
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

    /// Keeps `record` with its tier's others while the tiers on their way
    /// (`in_flight` bytes) and this one fit `budget`; past it, the tier's
    /// files are opened and it streams into them from then on.
    fn hold(
        &self,
        way: &mut TierOnItsWay,
        record: SeedRecord,
        in_flight: usize,
        budget: usize,
    ) -> Result<(), PackError> {
        match &mut way.held {
            Held::Records(records, bytes) => {
                let more = record.memory();
                if in_flight + *bytes + more <= budget {
                    *bytes += more;
                    records.push(record);
                } else {
                    let mut files = self.open_tier(way.tier, way.size, way.before)?;
                    for r in records.drain(..) {
                        files.add(r)?;
                    }
                    files.add(record)?;
                    way.held = Held::Streaming(Box::new(files));
                }
                Ok(())
            }
            Held::Streaming(files) => files.add(record),
        }
    }

    /// A tier's files, opened.
    fn open_tier(&self, tier: u32, size: u64, before: u64) -> Result<TierFiles, PackError> {
        TierFiles::open(
            self.pack.root(),
            &self.job,
            &self.stamp,
            (tier, size, before),
            self.options.clone(),
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
        let TierOnItsWay {
            tier,
            size,
            before,
            held,
        } = way;
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
                    let done = self.open_tier(tier, size, before).and_then(|mut files| {
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
            &self.options,
            &self.stamp,
        )?;
        let mut batch = Vec::with_capacity(BATCH_ROWS);
        for item in rejects.finish()? {
            batch.push(item?.1);
            if batch.len() == BATCH_ROWS {
                table.write(rejects_columns(&self.job, &batch))?;
                batch.clear();
            }
        }
        if !batch.is_empty() || table.rows == 0 {
            table.write(rejects_columns(&self.job, &batch))?;
        }
        table.close()
    }

    /// The campaigns' release file, from their levels sorted by (campaign,
    /// position), on this thread while the others write the tiers.
    fn campaign_files(
        &self,
        levels: Sorter<String>,
        slots: &[CampaignSlot],
        out: &mut Written,
    ) -> Result<(), PackError> {
        if slots.is_empty() {
            return Ok(());
        }
        let job = &self.job;
        let name = dir::release_campaigns(job.release.format);
        let rel = format!("{}/{name}", dir::RELEASE);
        let mut file = HashingFile::create(self.pack.root(), &rel)?
            .delivered(self.options.delivery.as_ref(), &rel);
        let campaigns = slots.iter().map(|s| s.campaign).max().unwrap_or(0);
        let about = format!(": {campaigns} campaigns, each level under its campaign and position");
        if let Some(header) = job.release.format.file_header(job, &about) {
            file.write_text(&header)?;
        }
        for item in levels.finish()? {
            let (_, entry) = item?;
            file.write_text(&entry)?;
        }
        out.release_file(name, file.close()?);
        Ok(())
    }
}

/// Writes `release/SHA256SUMS` of the release files `release` (name, sum),
/// and gives its path in the pack and its own sum.
fn write_sums(
    root: &std::path::Path,
    release: &[(String, String)],
) -> Result<(String, String), PackError> {
    let mut sums = String::new();
    for (name, sum) in release {
        sums.push_str(&format!("{sum}  {name}\n"));
    }
    let sums_path = format!("{}/{}", dir::RELEASE, dir::SHA256SUMS);
    fs::write(root.join(&sums_path), &sums)
        .map_err(PackError::io("write", root.join(&sums_path)))?;
    Ok((sums_path, sha256_hex(sums.as_bytes())))
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
    /// The release's levels before its first (its levels' ranks in the
    /// whole release follow on).
    before: u64,
    held: Held,
}

enum Held {
    /// The levels so far and the memory they take.
    Records(Vec<SeedRecord>, usize),
    Streaming(Box<TierFiles>),
}
