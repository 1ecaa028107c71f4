//! A game program as a game of the registry: [`GameKind::external`] starts
//! the program named by a [`ProgramSpec`], reads its description and
//! registers it, so that everything that takes a [`GameKind`] (the worker's
//! pool, the coordinator's check, the pack's writer, `analysis verify`)
//! takes it as it takes a built-in game.
//!
//! Processes: a registered program keeps a pool of running processes; a
//! batch of seeds or checks takes one (starting another when none is free)
//! and gives it back, so a pool of N threads runs at most N processes, each
//! started once and reused. A program that says it runs several seeds at
//! once (`concurrent`) has one process, taken in turn. Every process must
//! describe itself as the first one did.
//!
//! What pregen does not take on trust: the level's hash is recomputed, every
//! metric key must be in the description, and the difficulty is the rating
//! of the metrics by the description's rating model, never the program's
//! own number.

use pregen_game_core::clock::Instant;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{Description, Program, ProgramError};
use pregen_game_core::agents::Figures;
use pregen_game_core::rating::Model;
use pregen_game_core::reason::{Code, intern};
use pregen_game_core::registration::{CheckError, LevelVerdict, Ready, Registered, Verdict};
use pregen_game_core::{
    Budget, Candidate, GameError, MetricDoc, Outcome, Rejection, Solved, sha256_hex,
};

/// How long a check or a params check may take.
const CHECK_WAIT: Duration = Duration::from_secs(60);

/// The wait for a seed run without a watchdog.
const NO_WATCHDOG: Duration = Duration::from_secs(3600);

/// About how long a batch of seeds sent to a process at once runs.
const BATCH_TIME: Duration = Duration::from_millis(5);

/// The most seeds sent to a process at once.
const MAX_BATCH: usize = 64;

/// A game program: how to start it and which files make it what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramSpec {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The folder it runs in (relative paths of `command` and `files` are
    /// read from here).
    pub dir: PathBuf,
    /// The files whose contents are the program's identity; none: each word
    /// of the command that names a file.
    pub files: Vec<String>,
}

impl ProgramSpec {
    /// The files [`identity`] hashes, with the names they are hashed under.
    /// The files that make the program what it is, each by its name as
    /// listed (relative to `dir`, or absolute) and its path.
    pub fn identity_files(&self) -> Vec<(String, PathBuf)> {
        let at = |name: &str| {
            let path = Path::new(name);
            if path.is_absolute() {
                path.to_path_buf()
            } else {
                self.dir.join(path)
            }
        };
        if self.files.is_empty() {
            self.command
                .iter()
                .map(|word| (word.clone(), at(word)))
                .filter(|(_, path)| path.is_file())
                .collect()
        } else {
            self.files.iter().map(|f| (f.clone(), at(f))).collect()
        }
    }
}

/// The program's identity: `sha256:` and the SHA-256 of its files (each
/// file's name as listed, its length and its bytes, in the order listed).
/// A program whose command names no file and that lists none is refused: its
/// identity would be its name alone.
///
/// The files are streamed through the hash, never held whole, and a process
/// hashes the same files once: the identity is kept against each file's
/// path, length and modification time, so a worker's later sessions (and a
/// coordinator that runs its own workers) do not read a large program again,
/// while a file changed on disk is read anew.
pub fn identity(spec: &ProgramSpec) -> Result<String, ProgramError> {
    let files = spec.identity_files();
    if files.is_empty() {
        return Err(ProgramError::Identity(format!(
            "no word of `{}` names a file in {}: list the program's files in `external.files`",
            spec.command.join(" "),
            spec.dir.display()
        )));
    }
    let cannot = |path: &Path, e: std::io::Error| {
        ProgramError::Identity(format!("cannot read {}: {e}", path.display()))
    };
    let mut key = Vec::with_capacity(files.len());
    for (name, path) in &files {
        let meta = std::fs::metadata(path).map_err(|e| cannot(path, e))?;
        key.push((name.clone(), path.clone(), meta.len(), meta.modified().ok()));
    }
    static KNOWN: Mutex<Vec<(IdentityKey, String)>> = Mutex::new(Vec::new());
    if let Some((_, known)) = KNOWN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(k, _)| *k == key)
    {
        return Ok(known.clone());
    }
    let mut hash = Sha256::new();
    for (name, path, len, _) in &key {
        let file = std::fs::File::open(path).map_err(|e| cannot(path, e))?;
        hash.update(name.as_bytes());
        hash.update([0]);
        hash.update(len.to_le_bytes());
        let read = std::io::copy(&mut file.take(*len), &mut HashWriter(&mut hash))
            .map_err(|e| cannot(path, e))?;
        if read != *len {
            return Err(ProgramError::Identity(format!(
                "{} changed while it was read",
                path.display()
            )));
        }
    }
    let digest = hash.finalize();
    let identity = format!("sha256:{}", pregen_game_core::hex(&digest));
    KNOWN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((key, identity.clone()));
    Ok(identity)
}

/// What an identity is kept against: each file's name, path, length and
/// modification time.
type IdentityKey = Vec<(String, PathBuf, u64, Option<std::time::SystemTime>)>;

/// Bytes written into a running SHA-256.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The rating model of a program that gives none: a level's difficulty is
/// its moves.
fn moves_model(name: &str) -> String {
    format!(
        "name = \"{name}-moves\"\nversion = 1\ngame = \"{name}\"\n\
         about = \"fewest moves (the program gives no rating model)\"\n\n\
         [[terms]]\nfeature = \"moves\"\nweight = 1.0\nabout = \"the solution's moves\"\n"
    )
}

/// The programs registered in this process and still in use: held weakly,
/// so that a program no job uses any more is dropped, its processes with it.
static PROGRAMS: Mutex<Vec<Weak<External>>> = Mutex::new(Vec::new());

/// The game the program of `spec` is: started (once per spec while any
/// [`Arc`] of it lives), described, its description checked (a name, metric
/// keys without repeats, a rating model over them), and registered.
pub fn register(spec: &ProgramSpec) -> Result<Arc<dyn Registered>, ProgramError> {
    let mut known = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    known.retain(|e| e.strong_count() > 0);
    if let Some(found) = known
        .iter()
        .filter_map(Weak::upgrade)
        .find(|e| e.spec == *spec)
    {
        return Ok(found);
    }
    let (program, description) = Program::start(&spec.command, Some(spec.dir.clone()))?;
    let external = External::new(spec.clone(), description, program)?;
    super::declare(&external.reasons).map_err(|problem| ProgramError::Describe {
        command: spec.command.join(" "),
        problem,
    })?;
    let external = Arc::new(external);
    known.push(Arc::downgrade(&external));
    Ok(external)
}

/// The levels of a file in a program's text form: apart by blank lines and
/// lines starting with `;` (as release files and `analysis levels` print
/// them; a layout holds neither), each with its title (the last `;` line
/// above it, without the `;`) and its text, every line ended by a newline.
fn levels_of_text(text: &str) -> Vec<(String, String)> {
    let (mut levels, mut title, mut layout) = (Vec::new(), String::new(), String::new());
    for line in text.lines() {
        let apart = line.trim().is_empty() || line.starts_with(';');
        if apart && !layout.is_empty() {
            levels.push((std::mem::take(&mut title), std::mem::take(&mut layout)));
        }
        match line.strip_prefix(';') {
            Some(said) => title = said.trim().to_string(),
            None if apart => {}
            None => {
                layout.push_str(line);
                layout.push('\n');
            }
        }
    }
    if !layout.is_empty() {
        levels.push((title, layout));
    }
    levels
}

/// The description of a game program's game (`None` for a game that is
/// not a program's).
pub fn description(game: &dyn Registered) -> Option<&Description> {
    game.as_any()
        .downcast_ref::<External>()
        .map(|external| &external.description)
}

/// A registered game program.
struct External {
    spec: ProgramSpec,
    description: Description,
    /// The description's name, interned.
    name: &'static str,
    /// The description's metrics (their texts interned).
    metrics: Vec<MetricDoc>,
    /// Its reasons as codes (their texts interned).
    reasons: Vec<Code>,
    /// Its rating model as TOML (the moves model when it gives none).
    model: String,
    /// The processes.
    pool: Mutex<Pool>,
    /// A process kept apart from the pool, for runs that must be another
    /// process's ([`Ready::run_apart`]): started once, then reused, taken
    /// in turn.
    apart: Mutex<Option<Program>>,
    /// Rung when a process goes back to the pool.
    freed: Condvar,
    /// Microseconds a seed takes, as last measured (0: not yet).
    seed_micros: AtomicU64,
}

impl External {
    fn new(
        spec: ProgramSpec,
        description: Description,
        program: Program,
    ) -> Result<External, ProgramError> {
        let problem = |problem: String| ProgramError::Describe {
            command: spec.command.join(" "),
            problem,
        };
        let d = &description;
        if d.name.is_empty()
            || d.name.len() > 64
            || !d
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
        {
            return Err(problem(format!(
                "its name `{}` is not 1 to 64 letters, digits, - or _",
                d.name
            )));
        }
        if !d.params.is_object() {
            return Err(problem("its params are not a JSON object".into()));
        }
        let mut names: Vec<&str> = d.metrics.iter().map(|m| m.name.as_str()).collect();
        names.sort_unstable();
        if let Some(twice) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(problem(format!("metric `{}` is listed twice", twice[0])));
        }
        let metrics: Vec<MetricDoc> = d
            .metrics
            .iter()
            .map(|m| MetricDoc {
                name: intern(&m.name),
                unit: intern(&m.unit),
                doc: intern(&m.doc),
            })
            .collect();
        let model = match d.rating_model.as_str() {
            "" => moves_model(&d.name),
            text => text.to_string(),
        };
        Model::parse(&model, &d.name, &metrics)
            .map_err(|e| problem(format!("its rating model: {e}")))?;
        let reasons = d.codes().map_err(problem)?;
        Ok(External {
            reasons,
            name: intern(&d.name),
            model,
            metrics,
            spec,
            description,
            pool: Mutex::new(Pool {
                idle: vec![program],
                started: 1,
            }),
            freed: Condvar::new(),
            apart: Mutex::new(None),
            seed_micros: AtomicU64::new(0),
        })
    }

    /// How many seeds to send a process at once: as many as take about
    /// [`BATCH_TIME`], at most [`MAX_BATCH`] (a few before the first
    /// measure). Only the speed depends on it: each seed is answered as if
    /// sent alone.
    fn batch(&self) -> usize {
        match self.seed_micros.load(Ordering::Relaxed) {
            0 => 4,
            micros => (BATCH_TIME.as_micros() as u64 / micros).clamp(1, MAX_BATCH as u64) as usize,
        }
    }

    /// Takes the measure of `seeds` run in `took`, into a moving average.
    fn timed(&self, seeds: usize, took: Duration) {
        if seeds == 0 {
            return;
        }
        let micros = (took.as_micros() as u64 / seeds as u64).max(1);
        let before = self.seed_micros.load(Ordering::Relaxed);
        let average = if before == 0 {
            micros
        } else {
            (3 * before + micros).div_ceil(4)
        };
        self.seed_micros.store(average, Ordering::Relaxed);
    }

    /// Runs `work` on an idle process, then gives the process back. When
    /// none is idle another is started, up to one per core (a process works
    /// on one seed at a time, so more would only start and warm processes
    /// that take turns on the cores: a whole interpreter each); past that
    /// the caller waits for one. A program that runs several seeds at once
    /// (`concurrent`) has one process, which the threads take in turn.
    fn with_program<T>(&self, work: impl FnOnce(&mut Program) -> T) -> Result<T, String> {
        let most = match self.description.concurrent {
            true => 1,
            false => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        };
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        let idle = loop {
            if let Some(program) = pool.idle.pop() {
                break Some(program);
            }
            if pool.started < most {
                pool.started += 1;
                break None;
            }
            pool = self.freed.wait(pool).unwrap_or_else(|e| e.into_inner());
        };
        drop(pool);
        // Gives the process back, or its place when it is lost (a start
        // that failed, a panic in `work`).
        let mut taken = Taken {
            game: self,
            program: None,
        };
        let program = match idle {
            Some(program) => program,
            None => self.start()?,
        };
        Ok(work(taken.program.insert(program)))
    }

    /// Another process of the program, which must describe itself as the
    /// first did.
    fn start(&self) -> Result<Program, String> {
        let (program, said) = Program::start(&self.spec.command, Some(self.spec.dir.clone()))
            .map_err(|e| format!("{e:#}"))?;
        if said != self.description {
            return Err(format!(
                "a new process described itself as {} {}, not as the first ({} {})",
                said.name, said.version, self.description.name, self.description.version
            ));
        }
        Ok(program)
    }
}

/// A process taken from an [`External`]'s pool: given back when dropped,
/// or (none held) its place freed.
struct Taken<'a> {
    game: &'a External,
    program: Option<Program>,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut pool = self.game.pool.lock().unwrap_or_else(|e| e.into_inner());
        match self.program.take() {
            // A process left mid-exchange by a panic is not given back.
            Some(program) if !std::thread::panicking() => pool.idle.push(program),
            _ => pool.started -= 1,
        }
        drop(pool);
        self.game.freed.notify_one();
    }
}

/// A program's processes.
struct Pool {
    /// Those not in use.
    idle: Vec<Program>,
    /// How many there are, in use or not.
    started: usize,
}

impl Registered for External {
    fn is_external(&self) -> bool {
        true
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn reasons(&self) -> &[Code] {
        &self.reasons
    }

    fn metric_docs(&self) -> &[MetricDoc] {
        &self.metrics
    }

    fn rating_model(&self) -> &str {
        &self.model
    }

    fn default_params(&self) -> serde_json::Value {
        self.description.params.clone()
    }

    fn prepare(self: Arc<Self>, params: &serde_json::Value) -> Result<Box<dyn Ready>, GameError> {
        let refused = |message: String| GameError::Params {
            game: self.name,
            message,
        };
        let serde_json::Value::Object(given) = params else {
            return Err(refused("the params are not a table".into()));
        };
        let known = self.description.params.as_object();
        if let Some(key) = given
            .keys()
            .find(|k| known.is_none_or(|known| !known.contains_key(*k)))
        {
            let expected: Vec<&str> = known
                .map(|k| k.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(refused(format!(
                "unknown field `{key}`, expected one of {}",
                expected.join(", ")
            )));
        }
        self.with_program(|p| p.prepare(params, CHECK_WAIT))
            .and_then(|taken| taken)
            .map_err(refused)?;
        let model = Model::parse(&self.model, self.name, &self.metrics)
            .map_err(|e| refused(e.to_string()))?;
        Ok(Box::new(WithProgram {
            game: self,
            params: params.clone(),
            model,
        }))
    }

    fn solve_text(
        &self,
        text: &str,
        budget: &dyn Fn() -> Budget,
        each: &mut dyn FnMut(LevelVerdict),
    ) -> Result<(), GameError> {
        if !self.description.solves {
            return Err(GameError::External(format!(
                "{} is a program that does not solve level texts: its description has no \
                 `solves: true` (docs/external.md, `solve`)",
                self.name
            )));
        }
        let levels = levels_of_text(text);
        if levels.is_empty() {
            return Err(GameError::External("the file holds no level".into()));
        }
        for (title, layout) in levels {
            let budget = budget();
            let watchdog = budget.watchdog_left().unwrap_or(NO_WATCHDOG);
            let mut outcome = None;
            self.with_program(|p| {
                p.solve_many(&[layout], budget.max_nodes, watchdog, &mut |_, o| {
                    outcome = Some(o)
                })
            })
            .map_err(GameError::External)?;
            let Some(outcome) = outcome else {
                return Err(GameError::External("the program gave no answer".into()));
            };
            let ms = outcome.generate_ms + outcome.solve_ms;
            let verdict = match outcome.result {
                Ok(level) => Verdict::Solved(Solved {
                    solution: level.solution,
                    moves: level.moves,
                    optimal: level.moves_optimal,
                    nodes: outcome.nodes,
                    analysis: level.metrics,
                }),
                Err(Rejection::Refused(r)) if r.code == Code::MalformedLevel => {
                    Verdict::Malformed(GameError::External(r.to_string()))
                }
                Err(rejection) => Verdict::Failed(rejection),
            };
            each(LevelVerdict { title, verdict, ms });
        }
        Ok(())
    }

    fn replay_json(&self, _level_json: &str, _solution: &str) -> Result<(), GameError> {
        Err(GameError::External(format!(
            "{} is a program: its solutions are checked by the program (`analysis verify`)",
            self.name
        )))
    }

    fn play_json(&self, _level_json: &str, _moves: &str) -> Result<(String, bool), GameError> {
        Err(GameError::External(format!(
            "{} is a program: its moves are its own",
            self.name
        )))
    }

    fn text_to_json(&self, _text: &str) -> Result<String, GameError> {
        Err(GameError::External(format!(
            "{} is a program: its text form is its own; the JSON form of its levels is in \
             JSON Lines release files and seed files",
            self.name
        )))
    }

    fn play_agents(&self, _c: &Candidate) -> Result<Option<Figures>, CheckError> {
        Ok(None)
    }
}

/// A registered program with one parameter set.
struct WithProgram {
    game: Arc<External>,
    params: serde_json::Value,
    model: Model,
}

impl WithProgram {
    /// The level as pregen keeps it: its hash the hash of its JSON, its
    /// metrics described, its difficulty the model's rating.
    fn taken(&self, mut level: Candidate) -> Result<Candidate, Rejection> {
        let protocol = |detail: String| Rejection::refused(Code::Protocol, detail);
        if sha256_hex(level.level_json.as_bytes()) != level.level_hash {
            return Err(protocol("level_hash is not the hash of level_json".into()));
        }
        if let Some(key) = level
            .metrics
            .keys()
            .find(|k| !self.game.metrics.iter().any(|m| m.name == k.as_str()))
        {
            return Err(protocol(format!(
                "metric `{key}` is not in the program's description"
            )));
        }
        level.difficulty = self
            .model
            .rate(Model::features(&level.metrics, level.moves))
            .map_err(|e| Rejection::refused(Code::Rating, e.to_string()))?;
        Ok(level)
    }
}

impl Ready for WithProgram {
    fn run(&self, seed: u64, budget: &Budget) -> Outcome {
        let mut outcome = None;
        self.run_many(&[seed], &|| *budget, &mut |_, o| outcome = Some(o));
        outcome.unwrap_or_else(|| Outcome {
            result: Err(Rejection::refused(Code::Broken, "no answer")),
            generate_ms: 0.0,
            solve_ms: 0.0,
            nodes: 0,
        })
    }

    fn batch(&self) -> usize {
        self.game.batch()
    }

    fn run_many(
        &self,
        seeds: &[u64],
        budget: &dyn Fn() -> Budget,
        each: &mut dyn FnMut(u64, Outcome),
    ) {
        let started = Instant::now();
        let budget = budget();
        let wait = budget.watchdog_left().unwrap_or(NO_WATCHDOG);
        let ran = self.game.with_program(|p| {
            p.generate_many(
                seeds,
                &self.params,
                budget.max_nodes,
                wait,
                &mut |seed, mut outcome| {
                    outcome.result = outcome.result.and_then(|level| self.taken(level));
                    each(seed, outcome);
                },
            );
        });
        if let Err(e) = ran {
            for &seed in seeds {
                let outcome = Outcome {
                    result: Err(Rejection::refused(Code::Broken, e.clone())),
                    generate_ms: started.elapsed().as_secs_f64() * 1e3,
                    solve_ms: 0.0,
                    nodes: 0,
                };
                each(seed, outcome);
            }
        }
        self.game.timed(seeds.len(), started.elapsed());
    }

    fn run_apart(&self, seeds: &[u64], budget: &dyn Fn() -> Budget) -> Option<Vec<Outcome>> {
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(seeds.len());
        // A process kept apart from the pool, warm after its first use. One
        // that cannot start answers nothing: there is nothing to compare
        // (the pool's runs say why the program fails).
        let mut apart = self.game.apart.lock().unwrap_or_else(|e| e.into_inner());
        let kept = match apart.take() {
            Some(program) => Ok(program),
            None => self.game.start(),
        };
        match kept {
            Ok(mut program) => {
                for &seed in seeds {
                    let budget = budget();
                    let wait = budget.watchdog_left().unwrap_or(NO_WATCHDOG);
                    program.generate_many(
                        &[seed],
                        &self.params,
                        budget.max_nodes,
                        wait,
                        &mut |_, mut outcome| {
                            outcome.result = outcome.result.and_then(|level| self.taken(level));
                            outcomes.push(outcome);
                        },
                    );
                }
                *apart = Some(program);
            }
            Err(_) => return None,
        }
        Some(outcomes)
    }

    fn check(&self, level: &Candidate) -> Result<(), CheckError> {
        self.check_many(&[level])
            .pop()
            .unwrap_or_else(|| Err(CheckError::Program("no answer".into())))
    }

    fn check_many(&self, levels: &[&Candidate]) -> Vec<Result<(), CheckError>> {
        let mut verdicts: Vec<Result<(), CheckError>> = levels
            .iter()
            .map(|level| {
                (sha256_hex(level.level_json.as_bytes()) == level.level_hash)
                    .then_some(())
                    .ok_or(CheckError::WrongHash)
            })
            .collect();
        let asked: Vec<&Candidate> = levels
            .iter()
            .zip(&verdicts)
            .filter(|(_, v)| v.is_ok())
            .map(|(level, _)| *level)
            .collect();
        let answers = self
            .game
            .with_program(|p| p.check_many(&self.params, &asked, CHECK_WAIT));
        let mut answers = match answers {
            Ok(answers) => answers.into_iter(),
            Err(e) => vec![Err(CheckError::Broken(e)); asked.len()].into_iter(),
        };
        for verdict in verdicts.iter_mut().filter(|v| v.is_ok()) {
            *verdict = answers
                .next()
                .unwrap_or_else(|| Err(CheckError::Broken("no answer".into())))
                .map_err(|e| match e.is_broken() {
                    true => CheckError::Broken(format!("the program's check broke: {e}")),
                    false => CheckError::Program(format!("the program's check: {e}")),
                });
        }
        verdicts
    }

    fn render(&self, level_json: &str, layout: &str) -> Option<Result<String, CheckError>> {
        if !self.game.description.renders {
            return None;
        }
        let drawn = self
            .game
            .with_program(|p| p.render(&self.params, level_json, layout, CHECK_WAIT))
            .and_then(|drawn| drawn)
            .map_err(|e| CheckError::Program(format!("the program's picture: {e}")));
        Some(drawn)
    }

    fn regenerates(&self) -> bool {
        false
    }

    fn made_by(&self, _seed: u64, _level_json: &str, _budget: &Budget) -> Result<(), CheckError> {
        Ok(())
    }

    fn canonical_hash(&self, _level_json: &str) -> Result<Option<String>, CheckError> {
        Ok(None)
    }
}
