//! Replays a cube solution under the rules: `@x,y` walks the monk to a Top
//! cell (collecting all karma it can reach), `R0`..`C2` turns; the last token
//! walks to the exit with the karma goal met.

use super::geometry::Turn;
use super::level::{Cell, EXIT, Level, START};
use super::solve::{collect, in_danger, moves_monk, region};
use crate::GameError;

/// A level in play: the cells, where the monk stands and the karma it holds.
/// [`replay`] checks a solution with it; an agent or a game client steps
/// through a level with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    cells: [Cell; 54],
    /// Top cell `y * 3 + x`.
    monk: usize,
    karma: u32,
}

impl Position {
    /// The monk at the start, holding the karma it reaches at once; an error
    /// if it starts in danger.
    pub fn start(level: &Level) -> Result<Position, String> {
        let mut cells = level.array();
        let monk = START.1 * 3 + START.0;
        let reach = region(&cells, monk);
        if in_danger(&cells, reach) {
            return Err("the monk starts in danger".into());
        }
        let karma = collect(&mut cells, reach);
        Ok(Position { cells, monk, karma })
    }

    /// Walks the monk to Top cell `(x, y)`.
    pub fn walk(&mut self, x: usize, y: usize) -> Result<(), String> {
        let target = y * 3 + x;
        if x >= 3 || y >= 3 || region(&self.cells, self.monk) >> target & 1 == 0 {
            return Err(format!("the monk cannot walk to {x},{y}"));
        }
        self.monk = target;
        Ok(())
    }

    /// Makes `turn`: not the monk's own row or column, and not one after
    /// which a soldier reaches the monk. The karma then in reach is taken.
    pub fn turn(&mut self, turn: Turn) -> Result<(), String> {
        let token = turn.name();
        if moves_monk(turn, self.monk) {
            return Err(format!("{token} would turn the monk's own row or column"));
        }
        let cells = turn.apply(&self.cells);
        let reach = region(&cells, self.monk);
        if in_danger(&cells, reach) {
            return Err(format!("after {token} a soldier reaches the monk"));
        }
        self.cells = cells;
        self.karma += collect(&mut self.cells, reach);
        Ok(())
    }
}

/// Plays `solution` and checks that it wins.
pub fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
    let fail = |index: usize, message: String| Err(GameError::Replay { index, message });
    let tokens: Vec<&str> = solution.split_whitespace().collect();
    let mut position = start(level)?;
    for (index, token) in tokens.iter().enumerate() {
        let walked = step(&mut position, index, token)?;
        if walked && index + 1 == tokens.len() {
            if position.monk != EXIT.1 * 3 + EXIT.0 {
                return fail(index, "the solution does not end at the exit".into());
            }
            if position.karma < level.karma_goal {
                return fail(
                    index,
                    format!(
                        "{} karma collected, the exit needs {}",
                        position.karma, level.karma_goal
                    ),
                );
            }
            return Ok(());
        }
    }
    Err(GameError::NotWon {
        moves: tokens.len(),
        message: "the solution does not reach the exit".into(),
    })
}

/// The cube as `moves` leave it, each legal: its net with the monk's cell
/// marked `@` and the karma held, and whether the monk is out (at the exit
/// with the karma the exit needs).
pub fn play(level: &Level, moves: &str) -> Result<(String, bool), GameError> {
    let mut position = start(level)?;
    for (index, token) in moves.split_whitespace().enumerate() {
        step(&mut position, index, token)?;
    }
    let after = Level {
        cells: position.cells.to_vec(),
        ..level.clone()
    };
    let (x, y) = (position.monk % 3, position.monk / 3);
    let out = position.monk == EXIT.1 * 3 + EXIT.0 && position.karma >= level.karma_goal;
    let text = format!(
        "monk at @{x},{y} on top; karma {} of {}\n\n{}",
        position.karma,
        level.karma_goal,
        after.to_text()
    );
    Ok((text, out))
}

/// The start of play on a well-formed level.
fn start(level: &Level) -> Result<Position, GameError> {
    level.check().map_err(GameError::Level)?;
    Position::start(level).map_err(GameError::Level)
}

/// Plays move `index`, `token`: a walk `@x,y` (`Ok(true)`) or a turn.
fn step(position: &mut Position, index: usize, token: &str) -> Result<bool, GameError> {
    let fail = |message: String| GameError::Replay { index, message };
    if let Some(at) = token.strip_prefix('@') {
        let target = at
            .split_once(',')
            .and_then(|(x, y)| Some((x.parse::<usize>().ok()?, y.parse::<usize>().ok()?)))
            .filter(|&(x, y)| x < 3 && y < 3);
        let Some((x, y)) = target else {
            return Err(fail(format!("`{token}` is not a Top cell @x,y")));
        };
        position
            .walk(x, y)
            .map_err(|_| fail(format!("the monk cannot walk to {at}")))?;
        Ok(true)
    } else if let Some(turn) = Turn::parse(token) {
        position.turn(turn).map_err(fail)?;
        Ok(false)
    } else {
        Err(fail(format!("`{token}` is neither a walk @x,y nor a turn")))
    }
}
