//! Does a tier predict difficulty? Agents of limited skill play the levels of
//! each tier: a judgement from outside the rating's formula.
//!
//! `cargo bench -p pregen-games --bench agents -- [tilt|dungeon] [LEVELS] [TRIES]`
//! (defaults: tilt, 2,000 levels of the game's default params, 40 tries per agent)
//!
//! The levels are the first LEVELS accepted seeds, cut into 10 equal tiers by
//! difficulty (ties by seed), as a pack's tiers are. Each level is played
//! TRIES times by each agent, each try with its own random stream, allowed
//! three times the optimal move count (tilt) or twice the fewest actions
//! (dungeon):
//! - `random`: a random legal move. Tilt: among the tilts that change the
//!   board and do not lose at once; dungeon: among the keys, switches and the
//!   exit it can reach now.
//! - `greedy`: wins at once when it can, else makes progress when it can
//!   (tilt: pairs fruit; dungeon: picks up a key), else plays as `random`.
//!
//! The table gives per tier the median optimal moves, the mean of two of the
//! rating's inputs, and each agent's share of tries won.

use pregen_games::rng::Rng;
use pregen_games::tilt::level::{Dir, Level};
use pregen_games::tilt::replay;
use pregen_games::{Budget, GameKind, dungeon};

/// One agent's choice: an index into the legal moves, from the boards they
/// lead to (`progress[i]`: move i wins (2), makes progress (1) or neither (0)).
fn choose(greedy: bool, progress: &[u8], rng: &mut Rng) -> usize {
    if greedy {
        for wanted in [2, 1] {
            let best: Vec<usize> = (0..progress.len())
                .filter(|&i| progress[i] == wanted)
                .collect();
            if !best.is_empty() {
                return best[rng.index(best.len())];
            }
        }
    }
    rng.index(progress.len())
}

/// One tilt try: whether the agent wins within `limit` moves.
fn play_tilt(level: &Level, limit: u32, greedy: bool, rng: &mut Rng) -> bool {
    let mut now = level.clone();
    for _ in 0..limit {
        let mut options: Vec<Level> = Dir::ALL
            .into_iter()
            .filter_map(|d| replay::play(&now, &d.letter().to_string()).ok())
            .collect();
        if options.is_empty() {
            return false;
        }
        let progress: Vec<u8> = options
            .iter()
            .map(|l| match l.fruits.len() {
                0 => 2,
                n if n < now.fruits.len() => 1,
                _ => 0,
            })
            .collect();
        now = options.swap_remove(choose(greedy, &progress, rng));
        if now.fruits.is_empty() {
            return true;
        }
    }
    false
}

/// One dungeon try: the rules' own replay says which next action is legal
/// (a prefix it plays to the end is legal so far).
fn play_dungeon(level: &dungeon::level::Level, limit: u32, greedy: bool, rng: &mut Rng) -> bool {
    let names: Vec<String> = (0..level.keys.len())
        .map(|i| dungeon::level::key_name(i).to_string())
        .chain((0..level.switches.len()).map(|i| dungeon::level::switch_name(i).to_string()))
        .chain(["exit".to_string()])
        .collect();
    let mut taken: Vec<&str> = Vec::new();
    for _ in 0..limit {
        let legal: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|&token| {
                let mut tried = taken.clone();
                tried.push(token);
                match dungeon::replay::replay(level, &tried.join(" ")) {
                    Ok(()) => true,
                    Err(pregen_games::GameError::Replay { index, .. }) => index == tried.len(),
                    Err(_) => false,
                }
            })
            .collect();
        if legal.is_empty() {
            return false;
        }
        let progress: Vec<u8> = legal
            .iter()
            .map(|t| match *t {
                "exit" => 2,
                t if t.chars().all(|c| c.is_ascii_lowercase()) => 1,
                _ => 0,
            })
            .collect();
        let pick = legal[choose(greedy, &progress, rng)];
        if pick == "exit" {
            return true;
        }
        taken.push(pick);
    }
    false
}

struct Played {
    seed: u64,
    difficulty: f64,
    moves: u32,
    shown: [f64; 2],
    won: [f64; 2],
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let game_name = args
        .iter()
        .find(|a| a.parse::<u64>().is_err() && !a.starts_with('-'))
        .map_or("tilt", String::as_str);
    let mut numbers = args.iter().filter_map(|a| a.parse::<u64>().ok());
    let wanted = numbers.next().unwrap_or(2_000) as usize;
    let tries = numbers.next().unwrap_or(40);
    let (shown, limit_factor): ([&str; 2], u32) = match game_name {
        "tilt" => (["dead_state_share", "losing_first_move_share"], 3),
        "dungeon" => (["switch_flips", "keys"], 2),
        other => panic!("agents play tilt and dungeon, not {other}"),
    };
    let game = GameKind::from_name(game_name)
        .and_then(|g| g.prepare(&serde_json::json!({})))
        .expect("default params");
    let budget = Budget::nodes(200_000);
    let mut played = Vec::new();
    let mut seed = 0;
    while played.len() < wanted {
        if let Ok(c) = game.run(seed, &budget).result {
            let limit = limit_factor * c.moves;
            let mut won = [0.0; 2];
            for (agent, greedy) in [false, true].into_iter().enumerate() {
                let wins = (0..tries)
                    .filter(|t| {
                        let mut rng =
                            Rng::new(seed.wrapping_mul(1_000_003) ^ (t << 1 | agent as u64));
                        if game_name == "tilt" {
                            let level: Level = serde_json::from_str(&c.level_json).expect("tilt");
                            play_tilt(&level, limit, greedy, &mut rng)
                        } else {
                            let level: dungeon::level::Level =
                                serde_json::from_str(&c.level_json).expect("dungeon");
                            play_dungeon(&level, limit, greedy, &mut rng)
                        }
                    })
                    .count();
                won[agent] = wins as f64 / tries as f64;
            }
            played.push(Played {
                seed,
                difficulty: c.difficulty,
                moves: c.moves,
                shown: [c.metrics[shown[0]], c.metrics[shown[1]]],
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
        "{game_name} defaults: {wanted} levels (seeds 0..{seed}), {tries} tries per agent, \
         {limit_factor} x optimal moves allowed"
    );
    println!(
        "| tier | difficulty | optimal moves p50 | {} (mean) | {} (mean) | random agent wins | greedy agent wins |",
        shown[0], shown[1]
    );
    println!("|---|---|---|---|---|---|---|");
    let size = played.len().div_ceil(10);
    for (t, tier) in played.chunks(size).enumerate() {
        let n = tier.len() as f64;
        let mut moves: Vec<u32> = tier.iter().map(|p| p.moves).collect();
        moves.sort_unstable();
        let mean = |f: &dyn Fn(&Played) -> f64| tier.iter().map(f).sum::<f64>() / n;
        println!(
            "| {} | {:.2} .. {:.2} | {} | {:.3} | {:.3} | {:.1}% | {:.1}% |",
            t + 1,
            tier[0].difficulty,
            tier[tier.len() - 1].difficulty,
            moves[moves.len() / 2],
            mean(&|p| p.shown[0]),
            mean(&|p| p.shown[1]),
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
