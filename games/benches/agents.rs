//! Does a tier predict difficulty? Agents of limited skill play the levels of
//! each tier: a judgement from outside the rating's formula.
//!
//! `cargo bench -p pregen-games --bench agents -- [GAME] [LEVELS] [TRIES] [PARAMS]`
//! (defaults: tilt, 2,000 levels of the game's default params, 40 tries per
//! agent; PARAMS is a JSON object, or an array of them sharing the levels
//! equally, each from its own seed range; cube's default is its ten overall
//! difficulties)
//!
//! The levels are the first LEVELS accepted seeds, cut into 10 equal tiers by
//! difficulty (ties by seed), as a pack's tiers are. Each level is played
//! TRIES times by each agent, each try with its own random stream, allowed a
//! multiple of the optimal move count (see `LIMITS`):
//! - `random`: a random legal move that does not lose at once where the game
//!   can lose (tilt: a tilt that changes the board and drops no fruit;
//!   sokoban: a push that leaves no box in a corner off goal);
//! - `greedy`: wins at once when it can, else makes progress when it can,
//!   else plays as `random`. Progress: tilt pairs fruit; dungeon picks up a
//!   key; cube collects karma; doors reaches a room-and-colour state it has
//!   not been in; sokoban puts a box on a goal.
//!
//! A move is a tilt (tilt), a key, switch or the exit (dungeon), a walk and
//! a turn (cube: turns are counted), a walk through a door or a button press
//! (doors), a push (sokoban: pushes are counted).
//!
//! - `search`: a breadth-first search over the same moves (no tries: it is
//!   deterministic); its figure is the positions it expands before it finds
//!   a win, capped at 20,000. A player who thinks ahead, with no insight.
//!
//! The table gives per tier the median optimal moves, the mean of two of the
//! rating's inputs, the random and greedy agents' shares of tries won and the
//! search agent's median positions.

use pregen_games::cube::geometry::Turn;
use pregen_games::cube::replay::Position;
use pregen_games::dungeon::replay::Play;
use pregen_games::rng::Rng;
use pregen_games::sokoban::level::{Dir as Push, Level as Warehouse};
use pregen_games::tilt::level::{Dir, Level};
use pregen_games::tilt::replay;
use pregen_games::{Budget, Candidate, GameKind, cube, doors, dungeon};

/// Per game: the moves an agent may make, as a multiple of the optimal
/// count, and the two rating inputs the table shows.
const LIMITS: [(&str, u32, [&str; 2]); 5] = [
    ("tilt", 3, ["dead_state_share", "losing_first_move_share"]),
    ("dungeon", 2, ["switch_flips", "keys"]),
    ("cube", 3, ["karma_distance", "walks"]),
    ("doors", 2, ["solutions", "mean_solution_length"]),
    ("sokoban", 3, ["pushes", "push_nodes"]),
];

/// A level in play, as an agent sees it.
trait Puzzle: Clone + PartialEq {
    /// The positions one legal move leads to, each with what it does: wins
    /// (2), makes progress (1) or neither (0). `seen` holds the positions of
    /// this try so far.
    fn options(&self, seen: &[Self]) -> Vec<(Self, u8)>;

    /// What tells two positions apart, for the search agent.
    fn key(&self) -> String;
}

/// One agent's choice among the options' progress.
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

/// One try: whether the agent wins within `limit` moves.
fn play<P: Puzzle>(start: &P, limit: u32, greedy: bool, rng: &mut Rng) -> bool {
    let mut seen = vec![start.clone()];
    for _ in 0..limit {
        let mut options = seen.last().expect("the start").options(&seen);
        if options.is_empty() {
            return false;
        }
        let progress: Vec<u8> = options.iter().map(|o| o.1).collect();
        let (next, done) = options.swap_remove(choose(greedy, &progress, rng));
        if done == 2 {
            return true;
        }
        seen.push(next);
    }
    false
}

/// The search agent: the positions a breadth-first search over the moves
/// expands before it finds a win, capped at `cap` (a level it does not win
/// within the cap counts as the cap).
fn search<P: Puzzle>(start: &P, cap: usize) -> usize {
    let mut seen = std::collections::HashSet::from([start.key()]);
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    let mut expanded = 0;
    while let Some(position) = queue.pop_front() {
        if expanded == cap {
            break;
        }
        expanded += 1;
        for (next, progress) in position.options(std::slice::from_ref(&position)) {
            if progress == 2 {
                return expanded;
            }
            if seen.insert(next.key()) {
                queue.push_back(next);
            }
        }
    }
    cap
}

/// Positions the search agent may expand.
const SEARCH_CAP: usize = 20_000;

impl Puzzle for Level {
    fn options(&self, _seen: &[Self]) -> Vec<(Self, u8)> {
        Dir::ALL
            .into_iter()
            .filter_map(|d| replay::play(self, &d.letter().to_string()).ok())
            .map(|l| {
                let progress = match l.fruits.len() {
                    0 => 2,
                    n if n < self.fruits.len() => 1,
                    _ => 0,
                };
                (l, progress)
            })
            .collect()
    }

    fn key(&self) -> String {
        self.to_text()
    }
}

/// A dungeon try: the actions taken so far. The rules' own replay says which
/// next action is legal (a prefix it plays to the end is legal so far).
#[derive(Clone)]
struct DungeonTry<'a> {
    level: &'a dungeon::level::Level,
    play: Play,
}

impl PartialEq for DungeonTry<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.play == other.play
    }
}

impl Puzzle for DungeonTry<'_> {
    /// Every key, switch or the exit the rules allow from here, each one
    /// action on from the current play.
    fn options(&self, _seen: &[Self]) -> Vec<(Self, u8)> {
        let level = self.level;
        (0..level.keys.len())
            .map(|i| dungeon::level::key_name(i).to_string())
            .chain((0..level.switches.len()).map(|i| dungeon::level::switch_name(i).to_string()))
            .chain(["exit".to_string()])
            .filter_map(|token| {
                let mut play = self.play.clone();
                let out = play.act(level, &token).ok()?;
                let progress = match token.as_str() {
                    _ if out => 2,
                    t if t.chars().all(|c| c.is_ascii_lowercase()) => 1,
                    _ => 0,
                };
                Some((DungeonTry { level, play }, progress))
            })
            .collect()
    }

    /// The room, the keys held and the switches on.
    fn key(&self) -> String {
        format!("{:?}", self.play)
    }
}

/// A cube try: where the monk is, with the karma goal.
#[derive(Clone, PartialEq)]
struct CubeTry {
    position: Position,
    goal: u32,
}

impl Puzzle for CubeTry {
    /// Every walk within reach followed by a legal turn; or out, when it can.
    fn options(&self, _seen: &[Self]) -> Vec<(Self, u8)> {
        let mut options = Vec::new();
        if self.position.can_exit(self.goal) {
            options.push((self.clone(), 2));
        }
        for (x, y) in self.position.reachable() {
            for turn in Turn::ALL {
                let mut next = self.position.clone();
                if next.walk(x, y).is_ok() && next.turn(turn).is_ok() {
                    let progress = u8::from(next.karma() > self.position.karma());
                    let next = CubeTry {
                        position: next,
                        goal: self.goal,
                    };
                    if !options.iter().any(|(o, _)| *o == next) {
                        options.push((next, progress));
                    }
                }
            }
        }
        options
    }

    fn key(&self) -> String {
        format!("{:?}", self.position)
    }
}

/// A doors try: the state of the level's compiled rules.
#[derive(Clone)]
struct DoorsTry<'a> {
    rules: &'a doors::level::Rules,
    state: usize,
}

impl PartialEq for DoorsTry<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.state == other.state
    }
}

impl Puzzle for DoorsTry<'_> {
    fn options(&self, seen: &[Self]) -> Vec<(Self, u8)> {
        self.rules.moves[self.state]
            .iter()
            .map(|&(_, to)| {
                let next = DoorsTry {
                    rules: self.rules,
                    state: to,
                };
                let progress = if self.rules.wins(to) {
                    2
                } else {
                    u8::from(!seen.contains(&next))
                };
                (next, progress)
            })
            .collect()
    }

    fn key(&self) -> String {
        self.state.to_string()
    }
}

/// A sokoban try: the boxes and the player; a move is a push.
#[derive(Clone, PartialEq)]
struct SokobanTry(Warehouse);

impl Puzzle for SokobanTry {
    /// Every push the player can walk to, but for one that leaves a box in
    /// a corner off goal (lost at once).
    fn options(&self, _seen: &[Self]) -> Vec<(Self, u8)> {
        let level = &self.0;
        let free = |c: usize| level.open(c) && level.boxes.binary_search(&c).is_err();
        let mut reach = vec![false; level.walls.len()];
        let mut stack = vec![level.player];
        reach[level.player] = true;
        while let Some(c) = stack.pop() {
            for d in Push::ALL {
                if let Some(n) = level.step(c, d).filter(|&n| free(n) && !reach[n]) {
                    reach[n] = true;
                    stack.push(n);
                }
            }
        }
        let wall = |c: Option<usize>| c.is_none_or(|c| !level.open(c));
        let on_goal = |l: &Warehouse| l.boxes.iter().filter(|b| l.goals.contains(b)).count();
        let mut options = Vec::new();
        for (i, &b) in level.boxes.iter().enumerate() {
            for d in Push::ALL {
                let behind = Push::ALL[(d as usize + 2) % 4];
                let (Some(from), Some(to)) = (level.step(b, behind), level.step(b, d)) else {
                    continue;
                };
                if !reach[from] || !free(to) {
                    continue;
                }
                let cornered = |c: usize| {
                    let (l, u, r, dn) = (
                        wall(level.step(c, Push::Left)),
                        wall(level.step(c, Push::Up)),
                        wall(level.step(c, Push::Right)),
                        wall(level.step(c, Push::Down)),
                    );
                    (l || r) && (u || dn)
                };
                if cornered(to) && level.goals.binary_search(&to).is_err() {
                    continue;
                }
                let mut next = level.clone();
                next.boxes[i] = to;
                next.boxes.sort_unstable();
                next.player = b;
                let progress = if next.solved() {
                    2
                } else {
                    u8::from(on_goal(&next) > on_goal(level))
                };
                options.push((SokobanTry(next), progress));
            }
        }
        options
    }

    fn key(&self) -> String {
        format!("{:?} {}", self.0.boxes, self.0.player)
    }
}

/// What the agents make of one level: the random and the greedy agent's
/// shares of `tries` won within `limit` moves, and the positions the search
/// agent expands.
fn judge<P: Puzzle>(start: &P, limit: u32, tries: u64, seed: u64) -> Judged {
    let won = [false, true].map(|greedy| {
        let agent = u64::from(greedy);
        let wins = (0..tries)
            .filter(|&t| {
                let mut rng = Rng::new(seed.wrapping_mul(1_000_003) ^ (t << 1 | agent));
                play(start, limit, greedy, &mut rng)
            })
            .count();
        wins as f64 / tries as f64
    });
    Judged {
        won,
        searched: search(start, SEARCH_CAP),
    }
}

struct Judged {
    won: [f64; 2],
    searched: usize,
}

/// [`judge`] on an accepted level of `game`.
fn judge_level(game: &str, c: &Candidate, limit: u32, tries: u64, seed: u64) -> Judged {
    match game {
        "tilt" => {
            let level = Level::from_text(&c.layout).expect("tilt");
            judge(&level, limit, tries, seed)
        }
        "dungeon" => {
            let level = dungeon::level::Level::from_text(&c.layout).expect("dungeon");
            let start = DungeonTry {
                level: &level,
                play: Play::start(&level),
            };
            judge(&start, limit, tries, seed)
        }
        "cube" => {
            let level = cube::level::Level::from_text(&c.layout).expect("cube");
            let start = CubeTry {
                position: Position::start(&level).expect("a safe start"),
                goal: level.karma_goal,
            };
            judge(&start, limit, tries, seed)
        }
        "doors" => {
            let level = doors::level::Level::from_text(&c.layout).expect("doors");
            let rules = doors::level::Rules::new(&level);
            let start = DoorsTry {
                rules: &rules,
                state: doors::level::Rules::START,
            };
            judge(&start, limit, tries, seed)
        }
        "sokoban" => {
            let start = SokobanTry(Warehouse::from_xsb(&c.layout).expect("sokoban"));
            judge(&start, limit, tries, seed)
        }
        other => panic!("no agents for {other}"),
    }
}

struct Played {
    stratum: usize,
    seed: u64,
    difficulty: f64,
    moves: u32,
    shown: [f64; 2],
    won: [f64; 2],
    searched: usize,
    /// Every metric of the level, for `--csv`.
    metrics: Vec<(String, f64)>,
}

/// Every level's agents and metrics, one row each, for studying a rating
/// outside this bench (`--csv=PATH`).
fn write_csv(path: &str, played: &[Played]) {
    use std::fmt::Write as _;
    let names: Vec<&str> = played
        .first()
        .map(|p| p.metrics.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let mut out = format!(
        "stratum,seed,difficulty,moves,random,greedy,searched,{}\n",
        names.join(",")
    );
    for p in played {
        let _ = write!(
            out,
            "{},{},{},{},{},{},{}",
            p.stratum, p.seed, p.difficulty, p.moves, p.won[0], p.won[1], p.searched
        );
        for (_, v) in &p.metrics {
            let _ = write!(out, ",{v}");
        }
        out.push('\n');
    }
    std::fs::write(path, out).expect("write the CSV");
}

/// The params the levels are drawn from, as JSON: an object, or an array
/// of objects (strata) sharing the levels equally. Cube's default spans its
/// ten overall difficulties, as its example pack does.
fn strata(game: &str, given: Option<&String>) -> Vec<serde_json::Value> {
    let value = match given {
        Some(text) => serde_json::from_str(text).expect("params: a JSON object or array"),
        None if game == "cube" => (1..=10)
            .map(|d| serde_json::json!({ "difficulty": d }))
            .collect(),
        None => serde_json::json!({}),
    };
    match value {
        serde_json::Value::Array(strata) => strata,
        one => vec![one],
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&String> = args
        .iter()
        .filter(|a| a.parse::<u64>().is_err() && !a.starts_with("--"))
        .collect();
    let game_name = words
        .iter()
        .find(|a| !a.starts_with(['{', '[']))
        .map_or("tilt", |a| a.as_str());
    let given = words.iter().find(|a| a.starts_with(['{', '['])).copied();
    let mut numbers = args.iter().filter_map(|a| a.parse::<u64>().ok());
    let wanted = numbers.next().unwrap_or(2_000) as usize;
    let tries = numbers.next().unwrap_or(40);
    let Some(&(_, limit_factor, shown)) = LIMITS.iter().find(|l| l.0 == game_name) else {
        panic!("agents play tilt, dungeon, cube, doors and sokoban, not {game_name}")
    };
    let strata = strata(game_name, given);
    let budget = Budget::nodes(200_000);
    let mut played = Vec::new();
    let mut seeds = Vec::new();
    for (i, params) in strata.iter().enumerate() {
        let game = GameKind::from_name(game_name)
            .and_then(|g| g.prepare(params))
            .expect("valid params");
        // Stratum i takes its share of the levels from its own seed range.
        let share = wanted * (i + 1) / strata.len() - wanted * i / strata.len();
        let first = i as u64 * 1_000_000_000;
        let mut seed = first;
        let mut taken = 0;
        while taken < share {
            if let Ok(c) = game.run(seed, &budget).result {
                // Sokoban's agents push: they are allowed a multiple of the pushes.
                let optimal = if game_name == "sokoban" {
                    c.metrics["pushes"] as u32
                } else {
                    c.moves
                };
                let limit = limit_factor * optimal;
                let judged = judge_level(game_name, &c, limit, tries, seed);
                played.push(Played {
                    stratum: i,
                    seed,
                    difficulty: c.difficulty,
                    moves: optimal,
                    shown: [c.metrics[shown[0]], c.metrics[shown[1]]],
                    won: judged.won,
                    searched: judged.searched,
                    metrics: c.metrics.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                });
                taken += 1;
            }
            seed += 1;
        }
        seeds.push(format!("{first}..{seed}"));
    }
    played.sort_by(|a, b| {
        a.difficulty
            .total_cmp(&b.difficulty)
            .then(a.seed.cmp(&b.seed))
    });
    if let Some(path) = args.iter().find_map(|a| a.strip_prefix("--csv=")) {
        write_csv(path, &played);
    }
    // What the agents are allowed a multiple of (see above).
    let unit = if game_name == "sokoban" {
        "pushes"
    } else {
        "moves"
    };
    println!(
        "{game_name}, params {}: {wanted} levels (seeds {}), {tries} tries per agent, \
         {limit_factor} x optimal {unit} allowed",
        serde_json::Value::Array(strata.clone()),
        seeds.join(", ")
    );
    println!(
        "| tier | difficulty | optimal {unit} p50 | {} (mean) | {} (mean) | random agent wins | greedy agent wins | search agent's positions p50 |",
        shown[0], shown[1]
    );
    println!("|---|---|---|---|---|---|---|---|");
    let size = played.len().div_ceil(10);
    for (t, tier) in played.chunks(size).enumerate() {
        let n = tier.len() as f64;
        let mut moves: Vec<u32> = tier.iter().map(|p| p.moves).collect();
        moves.sort_unstable();
        let mut searched: Vec<usize> = tier.iter().map(|p| p.searched).collect();
        searched.sort_unstable();
        let mean = |f: &dyn Fn(&Played) -> f64| tier.iter().map(f).sum::<f64>() / n;
        println!(
            "| {} | {:.2} .. {:.2} | {} | {:.3} | {:.3} | {:.1}% | {:.1}% | {} |",
            t + 1,
            tier[0].difficulty,
            tier[tier.len() - 1].difficulty,
            moves[moves.len() / 2],
            mean(&|p| p.shown[0]),
            mean(&|p| p.shown[1]),
            100.0 * mean(&|p| p.won[0]),
            100.0 * mean(&|p| p.won[1]),
            searched[searched.len() / 2],
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
    let spearman = |played: &[&Played], x: &dyn Fn(&Played) -> f64, y: &dyn Fn(&Played) -> f64| {
        let a = ranks(played.iter().map(|p| x(p)).collect());
        let b = ranks(played.iter().map(|p| y(p)).collect());
        pearson(&a, &b)
    };
    let all: Vec<&Played> = played.iter().collect();
    for (agent, name) in ["random", "greedy"].iter().enumerate() {
        println!(
            "Spearman correlation of difficulty with the {name} agent's wins: {:.3}",
            spearman(&all, &|p| p.difficulty, &|p| p.won[agent])
        );
    }
    println!(
        "Spearman correlation of difficulty with the search agent's positions: {:.3}",
        spearman(&all, &|p| p.difficulty, &|p| p.searched as f64)
    );
    println!(
        "Spearman correlation of optimal moves alone with the random agent's wins: {:.3}",
        spearman(&all, &|p| f64::from(p.moves), &|p| p.won[0])
    );
    // With strata, whether the rating also orders the levels within one.
    if strata.len() > 1 {
        for (agent, name) in ["random", "greedy"].iter().enumerate() {
            let within: Vec<f64> = (0..strata.len())
                .map(|s| {
                    let one: Vec<&Played> = played.iter().filter(|p| p.stratum == s).collect();
                    spearman(&one, &|p| p.difficulty, &|p| p.won[agent])
                })
                .collect();
            let listed: Vec<String> = within.iter().map(|r| format!("{r:.2}")).collect();
            println!(
                "Within each stratum, difficulty with the {name} agent's wins: mean {:.3} ({})",
                within.iter().sum::<f64>() / within.len() as f64,
                listed.join(", ")
            );
        }
    }
}
