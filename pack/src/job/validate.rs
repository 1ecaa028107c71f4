//! A job's checks: every field, before anything starts; each error names
//! the field and what it may be.

use pregen_games::GameKind;

use super::{Job, MOST_LEVELS_PER_FILE, STRATUM_SEEDS, TierScheme, bad};
use crate::PackError;

impl Job {
    /// Checks every field; the error names the field and the allowed values.
    pub fn validate(&self) -> Result<(), PackError> {
        let game = self.validate_game()?;
        self.validate_strata(game)?;
        self.validate_seeds()?;
        self.validate_budget()?;
        self.validate_tiers()?;
        if self.release.program && !self.is_external() {
            return bad(
                "release.program",
                "carries a game program's files: it is for a job with game = \"external\"".into(),
            );
        }
        if self.release.levels_per_file > MOST_LEVELS_PER_FILE {
            return bad(
                "release.levels_per_file",
                format!(
                    "{} is more than {MOST_LEVELS_PER_FILE}; 0 keeps each tier in one file",
                    self.release.levels_per_file
                ),
            );
        }
        Ok(())
    }

    /// The pack's name, the game, its params (every number finite) and the
    /// rating model. A game program's params and model are checked when it
    /// is resolved ([`Job::resolve_program`]), not here: validating never
    /// starts a program.
    fn validate_game(&self) -> Result<Option<GameKind>, PackError> {
        if self.pack.is_empty()
            || self.pack.starts_with('.')
            || !self
                .pack
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return bad(
                "pack",
                format!(
                    "`{}` must be a folder name of letters, digits, - _ .",
                    self.pack
                ),
            );
        }
        let tables = std::iter::once(("params".to_string(), &self.params)).chain(
            self.strata
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("strata[{i}].params"), &s.params)),
        );
        for (at, table) in tables {
            if let Some((key, value)) = non_finite(table) {
                return bad(
                    &format!("{at}.{key}"),
                    format!("{value} is not a finite number"),
                );
            }
        }
        if self.is_external() {
            self.validate_external()?;
            return Ok(None);
        }
        if self.external.is_some() {
            return bad(
                "external",
                format!(
                    "an [external] table with game = \"{}\" (it is for game = \"external\")",
                    self.game
                ),
            );
        }
        let game = match GameKind::from_name(&self.game) {
            Ok(g) => g,
            Err(e) => return bad("game", format!("{e}, or external (a program)")),
        };
        if let Err(e) = game.validate_params(&self.params_json()) {
            return bad("params", e.to_string());
        }
        self.rating_model()?;
        Ok(Some(game))
    }

    /// The `[external]` table as written: a command, no empty word.
    fn validate_external(&self) -> Result<(), PackError> {
        let Some(spec) = &self.external else {
            return bad(
                "external",
                "a job with game = \"external\" needs an [external] table with its command".into(),
            );
        };
        if spec.command.is_empty() || spec.command.iter().any(String::is_empty) {
            return bad(
                "external.command",
                "must list the program and its arguments, none empty".into(),
            );
        }
        if spec.files.iter().any(String::is_empty) {
            return bad("external.files", "a file name is empty".into());
        }
        if spec.checker.iter().any(String::is_empty) {
            return bad(
                "external.checker",
                "must list the checker program and its arguments, none empty".into(),
            );
        }
        if spec.probe.is_some_and(|n| n > super::MOST_PROBE_SEEDS) {
            return bad(
                "external.probe",
                format!("must be 0..={} seeds", super::MOST_PROBE_SEEDS),
            );
        }
        Ok(())
    }

    /// Every stratum's params (the job's own without strata), checked by `game`.
    pub(super) fn validate_params_with(&self, game: &GameKind) -> Result<(), PackError> {
        if self.strata.is_empty()
            && let Err(e) = game.validate_params(&self.params_json())
        {
            return bad("params", e.to_string());
        }
        for (i, plan) in self
            .plan()
            .iter()
            .enumerate()
            .filter(|_| !self.strata.is_empty())
        {
            if let Err(e) = game.validate_params(&plan.params) {
                return bad(&format!("strata[{i}].params"), e.to_string());
            }
        }
        Ok(())
    }

    /// The strata: at most 1,000, each's params and count, and `count` their sum.
    fn validate_strata(&self, game: Option<GameKind>) -> Result<(), PackError> {
        if self.strata.len() > 1_000 {
            return bad(
                "strata",
                format!("{} strata; at most 1000", self.strata.len()),
            );
        }
        if let Some(game) = game {
            self.validate_params_with(&game)?;
        }
        for (i, plan) in self
            .plan()
            .iter()
            .enumerate()
            .filter(|_| !self.strata.is_empty())
        {
            if !(1..=100_000_000).contains(&plan.count) {
                return bad(
                    &format!("strata[{i}].count"),
                    format!("{} must be 1..=100000000", plan.count),
                );
            }
        }
        let bands = std::iter::once(("difficulty".to_string(), self.difficulty)).chain(
            self.strata
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("strata[{i}].difficulty"), s.difficulty)),
        );
        for (at, band) in bands {
            if let Some(Err(e)) = band.map(|b| b.check()) {
                return bad(&at, e);
            }
        }
        let sum: u64 = self.strata.iter().map(|s| s.count).sum();
        if !self.strata.is_empty() && self.count != sum {
            return bad(
                "count",
                format!(
                    "{} is not the sum of the strata counts ({sum}); leave it out",
                    self.count
                ),
            );
        }
        Ok(())
    }

    /// The seeds: room for every stratum and the count before `u64::MAX`,
    /// the count, the lease size, `max_seeds` and the cross-check's share.
    fn validate_seeds(&self) -> Result<(), PackError> {
        if self
            .first_seed
            .checked_add(self.strata.len() as u64 * STRATUM_SEEDS)
            .is_none()
        {
            return bad(
                "first_seed",
                format!("{} leaves no room for the strata's seeds", self.first_seed),
            );
        }
        if self.external.is_some() {
            // A game program is sent seeds below 2^63 (docs/external.md):
            // the highest a run may reach is the last stratum's limit.
            let span = self.max_seeds.unwrap_or(STRATUM_SEEDS);
            let reach = self
                .first_seed
                .saturating_add((self.strata.len().max(1) as u64 - 1) * STRATUM_SEEDS)
                .saturating_add(span);
            if reach > PROGRAM_SEED_LIMIT {
                return bad(
                    "first_seed",
                    format!(
                        "a game program's seeds must stay below 2^63 ({PROGRAM_SEED_LIMIT}); this \
                         job may run seeds {} to {} ({} stratum(s) of up to {span} seeds each, \
                         `max_seeds` or 2^40): start lower",
                        self.first_seed,
                        reach - 1,
                        self.strata.len().max(1)
                    ),
                );
            }
        }
        if self.count == 0 || self.count > 100_000_000 {
            return bad("count", format!("{} must be 1..=100000000", self.count));
        }
        if self
            .first_seed
            .checked_add(self.count.saturating_mul(1_000))
            .is_none()
        {
            return bad(
                "first_seed",
                "leaves too little room before u64::MAX".into(),
            );
        }
        if !(1..=1_000_000).contains(&self.seeds_per_lease) {
            return bad(
                "seeds_per_lease",
                format!("{} must be 1..=1000000", self.seeds_per_lease),
            );
        }
        if let Some(max) = self.max_seeds {
            let largest = self.plan().iter().map(|p| p.count).max().unwrap_or(0);
            if max < largest || max > 1 << 40 {
                return bad(
                    "max_seeds",
                    format!(
                        "{max} must be at least the largest count ({largest}) and at most 2^40"
                    ),
                );
            }
        }
        if !(0.0..=1.0).contains(&self.cross_check) {
            return bad(
                "cross_check",
                format!("{} must be a share from 0 to 1", self.cross_check),
            );
        }
        Ok(())
    }

    /// The node budget and the watchdog.
    fn validate_budget(&self) -> Result<(), PackError> {
        if self.budget.max_nodes == 0 {
            return bad("budget.max_nodes", "must be positive".into());
        }
        if !(1..=3_600_000).contains(&self.budget.watchdog_ms) {
            return bad(
                "budget.watchdog_ms",
                format!("{} must be 1..=3600000", self.budget.watchdog_ms),
            );
        }
        Ok(())
    }

    /// The tiers' scheme and the campaigns.
    fn validate_tiers(&self) -> Result<(), PackError> {
        match &self.tiers {
            TierScheme::Equal { count } if !(1..=99).contains(count) => {
                return bad("tiers.count", format!("{count} must be 1..=99"));
            }
            TierScheme::Thresholds { thresholds } => {
                if thresholds.is_empty() || thresholds.len() > 98 {
                    return bad("tiers.thresholds", "needs 1..=98 values".into());
                }
                if thresholds
                    .windows(2)
                    .any(|w| w[0].partial_cmp(&w[1]) != Some(std::cmp::Ordering::Less))
                    || thresholds.iter().any(|t| !t.is_finite())
                {
                    return bad(
                        "tiers.thresholds",
                        "must be finite and strictly ascending".into(),
                    );
                }
            }
            TierScheme::Equal { .. } => {}
        }
        if !(1..=1000).contains(&self.campaigns.length) {
            return bad(
                "campaigns.length",
                format!("{} must be 1..=1000", self.campaigns.length),
            );
        }
        if self.campaigns.count > self.count / u64::from(self.campaigns.length) {
            return bad(
                "campaigns.count",
                format!(
                    "{} campaigns of {} need more than count = {} levels",
                    self.campaigns.count, self.campaigns.length, self.count
                ),
            );
        }
        Ok(())
    }
}

/// The first float of `table` (nested tables and arrays included) that is
/// infinite or NaN, with its key: JSON, the games' form, has no such number.
fn non_finite(table: &toml::Table) -> Option<(String, f64)> {
    fn walk(value: &toml::Value) -> Option<(String, f64)> {
        match value {
            toml::Value::Float(f) if !f.is_finite() => Some((String::new(), *f)),
            toml::Value::Table(t) => non_finite(t),
            toml::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v).map(|(k, f)| (format!("[{i}]{k}"), f))),
            _ => None,
        }
    }
    table.iter().find_map(|(key, value)| {
        walk(value).map(|(rest, f)| match rest.as_str() {
            "" => (key.clone(), f),
            r if r.starts_with('[') => (format!("{key}{r}"), f),
            r => (format!("{key}.{r}"), f),
        })
    })
}

/// The seeds a game program is sent are below this (2^63): a language
/// whose integers are signed 64-bit reads every one.
pub const PROGRAM_SEED_LIMIT: u64 = 1 << 63;
