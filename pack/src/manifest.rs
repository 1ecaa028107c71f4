//! `manifest.json`: the job, the versions, counts by tier and status, the
//! timeouts, and every file's SHA-256. Written and read through [`Manifest`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::record::Status;
use crate::{Job, PackError};

/// The manifest's file name in a pack folder.
pub const FILE: &str = "manifest.json";

/// A pack's manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Counts by tier and status.
    pub counts: Counts,
    /// For a game program: its description (name, version, params'
    /// defaults, text format, rating model, and every metric key with unit
    /// and meaning, and its own reason codes: the data dictionary of the
    /// `metrics` and `reason` columns, as docs/schema.md is for the built-in
    /// games).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<pregen_games::external::Description>,
    /// What the sampled cross-check did, and the workers it refused.
    #[serde(default)]
    pub cross_check: CrossCheck,
    /// Every file written before the manifest (relative path -> SHA-256).
    pub files: BTreeMap<String, String>,
    /// The job as run.
    pub job: Job,
    /// The job's id.
    pub job_id: String,
    /// Whether a watchdog timeout made the pack depend on the machine.
    pub machine_dependent: bool,
    /// Results that disagreed with an earlier result for the same seed.
    pub mismatches: u64,
    /// The pack's name.
    pub pack: String,
    /// The rating model that gave the levels their difficulty.
    #[serde(default)]
    pub rating: RatingFacts,
    /// The seeds tried.
    pub seeds: Seeds,
    /// The strata, each with its merged params.
    pub strata: Vec<StratumEntry>,
    /// Seeds whose verdict was a watchdog timeout.
    pub timeouts: Vec<u64>,
    /// The versions that wrote the pack.
    pub versions: Versions,
}

/// Counts of a pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Accepted levels.
    pub accepted: u64,
    /// Accepted levels per tier, keyed `NN`.
    pub by_tier: BTreeMap<TierKey, u64>,
    /// Seeds per status.
    pub by_status: StatusCounts,
    /// Campaigns drawn.
    pub campaigns: u64,
    /// Tiers of the scheme.
    pub tiers: u32,
}

/// A tier as the manifest's counts key it: its number, written `NN` (two
/// digits at least), in the tiers' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TierKey(pub u32);

impl Serialize for TierKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{:02}", self.0))
    }
}

impl<'de> Deserialize<'de> for TierKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TierKey, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse()
            .map(TierKey)
            .map_err(|_| serde::de::Error::custom(format!("`{text}` is not a tier")))
    }
}

/// Seeds per status, each status written by its word (in the words'
/// order) when any seed has it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusCounts {
    /// Accepted seeds (those past the pack's count too).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub accepted: u64,
    /// Seeds whose game failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub error: u64,
    /// Seeds refused by a rule or budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rejected: u64,
    /// Seeds whose watchdog fired.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timeout: u64,
    /// Seeds proven to have no solution.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unsolvable: u64,
}

impl StatusCounts {
    /// The count of `status`, to add to.
    pub fn of(&mut self, status: Status) -> &mut u64 {
        match status {
            Status::Accepted => &mut self.accepted,
            Status::Error => &mut self.error,
            Status::Rejected => &mut self.rejected,
            Status::Timeout => &mut self.timeout,
            Status::Unsolvable => &mut self.unsolvable,
        }
    }
}

/// What the sampled cross-check did. The counts are of the pack's seeds
/// alone, so an honest run gives the same counts however it was timed (the
/// pack is not written while a sampled seed of it waits); `refused` is a
/// fact of the run (which workers lied to it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrossCheck {
    /// The share of seeds sampled for a second run.
    pub share: f64,
    /// Seeds of the pack whose result a second, independent run confirmed.
    pub confirmed: u64,
    /// Seeds of the pack on which two results disagreed and the
    /// coordinator's own run decided.
    pub disputes: u64,
    /// Workers refused, with why: none of their results is in the pack.
    pub refused: BTreeMap<String, String>,
}

/// The seeds a pack tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seeds {
    /// The job's first seed.
    pub first: u64,
    /// The last seed recorded.
    pub last: Option<u64>,
    /// Seeds the pack holds (its levels and rejects): each stratum's seeds
    /// up to its last level.
    pub tried: u64,
    /// Seeds the job's runs computed, those past each stratum's last level
    /// included (a fact of the runs: lease sizes and workers change it; left
    /// out of a release's manifest).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub computed: u64,
}

/// A stratum in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StratumEntry {
    /// Its name.
    pub name: String,
    /// Its first seed.
    pub first_seed: u64,
    /// Accepted levels wanted from it.
    pub count: u64,
    /// Its merged params.
    pub params: serde_json::Value,
    /// The band of difficulty its levels lie in, if it asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<crate::job::Band>,
    /// Seeds of it the pack holds.
    #[serde(default)]
    pub seeds: u64,
    /// Seeds of it the job's runs computed (a fact of the runs; left out of
    /// a release's manifest).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub computed: u64,
}

/// The rating model that gave the levels their difficulty (docs/ratings.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RatingFacts {
    /// The model's name.
    pub name: String,
    /// Its version.
    pub version: u32,
    /// The SHA-256 of its file.
    pub sha256: String,
}

impl RatingFacts {
    /// The facts of `model`.
    pub fn of(model: &pregen_games::rating::Model) -> RatingFacts {
        RatingFacts {
            name: model.name.clone(),
            version: model.version,
            sha256: model.sha256().to_string(),
        }
    }

    /// `NAME vVERSION SHA256`, as Parquet footers carry it.
    pub fn label(&self) -> String {
        format!("{} v{} {}", self.name, self.version, self.sha256)
    }
}

/// Versions of what wrote a pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versions {
    /// The generator version (games).
    pub generator: String,
    /// pregen's version.
    pub pregen: String,
    /// The wire protocol's version.
    pub protocol: u32,
}

/// The manifest inside a release archive: what the levels depend on, and the
/// checksum of every file the archive holds, by its path there below the
/// pack's folder. The facts of one run stay out (the Parquet files, which
/// hold timings and worker names; the cross-check; mismatches), so that the
/// archive's bytes depend on the levels alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseManifest {
    /// Counts by tier and status.
    pub counts: Counts,
    /// For a game program: its description (name, version, params'
    /// defaults, text format, rating model, and every metric key with unit
    /// and meaning, and its own reason codes: the data dictionary of the
    /// `metrics` and `reason` columns, as docs/schema.md is for the built-in
    /// games).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<pregen_games::external::Description>,
    /// The archive's files (path below the pack's folder -> SHA-256).
    pub files: BTreeMap<String, String>,
    /// The job as run.
    pub job: Job,
    /// The job's id.
    pub job_id: String,
    /// Whether a watchdog timeout made the pack depend on the machine.
    pub machine_dependent: bool,
    /// The parts of `release/` the archive leaves out (`campaigns`,
    /// `seeds`, `solutions`, as `pregen archive --without` names them);
    /// absent when it holds them all. `release verify` accounts for the
    /// rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// The pack's name.
    pub pack: String,
    /// The rating model that gave the levels their difficulty.
    #[serde(default)]
    pub rating: RatingFacts,
    /// The seeds tried.
    pub seeds: Seeds,
    /// The strata, each with its merged params.
    pub strata: Vec<StratumEntry>,
    /// Seeds whose verdict was a watchdog timeout.
    pub timeouts: Vec<u64>,
    /// The versions that wrote the pack.
    pub versions: Versions,
}

impl ReleaseManifest {
    /// The release manifest of a pack's manifest, listing `files`.
    pub fn new(m: Manifest, files: BTreeMap<String, String>) -> ReleaseManifest {
        ReleaseManifest {
            program: m.program,
            rating: m.rating,
            counts: m.counts,
            files,
            job: m.job,
            job_id: m.job_id,
            machine_dependent: m.machine_dependent,
            left_out: Vec::new(),
            pack: m.pack,
            // How much a run computed is a fact of the run, not of the levels.
            seeds: Seeds {
                computed: 0,
                ..m.seeds
            },
            strata: m
                .strata
                .into_iter()
                .map(|s| StratumEntry { computed: 0, ..s })
                .collect(),
            timeouts: m.timeouts,
            versions: m.versions,
        }
    }

    /// Pretty JSON, as archived.
    pub fn to_json(&self) -> Result<String, PackError> {
        serde_json::to_string_pretty(self).map_err(|source| PackError::Json {
            path: FILE.into(),
            source,
        })
    }
}

impl Manifest {
    /// Reads and parses a manifest file.
    pub fn read(path: &Path) -> Result<Manifest, PackError> {
        let text = std::fs::read_to_string(path).map_err(PackError::io("read", path))?;
        serde_json::from_str(&text).map_err(|source| PackError::Json {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The manifest as written: pretty JSON.
    pub fn to_json(&self) -> Result<String, PackError> {
        serde_json::to_string_pretty(self).map_err(|source| PackError::Json {
            path: FILE.into(),
            source,
        })
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
