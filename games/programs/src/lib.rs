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
//! [`Program`] is the side pregen speaks from: a program run and spoken
//! to; [`register`] makes one a game of the process's registry. (The other
//! side, a built-in game answering these, is `pregen_games::external::serve`.)
//!
//! This crate is the game programs' driver: it knows the core's traits
//! (`pregen-game-core`), not the built-in games.

mod game;
mod group;
mod program;
mod stderr;
mod watchdog;

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::Digest;

use pregen_game_core::game::{Candidate, Outcome, Rejection};
use pregen_game_core::reason::{Code, Reason, Status, intern};

pub use game::{ProgramSpec, description, identity, register};
pub use group::stop_all;
pub use program::{Program, ProgramError};

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
        level: LevelMessage,
    },
    /// The solution of a level given in the program's text form (asked
    /// only of a program whose description says `solves`).
    Solve {
        /// The params (the program's defaults: `{}`).
        params: serde_json::Value,
        /// The level's text form, as a layout holds it.
        text: String,
        /// The node budget.
        max_nodes: u64,
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
    /// Left out: a level's difficulty is its moves. A program may send it
    /// as TOML text or as a JSON object of the same tables (read into TOML
    /// text here).
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "model_text"
    )]
    pub rating_model: String,
    /// Whether one process runs several seeds at once (else one a thread).
    #[serde(default)]
    pub concurrent: bool,
    /// Whether it answers `render` with a level's SVG picture (else its
    /// levels are drawn from their text form).
    #[serde(default)]
    pub renders: bool,
    /// Whether it answers `solve` with the solution of a level given in
    /// its text form (what `pregen solve` and `calibrate` ask).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub solves: bool,
    /// The program's own reason codes, beside the common ones: what its
    /// `rejected` and `error` outcomes may name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<ReasonEntry>,
}

/// A reason code a program declares in its [`Description`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonEntry {
    /// The word the rejects table's `reason` column holds (1 to 64
    /// characters, no `:`, not a common code's word).
    pub word: String,
    /// `rejected` (a rule or budget of the game refused the seed) or `error`.
    pub status: Status,
    /// What it means (the data dictionary's).
    pub meaning: String,
}

/// The number of a program's own code: stable, drawn from the game's name
/// and the word, from 1,000 (above every built-in code's) to below 2^16
/// (a coordinator keeps a seed's code in two bytes).
fn program_code_number(game: &str, word: &str) -> u32 {
    let digest = sha2::Sha256::digest(format!("{game}\n{word}").as_bytes());
    let head = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    1_000 + head % (65_536 - 1_000)
}

/// The most reason codes a program may declare.
pub const MAX_REASONS: usize = 100;

impl Description {
    /// The program's own reason codes, checked: words of 1 to 64 characters
    /// without `:` or a line break, none a common code's word, none twice,
    /// each with status `rejected` or `error`.
    pub fn codes(&self) -> Result<Vec<Code>, String> {
        if self.reasons.len() > MAX_REASONS {
            return Err(format!(
                "it declares {} reasons, more than {MAX_REASONS}",
                self.reasons.len()
            ));
        }
        let mut codes = Vec::with_capacity(self.reasons.len());
        for r in &self.reasons {
            let word = r.word.as_str();
            if word.is_empty()
                || word.len() > 64
                || word.contains([':', '\n', '\r'])
                || word.trim() != word
            {
                return Err(format!(
                    "reason `{word}` is not 1 to 64 characters without `:`, a line break or spaces at its ends"
                ));
            }
            if Code::common(word).is_some() {
                return Err(format!(
                    "reason `{word}` is a common code's word; give its code instead"
                ));
            }
            if !matches!(r.status, Status::Rejected | Status::Error) {
                return Err(format!(
                    "reason `{word}` has status {}, not rejected or error",
                    r.status
                ));
            }
            if codes.iter().any(|c: &Code| c.as_str() == word) {
                return Err(format!("reason `{word}` is listed twice"));
            }
            let code = declared(&self.name, r);
            if let Some(same) = codes.iter().find(|c| c.number() == code.number()) {
                return Err(format!(
                    "reasons `{same}` and `{word}` draw the same number; rename one"
                ));
            }
            codes.push(code);
        }
        Ok(codes)
    }
}

/// Every code a program has declared in this process: identifiers, like
/// the common codes, kept after the program is gone so that a stored
/// number still reads back ([`find_declared`]).
static DECLARED: Mutex<Vec<Code>> = Mutex::new(Vec::new());

/// The code of `entry` of game `game` (its texts interned).
fn declared(game: &str, entry: &ReasonEntry) -> Code {
    Code::new(
        program_code_number(game, &entry.word),
        intern(&entry.word),
        entry.status,
        intern(&entry.meaning),
    )
}

/// The first code game programs have declared in this process (in the
/// order they first were) that `find` finds.
pub fn find_declared(find: impl Fn(&Code) -> bool) -> Option<Code> {
    let known = DECLARED.lock().unwrap_or_else(|e| e.into_inner());
    known.iter().copied().find(|c| find(c))
}

/// Takes `codes` among the declared ones, unless one has the number of
/// another declared code with another word.
pub(crate) fn declare(codes: &[Code]) -> Result<(), String> {
    let mut known = DECLARED.lock().unwrap_or_else(|e| e.into_inner());
    for code in codes {
        let other = known
            .iter()
            .find(|c| c.number() == code.number() && c.as_str() != code.as_str());
        if let Some(other) = other {
            return Err(format!(
                "its reason `{code}` has the number of another program's `{other}`; rename one"
            ));
        }
    }
    for &code in codes {
        if !known.contains(&code) {
            known.push(code);
        }
    }
    Ok(())
}

/// A description's `rating_model`: TOML text as it is, or a JSON object
/// written as TOML text; anything else refused naming the field and its forms.
fn model_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    use serde::de::Error;
    let forms = "`rating_model` must be the rating model as TOML text (a string) or as a JSON \
                 object of its tables (`name`, `version`, `game`, `terms`: docs/ratings.md)";
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => Ok(text),
        object @ serde_json::Value::Object(_) => serde_json::from_value::<toml::Table>(object)
            .map_err(|e| format!("{e}"))
            .and_then(|table| toml::to_string(&table).map_err(|e| format!("{e}")))
            .map_err(|e| D::Error::custom(format!("{forms}; this object is neither ({e})"))),
        other => Err(D::Error::custom(format!(
            "{forms}, not {}",
            match other {
                serde_json::Value::Null => "null",
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Number(_) => "a number",
                _ => "an array",
            }
        ))),
    }
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
    pub level: Option<LevelMessage>,
    /// Milliseconds generating.
    pub generate_ms: f64,
    /// Milliseconds verifying.
    pub solve_ms: f64,
    /// Search nodes.
    pub nodes: u64,
}

/// An accepted level as the protocol carries it (version [`PROTOCOL`]):
/// a message of its own, so that the pack's level ([`Candidate`]) can gain
/// a field without the protocol changing under the programs that speak it.
/// Every field is required but `canonical`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelMessage {
    /// The program's own rating (pregen rates the level itself).
    pub difficulty: f64,
    /// The solution's length.
    pub moves: u32,
    /// Whether `moves` is proven fewest.
    pub moves_optimal: bool,
    /// The level's text form.
    pub layout: String,
    /// Its canonical JSON form.
    pub level_json: String,
    /// The solution in the program's notation.
    pub solution: String,
    /// Named metrics, as the description declares them.
    pub metrics: pregen_game_core::metrics::Metrics,
    /// SHA-256 of `level_json`, lower-case hex.
    pub level_hash: String,
    /// SHA-256 of the level's canonical form, for a program that drops
    /// duplicates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
}

impl From<Candidate> for LevelMessage {
    fn from(c: Candidate) -> LevelMessage {
        LevelMessage {
            difficulty: c.difficulty,
            moves: c.moves,
            moves_optimal: c.moves_optimal,
            layout: c.layout,
            level_json: c.level_json,
            solution: c.solution,
            metrics: c.metrics,
            level_hash: c.level_hash,
            canonical: c.canonical,
        }
    }
}

impl From<LevelMessage> for Candidate {
    fn from(m: LevelMessage) -> Candidate {
        Candidate {
            difficulty: m.difficulty,
            moves: m.moves,
            moves_optimal: m.moves_optimal,
            layout: m.layout,
            level_json: m.level_json,
            solution: m.solution,
            metrics: m.metrics,
            level_hash: m.level_hash,
            canonical: m.canonical,
        }
    }
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
            Ok(level) => (Status::Accepted, None, Some(level.clone().into())),
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
    /// `own` are the program's own codes ([`Description::codes`]).
    pub fn into_outcome(self, own: &[Code]) -> Result<Outcome, OutcomeError> {
        for (name, ms) in [
            ("generate_ms", self.generate_ms),
            ("solve_ms", self.solve_ms),
        ] {
            if !(ms.is_finite() && ms >= 0.0) {
                return Err(OutcomeError::NotADuration { name, ms });
            }
        }
        let reason = match self.reason_code {
            None => None,
            Some(word) => {
                let code = Code::common(&word)
                    .or_else(|| own.iter().copied().find(|c| c.as_str() == word))
                    .ok_or(OutcomeError::UnknownCode(word))?;
                Some(Reason::new(code, self.reason_detail))
            }
        };
        let result = match (self.status, self.level, reason) {
            (Status::Accepted, Some(level), None) => {
                if !level.difficulty.is_finite() || level.metrics.values().any(|v| !v.is_finite()) {
                    return Err(OutcomeError::NotFinite);
                }
                if let Some(fault) = layout_fault(&level.layout) {
                    return Err(OutcomeError::Layout(fault));
                }
                Ok(Candidate::from(level))
            }
            (Status::Accepted, None, _) => return Err(OutcomeError::AcceptedWithoutLevel),
            (status, Some(_), _) => return Err(OutcomeError::LevelWithStatus(status)),
            (Status::Unsolvable, None, None) => Err(Rejection::Unsolvable),
            (Status::Timeout, None, None) => Err(Rejection::Timeout),
            (status @ (Status::Rejected | Status::Error), None, Some(reason)) => {
                if reason.code.status() != status {
                    return Err(OutcomeError::CodeOfAnotherStatus {
                        code: reason.code,
                        status,
                    });
                }
                Err(Rejection::Refused(reason))
            }
            (status @ (Status::Rejected | Status::Error), None, None) => {
                return Err(OutcomeError::NoReason(status));
            }
            (status, None, Some(_)) => return Err(OutcomeError::ReasonWithStatus(status)),
        };
        Ok(Outcome {
            result,
            generate_ms: self.generate_ms,
            solve_ms: self.solve_ms,
            nodes: self.nodes,
        })
    }
}

/// What is wrong with an outcome a program stated
/// ([`OutcomeMessage::into_outcome`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutcomeError {
    /// A time that is not a duration.
    #[error("{name} is {ms}, not a duration")]
    NotADuration {
        /// `generate_ms` or `solve_ms`.
        name: &'static str,
        /// What it is.
        ms: f64,
    },
    /// A reason code that is neither common nor the description's.
    #[error("unknown reason code `{0}` (not a common one, nor one the description declares)")]
    UnknownCode(String),
    /// A level whose difficulty or a metric is not a finite number.
    #[error("a level with a number that is not finite")]
    NotFinite,
    /// A layout no release can hold ([`layout_fault`]).
    #[error("{0}")]
    Layout(String),
    /// `accepted` without a level.
    #[error("accepted without a level")]
    AcceptedWithoutLevel,
    /// A level with another status than `accepted`.
    #[error("a level with status {0}")]
    LevelWithStatus(Status),
    /// A reason code of the other status.
    #[error("reason code `{code}` with status {status}")]
    CodeOfAnotherStatus {
        /// The code.
        code: Code,
        /// The status stated.
        status: Status,
    },
    /// `rejected` or `error` without a reason code.
    #[error("status {0} without a reason_code")]
    NoReason(Status),
    /// A reason code with a status that takes none.
    #[error("a reason_code with status {0}")]
    ReasonWithStatus(Status),
}

/// What keeps a layout out of a release's text files, which hold levels
/// apart by blank lines and `;` comment lines: none when it fits.
pub fn layout_fault(layout: &str) -> Option<String> {
    const WHY: &str = "a release's text files hold levels apart by blank lines and `;` lines";
    if !layout.ends_with('\n') {
        return Some(format!("the layout does not end with a newline ({WHY})"));
    }
    layout.lines().enumerate().find_map(|(i, line)| {
        if line.trim().is_empty() {
            Some(format!("the layout's line {} is blank ({WHY})", i + 1))
        } else if line.starts_with(';') {
            Some(format!(
                "the layout's line {} starts with `;` ({WHY})",
                i + 1
            ))
        } else {
            None
        }
    })
}

/// A response line as the program wrote it, read: `Err` says what is wrong
/// with it, quoting its start.
pub fn read_response(line: &str) -> Result<Response, NotAMessage> {
    serde_json::from_str(line).map_err(|e| NotAMessage {
        head: line.chars().take(80).collect(),
        why: e.to_string(),
    })
}

/// A response line that is not a message of the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a response that is not a message (`{head}`): {why}")]
pub struct NotAMessage {
    /// The line's start (80 characters at most).
    pub head: String,
    /// What the JSON reader said.
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn description(model: &str) -> Result<Description, serde_json::Error> {
        serde_json::from_str(&format!(
            r#"{{"protocol":1,"name":"g","version":"1","text_format":"g","params":{{}},
                "metrics":[{{"name":"states","unit":"count","doc":"positions"}}],
                "rating_model":{model}}}"#
        ))
    }

    /// A layout a release cannot hold is refused at `generate`, naming why.
    #[test]
    fn a_layout_no_release_can_hold_is_refused() {
        assert_eq!(layout_fault("AB\nCD\n"), None);
        for (layout, says) in [
            ("AB\nCD", "does not end with a newline"),
            ("AB\n\nCD\n", "line 2 is blank"),
            ("AB\n;CD\n", "line 2 starts with `;`"),
            ("", "does not end with a newline"),
        ] {
            let fault = layout_fault(layout).expect("refused");
            assert!(fault.contains(says), "{layout:?}: {fault}");
        }
    }

    /// A level on the protocol is its own message: these keys, in this
    /// order, whatever fields the pack's level gains; `canonical` only
    /// when there is one, and a level without it reads back.
    #[test]
    fn the_protocols_level_keeps_its_own_fields() {
        let level = LevelMessage {
            difficulty: 1.5,
            moves: 4,
            moves_optimal: true,
            layout: "AB\n".into(),
            level_json: "{}".into(),
            solution: "RRUU".into(),
            metrics: [("states".to_string(), 3.0)].into_iter().collect(),
            level_hash: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a".into(),
            canonical: None,
        };
        let json = serde_json::to_string(&level).expect("json");
        assert_eq!(
            json,
            r#"{"difficulty":1.5,"moves":4,"moves_optimal":true,"layout":"AB\n","level_json":"{}","solution":"RRUU","metrics":{"states":3.0},"level_hash":"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}"#
        );
        let back: LevelMessage = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, level);
        let candidate = Candidate::from(back.clone());
        assert_eq!(LevelMessage::from(candidate), back);
        let without_moves = json.replace(r#""moves":4,"#, "");
        let err = serde_json::from_str::<LevelMessage>(&without_moves).expect_err("required");
        assert!(err.to_string().contains("missing field `moves`"), "{err}");
    }

    /// A rating model sent as a JSON object reads as the TOML text it
    /// stands for; a model of another form is refused naming the field.
    #[test]
    fn a_rating_model_may_be_toml_text_or_a_json_object() {
        let object = r#"{"name":"m","version":1,"game":"g",
            "terms":[{"feature":"moves","weight":1.0},{"feature":"states","weight":0.5}]}"#;
        let read = description(object).expect("an object");
        let docs = [pregen_game_core::metrics::metric(
            "states",
            "count",
            "positions",
        )];
        let model = pregen_game_core::rating::Model::parse(&read.rating_model, "g", &docs)
            .expect("the object's model");
        assert_eq!(model.terms.len(), 2);
        let text = serde_json::to_string(&read.rating_model).expect("a string");
        assert_eq!(
            description(&text).expect("text").rating_model,
            read.rating_model
        );
        for bad in ["7", "[1]", "null"] {
            let err = description(bad).expect_err("refused").to_string();
            assert!(err.contains("`rating_model` must be"), "{bad}: {err}");
        }
    }
}
