//! The JSON Lines form (`.jsonl`): one object a line, written and read as
//! one struct.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{Entry, FormError, Written};
use crate::job::Solutions;

/// A level's line, as written and as read.
#[derive(Serialize, Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    campaign: Option<u64>,
    tier: Option<u32>,
    #[serde(default)]
    position: Option<u64>,
    rank: Option<u64>,
    overall: Option<u64>,
    difficulty: Option<f64>,
    moves: u32,
    moves_optimal: bool,
    #[serde(borrow)]
    level_json: Cow<'a, str>,
    #[serde(borrow)]
    level_hash: Cow<'a, str>,
    #[serde(borrow)]
    text: Cow<'a, str>,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    solution: Option<Cow<'a, str>>,
}

/// A level's entry: one object on one line, its solution in it unless the
/// job ships none.
pub(super) fn write(out: &mut String, entry: &Written) {
    let (level, place) = (entry.level, &entry.place);
    let line = Line {
        id: Cow::Borrowed(&entry.id),
        seed: entry.seed,
        campaign: place.campaign,
        tier: Some(entry.tier),
        position: Some(place.number),
        rank: Some(place.rank),
        overall: Some(place.overall),
        difficulty: Some(level.difficulty),
        moves: level.moves,
        moves_optimal: level.moves_optimal,
        level_json: Cow::Borrowed(&level.level_json),
        level_hash: Cow::Borrowed(&level.level_hash),
        text: Cow::Borrowed(&level.layout),
        solution: (entry.solutions != Solutions::None).then_some(Cow::Borrowed(&level.solution)),
    };
    // Strings and finite numbers always serialize.
    if let Ok(line) = serde_json::to_string(&line) {
        out.push_str(&line);
    }
    out.push('\n');
}

/// The levels of a JSON Lines release file.
pub(super) fn read(name: &str, text: &str) -> Result<Vec<Entry>, FormError> {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let l: Line = serde_json::from_str(line).map_err(|source| FormError::Json {
                line: i + 1,
                source,
            })?;
            Ok(Entry {
                at: format!("{name}: {}", l.id),
                id: l.id.into_owned(),
                seed: l.seed,
                tier: l.tier,
                difficulty: l.difficulty,
                layout: l.text.into_owned(),
                level_json: Some(l.level_json.into_owned()),
                level_hash: Some(l.level_hash.into_owned()),
                solution: l.solution.map(Cow::into_owned),
                moves: l.moves,
                moves_optimal: l.moves_optimal,
                rank: l.rank,
                overall: l.overall,
                campaign: l.campaign,
            })
        })
        .collect()
}
