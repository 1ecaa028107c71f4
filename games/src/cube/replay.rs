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

    /// The Top cells `(x, y)` the monk can walk to now (its own included).
    pub fn reachable(&self) -> Vec<(usize, usize)> {
        let reach = region(&self.cells, self.monk);
        (0..9)
            .filter(|i| reach >> i & 1 == 1)
            .map(|i| (i % 3, i / 3))
            .collect()
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

    /// The karma collected so far.
    pub fn karma(&self) -> u32 {
        self.karma
    }

    /// Whether the monk can walk out now: `goal` karma held and the exit in reach.
    pub fn can_exit(&self, goal: u32) -> bool {
        self.karma >= goal && region(&self.cells, self.monk) >> (EXIT.1 * 3 + EXIT.0) & 1 == 1
    }
}

/// Plays `solution` and checks that it wins.
pub fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
    let fail = |index: usize, message: String| Err(GameError::Replay { index, message });
    level
        .check()
        .map_err(|message| GameError::Replay { index: 0, message })?;
    let mut position =
        Position::start(level).map_err(|message| GameError::Replay { index: 0, message })?;
    let tokens: Vec<&str> = solution.split_whitespace().collect();
    for (index, token) in tokens.iter().enumerate() {
        if let Some(at) = token.strip_prefix('@') {
            let target = at
                .split_once(',')
                .and_then(|(x, y)| Some((x.parse::<usize>().ok()?, y.parse::<usize>().ok()?)))
                .filter(|&(x, y)| x < 3 && y < 3);
            let Some((x, y)) = target else {
                return fail(index, format!("`{token}` is not a Top cell @x,y"));
            };
            position
                .walk(x, y)
                .or_else(|_| fail(index, format!("the monk cannot walk to {at}")))?;
            if index + 1 == tokens.len() {
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
        } else if let Some(turn) = Turn::parse(token) {
            position
                .turn(turn)
                .or_else(|message| fail(index, message))?;
        } else {
            return fail(
                index,
                format!("`{token}` is neither a walk @x,y nor a turn"),
            );
        }
    }
    fail(tokens.len(), "the solution does not reach the exit".into())
}
