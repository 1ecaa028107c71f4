//! The text form (`.txt`): each level's text form under `;` header lines,
//! levels apart by a blank line.

use std::fmt::Write as _;

use super::{Entry, FormError, Written};
use crate::job::{Job, Solutions};

/// The lines above a file's first level.
pub(super) fn header(job: &Job, about: &str) -> String {
    format!("; pack {} game {}{about}\n\n", job.pack, job.game_name())
}

/// A level's entry: a comment header (with the solution when the job ships
/// them inline) and its layout.
pub(super) fn write(out: &mut String, entry: &Written) {
    let (level, place) = (entry.level, &entry.place);
    let best = if level.moves_optimal {
        ""
    } else {
        " (best found)"
    };
    // Writing to a string cannot fail.
    if let Some(campaign) = place.campaign {
        let _ = write!(out, "; campaign {campaign} ");
    } else {
        out.push_str("; ");
    }
    let _ = writeln!(
        out,
        "{} {}\n; id {} seed {} tier {} rank {} overall {} difficulty {} moves {}{best}",
        place.word,
        place.number,
        entry.id,
        entry.seed,
        entry.tier,
        place.rank,
        place.overall,
        level.difficulty,
        level.moves,
    );
    if let Solutions::Inline = entry.solutions {
        let _ = writeln!(out, "; solution {}", level.solution);
    }
    out.push_str(level.layout.trim_end());
    out.push_str("\n\n");
}

/// The levels of a text release file: each a `; id ID seed S tier T rank
/// R overall O difficulty D moves M` line (with ` (best found)` when not
/// proven fewest), perhaps a `; solution` line, then its text form up to a
/// blank line.
pub(super) fn read(name: &str, text: &str) -> Result<Vec<Entry>, FormError> {
    let mut entries = Vec::new();
    for block in text.split("\n\n") {
        if let Some(entry) = read_block(name, block)? {
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// One block of a text release file: a level, or `None` for the file's
/// header (comments alone).
fn read_block(name: &str, block: &str) -> Result<Option<Entry>, FormError> {
    let mut header = None;
    let mut solution = None;
    let mut campaign = None;
    let mut layout = String::new();
    for line in block.lines() {
        if layout.is_empty() && line.starts_with(';') {
            if let Some(rest) = line.strip_prefix("; id ") {
                header = Some(rest);
            } else if let Some(rest) = line.strip_prefix("; solution ") {
                solution = Some(rest.to_string());
            } else if let Some(rest) = line.strip_prefix("; campaign ") {
                let number = rest.split_whitespace().next().unwrap_or_default();
                let number = number.parse();
                campaign = Some(number.map_err(|_| FormError::NoCampaign(line.to_string()))?);
            }
            continue;
        }
        layout.push_str(line);
        layout.push('\n');
    }
    let Some(header) = header else {
        if layout.trim().is_empty() {
            return Ok(None);
        }
        let first = layout.lines().next().unwrap_or_default();
        return Err(FormError::NoId(first.to_string()));
    };
    let words: Vec<&str> = header.split_whitespace().collect();
    let field = |field: &'static str| {
        words
            .iter()
            .position(|w| *w == field)
            .and_then(|i| words.get(i + 1))
            .ok_or_else(|| FormError::NoField {
                header: header.to_string(),
                field,
            })
    };
    let number = |key: &'static str| field(key).ok().and_then(|v| v.parse().ok());
    let seed = field("seed")?.parse().map_err(|_| FormError::NoField {
        header: header.to_string(),
        field: "seed number",
    })?;
    let moves = field("moves")?.parse().map_err(|_| FormError::NoField {
        header: header.to_string(),
        field: "moves number",
    })?;
    let id = words.first().copied().unwrap_or_default().to_string();
    Ok(Some(Entry {
        at: format!("{name}: {id}"),
        id,
        seed,
        tier: field("tier").ok().and_then(|t| t.parse().ok()),
        difficulty: field("difficulty").ok().and_then(|d| d.parse().ok()),
        layout,
        level_json: None,
        level_hash: None,
        solution,
        moves,
        moves_optimal: !header.ends_with("(best found)"),
        rank: number("rank"),
        overall: number("overall"),
        campaign,
    }))
}
