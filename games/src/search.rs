//! Small-graph searches shared by the games' verifiers. The hot solver cores
//! (tilt's state BFS, sokoban's push search) keep their own loops.

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

    #[test]
    fn states_that_reach_a_mark_are_marked() {
        // 0 -> 1 -> 2 (marked), 3 -> 3, 4 -> 99 (sentinel, ignored), 4 -> 0.
        let succ: Vec<Vec<u32>> = vec![vec![1], vec![2], vec![], vec![3], vec![99, 0]];
        let mut marked = vec![false, false, true, false, false];
        mark_reverse_reachable(&mut marked, |s| succ[s].clone());
        assert_eq!(marked, [true, true, true, false, true]);
    }
}
