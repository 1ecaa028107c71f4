//! A position's bound: the matching of its boxes on its board, with the
//! charge for boxes that must leave their goals, and a child's from its
//! parent's.

use super::*;

impl Search<'_> {
    /// The bound of `boxes` (sorted) on table `t`, the player at `player`.
    pub(super) fn bound_on(&mut self, t: u32, boxes: &[u16], player: usize) -> Option<u32> {
        self.find_leaving(t, boxes, player);
        self.matched_anew(t, boxes, player)
    }

    /// [`Search::must_leave`] into `self.leaving`.
    pub(super) fn find_leaving(&mut self, t: u32, boxes: &[u16], player: usize) {
        let mut leaving = std::mem::take(&mut self.leaving);
        self.must_leave(t, boxes, player, &mut leaving);
        self.leaving = leaving;
    }

    /// [`Search::bound_on`], the boxes that must leave their goals found
    /// already (in `self.leaving`): a matching anew, in which such a box costs
    /// two pushes on its own goal (it leaves, and it or another box comes
    /// back), its lone-box distances elsewhere. Admissible: each of them
    /// must leave its goal whatever the others do. Consistent as long as a
    /// box stops having to leave only when it is pushed (which takes its
    /// cost on that goal from two to one, and no other cost falls by more
    /// than one); but the test is weaker on some tables than on others (a
    /// board unbuilt for want of memory, the quick test of
    /// [`FrozenBoards::plus`]), so the exact searches reopen a closed
    /// position reached more cheaply.
    pub(super) fn matched_anew(&mut self, t: u32, boxes: &[u16], player: usize) -> Option<u32> {
        let mut rest = std::mem::take(&mut self.rest_child);
        rest.clear();
        let frozen = self.frozen.cells(t);
        rest.extend(boxes.iter().filter(|b| frozen.binary_search(b).is_err()));
        let board = self.frozen.board(t, self.board);
        let total = {
            let cost = board.matching_cost(&rest, player, usize::MAX, 0);
            let cost = charge(&cost, |i| rest[i], &self.leaving);
            self.fresh.solve(rest.len(), &cost)
        };
        self.rest_child = rest;
        (total < UNMATCHED).then_some(total as u32)
    }

    /// Finds, into `leaving` (in `boxes`' order), the boxes of `boxes` (sorted; on table `t`,
    /// the player at `player`) that sit on goals, not frozen, and cannot
    /// stay there for good: with such a box a wall too (a board per table
    /// and cell, [`FrozenBoards::plus`]), some other box not frozen reaches
    /// no goal left, or some goal without a box is reached by none. A goal
    /// box that blocks the way into a goal corridor behind it, or the only
    /// way out of a room, must make way and come back.
    pub(super) fn must_leave(
        &mut self,
        t: u32,
        boxes: &[u16],
        player: usize,
        leaving: &mut Vec<u16>,
    ) {
        leaving.clear();
        if !self.leave_check || boxes.len() < LEAVING_MIN_BOXES {
            return;
        }
        let base = self.board;
        let mut reached = std::mem::take(&mut self.reached);
        for &x in boxes {
            if !base.goal[x as usize] || self.frozen.cells(t).binary_search(&x).is_ok() {
                continue;
            }
            let Some(tx) = self.frozen.plus(t, x, base) else {
                continue;
            };
            let (walls, board) = (self.frozen.cells(tx), self.frozen.board(tx, base));
            let cells = board.cells;
            reached.clear();
            reached.resize(board.goals, false);
            let mut stuck = false;
            for &b in boxes.iter().filter(|b| walls.binary_search(b).is_err()) {
                let at = usize::from(b);
                let side = board.side(at, player);
                let mut any = false;
                for (g, seen) in reached.iter_mut().enumerate() {
                    if board.dist[(g * cells + at) * SIDES + side] != FAR {
                        (any, *seen) = (true, true);
                    }
                }
                if !any {
                    stuck = true;
                    break;
                }
            }
            stuck = stuck
                || board
                    .goal_cells
                    .iter()
                    .zip(&reached)
                    .any(|(g, &seen)| !seen && boxes.binary_search(g).is_err());
            if stuck {
                leaving.push(x);
            }
        }
        self.reached = reached;
    }

    /// The bound of the position `id` (its boxes `boxes`) after the push of
    /// box `bi` to `to` (`child`, its boxes sorted, on table `t`): from
    /// enough boxes on, when the push froze no box, `id`'s matching with that
    /// box's row matched again.
    pub(super) fn child_bound(
        &mut self,
        id: u32,
        boxes: &[u16],
        bi: usize,
        to: usize,
        (child, t): (&[u16], u32),
    ) -> Option<u32> {
        // After the push the player stands where the box stood.
        let player = usize::from(boxes[bi]);
        if t != self.table[id as usize] {
            return self.bound_on(t, child, player);
        }
        // The rows: the boxes not frozen, taken once an expansion; the
        // pushed one (a frozen box has no push) at `row`.
        let mut rest = std::mem::take(&mut self.rest);
        if self.rest_of != id {
            rest.clear();
            let frozen = self.frozen.cells(t);
            rest.extend(boxes.iter().filter(|b| frozen.binary_search(b).is_err()));
            self.rest_of = id;
        }
        let n = rest.len();
        let row = rest.iter().position(|&b| b == boxes[bi]);
        let row = row.filter(|_| n >= REMATCH_MIN_BOXES);
        if row.is_some() && self.matched != id {
            let mut leaving = std::mem::take(&mut self.matched_leaving);
            if !self
                .kept
                .restore(id, &rest, &mut self.matching, &mut leaving)
            {
                let at = usize::from(self.player[id as usize]);
                self.must_leave(t, boxes, at, &mut leaving);
                let board = self.frozen.board(t, self.board);
                let cost = board.matching_cost(&rest, at, usize::MAX, 0);
                let total = self
                    .matching
                    .solve(n, &charge(&cost, |i| rest[i], &leaving));
                debug_assert!(total < UNMATCHED, "an expanded position has a matching");
            }
            self.matched_leaving = leaving;
            self.matched = id;
        }
        self.find_leaving(t, child, player);
        // The expanded position's matching, its pushed box's row matched
        // again, unless the boxes that must leave differ.
        let rematched = row
            .filter(|_| self.leaving == self.matched_leaving)
            .map(|row| {
                let board = self.frozen.board(t, self.board);
                let to = to as u16;
                let cost = board.matching_cost(&rest, player, row, to);
                let cell = |i: usize| if i == row { to } else { rest[i] };
                let cost = charge(&cost, cell, &self.leaving);
                let total = self.rematched.rematch(&self.matching, n, row, &cost);
                self.last_rematch = Some((row, to));
                (total < UNMATCHED).then_some(total as u32)
            });
        self.rest = rest;
        match rematched {
            Some(bound) => {
                debug_assert_eq!(bound, self.bound_on(t, child, player), "a matching redone");
                bound
            }
            None => self.matched_anew(t, child, player),
        }
    }
}
