//! The 3x3x3 cube as 54 stickers and its turns as sticker permutations.
//!
//! Axes: X from Left to Right, Y from Bottom to Top, Z from Back to Front. A
//! face's cell (x, y) is seen from outside the cube, (0, 0) top-left:
//!
//! | face | normal | x grows towards | y grows towards |
//! |---|---|---|---|
//! | Top | +Y | Right | Front (y = 0 is the edge next to Back) |
//! | Bottom | -Y | Right | Front (the source's reversed y) |
//! | Left | -X | Front | Bottom |
//! | Right | +X | Back | Bottom |
//! | Front | +Z | Right | Bottom |
//! | Back | -Z | Left | Bottom |
//!
//! A row move turns the slice through Top row y about the Z axis so that Top
//! goes to Right, Right to Bottom, Bottom to Left, Left to Top; a column move
//! turns the slice through Top column x about the X axis so that Top goes to
//! Back, Back to Bottom, Bottom to Front, Front to Top. Stickers of an outer
//! slice's side face turn with it, as on a Rubik's cube.

use std::sync::OnceLock;

/// The six faces; `face as usize * 9 + y * 3 + x` indexes a sticker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Face {
    /// The face the monk lives on.
    Top,
    /// Opposite Top.
    Bottom,
    /// Left of Top.
    Left,
    /// Right of Top.
    Right,
    /// Below Top in the source's net, towards the player.
    Front,
    /// Above Top in the source's net.
    Back,
}

impl Face {
    /// Every face in index order.
    pub const ALL: [Face; 6] = [
        Face::Top,
        Face::Bottom,
        Face::Left,
        Face::Right,
        Face::Front,
        Face::Back,
    ];

    /// (normal, x direction, y direction) as unit vectors.
    fn frame(self) -> [[i8; 3]; 3] {
        const X: [i8; 3] = [1, 0, 0];
        const Y: [i8; 3] = [0, 1, 0];
        const Z: [i8; 3] = [0, 0, 1];
        let neg = |v: [i8; 3]| v.map(|c| -c);
        match self {
            Face::Top => [Y, X, Z],
            Face::Bottom => [neg(Y), X, Z],
            Face::Left => [neg(X), Z, neg(Y)],
            Face::Right => [X, neg(Z), neg(Y)],
            Face::Front => [Z, X, neg(Y)],
            Face::Back => [neg(Z), neg(X), neg(Y)],
        }
    }
}

/// A sticker's index.
pub fn cell(face: Face, x: usize, y: usize) -> usize {
    face as usize * 9 + y * 3 + x
}

/// A sticker's (position of its cubie, normal).
fn place(i: usize) -> ([i8; 3], [i8; 3]) {
    let face = Face::ALL[i / 9];
    let (x, y) = ((i % 3) as i8 - 1, ((i % 9) / 3) as i8 - 1);
    let [n, dx, dy] = face.frame();
    let p = [0, 1, 2].map(|k| n[k] + x * dx[k] + y * dy[k]);
    (p, n)
}

/// A player's turn: a row left-to-right or a column front-to-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Turn {
    /// Top row y, left to right.
    Row(u8),
    /// Top column x, front to back.
    Column(u8),
}

impl Turn {
    /// The six turns a player may make.
    pub const ALL: [Turn; 6] = [
        Turn::Row(0),
        Turn::Row(1),
        Turn::Row(2),
        Turn::Column(0),
        Turn::Column(1),
        Turn::Column(2),
    ];

    /// `R0`..`R2`, `C0`..`C2`.
    pub fn name(self) -> String {
        match self {
            Turn::Row(y) => format!("R{y}"),
            Turn::Column(x) => format!("C{x}"),
        }
    }

    /// Parses [`Turn::name`].
    pub fn parse(s: &str) -> Option<Turn> {
        let (kind, n) = s.split_at_checked(1)?;
        let n: u8 = n.parse().ok().filter(|&n| n < 3)?;
        match kind {
            "R" => Some(Turn::Row(n)),
            "C" => Some(Turn::Column(n)),
            _ => None,
        }
    }

    /// The turn's position in [`Turn::ALL`].
    pub fn index(self) -> usize {
        match self {
            Turn::Row(y) => usize::from(y),
            Turn::Column(x) => 3 + usize::from(x),
        }
    }

    /// The sticker permutation: the sticker at `i` goes to `perm[i]`.
    pub fn permutation(self) -> &'static [u8; 54] {
        static PERMS: OnceLock<[[u8; 54]; 6]> = OnceLock::new();
        &PERMS.get_or_init(|| Turn::ALL.map(build))[self.index()]
    }

    /// Applies the turn to 54 cells.
    pub fn apply<T: Copy>(self, cells: &[T; 54]) -> [T; 54] {
        let perm = self.permutation();
        let mut out = *cells;
        for (i, &to) in perm.iter().enumerate() {
            out[usize::from(to)] = cells[i];
        }
        out
    }
}

/// Rotates `v` a quarter turn for `turn`: rows about Z taking +Y to +X,
/// columns about X taking +Y to -Z.
fn rotate(turn: Turn, v: [i8; 3]) -> [i8; 3] {
    match turn {
        Turn::Row(_) => [v[1], -v[0], v[2]],
        Turn::Column(_) => [v[0], v[2], -v[1]],
    }
}

fn build(turn: Turn) -> [u8; 54] {
    let places: Vec<([i8; 3], [i8; 3])> = (0..54).map(place).collect();
    let mut perm = [0u8; 54];
    for (i, &(p, n)) in places.iter().enumerate() {
        let in_slice = match turn {
            // Top row y lies at Z = y - 1; Top column x at X = x - 1.
            Turn::Row(y) => p[2] == y as i8 - 1,
            Turn::Column(x) => p[0] == x as i8 - 1,
        };
        let moved = if in_slice {
            (rotate(turn, p), rotate(turn, n))
        } else {
            (p, n)
        };
        let to = places
            .iter()
            .position(|&q| q == moved)
            .expect("a turn maps stickers to stickers");
        perm[i] = to as u8;
    }
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered() -> [u8; 54] {
        std::array::from_fn(|i| i as u8)
    }

    #[test]
    fn four_equal_turns_are_the_identity_and_each_turn_moves_stickers() {
        for turn in Turn::ALL {
            let once = turn.apply(&numbered());
            assert_ne!(once, numbered(), "{turn:?} moves something");
            let four = (0..4).fold(numbered(), |c, _| turn.apply(&c));
            assert_eq!(four, numbered(), "{turn:?}");
        }
    }

    #[test]
    fn a_turn_and_its_inverse_cancel() {
        for turn in Turn::ALL {
            let three = (0..3).fold(numbered(), |c, _| turn.apply(&c));
            assert_eq!(turn.apply(&three), numbered(), "{turn:?}");
        }
    }

    #[test]
    fn row_moves_carry_top_to_right_and_columns_top_to_back() {
        for y in 0..3u8 {
            let c = Turn::Row(y).apply(&numbered());
            for x in 0..3 {
                // Top's row y lands on Right; Right's goes to Bottom; Left's comes to Top.
                let from_top = cell(Face::Top, x, usize::from(y)) as u8;
                assert!(
                    (0..3).any(|j| (0..3).any(|k| c[cell(Face::Right, j, k)] == from_top)),
                    "R{y}: Top ({x},{y}) is on Right"
                );
                let from_left = c[cell(Face::Top, x, usize::from(y))];
                assert_eq!(usize::from(from_left) / 9, Face::Left as usize, "R{y}");
            }
        }
        for x in 0..3u8 {
            let c = Turn::Column(x).apply(&numbered());
            for y in 0..3 {
                let from_front = c[cell(Face::Top, usize::from(x), y)];
                assert_eq!(usize::from(from_front) / 9, Face::Front as usize, "C{x}");
            }
            let on_back: Vec<u8> = (0..9).map(|k| c[Face::Back as usize * 9 + k]).collect();
            assert_eq!(
                on_back.iter().filter(|&&s| usize::from(s) / 9 == 0).count(),
                3
            );
        }
        // The middle slices leave every face's centre ring alone except their own.
        let c = Turn::Row(1).apply(&numbered());
        assert_eq!(c[cell(Face::Back, 1, 1)], cell(Face::Back, 1, 1) as u8);
        assert_eq!(c[cell(Face::Front, 0, 0)], cell(Face::Front, 0, 0) as u8);
    }

    #[test]
    fn row_0_left_to_right_turns_back_counter_clockwise() {
        // Seen from outside, a counter-clockwise quarter turn takes the sticker
        // at the top-left corner to the bottom-left corner, and top-right to top-left.
        let c = Turn::Row(0).apply(&numbered());
        let back = |x, y| c[cell(Face::Back, x, y)];
        assert_eq!(back(0, 2), cell(Face::Back, 0, 0) as u8);
        assert_eq!(back(0, 0), cell(Face::Back, 2, 0) as u8);
        assert_eq!(back(2, 0), cell(Face::Back, 2, 2) as u8);
        assert_eq!(back(1, 1), cell(Face::Back, 1, 1) as u8);
        // Row 2 turns Front, clockwise as seen from the front.
        let c = Turn::Row(2).apply(&numbered());
        assert_eq!(c[cell(Face::Front, 2, 0)], cell(Face::Front, 0, 0) as u8);
        // Columns 0 and 2 turn Left and Right.
        let c = Turn::Column(0).apply(&numbered());
        assert_ne!(c[cell(Face::Left, 0, 0)], cell(Face::Left, 0, 0) as u8);
        assert_eq!(c[cell(Face::Left, 1, 1)], cell(Face::Left, 1, 1) as u8);
        let c = Turn::Column(2).apply(&numbered());
        assert_ne!(c[cell(Face::Right, 0, 0)], cell(Face::Right, 0, 0) as u8);
    }
}
