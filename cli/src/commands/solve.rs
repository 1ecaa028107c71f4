//! `pregen solve`: solve level files in a game's text form, whoever made them.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use pregen_games::{Budget, GameKind};

/// Flags of `pregen solve`.
#[derive(Args)]
pub struct SolveArgs {
    /// The game: cube, doors, dungeon, sokoban, synthetic or tilt.
    #[arg(long)]
    game: String,
    /// Search nodes allowed per level.
    #[arg(long, default_value_t = 1_000_000)]
    max_nodes: u64,
    /// Level files: one level each, or XSB collections for sokoban.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Prints one row per level; fails at the end when any level was not solved.
pub fn run(args: SolveArgs) -> Result<()> {
    let SolveArgs {
        game,
        max_nodes,
        files,
    } = args;
    let game = GameKind::from_name(&game)?;
    let budget = Budget::nodes(max_nodes);
    println!("file\tlevel\tmoves\tpushes\toptimal\tnodes\tms\tsolution");
    let (mut levels, mut failed) = (0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let solved = game
            .solve_text(&text, &budget)
            .with_context(|| format!("{} is not a {} level file", file.display(), game.name()))?;
        for level in solved {
            levels += 1;
            let title = if level.title.is_empty() {
                "-"
            } else {
                level.title.as_str()
            };
            let ms = level.ms;
            match level.verdict {
                Ok(s) => println!(
                    "{}\t{title}\t{}\t{}\t{}\t{}\t{:.1}\t{}",
                    file.display(),
                    s.moves,
                    s.analysis
                        .get("pushes")
                        .map_or("-".into(), |p| p.to_string()),
                    s.optimal,
                    s.nodes,
                    ms,
                    s.solution
                ),
                Err(e) => {
                    failed += 1;
                    println!("{}\t{title}\t-\t-\t-\t-\t{ms:.1}\t{e}", file.display());
                }
            }
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {levels} levels not solved");
    }
    Ok(())
}
