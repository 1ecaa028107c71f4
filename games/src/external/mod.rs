//! The game protocol: how pregen drives a game that is a program, in any
//! language. Messages are JSON objects, one per line (UTF-8, `\n`-ended, at
//! most [`MAX_LINE`] bytes), over the program's stdin (requests) and stdout
//! (responses); its stderr is the program's own log. Each request carries an
//! `id` that its response echoes, so a response out of order is caught.
//!
//! - `{"id":1,"describe":{"protocol":1}}` -> `{"id":1,"describe":{...}}`: the
//!   game's [`Description`] (name, version, the params' defaults, the metric
//!   keys with units, the name of its text format). A program whose
//!   `protocol` differs from [`PROTOCOL`] is refused by name.
//! - `{"id":2,"generate":{"seed":7,"params":{...},"max_nodes":200000}}` ->
//!   `{"id":2,"outcome":{...}}`: what a built-in game's run returns
//!   ([`OutcomeMessage`]): status, reason code and detail, the level (text,
//!   JSON, solution, moves, optimal flag, metrics, hashes), times and nodes.
//! - `{"id":3,"check":{"params":{...},"level":{...}}}` ->
//!   `{"id":3,"check":{"ok":true}}` or `{"ok":false,"reason":"..."}`.
//! - `{"id":4,"prepare":{"params":{...}}}` -> `{"id":4,"prepare":{"ok":true}}`
//!   or `{"ok":false,"reason":"..."}`: whether the program takes these params
//!   (asked once per parameter set, before any seed runs).
//! - `{"id":5,"render":{"params":{...},"level_json":"...","layout":"..."}}` ->
//!   `{"id":5,"render":{"svg":"<svg ...>...</svg>"}}`: the level's picture,
//!   asked only of a program whose description says `"renders": true` (the
//!   others' levels are drawn from their text form).
//! - Any request may be answered `{"id":N,"error":"..."}`.
//!
//! [`serve`] answers these for a built-in game (`pregen game-server GAME`);
//! [`Program`] is the other side, a program run and spoken to.

mod game;
mod program;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};

use serde::{Deserialize, Serialize};

use crate::game::{Budget, Candidate, Outcome, Rejection};
use crate::reason::{Code, Reason, Status};
use crate::registry::{GameKind, PreparedGame};

pub use game::{ProgramSpec, identity};
pub use program::{Program, ProgramError, stop_all};

/// The protocol's version: a program that declares another is refused.
pub const PROTOCOL: u32 = 1;

/// The longest line either side takes, in bytes.
pub const MAX_LINE: usize = 1 << 20;

/// A request to the program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Echoed by the response.
    pub id: u64,
    /// What is asked.
    #[serde(flatten)]
    pub body: RequestBody,
}

/// What a request asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestBody {
    /// The game's description.
    Describe {
        /// The protocol pregen speaks.
        protocol: u32,
    },
    /// One seed's outcome.
    Generate {
        /// The seed.
        seed: u64,
        /// The stratum's params (the job's `[params]` merged with its own).
        params: serde_json::Value,
        /// The deterministic node budget.
        max_nodes: u64,
    },
    /// The check of a level someone says these params made.
    Check {
        /// The params.
        params: serde_json::Value,
        /// The level.
        level: Candidate,
    },
    /// Whether the program takes these params.
    Prepare {
        /// The params.
        params: serde_json::Value,
    },
    /// A level's picture.
    Render {
        /// The params that made it.
        params: serde_json::Value,
        /// Its JSON form.
        level_json: String,
        /// Its text form.
        layout: String,
    },
}

/// A response from the program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The request's.
    pub id: u64,
    /// The answer.
    #[serde(flatten)]
    pub body: ResponseBody,
}

/// What a response answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseBody {
    /// To `describe`.
    Describe(Description),
    /// To `generate`.
    Outcome(OutcomeMessage),
    /// To `check`.
    Check(CheckMessage),
    /// To `prepare`.
    Prepare(CheckMessage),
    /// To `render`.
    Render(RenderMessage),
    /// The request could not be answered.
    Error(String),
}

/// A game as its program describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// The protocol the program speaks.
    pub protocol: u32,
    /// The game's name.
    pub name: String,
    /// The program's version (part of the job's identity).
    pub version: String,
    /// The name of its text format.
    pub text_format: String,
    /// The params' defaults.
    pub params: serde_json::Value,
    /// Every metric key with unit and meaning.
    pub metrics: Vec<MetricEntry>,
    /// The rating model (TOML, docs/ratings.md's format) that rates a
    /// level's metrics and moves into its difficulty: pregen rates every
    /// level with it, so the program's `difficulty` is not taken on trust.
    /// Left out: a level's difficulty is its moves.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rating_model: String,
    /// Whether one process runs several seeds at once (else one a thread).
    #[serde(default)]
    pub concurrent: bool,
    /// Whether it answers `render` with a level's SVG picture (else its
    /// levels are drawn from their text form).
    #[serde(default)]
    pub renders: bool,
}

/// A `render` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenderMessage {
    /// The picture: an SVG document.
    pub svg: String,
}

/// A metric key of a [`Description`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricEntry {
    /// The key.
    pub name: String,
    /// Its unit (`count`, `share`, `flag`...).
    pub unit: String,
    /// What it measures.
    pub doc: String,
}

/// One seed's outcome on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutcomeMessage {
    /// The verdict.
    pub status: Status,
    /// For `rejected` and `error`: the reason code's word (the data
    /// dictionary's list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// The reason's particulars.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason_detail: String,
    /// The level, when accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Candidate>,
    /// Milliseconds generating.
    pub generate_ms: f64,
    /// Milliseconds verifying.
    pub solve_ms: f64,
    /// Search nodes.
    pub nodes: u64,
}

/// A check's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckMessage {
    /// Whether the level passes.
    pub ok: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

impl From<Result<(), String>> for CheckMessage {
    fn from(result: Result<(), String>) -> Self {
        match result {
            Ok(()) => CheckMessage {
                ok: true,
                reason: String::new(),
            },
            Err(reason) => CheckMessage { ok: false, reason },
        }
    }
}

impl OutcomeMessage {
    /// The wire form of `outcome`.
    pub fn of(outcome: &Outcome) -> OutcomeMessage {
        let (status, reason, level) = match &outcome.result {
            Ok(level) => (Status::Accepted, None, Some(level.clone())),
            Err(r) => (r.status(), r.reason(), None),
        };
        OutcomeMessage {
            status,
            reason_code: reason.map(|r| r.code.as_str().to_string()),
            reason_detail: reason.map(|r| r.detail.clone()).unwrap_or_default(),
            level,
            generate_ms: outcome.generate_ms,
            solve_ms: outcome.solve_ms,
            nodes: outcome.nodes,
        }
    }

    /// The outcome it states, or what is wrong with it: a status without its
    /// level or reason (or with what it should not have), an unknown reason
    /// code or one of the other status, a time that is not a duration.
    pub fn into_outcome(self) -> Result<Outcome, String> {
        for (name, ms) in [
            ("generate_ms", self.generate_ms),
            ("solve_ms", self.solve_ms),
        ] {
            if !(ms.is_finite() && ms >= 0.0) {
                return Err(format!("{name} is {ms}, not a duration"));
            }
        }
        let reason = match self.reason_code {
            None => None,
            Some(word) => {
                let code =
                    Code::parse(&word).ok_or_else(|| format!("unknown reason code `{word}`"))?;
                Some(Reason::new(code, self.reason_detail))
            }
        };
        let result = match (self.status, self.level, reason) {
            (Status::Accepted, Some(level), None) => {
                if !level.difficulty.is_finite() || level.metrics.values().any(|v| !v.is_finite()) {
                    return Err("a level with a number that is not finite".into());
                }
                Ok(level)
            }
            (Status::Accepted, None, _) => return Err("accepted without a level".into()),
            (status, Some(_), _) => return Err(format!("a level with status {status}")),
            (Status::Unsolvable, None, None) => Err(Rejection::Unsolvable),
            (Status::Timeout, None, None) => Err(Rejection::Timeout),
            (status @ (Status::Rejected | Status::Error), None, Some(reason)) => {
                if reason.code.status() != status {
                    return Err(format!(
                        "reason code `{}` with status {status}",
                        reason.code
                    ));
                }
                Err(Rejection::Refused(reason))
            }
            (status @ (Status::Rejected | Status::Error), None, None) => {
                return Err(format!("status {status} without a reason_code"));
            }
            (status, None, Some(_)) => return Err(format!("a reason_code with status {status}")),
        };
        Ok(Outcome {
            result,
            generate_ms: self.generate_ms,
            solve_ms: self.solve_ms,
            nodes: self.nodes,
        })
    }
}

/// A response line as the program wrote it, read: `Err` says what is wrong
/// with it, quoting its start.
pub fn read_response(line: &str) -> Result<Response, String> {
    serde_json::from_str(line).map_err(|e| {
        let head: String = line.chars().take(80).collect();
        format!("a response that is not a message (`{head}`): {e}")
    })
}

/// The description of built-in `game` as its program would give it.
pub fn describe(game: GameKind) -> Result<Description, String> {
    let params = game.default_params();
    Ok(Description {
        protocol: PROTOCOL,
        name: game.name().to_string(),
        version: crate::GENERATOR_VERSION.to_string(),
        text_format: game.name().to_string(),
        params,
        rating_model: game.model_text().to_string(),
        metrics: game
            .metric_docs()
            .iter()
            .map(|m| MetricEntry {
                name: m.name.into(),
                unit: m.unit.into(),
                doc: m.doc.into(),
            })
            .collect(),
        concurrent: false,
        renders: false,
    })
}

/// Serves built-in `game` over the protocol: a request a line from `input`,
/// its response a line on `output`, until `input` ends. A line that is not a
/// request gets an `error` response (id 0 when it has none); the loop goes on.
/// Responses are flushed whenever no further request is waiting in `input`'s
/// buffer, so pipelined requests are answered in few writes.
pub fn serve<R: Read>(
    game: GameKind,
    input: &mut BufReader<R>,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut prepared: BTreeMap<String, PreparedGame> = BTreeMap::new();
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return output.flush();
        }
        if !line.trim().is_empty() {
            let response = match serde_json::from_str::<Request>(&line) {
                Err(e) => Response {
                    id: serde_json::from_str::<serde_json::Value>(&line)
                        .ok()
                        .and_then(|v| v.get("id")?.as_u64())
                        .unwrap_or(0),
                    body: ResponseBody::Error(format!("not a request: {e}")),
                },
                Ok(request) => Response {
                    id: request.id,
                    body: answer(game, &mut prepared, request.body),
                },
            };
            serde_json::to_writer(&mut output, &response).map_err(std::io::Error::other)?;
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}

/// The answer of built-in `game` to one request.
fn answer(
    game: GameKind,
    prepared: &mut BTreeMap<String, PreparedGame>,
    body: RequestBody,
) -> ResponseBody {
    fn ready<'a>(
        game: GameKind,
        prepared: &'a mut BTreeMap<String, PreparedGame>,
        params: &serde_json::Value,
    ) -> Result<&'a PreparedGame, String> {
        let key = params.to_string();
        if !prepared.contains_key(&key) {
            let game = game.prepare(params).map_err(|e| e.to_string())?;
            prepared.insert(key.clone(), game);
        }
        prepared.get(&key).ok_or_else(|| "params lost".to_string())
    }
    match body {
        RequestBody::Describe { protocol } if protocol != PROTOCOL => ResponseBody::Error(format!(
            "this game speaks protocol {PROTOCOL}, not {protocol}"
        )),
        RequestBody::Describe { .. } => match describe(game) {
            Ok(d) => ResponseBody::Describe(d),
            Err(e) => ResponseBody::Error(e),
        },
        RequestBody::Generate {
            seed,
            params,
            max_nodes,
        } => match ready(game, prepared, &params) {
            Ok(g) => {
                ResponseBody::Outcome(OutcomeMessage::of(&g.run(seed, &Budget::nodes(max_nodes))))
            }
            Err(e) => ResponseBody::Error(e),
        },
        RequestBody::Check { params, level } => match ready(game, prepared, &params) {
            // A check without a canonical form checks the rest (a pack's
            // level holds none: `analysis verify` asks this way).
            Ok(g) => ResponseBody::Check(CheckMessage::from(
                match level.canonical {
                    Some(_) => Ok(level),
                    None => g
                        .canonical_hash(&level.level_json)
                        .map(|canonical| Candidate { canonical, ..level }),
                }
                .and_then(|level| g.check(&level))
                .map_err(|e| e.to_string()),
            )),
            Err(e) => ResponseBody::Error(e),
        },
        RequestBody::Prepare { params } => {
            ResponseBody::Prepare(CheckMessage::from(ready(game, prepared, &params).map(drop)))
        }
        RequestBody::Render { .. } => ResponseBody::Error(format!(
            "{game} does not render: its description says `renders: false`"
        )),
    }
}

#[cfg(test)]
mod tests;
