//! `sokoban`: box pushing (seed 003). So far: the level, its XSB form and
//! collection files, LURD solutions and their replay under the rules. The
//! generators and the solver of GAMES.md section 2 build on these.

pub mod level;
pub mod solve;

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests;
