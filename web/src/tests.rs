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
