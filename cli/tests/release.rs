//! The release files: levels, solutions apart (or inline, or left out), and
//! the seed-only release from which a client that links `pregen-games`
//! regenerates every level bit for bit.

use std::collections::BTreeMap;
use std::path::Path;

use pregen_games::seeds::SeedFile;

use crate::common::run_pack;

/// A small tilt pack in two strata (so that seeds map to their params), with
/// `release` as its `[release]` table.
fn job(release: &str) -> String {
    format!(
        "pack = \"e2e\"\ngame = \"tilt\"\nseeds_per_lease = 32\n\
         [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n\
         [[strata]]\nname = \"small\"\ncount = 120\n\
         [[strata]]\nname = \"wide\"\ncount = 80\nparams = {{ width = 6, pairs = 3 }}\n\
         [budget]\nmax_nodes = 50000\nwatchdog_ms = 60000\n\
         [tiers]\nscheme = \"equal\"\ncount = 4\n\
         {release}"
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The levels of the pack's Parquet files: seed -> (tier, hash, solution).
fn parquet_levels(pack: &Path) -> BTreeMap<u64, (u32, String, String)> {
    use pregen_pack::read::{read_batches, text_column, u64_column};
    let mut out = BTreeMap::new();
    for tier in 1..=4u32 {
        let path = pack.join(pregen_pack::dir::tier_part(tier, 0));
        for batch in read_batches(&path).expect("tier file") {
            let seeds = u64_column(&batch, "seed", &path).expect("seed");
            let hashes = text_column(&batch, "level_hash", &path).expect("level_hash");
            let solutions = text_column(&batch, "solution", &path).expect("solution");
            for (i, seed) in seeds.into_iter().enumerate() {
                let row = (
                    tier,
                    hashes.value(i).to_string(),
                    solutions.value(i).to_string(),
                );
                out.insert(seed, row);
            }
        }
    }
    out
}

#[test]
fn a_seed_only_release_regenerates_every_level_bit_for_bit_regression_19() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job(""), 2);
    let levels = parquet_levels(&pack);
    assert_eq!(levels.len(), 200);
    let mut regenerated = 0;
    for tier in 1..=4u32 {
        let text = read(
            &pack
                .join("release/seeds")
                .join(format!("tier-{tier:02}.txt")),
        );
        let file = SeedFile::parse(&text).expect("a seed file");
        assert_eq!(
            (file.header.game.as_str(), file.header.tier),
            ("tilt", tier)
        );
        assert_eq!(file.header.strata.len(), 2, "both parameter sets listed");
        // The client's side: levels made again from the seeds alone.
        let made = file.regenerate().expect("every level regenerates");
        for ((seed, hash), level) in file.levels.iter().zip(&made) {
            let (in_tier, in_parquet, _) = &levels[seed];
            assert_eq!((in_tier, in_parquet), (&tier, hash), "seed {seed}");
            assert_eq!(&level.level_hash, hash, "seed {seed}");
        }
        regenerated += made.len();
    }
    assert_eq!(
        regenerated, 200,
        "every level of the pack is in a seed file"
    );

    // A seed file whose hash was edited, or that a newer generator made, is refused.
    let text = read(&pack.join("release/seeds/tier-01.txt"));
    let first = SeedFile::parse(&text).expect("parse").levels[0].1.clone();
    let edited = SeedFile::parse(&text.replacen(&first, &"0".repeat(64), 1)).expect("parse");
    let err = edited.regenerate().expect_err("a wrong hash").to_string();
    assert!(err.contains("the file lists"), "{err}");
    let newer = text.replacen("\"generator\":\"", "\"generator\":\"9", 1);
    let err = SeedFile::parse(&newer)
        .expect("parse")
        .regenerate()
        .expect_err("newer");
    assert!(err.to_string().contains("made by generator"), "{err}");
    let err = SeedFile::parse("not json\n1 abc\n").expect_err("no header");
    assert!(err.to_string().contains("not a seed file"), "{err}");
}

#[test]
fn solutions_ship_apart_inline_or_not_at_all_regression_19() {
    let dir = tempfile::tempdir().expect("tempdir");
    let apart = run_pack(&dir.path().join("apart"), &job(""), 1);
    let levels = parquet_levels(&apart);
    for tier in 1..=4u32 {
        let name = format!("tier-{tier:02}.txt");
        let text = read(&apart.join("release").join(&name));
        assert!(
            !text.contains("; solution"),
            "no solution in the level file"
        );
        let solutions = read(&apart.join("release/solutions").join(&name));
        let ids: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("; id "))
            .map(|l| l.split(' ').next().unwrap_or_default())
            .collect();
        let listed: Vec<(&str, &str)> = solutions
            .lines()
            .map(|l| l.split_once(' ').expect("`ID SOLUTION`"))
            .collect();
        assert_eq!(ids.len(), listed.len(), "one solution per level");
        for (id, (solved, solution)) in ids.iter().zip(&listed) {
            assert_eq!(id, solved, "in the tier file's order");
            let seed: u64 = id.trim_start_matches("tilt-").parse().expect("seed");
            assert_eq!(*solution, levels[&seed].2, "seed {seed}");
        }
    }
    let sums = read(&apart.join("release/SHA256SUMS"));
    assert!(sums.contains("  solutions/tier-01.txt\n"), "{sums}");
    assert!(sums.contains("  seeds/tier-01.txt\n"), "{sums}");

    let inline = run_pack(
        &dir.path().join("inline"),
        &job("[release]\nsolutions = \"inline\"\n"),
        1,
    );
    let text = read(&inline.join("release/tier-01.txt"));
    assert_eq!(
        text.matches("; solution ").count(),
        text.matches("; id ").count(),
        "a solution above every level"
    );
    assert!(!inline.join("release/solutions").exists());

    let none = run_pack(
        &dir.path().join("none"),
        &job("[release]\nsolutions = \"none\"\n"),
        1,
    );
    assert!(!read(&none.join("release/tier-01.txt")).contains("; solution"));
    assert!(!none.join("release/solutions").exists());
    assert!(!read(&none.join("release/SHA256SUMS")).contains("solutions/"));
    // The levels are the same whatever ships with them.
    assert!(parquet_levels(&none) == levels);
}
