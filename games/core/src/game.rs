//! The common game trait and the runner that turns one seed into an [`Outcome`].
//!
//! The trait knows no game; the games implement it and the games crate's
//! registry lists them by name.

use std::time::Duration;

use crate::clock::Instant;
use crate::reason::{Code, Reason, Refusal, Status};
use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::metrics::{MetricDoc, Metrics};
use crate::rng::Rng;

/// Errors of this crate that are not a verdict on a seed: bad parameters, a
/// level text that does not parse, a solution that does not replay.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum GameError {
    /// No game has this name.
    #[error("unknown game `{name}` (known games: {known})")]
    UnknownGame {
        /// The name asked for.
        name: String,
        /// The names that exist, comma separated.
        known: String,
    },
    /// The game's params do not deserialize or break a rule.
    #[error("invalid params for {game}: {message}")]
    Params {
        /// The game.
        game: &'static str,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A level's text or JSON form does not parse.
    #[error("line {line}, column {column}: {message}")]
    Parse {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// What a game program cannot do (its levels are the program's to check).
    #[error("{0}")]
    External(String),
    /// A seed file's level could not be made again as listed.
    #[error("cannot regenerate: {0}")]
    Regenerate(String),
    /// A solution does not solve the level under the rules.
    /// A level that breaks the game's rules before any move (no monk, a
    /// door to nowhere): no move of it can be played.
    #[error("the level breaks the rules: {0}")]
    Level(String),
    /// Every move of a solution was legal, but the last did not win.
    #[error("the solution's {moves} moves do not win: {message}")]
    NotWon {
        /// The solution's moves.
        moves: usize,
        /// What is left undone.
        message: String,
    },
    /// Shown with the move counted from 1, as a player counts.
    #[error("replay failed at move {}: {message}", index + 1)]
    Replay {
        /// 0-based index of the offending move.
        index: usize,
        /// What happened.
        message: String,
    },
}

impl GameError {
    /// A parse error at a 0-based line and column (reported 1-based).
    pub fn parse_at(line: usize, column: usize, message: String) -> GameError {
        GameError::Parse {
            line: line + 1,
            column: column + 1,
            message,
        }
    }
}

/// Params a game refuses ([`Game::validate`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A param (or a few, named together) outside the values it may take.
    #[error("{param} must be {allowed} (got {got})")]
    OutOfRange {
        /// The param's name, or names (`width and height`).
        param: String,
        /// What it may be (`2..=6`, `positive`, `in (0, 1]`).
        allowed: String,
        /// What it was.
        got: String,
    },
    /// Params each allowed alone that do not go together.
    #[error("{0}")]
    Conflict(String),
}

impl ParamError {
    /// `param` is not `allowed`: it was `got`.
    pub fn out_of_range(
        param: impl Into<String>,
        allowed: impl fmt::Display,
        got: impl fmt::Display,
    ) -> ParamError {
        ParamError::OutOfRange {
            param: param.into(),
            allowed: allowed.to_string(),
            got: got.to_string(),
        }
    }

    /// `value` within `range`, else `param` out of it.
    pub fn check<T: PartialOrd + fmt::Display + fmt::Debug>(
        param: &str,
        value: T,
        range: std::ops::RangeInclusive<T>,
    ) -> Result<(), ParamError> {
        if range.contains(&value) {
            Ok(())
        } else {
            Err(ParamError::out_of_range(
                param,
                format!("{:?}..={:?}", range.start(), range.end()),
                value,
            ))
        }
    }
}

/// Why a level could not have come from a job's params ([`Game::fits`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Misfit {
    /// The level's shape (its size, or what the params fix) is not the job's:
    /// `a 3x3 level` in `a 4x4 job`.
    #[error("{level} in {job}")]
    Shape {
        /// The level's, in words.
        level: String,
        /// The job's, in words.
        job: String,
    },
    /// A count (moves, turns, pushes, boxes) outside the job's bounds.
    #[error("{0}")]
    Count(String),
}

impl From<Rejection> for Misfit {
    /// A count [`within`] refuses.
    fn from(rejection: Rejection) -> Misfit {
        Misfit::Count(
            rejection
                .reason()
                .map_or_else(|| rejection.to_string(), ToString::to_string),
        )
    }
}

/// Refuses a count outside `min..=max`, e.g. `too easy: 3 moves < min_moves 4`
/// or `too long: 90 pushes > max_pushes 80`.
pub fn within(count: u32, unit: &str, min: u32, max: u32) -> Result<(), Rejection> {
    if count < min {
        Err(Rejection::refused(
            Code::TooEasy,
            format!("{count} {unit} < min_{unit} {min}"),
        ))
    } else if count > max {
        Err(Rejection::refused(
            Code::TooLong,
            format!("{count} {unit} > max_{unit} {max}"),
        ))
    } else {
        Ok(())
    }
}

/// Why a seed did not give an accepted level. A function of (game, params, seed)
/// alone, except [`Rejection::Timeout`], which the wall-clock watchdog raises.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    /// The verifier proved that no solution exists.
    Unsolvable,
    /// The wall-clock watchdog fired.
    Timeout,
    /// A rule or budget refused the candidate, or the game failed: which of
    /// the two, the reason's [`Code::status`] says.
    Refused(Reason),
}

impl Rejection {
    /// A refusal of `code` with `detail`.
    pub fn refused(code: Code, detail: impl Into<String>) -> Rejection {
        Rejection::Refused(Reason::new(code, detail))
    }

    /// A search that ran out of its `max_nodes`: `budget exhausted: 200000
    /// nodes`. The seed spent its whole budget, so its record's `nodes` is
    /// `max_nodes`.
    pub fn out_of_nodes(max_nodes: u64) -> Rejection {
        Rejection::refused(Code::BudgetExhausted, format!("{max_nodes} nodes"))
    }

    /// Whether this is [`Rejection::out_of_nodes`] (perhaps with more said
    /// in its detail).
    pub fn is_out_of_nodes(&self) -> bool {
        self.code() == Some(Code::BudgetExhausted)
    }

    /// The status it gives the seed.
    pub fn status(&self) -> Status {
        match self {
            Rejection::Unsolvable => Status::Unsolvable,
            Rejection::Timeout => Status::Timeout,
            Rejection::Refused(reason) => reason.code.status(),
        }
    }

    /// The reason, none for `unsolvable` and `timeout`.
    pub fn reason(&self) -> Option<&Reason> {
        match self {
            Rejection::Unsolvable | Rejection::Timeout => None,
            Rejection::Refused(reason) => Some(reason),
        }
    }

    /// The reason's code.
    pub fn code(&self) -> Option<Code> {
        self.reason().map(|r| r.code)
    }

    /// How the seed is counted.
    pub fn refusal(&self) -> Refusal {
        Refusal {
            status: self.status(),
            code: self.code(),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason() {
            None => write!(f, "{}", self.status()),
            Some(reason) => write!(f, "{}: {reason}", self.status()),
        }
    }
}

/// Limits for one candidate: a deterministic node cap (verdicts depend on it) and
/// a wall-clock deadline (a watchdog only). Both are checked cooperatively.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Search nodes (or generator iterations) allowed; past it the game rejects.
    pub max_nodes: u64,
    /// The wall-clock watchdog: past this instant a game program's answer
    /// is no longer waited for ([`Rejection::Timeout`]). A built-in game
    /// reads it only where its thread's CPU time is not known.
    pub deadline: Option<Instant>,
    /// The CPU-time watchdog of a built-in game: past this much CPU time of
    /// the thread that made the budget (and runs the seed), the game gives
    /// up with [`Rejection::Timeout`]. CPU time, not wall time, so that a
    /// busy machine does not fire it ([`crate::clock::thread_cpu`]).
    pub cpu_deadline: Option<Duration>,
    /// A time limit the caller chose (`pregen solve --time-limit`): past it a
    /// search stops as it does when its nodes run out, and a solver with a
    /// fallback returns the best answer it has. Packs never set it: their
    /// verdicts must not depend on the clock.
    pub time_limit: Option<Instant>,
}

impl Budget {
    /// A budget with a node cap and no deadline.
    pub fn nodes(max_nodes: u64) -> Self {
        Self {
            max_nodes,
            deadline: None,
            cpu_deadline: None,
            time_limit: None,
        }
    }

    /// A node cap plus a watchdog of `watchdog`: what a pack's seed runs
    /// under. Made on the thread that runs the seed, whose CPU time the
    /// built-in games' watchdog counts from now.
    pub fn watched(max_nodes: u64, watchdog: Duration) -> Self {
        Self {
            max_nodes,
            deadline: Some(Instant::now() + watchdog),
            cpu_deadline: crate::clock::thread_cpu().map(|used| used + watchdog),
            time_limit: None,
        }
    }

    /// This budget with another node cap (the same clocks).
    pub fn with_nodes(&self, max_nodes: u64) -> Self {
        Self { max_nodes, ..*self }
    }

    /// Whether the watchdog has fired: the thread's CPU time past its
    /// deadline, or, where that is not known, the wall clock past its own.
    pub fn expired(&self) -> bool {
        match (self.cpu_deadline, crate::clock::thread_cpu()) {
            (Some(deadline), Some(used)) => used >= deadline,
            _ => self.deadline.is_some_and(|d| Instant::now() >= d),
        }
    }

    /// What is left of the watchdog (`None`: there is none): of the CPU
    /// time of the thread that made the budget where it is known, so that
    /// the time the thread waited for a core before handing the seed to a
    /// game program is not taken from the program's watchdog; else of the
    /// wall clock.
    pub fn watchdog_left(&self) -> Option<Duration> {
        match (self.cpu_deadline, crate::clock::thread_cpu()) {
            (Some(deadline), Some(used)) => Some(deadline.saturating_sub(used)),
            _ => self
                .deadline
                .map(|d| d.saturating_duration_since(Instant::now())),
        }
    }

    /// Whether the caller's time limit has passed.
    pub fn out_of_time(&self) -> bool {
        self.time_limit.is_some_and(|d| Instant::now() >= d)
    }
}

/// The levels of a collection file in order: title, and the level or why its
/// text is not one.
pub type Collection<L> = Vec<(String, Result<L, GameError>)>;

/// A file of levels in the form of a pack's release files, for games whose
/// text form holds no blank line: levels apart by blank lines and `;`
/// comment lines. A level's title is the ID of its `; id ID ...` comment,
/// else the last comment before it (`; TITLE`), else `level N`. A level's parse error names the file's line; `Err` only
/// when the file holds no level.
pub fn collection_of_blocks<L>(
    text: &str,
    parse: impl Fn(&str) -> Result<L, GameError>,
) -> Result<Collection<L>, GameError> {
    let mut levels = Vec::new();
    let mut id: Option<String> = None;
    let mut note: Option<String> = None;
    let mut block = String::new();
    let mut first_line = 0;
    let mut finish = |block: &mut String,
                      id: &mut Option<String>,
                      note: &mut Option<String>,
                      first_line: usize| {
        if block.is_empty() {
            return;
        }
        let n = levels.len() + 1;
        let title = id
            .take()
            .or_else(|| note.take())
            .unwrap_or_else(|| format!("level {n}"));
        let level = parse(block).map_err(|e| match e {
            GameError::Parse {
                line,
                column,
                message,
            } => GameError::Parse {
                line: line + first_line,
                column,
                message,
            },
            other => other,
        });
        levels.push((title, level));
        block.clear();
    };
    for (i, line) in text.lines().enumerate() {
        let comment = line.trim_start().starts_with(';');
        if comment || line.trim().is_empty() {
            finish(&mut block, &mut id, &mut note, first_line);
            if let Some(rest) = line.trim_start().strip_prefix(';') {
                let mut words = rest.split_whitespace();
                if words.next() == Some("id") {
                    id = words.next().map(String::from);
                } else if !rest.trim().is_empty() {
                    note = Some(rest.trim().to_string());
                }
            }
            continue;
        }
        if block.is_empty() {
            first_line = i;
        }
        block.push_str(line);
        block.push('\n');
    }
    finish(&mut block, &mut id, &mut note, first_line);
    if levels.is_empty() {
        return Err(GameError::parse_at(0, 0, "no level in the file".into()));
    }
    Ok(levels)
}

/// A verifier's answer for a solvable level, with the game's own typed
/// analysis (`A`) that `accept`, `rate` and `metrics` read.
#[derive(Debug, Clone, PartialEq)]
pub struct Solved<A> {
    /// The solution in the game's notation.
    pub solution: String,
    /// Its move count.
    pub moves: u32,
    /// Whether `moves` is proven optimal (false: best found within the budget).
    pub optimal: bool,
    /// Search nodes expanded.
    pub nodes: u64,
    /// What the verifier found out about the level, typed per game.
    pub analysis: A,
}

impl<A> Solved<A> {
    /// The same answer with its analysis mapped, e.g. to its published [`Metrics`].
    pub fn map<B>(self, f: impl FnOnce(A) -> B) -> Solved<B> {
        Solved {
            solution: self.solution,
            moves: self.moves,
            optimal: self.optimal,
            nodes: self.nodes,
            analysis: f(self.analysis),
        }
    }
}

/// An accepted level, with everything the pack stores about it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Candidate {
    /// Rating, higher is harder.
    pub difficulty: f64,
    /// Move count of the stored solution.
    pub moves: u32,
    /// Whether `moves` is optimal.
    pub moves_optimal: bool,
    /// The text layout (one row per line).
    pub layout: String,
    /// The structured JSON form.
    pub level_json: String,
    /// The solution in the game's notation.
    pub solution: String,
    /// Named metrics (rating inputs and search figures).
    pub metrics: Metrics,
    /// SHA-256 of `level_json`, lower-case hex: the golden identity of the level.
    pub level_hash: String,
    /// SHA-256 of the level's canonical form, for games that reject
    /// duplicates within a pack (equal canonical forms: the lowest seed wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
}

/// What one seed gave, with its costs.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The accepted level or why there is none.
    pub result: Result<Candidate, Rejection>,
    /// Milliseconds spent generating.
    pub generate_ms: f64,
    /// Milliseconds spent verifying.
    pub solve_ms: f64,
    /// Search nodes spent verifying.
    pub nodes: u64,
}

/// The common trait of every generator.
pub trait Game: 'static {
    /// The game's parameters (deserialized from the job's `[params]` table).
    type Params: Serialize + DeserializeOwned + Default + Clone + fmt::Debug + Send + Sync + 'static;
    /// A level: serialized as the game's JSON form.
    type Level: Serialize + DeserializeOwned + Clone + PartialEq + fmt::Debug;
    /// What the verifier learns about a level: the inputs of `accept` and `rate`.
    type Analysis: fmt::Debug;

    /// The game's name in job files.
    const NAME: &'static str;

    /// Every key [`Game::metrics`] may publish (a test holds the two together).
    const METRICS: &'static [MetricDoc];

    /// The reason codes the game gives beyond [`Code::COMMON`], each numbered
    /// apart from every other game's.
    const REASONS: &'static [Code] = &[];

    /// Checks params beyond what deserialization checks.
    fn validate(params: &Self::Params) -> Result<(), ParamError>;

    /// Builds a level from the random stream, or a typed rejection.
    fn generate(
        params: &Self::Params,
        rng: &mut Rng,
        budget: &Budget,
    ) -> Result<Self::Level, Rejection>;

    /// Verifies a level independently of how it was built.
    fn solve(level: &Self::Level, budget: &Budget) -> Result<Solved<Self::Analysis>, Rejection>;

    /// Accept or reject a verified level against the params (move bounds...).
    fn accept(
        params: &Self::Params,
        level: &Self::Level,
        solved: &Solved<Self::Analysis>,
    ) -> Result<(), Rejection>;

    /// The built-in rating model (TOML, `games/models/<game>.toml`): the
    /// difficulty, higher is harder, from the level's published metrics and
    /// its moves ([`crate::rating::Model`]).
    const RATING_MODEL: &'static str;

    /// The analysis in its published form: the pack's `metrics` map.
    fn metrics(level: &Self::Level, solved: &Solved<Self::Analysis>) -> Metrics;

    /// What the agents make of an accepted level ([`crate::agents`]), from
    /// its solution's `moves` and published `metrics` (which set how long a
    /// try may be): their [`crate::agents::METRICS`] join the level's
    /// metrics, so a rating model may use them. `None`: the game has no
    /// agents, or `until` (the caller's time limit, [`Budget::time_limit`])
    /// passed before they finished.
    fn agents(
        _level: &Self::Level,
        _moves: u32,
        _metrics: &Metrics,
        _until: Option<Instant>,
    ) -> Option<crate::agents::Figures> {
        None
    }

    /// The text layout.
    fn to_text(level: &Self::Level) -> String;

    /// Parses the text layout.
    fn from_text(text: &str) -> Result<Self::Level, GameError>;

    /// Whether the text layout holds the whole level: `from_text` of a
    /// level's `to_text` gives the level back. The coordinator's check then
    /// reads a level from its layout rather than its JSON, which costs less.
    const WHOLE_TEXT: bool = false;

    /// Whether making a level costs little beside verifying it: the
    /// coordinator then makes each worker's level again from its seed and
    /// refuses one the seed does not make (another seed's real level, say).
    /// For the others a level hash met at two seeds has both seeds run by
    /// the coordinator.
    const REGENERATE: bool = false;

    /// Reads a file of levels with their titles, each level on its own (one
    /// malformed level does not hide the others): by default one level,
    /// untitled. `Err` only when the file holds no level at all.
    fn from_collection(text: &str) -> Result<Collection<Self::Level>, GameError> {
        Ok(vec![(String::new(), Self::from_text(text))])
    }

    /// Plays `solution` under the rules and checks that it wins.
    fn replay(level: &Self::Level, solution: &str) -> Result<(), GameError>;

    /// The position `moves` leave, each move legal, as text (the board in
    /// the level's text form, or the position in words above it), and
    /// whether it is won: what a player sees move by move. `None`: the game
    /// does not show its position between moves (`replay` still checks a
    /// whole solution).
    fn play(level: &Self::Level, moves: &str) -> Option<Result<(String, bool), GameError>> {
        let _ = (level, moves);
        None
    }

    /// The moves of a solution as the game counts them (`Solved::moves`):
    /// by default one per whitespace-separated token.
    fn solution_moves(solution: &str) -> u32 {
        solution.split_whitespace().count() as u32
    }

    /// Whether a level and its solution of `moves` could have come from
    /// `params` (sizes, counts, move bounds): what a coordinator can check of
    /// a worker's level without solving it again.
    fn fits(params: &Self::Params, level: &Self::Level, moves: u32) -> Result<(), Misfit>;

    /// Whether `params` accept only levels whose move count is proven fewest
    /// (then a level marked `moves_optimal = false` does not fit them).
    fn proves_optimal(_params: &Self::Params) -> bool {
        false
    }

    /// A text equal for two levels that a pack made with `params` should
    /// hold only once (e.g. up to symmetry); `None`: the game keeps every
    /// accepted level.
    fn canonical(_params: &Self::Params, _level: &Self::Level) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_param_out_of_range_names_the_param_its_range_and_its_value() {
        let err = ParamError::check("pairs", 7u8, 1..=5).expect_err("out of range");
        assert_eq!(err.to_string(), "pairs must be 1..=5 (got 7)");
        assert!(matches!(err, ParamError::OutOfRange { ref param, .. } if param == "pairs"));
        let err = ParamError::check("density", 0.7, 0.0..=0.5).expect_err("out of range");
        assert_eq!(err.to_string(), "density must be 0.0..=0.5 (got 0.7)");
        assert_eq!(ParamError::check("pairs", 3u8, 1..=5), Ok(()));
    }

    #[test]
    fn a_misfit_says_what_the_level_and_the_job_are() {
        let shape = Misfit::Shape {
            level: "a 3x3 level".into(),
            job: "a 4x4 job".into(),
        };
        assert_eq!(shape.to_string(), "a 3x3 level in a 4x4 job");
        let count = Misfit::from(within(2, "moves", 3, 9).expect_err("too few"));
        assert_eq!(count.to_string(), "too easy: 2 moves < min_moves 3");
    }

    /// Time the thread spends off a core (here asleep, on a busy machine
    /// waiting for one) before it hands a seed to a game program is not
    /// taken from the program's watchdog; CPU time it spends is.
    #[cfg(unix)]
    #[test]
    fn a_watchdog_left_counts_the_threads_cpu_time_not_its_wall_time() {
        let watchdog = Duration::from_millis(200);
        let budget = Budget::watched(1, watchdog);
        std::thread::sleep(Duration::from_millis(120));
        let left = budget.watchdog_left().expect("a watchdog");
        assert!(left > Duration::from_millis(180), "{left:?}");
        let until = crate::clock::thread_cpu().expect("known") + Duration::from_millis(60);
        while crate::clock::thread_cpu().expect("known") < until {
            std::hint::black_box(0u64);
        }
        let left = budget.watchdog_left().expect("a watchdog");
        assert!(left <= Duration::from_millis(140), "{left:?}");
        assert_eq!(Budget::nodes(1).watchdog_left(), None);
    }
}
