//! The bound's matching: the Hungarian method, a matching kept and redone
//! for one pushed box, and the matchings kept for the next expansion.

/// A cost no real matching reaches.
pub(super) const UNMATCHED: i64 = 1 << 32;

/// The minimum total cost of a perfect assignment of `n` rows to `n` columns
/// (Hungarian method with potentials, O(n^3)). Up to 31 rows its scratch is on
/// the stack: the MCTS generator calls it once a roll-out.
pub(in crate::sokoban) fn hungarian(n: usize, cost: impl Fn(usize, usize) -> i64) -> i64 {
    const STACK: usize = 32;
    if n < STACK {
        let (mut u, mut v, mut minv) = ([0i64; STACK], [0i64; STACK], [0i64; STACK]);
        let (mut way, mut p) = ([0usize; STACK], [0usize; STACK]);
        let mut used = [false; STACK];
        let m = n + 1;
        hungarian_in(
            n,
            &cost,
            Scratch {
                u: &mut u[..m],
                v: &mut v[..m],
                way: &mut way[..m],
                p: &mut p[..m],
                minv: &mut minv[..m],
                used: &mut used[..m],
            },
        )
    } else {
        Matching::default().solve(n, &cost)
    }
}

/// The Hungarian method's arrays, `n + 1` long each.
/// `cost` with the boxes on `leaving` (the cell of row `i` is `cell(i)`)
/// charged two pushes on their own goals, the only goals a box is 0 from.
pub(super) fn charge<'c>(
    cost: &'c impl Fn(usize, usize) -> i64,
    cell: impl Fn(usize) -> u16 + 'c,
    leaving: &'c [u16],
) -> impl Fn(usize, usize) -> i64 + 'c {
    move |i, j| match cost(i, j) {
        0 if leaving.contains(&cell(i)) => 2,
        c => c,
    }
}

pub(super) struct Scratch<'a> {
    pub(super) u: &'a mut [i64],
    pub(super) v: &'a mut [i64],
    pub(super) way: &'a mut [usize],
    /// `p[j]`: the row matched to column j (1-based; 0 = none).
    pub(super) p: &'a mut [usize],
    pub(super) minv: &'a mut [i64],
    pub(super) used: &'a mut [bool],
}

/// The costs of `n` rows by `n` columns, row by row: the Hungarian method
/// looks a cost up many times, and the search's costs take a few look-ups
/// each.
pub(super) fn fill_costs(n: usize, cost: &impl Fn(usize, usize) -> i64, matrix: &mut [i64]) {
    for (i, row) in matrix.chunks_exact_mut(n.max(1)).enumerate() {
        for (j, slot) in row.iter_mut().enumerate() {
            *slot = cost(i, j);
        }
    }
}

pub(super) fn hungarian_in(
    n: usize,
    cost: &impl Fn(usize, usize) -> i64,
    mut s: Scratch<'_>,
) -> i64 {
    for i in 1..=n {
        add_row(i, n, cost, &mut s);
    }
    (1..=n).map(|j| cost(s.p[j] - 1, j - 1)).sum()
}

/// Matches row `i` (1-based), the only row without a column, along the
/// cheapest augmenting path, keeping the potentials feasible: the other
/// rows' matching stays of least cost, with row `i` added.
pub(super) fn add_row(
    i: usize,
    n: usize,
    cost: &impl Fn(usize, usize) -> i64,
    s: &mut Scratch<'_>,
) {
    let Scratch {
        u,
        v,
        way,
        p,
        minv,
        used,
    } = s;
    // Slices of one length, so that a column is checked against it once.
    let (u, v, way, p) = (&mut u[..=n], &mut v[..=n], &mut way[..=n], &mut p[..=n]);
    let (minv, used) = (&mut minv[..=n], &mut used[..=n]);
    p[0] = i;
    let mut j0 = 0;
    minv.fill(i64::MAX);
    used.fill(false);
    loop {
        used[j0] = true;
        let i0 = p[j0];
        let mut delta = i64::MAX;
        let mut j1 = 0;
        for j in 1..=n {
            if !used[j] {
                let cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
                if cur < minv[j] {
                    minv[j] = cur;
                    way[j] = j0;
                }
                if minv[j] < delta {
                    delta = minv[j];
                    j1 = j;
                }
            }
        }
        for j in 0..=n {
            if used[j] {
                u[p[j]] += delta;
                v[j] -= delta;
            } else {
                minv[j] -= delta;
            }
        }
        j0 = j1;
        if p[j0] == 0 {
            break;
        }
    }
    loop {
        let j1 = way[j0];
        p[j0] = p[j1];
        j0 = j1;
        if j0 == 0 {
            break;
        }
    }
}

/// A least-cost matching of boxes to goals kept whole (potentials and
/// assignment, 1-based, `n + 1` long each, and the costs), so that a position
/// one push away is matched again by one augmenting path, O(n^2), instead of
/// anew, O(n^3), with only the pushed box's costs taken anew.
#[derive(Default)]
pub(super) struct Matching {
    /// The costs, `n` by `n`, row-major.
    pub(super) costs: Vec<i64>,
    /// The row matched again's costs.
    pub(super) line: Vec<i64>,
    pub(super) u: Vec<i64>,
    pub(super) v: Vec<i64>,
    pub(super) way: Vec<usize>,
    pub(super) p: Vec<usize>,
    pub(super) minv: Vec<i64>,
    pub(super) used: Vec<bool>,
}

impl Matching {
    pub(super) fn scratch(&mut self, n: usize) -> Scratch<'_> {
        for v in [&mut self.u, &mut self.v, &mut self.minv] {
            v.resize(n + 1, 0);
        }
        self.way.resize(n + 1, 0);
        self.p.resize(n + 1, 0);
        self.used.resize(n + 1, false);
        Scratch {
            u: &mut self.u,
            v: &mut self.v,
            way: &mut self.way,
            p: &mut self.p,
            minv: &mut self.minv,
            used: &mut self.used,
        }
    }

    /// Matches `n` rows anew; the total cost.
    pub(super) fn solve(&mut self, n: usize, cost: &impl Fn(usize, usize) -> i64) -> i64 {
        let mut costs = std::mem::take(&mut self.costs);
        costs.resize(n * n, 0);
        fill_costs(n, cost, &mut costs);
        let s = self.scratch(n);
        s.u.fill(0);
        s.v.fill(0);
        s.p.fill(0);
        let total = hungarian_in(n, &|i, j| costs[i * n + j], s);
        self.costs = costs;
        total
    }

    /// `from`'s matching with row `row` (0-based) given new costs: that row
    /// leaves its column and is matched again; the total cost.
    pub(super) fn rematch(
        &mut self,
        from: &Matching,
        n: usize,
        row: usize,
        cost: &impl Fn(usize, usize) -> i64,
    ) -> i64 {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.extend((0..n).map(|j| cost(row, j)));
        let costs = &from.costs;
        let cost = |i: usize, j: usize| {
            if i == row { line[j] } else { costs[i * n + j] }
        };
        let mut s = self.scratch(n);
        s.u.copy_from_slice(&from.u[..=n]);
        s.v.copy_from_slice(&from.v[..=n]);
        s.p.copy_from_slice(&from.p[..=n]);
        let i = row + 1;
        if let Some(j) = s.p.iter().skip(1).position(|&r| r == i) {
            s.p[j + 1] = 0;
        }
        // Feasible for the row's new costs: no reduced cost below zero.
        s.u[i] = (1..=n)
            .map(|j| cost(row, j - 1) - s.v[j])
            .min()
            .unwrap_or(0);
        add_row(i, n, &cost, &mut s);
        let total = (1..=n).map(|j| cost(s.p[j] - 1, j - 1)).sum();
        self.line = line;
        total
    }
}

/// The matchings of the children the last expansion matched again from its
/// own: the next expansion is often one of them (deeper first among equal
/// f), and starts from its kept matching instead of matching anew.
#[derive(Default)]
pub(super) struct Kept {
    /// The expanded position, its rows (boxes not frozen, sorted) and costs.
    pub(super) parent: u32,
    pub(super) rows: Vec<u16>,
    pub(super) costs: Vec<i64>,
    /// The boxes its matching (and so its children's) charges for having
    /// to leave their goals.
    pub(super) leaving: Vec<u16>,
    /// Per child: its id, the pushed box's row and new cell; its `u`, `v`
    /// and `p` (`n + 1` each) and its row's costs (`n`), in turn, in
    /// `arrays`.
    pub(super) children: Vec<(u32, usize, u16)>,
    pub(super) arrays: Vec<i64>,
    /// Scratch: the kept rows' places in the child's order.
    pub(super) perm: Vec<usize>,
}

impl Kept {
    /// Keeps `child`'s matching (`matched`, from `parent`'s `from` over
    /// the rows `rows`).
    pub(super) fn keep(
        &mut self,
        (parent, rows, leaving): (u32, &[u16], &[u16]),
        from: &Matching,
        child: (u32, usize, u16),
        matched: &Matching,
    ) {
        let n = rows.len();
        if self.parent != parent || self.children.is_empty() {
            self.parent = parent;
            self.rows.clear();
            self.rows.extend_from_slice(rows);
            self.leaving.clear();
            self.leaving.extend_from_slice(leaving);
            self.costs.clear();
            self.costs.extend_from_slice(&from.costs[..n * n]);
            self.children.clear();
            self.arrays.clear();
        }
        self.children.push(child);
        self.arrays.extend_from_slice(&matched.u[..=n]);
        self.arrays.extend_from_slice(&matched.v[..=n]);
        self.arrays
            .extend(matched.p[..=n].iter().map(|&r| r as i64));
        self.arrays.extend_from_slice(&matched.line[..n]);
    }

    /// Puts the kept matching of `id` (its rows `rest`, sorted) in `into`,
    /// rows in `rest`'s order, and the boxes it charges in `leaving`; false
    /// when none is kept.
    pub(super) fn restore(
        &mut self,
        id: u32,
        rest: &[u16],
        into: &mut Matching,
        leaving: &mut Vec<u16>,
    ) -> bool {
        let n = rest.len();
        let Some(k) = self.children.iter().position(|c| c.0 == id) else {
            return false;
        };
        if n != self.rows.len() {
            return false;
        }
        let (_, row, to) = self.children[k];
        self.perm.clear();
        for i in 0..n {
            let cell = if i == row { to } else { self.rows[i] };
            match rest.binary_search(&cell) {
                Ok(at) => self.perm.push(at),
                Err(_) => return false,
            }
        }
        let stride = 4 * n + 3;
        let a = &self.arrays[k * stride..(k + 1) * stride];
        let (u, v) = (&a[..=n], &a[n + 1..2 * n + 2]);
        let (p, line) = (&a[2 * n + 2..3 * n + 3], &a[3 * n + 3..]);
        into.costs.resize(n * n, 0);
        for (i, &to_row) in self.perm.iter().enumerate() {
            let from = if i == row {
                line
            } else {
                &self.costs[i * n..(i + 1) * n]
            };
            into.costs[to_row * n..(to_row + 1) * n].copy_from_slice(from);
        }
        leaving.clear();
        leaving.extend_from_slice(&self.leaving);
        let s = into.scratch(n);
        s.u[0] = u[0];
        for (i, &to_row) in self.perm.iter().enumerate() {
            s.u[to_row + 1] = u[i + 1];
        }
        s.v.copy_from_slice(v);
        for (slot, &r) in s.p.iter_mut().zip(p) {
            *slot = match r as usize {
                0 => 0,
                r => self.perm[r - 1] + 1,
            };
        }
        true
    }
}
