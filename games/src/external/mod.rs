//! Game programs in the registry, and the built-in games over the game
//! protocol.
//!
//! The protocol and its driver are `pregen-game-programs`, re-exported here
//! whole; this module adds what needs the built-in games:
//! [`GameKind::external`] (a program as a game of the registry), [`serve`]
//! (a built-in game answering the protocol: `pregen game-server GAME`) and
//! [`describe`].

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};

pub use pregen_game_programs::*;

use crate::registry::{GameKind, PreparedGame};
use crate::{Budget, Candidate};

impl GameKind {
    /// The game the program of `spec` is: started (once per spec while a
    /// handle on it lives), described, its description checked, and
    /// registered ([`register`]). Dropping the last handle stops its
    /// processes.
    pub fn external(spec: &ProgramSpec) -> Result<GameKind, ProgramError> {
        register(spec).map(GameKind)
    }

    /// The description of an external game's program (`None` for a
    /// built-in game).
    pub fn description(&self) -> Option<&Description> {
        description(self.0.as_ref())
    }
}

/// The description of built-in `game` as its program would give it.
pub fn describe(game: &GameKind) -> Description {
    let params = game.default_params();
    Description {
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
        solves: false,
        reasons: game
            .reasons()
            .iter()
            .map(|c| ReasonEntry {
                word: c.as_str().into(),
                status: c.status(),
                meaning: c.doc().into(),
            })
            .collect(),
    }
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
                    body: answer(&game, &mut prepared, request.body),
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
    game: &GameKind,
    prepared: &mut BTreeMap<String, PreparedGame>,
    body: RequestBody,
) -> ResponseBody {
    fn ready<'a>(
        game: &GameKind,
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
        RequestBody::Describe { .. } => ResponseBody::Describe(describe(game)),
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
                match Candidate::from(level) {
                    level @ Candidate {
                        canonical: Some(_), ..
                    } => Ok(level),
                    level => g
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
        RequestBody::Solve { .. } => ResponseBody::Error(format!(
            "{game} does not solve level texts here (`pregen solve --game {game}` does): its \
             description says `solves: false`"
        )),
    }
}

#[cfg(test)]
mod tests;
