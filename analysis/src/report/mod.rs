//! The HTML report of a pack (`pregen analysis report PACK`): one self-contained
//! page (inline CSS and SVG, no scripts, nothing fetched) with the pack's
//! overview, the tiers side by side with the game's metrics, and charts of
//! difficulty, moves, rejections, times and the campaigns' difficulty ramp.
//! Everything is read from the pack's files, like [`crate::summarize`].

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use arrow_array::cast::AsArray;
use pregen_games::Game;
use pregen_games::rating::Model;
use pregen_games::sokoban::Sokoban;
use pregen_pack::read::{
    f64_column, metrics_column, read_batches, text_column, u32_column, u64_column,
};
use pregen_pack::schema::columns as c;
use pregen_pack::{Manifest, PackDir, dir};

use crate::picture;
use crate::svg::escape;
use crate::{AnalysisError, Percentiles};

mod charts;

/// One accepted level, as the report needs it.
struct Level {
    tier: u32,
    seed: u64,
    difficulty: f64,
    moves: u32,
    optimal: bool,
    ms: f64,
    metrics: Vec<(String, f64)>,
}

/// One campaign slot.
struct Slot {
    campaign: u64,
    position: u32,
    seed: u64,
    difficulty: f64,
}

/// One seed that was not accepted.
struct Reject {
    status: String,
    reason: String,
    ms: f64,
}

/// Where a pack's `release/` is seen from the play page at `page`: the page
/// itself when it lies in a folder named `release`, else beside it.
fn seeds_from(page: &str) -> &'static str {
    let folder = Path::new(page).parent().and_then(|p| p.file_name());
    if folder.is_some_and(|f| f == "release") {
        ""
    } else {
        "../release/"
    }
}

/// Builds the report of the pack in `dir`.
pub fn report(dir: &Path) -> Result<String, AnalysisError> {
    report_with(dir, None)
}

/// [`report`], each level drawn linked to the play page at `play` (docs/web.md,
/// relative to where the report is opened) when given: `PAGE?seeds=S&seed=N`,
/// with `S` the tier's seed file seen from the page, as `pregen web` lays it
/// out: `../release/seeds/tier-NN.txt` from a folder beside the release
/// (`PACK/web/play.html`), `seeds/tier-NN.txt` from the release itself.
pub fn report_with(dir: &Path, play: Option<&str>) -> Result<String, AnalysisError> {
    report_judged(dir, play, pregen_pack::job::ProgramSource::Unnamed)
}

/// [`report_with`], a game program's pack with the program `judge` names
/// ([`pregen_pack::job::ProgramSource`]), never the command its manifest
/// names: its rating model and its pictures come from it. Without one, the
/// report has no rating model and draws from the levels' text form.
pub fn report_judged(
    dir: &Path,
    play: Option<&str>,
    judge: pregen_pack::job::ProgramSource<'_>,
) -> Result<String, AnalysisError> {
    let pack = PackDir::new(dir);
    pack.require_complete()?;
    let manifest = pack.read_manifest()?;
    let job = crate::runnable_job(&manifest, judge)?;
    // A game program's game, held while the report is made (its rating
    // model, its pictures): the program starts once. A program that cannot
    // start leaves the report without its model and draws from text.
    let _program = job.as_ref().and_then(|j| j.game_kind().ok());
    let levels = read_levels(&pack)?;
    let rejects = read_rejects(dir)?;
    let campaigns = read_campaigns(dir)?;
    // Every level drawn is read in one pass over the tier files.
    let picks = gallery_picks(&levels);
    let strip = first_campaign(&campaigns);
    let drawn = picks
        .values()
        .flatten()
        .map(|&(_, seed)| seed)
        .chain(strip.iter().map(|&(_, seed)| seed))
        .collect();
    let found = picture::find_levels(dir, &drawn, judge)?;

    let mut html = String::new();
    let title = format!(
        "pregen pack {} ({})",
        escape(&manifest.pack),
        escape(&manifest.job.game)
    );
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    overview(&mut html, &manifest, &levels, &rejects);
    if manifest.strata.len() > 1 || manifest.strata.iter().any(|s| s.band.is_some()) {
        strata_table(&mut html, &crate::summarize(dir)?);
    }
    let model = job.as_ref().and_then(|j| j.rating_model().ok());
    if let Some(model) = &model {
        rating(&mut html, model);
    }
    tiers_table(&mut html, &levels);
    let by_seed: BTreeMap<u64, &Level> = levels.iter().map(|l| (l.seed, l)).collect();
    let terms = |seed: u64| {
        let terms = terms_of(
            &manifest.job.game,
            model.as_ref(),
            by_seed.get(&seed).copied(),
        );
        match (play, found.get(&seed)) {
            (Some(page), Some(level)) => format!(
                "{terms} <a href=\"{}?seeds={}seeds/tier-{:02}.txt&amp;seed={seed}\">play</a>",
                escape(page),
                seeds_from(page),
                level.tier
            ),
            _ => terms,
        }
    };
    legend(&mut html, &manifest.job.game);
    gallery(&mut html, &picks, &found, &terms);
    charts::charts(&mut html, &levels, &rejects, &campaigns);
    campaign_strip(&mut html, &strip, &found, &terms);
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

const STYLE: &str = "
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1220px; margin: 2em auto; padding: 0 1em; color: #1d1d1f; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-variant-numeric: tabular-nums; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.chart { width: 100%; height: auto; margin: 0.5em 0 1.5em; }
.chart .title { font-weight: 600; font-size: 14px; }
.chart .tick { font-size: 11px; fill: #444; }
.chart .axis { font-size: 12px; fill: #222; }
.chart .grid { stroke: #e4e4e4; }
.gallery { display: grid; grid-template-columns: repeat(3, 1fr); gap: 0.8em; margin: 0.4em 0 1.2em; }
.strip { display: grid; grid-template-columns: repeat(5, 1fr); gap: 0.6em; }
figure { margin: 0; }
figure svg.level { width: 100%; height: auto; max-height: 300px; display: block; }
figcaption { font-size: 12px; color: #444; margin-top: 0.2em; }
table.tiers { font-size: 13px; }
table.tiers th, table.tiers td { padding: 0.2em 0.45em; }
table.tiers th:first-child { text-align: left; }
.legend span { display: inline-flex; align-items: center; gap: 0.3em; margin: 0 1.2em 0.4em 0; font-size: 13px; }
";

/// Per tier, the seeds of its easiest, median and hardest level.
fn gallery_picks(levels: &[Level]) -> BTreeMap<u32, [(&'static str, u64); 3]> {
    let mut by_tier: BTreeMap<u32, Vec<&Level>> = BTreeMap::new();
    for level in levels {
        by_tier.entry(level.tier).or_default().push(level);
    }
    // Tier files are sorted by difficulty; sorted again here, so that a pack
    // rewritten by another tool draws the same.
    by_tier
        .into_iter()
        .map(|(tier, mut rows)| {
            rows.sort_by(|a, b| {
                a.difficulty
                    .total_cmp(&b.difficulty)
                    .then(a.seed.cmp(&b.seed))
            });
            let at = |i: usize| rows[i].seed;
            let picks = [
                ("easiest", at(0)),
                ("median", at(rows.len() / 2)),
                ("hardest", at(rows.len() - 1)),
            ];
            (tier, picks)
        })
        .collect()
}

/// Per tier, its easiest, median and hardest level drawn, with seed, moves
/// and difficulty: what a designer looks at when choosing levels.
fn gallery(
    html: &mut String,
    picks: &BTreeMap<u32, [(&str, u64); 3]>,
    found: &BTreeMap<u64, picture::PackLevel>,
    terms: &dyn Fn(u64) -> String,
) {
    html.push_str("<h2>Gallery</h2>\n<p>The easiest, median and hardest level of each tier.</p>\n");
    for (tier, picks) in picks {
        let _ = writeln!(html, "<h3>Tier {tier:02}</h3>\n<div class=\"gallery\">");
        for (what, seed) in picks {
            if let Some(level) = found.get(seed) {
                figure(html, level, what, &terms(*seed));
            }
        }
        html.push_str("</div>\n");
    }
}

/// (position, seed) of the first campaign's levels, in order.
fn first_campaign(campaigns: &[Slot]) -> Vec<(u32, u64)> {
    let mut first: Vec<(u32, u64)> = campaigns
        .iter()
        .filter(|s| s.campaign == 1)
        .map(|s| (s.position, s.seed))
        .collect();
    first.sort_unstable();
    first
}

/// The first campaign's levels in order, drawn.
fn campaign_strip(
    html: &mut String,
    first: &[(u32, u64)],
    found: &BTreeMap<u64, picture::PackLevel>,
    terms: &dyn Fn(u64) -> String,
) {
    if first.is_empty() {
        return;
    }
    html.push_str("<h2>Campaign 1, level by level</h2>\n<div class=\"strip\">\n");
    for (position, seed) in first {
        if let Some(level) = found.get(seed) {
            figure(html, level, &format!("position {position}"), &terms(*seed));
        }
    }
    html.push_str("</div>\n");
}

/// What the pictures' tiles mean: each kind of tile of the game, drawn by
/// its own palette, with its meaning (none for a game program, whose
/// pictures are its own).
fn legend(html: &mut String, game: &str) {
    let kinds = picture::legend(game);
    if kinds.is_empty() {
        return;
    }
    html.push_str("<h2>Legend</h2>\n<p class=\"legend\">");
    for (swatch, meaning) in kinds {
        let _ = write!(html, "<span>{swatch} {}</span>", escape(meaning));
    }
    let _ = writeln!(
        html,
        "</p>\n<p>The text form and the rules: <code>docs/{}.md</code> in pregen's repository.</p>",
        escape(game)
    );
}

/// A level drawn with its caption: what it is here, then the one heading
/// every level has (its picture's title too): id, tier, difficulty, moves.
fn figure(html: &mut String, level: &picture::PackLevel, what: &str, terms: &str) {
    let _ = writeln!(
        html,
        "<figure>{}<figcaption>{what}, {}{terms}</figcaption></figure>",
        level.svg(1.0),
        escape(&level.caption()),
    );
}

/// The rating model: what each term is and weighs, and how it agrees with
/// outside judgement.
fn rating(html: &mut String, model: &Model) {
    let _ = writeln!(
        html,
        "<h2>Rating</h2>\n<p>Difficulty is the rating model <b>{}</b> v{} (SHA-256 {}): {}. \
         It is the bias ({}) plus the terms below; the gallery's captions show each level's \
         value of each feature and what its term adds (<code>solutions 4 -&gt; +2</code>).</p>",
        escape(&model.name),
        model.version,
        escape(model.sha256().get(..12).unwrap_or_default()),
        escape(&model.about),
        short(model.bias)
    );
    html.push_str("<table>\n<tr><th>term</th><th>weight</th><th>what it is</th></tr>\n");
    for t in &model.terms {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td style=\"text-align:left\">{}</td></tr>",
            escape(&t.shape()),
            t.weight,
            escape(&t.about)
        );
    }
    html.push_str("</table>\n");
    if !model.agreement.is_empty() {
        html.push_str("<p>Agreement with outside judgement:</p>\n<ul>\n");
        for line in &model.agreement {
            let _ = writeln!(html, "<li>{}</li>", escape(line));
        }
        html.push_str("</ul>\n");
    }
}

/// A caption's tail: sokoban's pushes, and each term's part of the rating.
fn terms_of(game: &str, model: Option<&Model>, level: Option<&Level>) -> String {
    let Some(level) = level else {
        return String::new();
    };
    let metrics: pregen_games::Metrics = level.metrics.iter().cloned().collect();
    let mut tail = String::new();
    if game == Sokoban::NAME
        && let Some(pushes) = metrics.get("pushes")
    {
        let _ = write!(tail, ", {pushes} pushes");
    }
    if let Some(model) = model
        && let Ok(parts) = model.contributions(Model::features(&metrics, level.moves))
    {
        // Each term as the level's value of its feature and what the term
        // adds to the difficulty: `solutions 4 -> +2`.
        let feature = Model::features(&metrics, level.moves);
        let named: Vec<String> = std::iter::once(format!("bias {}", signed(model.bias)))
            .chain(model.terms.iter().zip(parts).map(|(t, p)| {
                let value = feature(&t.feature).map_or("-".to_string(), short);
                format!("{} {value} -> {}", t.feature, signed(p))
            }))
            .collect();
        let _ = write!(tail, "; terms: {}", named.join(", "));
    }
    tail
}

fn read_levels(pack: &PackDir) -> Result<Vec<Level>, AnalysisError> {
    let mut levels = Vec::new();
    for (tier, part) in pack.level_parts()? {
        for batch in read_batches(&part)? {
            let difficulty = f64_column(&batch, c::DIFFICULTY, &part)?;
            let moves = f64_column(&batch, c::MOVES, &part)?;
            let generate = f64_column(&batch, c::GENERATE_MS, &part)?;
            let solve = f64_column(&batch, c::SOLVE_MS, &part)?;
            let optimal = batch
                .column_by_name(c::MOVES_OPTIMAL)
                .and_then(|c| c.as_boolean_opt().cloned());
            let metrics = metrics_column(&batch);
            let seeds = u64_column(&batch, c::SEED, &part)?;
            for i in 0..batch.num_rows() {
                levels.push(Level {
                    tier,
                    seed: seeds[i],
                    difficulty: difficulty[i],
                    moves: moves[i] as u32,
                    optimal: optimal.as_ref().is_some_and(|o| o.value(i)),
                    ms: generate[i] + solve[i],
                    metrics: metrics.as_ref().map(|m| m(i)).unwrap_or_default(),
                });
            }
        }
    }
    Ok(levels)
}

fn read_rejects(dir: &Path) -> Result<Vec<Reject>, AnalysisError> {
    let path = dir.join(dir::REJECTS_FILE);
    let mut rejects = Vec::new();
    for batch in read_batches(&path)? {
        let status = text_column(&batch, c::STATUS, &path)?;
        let reason = text_column(&batch, c::REASON, &path)?;
        let generate = f64_column(&batch, c::GENERATE_MS, &path)?;
        let solve = f64_column(&batch, c::SOLVE_MS, &path)?;
        for i in 0..batch.num_rows() {
            rejects.push(Reject {
                status: status.value(i).to_string(),
                reason: reason.value(i).to_string(),
                ms: generate[i] + solve[i],
            });
        }
    }
    Ok(rejects)
}

/// (position, difficulty) of every campaign slot.
fn read_campaigns(dir: &Path) -> Result<Vec<Slot>, AnalysisError> {
    let path = dir.join(dir::CAMPAIGNS_FILE);
    let mut slots = Vec::new();
    for batch in read_batches(&path)? {
        let campaign = u64_column(&batch, c::CAMPAIGN, &path)?;
        let position = u32_column(&batch, c::POSITION, &path)?;
        let seed = u64_column(&batch, c::SEED, &path)?;
        let difficulty = f64_column(&batch, c::DIFFICULTY, &path)?;
        slots.extend((0..batch.num_rows()).map(|i| Slot {
            campaign: campaign[i],
            position: position[i],
            seed: seed[i],
            difficulty: difficulty[i],
        }));
    }
    Ok(slots)
}

fn overview(html: &mut String, manifest: &Manifest, levels: &[Level], rejects: &[Reject]) {
    let seeds = levels.len() + rejects.len();
    let ms: f64 =
        levels.iter().map(|l| l.ms).sum::<f64>() + rejects.iter().map(|r| r.ms).sum::<f64>();
    let rows: Vec<(&str, String)> = vec![
        ("job id", escape(&manifest.job_id)),
        ("generator", escape(&manifest.versions.generator)),
        ("seeds in the pack", seeds.to_string()),
        (
            "seeds computed",
            format!(
                "{} ({} past the pack's last levels)",
                manifest.seeds.computed,
                manifest.seeds.computed.saturating_sub(seeds as u64)
            ),
        ),
        ("levels accepted", levels.len().to_string()),
        (
            "acceptance rate",
            format!("{:.1}%", 100.0 * levels.len() as f64 / seeds.max(1) as f64),
        ),
        (
            "CPU time in the games",
            format!(
                "{:.1} s ({:.2} ms per seed, {:.2} ms per accepted level)",
                ms / 1000.0,
                ms / seeds.max(1) as f64,
                ms / levels.len().max(1) as f64
            ),
        ),
        ("watchdog timeouts", manifest.timeouts.len().to_string()),
        ("disagreeing results", manifest.mismatches.to_string()),
    ];
    html.push_str("<h2>Overview</h2>\n<table>\n");
    for (name, value) in rows {
        let _ = writeln!(html, "<tr><td>{name}</td><td>{value}</td></tr>");
    }
    html.push_str("</table>\n");
    let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rejects {
        *statuses.entry(&r.status).or_default() += 1;
    }
    html.push_str("<table>\n<tr><th>status</th><th>seeds</th><th>share</th></tr>\n");
    let share = |n: usize| format!("{:.2}%", 100.0 * n as f64 / seeds.max(1) as f64);
    let _ = writeln!(
        html,
        "<tr><td>accepted</td><td>{}</td><td>{}</td></tr>",
        levels.len(),
        share(levels.len())
    );
    for (status, n) in statuses {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{n}</td><td>{}</td></tr>",
            escape(status),
            share(n)
        );
    }
    html.push_str("</table>\n");
}

/// A row per stratum: its band, levels wanted and made, seeds in the pack
/// and computed, its fill rate and cost per level, difficulty and moves, and
/// the reasons seeds were not accepted.
fn strata_table(html: &mut String, summary: &crate::Summary) {
    html.push_str(
        "<h2>Strata</h2>\n<table>\n<tr><th>stratum</th><th>band</th><th>wanted</th>\
         <th>levels</th><th>seeds in pack</th><th>seeds computed</th><th>fill</th>\
         <th>CPU s per level</th><th>difficulty p50</th><th>moves p50</th>\
         <th>not accepted, by reason</th></tr>\n",
    );
    for st in &summary.strata {
        let levels = st.statuses.get("accepted").copied().unwrap_or(0);
        let reasons: Vec<String> = crate::by_count(&st.reasons)
            .into_iter()
            .map(|(r, n)| format!("{n} {}", escape(r)))
            .collect();
        let band = st.band.map_or_else(|| "-".to_string(), |b| b.to_string());
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{levels}</td><td>{}</td><td>{}</td>\
             <td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&st.name),
            escape(&band),
            st.count,
            st.seeds_in_pack,
            st.seeds_computed,
            100.0 * levels as f64 / st.seeds_in_pack.max(1) as f64,
            short(st.seconds_per_level),
            short(st.difficulty.p50),
            short(st.moves.p50),
            reasons.join(", ")
        );
    }
    html.push_str("</table>\n");
}

/// The tiers side by side, a column each, and a row per figure: the table's
/// width follows the tier count (ten at most by default), not the game's
/// metric count, so every game's table fits the page.
fn tiers_table(html: &mut String, levels: &[Level]) {
    let mut by_tier: BTreeMap<u32, Vec<&Level>> = BTreeMap::new();
    for l in levels {
        by_tier.entry(l.tier).or_default().push(l);
    }
    // A metric named as a row of its own (sokoban's `moves`) is shown once.
    let metric_names: std::collections::BTreeSet<&str> = levels
        .iter()
        .flat_map(|l| l.metrics.iter().map(|(k, _)| k.as_str()))
        .filter(|k| !["moves", "difficulty", "levels", "optimal"].contains(k))
        .collect();
    html.push_str(
        "<h2>Tiers</h2>\n<p>Per tier: difficulty (min, median, max), optimal moves (median), \
         the share of levels whose move count is proven optimal, and the mean of each of the \
         game's metrics.</p>\n<div style=\"overflow-x: auto\"><table class=\"tiers\">\n<tr><th>tier</th>",
    );
    for tier in by_tier.keys() {
        let _ = write!(html, "<th>{tier:02}</th>");
    }
    html.push_str("</tr>\n");
    let difficulty: Vec<Percentiles> = by_tier
        .values()
        .map(|t| Percentiles::of(t.iter().map(|l| l.difficulty).collect()))
        .collect();
    let mut row = |name: &str, cells: &mut dyn Iterator<Item = String>| {
        let _ = write!(html, "<tr><th>{name}</th>");
        for cell in cells {
            let _ = write!(html, "<td>{cell}</td>");
        }
        html.push_str("</tr>\n");
    };
    row("levels", &mut by_tier.values().map(|t| t.len().to_string()));
    row(
        "difficulty min",
        &mut difficulty.iter().map(|d| format!("{:.3}", d.min)),
    );
    row(
        "difficulty median",
        &mut difficulty.iter().map(|d| format!("{:.3}", d.p50)),
    );
    row(
        "difficulty max",
        &mut difficulty.iter().map(|d| format!("{:.3}", d.max)),
    );
    row(
        "moves (median)",
        &mut by_tier.values().map(|t| {
            let moves = Percentiles::of(t.iter().map(|l| f64::from(l.moves)).collect());
            moves.p50.to_string()
        }),
    );
    row(
        "optimal",
        &mut by_tier.values().map(|t| {
            let optimal = t.iter().filter(|l| l.optimal).count();
            format!("{:.0}%", 100.0 * optimal as f64 / t.len().max(1) as f64)
        }),
    );
    for name in &metric_names {
        row(
            &escape(name),
            &mut by_tier.values().map(|t| {
                let values: Vec<f64> = t
                    .iter()
                    .filter_map(|l| l.metrics.iter().find(|(k, _)| k == name).map(|p| p.1))
                    .collect();
                short(values.iter().sum::<f64>() / values.len().max(1) as f64)
            }),
        );
    }
    html.push_str("</table></div>\n");
}

/// A number in at most four significant digits, without needless zeros.
/// A contribution with its sign, a zero as `+0` (never `-0`).
fn signed(v: f64) -> String {
    match v {
        0.0 => "+0".into(),
        v if v > 0.0 => format!("+{}", short(v)),
        v => short(v),
    }
}

fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{self, PALETTE};

    #[test]
    fn short_numbers() {
        assert_eq!(short(1234.7), "1235");
        assert_eq!(short(12.345), "12.35");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(0.001234), "0.001234");
        assert_eq!(short(2.0), "2");
        assert_eq!(short(0.0), "0");
    }

    /// A caption shows each feature's value and what its term adds, signed,
    /// never `-0`.
    #[test]
    fn captions_show_value_and_contribution() {
        let model = Model::parse(
            "name = \"m\"\nversion = 1\ngame = \"tilt\"\n\
             [[terms]]\nfeature = \"moves\"\nweight = 0.5\n\
             [[terms]]\nfeature = \"states\"\nweight = -0.25\n\
             [[terms]]\nfeature = \"optimal_solutions\"\nweight = -1.0\n",
            "tilt",
            pregen_games::GameKind::from_name("tilt")
                .expect("tilt")
                .metric_docs(),
        )
        .expect("a model");
        let level = Level {
            tier: 1,
            seed: 7,
            difficulty: 0.0,
            moves: 4,
            optimal: true,
            ms: 1.0,
            metrics: vec![("states".into(), 8.0), ("optimal_solutions".into(), 0.0)],
        };
        let tail = terms_of("tilt", Some(&model), Some(&level));
        assert_eq!(
            tail,
            "; terms: bias +0, moves 4 -> +2, states 8 -> -2, optimal_solutions 0 -> +0"
        );
    }

    #[test]
    fn tier_colours_span_the_palette() {
        assert_eq!(svg::ramp(0, 10), PALETTE[0]);
        assert_eq!(svg::ramp(9, 10), PALETTE[9]);
        assert_eq!(svg::ramp(0, 1), PALETTE[0]);
        assert_eq!(svg::ramp(2, 3), PALETTE[9]);
    }
}
