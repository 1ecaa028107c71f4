//! `pregen solve`: solve level files in a game's text form, whoever made them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use pregen_games::rating::{Model, rounded_rating};
use pregen_games::{Budget, GameKind, Status, Verdict};

/// Flags of `pregen solve`.
#[derive(Args)]
pub struct SolveArgs {
    /// The game: cube, doors, dungeon, sokoban, synthetic or tilt.
    #[arg(long, required_unless_present = "job", conflicts_with = "job")]
    game: Option<String>,
    /// A job file whose game is the levels' game: for a game program
    /// (`game = "external"`) whose description says `solves: true`, which
    /// then solves each level (docs/external.md).
    #[arg(long, value_name = "JOB")]
    job: Option<PathBuf>,
    /// Seconds allowed per level. Sokoban spends up to three quarters on the
    /// exact search and the rest on improving a non-optimal answer; the other
    /// games stop with `timeout`.
    #[arg(long, default_value_t = 60.0, value_parser = positive_seconds)]
    time_limit: f64,
    /// Search nodes allowed per level and phase (none: the time limit alone).
    #[arg(long)]
    max_nodes: Option<u64>,
    /// Rate with this model file (TOML) instead of the game's built-in one.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Print the model's bias and each term's contribution to the
    /// difficulty, a column per term (`term:FEATURE`), in the model's order.
    #[arg(long)]
    terms: bool,
    /// Level files: one level each, or collections (XSB for sokoban; for the
    /// other games levels apart by blank or `;` lines, as a pack's release
    /// files and `pregen analysis levels` print them).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 1e6 => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds in (0, 1000000]"
        )),
    }
}

/// One row per level as it is done, whatever happens to the others: file,
/// title, status, figures. Fails at the end, with a count, when any level was
/// not solved.
pub fn run(args: SolveArgs) -> Result<()> {
    let SolveArgs {
        game,
        job,
        time_limit,
        max_nodes,
        model,
        terms,
        files,
    } = args;
    let game = game_of(game.as_deref(), job.as_deref())?;
    let model = read_model(&game, model.as_deref())?;
    let term_names: Vec<String> = std::iter::once("\tbias".to_string())
        .chain(model.terms.iter().map(|t| format!("\tterm:{}", t.feature)))
        .collect();
    let (term_header, no_terms) = if terms {
        (term_names.concat(), "\t-".repeat(term_names.len()))
    } else {
        (String::new(), String::new())
    };
    let budget = per_level(Duration::from_secs_f64(time_limit), max_nodes);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "file\tlevel\tstatus\tmoves\tpushes\toptimal\tpush_bound\tnodes\tms\tdifficulty{term_header}\t\
         solution_or_reason"
    )?;
    let (mut levels, mut failed) = (0, 0);
    for file in &files {
        let name = file.display();
        let mut print =
            |title: &str, status: &str, figures: String, ms: f64, rating: &str, detail: &str| {
                levels += 1;
                if !matches!(status, "optimal" | "push-optimal" | "solved") {
                    failed += 1;
                }
                // A broken pipe (`| head`) ends the output, not the command's checks.
                let _ = writeln!(
                    out,
                    "{name}\t{title}\t{status}\t{figures}\t{ms:.1}\t{rating}\t{detail}"
                );
                let _ = out.flush();
            };
        let unrated = format!("-{no_terms}");
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) => {
                print(
                    "-",
                    "unreadable",
                    NO_FIGURES.into(),
                    0.0,
                    &unrated,
                    &e.to_string(),
                );
                continue;
            }
        };
        let solved = game.solve_text(&text, &budget, &mut |level| {
            let title = if level.title.is_empty() {
                "-"
            } else {
                level.title.as_str()
            };
            let row = row(&level.verdict, &model, terms, &unrated, title);
            print(
                title,
                row.status,
                row.figures,
                level.ms,
                &row.rating,
                &row.detail,
            );
        });
        if let Err(e) = solved {
            let reason = format!("not a {} level file: {e}", game.name());
            print("-", "malformed", NO_FIGURES.into(), 0.0, &unrated, &reason);
        }
    }
    if failed > 0 {
        bail!("{failed} of {levels} levels not solved");
    }
    Ok(())
}

/// A row's cells after the file and the title (and its time).
struct Row {
    status: &'static str,
    figures: String,
    rating: String,
    detail: String,
}

/// The row of one level's verdict: its status, figures, rating (with each
/// term's part when `terms`) and solution or reason.
fn row(verdict: &Verdict, model: &Model, terms: bool, unrated: &str, title: &str) -> Row {
    let failed = |status, detail: String| Row {
        status,
        figures: NO_FIGURES.into(),
        rating: unrated.to_string(),
        detail,
    };
    let s = match verdict {
        Verdict::Solved(s) => s,
        Verdict::Failed(rejection) => {
            let status = match rejection.status() {
                Status::Rejected => "gave-up",
                status => status.as_str(),
            };
            let reason = rejection.reason().map(ToString::to_string);
            return failed(status, reason.unwrap_or_default());
        }
        Verdict::Malformed(e) => return failed("malformed", e.to_string()),
    };
    let metric = |key: &str| {
        s.analysis
            .get(key)
            .map_or("-".to_string(), |v| v.to_string())
    };
    // Sokoban: how far from proven a non-optimal answer is.
    let push_optimal = s.analysis.get("push_optimal") == Some(&1.0);
    let bound = if push_optimal {
        metric("pushes")
    } else {
        metric("push_lower_bound")
    };
    let figures = format!(
        "{}\t{}\t{}\t{bound}\t{}",
        s.moves,
        metric("pushes"),
        s.optimal,
        s.nodes
    );
    let status = match (s.optimal, push_optimal) {
        (true, _) => "optimal",
        // The fewest pushes proven, the fewest moves for them not.
        (false, true) => "push-optimal",
        (false, false) => "solved",
    };
    let features = Model::features(&s.analysis, s.moves);
    let rating = match (model.rate(&features), model.contributions(&features)) {
        (Ok(difficulty), Ok(parts)) if terms => {
            let parts: String = std::iter::once(model.bias)
                .chain(parts)
                .map(|p| format!("\t{}", rounded_rating(p)))
                .collect();
            format!("{difficulty}{parts}")
        }
        (Ok(difficulty), _) => difficulty.to_string(),
        (Err(e), _) => {
            tracing::warn!(error = %e, title, "cannot rate the level");
            unrated.to_string()
        }
    };
    Row {
        status,
        figures,
        rating,
        detail: s.solution.clone(),
    }
}

/// The model of `path`, or the game's built-in one.
/// The game named by `--game`, or the game of the job file of `--job` (a
/// game program started).
pub fn game_of(name: Option<&str>, job: Option<&Path>) -> Result<GameKind> {
    match (name, job) {
        (Some(name), _) => Ok(GameKind::from_name(name)?),
        (None, Some(path)) => {
            let job = pregen_pack::Job::load(path)
                .with_context(|| format!("job file {}", path.display()))?;
            Ok(job.game_kind()?)
        }
        (None, None) => bail!("give the game with --game or a job file with --job"),
    }
}

pub fn read_model(game: &GameKind, path: Option<&Path>) -> Result<Model> {
    let Some(path) = path else {
        return Ok(game.default_model()?);
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    game.parse_model(&text)
        .with_context(|| format!("model file {}", path.display()))
}

/// A budget per level: `limit` as the time limit (each level gets its own
/// clock), a watchdog a tenth later for a game that does not watch it, and
/// `max_nodes` nodes (none: no cap).
pub fn per_level(limit: Duration, max_nodes: Option<u64>) -> impl Fn() -> Budget {
    move || {
        let now = Instant::now();
        Budget {
            max_nodes: max_nodes.unwrap_or(u64::MAX),
            deadline: Some(now + limit + limit / 10),
            cpu_deadline: None,
            time_limit: Some(now + limit),
        }
    }
}

/// The figures' columns of a level without an answer.
const NO_FIGURES: &str = "-\t-\t-\t-\t-";
