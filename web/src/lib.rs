//! pregen's games in WebAssembly, for game clients and pages: regenerate a
//! level from its seed, check a solution, play moves and read the state.
//!
//! Build: `cargo build -p pregen-web --target wasm32-unknown-unknown
//! --profile wasm` gives `target/wasm32-unknown-unknown/wasm/pregen_web.wasm`;
//! `web/page/pregen.js` is its JavaScript API (docs/web.md).
//!
//! The ABI is JSON in, JSON out, so that any JavaScript (or any other host
//! of WebAssembly) calls it without generated glue:
//!
//! 1. `pregen_alloc(len)` gives a buffer of `len` bytes in the module's
//!    memory; the host writes a UTF-8 JSON request into it;
//! 2. `pregen_request(ptr, len)` answers it (and frees the buffer): the
//!    answer's length, its bytes at `pregen_answer()`, valid until the next
//!    request.
//!
//! Every request is an object with an `op`; every answer an object, with
//! `error` when the request could not be answered ([`answer`] lists them).

use std::cell::RefCell;

use pregen_games::seeds::SeedFile;
use pregen_games::{Budget, Candidate, GameKind};
use pregen_pictures::level_svg;
use serde::Deserialize;
use serde_json::{Value, json};

/// A request, by its `op`.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Every level of a seed file (`release/seeds/tier-NN.txt`), each made
    /// again and checked against its hash: `{"levels": [{seed, seed_text,
    /// level_hash, listed_hash, matches, layout, level_json, solution,
    /// moves, difficulty}], "matching": n}` (`seed_text`: the seed's digits,
    /// exact in JavaScript past 2^53).
    Regenerate {
        /// The seed file's text.
        seed_file: String,
        /// Only these seeds of it (all when left out), as numbers or
        /// strings of digits.
        #[serde(default)]
        seeds: Option<Vec<Seed>>,
    },
    /// One level made from its seed: the level, as `regenerate` gives it,
    /// with its picture (`svg`).
    Level {
        /// The game.
        game: String,
        /// The stratum's params.
        params: Value,
        /// The seed, as a number or a string of digits.
        seed: Seed,
        /// The node budget (the seed file's `max_nodes`).
        max_nodes: u64,
    },
    /// Whether `solution` wins `level_json`: `{"ok": true}` or `{"ok":
    /// false, "reason": ...}`.
    Check {
        /// The game.
        game: String,
        /// The level's JSON form.
        level_json: String,
        /// The moves.
        solution: String,
    },
    /// The state after `moves` (a prefix of a solution, or a player's own):
    /// `{"text": the board in the game's text form, "svg": its picture,
    /// "won": bool}`, or an `error` naming the move that is not legal
    /// (counted from 1).
    Play {
        /// The game.
        game: String,
        /// The level's JSON form.
        level_json: String,
        /// The moves so far.
        moves: String,
    },
    /// A level's picture from its text form, as the HTML report draws it:
    /// `{"svg": "<svg ...>"}`.
    Picture {
        /// The game.
        game: String,
        /// The level's text form.
        layout: String,
        /// The picture's accessible name.
        #[serde(default)]
        title: String,
    },
}

/// A seed as a JSON number or, for seeds past 2^53 that JavaScript's
/// numbers cannot hold exactly, as a string of its digits.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Seed {
    /// A JSON number.
    Number(u64),
    /// A string of decimal digits.
    Digits(String),
}

impl Seed {
    /// The seed, or why the string is not one.
    pub fn value(&self) -> Result<u64, String> {
        match self {
            Seed::Number(n) => Ok(*n),
            Seed::Digits(d) => d.parse().map_err(|_| format!("`{d}` is not a seed")),
        }
    }
}

/// The answer to a request, as JSON.
pub fn answer(request: &str) -> Value {
    let request: Request = match serde_json::from_str(request) {
        Ok(r) => r,
        Err(e) => return json!({ "error": format!("not a request: {e}") }),
    };
    match handle(request) {
        Ok(v) => v,
        Err(e) => json!({ "error": e }),
    }
}

fn handle(request: Request) -> Result<Value, String> {
    match request {
        Request::Regenerate { seed_file, seeds } => {
            let mut file = SeedFile::parse(&seed_file).map_err(|e| e.to_string())?;
            if let Some(only) = seeds {
                let only = only
                    .iter()
                    .map(Seed::value)
                    .collect::<Result<Vec<u64>, String>>()?;
                file.levels.retain(|(seed, _)| only.contains(seed));
            }
            let listed = file.levels.clone();
            let game = GameKind::from_name(&file.header.game).map_err(|e| e.to_string())?;
            let made = file.remake(&game).map_err(|e| e.to_string())?;
            let matching = made.iter().filter(|(_, m)| *m).count();
            let levels: Vec<Value> = listed
                .iter()
                .zip(&made)
                .map(|((seed, hash), (level, matches))| {
                    let mut v = level_json(*seed, level);
                    v["listed_hash"] = json!(hash);
                    v["matches"] = json!(matches);
                    v
                })
                .collect();
            Ok(json!({ "levels": levels, "matching": matching }))
        }
        Request::Level {
            game,
            params,
            seed,
            max_nodes,
        } => {
            let seed = seed.value()?;
            let kind = GameKind::from_name(&game).map_err(|e| e.to_string())?;
            let prepared = kind.prepare(&params).map_err(|e| e.to_string())?;
            let level = prepared
                .run(seed, &Budget::nodes(max_nodes))
                .result
                .map_err(|r| format!("seed {seed} makes no level: {r}"))?;
            let mut made = level_json(seed, &level);
            made["svg"] = json!(level_svg(
                &game,
                &level.layout,
                &format!("{game}-{seed}"),
                1.0
            ));
            Ok(made)
        }
        Request::Check {
            game,
            level_json,
            solution,
        } => {
            let game = GameKind::from_name(&game).map_err(|e| e.to_string())?;
            Ok(match game.replay_json(&level_json, &solution) {
                Ok(()) => json!({ "ok": true }),
                Err(e) => json!({ "ok": false, "reason": e.to_string() }),
            })
        }
        Request::Play {
            game,
            level_json,
            moves,
        } => {
            let kind = GameKind::from_name(&game).map_err(|e| e.to_string())?;
            let (text, won) = kind
                .play_json(&level_json, &moves)
                .map_err(|e| e.to_string())?;
            // The games whose position is not on the board say it in words
            // above the board, after which a blank line (a layout holds none).
            let board = text.split_once("\n\n").map_or(text.as_str(), |(_, b)| b);
            let svg = level_svg(&game, board, &format!("after {} moves", count(&moves)), 1.0);
            Ok(json!({ "text": text, "svg": svg, "won": won }))
        }
        Request::Picture {
            game,
            layout,
            title,
        } => {
            GameKind::from_name(&game).map_err(|e| e.to_string())?;
            Ok(json!({ "svg": level_svg(&game, &layout, &title, 1.0) }))
        }
    }
}

/// How many moves `moves` holds: tokens apart when spaced, else letters.
fn count(moves: &str) -> usize {
    if moves.trim().contains(char::is_whitespace) {
        moves.split_whitespace().count()
    } else {
        moves.trim().chars().count()
    }
}

fn level_json(seed: u64, level: &Candidate) -> Value {
    json!({
        "seed": seed,
        "seed_text": seed.to_string(),
        "level_hash": level.level_hash,
        "layout": level.layout,
        "level_json": level.level_json,
        "solution": level.solution,
        "moves": level.moves,
        "difficulty": level.difficulty,
    })
}

thread_local! {
    /// The last answer's bytes, read by the host through [`pregen_answer`].
    static ANSWER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A buffer of `len` bytes for a request (freed by [`pregen_request`]).
#[unsafe(no_mangle)]
#[allow(unsafe_code)]
pub extern "C" fn pregen_alloc(len: usize) -> *mut u8 {
    let mut buffer = Vec::<u8>::with_capacity(len.max(1));
    let ptr = buffer.as_mut_ptr();
    std::mem::forget(buffer);
    ptr
}

/// Answers the request of `len` bytes at `ptr` (a buffer from
/// [`pregen_alloc`] of that length, which this frees); the answer's length.
///
/// # Safety
///
/// `ptr` must be a buffer `pregen_alloc(len)` gave, with `len` bytes
/// written, not used again after this call.
#[unsafe(no_mangle)]
#[allow(unsafe_code)]
pub unsafe extern "C" fn pregen_request(ptr: *mut u8, len: usize) -> usize {
    // SAFETY: as the caller promises, a buffer `pregen_alloc(len)` gave:
    // its capacity is `len.max(1)` and it is not used again.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len, len.max(1)) };
    let text = String::from_utf8_lossy(&bytes);
    let answer = answer(&text).to_string().into_bytes();
    let len = answer.len();
    ANSWER.with(|a| *a.borrow_mut() = answer);
    len
}

/// Where the last answer's bytes are.
#[unsafe(no_mangle)]
#[allow(unsafe_code)]
pub extern "C" fn pregen_answer() -> *const u8 {
    ANSWER.with(|a| a.borrow().as_ptr())
}

#[cfg(test)]
mod tests;
