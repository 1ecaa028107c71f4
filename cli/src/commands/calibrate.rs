//! `pregen analysis calibrate`: labelled levels, a model's weights fitted to
//! their labels, the agreement reported and the model written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use pregen_analysis::calibrate::{
    Agreement, CalibrateConfig, Calibration, Labelled, Labels, Measure, calibrate,
};
use pregen_games::rating::Model;
use pregen_games::{GameKind, Metrics, Verdict};
use pregen_pack::PackDir;
use pregen_pack::read::{f64_column, metrics_column, read_batches, text_column};
use pregen_pack::schema::columns as c;

/// Flags of `pregen analysis calibrate`.
#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// The game the levels are of.
    #[arg(long, required_unless_present = "job", conflicts_with = "job")]
    game: Option<String>,
    /// A job file whose game is the levels' game: a game program whose
    /// description says `solves: true` solves the classes' levels.
    #[arg(long, value_name = "JOB")]
    job: Option<PathBuf>,
    /// A class of levels, `NAME=FILE[,FILE...]` (level files or collections,
    /// as `pregen solve` reads them, solved here); repeat for each class,
    /// easiest first (a name given again adds files to its class).
    #[arg(
        long = "class",
        value_name = "NAME=FILES",
        required_unless_present = "labels"
    )]
    classes: Vec<String>,
    /// Or a pack's levels (its folder, or its URL in an object store),
    /// labelled by `--labels`: their metrics are read from the pack, nothing
    /// is solved.
    #[arg(
        long,
        value_name = "DIR",
        requires = "labels",
        conflicts_with = "classes"
    )]
    pack: Option<pregen_store::Location>,
    /// A CSV of `level_id,label` (a header line, then a level of `--pack`
    /// per line). A label is a class: a number 0, 1, 2... (easiest first) or
    /// a name of `--order`; with `--values`, a value such as a solve time.
    #[arg(long, value_name = "CSV", requires = "pack")]
    labels: Option<PathBuf>,
    /// The class names of `--labels`, easiest first, e.g. `easy,hard`.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    order: Vec<String>,
    /// The labels are values (solve times, say): agreement is Spearman's
    /// correlation, not AUC between classes.
    #[arg(long, requires = "labels")]
    values: bool,
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
    /// Seconds allowed per level (`--class` files).
    #[arg(long, default_value_t = 5.0)]
    time_limit: f64,
}

/// Reads or solves the labelled levels, fits, prints and writes.
pub fn run(args: CalibrateArgs) -> Result<()> {
    let game = super::solve::game_of(args.game.as_deref(), args.job.as_deref())?;
    let base = super::solve::read_model(&game, args.model.as_deref())?;
    let (levels, names, labels) = match (&args.pack, &args.labels) {
        (Some(pack), Some(csv)) => {
            let pack = super::stored::fetch(pack, super::stored::Log::Without)?;
            from_pack(&base, pack.path(), csv, &args.order, args.values)?
        }
        _ => {
            let (levels, names) = from_files(&game, &base, &args.classes, args.time_limit)?;
            (levels, names, Labels::Classes)
        }
    };
    let config = CalibrateConfig {
        folds: args.folds as usize,
        ..CalibrateConfig::default()
    };
    let mut fitted = calibrate(&base, &levels, labels, config).map_err(anyhow::Error::msg)?;
    fitted.model.name = args.name.unwrap_or_else(|| format!("{game}-calibrated"));
    fitted.model.version = 1;
    let what = |a: &Agreement| match a.measure {
        Measure::Auc { easier, harder } => format!("AUC {} vs {}", names[harder], names[easier]),
        Measure::Spearman => "Spearman with the labels".to_string(),
    };
    let figure =
        |a: &Agreement| format!("{:.3} ({:.3}-{:.3})", a.value, a.interval.0, a.interval.1);
    let mut table = format!(
        "| measure | {} (as it is) | fitted, {}-fold cross-validated |\n|---|---|---|\n",
        base.name, args.folds
    );
    for (b, f) in fitted.base_agreement.iter().zip(&fitted.agreement) {
        table.push_str(&format!(
            "| {} | {} | {} |\n",
            what(b),
            figure(b),
            figure(f)
        ));
    }
    print!("{table}");
    let verdict = verdict(&base.name, &fitted, &what);
    println!("{verdict}");
    // Each term's meaning from its fitted weight, not the base's words.
    for term in &mut fitted.model.terms {
        term.about = format!(
            "{:+.4} to the difficulty per unit of {} (fitted)",
            term.weight,
            term.shape()
        );
    }
    fitted.model.agreement = fitted
        .agreement
        .iter()
        .map(|a| {
            format!(
                "{}: {}, {}-fold cross-validated, {} levels",
                what(a),
                figure(a),
                args.folds,
                levels.len()
            )
        })
        .collect();
    let scale = match labels {
        Labels::Classes => format!(
            "classes {} (easiest first; the difficulty reads on their scale, 0 to {})",
            names.join(" < "),
            names.len().saturating_sub(1)
        ),
        Labels::Values => "values (the difficulty reads on their scale)".to_string(),
    };
    fitted.model.about = format!(
        "{}'s terms, weights fitted by `pregen analysis calibrate` to {} levels labelled by \
         {scale}",
        base.name,
        levels.len(),
    );
    let header = format!(
        "Fitted by `pregen analysis calibrate` from {}; its agreement, 95% bootstrap \
         intervals:\n{}\n{verdict}",
        base.name,
        fitted.model.agreement.join("\n")
    );
    std::fs::write(&args.output, fitted.model.to_file(&header))
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}

/// The verdict: on how many measures the fitted model agrees better than
/// the base (`base` its name), and whether their intervals overlap.
fn verdict(base: &str, fitted: &Calibration, what: &dyn Fn(&Agreement) -> String) -> String {
    let better: Vec<String> = fitted
        .base_agreement
        .iter()
        .zip(&fitted.agreement)
        .filter(|(b, f)| f.value > b.value)
        .map(|(b, _)| what(b))
        .collect();
    let apart = fitted
        .base_agreement
        .iter()
        .zip(&fitted.agreement)
        .filter(|(b, f)| f.interval.0 > b.interval.1 || b.interval.0 > f.interval.1)
        .count();
    let (n, k) = (fitted.agreement.len(), better.len());
    if k == n {
        let noise = match apart {
            0 => ", within the noise of these levels (every interval overlaps the base's)".into(),
            m => format!(" ({m} with intervals apart from the base's)"),
        };
        format!(
            "verdict: better than {} on {k} of {n} measures{noise}",
            base
        )
    } else {
        let worse: Vec<String> = fitted
            .base_agreement
            .iter()
            .zip(&fitted.agreement)
            .filter(|(b, f)| f.value <= b.value)
            .map(|(b, _)| what(b))
            .collect();
        format!(
            "verdict: better than {} on {k} of {n} measures; not on {}: keep the base for \
             those, or label more levels",
            base,
            worse.join(", ")
        )
    }
}

/// Levels of `--class` files, solved: each with its class index; the class
/// names in order.
fn from_files(
    game: &GameKind,
    base: &Model,
    classes: &[String],
    time_limit: f64,
) -> Result<(Vec<Labelled>, Vec<String>)> {
    if !(time_limit.is_finite() && time_limit > 0.0) {
        bail!("--time-limit must be a positive number of seconds");
    }
    let budget = super::solve::per_level(Duration::from_secs_f64(time_limit), None);
    let mut names: Vec<String> = Vec::new();
    let mut files: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for spec in classes {
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
                        levels.push(Labelled {
                            label: class as f64,
                            values,
                        });
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
    Ok((levels, names))
}

/// Levels of a pack labelled by a CSV of `level_id,label`: their terms'
/// values from the pack's metrics, in the CSV's order.
fn from_pack(
    base: &Model,
    pack: &Path,
    csv: &Path,
    order: &[String],
    values: bool,
) -> Result<(Vec<Labelled>, Vec<String>, Labels)> {
    let dir = PackDir::new(pack);
    let manifest = dir.read_manifest()?;
    if manifest.job.game != base.game {
        bail!(
            "{} is a {} pack, not {}",
            pack.display(),
            manifest.job.game,
            base.game
        );
    }
    let mut features: BTreeMap<String, (Metrics, u32)> = BTreeMap::new();
    for (_, part) in dir.level_parts()? {
        for batch in read_batches(&part)? {
            let ids = text_column(&batch, c::LEVEL_ID, &part)?;
            let moves = f64_column(&batch, c::MOVES, &part)?;
            let metrics = metrics_column(&batch);
            for (i, &moves) in moves.iter().enumerate() {
                let m: Metrics = metrics
                    .as_ref()
                    .map(|m| m(i))
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                features.insert(ids.value(i).to_string(), (m, moves as u32));
            }
        }
    }
    let text =
        std::fs::read_to_string(csv).with_context(|| format!("cannot read {}", csv.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    match lines.next() {
        Some((_, header)) if header.trim() == "level_id,label" => {}
        other => bail!(
            "{}: the first line must be `level_id,label`, not `{}`",
            csv.display(),
            other.map_or("", |(_, l)| l)
        ),
    }
    let mut levels = Vec::new();
    for (n, line) in lines {
        let at = || format!("{} line {}", csv.display(), n + 1);
        let Some((id, label)) = line.split_once(',') else {
            bail!("{}: expected `level_id,label`", at());
        };
        let (id, label) = (id.trim(), label.trim());
        let Some((metrics, moves)) = features.get(id) else {
            bail!("{}: no level `{id}` in {}", at(), pack.display());
        };
        let label = match order.iter().position(|o| o == label) {
            Some(class) if !values => class as f64,
            None if !values && !order.is_empty() => {
                bail!(
                    "{}: `{label}` is not a class of --order ({})",
                    at(),
                    order.join(", ")
                )
            }
            _ => match label.parse::<f64>() {
                Ok(v) if v.is_finite() && (values || (v >= 0.0 && v.fract() == 0.0)) => v,
                _ if values => bail!("{}: `{label}` is not a number", at()),
                _ => bail!(
                    "{}: `{label}` is not a class (0, 1, 2... or a name of --order; give --values \
                     for solve times and other values)",
                    at()
                ),
            },
        };
        let values = base
            .values(Model::features(metrics, *moves))
            .with_context(at)?;
        levels.push(Labelled { label, values });
    }
    let names = if order.is_empty() {
        let top = levels.iter().map(|l| l.label as usize).max().unwrap_or(0);
        (0..=top).map(|c| c.to_string()).collect()
    } else {
        order.to_vec()
    };
    eprintln!("{} levels of {} labelled", levels.len(), pack.display());
    Ok((
        levels,
        names,
        if values {
            Labels::Values
        } else {
            Labels::Classes
        },
    ))
}
