//! PI-corrals: the pushes a position must make first.

use super::*;

impl Search<'_> {
    /// Whether the position has a PI-corral (boxes in `occupied`, the
    /// player's area stamped `reach`); if so, the pushes of its smallest are
    /// left in `scratch.corral`.
    ///
    /// A corral is an area of free cells the player cannot reach; its boxes
    /// are those next to it. It is a PI-corral when every push of its boxes
    /// that is not blocked until one of them moves (by a wall, a dead square,
    /// another of its boxes, or the player having to stand inside) goes into
    /// the area and can be made now, and when it is not solved (a box of it
    /// off its goal, or a goal in the area). Some box of such a corral must
    /// move in any solution, and before one does nothing else can touch the
    /// corral; so the first such push of a fewest-pushes solution can be made
    /// first instead, at the same count: only the corral's pushes need
    /// expanding, and the search stays push-optimal. (Not for fewest moves:
    /// the order of pushes changes the walking.)
    pub(super) fn pi_corral(&mut self, boxes: &[u16], reach: u32) -> bool {
        let epoch = reach;
        let mut scratch = std::mem::take(&mut self.scratch);
        let areas = self.label_areas(boxes, epoch, &mut scratch);
        let Expansion {
            next_to,
            goal_in,
            inside,
            members,
            pushes,
            corral,
            ..
        } = &mut scratch;
        let next_to = &next_to[..areas];
        let mut found = false;
        for first in 0..areas {
            // The corral grows by the areas its boxes can be pushed into from
            // outside it or stood beside from, until it holds or fails.
            inside.clear();
            inside.resize(areas, false);
            inside[first] = true;
            let holds = loop {
                members.clear();
                members.resize(boxes.len(), false);
                for (a, list) in next_to.iter().enumerate() {
                    if inside[a] {
                        for &bi in list {
                            members[bi] = true;
                        }
                    }
                }
                match self.corral_pushes(boxes, epoch, inside, members, pushes) {
                    Growth::Fails => break false,
                    Growth::Grow(a) => inside[a] = true,
                    Growth::Closed { unsolved } => {
                        let goal_inside = goal_in.iter().zip(inside.iter()).any(|(&g, &i)| g && i);
                        break unsolved || goal_inside;
                    }
                }
            };
            if holds && (!found || pushes.len() < corral.len()) {
                found = true;
                std::mem::swap(pushes, corral);
            }
        }
        if !found {
            corral.clear();
        }
        self.scratch = scratch;
        found
    }

    /// Labels the free areas next to boxes that the player (stamped
    /// `epoch`) cannot reach: per area, the boxes next to it
    /// (`scratch.next_to`) and whether it holds a goal (`scratch.goal_in`).
    /// Gives the number of areas.
    fn label_areas(&mut self, boxes: &[u16], epoch: u32, scratch: &mut Expansion) -> usize {
        let board = self.board;
        let Expansion {
            next_to, goal_in, ..
        } = scratch;
        let mut areas = 0usize;
        goal_in.clear();
        for (bi, &b) in boxes.iter().enumerate() {
            for d in 0..4 {
                let n = board.step(b as usize, d);
                if !board.floor[n] || self.occupied[n] || self.stamp[n] == epoch {
                    continue;
                }
                if self.area_stamp[n] != epoch {
                    // A new area: fill it.
                    let id = areas;
                    areas += 1;
                    if next_to.len() < areas {
                        next_to.push(Vec::new());
                    }
                    next_to[id].clear();
                    goal_in.push(self.fill_area(n, id as u32, epoch));
                }
                let id = self.area[n] as usize;
                if next_to[id].last() != Some(&bi) {
                    next_to[id].push(bi);
                }
            }
        }
        areas
    }

    /// Labels `id` the area of free cells the player cannot reach around
    /// `n`; whether it holds a goal.
    fn fill_area(&mut self, n: usize, id: u32, epoch: u32) -> bool {
        let board = self.board;
        let mut goal = false;
        self.area_stamp[n] = epoch;
        self.area[n] = id;
        self.queue.clear();
        self.queue.push(n as u16);
        let mut head = 0;
        while head < self.queue.len() {
            let c = self.queue[head] as usize;
            head += 1;
            goal |= board.goal[c];
            for d in 0..4 {
                let m = board.step(c, d);
                if board.floor[m]
                    && !self.occupied[m]
                    && self.stamp[m] != epoch
                    && self.area_stamp[m] != epoch
                {
                    self.area_stamp[m] = epoch;
                    self.area[m] = id;
                    self.queue.push(m as u16);
                }
            }
        }
        goal
    }

    /// The labelled area of free cell `c`, if it is in one.
    fn area_of(&self, c: usize, epoch: u32) -> Option<usize> {
        (self.area_stamp[c] == epoch && self.board.floor[c] && !self.occupied[c])
            .then(|| self.area[c] as usize)
    }

    /// The pushes of the corral of areas `inside` (its boxes `members`),
    /// left in `pushes`, or how it must grow, or that it fails.
    fn corral_pushes(
        &self,
        boxes: &[u16],
        epoch: u32,
        inside: &[bool],
        members: &[bool],
        pushes: &mut Vec<(usize, usize)>,
    ) -> Growth {
        let board = self.board;
        let member_at = |c: usize| {
            if !self.occupied[c] {
                return None;
            }
            boxes
                .iter()
                .position(|&b| b as usize == c)
                .map(|bi| members[bi])
        };
        pushes.clear();
        let mut unsolved = false;
        for (bi, &b) in boxes.iter().enumerate() {
            if !members[bi] {
                continue;
            }
            let b = b as usize;
            unsolved |= !board.goal[b];
            for d in 0..4 {
                let stand = board.step(b, (d + 2) % 4);
                let to = board.step(b, d);
                // Blocked until a box of the corral moves.
                if !board.floor[to] || !board.floor[stand] || board.dead[to] {
                    continue;
                }
                match (member_at(to), member_at(stand)) {
                    (Some(true), _) | (_, Some(true)) => continue,
                    // Blocked by a box outside: it may move first.
                    (Some(false), _) | (_, Some(false)) => return Growth::Fails,
                    (None, None) => {}
                }
                if let Some(a) = self.area_of(stand, epoch) {
                    if inside[a] {
                        continue; // the player cannot stand inside
                    }
                    return Growth::Grow(a);
                }
                match self.area_of(to, epoch) {
                    Some(a) if inside[a] => pushes.push((bi, d)),
                    Some(a) => return Growth::Grow(a),
                    // Out of the corral into the player's area.
                    None => return Growth::Fails,
                }
            }
        }
        Growth::Closed { unsolved }
    }
}

/// What a corral's pushes say of it.
enum Growth {
    /// A push leaves it for the player's area, or a box outside blocks one.
    Fails,
    /// It must take in this area.
    Grow(usize),
    /// Its pushes all stay inside; whether one of its boxes is off its goal.
    Closed { unsolved: bool },
}
