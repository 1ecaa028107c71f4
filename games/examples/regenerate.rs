//! A game client's side of a seed-only release: regenerates every level of a
//! tier's seed file (`release/seeds/tier-NN.txt`) with this crate alone and
//! prints each level's text form.
//!
//!     cargo run --release -p pregen-games --example regenerate -- out/demo/release/seeds/tier-01.txt

use pregen_games::seeds::SeedFile;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: regenerate SEED_FILE");
        std::process::exit(2);
    };
    let made = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| SeedFile::parse(&text).map_err(|e| e.to_string()))
        .and_then(|file| file.regenerate().map_err(|e| e.to_string()));
    match made {
        Ok(levels) => {
            for level in &levels {
                println!("{}\n", level.layout.trim_end());
            }
            eprintln!(
                "{path}: {} levels regenerated, every hash as listed",
                levels.len()
            );
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
