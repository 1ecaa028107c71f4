//! The job flags shared by `run` and `serve`: a TOML job file, any field of
//! which a flag overrides.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use pregen_coordinator::server::RunOptions;
use pregen_games::GameKind;
use pregen_pack::Job;
use pregen_pack::job::TierScheme;
use pregen_pack::write::{SORT_MEMORY, WriteOptions};
use pregen_store::{Location, Remote};
use std::time::Duration;

/// The job: a TOML file, any field of which a flag overrides.
#[derive(Args)]
pub struct JobArgs {
    /// Job file (TOML); see `pregen example-job`.
    job: Option<PathBuf>,
    /// Output root, a folder or an object store's URL (`s3://bucket/prefix`, `gs://…`,
    /// `az://…`); the pack goes to `<out>/<pack>/`. In a store, the coordinator works in a
    /// temporary folder, keeps its commit log in the store as it goes (a coordinator started
    /// anywhere resumes from the store alone) and publishes the pack there, `_SUCCESS` last;
    /// credentials come from the environment (for S3, `AWS_*`, `AWS_ENDPOINT_URL` included).
    #[arg(long, default_value = "out")]
    pub out: Location,
    /// For an output in an object store: the pack's lease lasts this long unrenewed (a
    /// coordinator started while a dead one's lease holds waits for it to expire).
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub store_lease_s: u64,
    /// Pack name.
    #[arg(long)]
    pack: Option<String>,
    /// Game: cube, doors, dungeon, sokoban or tilt (or `synthetic`, the load-test game, or
    /// `external`, a game program the job's `[external]` table names: docs/external.md).
    #[arg(long)]
    game: Option<String>,
    /// Accepted levels wanted (with strata, their counts are scaled to sum to
    /// it, each in proportion to its own).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    count: Option<u64>,
    /// First seed (below 2^63: a job's integers are TOML's, signed 64-bit).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    first_seed: Option<u64>,
    /// Seeds per lease at most (leases are sized to about 3 s of a worker's
    /// threads from the cost per seed seen so far).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    seeds_per_lease: Option<u64>,
    /// Give up after this many seeds per stratum without enough levels.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    max_seeds: Option<u64>,
    /// The share of seeds (0 to 1, default 0.01) run a second time by another
    /// worker to catch a worker whose results are wrong; 0 turns it off.
    #[arg(long, value_name = "SHARE")]
    cross_check: Option<f64>,
    /// Search nodes per level.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    max_nodes: Option<u64>,
    /// Watchdog per level (ms), in CPU time: a built-in game's is the CPU
    /// time of the thread running the seed, a game program's that of its
    /// processes (so a busy machine fires neither); a program that uses no
    /// CPU for this long (asleep, or its answer unflushed) times out too,
    /// and one kept off the CPU for 20 times this long.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    watchdog_ms: Option<u64>,
    /// Equal-size tiers.
    #[arg(long)]
    tiers: Option<u32>,
    /// A game param, `key=value` with a TOML value (repeatable), e.g. `pairs=3`.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Memory for sorting the pack's records when it is written (MiB);
    /// beyond it sorted runs spill to `<pack>/.sort/` and are merged. A new
    /// commit log is also kept in memory while it fits this, so that a small
    /// pack is written without reading its log back. Never changes a byte of
    /// the pack.
    #[arg(long, value_name = "MIB", default_value_t = (SORT_MEMORY >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    sort_memory: u64,
}

/// Where a run writes: the coordinator's output folder and, for an output
/// in an object store, the store and the temporary working folder (removed
/// when this is dropped).
pub struct Output {
    /// The folder the coordinator writes in.
    pub folder: PathBuf,
    /// The output root in an object store.
    pub store: Option<Remote>,
    _work: Option<tempfile::TempDir>,
}

impl JobArgs {
    /// Where the run writes (`--out`).
    pub fn output(&self) -> Result<Output> {
        match &self.out {
            Location::Local(folder) => Ok(Output {
                folder: folder.clone(),
                store: None,
                _work: None,
            }),
            Location::Remote(remote) => {
                let work = tempfile::Builder::new()
                    .prefix("pregen-work-")
                    .tempdir()
                    .context("cannot make a working folder for a pack in an object store")?;
                Ok(Output {
                    folder: work.path().to_path_buf(),
                    store: Some(remote.clone()),
                    _work: Some(work),
                })
            }
        }
    }

    /// The run's options for its output (`--out`, `--store-lease-s`), the
    /// rest as [`RunOptions::local`] with `token`.
    pub fn run_options(&self, output: &Output, token: String) -> RunOptions {
        RunOptions {
            write: self.write_options(),
            store: output.store.clone(),
            store_lease: Duration::from_secs(self.store_lease_s.max(1)),
            ..RunOptions::local(output.folder.clone(), token)
        }
    }

    /// How the pack is written: the defaults with `--sort-memory`.
    pub fn write_options(&self) -> WriteOptions {
        WriteOptions {
            sort_memory: usize::try_from(self.sort_memory << 20).unwrap_or(usize::MAX),
            ..WriteOptions::default()
        }
    }

    /// The job: the file, then the flags over it, validated; with its game
    /// program's game (`None` for a built-in game), which keeps the program
    /// running while the caller holds it.
    pub fn load(&self) -> Result<(Job, Option<GameKind>)> {
        let mut table = match &self.job {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read job file {}", path.display()))?;
                // A value of the wrong type is reported against the file's
                // own lines (the text parsed below is the file re-written
                // with the flags); a field a flag may still give is not.
                if let Err(e) = toml::from_str::<Job>(&text)
                    && e.span().is_some()
                {
                    bail!("invalid job file {}: {e}", path.display());
                }
                text.parse::<toml::Table>()
                    .map_err(|e| anyhow::anyhow!("invalid job {}: {e}", path.display()))?
            }
            None => toml::Table::new(),
        };
        // A strata job's `count` is their sum: `--count` scales them instead.
        let has_strata = table.contains_key("strata");
        let count = self.count.filter(|_| !has_strata);
        let mut set = |k: &str, v: Option<toml::Value>| {
            if let Some(v) = v {
                table.insert(k.to_string(), v);
            }
        };
        set("pack", self.pack.clone().map(toml::Value::String));
        set("game", self.game.clone().map(toml::Value::String));
        set("count", count.map(|v| toml::Value::Integer(v as i64)));
        set(
            "first_seed",
            self.first_seed.map(|v| toml::Value::Integer(v as i64)),
        );
        set(
            "seeds_per_lease",
            self.seeds_per_lease.map(|v| toml::Value::Integer(v as i64)),
        );
        set(
            "max_seeds",
            self.max_seeds.map(|v| toml::Value::Integer(v as i64)),
        );
        set("cross_check", self.cross_check.map(toml::Value::Float));
        // `[rating] model = "FILE"`: the file's text goes into the job (its
        // identity covers the model), the path read beside the job file.
        if let Some(toml::Value::Table(rating)) = table.get_mut("rating")
            && let Some(toml::Value::String(path)) = rating.get("model")
            && !rating.contains_key("model_text")
        {
            let base = self.job.as_deref().and_then(std::path::Path::parent);
            let file = base.map_or_else(|| path.into(), |b| b.join(path));
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("field `rating.model`: cannot read {}", file.display()))?;
            rating.insert("model_text".into(), toml::Value::String(text));
        }
        let job_text = toml::to_string(&table)?;
        let mut job = Job::parse(&job_text).with_context(|| match &self.job {
            Some(p) => format!("job file {}", p.display()),
            None => "job flags (give a job file or --pack, --game and --count)".into(),
        })?;
        if let Some(n) = self.count.filter(|_| has_strata) {
            job.scale_count(n).context("--count")?;
        }
        if let Some(n) = self.max_nodes {
            job.budget.max_nodes = n;
        }
        if let Some(ms) = self.watchdog_ms {
            job.budget.watchdog_ms = ms;
        }
        if let Some(t) = self.tiers {
            job.tiers = TierScheme::Equal { count: t };
        }
        for kv in &self.params {
            let (k, v) = kv
                .split_once('=')
                .with_context(|| format!("--param `{kv}` is not KEY=VALUE"))?;
            let value: toml::Value = format!("v = {v}")
                .parse::<toml::Table>()
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(v.to_string()));
            job.params.insert(k.trim().to_string(), value);
        }
        job.validate().context("job after flags")?;
        let program = job
            .resolve_program(self.job.as_deref().and_then(std::path::Path::parent))
            .context("the job's game program")?;
        Ok((job, program))
    }
}
