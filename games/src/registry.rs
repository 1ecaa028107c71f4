//! The games by name: the one list that maps a job's `game` to code.
//!
//! [`GAMES`] holds one entry per game; adding a game is its folder plus one
//! line there. [`GameKind`] is a game chosen by name; [`GameKind::prepare`]
//! parses and checks its params once and gives a [`PreparedGame`], which a
//! worker runs for every seed of a stratum.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, LazyLock};

use crate::agents::Figures;
use crate::cube::Cube;
use crate::doors::Doors;
use crate::dungeon::Dungeon;
use crate::rating::{Model, RatingError};
use crate::sokoban::Sokoban;
use crate::synthetic::Synthetic;
use crate::tilt::Tilt;
use crate::{Budget, Candidate, Code, Game, GameError, MetricDoc, Outcome};
pub use pregen_game_core::registration::{
    CheckError, Entry, LevelVerdict, NotDeterministic, Ready, Registered, Verdict,
    outcome_difference,
};

/// Every game, in name order.
static GAMES: LazyLock<[Arc<dyn Registered>; 6]> = LazyLock::new(|| {
    [
        Arc::new(Entry::<Cube>::NEW),
        Arc::new(Entry::<Doors>::NEW),
        Arc::new(Entry::<Dungeon>::NEW),
        Arc::new(Entry::<Sokoban>::NEW),
        Arc::new(Entry::<Synthetic>::NEW),
        Arc::new(Entry::<Tilt>::NEW),
    ]
});

/// A game chosen by name, its params not yet given: a handle on the
/// registry's entry (a game program's lives while a handle does).
#[derive(Clone)]
pub struct GameKind(pub(crate) Arc<dyn Registered>);

impl GameKind {
    /// Every built-in game, in name order.
    pub fn all() -> impl Iterator<Item = GameKind> {
        GAMES.iter().map(|g| GameKind(g.clone()))
    }

    /// Looks a game up by its job-file name.
    pub fn from_name(name: &str) -> Result<Self, GameError> {
        Self::all()
            .find(|g| g.name() == name)
            .ok_or_else(|| GameError::UnknownGame {
                name: name.to_string(),
                known: Self::all().map(|g| g.name()).collect::<Vec<_>>().join(", "),
            })
    }

    /// The registered game `G`.
    pub fn of<G: Game>() -> Self {
        Self::from_name(G::NAME).unwrap_or_else(|_| panic!("{} is not in GAMES", G::NAME))
    }

    /// The job-file name.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// Every key the game's `metrics` map may hold, with unit and meaning.
    pub fn metric_docs(&self) -> &[MetricDoc] {
        self.0.metric_docs()
    }

    /// Parses and checks a params object (unknown fields are refused) into
    /// the game ready to run seeds.
    pub fn prepare(&self, params: &serde_json::Value) -> Result<PreparedGame, GameError> {
        self.0.clone().prepare(params).map(|ready| PreparedGame {
            kind: self.clone(),
            ready,
        })
    }

    /// The params' defaults, as a JSON object.
    pub fn default_params(&self) -> serde_json::Value {
        self.0.default_params()
    }

    /// Checks a params object for this game.
    pub fn validate_params(&self, params: &serde_json::Value) -> Result<(), GameError> {
        self.prepare(params).map(drop)
    }

    /// Solves every level of a file in the game's text form (one level, or a
    /// collection for games that have one), whoever made it, in file order:
    /// `budget` is asked for each level's budget as its search starts, and
    /// `each` hears of each level as soon as it is done. `Err` only when the
    /// file holds no level at all; a malformed level is one verdict.
    pub fn solve_text(
        &self,
        text: &str,
        budget: &dyn Fn() -> Budget,
        each: &mut dyn FnMut(LevelVerdict),
    ) -> Result<(), GameError> {
        self.0.solve_text(text, budget, each)
    }

    /// Replays a stored level (JSON form) with its solution.
    pub fn replay_json(&self, level_json: &str, solution: &str) -> Result<(), GameError> {
        self.0.replay_json(level_json, solution)
    }

    /// The board after `moves` on the level of `level_json`, in the game's
    /// text form, and whether it is won: each move must be legal. A game
    /// that does not show its state between moves says so.
    pub fn play_json(&self, level_json: &str, moves: &str) -> Result<(String, bool), GameError> {
        self.0.play_json(level_json, moves)
    }

    /// The JSON form of a level read from its text form (a release file's
    /// level): what its `level_hash` hashes. A game program's text form is
    /// its own, so for it this is an error.
    pub fn text_to_json(&self, text: &str) -> Result<String, GameError> {
        self.0.text_to_json(text)
    }

    /// What the agents make of a stored level ([`crate::agents`]): the
    /// figures its metrics hold, computed again (`None`: no agents).
    pub fn play_agents(&self, c: &Candidate) -> Result<Option<Figures>, CheckError> {
        self.0.play_agents(c)
    }

    /// The reason codes the game gives beyond [`Code::COMMON`].
    pub fn reasons(&self) -> &[Code] {
        self.0.reasons()
    }

    /// The code this game gives under `word`: a common one or its own.
    pub fn code(&self, word: &str) -> Option<Code> {
        Code::common(word).or_else(|| self.reasons().iter().copied().find(|c| c.as_str() == word))
    }

    /// Whether the game may give reasons of `code`.
    pub fn gives(&self, code: Code) -> bool {
        Code::COMMON.contains(&code) || self.reasons().contains(&code)
    }

    /// The text of the game's built-in rating model.
    pub fn model_text(&self) -> &str {
        self.0.rating_model()
    }

    /// Whether the game is a program run over the game protocol
    /// ([`crate::external`]) rather than compiled in.
    pub fn is_external(&self) -> bool {
        self.0.is_external()
    }

    /// The game's built-in rating model (`games/models/<game>.toml`).
    pub fn default_model(&self) -> Result<Model, RatingError> {
        self.parse_model(self.0.rating_model())
    }

    /// Reads a rating model for this game from its TOML text, its features
    /// checked against the game's metrics.
    pub fn parse_model(&self, text: &str) -> Result<Model, RatingError> {
        Model::parse(text, self.name(), self.0.metric_docs())
    }
}

/// The code of the first game's that `find` finds: the common codes and
/// the built-in games' first, then (only if none is) those game programs
/// have declared in this process.
fn find_code(find: impl Fn(&Code) -> bool) -> Option<Code> {
    let built_in = Code::COMMON
        .iter()
        .chain(GAMES.iter().flat_map(|g| g.reasons()))
        .find(|c| find(c));
    built_in
        .copied()
        .or_else(|| pregen_game_programs::find_declared(find))
}

/// The code numbered `number`: a common one, or one of a built-in game or of
/// a game program started in this process (the wire and the commit log
/// carry codes by number).
pub fn code_of_number(number: u32) -> Option<Code> {
    find_code(|c| c.number() == number)
}

/// The code whose word is `word`, as [`code_of_number`] finds codes (commit
/// logs before typed reasons stored words).
pub fn code_of_word(word: &str) -> Option<Code> {
    find_code(|c| c.as_str() == word)
}

impl PartialEq for GameKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for GameKind {}

impl fmt::Debug for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GameKind({})", self.name())
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A game with its params parsed and checked: runs one seed at a time, from
/// any thread.
pub struct PreparedGame {
    pub(crate) kind: GameKind,
    pub(crate) ready: Box<dyn Ready>,
}

impl PreparedGame {
    /// The game.
    pub fn kind(&self) -> &GameKind {
        &self.kind
    }

    /// This game with its levels refused when outside `band`, as early as
    /// their rating is known ([`crate::run::run_game_banded`]): what a
    /// worker runs for a banded stratum whose rating model is the game's
    /// built-in one.
    pub fn with_band(mut self, band: Option<crate::rating::Band>) -> PreparedGame {
        self.ready.set_band(band);
        self
    }

    /// Runs one seed: generate, verify, accept, rate. Never panics.
    pub fn run(&self, seed: u64, budget: &Budget) -> Outcome {
        self.ready.run(seed, budget)
    }

    /// How many seeds [`PreparedGame::run_many`] best takes at once now: 1
    /// for a built-in game; for a game program, as many as make a few
    /// milliseconds of its work (its requests are pipelined).
    pub fn batch(&self) -> usize {
        self.ready.batch().max(1)
    }

    /// Runs `seeds` one after the other, as [`PreparedGame::run`] would,
    /// each under a budget `budget` makes when its turn comes; each outcome
    /// goes to `each` as soon as it is known. A game program is sent them
    /// all at once.
    pub fn run_many(
        &self,
        seeds: &[u64],
        budget: &dyn Fn() -> Budget,
        each: &mut dyn FnMut(u64, Outcome),
    ) {
        self.ready.run_many(seeds, budget, each);
    }

    /// [`PreparedGame::check`] of each of `levels`, in order (a game
    /// program is sent them all at once).
    pub fn check_many(&self, levels: &[&Candidate]) -> Vec<Result<(), CheckError>> {
        catch_unwind(AssertUnwindSafe(|| self.ready.check_many(levels)))
            .unwrap_or_else(|_| vec![Err(CheckError::Panicked("check")); levels.len()])
    }

    /// Checks a level someone else says this game made with these params,
    /// without solving it again: the JSON form parses and is canonical, the
    /// hash is its hash, the text layout is the one the game renders, the
    /// level is well-formed (its text form reads back), it fits the params,
    /// the solution replays to a win in `moves` moves, and the canonical
    /// form is its own. Never panics.
    pub fn check(&self, level: &Candidate) -> Result<(), CheckError> {
        catch_unwind(AssertUnwindSafe(|| self.ready.check(level)))
            .unwrap_or(Err(CheckError::Panicked("check")))
    }

    /// The game's own picture of a level (an SVG document, unchecked), for
    /// a game program that draws its levels; `None` for the others, whose
    /// levels are drawn from their text form.
    pub fn render(&self, level_json: &str, layout: &str) -> Option<Result<String, CheckError>> {
        catch_unwind(AssertUnwindSafe(|| self.ready.render(level_json, layout)))
            .unwrap_or(Some(Err(CheckError::Panicked("picture"))))
    }

    /// Runs `seeds` twice, at once, in two processes of a game program
    /// (the program's pool, and a process started for the purpose), and
    /// names the first seed answered two ways, with what differs. A
    /// built-in game is deterministic by construction: `Ok` without a run.
    pub fn probe_determinism(
        &self,
        seeds: &[u64],
        budget: &(dyn Fn() -> Budget + Sync),
    ) -> Result<(), NotDeterministic> {
        if !self.kind.is_external() {
            return Ok(());
        }
        self.run_compared(seeds, budget).map(drop)
    }

    /// Runs `seed` as [`PreparedGame::run`] does and, for a game program,
    /// at once once more in a process of its own: a seed answered two ways
    /// is the program's fault. A built-in game runs it once.
    pub fn run_twice(
        &self,
        seed: u64,
        budget: &(dyn Fn() -> Budget + Sync),
    ) -> Result<Outcome, NotDeterministic> {
        match self.run_compared(&[seed], budget)?.pop() {
            Some((_, outcome)) => Ok(outcome),
            None => Ok(self.run(seed, &budget())),
        }
    }

    /// `seeds` run through the game (a program's pool) and, at once, in a
    /// process of their own (a game program only): the first run's
    /// outcomes by seed, each compared with the second run's.
    fn run_compared(
        &self,
        seeds: &[u64],
        budget: &(dyn Fn() -> Budget + Sync),
    ) -> Result<Vec<(u64, Outcome)>, NotDeterministic> {
        let (first, second) = std::thread::scope(|scope| {
            let apart = scope.spawn(|| self.ready.run_apart(seeds, budget));
            let mut first = Vec::with_capacity(seeds.len());
            self.ready
                .run_many(seeds, budget, &mut |seed, o| first.push((seed, o)));
            (first, apart.join().ok().flatten())
        });
        let second: std::collections::HashMap<u64, Outcome> = seeds
            .iter()
            .copied()
            .zip(second.unwrap_or_default())
            .collect();
        for (seed, one) in &first {
            if let Some(differs) = second
                .get(seed)
                .and_then(|other| outcome_difference(one, other))
            {
                return Err(NotDeterministic {
                    seed: *seed,
                    differs,
                });
            }
        }
        Ok(first)
    }

    /// Whether [`PreparedGame::made_by`] makes the level again ([`Game::REGENERATE`]).
    pub fn regenerates(&self) -> bool {
        self.ready.regenerates()
    }

    /// Checks that `seed` makes the level whose JSON is `level_json`, by
    /// making it again, for games whose generation is cheap
    /// ([`Game::REGENERATE`]; for the others, `Ok` without a look). Never
    /// panics.
    pub fn made_by(&self, seed: u64, level_json: &str, budget: &Budget) -> Result<(), CheckError> {
        catch_unwind(AssertUnwindSafe(|| {
            self.ready.made_by(seed, level_json, budget)
        }))
        .unwrap_or(Err(CheckError::Panicked("generator")))
    }

    /// The hash of a level's canonical form under these params (`None` for
    /// games that keep every level), as [`Candidate::canonical`] holds it.
    pub fn canonical_hash(&self, level_json: &str) -> Result<Option<String>, CheckError> {
        catch_unwind(AssertUnwindSafe(|| self.ready.canonical_hash(level_json)))
            .unwrap_or(Err(CheckError::Panicked("canonical form")))
    }
}

impl fmt::Debug for PreparedGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PreparedGame({})", self.kind.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in code, common or a game's own, has a number and a word
    /// of its own, and reads back from either; each game gives only the
    /// common codes and its own.
    #[test]
    fn every_code_is_apart_and_reads_back() {
        let mut all: Vec<Code> = Code::COMMON.to_vec();
        for game in GameKind::all() {
            for &code in game.reasons() {
                assert!(game.gives(code), "{game}: {code}");
                assert_eq!(game.code(code.as_str()), Some(code));
                all.push(code);
            }
            for other in GameKind::all().filter(|o| *o != game) {
                for &code in other.reasons() {
                    assert!(!game.gives(code), "{game} gives {other}'s {code}");
                }
            }
        }
        for &code in &all {
            assert_ne!(code.number(), 0);
            assert!(!code.as_str().contains(':'), "{code}");
            assert_eq!(code_of_number(code.number()), Some(code));
            assert_eq!(code_of_word(code.as_str()), Some(code));
        }
        let mut numbers: Vec<u32> = all.iter().map(|c| c.number()).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), all.len(), "two codes share a number");
        let mut words: Vec<&str> = all.iter().map(|c| c.as_str()).collect();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), all.len(), "two codes share a word");
        assert_eq!(code_of_number(999), None);
    }

    #[test]
    fn every_games_built_in_model_reads_and_rates_its_levels() {
        for kind in GameKind::all() {
            let model = kind
                .default_model()
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(model.game, kind.name());
            assert_eq!(model.sha256().len(), 64);
            let game = kind
                .prepare(&serde_json::json!({}))
                .expect("default params");
            let level = (0..200)
                .find_map(|seed| game.run(seed, &Budget::nodes(2_000_000)).result.ok())
                .expect("an accepted level");
            let features = crate::rating::Model::features(&level.metrics, level.moves);
            let rated = model.rate(&features).expect("rated");
            assert_eq!(
                rated, level.difficulty,
                "{kind}: the pipeline rates by the model"
            );
            let sum: f64 = model.contributions(&features).expect("terms").iter().sum();
            assert!(
                (model.bias + sum - rated).abs() < 1e-5,
                "{kind}: the terms add up"
            );
        }
    }

    /// Every game shows its position move by move: each prefix of a
    /// solution is legal and shown, only the whole of it is won, and a move
    /// that is not legal is named.
    #[test]
    fn every_game_plays_its_solution_move_by_move() {
        for game in GameKind::all().filter(|g| g.name() != "synthetic") {
            let prepared = game.prepare(&game.default_params()).expect("defaults");
            let level = (0..200u64)
                .find_map(|seed| prepared.run(seed, &Budget::nodes(200_000)).result.ok())
                .unwrap_or_else(|| panic!("{game}: no accepted seed"));
            let spaced = level.solution.trim().contains(char::is_whitespace);
            let tokens: Vec<String> = if spaced {
                level
                    .solution
                    .split_whitespace()
                    .map(String::from)
                    .collect()
            } else {
                level.solution.chars().map(String::from).collect()
            };
            let join = |k: usize| tokens[..k].join(if spaced { " " } else { "" });
            for k in 0..=tokens.len() {
                let (text, won) = game
                    .play_json(&level.level_json, &join(k))
                    .unwrap_or_else(|e| panic!("{game} after {k} moves: {e}"));
                assert!(!text.trim().is_empty(), "{game}");
                assert_eq!(
                    won,
                    k == tokens.len(),
                    "{game} after {k} of {} moves",
                    tokens.len()
                );
            }
            let wrong = if spaced { "nonsense" } else { "?" };
            let refused = game
                .play_json(&level.level_json, wrong)
                .expect_err("not a move");
            assert!(
                matches!(refused, GameError::Replay { index: 0, .. }),
                "{game}: {refused}"
            );
        }
    }

    #[test]
    fn every_game_is_found_by_its_name() {
        let names: Vec<&str> = GameKind::all().map(|g| g.name()).collect();
        assert_eq!(
            names,
            ["cube", "doors", "dungeon", "sokoban", "synthetic", "tilt"]
        );
        for name in names {
            assert_eq!(GameKind::from_name(name).map(|g| g.name()), Ok(name));
        }
        let err = GameKind::from_name("chess").expect_err("unknown");
        assert!(
            err.to_string().contains("known games: cube, doors"),
            "{err}"
        );
    }

    /// The first accepted level of each game (default params), with its game.
    fn first_levels() -> Vec<(PreparedGame, Candidate)> {
        GameKind::all()
            .map(|kind| {
                let game = kind
                    .prepare(&serde_json::json!({}))
                    .expect("default params");
                let level = (0..200)
                    .find_map(|seed| game.run(seed, &Budget::nodes(2_000_000)).result.ok())
                    .expect("an accepted level in 200 seeds");
                (game, level)
            })
            .collect()
    }

    /// Golden agents: what every agent makes of each game's first level of
    /// its default params. A change here changes every pack's metrics (and
    /// a rating that uses them): bump `GENERATOR_VERSION` with it.
    #[test]
    fn golden_agents() {
        let got: Vec<(&str, Vec<f64>)> = first_levels()
            .into_iter()
            .filter(|(game, _)| game.kind().name() != "synthetic")
            .map(|(game, level)| {
                let figures: Vec<f64> = crate::agents::METRICS
                    .iter()
                    .map(|m| level.metrics[m.name])
                    .collect();
                (game.kind().name(), figures)
            })
            .collect();
        let expected: Vec<(&str, Vec<f64>)> = GOLDEN_AGENTS
            .iter()
            .map(|(name, figures)| (*name, figures.to_vec()))
            .collect();
        assert_eq!(got, expected, "golden agents changed");
    }

    /// (game, agent_random_wins, agent_random_moves, agent_greedy_wins,
    /// agent_greedy_moves, agent_search_wins, agent_search_nodes).
    const GOLDEN_AGENTS: &[(&str, [f64; 6])] = &[
        ("cube", [0.125, 22.875, 0.375, 20.875, 1.0, 83.0]),
        ("doors", [0.3125, 12.8125, 1.0, 7.875, 1.0, 8.0]),
        ("dungeon", [1.0, 8.0, 1.0, 8.0, 1.0, 8.0]),
        ("sokoban", [0.0, 51.0, 0.0, 51.0, 1.0, 175.0]),
        ("tilt", [0.375, 14.75, 0.625, 12.875, 1.0, 10.0]),
    ];

    /// No agent wins in fewer moves than the solver proved fewest: the
    /// agents play the game's rules, not an easier game. On each game's
    /// first 30 levels a try all of whose tries won has mean moves at least
    /// the optimum, and the agents' figures are those the level's metrics hold.
    #[test]
    fn no_agent_beats_the_solver() {
        let budget = Budget::nodes(2_000_000);
        for kind in GameKind::all().filter(|k| k.name() != "synthetic") {
            let game = kind.prepare(&serde_json::json!({})).expect("defaults");
            let mut seen = 0;
            for seed in 0..3_000 {
                let Ok(level) = game.run(seed, &budget).result else {
                    continue;
                };
                let figures = kind
                    .play_agents(&level)
                    .expect("reads back")
                    .expect("agents");
                for (key, value) in figures.metrics() {
                    assert_eq!(level.metrics[&key], value, "{kind} seed {seed}: {key}");
                }
                // Sokoban's agents push; dungeon's do not count the final
                // walk out (the solution's `exit`); the others make the
                // solution's moves.
                let fewest = match kind.name() {
                    "sokoban" => level.metrics["pushes"],
                    "dungeon" => f64::from(level.moves - 1),
                    _ => f64::from(level.moves),
                };
                for tries in [figures.random, figures.greedy] {
                    if level.moves_optimal && tries.won == tries.tries {
                        assert!(
                            tries.mean_moves() >= fewest,
                            "{kind} seed {seed}: {tries:?} beat {fewest}"
                        );
                    }
                }
                seen += 1;
                if seen == 30 {
                    break;
                }
            }
            assert_eq!(seen, 30, "{kind}: 30 levels");
        }
    }

    /// `pregen solve` reads a pack's own release files: every level of a
    /// file in their form, titled by its ID, a broken one named by the
    /// file's line.
    #[test]
    fn every_game_reads_its_release_files_as_collections() {
        for (game, level) in first_levels() {
            let name = game.kind().name();
            let file = format!(
                "; pack p game {name} tier 01: 2 levels\n\n; level 1\n; id {name}-1 seed 1\n{}\n\
                 ; level 2\n; id {name}-2 seed 2\n{}",
                level.layout.trim_end(),
                level.layout.trim_end(),
            );
            let mut seen = Vec::new();
            game.kind()
                .solve_text(&file, &|| Budget::nodes(2_000_000), &mut |v| {
                    seen.push((v.title.clone(), matches!(v.verdict, Verdict::Solved(_))));
                })
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                seen,
                [(format!("{name}-1"), true), (format!("{name}-2"), true)],
                "{name}"
            );
        }
    }

    #[test]
    fn a_level_text_with_more_after_it_is_refused() {
        let cube = GameKind::from_name("cube").expect("cube");
        let (_, level) = first_levels()
            .into_iter()
            .find(|(g, _)| *g.kind() == cube)
            .expect("a cube level");
        let text = format!("{}garbage\n", level.layout);
        let err = crate::cube::Cube::from_text(&text).expect_err("trailing text");
        assert!(
            err.to_string().contains("line 14") && err.to_string().contains("text after"),
            "{err}"
        );
        let rows = "#".repeat(5) + "\n";
        let err = crate::tilt::Tilt::from_text(&rows.repeat(300)).expect_err("too tall");
        assert!(err.to_string().contains("more than 8 grid rows"), "{err}");
    }

    #[test]
    fn a_games_own_levels_pass_its_check_and_tampered_ones_do_not() {
        for (game, level) in first_levels() {
            let name = game.kind().name();
            assert_eq!(game.check(&level), Ok(()), "{name}");
            type Tamper = (&'static str, fn(&mut Candidate));
            let tampered: [Tamper; 7] = [
                ("hash", |c| c.level_hash = crate::sha256_hex(b"other")),
                ("layout", |c| c.layout.push('#')),
                ("json", |c| c.level_json.insert(0, ' ')),
                ("moves", |c| c.moves += 1),
                ("solution", |c| {
                    c.solution.pop();
                }),
                ("canonical", |c| c.canonical = Some("x".into())),
                ("not json", |c| c.level_json = "[1, 2]".into()),
            ];
            for (what, tamper) in tampered {
                let mut bad = level.clone();
                tamper(&mut bad);
                if bad == level {
                    continue; // e.g. no canonical form to change
                }
                assert!(game.check(&bad).is_err(), "{name}: tampered {what} passed");
            }
        }
    }

    /// The check reads a level from its layout when the game's text form is
    /// whole and the layout and the JSON agree: a level of a game that says
    /// so does (and one of a game that does not say so does not, or the
    /// game should say so), and one whose JSON names another level does not.
    #[test]
    fn a_level_is_read_from_its_layout_when_the_text_is_whole() {
        fn reads<G: Game>(c: &Candidate) -> (bool, bool) {
            (
                pregen_game_core::registration::read_agreeing::<G>(c).is_some(),
                G::WHOLE_TEXT,
            )
        }
        for (game, level) in first_levels() {
            let name = game.kind().name();
            let agrees: fn(&Candidate) -> (bool, bool) = match name {
                "cube" => reads::<Cube>,
                "doors" => reads::<Doors>,
                "dungeon" => reads::<Dungeon>,
                "sokoban" => reads::<Sokoban>,
                "synthetic" => reads::<Synthetic>,
                "tilt" => reads::<Tilt>,
                other => panic!("a game this test does not know: {other}"),
            };
            let (agreed, whole) = agrees(&level);
            assert_eq!(agreed, whole, "{name}: WHOLE_TEXT is {whole}");
            let mut other = level.clone();
            other.level_json.insert(0, ' ');
            assert!(!agrees(&other).0, "{name}");
        }
    }

    #[test]
    fn every_metric_a_game_publishes_is_documented() {
        let mut levels = first_levels();
        let mcts = GameKind::from_name("sokoban")
            .and_then(|g| g.prepare(&serde_json::json!({"method": "mcts"})))
            .expect("mcts params");
        let level = (0..200)
            .find_map(|seed| mcts.run(seed, &Budget::nodes(2_000_000)).result.ok())
            .expect("an mcts level");
        levels.push((mcts, level));
        for (game, level) in levels {
            let kind = game.kind();
            let docs = kind.metric_docs();
            for key in level.metrics.keys() {
                assert!(
                    docs.iter().any(|d| d.name == key),
                    "{}: `{key}` is not in its METRICS",
                    game.kind()
                );
            }
            let mut names: Vec<&str> = docs.iter().map(|d| d.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), docs.len(), "{}: a key twice", game.kind());
        }
        let doors = GameKind::from_name("doors").expect("doors");
        let doors = doors.metric_docs();
        for (criterion, _) in crate::doors::grade::CRITERIA {
            let key = crate::doors::criterion_metric(criterion);
            assert!(doors.iter().any(|d| d.name == key), "doors: `{key}`");
        }
    }

    #[test]
    fn a_level_made_with_other_params_does_not_fit() {
        let tilt = GameKind::from_name("tilt").expect("tilt");
        let small = tilt
            .prepare(&serde_json::json!({"width": 4, "height": 4}))
            .expect("params");
        let large = tilt
            .prepare(&serde_json::json!({"width": 5, "height": 5}))
            .expect("params");
        let level = (0..200)
            .find_map(|seed| small.run(seed, &Budget::nodes(2_000_000)).result.ok())
            .expect("a level");
        assert_eq!(small.check(&level), Ok(()));
        let err = large.check(&level).expect_err("wrong size");
        assert!(err.to_string().contains("does not fit the params"), "{err}");
    }

    /// Every game with a band refuses the levels outside it, and only
    /// those, as `out of band` naming their difficulty; what it accepts is
    /// what the unbanded game accepts, byte for byte.
    #[test]
    fn every_game_refuses_the_levels_outside_its_band() {
        use crate::rating::Band;
        use crate::reason::Code;
        for game in GameKind::all().filter(|g| g.name() != "synthetic") {
            let params = game.default_params();
            let plain = game.prepare(&params).expect("defaults");
            let outcomes: Vec<(u64, Candidate)> = (0..40u64)
                .filter_map(|seed| {
                    let level = plain.run(seed, &Budget::nodes(200_000)).result.ok()?;
                    Some((seed, level))
                })
                .collect();
            assert!(outcomes.len() >= 4, "{game}: too few levels");
            let mut ratings: Vec<f64> = outcomes.iter().map(|(_, l)| l.difficulty).collect();
            ratings.sort_by(f64::total_cmp);
            let band = Band {
                min: Some(ratings[ratings.len() / 2]),
                max: None,
            };
            let banded = game
                .prepare(&params)
                .expect("defaults")
                .with_band(Some(band));
            for (seed, level) in &outcomes {
                let outcome = banded.run(*seed, &Budget::nodes(200_000)).result;
                if band.contains(level.difficulty) {
                    assert_eq!(outcome.as_ref(), Ok(level), "{game} seed {seed}");
                } else {
                    let reason = outcome.expect_err("out of band").reason().cloned();
                    let reason = reason.expect("a reason");
                    assert_eq!(reason.code, Code::OutOfBand, "{game} seed {seed}");
                    assert_eq!(
                        Band::difficulty_in_detail(&reason.detail),
                        Some(level.difficulty),
                        "{game}: {}",
                        reason.detail
                    );
                }
            }
        }
    }
}
