//! What a registry of games needs of each: the [`Registered`] and [`Ready`]
//! traits, which a built-in game's [`Entry`] and a game program's driver
//! implement, and what they answer ([`CheckError`], [`LevelVerdict`]).

use std::marker::PhantomData;

use crate::agents::Figures;
use crate::clock::Instant;
use crate::digest::sha256_hex;
use crate::game::{Budget, Candidate, Game, GameError, Outcome, Rejection, Solved};
use crate::metrics::{MetricDoc, Metrics};
use crate::rating::Model;
use crate::reason::Code;
use crate::run::ms_since;

fn parse_level<G: Game>(level_json: &str) -> Result<G::Level, CheckError> {
    serde_json::from_str(level_json).map_err(|e| CheckError::NotALevel {
        game: G::NAME,
        why: e.to_string(),
    })
}

/// The level of a candidate whose layout reads back to itself and to the
/// level whose canonical JSON is `level_json`; `None` when any of that fails
/// ([`read_level`] then says what). It is what [`read_level`] accepts, read
/// from the text form instead of the JSON (the JSON is the level's canonical
/// form, so it reads back to the level it is written from): the common case
/// without a JSON parse and a second rendering.
pub fn read_agreeing<G: Game>(c: &Candidate) -> Option<G::Level> {
    let level = G::from_text(&c.layout).ok()?;
    let agrees = G::to_text(&level) == c.layout
        && serde_json::to_string(&level).is_ok_and(|json| json == c.level_json);
    agrees.then_some(level)
}

/// The level of a candidate, read from its JSON: the JSON parses and is
/// canonical, the level is well-formed (its text form reads back) and its
/// text form is the layout. Each failure says which.
fn read_level<G: Game>(c: &Candidate) -> Result<G::Level, CheckError> {
    let level = parse_level::<G>(&c.level_json)?;
    let json =
        serde_json::to_string(&level).map_err(|e| CheckError::Unserializable(e.to_string()))?;
    if json != c.level_json {
        return Err(CheckError::NotCanonical);
    }
    let text = G::to_text(&level);
    let read_back = G::from_text(&text).map_err(|e| CheckError::Malformed(e.to_string()))?;
    if G::to_text(&read_back) != text {
        return Err(CheckError::TextDoesNotReadBack);
    }
    if text != c.layout {
        return Err(CheckError::WrongLayout);
    }
    Ok(level)
}

/// A seed a game program answered two ways (a registry's determinism probe,
/// or two results of one seed met in a run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the program answers seed {seed} two ways: it is not deterministic ({differs}); a pack \
     of it would differ from run to run. Make every answer a function of the seed and params \
     alone (seed every random generator from the seed; no clock, no hash-order iteration)"
)]
pub struct NotDeterministic {
    /// The seed.
    pub seed: u64,
    /// What differs between the two answers.
    pub differs: String,
}

/// Why a level does not pass [`Ready::check`], or why the check could not
/// be made ([`CheckError::is_broken`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The level JSON does not read as a level of the game.
    #[error("the level JSON is not a {game} level: {why}")]
    NotALevel {
        /// The game.
        game: &'static str,
        /// What the JSON parser said.
        why: String,
    },
    /// The level does not serialize (a game's own fault).
    #[error("the level does not serialize: {0}")]
    Unserializable(String),
    /// The level JSON is not its canonical form.
    #[error("the level JSON is not in its canonical form")]
    NotCanonical,
    /// The level breaks its game's rules of form.
    #[error("the level is not well-formed: {0}")]
    Malformed(String),
    /// Its text form does not read back to itself.
    #[error("the level's text form does not read back")]
    TextDoesNotReadBack,
    /// The layout is not the level's text form.
    #[error("the layout is not the level's")]
    WrongLayout,
    /// `level_hash` is not the SHA-256 of the level JSON.
    #[error("level_hash is not the hash of the level")]
    WrongHash,
    /// The solution does not replay to a win.
    #[error("the solution does not win: {0}")]
    SolutionFails(String),
    /// The level's move count is not its solution's.
    #[error("moves is {claimed} but the solution has {replayed}")]
    WrongMoves {
        /// The moves the level states.
        claimed: u32,
        /// The solution's moves.
        replayed: u32,
    },
    /// The level does not fit the params.
    #[error("the level does not fit the params: {0}")]
    Misfit(String),
    /// `canonical` is not the level's canonical form.
    #[error("canonical is not the level's canonical form")]
    WrongCanonical,
    /// The seed makes no level.
    #[error("seed {seed} makes no level ({why})")]
    NoLevelFromSeed {
        /// The seed.
        seed: u64,
        /// Why it makes none.
        why: String,
    },
    /// The level is not the one its seed makes.
    #[error("the level is not the one seed {seed} makes")]
    NotTheSeeds {
        /// The seed.
        seed: u64,
    },
    /// A game program's own check refuses the level (its reason) or its
    /// picture failed.
    #[error("{0}")]
    Program(String),
    /// The check panicked (a game's own fault).
    #[error("the {0} panicked")]
    Panicked(&'static str),
    /// The check could not be made: the exchange with a game program broke
    /// (a crash, a kill, no answer in time, a stray line).
    #[error("{0}")]
    Broken(String),
}

impl CheckError {
    /// Whether the check could not be made ([`CheckError::Broken`]): the
    /// level was not judged, and nothing is known against whoever sent it.
    pub fn is_broken(&self) -> bool {
        matches!(self, CheckError::Broken(_))
    }
}

/// One level of a file given to [`Registered::solve_text`].
#[derive(Debug)]
pub struct LevelVerdict {
    /// The level's title in the file (empty when it has none).
    pub title: String,
    /// What became of it.
    pub verdict: Verdict,
    /// Milliseconds the solver took.
    pub ms: f64,
}

/// What became of one level of a file.
#[derive(Debug)]
pub enum Verdict {
    /// Solved: the answer, with the game's analysis in its published form.
    Solved(Solved<Metrics>),
    /// The solver proved it unsolvable or gave up.
    Failed(Rejection),
    /// Its text is not a level.
    Malformed(GameError),
}

/// What a registry needs of a game, as an object: a built-in game's
/// [`Entry`], or a game program's driver. A registry holds each in an
/// [`Arc`](std::sync::Arc): a game program's lives while a job uses it.
pub trait Registered: Send + Sync + 'static {
    /// Whether the game is a game program's (run in a process of its own).
    fn is_external(&self) -> bool {
        false
    }
    /// The game as [`Any`](std::any::Any), so a registry can reach what
    /// only one kind of game has (a program's description).
    fn as_any(&self) -> &dyn std::any::Any;
    /// The game's name in job files (a program's is interned, as reason
    /// codes' words are: see [`crate::reason::intern`]).
    fn name(&self) -> &'static str;
    /// Every key its levels' metrics may hold.
    fn metric_docs(&self) -> &[MetricDoc];
    /// The reason codes it gives beyond the common ones.
    fn reasons(&self) -> &[Code];
    /// Its built-in rating model, as TOML.
    fn rating_model(&self) -> &str;
    /// Its default params, as JSON.
    fn default_params(&self) -> serde_json::Value;
    /// The game with `params` parsed and checked.
    fn prepare(
        self: std::sync::Arc<Self>,
        params: &serde_json::Value,
    ) -> Result<Box<dyn Ready>, GameError>;
    /// Solves every level of a file in the game's text form, each under a
    /// fresh `budget`, telling `each` what became of it.
    fn solve_text(
        &self,
        text: &str,
        budget: &dyn Fn() -> Budget,
        each: &mut dyn FnMut(LevelVerdict),
    ) -> Result<(), GameError>;
    /// Replays `solution` on the level whose JSON is `level_json`: `Ok` when
    /// it wins.
    fn replay_json(&self, level_json: &str, solution: &str) -> Result<(), GameError>;
    /// A level's text form as its JSON form.
    fn text_to_json(&self, text: &str) -> Result<String, GameError>;
    /// Plays `moves` on a level: its text form after them, and whether they win.
    fn play_json(&self, level_json: &str, moves: &str) -> Result<(String, bool), GameError>;
    /// What the agents make of a level (`None`: the game has no agents).
    fn play_agents(&self, c: &Candidate) -> Result<Option<Figures>, CheckError>;
}

/// A game with its params, as an object.
pub trait Ready: Send + Sync {
    /// Runs one seed: generate, verify, accept, rate. Never panics.
    fn run(&self, seed: u64, budget: &Budget) -> Outcome;
    /// Levels outside `band` are refused as `out of band` (a game program's
    /// are judged by the coordinator instead).
    fn set_band(&mut self, _band: Option<crate::rating::Band>) {}
    /// Seeds best run in one call of [`Ready::run_many`] (1: one at a time).
    fn batch(&self) -> usize {
        1
    }
    /// Runs `seeds`, each under a fresh budget, telling `each` its outcome.
    fn run_many(
        &self,
        seeds: &[u64],
        budget: &dyn Fn() -> Budget,
        each: &mut dyn FnMut(u64, Outcome),
    ) {
        for &seed in seeds {
            each(seed, self.run(seed, &budget()));
        }
    }
    /// Checks a level as the coordinator does a worker's: its forms agree,
    /// its solution wins in its moves, it fits the params.
    fn check(&self, level: &Candidate) -> Result<(), CheckError>;
    /// [`Ready::check`] of each level, in one call.
    fn check_many(&self, levels: &[&Candidate]) -> Vec<Result<(), CheckError>> {
        levels.iter().map(|level| self.check(level)).collect()
    }
    /// A level drawn as SVG, when the game draws its own (a program's).
    fn render(&self, _level_json: &str, _layout: &str) -> Option<Result<String, CheckError>> {
        None
    }
    /// Whether [`Ready::made_by`] makes the level again.
    fn regenerates(&self) -> bool;
    /// Checks that `seed` makes the level whose JSON is `level_json`.
    fn made_by(&self, seed: u64, level_json: &str, budget: &Budget) -> Result<(), CheckError>;
    /// The hash of a level's canonical form (`None`: the game keeps every level).
    fn canonical_hash(&self, level_json: &str) -> Result<Option<String>, CheckError>;
    /// `seeds` run in a process of their own, apart from every other run
    /// (a game program); `None` for a built-in game, which has no process.
    fn run_apart(&self, _seeds: &[u64], _budget: &dyn Fn() -> Budget) -> Option<Vec<Outcome>> {
        None
    }
}

/// What differs between two outcomes of one seed, in words; `None` when
/// they are the same verdict. A watchdog timeout or a broken exchange with
/// a program (a crash, a kill) on either side proves nothing: they depend
/// on the machine.
pub fn outcome_difference(a: &Outcome, b: &Outcome) -> Option<String> {
    let said = |o: &Outcome| match &o.result {
        Ok(c) => format!(
            "accepted, level {}",
            &c.level_hash[..c.level_hash.len().min(12)]
        ),
        Err(r) => r.to_string(),
    };
    match (&a.result, &b.result) {
        (Err(Rejection::Timeout), _) | (_, Err(Rejection::Timeout)) => None,
        (Err(r), _) | (_, Err(r)) if r.code() == Some(Code::Broken) => None,
        (Err(x), Err(y)) if x == y => None,
        (Ok(x), Ok(y)) => {
            let mut differs = Vec::new();
            if x.level_json != y.level_json {
                differs.push(format!(
                    "the level ({} and {})",
                    &x.level_hash[..x.level_hash.len().min(12)],
                    &y.level_hash[..y.level_hash.len().min(12)]
                ));
            }
            if x.solution != y.solution || x.moves != y.moves {
                differs.push(format!("the solution ({} and {} moves)", x.moves, y.moves));
            }
            if x.moves_optimal != y.moves_optimal {
                differs.push("moves_optimal".into());
            }
            let keys: std::collections::BTreeSet<&String> =
                x.metrics.keys().chain(y.metrics.keys()).collect();
            for key in keys {
                let (u, v) = (x.metrics.get(key), y.metrics.get(key));
                if u.map(|f| f.to_bits()) != v.map(|f| f.to_bits()) {
                    let show = |f: Option<&f64>| f.map_or("none".into(), |f| f.to_string());
                    differs.push(format!("metric `{key}` ({} and {})", show(u), show(v)));
                }
            }
            (!differs.is_empty()).then(|| differs.join(", "))
        }
        _ => Some(format!("one run: {}; another: {}", said(a), said(b))),
    }
}

/// The registry's entry for game `G`: [`Entry::NEW`].
pub struct Entry<G>(PhantomData<fn() -> G>);

impl<G> Entry<G> {
    /// The entry.
    pub const NEW: Entry<G> = Entry(PhantomData);
}

struct WithParams<G: Game>(G::Params, Model, Option<crate::rating::Band>);

impl<G: Game> Ready for WithParams<G> {
    fn run(&self, seed: u64, budget: &Budget) -> Outcome {
        crate::run::run_game_banded::<G>(&self.0, seed, budget, &self.1, self.2.as_ref())
    }

    fn set_band(&mut self, band: Option<crate::rating::Band>) {
        self.2 = band;
    }

    fn regenerates(&self) -> bool {
        G::REGENERATE
    }

    fn made_by(&self, seed: u64, level_json: &str, budget: &Budget) -> Result<(), CheckError> {
        if !G::REGENERATE {
            return Ok(());
        }
        let made = G::generate(&self.0, &mut crate::rng::Rng::new(seed), budget).map_err(|r| {
            CheckError::NoLevelFromSeed {
                seed,
                why: r.to_string(),
            }
        })?;
        let json =
            serde_json::to_string(&made).map_err(|e| CheckError::Unserializable(e.to_string()))?;
        if json != level_json {
            return Err(CheckError::NotTheSeeds { seed });
        }
        Ok(())
    }

    fn canonical_hash(&self, level_json: &str) -> Result<Option<String>, CheckError> {
        let level = parse_level::<G>(level_json)?;
        Ok(G::canonical(&self.0, &level).map(|c| sha256_hex(c.as_bytes())))
    }

    fn check(&self, c: &Candidate) -> Result<(), CheckError> {
        let level = match G::WHOLE_TEXT.then(|| read_agreeing::<G>(c)).flatten() {
            Some(level) => level,
            None => read_level::<G>(c)?,
        };
        if sha256_hex(c.level_json.as_bytes()) != c.level_hash {
            return Err(CheckError::WrongHash);
        }
        G::replay(&level, &c.solution).map_err(|e| CheckError::SolutionFails(e.to_string()))?;
        let moves = G::solution_moves(&c.solution);
        if moves != c.moves {
            return Err(CheckError::WrongMoves {
                claimed: c.moves,
                replayed: moves,
            });
        }
        G::fits(&self.0, &level, moves).map_err(|e| CheckError::Misfit(e.to_string()))?;
        if G::proves_optimal(&self.0) && !c.moves_optimal {
            return Err(CheckError::Misfit("its moves are not proven fewest".into()));
        }
        let canonical = G::canonical(&self.0, &level).map(|c| sha256_hex(c.as_bytes()));
        if canonical != c.canonical {
            return Err(CheckError::WrongCanonical);
        }
        Ok(())
    }
}

impl<G: Game> Registered for Entry<G> {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn default_params(&self) -> serde_json::Value {
        serde_json::to_value(G::Params::default()).unwrap_or(serde_json::Value::Null)
    }

    fn name(&self) -> &'static str {
        G::NAME
    }

    fn metric_docs(&self) -> &[MetricDoc] {
        G::METRICS
    }

    fn reasons(&self) -> &[Code] {
        G::REASONS
    }

    fn rating_model(&self) -> &str {
        G::RATING_MODEL
    }

    fn prepare(
        self: std::sync::Arc<Self>,
        params: &serde_json::Value,
    ) -> Result<Box<dyn Ready>, GameError> {
        let parsed: G::Params =
            serde_json::from_value(params.clone()).map_err(|e| GameError::Params {
                game: G::NAME,
                message: e.to_string(),
            })?;
        G::validate(&parsed).map_err(|e| GameError::Params {
            game: G::NAME,
            message: e.to_string(),
        })?;
        let model = crate::run::default_model::<G>().map_err(|e| GameError::Params {
            game: G::NAME,
            message: e.to_string(),
        })?;
        Ok(Box::new(WithParams::<G>(parsed, model, None)))
    }

    fn solve_text(
        &self,
        text: &str,
        budget: &dyn Fn() -> Budget,
        each: &mut dyn FnMut(LevelVerdict),
    ) -> Result<(), GameError> {
        for (title, level) in G::from_collection(text)? {
            let started = Instant::now();
            let verdict = match level {
                Err(e) => Verdict::Malformed(e),
                Ok(level) => {
                    let budget = budget();
                    match G::solve(&level, &budget) {
                        Ok(solved) => {
                            let metrics = crate::run::published::<G>(&level, &solved, &budget);
                            Verdict::Solved(solved.map(|_| metrics))
                        }
                        Err(rejection) => Verdict::Failed(rejection),
                    }
                }
            };
            each(LevelVerdict {
                title,
                verdict,
                ms: ms_since(started),
            });
        }
        Ok(())
    }

    fn replay_json(&self, level_json: &str, solution: &str) -> Result<(), GameError> {
        let level: G::Level = serde_json::from_str(level_json).map_err(|e| GameError::Parse {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        G::replay(&level, solution)
    }

    fn play_json(&self, level_json: &str, moves: &str) -> Result<(String, bool), GameError> {
        let level: G::Level = serde_json::from_str(level_json).map_err(|e| GameError::Parse {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        G::play(&level, moves).ok_or_else(|| {
            GameError::External(format!(
                "{} does not show its position between moves; `check` replays a whole solution",
                G::NAME
            ))
        })?
    }

    fn text_to_json(&self, text: &str) -> Result<String, GameError> {
        let level = G::from_text(text)?;
        serde_json::to_string(&level).map_err(|e| GameError::Parse {
            line: 0,
            column: 0,
            message: e.to_string(),
        })
    }

    fn play_agents(&self, c: &Candidate) -> Result<Option<Figures>, CheckError> {
        let level = parse_level::<G>(&c.level_json)?;
        Ok(G::agents(&level, c.moves, &c.metrics, None))
    }
}
