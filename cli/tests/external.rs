//! The game protocol end to end: `pregen game-server` run as a game program
//! and spoken to by `games::external::Program`, as a worker would speak to a
//! game in another language.

use std::time::Duration;

use pregen_games::external::Program;
use pregen_games::{Budget, GameKind};

/// Every built-in game answers over the protocol exactly as it runs: the
/// same outcome for every seed (the protocol carries all of it), and the
/// same check of its levels, a forged one refused.
#[test]
fn a_game_served_over_the_protocol_gives_what_it_gives_natively() {
    let cases = [
        (
            "tilt",
            serde_json::json!({ "width": 5, "height": 5, "pairs": 2, "min_moves": 3 }),
            60,
        ),
        ("dungeon", serde_json::json!({}), 8),
        ("synthetic", serde_json::json!({ "cost_us": 0 }), 60),
    ];
    for (name, params, seeds) in cases {
        let command = vec![
            env!("CARGO_BIN_EXE_pregen").to_string(),
            "game-server".to_string(),
            name.to_string(),
        ];
        let (mut program, description) = Program::start(&command, None).expect("starts");
        assert_eq!(description.name, name);
        let native = GameKind::from_name(name)
            .expect("a game")
            .prepare(&params)
            .expect("params");
        let mut accepted = 0;
        for seed in 0..seeds {
            let over = program.generate(seed, &params, 200_000, Duration::from_secs(60));
            let here = native.run(seed, &Budget::nodes(200_000));
            assert_eq!(over.result, here.result, "{name} seed {seed}");
            assert_eq!(over.nodes, here.nodes, "{name} seed {seed}");
            if let Ok(level) = &over.result {
                accepted += 1;
                assert_eq!(
                    program.check(&params, level, Duration::from_secs(60)),
                    Ok(())
                );
                let mut forged = level.clone();
                forged.level_hash = "0".repeat(64);
                let refused = program.check(&params, &forged, Duration::from_secs(60));
                assert!(refused.is_err(), "{name}: a forged hash passes");
            }
        }
        assert!(accepted > 0, "{name}: no level accepted");
        eprintln!("{name}: {seeds} seeds, {accepted} accepted, the same over the protocol");
    }
}

/// The shipped example, Rush Hour in Python with the standard library,
/// speaks the protocol: two processes give the same outcome for every seed,
/// every accepted level passes its check, and the two liars are caught: a
/// solution one move short fails the honest check, and a level of another
/// seed differs from what the seed makes.
#[test]
fn the_python_example_speaks_the_protocol_and_its_liars_are_caught() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/external/rushhour.py"
    );
    let start = |lie: &[&str]| {
        let mut command = vec!["python3".to_string(), script.to_string()];
        command.extend(lie.iter().map(|s| s.to_string()));
        let (program, description) = Program::start(&command, None).expect("starts");
        assert_eq!(description.name, "rushhour");
        program
    };
    let (mut a, mut b) = (start(&[]), start(&[]));
    let mut short = start(&["--lie", "solution"]);
    let mut elsewhere = start(&["--lie", "level"]);
    let params = serde_json::json!({});
    let wait = Duration::from_secs(60);
    let (mut accepted, mut caught_short, mut caught_elsewhere) = (0, 0, 0);
    for seed in 0..40 {
        let here = a.generate(seed, &params, 200_000, wait);
        let there = b.generate(seed, &params, 200_000, wait);
        assert_eq!(here.result, there.result, "seed {seed}: two runs differ");
        assert_eq!(here.nodes, there.nodes, "seed {seed}");
        let Ok(level) = &here.result else { continue };
        accepted += 1;
        assert_eq!(a.check(&params, level, wait), Ok(()), "seed {seed}");
        if let Ok(lie) = short.generate(seed, &params, 200_000, wait).result {
            let refused = a.check(&params, &lie, wait);
            assert!(refused.is_err(), "seed {seed}: a short solution passes");
            caught_short += 1;
        }
        if elsewhere.generate(seed, &params, 200_000, wait).result != here.result {
            caught_elsewhere += 1;
        }
    }
    assert!(accepted >= 3, "only {accepted} of 40 seeds accepted");
    assert_eq!((caught_short, caught_elsewhere), (accepted, accepted));
}
