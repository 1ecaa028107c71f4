//! `pregen analysis calibrate`: solve labelled levels, fit a model's
//! weights to their classes, report the agreement and write the model.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use pregen_analysis::calibrate::{Agreement, CalibrateConfig, Labelled, calibrate};
use pregen_games::rating::Model;
use pregen_games::{Budget, GameKind, Verdict};

use std::path::PathBuf;

/// Flags of `pregen analysis calibrate`.
#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// The game the levels are of.
    #[arg(long)]
    game: String,
    /// A class of levels, `NAME=FILE[,FILE...]` (level files or collections,
    /// as `pregen solve` reads them); repeat for each class, easiest first
    /// (a name given again adds files to its class).
    #[arg(long = "class", value_name = "NAME=FILES", required = true)]
    classes: Vec<String>,
    /// The model whose terms are fitted (default: the game's built-in one).
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// The fitted model's name (default: `<game>-calibrated`).
    #[arg(long)]
    name: Option<String>,
    /// Where to write the fitted model.
    #[arg(short, long, default_value = "calibrated.toml")]
    output: PathBuf,
    /// Cross-validation folds.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..=100))]
    folds: u64,
    /// Seconds allowed per level.
    #[arg(long, default_value_t = 5.0)]
    time_limit: f64,
}

/// Solves every class's levels, fits, prints and writes.
pub fn run(args: CalibrateArgs) -> Result<()> {
    let game = GameKind::from_name(&args.game)?;
    let base = match &args.model {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            game.parse_model(&text)
                .with_context(|| format!("model file {}", path.display()))?
        }
        None => game.default_model()?,
    };
    if !(args.time_limit.is_finite() && args.time_limit > 0.0) {
        bail!("--time-limit must be a positive number of seconds");
    }
    let limit = Duration::from_secs_f64(args.time_limit);
    let budget = || {
        let now = Instant::now();
        Budget {
            max_nodes: u64::MAX,
            deadline: Some(now + limit + limit / 10),
            time_limit: Some(now + limit),
        }
    };
    let mut names: Vec<String> = Vec::new();
    let mut files: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for spec in &args.classes {
        let Some((name, list)) = spec
            .split_once('=')
            .filter(|(n, l)| !n.is_empty() && !l.is_empty())
        else {
            bail!("--class `{spec}`: expected NAME=FILE[,FILE...]");
        };
        let class = names.iter().position(|n| n == name).unwrap_or_else(|| {
            names.push(name.to_string());
            names.len() - 1
        });
        files
            .entry(class)
            .or_default()
            .extend(list.split(',').map(String::from));
    }
    let mut levels = Vec::new();
    for (&class, paths) in &files {
        let (mut solved, mut unsolved) = (0, 0);
        for path in paths {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
            game.solve_text(&text, &budget, &mut |level| match &level.verdict {
                Verdict::Solved(s) => match base.values(Model::features(&s.analysis, s.moves)) {
                    Ok(values) => {
                        solved += 1;
                        levels.push(Labelled { class, values });
                    }
                    Err(_) => unsolved += 1,
                },
                _ => unsolved += 1,
            })
            .with_context(|| format!("{path}: not a {game} level file"))?;
        }
        eprintln!(
            "{}: {solved} levels solved and rated{}",
            names[class],
            if unsolved > 0 {
                format!(", {unsolved} left out (not solved in the time limit or malformed)")
            } else {
                String::new()
            }
        );
    }
    let config = CalibrateConfig {
        folds: args.folds as usize,
        ..CalibrateConfig::default()
    };
    let mut fitted = calibrate(&base, &levels, config).map_err(anyhow::Error::msg)?;
    fitted.model.name = args.name.unwrap_or_else(|| format!("{game}-calibrated"));
    fitted.model.version = 1;
    let pair = |a: &Agreement| format!("{} vs {}", names[a.harder], names[a.easier]);
    fitted.model.agreement = fitted
        .agreement
        .iter()
        .map(|a| {
            format!(
                "AUC {} vs {}: {:.3} ({:.3}-{:.3}), {}-fold cross-validated, {} levels",
                names[a.harder],
                names[a.easier],
                a.auc,
                a.interval.0,
                a.interval.1,
                args.folds,
                levels.len()
            )
        })
        .collect();
    let figure = |a: &Agreement| format!("{:.3} ({:.3}-{:.3})", a.auc, a.interval.0, a.interval.1);
    let mut table = format!(
        "| pair | {} (as it is) | fitted, {}-fold cross-validated |\n|---|---|---|\n",
        base.name, args.folds
    );
    for (b, f) in fitted.base_agreement.iter().zip(&fitted.agreement) {
        table.push_str(&format!(
            "| {} | {} | {} |\n",
            pair(b),
            figure(b),
            figure(f)
        ));
    }
    print!("{table}");
    fitted.model.about = format!(
        "{}, weights fitted by `pregen analysis calibrate` to {} levels in classes {} (easiest \
         first; the difficulty reads on their scale, 0 to {})",
        base.about.trim_end_matches('.'),
        levels.len(),
        names.join(" < "),
        names.len() - 1
    );
    let header = format!(
        "Fitted by `pregen analysis calibrate` from {}.\nAUC per pair of classes, {}-fold \
         cross-validated, 95% bootstrap interval:\n{}",
        base.name,
        args.folds,
        fitted
            .agreement
            .iter()
            .map(|a| format!("  {}: {}", pair(a), figure(a)))
            .collect::<Vec<_>>()
            .join("\n")
    );
    std::fs::write(&args.output, fitted.model.to_file(&header))
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}
