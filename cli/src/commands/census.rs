//! `pregen doors-census`: every doors level of a small space, counted on all
//! cores (the counting itself is `pregen_games::doors::census`).

use anyhow::{Result, bail};
use clap::Args;
use pregen_games::doors::census::{Census, MAX_FEATURES};
use pregen_games::doors::level::Features;
use rayon::prelude::*;

/// Flags of `pregen doors-census`.
#[derive(Args)]
pub struct CensusArgs {
    /// Rooms (n).
    #[arg(long)]
    rooms: usize,
    /// Colours (b).
    #[arg(long)]
    colours: usize,
}

/// Counts the space in chunks on rayon and prints one table row.
pub fn run(args: CensusArgs) -> Result<()> {
    let CensusArgs { rooms, colours } = args;
    if !(2..=8).contains(&rooms) || !(1..=8).contains(&colours) {
        bail!("rooms must be 2..=8 and colours 1..=8");
    }
    let features = Features { rooms, colours };
    let m = features.count();
    if m > MAX_FEATURES {
        bail!(
            "rooms = {rooms}, colours = {colours} make 2^{m} levels; a census walks at most 2^{MAX_FEATURES}"
        );
    }
    let started = std::time::Instant::now();
    let total = 1u64 << m;
    let chunk = (total / 256).max(1);
    let census = (0..total.div_ceil(chunk))
        .into_par_iter()
        .map(|i| Census::count(features, i * chunk..((i + 1) * chunk).min(total)))
        .reduce(Census::default, Census::merge);
    println!("rooms\tcolours\tlevels\tgood\tunique good\tgood structures\tseconds");
    println!(
        "{rooms}\t{colours}\t{}\t{}\t{}\t{}\t{:.1}",
        census.levels,
        census.good,
        census.unique.len(),
        census.structures.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
