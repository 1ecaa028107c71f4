//! Planarity of small simple graphs (up to 32 vertices, adjacency as bit
//! masks): the Demoucron-Malgrange-Pertuiset path-embedding test on each
//! biconnected component. Checked against the number of labelled planar graphs
//! on 4 to 7 vertices (OEIS A066537) in the tests.

/// Whether the simple graph with adjacency masks `adj` (bit j of `adj[i]`: an
/// edge i-j; symmetric, no loops) is planar.
pub fn is_planar(adj: &[u32]) -> bool {
    let n = adj.len();
    let edges: u32 = adj.iter().map(|m| m.count_ones()).sum::<u32>() / 2;
    if n >= 3 && edges as usize > 3 * n - 6 {
        return false;
    }
    blocks(adj).iter().all(|block| block_is_planar(block))
}

/// The biconnected components of the graph, each as adjacency masks over the
/// whole vertex set (Tarjan's edge stack).
fn blocks(adj: &[u32]) -> Vec<Vec<u32>> {
    struct Walk<'a> {
        adj: &'a [u32],
        order: Vec<u32>,
        low: Vec<u32>,
        next: u32,
        stack: Vec<(usize, usize)>,
        blocks: Vec<Vec<u32>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize, parent: usize) {
            self.next += 1;
            self.order[v] = self.next;
            self.low[v] = self.next;
            let mut rest = self.adj[v];
            while rest != 0 {
                let w = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if self.order[w] == 0 {
                    self.stack.push((v, w));
                    self.visit(w, v);
                    self.low[v] = self.low[v].min(self.low[w]);
                    if self.low[w] >= self.order[v] {
                        let mut block = vec![0u32; self.adj.len()];
                        while let Some((a, b)) = self.stack.pop() {
                            block[a] |= 1 << b;
                            block[b] |= 1 << a;
                            if (a, b) == (v, w) {
                                break;
                            }
                        }
                        self.blocks.push(block);
                    }
                } else if w != parent && self.order[w] < self.order[v] {
                    self.stack.push((v, w));
                    self.low[v] = self.low[v].min(self.order[w]);
                }
            }
        }
    }
    let n = adj.len();
    let mut walk = Walk {
        adj,
        order: vec![0; n],
        low: vec![0; n],
        next: 0,
        stack: Vec::new(),
        blocks: Vec::new(),
    };
    for v in 0..n {
        if walk.order[v] == 0 {
            walk.visit(v, usize::MAX);
        }
    }
    walk.blocks
}

/// A piece of the graph not yet embedded: an edge between embedded vertices,
/// or a component of unembedded vertices with its edges to embedded ones.
struct Fragment {
    /// Unembedded vertices (empty for a lone edge).
    inner: u32,
    /// Embedded vertices it touches.
    attach: u32,
}

/// DMP on one biconnected component.
fn block_is_planar(adj: &[u32]) -> bool {
    let vertices = adj
        .iter()
        .enumerate()
        .filter(|(_, m)| **m != 0)
        .fold(0u32, |s, (v, _)| s | 1 << v);
    if vertices.count_ones() <= 4 {
        return true;
    }
    let Some(cycle) = find_cycle(adj, vertices.trailing_zeros() as usize) else {
        return true; // a single edge
    };
    let mut embedded_v = cycle.iter().fold(0u32, |s, &v| s | 1 << v);
    let mut embedded = vec![0u32; adj.len()];
    for i in 0..cycle.len() {
        let (a, b) = (cycle[i], cycle[(i + 1) % cycle.len()]);
        embedded[a] |= 1 << b;
        embedded[b] |= 1 << a;
    }
    let mut faces: Vec<Vec<usize>> = vec![cycle.clone(), cycle];
    loop {
        let fragments = fragments(adj, &embedded, embedded_v, vertices);
        if fragments.is_empty() {
            return true;
        }
        let face_set = |f: &Vec<usize>| f.iter().fold(0u32, |s, &v| s | 1 << v);
        let admissible: Vec<Vec<usize>> = fragments
            .iter()
            .map(|fr| {
                (0..faces.len())
                    .filter(|&i| fr.attach & !face_set(&faces[i]) == 0)
                    .collect()
            })
            .collect();
        if admissible.iter().any(Vec::is_empty) {
            return false;
        }
        let pick = admissible.iter().position(|a| a.len() == 1).unwrap_or(0);
        let face = admissible[pick][0];
        let path = fragment_path(adj, &fragments[pick]);
        for w in path.windows(2) {
            embedded[w[0]] |= 1 << w[1];
            embedded[w[1]] |= 1 << w[0];
        }
        for &v in &path {
            embedded_v |= 1 << v;
        }
        let (a, b) = split(&faces[face], &path);
        faces[face] = a;
        faces.push(b);
    }
}

/// A cycle through `start`: one of its edges closed by the shortest other
/// path between its ends (a biconnected component with three or more
/// vertices has one); `None` for a lone edge.
fn find_cycle(adj: &[u32], start: usize) -> Option<Vec<usize>> {
    let end = adj[start].trailing_zeros() as usize;
    let n = adj.len();
    let mut from = vec![usize::MAX; n];
    from[start] = start;
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        let mut rest = adj[v];
        while rest != 0 {
            let w = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            // Skip the edge start-end itself.
            if (v == start && w == end) || from[w] != usize::MAX {
                continue;
            }
            from[w] = v;
            if w == end {
                let mut cycle = vec![end];
                let mut u = end;
                while u != start {
                    u = from[u];
                    cycle.push(u);
                }
                return Some(cycle);
            }
            queue.push_back(w);
        }
    }
    None
}

fn fragments(adj: &[u32], embedded: &[u32], embedded_v: u32, vertices: u32) -> Vec<Fragment> {
    let mut out = Vec::new();
    // Edges between embedded vertices that are not embedded yet.
    for v in 0..adj.len() {
        if embedded_v & 1 << v == 0 {
            continue;
        }
        let mut rest = adj[v] & embedded_v & !embedded[v];
        while rest != 0 {
            let w = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if v < w {
                out.push(Fragment {
                    inner: 0,
                    attach: 1 << v | 1 << w,
                });
            }
        }
    }
    // Components of the unembedded vertices.
    let mut left = vertices & !embedded_v;
    while left != 0 {
        let mut comp = 1u32 << left.trailing_zeros();
        loop {
            let grown = comp
                | (0..adj.len())
                    .filter(|&v| comp & 1 << v != 0)
                    .fold(0, |s, v| s | adj[v])
                    & left;
            if grown == comp {
                break;
            }
            comp = grown;
        }
        left &= !comp;
        let attach = (0..adj.len())
            .filter(|&v| comp & 1 << v != 0)
            .fold(0, |s, v| s | adj[v])
            & embedded_v;
        out.push(Fragment {
            inner: comp,
            attach,
        });
    }
    out
}

/// A path through the fragment between two of its attachment vertices.
fn fragment_path(adj: &[u32], fragment: &Fragment) -> Vec<usize> {
    let first = fragment.attach.trailing_zeros() as usize;
    if fragment.inner == 0 {
        let second = (fragment.attach & !(1 << first)).trailing_zeros() as usize;
        return vec![first, second];
    }
    // Breadth-first from `first` through the fragment's inner vertices to
    // another attachment vertex.
    let n = adj.len();
    let mut from = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    let mut rest = adj[first] & fragment.inner;
    while rest != 0 {
        let w = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        from[w] = first;
        queue.push_back(w);
    }
    while let Some(v) = queue.pop_front() {
        let exits = adj[v] & fragment.attach & !(1 << first);
        if exits != 0 {
            let mut path = vec![exits.trailing_zeros() as usize, v];
            let mut u = v;
            while from[u] != first {
                u = from[u];
                path.push(u);
            }
            path.push(first);
            path.reverse();
            return path;
        }
        let mut rest = adj[v] & fragment.inner;
        while rest != 0 {
            let w = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if from[w] == usize::MAX && w != first {
                from[w] = v;
                queue.push_back(w);
            }
        }
    }
    unreachable!("a fragment of a biconnected graph has two attachments")
}

/// Splits a face (a cycle of vertices) by a path between two of its vertices.
fn split(face: &[usize], path: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let (a, b) = (path[0], path[path.len() - 1]);
    let len = face.len();
    let i = face.iter().position(|&v| v == a).unwrap_or(0);
    let j = face.iter().position(|&v| v == b).unwrap_or(0);
    let walk = |from: usize, to: usize| {
        let mut seg = vec![face[from]];
        let mut k = from;
        while k != to {
            k = (k + 1) % len;
            seg.push(face[k]);
        }
        seg
    };
    let inner = &path[1..path.len() - 1];
    let mut first = walk(i, j);
    first.extend(inner.iter().rev());
    let mut second = walk(j, i);
    second.extend(inner.iter());
    (first, second)
}

#[cfg(test)]
mod tests {
    use super::is_planar;

    fn graph(n: usize, edges: &[(usize, usize)]) -> Vec<u32> {
        let mut adj = vec![0u32; n];
        for &(a, b) in edges {
            adj[a] |= 1 << b;
            adj[b] |= 1 << a;
        }
        adj
    }

    fn complete(n: usize) -> Vec<u32> {
        (0..n).map(|v| ((1u32 << n) - 1) & !(1 << v)).collect()
    }

    #[test]
    fn kuratowski_graphs_are_not_planar() {
        assert!(!is_planar(&complete(5)));
        let k33: Vec<(usize, usize)> = (0..3).flat_map(|a| (3..6).map(move |b| (a, b))).collect();
        assert!(!is_planar(&graph(6, &k33)));
        // K3,3 with every edge subdivided once: few edges, still not planar.
        let mut subdivided = Vec::new();
        for (i, &(a, b)) in k33.iter().enumerate() {
            subdivided.push((a, 6 + i));
            subdivided.push((6 + i, b));
        }
        assert!(!is_planar(&graph(15, &subdivided)));
        assert!(is_planar(&complete(4)));
        // The cube and a wheel are planar.
        let cube = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 0),
            (4, 5),
            (5, 6),
            (6, 7),
            (7, 4),
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
        ];
        assert!(is_planar(&graph(8, &cube)));
        let wheel: Vec<(usize, usize)> = (1..7).flat_map(|i| [(0, i), (i, i % 6 + 1)]).collect();
        assert!(is_planar(&graph(7, &wheel)));
    }

    /// Counts the planar graphs among all labelled graphs on `n` vertices.
    fn planar_count(n: usize) -> u64 {
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect();
        (0u64..1 << pairs.len())
            .filter(|set| {
                let edges: Vec<(usize, usize)> = pairs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| set >> i & 1 == 1)
                    .map(|(_, &e)| e)
                    .collect();
                is_planar(&graph(n, &edges))
            })
            .count() as u64
    }

    #[test]
    fn counts_of_labelled_planar_graphs_match_oeis_a066537() {
        assert_eq!(planar_count(4), 64);
        assert_eq!(planar_count(5), 1023);
        assert_eq!(planar_count(6), 32071);
    }

    /// All 2,097,152 graphs on 7 vertices.
    #[test]
    fn labelled_planar_graphs_on_seven_vertices() {
        assert_eq!(planar_count(7), 1_823_707);
    }
}
