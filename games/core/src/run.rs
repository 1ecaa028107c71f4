//! One seed run through a game: generated, solved, accepted, measured by
//! its agents, rated by a model (and held to a stratum's band), every panic
//! inside the game turned into a refusal. What the worker, the
//! coordinator's own runs and the registry's `Ready::run` call.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::clock::Instant;
use crate::digest::sha256_hex;
use crate::game::{Budget, Candidate, Game, Outcome, Rejection, Solved};
use crate::metrics::Metrics;
use crate::rating::{Model, RatingError};
use crate::reason::Code;
use crate::rng::Rng;

/// Everything a verified level publishes: the game's [`Game::metrics`] and
/// its agents' figures.
pub fn published<G: Game>(
    level: &G::Level,
    solved: &Solved<G::Analysis>,
    budget: &Budget,
) -> Metrics {
    with_agents::<G>(level, solved, G::metrics(level, solved), budget)
}

/// A level's game `metrics` joined by its agents' figures.
fn with_agents<G: Game>(
    level: &G::Level,
    solved: &Solved<G::Analysis>,
    mut metrics: Metrics,
    budget: &Budget,
) -> Metrics {
    if let Some(figures) = G::agents(level, solved.moves, &metrics, budget.time_limit) {
        metrics.extend(figures.metrics());
    }
    metrics
}

/// The built-in rating model of game `G`.
pub fn default_model<G: Game>() -> Result<Model, RatingError> {
    Model::parse(G::RATING_MODEL, G::NAME, G::METRICS)
}

/// Runs one seed of game `G` rated by its built-in model: generate, verify,
/// accept, rate. Never panics: a panic inside the game becomes
/// an `error` refusal.
pub fn run_game<G: Game>(params: &G::Params, seed: u64, budget: &Budget) -> Outcome {
    match default_model::<G>() {
        Ok(model) => run_game_rated::<G>(params, seed, budget, &model),
        Err(e) => Outcome {
            result: Err(Rejection::refused(Code::Rating, e.to_string())),
            generate_ms: 0.0,
            solve_ms: 0.0,
            nodes: 0,
        },
    }
}

/// [`run_game`] with the difficulty from `model` (checked against `G`).
pub fn run_game_rated<G: Game>(
    params: &G::Params,
    seed: u64,
    budget: &Budget,
    model: &Model,
) -> Outcome {
    run_game_banded::<G>(params, seed, budget, model, None)
}

/// The seed's level and the milliseconds it took, or the outcome that ends
/// the seed's run there (refused, or the generator panicked).
fn generate_level<G: Game>(
    params: &G::Params,
    seed: u64,
    budget: &Budget,
) -> Result<(G::Level, f64), Outcome> {
    let started = Instant::now();
    let generated = catch_unwind(AssertUnwindSafe(|| {
        let mut rng = Rng::new(seed);
        G::generate(params, &mut rng, budget)
    }));
    let generate_ms = ms_since(started);
    match generated {
        Ok(Ok(level)) => Ok((level, generate_ms)),
        Ok(Err(rejection)) => Err(Outcome {
            nodes: nodes_spent(&rejection, budget, 0),
            result: Err(rejection),
            generate_ms,
            solve_ms: 0.0,
        }),
        Err(panic) => Err(Outcome {
            result: Err(Rejection::refused(
                Code::GeneratorPanicked,
                panic_message(&panic),
            )),
            generate_ms,
            solve_ms: 0.0,
            nodes: 0,
        }),
    }
}

/// [`run_game_rated`] for a stratum whose levels must lie in `band`: a level
/// outside it is `rejected: out of band`, decided as soon as `model` can
/// rate it (before the agents play it, when the model needs none of their
/// figures), so a narrow band does not pay for what it throws away.
pub fn run_game_banded<G: Game>(
    params: &G::Params,
    seed: u64,
    budget: &Budget,
    model: &Model,
    band: Option<&crate::rating::Band>,
) -> Outcome {
    let (level, generate_ms) = match generate_level::<G>(params, seed, budget) {
        Ok(made) => made,
        Err(ended) => return ended,
    };
    let solve_started = Instant::now();
    let verified = catch_unwind(AssertUnwindSafe(|| {
        let solved = G::solve(&level, budget).map_err(|r| (r, 0))?;
        let refused = |r| (r, solved.nodes);
        G::accept(params, &level, &solved).map_err(refused)?;
        let outside = |difficulty: f64| {
            band.filter(|b| !b.contains(difficulty)).map(|b| {
                refused(Rejection::refused(
                    Code::OutOfBand,
                    b.refusal_detail(difficulty),
                ))
            })
        };
        // Rated before the agents play: a level outside the band is refused
        // without their cost, when the model needs none of their figures.
        let game_metrics = G::metrics(&level, &solved);
        if band.is_some()
            && let Ok(early) = model.rate(Model::features(&game_metrics, solved.moves))
            && let Some(out) = outside(early)
        {
            return Err(out);
        }
        let metrics = with_agents::<G>(&level, &solved, game_metrics, budget);
        let difficulty = model
            .rate(Model::features(&metrics, solved.moves))
            .map_err(|e| refused(Rejection::refused(Code::Rating, e.to_string())))?;
        if let Some(out) = outside(difficulty) {
            return Err(out);
        }
        let level_json = serde_json::to_string(&level).map_err(|e| {
            refused(Rejection::refused(
                Code::MalformedLevel,
                format!("does not serialize: {e}"),
            ))
        })?;
        let level_hash = sha256_hex(level_json.as_bytes());
        let canonical = G::canonical(params, &level).map(|c| sha256_hex(c.as_bytes()));
        Ok::<_, (Rejection, u64)>((
            solved.nodes,
            Candidate {
                difficulty,
                moves: solved.moves,
                moves_optimal: solved.optimal,
                layout: G::to_text(&level),
                level_json,
                solution: solved.solution,
                metrics,
                level_hash,
                canonical,
            },
        ))
    }));
    let solve_ms = ms_since(solve_started);
    match verified {
        Ok(Ok((nodes, candidate))) => Outcome {
            result: Ok(candidate),
            generate_ms,
            solve_ms,
            nodes,
        },
        Ok(Err((rejection, counted))) => Outcome {
            nodes: nodes_spent(&rejection, budget, counted),
            result: Err(rejection),
            generate_ms,
            solve_ms,
        },
        Err(panic) => Outcome {
            result: Err(Rejection::refused(
                Code::VerifierPanicked,
                panic_message(&panic),
            )),
            generate_ms,
            solve_ms,
            nodes: 0,
        },
    }
}

/// The nodes a refused seed spent: the whole budget when it ran out, else
/// what the verifier counted (0 when it was refused before a search finished).
fn nodes_spent(rejection: &Rejection, budget: &Budget, counted: u64) -> u64 {
    if rejection.is_out_of_nodes() {
        budget.max_nodes
    } else {
        counted
    }
}

/// Milliseconds since `t`, as the records time a level.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
