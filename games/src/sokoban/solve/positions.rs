//! The table of positions a search stores: looked up, inserted (or
//! reopened when reached more cheaply), and kept for the move search.

use super::*;

impl Search<'_> {
    /// The id of a state seen in this run.
    pub(super) fn find(&self, boxes: &[u16], player: u16) -> Option<u32> {
        let k = self.k;
        let (all_boxes, players) = (&self.boxes, &self.player);
        self.index
            .find(Self::hash(boxes, player), |&id| {
                let i = id as usize;
                players[i] == player && &all_boxes[i * k..(i + 1) * k] == boxes
            })
            .copied()
    }

    /// Adds a state or improves a known one; the id to (re)open, `None` when
    /// the known path is at least as cheap.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert(
        &mut self,
        boxes: &[u16],
        player: u16,
        parent: u32,
        push: Push,
        pushes: u32,
        moves: u32,
        (bound, table, owed): (u32, u32, u8),
    ) -> Option<u32> {
        let hash = Self::hash(boxes, player);
        let k = self.k;
        let (all_boxes, players) = (&self.boxes, &self.player);
        let found = self.index.find(hash, |&id| {
            let i = id as usize;
            players[i] == player && &all_boxes[i * k..(i + 1) * k] == boxes
        });
        if let Some(&id) = found {
            let i = id as usize;
            let cheaper = if self.by_moves {
                (pushes, moves) < (self.pushes[i], self.moves[i])
            } else {
                pushes < self.pushes[i]
            };
            // A closed position is final, unless the bound may have fallen
            // along a push: a board went unbuilt ([`FrozenBoards`]), or a
            // box that had to leave its goal is no longer found to
            // ([`Search::must_leave`]).
            let charging = self.leave_check && self.k >= LEAVING_MIN_BOXES;
            let reopen = self.exact && (self.frozen.full || charging);
            if (self.closed[i] && !reopen) || !cheaper {
                return None;
            }
            self.closed[i] = false;
            self.parent[i] = parent;
            self.push[i] = push;
            self.pushes[i] = pushes;
            self.moves[i] = moves;
            return Some(id);
        }
        let id = self.player.len() as u32;
        self.boxes.extend_from_slice(boxes);
        self.player.push(player);
        self.parent.push(parent);
        self.push.push(push);
        self.pushes.push(pushes);
        self.moves.push(moves);
        self.bound.push(bound);
        self.table.push(table);
        self.owed.push(owed);
        self.closed.push(false);
        let (all_boxes, players) = (&self.boxes, &self.player);
        self.index.insert_unique(hash, id, |&id| {
            let i = id as usize;
            Self::hash(&all_boxes[i * k..(i + 1) * k], players[i])
        });
        Some(id)
    }

    /// Keeps the positions of the run just ended (a push-optimal search's)
    /// for the move search.
    pub(super) fn keep_known(&mut self) {
        self.known = Some(Known {
            k: self.k,
            boxes: std::mem::take(&mut self.boxes),
            region: std::mem::take(&mut self.player),
            pushes: std::mem::take(&mut self.pushes),
            bound: std::mem::take(&mut self.bound),
            index: std::mem::take(&mut self.index),
        });
    }
}
