//! The job file: what pack to make. Parsed from TOML (every field can also be
//! set by flag), validated before anything starts; errors name the field.

use std::path::Path;

use pregen_games::GameKind;
use pregen_games::rating::Model;
use serde::{Deserialize, Serialize};

use crate::PackError;

mod judge;
mod release;
mod validate;

pub use judge::{NAME_A_JUDGE, ProgramSource, Unpinned, pinned_command};
pub use pregen_games::rating::Band;
pub use release::{MOST_LEVELS_PER_FILE, PROGRAM_FOLDER, ReleaseFormat, ReleaseScheme, Solutions};

/// A job as written in a TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// Pack name: the output folder `out/<pack>/`. Letters, digits, `-`, `_`, `.`.
    pub pack: String,
    /// The game: one of the names of [`GameKind::all`].
    pub game: String,
    /// The game's params (see the game's docs); missing fields take defaults.
    #[serde(default = "empty_table")]
    pub params: toml::Table,
    /// The first seed tried.
    #[serde(default)]
    pub first_seed: u64,
    /// Accepted levels wanted (with `strata`: their sum, which may be left out).
    #[serde(default)]
    pub count: u64,
    /// The band of the rating a level must lie in to count (each stratum's
    /// own, when it gives one, wins): [`Band`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<Band>,
    /// Parameter sets written into one pack, each with its own count and its
    /// own seeds; none means one set: `params` and `count`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strata: Vec<Stratum>,
    /// Seeds per lease at most (leases are sized from the cost per seed).
    #[serde(default = "default_seeds_per_lease")]
    pub seeds_per_lease: u64,
    /// Seeds a stratum may try before the run gives up (none: no limit). A
    /// limit on the run, not part of the job: not in its id, so a run that
    /// gave up resumes with a higher limit.
    #[serde(default, skip_serializing)]
    pub max_seeds: Option<u64>,
    /// The share of seeds (0 to 1) run a second time by another worker to
    /// catch a worker whose results are wrong; 0 turns the cross-check off.
    /// How the run checks, not what it makes: not in the job's id (the
    /// manifest records it under `cross_check`).
    #[serde(default = "default_cross_check", skip_serializing)]
    pub cross_check: f64,
    /// Per-level budget.
    #[serde(default)]
    pub budget: BudgetSpec,
    /// How levels are cut into tiers.
    #[serde(default)]
    pub tiers: TierScheme,
    /// How campaigns are drawn.
    #[serde(default)]
    pub campaigns: CampaignScheme,
    /// What the release files hold. Left out of the job's id when default,
    /// so that jobs written before it existed keep their id.
    #[serde(default, skip_serializing_if = "ReleaseScheme::is_default")]
    pub release: ReleaseScheme,
    /// `[rating]`: the model that rates the levels (default: the game's
    /// built-in one).
    #[serde(default, skip_serializing_if = "RatingSpec::is_default")]
    pub rating: RatingSpec,
    /// `[external]`: the program of a job whose `game` is `"external"`
    /// (docs/external.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalSpec>,
}

/// The `game` of a job whose game is a program.
pub const EXTERNAL: &str = "external";

/// The `[external]` table: a game program and what it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSpec {
    /// The program and its arguments, e.g. `["python3", "rushhour.py"]`.
    pub command: Vec<String>,
    /// The folder it runs in, relative to the job file's (default: the job
    /// file's own). Made absolute when the job is loaded; where the program
    /// lies, not what it is: left out of the job's id.
    #[serde(default)]
    pub dir: String,
    /// The files whose contents are the program's identity (default: the
    /// words of `command` that name files in `dir`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The program's identity, `sha256:` of its files. Given in the job, the
    /// files must hash to it; else computed when the job is loaded.
    #[serde(default)]
    pub identity: String,
    /// The name the program declares (the levels' `game`), read when the
    /// job is loaded.
    #[serde(default)]
    pub name: String,
    /// The version the program declares, read when the job is loaded.
    #[serde(default)]
    pub version: String,
    /// Seeds the coordinator runs twice, in two processes, as the run
    /// starts, to catch a program that answers a seed two ways before
    /// anything of it is written (default [`PROBE_SEEDS`]; 0: none). How a
    /// run is checked, not what the pack is: left out of the job's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<u64>,
    /// An independent checker: a second program (run in `dir`, speaking the
    /// same protocol: `describe`, `prepare` and `check`) that judges every
    /// level in the generator's place, for the coordinator and both
    /// verifies. Empty: the generator's own `check` judges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checker: Vec<String>,
    /// The checker's identity, `sha256:` of its files (as `identity`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub checker_identity: String,
}

/// The seeds of a program's determinism probe by default: a program whose
/// two runs of a seed differ for a share q of seeds is caught with a chance
/// of 1 - (1 - q)^300: 99.9995% at q = 4% (one that answers 2% of its seeds
/// at random), 99.8% at 2%, 95% at 1%.
pub const PROBE_SEEDS: u64 = 300;

/// The most seeds a probe may ask for.
pub const MOST_PROBE_SEEDS: u64 = 100_000;

impl ExternalSpec {
    /// The seeds of the determinism probe.
    pub fn probe_seeds(&self) -> u64 {
        self.probe.unwrap_or(PROBE_SEEDS)
    }

    /// The checker program as the games crate starts it, if the job names one.
    pub fn checker_program(&self) -> Option<pregen_games::external::ProgramSpec> {
        (!self.checker.is_empty()).then(|| pregen_games::external::ProgramSpec {
            command: self.checker.clone(),
            dir: self.dir.clone().into(),
            files: Vec::new(),
        })
    }

    /// The program as the games crate starts it.
    pub fn program(&self) -> pregen_games::external::ProgramSpec {
        pregen_games::external::ProgramSpec {
            command: self.command.clone(),
            dir: self.dir.clone().into(),
            files: self.files.clone(),
        }
    }
}

/// The identity of `program` (the hash of its files), which must be
/// `given` when the job pins one in `external.FIELD`; `what` names the
/// program in errors.
fn pinned_identity(
    program: &pregen_games::external::ProgramSpec,
    given: &str,
    field: &str,
    what: &str,
) -> Result<String, PackError> {
    let identity = pregen_games::external::identity(program)
        .map_err(|e| PackError::Job(format!("field `external.{field}`: {e}")))?;
    if !given.is_empty() && given != identity {
        return bad(
            &format!("external.{field}"),
            format!("the {what}'s files hash to {identity}, not to {given}"),
        );
    }
    Ok(identity)
}

/// One parameter set of a job with strata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stratum {
    /// A name for reports (default: its number).
    #[serde(default)]
    pub name: String,
    /// Params over the job's `[params]`: a field given here wins.
    #[serde(default = "empty_table")]
    pub params: toml::Table,
    /// Accepted levels wanted from this stratum.
    pub count: u64,
    /// The band of the rating its levels must lie in (default: the job's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<Band>,
}

/// The `[rating]` section: a rating model file (docs/ratings.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingSpec {
    /// The model file as the job names it (relative to the job file). Not
    /// kept: the job's identity is the model's text, wherever it was read.
    #[serde(default, skip_serializing)]
    pub model: String,
    /// The file's text, read when the job is loaded: the job's identity
    /// covers the model, not its path.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model_text: String,
}

impl RatingSpec {
    fn is_default(&self) -> bool {
        *self == RatingSpec::default()
    }
}

/// Seeds reserved for each stratum: stratum i tries seeds
/// `first_seed + i * STRATUM_SEEDS` onwards, so strata never share a seed.
pub const STRATUM_SEEDS: u64 = 1 << 40;

/// A stratum as the scheduler and workers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct StratumPlan {
    /// Its name.
    pub name: String,
    /// The merged params.
    pub params: serde_json::Value,
    /// Its first seed.
    pub first_seed: u64,
    /// Accepted levels wanted.
    pub count: u64,
    /// The band its levels must lie in, if any.
    pub band: Option<Band>,
}

fn empty_table() -> toml::Table {
    toml::Table::new()
}

fn default_seeds_per_lease() -> u64 {
    512
}

/// The cross-check share when a job names none: one seed in a hundred.
pub const DEFAULT_CROSS_CHECK: f64 = 0.01;

fn default_cross_check() -> f64 {
    DEFAULT_CROSS_CHECK
}

/// The per-level budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetSpec {
    /// Search nodes per level; a level needing more is rejected (deterministic).
    pub max_nodes: u64,
    /// Watchdog per level in milliseconds; hitting it records `timeout`. A
    /// built-in game counts the CPU time of the thread that runs the seed, a
    /// game program the CPU time of its processes (a busy machine fires
    /// neither); a program that does no work for this long in wall time
    /// (asleep, or its answer unflushed) times out too.
    pub watchdog_ms: u64,
}

impl Default for BudgetSpec {
    fn default() -> Self {
        Self {
            max_nodes: 200_000,
            watchdog_ms: 10_000,
        }
    }
}

/// How accepted levels are cut into tiers by difficulty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "scheme", rename_all = "lowercase")]
pub enum TierScheme {
    /// `count` groups of equal size (sizes differ by at most one).
    Equal {
        /// Number of tiers (1..=99).
        count: u32,
    },
    /// Tier i holds difficulties in `[thresholds[i-2], thresholds[i-1])`.
    Thresholds {
        /// Ascending cut points; n thresholds make n+1 tiers.
        thresholds: Vec<f64>,
    },
}

impl Default for TierScheme {
    fn default() -> Self {
        TierScheme::Equal { count: 10 }
    }
}

/// How campaigns are drawn: K campaigns of `length` levels; position i comes
/// from difficulty group i (of `length` equal groups), without replacement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CampaignScheme {
    /// Levels per campaign.
    pub length: u32,
    /// Campaigns; 0 means as many as the pack allows (count / length).
    pub count: u64,
}

impl Default for CampaignScheme {
    fn default() -> Self {
        Self {
            length: 10,
            count: 0,
        }
    }
}

/// A job refused for one field: `field `NAME`: WHAT`.
/// `counts` scaled to sum to `total` (see [`Job::scale_count`]); `total` is
/// at least `counts.len()` and every count at least 1.
fn scaled(counts: &[u64], total: u64) -> Vec<u64> {
    let sum: u128 = counts.iter().map(|&c| u128::from(c)).sum::<u128>().max(1);
    let quota = |c: u64| u128::from(total) * u128::from(c);
    let mut out: Vec<u64> = counts.iter().map(|&c| (quota(c) / sum) as u64).collect();
    let mut by_remainder: Vec<usize> = (0..counts.len()).collect();
    by_remainder.sort_by_key(|&i| (std::cmp::Reverse(quota(counts[i]) % sum), i));
    let left = total - out.iter().sum::<u64>();
    for &i in by_remainder.iter().take(left as usize) {
        out[i] += 1;
    }
    for i in 0..out.len() {
        if out[i] == 0 {
            let largest = (0..out.len())
                .max_by_key(|&j| (out[j], std::cmp::Reverse(j)))
                .unwrap_or(i);
            out[largest] -= 1;
            out[i] = 1;
        }
    }
    out
}

fn bad<T>(field: &str, msg: String) -> Result<T, PackError> {
    Err(PackError::Job(format!("field `{field}`: {msg}")))
}

impl Job {
    /// Reads and validates a job file; a game program is started and
    /// described ([`Job::resolve_program`]), its folder read beside the file.
    pub fn load(path: &Path) -> Result<Job, PackError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| PackError::Job(format!("cannot read {}: {e}", path.display())))?;
        let mut job = Job::parse(&text)?;
        job.resolve_program(path.parent())?;
        Ok(job)
    }

    /// Whether the game is a program (`game = "external"`).
    pub fn is_external(&self) -> bool {
        self.game == EXTERNAL
    }

    /// The game's name as the levels carry it: the program's declared name
    /// for a game program, else `game`.
    pub fn game_name(&self) -> &str {
        match &self.external {
            Some(e) if self.is_external() => &e.name,
            _ => &self.game,
        }
    }

    /// For a game program: its folder made absolute (from `base`, the job
    /// file's folder), its identity computed (and held to the job's when it
    /// gives one), the program started and described, its name and version
    /// recorded, every stratum's params and the rating model checked by it.
    /// The only step that runs a program: [`Job::parse`] never does. Gives
    /// the program's game, which keeps it running while it is held (a
    /// caller that runs the job holds it, so the program starts once).
    pub fn resolve_program(&mut self, base: Option<&Path>) -> Result<Option<GameKind>, PackError> {
        if !self.is_external() {
            return Ok(None);
        }
        let Some(spec) = self.external.as_mut() else {
            return bad(
                "external",
                "a job with game = \"external\" needs an [external] table with its command".into(),
            );
        };
        let dir = Path::new(&spec.dir);
        if !dir.is_absolute() {
            let base = match base {
                Some(b) if !b.as_os_str().is_empty() => b.to_path_buf(),
                _ => std::env::current_dir()
                    .map_err(|e| PackError::Job(format!("field `external.dir`: {e}")))?,
            };
            let joined = base.join(dir);
            let absolute = std::fs::canonicalize(&joined).map_err(|e| {
                PackError::Job(format!("field `external.dir`: {}: {e}", joined.display()))
            })?;
            spec.dir = absolute.to_string_lossy().into_owned();
        }
        spec.identity = pinned_identity(&spec.program(), &spec.identity, "identity", "program")?;
        let game = GameKind::external(&spec.program())
            .map_err(|e| PackError::Job(format!("field `external`: {e}")))?;
        let described = game
            .description()
            .map(|d| (d.name.clone(), d.version.clone()));
        let (name, version) = described.unwrap_or_default();
        for (field, given, said) in [
            ("name", &spec.name, &name),
            ("version", &spec.version, &version),
        ] {
            if !given.is_empty() && given != said {
                return bad(
                    &format!("external.{field}"),
                    format!("the program says `{said}`, not `{given}`"),
                );
            }
        }
        spec.name = name;
        spec.version = version;
        if let Some(checker) = spec.checker_program() {
            spec.checker_identity = pinned_identity(
                &checker,
                &spec.checker_identity,
                "checker_identity",
                "checker",
            )?;
        }
        self.validate_params_with(&game)?;
        if let Some(checker) = self.checker_kind()? {
            self.validate_params_with(&checker)?;
        }
        self.rating_model()?;
        Ok(Some(game))
    }

    /// Parses and validates job TOML.
    pub fn parse(text: &str) -> Result<Job, PackError> {
        let mut job: Job = toml::from_str(text).map_err(|e| PackError::Job(e.to_string()))?;
        job.fill_count();
        job.validate()?;
        Ok(job)
    }

    /// With strata and no `count`, the count is their sum.
    pub fn fill_count(&mut self) {
        if self.count == 0 && !self.strata.is_empty() {
            self.count = self.strata.iter().map(|s| s.count).sum();
        }
    }

    /// Sets the accepted levels wanted to `count`. With strata, their counts
    /// are scaled to sum to it, each in proportion to its own: the quotas
    /// `count * c / sum` rounded down, the levels left over to the largest
    /// remainders (ties to the earlier stratum), then a stratum left with 0
    /// takes 1 from the largest (ties to the earlier). The file's own sum
    /// gives its own counts back. Refused below one level per stratum.
    pub fn scale_count(&mut self, count: u64) -> Result<(), PackError> {
        let k = self.strata.len() as u64;
        if k == 0 {
            self.count = count;
            return Ok(());
        }
        if count < k {
            return bad(
                "count",
                format!("{count} is fewer than the {k} strata: each needs a level at least"),
            );
        }
        let counts: Vec<u64> = self.strata.iter().map(|s| s.count).collect();
        for (s, n) in self.strata.iter_mut().zip(scaled(&counts, count)) {
            s.count = n;
        }
        self.count = count;
        Ok(())
    }

    /// Each stratum's game with its params, after its first seed (in
    /// stratum order): what checks a level of the job by its seed.
    pub fn prepared_strata(&self) -> Result<Vec<(u64, pregen_games::PreparedGame)>, PackError> {
        let game = self.game_kind()?;
        self.plan()
            .iter()
            .map(|p| Ok((p.first_seed, game.prepare(&p.params)?)))
            .collect::<Result<Vec<_>, pregen_games::GameError>>()
            .map_err(|e| PackError::Job(e.to_string()))
    }

    /// The strata to run: the job's own params and count when it has none.
    pub fn plan(&self) -> Vec<StratumPlan> {
        if self.strata.is_empty() {
            return vec![StratumPlan {
                name: String::new(),
                params: self.params_json(),
                first_seed: self.first_seed,
                count: self.count,
                band: self.difficulty,
            }];
        }
        self.strata
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut params = self.params.clone();
                params.extend(s.params.clone());
                StratumPlan {
                    name: if s.name.is_empty() {
                        i.to_string()
                    } else {
                        s.name.clone()
                    },
                    params: serde_json::to_value(&params).unwrap_or(serde_json::Value::Null),
                    first_seed: self.first_seed + i as u64 * STRATUM_SEEDS,
                    count: s.count,
                    band: s.difficulty.or(self.difficulty),
                }
            })
            .collect()
    }

    /// Per stratum, the band its runs refuse levels outside of as soon as
    /// they are rated: its band when the job rates by the game's built-in
    /// model (the one a run rates with), else none (the coordinator judges
    /// the band by the job's model: [`StratumPlan::band`]).
    pub fn run_bands(&self) -> Vec<Option<Band>> {
        let built_in = self.rating.model_text.is_empty() && !self.is_external();
        self.plan()
            .into_iter()
            .map(|p| p.band.filter(|_| built_in))
            .collect()
    }

    /// The name of stratum `i` as the tables show it: its own, else its
    /// number; empty for a job without strata.
    pub fn stratum_name(&self, i: usize) -> String {
        match self.strata.get(i) {
            None => String::new(),
            Some(s) if s.name.is_empty() => i.to_string(),
            Some(s) => s.name.clone(),
        }
    }

    /// The stratum holding `seed` (0 without strata).
    pub fn stratum_of(&self, seed: u64) -> usize {
        (seed.saturating_sub(self.first_seed) / STRATUM_SEEDS) as usize
    }

    /// The model that rates the job's levels: its `[rating]` model, or the
    /// game's built-in one.
    pub fn rating_model(&self) -> Result<Model, PackError> {
        let game = self.game_kind()?;
        let bad = |m: String| PackError::Job(format!("field `rating.model`: {m}"));
        match (&*self.rating.model, &*self.rating.model_text) {
            (_, text) if !text.is_empty() => game.parse_model(text).map_err(|e| bad(e.to_string())),
            ("", _) => game.default_model().map_err(|e| bad(e.to_string())),
            (path, _) => Err(bad(format!(
                "{path} was not read (the command line reads it)"
            ))),
        }
    }

    /// The game, known valid after [`Job::validate`]. A game program is
    /// started if no handle on it is held yet.
    pub fn game_kind(&self) -> Result<GameKind, PackError> {
        match &self.external {
            Some(spec) if self.is_external() => GameKind::external(&spec.program())
                .map_err(|e| PackError::Job(format!("field `external`: {e}"))),
            _ => GameKind::from_name(&self.game).map_err(|e| PackError::Job(e.to_string())),
        }
    }

    /// Why `stated` (a manifest's `job_id`) is not this job's id, if it is
    /// not: the manifest's job and its id must agree.
    pub fn id_differs(&self, stated: &str) -> Option<String> {
        let id = self.id();
        (id != stated).then(|| format!("its job hashes to {id}, not the job_id {stated} it names"))
    }

    /// This job with its game program (and checker) found in `dir` instead
    /// of the folder it ran from: how a pack made elsewhere is verified
    /// (`--program-dir`). Refused unless the program's files there hash to
    /// the job's identity (and the checker's to its), or when the job's game
    /// is not a program. The job's id is unchanged: the folder is not part
    /// of it.
    pub fn with_program_dir(&self, dir: &Path) -> Result<Job, PackError> {
        let Some(spec) = self.external.as_ref().filter(|_| self.is_external()) else {
            return Err(PackError::Job(format!(
                "--program-dir is for the pack of a game program; this pack's game is {}",
                self.game
            )));
        };
        let dir = std::fs::canonicalize(dir)
            .map_err(|e| PackError::Job(format!("--program-dir {}: {e}", dir.display())))?;
        let mut moved = spec.clone();
        moved.dir = dir.to_string_lossy().into_owned();
        let check = |program: &pregen_games::external::ProgramSpec, identity: &str, what: &str| {
            let here = pregen_games::external::identity(program)
                .map_err(|e| PackError::Job(format!("--program-dir: the {what}: {e}")))?;
            if here == identity {
                Ok(())
            } else {
                Err(PackError::Job(format!(
                    "--program-dir: the {what} in {} is {here}, the pack's is {identity}",
                    dir.display()
                )))
            }
        };
        check(&moved.program(), &spec.identity, "game program")?;
        if let Some(checker) = moved.checker_program() {
            check(&checker, &spec.checker_identity, "checker")?;
        }
        let mut job = self.clone();
        job.external = Some(moved);
        Ok(job)
    }

    /// The game that judges the levels, when it is not the job's game: an
    /// `[external] checker` program.
    pub fn checker_kind(&self) -> Result<Option<GameKind>, PackError> {
        let Some(checker) = self
            .external
            .as_ref()
            .filter(|_| self.is_external())
            .and_then(ExternalSpec::checker_program)
        else {
            return Ok(None);
        };
        GameKind::external(&checker)
            .map(Some)
            .map_err(|e| PackError::Job(format!("field `external.checker`: {e}")))
    }

    /// Each stratum's game that judges its levels: the checker's when the
    /// job names one, else the job's game ([`Job::prepared_strata`]).
    pub fn judging_strata(&self) -> Result<Vec<(u64, pregen_games::PreparedGame)>, PackError> {
        let Some(checker) = self.checker_kind()? else {
            return self.prepared_strata();
        };
        self.plan()
            .iter()
            .map(|p| Ok((p.first_seed, checker.prepare(&p.params)?)))
            .collect::<Result<Vec<_>, pregen_games::GameError>>()
            .map_err(|e| PackError::Job(e.to_string()))
    }

    /// The params as JSON, the form the wire and the games use.
    pub fn params_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.params).unwrap_or(serde_json::Value::Null)
    }

    /// Identity of the job: SHA-256 of its canonical JSON. A commit log written
    /// for one job is never resumed by another.
    /// A game program's folder is left out: the id covers what the program
    /// is (command, files' hash, name, version), not where it lies.
    pub fn id(&self) -> String {
        let mut job = self.clone();
        if let Some(spec) = &mut job.external {
            spec.dir.clear();
            spec.probe = None;
        }
        let canonical = serde_json::to_string(&job).unwrap_or_default();
        let mut id = pregen_games::sha256_hex(canonical.as_bytes());
        id.truncate(16);
        id
    }

    /// Campaigns to draw.
    pub fn campaign_count(&self) -> u64 {
        match self.campaigns.count {
            0 => self.count / u64::from(self.campaigns.length),
            k => k,
        }
    }
}

#[cfg(test)]
mod tests;
