//! The positions of a finished push search, and the boards of boxes frozen
//! on goals (walls for the positions below them).

use crate::clock::Instant;

use hashbrown::HashTable;
use rustc_hash::FxHashMap;

use super::*;

/// The positions of a finished push-optimal search: boxes and player region,
/// the pushes of the cheapest path found to each (the fewest, for those it
/// expanded; never fewer than the fewest) and its bound.
pub(super) struct Known {
    pub(super) k: usize,
    pub(super) boxes: Vec<u16>,
    pub(super) region: Vec<u16>,
    pub(super) pushes: Vec<u32>,
    pub(super) bound: Vec<u32>,
    pub(super) index: HashTable<u32>,
}

/// Boxes frozen on goals (by walls, dead squares and each other, as the
/// freeze deadlock test finds them) can never move again: for the rest of
/// the search they are walls, and their goals are filled. A board per set of
/// such boxes, built the first time a position has it, gives the other boxes
/// the distances of that floor: goals behind them out of reach (a dead-end
/// goal corridor filled out of order is a deadlock), detours around them.
///
/// Table 0 is the level's own board. A frozen box stays frozen, so a push
/// only adds walls, and a lone box's distance with more walls is never
/// shorter: the bound stays admissible and consistent. Past
/// [`FROZEN_BOARDS_BYTES`] no board is built; a position whose set has none
/// keeps its parent's (a subset of its walls, still admissible), and the
/// bound of a position then depends on the path that found it first, so
/// the exact searches reopen a closed position reached more cheaply.
pub(super) struct FrozenBoards {
    /// Bytes the boards may take; 0: none are built (the level's board
    /// only, as if no box ever froze on a goal).
    pub(super) limit: usize,
    /// Board `t` is `boards[t - 1]`, its frozen cells `cells[t - 1]`.
    pub(super) boards: Vec<Board>,
    pub(super) cells: Vec<Vec<u16>>,
    pub(super) tables: FxHashMap<Vec<u16>, u32>,
    pub(super) bytes: usize,
    /// Whether a set went without its board.
    pub(super) full: bool,
    /// Per table, per cell: [`FrozenBoards::plus`]'s answer once known
    /// (`PLUS_NONE` for `None`, `PLUS_UNKNOWN` before it is asked).
    pub(super) plus_one: Vec<Vec<u32>>,
    /// Scratch: the set being looked up.
    pub(super) set: Vec<u16>,
    /// Past this moment no board is built (a board of a large level takes
    /// a good share of a second): a time limit of `pregen solve`, never set
    /// in a pack.
    pub(super) stop: Option<Instant>,
}

impl FrozenBoards {
    pub(super) fn new(limit: usize) -> FrozenBoards {
        FrozenBoards {
            stop: None,
            limit,
            boards: Vec::new(),
            cells: Vec::new(),
            tables: FxHashMap::default(),
            bytes: 0,
            full: false,
            plus_one: Vec::new(),
            set: Vec::new(),
        }
    }

    /// The frozen cells of table `t` (none for the level's board).
    pub(super) fn cells(&self, t: u32) -> &[u16] {
        match t {
            0 => &[],
            t => &self.cells[t as usize - 1],
        }
    }

    /// The board of table `t`, `base` being the level's.
    pub(super) fn board<'b>(&'b self, t: u32, base: &'b Board) -> &'b Board {
        match t {
            0 => base,
            t => &self.boards[t as usize - 1],
        }
    }

    /// The table of the set in `self.set` (sorted); `fallback` when it has no
    /// board and the memory for one is spent.
    pub(super) fn table(&mut self, board: &Board, fallback: u32) -> u32 {
        if self.set.is_empty() || self.limit == 0 {
            return 0;
        }
        self.built(board).unwrap_or_else(|| {
            self.full = true;
            fallback
        })
    }

    /// The table of the set in `self.set` (sorted, not empty), its board
    /// built if there is room for it.
    pub(super) fn built(&mut self, board: &Board) -> Option<u32> {
        if let Some(&t) = self.tables.get(self.set.as_slice()) {
            return Some(t);
        }
        if !self.room(board) || self.stopped() {
            return None;
        }
        let frozen = board.with_frozen(&self.set);
        Some(self.keep(frozen))
    }

    /// Whether the time for building boards is up.
    pub(super) fn stopped(&self) -> bool {
        self.stop.is_some_and(|t| Instant::now() >= t)
    }

    /// Whether another board fits in the memory left.
    pub(super) fn room(&self, board: &Board) -> bool {
        let average = self.bytes / self.boards.len().max(1);
        self.bytes + average.max(board.bytes()) <= self.limit
    }

    /// Keeps `frozen`, the board of the set in `self.set`; its table.
    pub(super) fn keep(&mut self, frozen: Board) -> u32 {
        self.bytes += frozen.bytes();
        self.boards.push(frozen);
        self.cells.push(self.set.clone());
        let t = self.boards.len() as u32;
        self.tables.insert(self.set.clone(), t);
        t
    }

    /// The table of table `t`'s frozen cells and the goal cell `x` (not
    /// among them); `None` when a wall on `x` takes no goal out of reach of
    /// any cell (a box on `x` then never has to leave), or when there is no
    /// room for its board.
    pub(super) fn plus(&mut self, t: u32, x: u16, base: &Board) -> Option<u32> {
        if self.limit == 0 {
            return None;
        }
        let (ti, xi) = (t as usize, usize::from(x));
        if self.plus_one.len() <= ti {
            self.plus_one.resize(ti + 1, Vec::new());
        }
        if self.plus_one[ti].is_empty() {
            self.plus_one[ti] = vec![PLUS_UNKNOWN; base.cells];
        }
        match self.plus_one[ti][xi] {
            PLUS_UNKNOWN => {}
            PLUS_NONE => return None,
            known => return Some(known),
        }
        let mut set = std::mem::take(&mut self.set);
        set.clear();
        set.extend_from_slice(self.cells(t));
        let at = set.binary_search(&x).unwrap_or_else(|at| at);
        set.insert(at, x);
        self.set = set;
        let found = match self.tables.get(self.set.as_slice()) {
            Some(&tx) => Some(tx),
            None if !self.room(base) || self.stopped() => None,
            None => {
                let walled = base.with_frozen(&self.set);
                let same = walled.reaches_as(self.board(t, base), usize::from(x));
                (!same).then(|| self.keep(walled))
            }
        };
        self.plus_one[ti][xi] = found.unwrap_or(PLUS_NONE);
        found
    }
}

impl Known {
    pub(super) fn find(&self, boxes: &[u16], region: u16) -> Option<usize> {
        let k = self.k;
        self.index
            .find(Search::hash(boxes, region), |&id| {
                let i = id as usize;
                self.region[i] == region && &self.boxes[i * k..(i + 1) * k] == boxes
            })
            .map(|&id| id as usize)
    }
}
