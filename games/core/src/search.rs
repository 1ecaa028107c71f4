//! Small-graph searches shared by the games' generators and verifiers:
//! breadth-first distances and paths, flood fill, reverse reachability. The
//! hot solver cores (tilt's state BFS, sokoban's push search) keep their own
//! loops.

use std::collections::VecDeque;

const UNREACHED: u32 = u32::MAX;

/// A breadth-first search over states `0..n`, run to the end: who was reached,
/// in which order, how far from a start and through which state.
#[derive(Debug, Clone)]
pub struct Bfs {
    parent: Vec<u32>,
    dist: Vec<u32>,
    order: Vec<u32>,
}

impl Bfs {
    /// Searches from `starts` along `neighbours(s)`; a state is reached
    /// through the first state (in breadth-first order) that lists it, and
    /// the first of its neighbours' lists decides among equals, so the result
    /// is a function of the inputs alone.
    pub fn new<I>(
        n: usize,
        starts: impl IntoIterator<Item = usize>,
        mut neighbours: impl FnMut(usize) -> I,
    ) -> Bfs
    where
        I: IntoIterator<Item = usize>,
    {
        let mut parent = vec![UNREACHED; n];
        let mut dist = vec![UNREACHED; n];
        let mut order = Vec::new();
        let mut queue = VecDeque::new();
        for s in starts {
            if dist[s] == UNREACHED {
                dist[s] = 0;
                parent[s] = s as u32;
                queue.push_back(s);
            }
        }
        while let Some(s) = queue.pop_front() {
            order.push(s as u32);
            for t in neighbours(s) {
                if dist[t] == UNREACHED {
                    dist[t] = dist[s] + 1;
                    parent[t] = s as u32;
                    queue.push_back(t);
                }
            }
        }
        Bfs {
            parent,
            dist,
            order,
        }
    }

    /// Whether `s` was reached.
    pub fn reached(&self, s: usize) -> bool {
        self.dist[s] != UNREACHED
    }

    /// Steps from the nearest start to `s`, if reached.
    pub fn distance(&self, s: usize) -> Option<u32> {
        self.reached(s).then_some(self.dist[s])
    }

    /// The reached states, nearest first.
    pub fn order(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().map(|&s| s as usize)
    }

    /// A shortest path from a start to `t` (both included), if `t` was reached.
    pub fn path_to(&self, t: usize) -> Option<Vec<usize>> {
        if !self.reached(t) {
            return None;
        }
        let mut path = vec![t];
        let mut at = t;
        while self.parent[at] as usize != at {
            at = self.parent[at] as usize;
            path.push(at);
        }
        path.reverse();
        Some(path)
    }
}

/// Flood fill from `start`: claims it and every state reachable through
/// `neighbours` that `claim` accepts (`claim` marks the state and answers
/// whether it was free), and returns them in the order reached, breadth first.
pub fn flood<I>(
    start: usize,
    mut neighbours: impl FnMut(usize) -> I,
    mut claim: impl FnMut(usize) -> bool,
) -> Vec<usize>
where
    I: IntoIterator<Item = usize>,
{
    if !claim(start) {
        return Vec::new();
    }
    let mut filled = vec![start];
    let mut next = 0;
    while let Some(&s) = filled.get(next) {
        next += 1;
        for t in neighbours(s) {
            if claim(t) {
                filled.push(t);
            }
        }
    }
    filled
}

/// Marks every state from which a marked state can be reached: a search
/// backwards along predecessor lists built once in compressed form.
///
/// `successors(s)` lists the successors of state `s`; ids at or beyond
/// `marked.len()` (e.g. a "won" or "lost" sentinel) are ignored.
pub fn mark_reverse_reachable<I>(marked: &mut [bool], successors: impl Fn(usize) -> I)
where
    I: IntoIterator<Item = u32>,
{
    let n = marked.len();
    let mut start = vec![0usize; n + 1];
    for s in 0..n {
        for t in successors(s) {
            if (t as usize) < n {
                start[t as usize + 1] += 1;
            }
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut preds = vec![0u32; start[n]];
    for s in 0..n {
        for t in successors(s) {
            if (t as usize) < n {
                preds[fill[t as usize]] = s as u32;
                fill[t as usize] += 1;
            }
        }
    }
    let mut stack: Vec<usize> = (0..n).filter(|&s| marked[s]).collect();
    while let Some(t) = stack.pop() {
        for &p in &preds[start[t]..start[t + 1]] {
            if !marked[p as usize] {
                marked[p as usize] = true;
                stack.push(p as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 - 1 - 2 - 3 in a line, 4 alone, 5 beside 0 and 3 (a shortcut).
    fn line(s: usize) -> Vec<usize> {
        match s {
            0 => vec![1, 5],
            1 => vec![0, 2],
            2 => vec![1, 3],
            3 => vec![2, 5],
            5 => vec![0, 3],
            _ => vec![],
        }
    }

    #[test]
    fn bfs_gives_distances_paths_and_order() {
        let bfs = Bfs::new(6, [0], line);
        assert_eq!(bfs.distance(3), Some(2));
        assert_eq!(bfs.path_to(3), Some(vec![0, 5, 3]));
        assert_eq!(bfs.path_to(0), Some(vec![0]));
        assert!(!bfs.reached(4));
        assert_eq!(bfs.path_to(4), None);
        assert_eq!(bfs.order().collect::<Vec<_>>(), [0, 1, 5, 2, 3]);
        let two = Bfs::new(6, [4, 2], line);
        assert_eq!(two.distance(4), Some(0));
        assert_eq!(two.distance(0), Some(2));
    }

    #[test]
    fn flood_claims_each_state_once() {
        let mut owner = [usize::MAX; 6];
        let region = flood(2, line, |s| {
            let free = owner[s] == usize::MAX && s != 5;
            if free {
                owner[s] = 7;
            }
            free
        });
        assert_eq!(region, [2, 1, 3, 0]);
        assert_eq!(owner, [7, 7, 7, 7, usize::MAX, usize::MAX]);
        assert!(flood(2, line, |_| false).is_empty());
    }

    #[test]
    fn states_that_reach_a_mark_are_marked() {
        // 0 -> 1 -> 2 (marked), 3 -> 3, 4 -> 99 (sentinel, ignored), 4 -> 0.
        let succ: Vec<Vec<u32>> = vec![vec![1], vec![2], vec![], vec![3], vec![99, 0]];
        let mut marked = vec![false, false, true, false, false];
        mark_reverse_reachable(&mut marked, |s| succ[s].clone());
        assert_eq!(marked, [true, true, true, false, true]);
    }
}
