use super::*;

fn tilt_params() -> Value {
    json!({ "width": 5, "height": 5, "pairs": 2, "min_moves": 3 })
}

/// A level made in the browser build is the native one; its solution
/// checks, a wrong one does not, and playing it move by move ends won.
#[test]
fn a_level_is_made_checked_and_played() {
    let made = answer(
        &json!({"op": "level", "game": "tilt", "params": tilt_params(), "seed": 7, "max_nodes": 50_000})
            .to_string(),
    );
    let native = GameKind::from_name("tilt")
        .and_then(|g| g.prepare(&tilt_params()))
        .expect("tilt")
        .run(7, &Budget::nodes(50_000))
        .result;
    let seed = (0..50u64)
        .find(|&s| {
            GameKind::from_name("tilt")
                .and_then(|g| g.prepare(&tilt_params()))
                .expect("tilt")
                .run(s, &Budget::nodes(50_000))
                .result
                .is_ok()
        })
        .expect("an accepted seed");
    match native {
        Ok(level) => assert_eq!(made["level_hash"], json!(level.level_hash)),
        Err(_) => assert!(made["error"].is_string(), "{made}"),
    }
    let made = answer(
        &json!({"op": "level", "game": "tilt", "params": tilt_params(), "seed": seed, "max_nodes": 50_000})
            .to_string(),
    );
    let (json, solution) = (
        made["level_json"].as_str().expect("json"),
        made["solution"].as_str().expect("solution"),
    );
    let check = |solution: &str| {
        answer(
            &json!({"op": "check", "game": "tilt", "level_json": json, "solution": solution})
                .to_string(),
        )
    };
    assert_eq!(check(solution)["ok"], json!(true));
    assert_eq!(check("")["ok"], json!(false));
    let mut last = Value::Null;
    for k in 0..=solution.chars().count() {
        let moves: String = solution.chars().take(k).collect();
        last = answer(
            &json!({"op": "play", "game": "tilt", "level_json": json, "moves": moves}).to_string(),
        );
        assert!(last["text"].is_string(), "{last}");
        assert_eq!(
            last["won"],
            json!(k == solution.chars().count()),
            "after {k} moves"
        );
    }
    assert_ne!(last["text"], made["layout"], "the board changed");
    let refused = answer(r#"{"op":"launch"}"#);
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("not a request"))
    );
}

/// Every game's level comes with its picture, as the report draws it; a
/// position after moves is drawn too; a seed past 2^53 is read exactly
/// from its digits; a losing move is counted from 1.
#[test]
fn levels_and_positions_are_drawn_and_seeds_are_exact() {
    let made = answer(
        &json!({"op": "level", "game": "tilt", "params": tilt_params(), "seed": "3", "max_nodes": 50_000})
            .to_string(),
    );
    let by_number = answer(
        &json!({"op": "level", "game": "tilt", "params": tilt_params(), "seed": 3, "max_nodes": 50_000})
            .to_string(),
    );
    assert_eq!(made, by_number, "a seed as digits is the seed");
    if made["error"].is_null() {
        let svg = made["svg"].as_str().expect("a picture");
        assert_eq!(
            svg,
            pregen_pictures::level_svg(
                "tilt",
                made["layout"].as_str().expect("layout"),
                "tilt-3",
                1.0
            )
        );
    }
    let huge = (1u64 << 53) + 1;
    let made = answer(
        &json!({"op": "level", "game": "tilt", "params": tilt_params(), "seed": huge.to_string(), "max_nodes": 50_000})
            .to_string(),
    );
    match made["seed_text"].as_str() {
        Some(text) => assert_eq!(text, huge.to_string()),
        None => assert!(
            made["error"]
                .as_str()
                .is_some_and(|e| e.contains(&huge.to_string())),
            "{made}"
        ),
    }
    let refused = answer(
        &json!({"op": "level", "game": "tilt", "params": tilt_params(), "seed": "x1", "max_nodes": 5})
            .to_string(),
    );
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("`x1` is not a seed"))
    );

    // Sokoban: the picture of the position after moves, and a bad move
    // named as a player counts it.
    let params = json!({});
    let level = (0..40u64)
        .map(|seed| {
            answer(
                &json!({"op": "level", "game": "sokoban", "params": params, "seed": seed, "max_nodes": 2_000_000})
                    .to_string(),
            )
        })
        .find(|made| made["error"].is_null())
        .expect("a sokoban level");
    let json = level["level_json"].as_str().expect("json");
    let solution = level["solution"].as_str().expect("solution");
    let first: String = solution.chars().take(1).collect();
    let after = answer(
        &json!({"op": "play", "game": "sokoban", "level_json": json, "moves": first}).to_string(),
    );
    let svg = after["svg"].as_str().expect("a picture of the position");
    assert!(svg.starts_with("<svg") && svg.contains("<circle"), "{svg}");
    assert_ne!(svg, level["svg"].as_str().expect("the level's picture"));
    let wall = answer(&json!({"op": "play", "game": "sokoban", "level_json": json, "moves": format!("{first}xx")}).to_string());
    assert!(
        wall["error"]
            .as_str()
            .is_some_and(|e| e.contains("at move 2")),
        "{wall}"
    );
    let drawn =
        answer(&json!({"op": "picture", "game": "cube", "layout": "   k##\n   ###\n"}).to_string());
    assert!(drawn["svg"].as_str().is_some_and(|s| s.starts_with("<svg")));
}
