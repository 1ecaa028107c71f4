//! `pregen game-server`: a built-in game served over the game protocol
//! (docs/external.md), on stdin and stdout: what a game program must answer,
//! answered by pregen's own games.

use anyhow::{Context, Result};
use clap::Args;
use pregen_games::GameKind;

/// Flags of `pregen game-server`.
#[derive(Args)]
pub struct GameServerArgs {
    /// The game: cube, doors, dungeon, sokoban, tilt or synthetic.
    game: String,
}

/// Answers requests a line at a time until stdin ends.
pub fn run(args: GameServerArgs) -> Result<()> {
    let game = GameKind::from_name(&args.game)?;
    let mut stdin = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    pregen_games::external::serve(game, &mut stdin, stdout).context("serving the game protocol")
}
