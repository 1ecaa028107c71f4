//! The levels of a release's level files, text or JSON Lines, as the
//! check reads them, and what a file's name says of it.

pub(super) use crate::release_form::Entry;

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
