//! The player's region: flood fills, and the region after a push derived
//! from the one before it.

use super::*;

impl Search<'_> {
    /// Flood-fills the player's reachable cells from `from` (boxes in
    /// `occupied`); returns the lowest cell reached.
    pub(super) fn flood(&mut self, from: usize) -> u16 {
        self.fill::<false>(from)
    }

    /// [`Search::flood`], with the walking distances in `walk` (what only
    /// the move search needs).
    pub(super) fn flood_walking(&mut self, from: usize) -> u16 {
        self.fill::<true>(from)
    }

    /// The flood fill of [`Search::flood`], walking distances kept if `WALK`.
    pub(super) fn fill<const WALK: bool>(&mut self, from: usize) -> u16 {
        self.epoch += 1;
        let epoch = self.epoch;
        // Slices of one length, so that a cell is checked against it once.
        let cells = self.board.cells;
        let width = self.board.width;
        let floor = &self.board.floor[..cells];
        let occupied = &self.occupied[..cells];
        let stamp = &mut self.stamp[..cells];
        let walk = &mut self.walk[..cells];
        let queue = &mut self.queue;
        stamp[from] = epoch;
        walk[from] = 0;
        queue.clear();
        queue.push(from as u16);
        let mut lowest = from as u16;
        let mut head = 0;
        while let Some(&c) = queue.get(head) {
            let c = usize::from(c);
            head += 1;
            for d in 0..4 {
                let n = step(c, d, width);
                if floor[n] && !occupied[n] && stamp[n] != epoch {
                    stamp[n] = epoch;
                    if WALK {
                        walk[n] = walk[c] + 1;
                    }
                    queue.push(n as u16);
                    lowest = lowest.min(n as u16);
                }
            }
        }
        lowest
    }

    /// The lowest cell of the player's region after the push of the box at
    /// `b` to `to` (boxes in `occupied` as after it), from the region before
    /// it (cells marked `reach` in `self.reach`, lowest `lowest`), without a
    /// flood fill where it can. The region before the push stays connected
    /// when `to` was out of reach, or when `to`'s free neighbours still meet
    /// around it (the eight cells about it): then the region after it is
    /// that one less `to`, plus `b`, unless `b` opens onto free cells that
    /// were out of reach.
    pub(super) fn region_after_push(
        &mut self,
        b: usize,
        to: usize,
        reach: u32,
        lowest: u16,
    ) -> u16 {
        let board = self.board;
        let opens = (0..4).any(|d| {
            let n = board.step(b, d);
            board.floor[n] && !self.occupied[n] && self.reach[n] != reach
        });
        if !opens
            && (self.reach[to] != reach || (to != usize::from(lowest) && self.meets_around(to)))
        {
            let region = lowest.min(b as u16);
            debug_assert_eq!(region, self.flood(b), "the region after a push");
            return region;
        }
        self.flood(b)
    }

    /// Whether the free neighbours of `c` are connected through the free
    /// cells of the ring of eight about it (so `c` filled cuts nothing).
    pub(super) fn meets_around(&self, c: usize) -> bool {
        let w = self.board.width;
        // Clockwise from the cell above: the even ones are the neighbours.
        let ring = [
            c - w,
            c - w + 1,
            c + 1,
            c + w + 1,
            c + w,
            c + w - 1,
            c - 1,
            c - w - 1,
        ];
        let free = ring.map(|x| self.board.floor[x] && !self.occupied[x]);
        let Some(gap) = free.iter().position(|&f| !f) else {
            return true;
        };
        // Runs of free cells, from the first gap round: those holding a
        // neighbour must be one.
        let mut runs = 0;
        let mut in_run = false;
        let mut holds = false;
        for k in 1..=8 {
            let i = (gap + k) % 8;
            if free[i] {
                in_run = true;
                holds |= i % 2 == 0;
            } else if in_run {
                runs += usize::from(holds);
                (in_run, holds) = (false, false);
            }
        }
        runs <= 1
    }
}
