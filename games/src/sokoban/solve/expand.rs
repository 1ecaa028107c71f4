//! One expansion of the push search: the root position, the budget's
//! tick, the pushes the player can make, and the position after a push
//! (deadlock, what the push search knows, the bound).

use super::*;

/// One push of an expansion, as [`Search::after_push`] takes it: the position
/// expanded, the box's index and cell, the cell it goes to, the player's area
/// (its stamp) and that area's lowest cell.
#[derive(Clone, Copy)]
pub(super) struct Pushed {
    pub(super) id: u32,
    pub(super) bi: usize,
    pub(super) b: usize,
    pub(super) to: usize,
    pub(super) reach_epoch: u32,
    pub(super) lowest: u16,
}

impl Search<'_> {
    /// Counts one expansion against the budget (`stop` on the work counter)
    /// and reads the clock every 1024 units of work.
    pub(super) fn tick(&mut self, stop: u64, next_clock: &mut u64) -> Result<(), Stop> {
        self.work += 1;
        self.nodes += 1;
        if self.work > stop {
            return Err(Stop::Budget);
        }
        if self.work >= *next_clock {
            *next_clock = self.work + 1024;
            if self.soft_stop.is_some_and(|t| Instant::now() >= t) {
                return Err(Stop::Budget);
            }
            if self.budget.expired() {
                return Err(Stop::Timeout);
            }
        }
        Ok(())
    }

    /// The pushes the player can make from the area stamped `reach_epoch`:
    /// onto floor that is free and not dead, only those of the smallest
    /// PI-corral when there is one. The buffer goes back to the scratch
    /// space after use.
    pub(super) fn pushes_from(
        &mut self,
        boxes: &[u16],
        reach_epoch: u32,
        mode: Mode,
    ) -> Vec<Child> {
        let board = self.board;
        let mut children = std::mem::take(&mut self.scratch.children);
        children.clear();
        for (bi, &b) in boxes.iter().enumerate() {
            let b = b as usize;
            for d in 0..4 {
                let stand = board.step(b, (d + 2) % 4);
                let to = board.step(b, d);
                if self.stamp[stand] != reach_epoch
                    || !board.floor[to]
                    || self.occupied[to]
                    || board.dead[to]
                {
                    continue;
                }
                // Only the move search counts the walking.
                let walk = if self.by_moves { self.walk[stand] } else { 0 };
                children.push((bi, b, d, to, walk));
            }
        }
        if self.pi_corrals
            && !matches!(mode, Mode::Moves { .. })
            && self.pi_corral(boxes, reach_epoch)
        {
            let corral = &self.scratch.corral;
            children.retain(|&(bi, _, d, _, _)| corral.contains(&(bi, d)));
        }
        children
    }

    /// The position after `push` from position `push.id` whose boxes are
    /// `boxes`: `None` when it is a freeze deadlock, when its bound is
    /// infinite, or when the push search knows it is off every solution of
    /// the fewest pushes; else its (bound, table, owed) and the player's key.
    /// `child` receives its sorted boxes.
    pub(super) fn after_push(
        &mut self,
        mode: Mode,
        boxes: &[u16],
        push: Pushed,
        child: &mut [u16],
        matching_cost: u64,
    ) -> Option<((u32, u32, u8), u16)> {
        let Pushed {
            id,
            bi,
            b,
            to,
            reach_epoch,
            lowest,
        } = push;
        let i = id as usize;
        self.occupied[b] = false;
        self.occupied[to] = true;
        let next = if self
            .board
            .freeze_deadlock(to, &self.occupied, &mut self.wall)
        {
            None
        } else {
            child.copy_from_slice(boxes);
            child[bi] = to as u16;
            child.sort_unstable();
            let moves_mode = matches!(mode, Mode::Moves { .. });
            let region = (!moves_mode || self.known.is_some())
                .then(|| self.region_after_push(b, to, reach_epoch, lowest));
            let key_player = if moves_mode {
                b as u16
            } else {
                region.unwrap_or(0)
            };
            // What the push search learnt of this position: reached there
            // with fewer pushes, no solution of the fewest pushes passes
            // through it this way; its bound is known.
            let known = region.and_then(|region| {
                let known = self.known.as_ref()?;
                known
                    .find(child, region)
                    .map(|k| (known.pushes[k], known.bound[k]))
            });
            match known {
                Some((pushes, _)) if self.pushes[i] + 1 > pushes => None,
                Some((_, h)) => {
                    let t = self.table_of(child, self.table[i]);
                    Some(((h, t, 0), key_player))
                }
                None => match self.find(child, key_player) {
                    // Seen already: the bound is the boxes', stored.
                    Some(seen) => {
                        let seen = seen as usize;
                        let known = (self.bound[seen], self.table[seen], self.owed[seen]);
                        Some((known, key_player))
                    }
                    None => {
                        // The bound is a cubic matching: with many boxes it,
                        // not the expansions, is the work, and it counts
                        // against the node budget (nothing for 25 boxes or
                        // fewer).
                        self.work += matching_cost;
                        let t = self.table_of(child, self.table[i]);
                        self.child_bound(id, boxes, bi, to, (child, t))
                            .map(|h| ((h, t, self.owed_now()), key_player))
                    }
                },
            }
        };
        self.occupied[to] = false;
        self.occupied[b] = true;
        next
    }

    /// Stores the start as position 0: its sorted boxes and bound, `None`
    /// when the bound proves it unsolvable.
    pub(super) fn root(&mut self, start: &Start, mode: Mode) -> Option<(Vec<u16>, u32)> {
        let mut boxes = start.boxes.clone();
        boxes.sort_unstable();
        for &b in &boxes {
            self.occupied[b as usize] = true;
        }
        let key_player = match mode {
            Mode::Moves { .. } => start.player,
            _ => self.flood(start.player as usize),
        };
        let t0 = self.table_of(&boxes, 0);
        for &b in &boxes {
            self.occupied[b as usize] = false;
        }
        let h0 = self.bound_on(t0, &boxes, usize::from(start.player))?;
        if mode == Mode::FewestPushes {
            self.start_bound.get_or_insert(h0);
        }
        let owed = self.owed_now();
        self.insert(&boxes, key_player, ROOT, (0, 0), 0, 0, (h0, t0, owed));
        Some((boxes, h0))
    }
}
