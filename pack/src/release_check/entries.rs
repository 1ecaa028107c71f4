//! The levels of a release's level files, text or JSON Lines, as the
//! check reads them, and what a file's name says of it.

use serde::Deserialize;

/// One level as a release file gives it.
pub(super) struct Entry {
    /// Where: the file and the level's id.
    pub(super) at: String,
    /// The level's id as the file gives it.
    pub(super) id: String,
    pub(super) seed: u64,
    /// The tier and difficulty the file claims (campaign files too).
    pub(super) tier: Option<u32>,
    pub(super) difficulty: Option<f64>,
    pub(super) layout: String,
    pub(super) level_json: Option<String>,
    pub(super) level_hash: Option<String>,
    pub(super) solution: Option<String>,
    pub(super) moves: u32,
    pub(super) moves_optimal: bool,
    /// Its rank in its tier and in the whole release, as the file claims
    /// (releases written before ranks hold none).
    pub(super) rank: Option<u64>,
    pub(super) overall: Option<u64>,
    /// The campaign of a level of the campaigns' file.
    pub(super) campaign: Option<u64>,
}

/// Whether a release file holds levels (a tier's or a campaign's).
pub(super) fn is_level_file(name: &str) -> bool {
    let level_form = name.ends_with(".txt") || name.ends_with(".jsonl");
    let campaigns = name == "campaigns.txt" || name == "campaigns.jsonl";
    campaigns || level_form && (name.starts_with("tier-") || name.starts_with("campaigns/"))
}

/// The tier of a tier's level file (`tier-03.txt`, `tier-03-00002.jsonl`);
/// `None` for a campaign's.
pub(super) fn tier_of_file(name: &str) -> Option<u32> {
    name.strip_prefix("tier-")?.get(..2)?.parse().ok()
}

/// The campaign of a campaign's own level file (`campaigns/campaign-00007.txt`,
/// as releases held campaigns before the campaigns' file).
pub(super) fn campaign_of_file(name: &str) -> Option<u64> {
    name.strip_prefix("campaigns/campaign-")?
        .get(..5)?
        .parse()
        .ok()
}

/// The levels of a JSON Lines release file.
pub(super) fn jsonl_entries(name: &str, text: &str) -> Result<Vec<Entry>, String> {
    #[derive(Deserialize)]
    struct Line {
        id: String,
        seed: u64,
        tier: Option<u32>,
        difficulty: Option<f64>,
        moves: u32,
        moves_optimal: bool,
        level_json: String,
        level_hash: String,
        text: String,
        solution: Option<String>,
        rank: Option<u64>,
        overall: Option<u64>,
        campaign: Option<u64>,
    }
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let l: Line = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
            Ok(Entry {
                at: format!("{name}: {}", l.id),
                id: l.id,
                seed: l.seed,
                tier: l.tier,
                difficulty: l.difficulty,
                layout: l.text,
                level_json: Some(l.level_json),
                level_hash: Some(l.level_hash),
                solution: l.solution,
                moves: l.moves,
                moves_optimal: l.moves_optimal,
                rank: l.rank,
                overall: l.overall,
                campaign: l.campaign,
            })
        })
        .collect()
}

/// The levels of a text release file: each a `; id ID seed S tier T rank
/// R overall O difficulty D moves M` line (with ` (best found)` when not proven
/// fewest), perhaps a `; solution` line, then its text form up to a blank
/// line.
pub(super) fn text_entries(name: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    for block in text.split("\n\n") {
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
                    campaign = Some(
                        number
                            .parse()
                            .map_err(|_| format!("`{line}` names no campaign"))?,
                    );
                }
                continue;
            }
            layout.push_str(line);
            layout.push('\n');
        }
        let Some(header) = header else {
            if layout.trim().is_empty() {
                continue; // the file's header: comments alone
            }
            return Err(format!(
                "a level with no `; id` line: `{}`",
                layout.lines().next().unwrap_or_default()
            ));
        };
        let words: Vec<&str> = header.split_whitespace().collect();
        let field = |key: &str| {
            words
                .iter()
                .position(|w| *w == key)
                .and_then(|i| words.get(i + 1))
                .ok_or_else(|| format!("`; id {header}` has no {key}"))
        };
        let seed = field("seed")?
            .parse()
            .map_err(|e| format!("`; id {header}`: seed: {e}"))?;
        let moves = field("moves")?
            .parse()
            .map_err(|e| format!("`; id {header}`: moves: {e}"))?;
        let id = words.first().copied().unwrap_or_default().to_string();
        entries.push(Entry {
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
            rank: field("rank").ok().and_then(|r| r.parse().ok()),
            overall: field("overall").ok().and_then(|r| r.parse().ok()),
            campaign,
        });
    }
    Ok(entries)
}
