//! Does a tilt tier predict difficulty? Agents of limited skill play the
//! levels of each tier: a judgement from outside the rating's formula.
//!
//! `cargo bench -p pregen-games --bench agents -- [LEVELS] [TRIES]`
//! (defaults: 2,000 levels of the default 6x6 params, 40 tries per agent)
//!
//! The levels are the first LEVELS accepted seeds, cut into 10 equal tiers by
//! difficulty (ties by seed), as a pack's tiers are. Each level is played
//! TRIES times by each agent, each try with its own random stream, allowed
//! three times the optimal move count:
//! - `random`: tilts at random among the moves that change the board and do
//!   not lose at once (a player who sees instant losses and nothing else);
//! - `greedy`: wins at once when it can, else pairs fruit when it can, else
//!   plays as `random` (a player who looks one move ahead).
//!
//! The table gives per tier the median optimal moves, the mean share of dead
//! states and of losing first moves (the rating's inputs), and each agent's
//! share of tries won.

use pregen_games::rng::Rng;
use pregen_games::tilt::level::{Dir, Level};
use pregen_games::tilt::{Tilt, replay};
use pregen_games::{Budget, GameKind};

/// How an agent picks among the legal moves: the boards they lead to.
type Policy = fn(&Level, &[(Dir, Level)], &mut Rng) -> usize;

fn random(_: &Level, options: &[(Dir, Level)], rng: &mut Rng) -> usize {
    rng.index(options.len())
}

fn greedy(now: &Level, options: &[(Dir, Level)], rng: &mut Rng) -> usize {
    if let Some(i) = options.iter().position(|(_, l)| l.fruits.is_empty()) {
        return i;
    }
    let pairing: Vec<usize> = (0..options.len())
        .filter(|&i| options[i].1.fruits.len() < now.fruits.len())
        .collect();
    if pairing.is_empty() {
        rng.index(options.len())
    } else {
        pairing[rng.index(pairing.len())]
    }
}

/// One try: whether the agent wins within `limit` moves.
fn play(level: &Level, limit: u32, policy: Policy, rng: &mut Rng) -> bool {
    let mut now = level.clone();
    for _ in 0..limit {
        let mut options: Vec<(Dir, Level)> = Dir::ALL
            .into_iter()
            .filter_map(|d| Some((d, replay::play(&now, &d.letter().to_string()).ok()?)))
            .collect();
        if options.is_empty() {
            return false;
        }
        let pick = policy(&now, &options, rng);
        now = options.swap_remove(pick).1;
        if now.fruits.is_empty() {
            return true;
        }
    }
    false
}

struct Played {
    seed: u64,
    difficulty: f64,
    moves: u32,
    dead: f64,
    losing: f64,
    won: [f64; 2],
}

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let wanted = numbers.next().unwrap_or(2_000) as usize;
    let tries = numbers.next().unwrap_or(40);
    let game = GameKind::of::<Tilt>()
        .prepare(&serde_json::json!({}))
        .expect("default params");
    let budget = Budget::nodes(200_000);
    let mut played = Vec::new();
    let mut seed = 0;
    while played.len() < wanted {
        if let Ok(c) = game.run(seed, &budget).result {
            let level: Level = serde_json::from_str(&c.level_json).expect("a tilt level");
            let limit = 3 * c.moves;
            let mut won = [0.0; 2];
            for (agent, policy) in [random as Policy, greedy].into_iter().enumerate() {
                let wins = (0..tries)
                    .filter(|t| {
                        let mut rng =
                            Rng::new(seed.wrapping_mul(1_000_003) ^ (t << 1 | agent as u64));
                        play(&level, limit, policy, &mut rng)
                    })
                    .count();
                won[agent] = wins as f64 / tries as f64;
            }
            played.push(Played {
                seed,
                difficulty: c.difficulty,
                moves: c.moves,
                dead: c.metrics["dead_state_share"],
                losing: c.metrics["losing_first_move_share"],
                won,
            });
        }
        seed += 1;
    }
    played.sort_by(|a, b| {
        a.difficulty
            .total_cmp(&b.difficulty)
            .then(a.seed.cmp(&b.seed))
    });
    println!(
        "tilt 6x6 defaults: {wanted} levels (seeds 0..{seed}), {tries} tries per agent, \
         3 x optimal moves allowed"
    );
    println!(
        "| tier | difficulty | optimal moves p50 | dead states | losing first moves | random agent wins | greedy agent wins |"
    );
    println!("|---|---|---|---|---|---|---|");
    let size = played.len().div_ceil(10);
    for (t, tier) in played.chunks(size).enumerate() {
        let n = tier.len() as f64;
        let mut moves: Vec<u32> = tier.iter().map(|p| p.moves).collect();
        moves.sort_unstable();
        let mean = |f: &dyn Fn(&Played) -> f64| tier.iter().map(f).sum::<f64>() / n;
        println!(
            "| {} | {:.2} .. {:.2} | {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
            t + 1,
            tier[0].difficulty,
            tier[tier.len() - 1].difficulty,
            moves[moves.len() / 2],
            100.0 * mean(&|p| p.dead),
            100.0 * mean(&|p| p.losing),
            100.0 * mean(&|p| p.won[0]),
            100.0 * mean(&|p| p.won[1]),
        );
    }
    // Spearman's rank correlation of difficulty with each agent's wins.
    let ranks = |values: Vec<f64>| {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut rank = vec![0.0; values.len()];
        let mut i = 0;
        while i < order.len() {
            let mut j = i;
            while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
                j += 1;
            }
            for &k in &order[i..=j] {
                rank[k] = (i + j) as f64 / 2.0;
            }
            i = j + 1;
        }
        rank
    };
    let pearson = |a: &[f64], b: &[f64]| {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
        cov / (va * vb).sqrt()
    };
    let difficulty = ranks(played.iter().map(|p| p.difficulty).collect());
    for (agent, name) in ["random", "greedy"].iter().enumerate() {
        let wins = ranks(played.iter().map(|p| p.won[agent]).collect());
        println!(
            "Spearman correlation of difficulty with the {name} agent's wins: {:.3}",
            pearson(&difficulty, &wins)
        );
    }
    let moves = ranks(played.iter().map(|p| f64::from(p.moves)).collect());
    let wins = ranks(played.iter().map(|p| p.won[0]).collect());
    println!(
        "Spearman correlation of optimal moves alone with the random agent's wins: {:.3}",
        pearson(&moves, &wins)
    );
}
