//! Replays a cube solution under the rules: `@x,y` walks the monk to a Top
//! cell (collecting all karma it can reach), `R0`..`C2` turns; the last token
//! walks to the exit with the karma goal met.

use super::geometry::Turn;
use super::level::{EXIT, Level, START};
use super::solve::{collect, in_danger, moves_monk, region};
use crate::GameError;

/// Plays `solution` and checks that it wins.
pub fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
    let fail = |index: usize, message: String| Err(GameError::Replay { index, message });
    level
        .check()
        .map_err(|message| GameError::Replay { index: 0, message })?;
    let mut cells = level.array();
    let mut monk = START.1 * 3 + START.0;
    let reach = region(&cells, monk);
    if in_danger(&cells, reach) {
        return fail(0, "the monk starts in danger".into());
    }
    let mut karma = collect(&mut cells, reach);
    let tokens: Vec<&str> = solution.split_whitespace().collect();
    for (index, token) in tokens.iter().enumerate() {
        if let Some(at) = token.strip_prefix('@') {
            let target = at
                .split_once(',')
                .and_then(|(x, y)| Some((x.parse::<usize>().ok()?, y.parse::<usize>().ok()?)))
                .filter(|&(x, y)| x < 3 && y < 3)
                .map(|(x, y)| y * 3 + x);
            let Some(target) = target else {
                return fail(index, format!("`{token}` is not a Top cell @x,y"));
            };
            if region(&cells, monk) >> target & 1 == 0 {
                return fail(index, format!("the monk cannot walk to {at}"));
            }
            monk = target;
            if index + 1 == tokens.len() {
                if monk != EXIT.1 * 3 + EXIT.0 {
                    return fail(index, "the solution does not end at the exit".into());
                }
                if karma < level.karma_goal {
                    return fail(
                        index,
                        format!(
                            "{karma} karma collected, the exit needs {}",
                            level.karma_goal
                        ),
                    );
                }
                return Ok(());
            }
        } else if let Some(turn) = Turn::parse(token) {
            if moves_monk(turn, monk) {
                return fail(
                    index,
                    format!("{token} would turn the monk's own row or column"),
                );
            }
            cells = turn.apply(&cells);
            let reach = region(&cells, monk);
            if in_danger(&cells, reach) {
                return fail(index, format!("after {token} a soldier reaches the monk"));
            }
            karma += collect(&mut cells, reach);
        } else {
            return fail(
                index,
                format!("`{token}` is neither a walk @x,y nor a turn"),
            );
        }
    }
    fail(tokens.len(), "the solution does not reach the exit".into())
}
