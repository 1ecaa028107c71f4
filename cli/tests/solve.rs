//! `pregen solve` on collection files as players have them: every level gets
//! its own line, whatever happens to the others.

use pregen_games::sokoban::level::read_collection;

use crate::common::pregen;

/// a collection with a sealed pocket of solved boxes (as Microban
/// #155), a malformed level and an unsolvable one, next to a file that
/// cannot be read: each level is reported on its own line, every solution
/// printed replays on the level as written, and the command fails at the end
/// with the count.
#[test]
fn a_collection_is_solved_level_by_level() {
    let collection = "\
; A small set, written for this test

; 1
####
# .#
#  ###
#*@  #
#  $ #
#  ###
####

; 2
'The pocket'
#######
#*# #*#
#######
#  @  #
# $$. #
#  .  #
#######

; 3
#####
#@$?#
#####

; 4
######
#@ $$#
#  ..#
######

Title: After the rows
######
#    #
# #@ #
# $* #
# .* #
#    #
######
";
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("set.xsb");
    std::fs::write(&file, collection).expect("write");
    let missing = dir.path().join("missing.xsb");
    let out = pregen()
        .args(["solve", "--game", "sokoban", "--time-limit", "20"])
        .arg(&file)
        .arg(&missing)
        .output()
        .expect("run solve");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("3 of 6 levels not solved"), "{stderr}");
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    let summary: Vec<(&str, &str)> = rows.iter().map(|r| (r[1], r[2])).collect();
    assert_eq!(
        summary,
        [
            ("1", "optimal"),
            ("2", "optimal"),
            ("3", "malformed"),
            ("4", "unsolvable"),
            ("After the rows", "optimal"),
            ("-", "unreadable"),
        ],
        "{stdout}"
    );
    assert!(rows[2][10].contains("unknown character `?`"), "{stdout}");
    let levels = read_collection(collection).expect("levels");
    for (row, (title, level)) in rows.iter().zip(&levels) {
        if row[2] == "optimal" {
            let level = level.as_ref().expect("a level");
            level
                .replay(row[10])
                .unwrap_or_else(|e| panic!("{title}: {e}\n{stdout}"));
            assert_eq!(row[4], row[6], "the bound of a proven answer is its pushes");
        }
    }
}

/// `--time-limit` takes a positive number of seconds.
#[test]
fn solve_refuses_a_time_limit_that_is_not_a_duration() {
    for bad in ["0", "-1", "soon", "inf"] {
        let out = pregen()
            .args([
                "solve",
                "--game",
                "sokoban",
                &format!("--time-limit={bad}"),
                "x.xsb",
            ])
            .output()
            .expect("run solve");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not a number of seconds"),
            "{bad}"
        );
    }
}

/// A level whose fewest pushes are proven but whose fewest moves are not (the
/// move search's nodes ran out) is `push-optimal`, counts as solved, and its
/// answer replays; with nodes enough it is `optimal`, with as many pushes.
#[test]
fn pushes_proven_and_moves_not_is_push_optimal() {
    let level = "\
########
#      #
# $  $ #
#  ..  #
#@ ..  #
# $  $ #
#      #
########
";
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("four.xsb");
    std::fs::write(&file, level).expect("write");
    let solve = |max_nodes: &str| {
        let out = pregen()
            .args(["solve", "--game", "sokoban", "--max-nodes", max_nodes])
            .arg(&file)
            .output()
            .expect("run solve");
        let stdout = String::from_utf8(out.stdout).expect("utf-8");
        assert!(out.status.success(), "{stdout}");
        let row: Vec<String> = stdout
            .lines()
            .nth(1)
            .expect("a row")
            .split('\t')
            .map(str::to_string)
            .collect();
        row
    };
    let cut = solve("100");
    assert_eq!(cut[2], "push-optimal", "{cut:?}");
    assert_eq!(
        (cut[5].as_str(), &cut[4]),
        ("false", &cut[6]),
        "pushes = bound: {cut:?}"
    );
    let levels = read_collection(level).expect("levels");
    let level = levels[0].1.as_ref().expect("a level");
    level.replay(&cut[10]).expect("the answer replays");
    let full = solve("100000");
    assert_eq!(full[2], "optimal", "{full:?}");
    assert_eq!(full[4], cut[4], "as many pushes");
    assert!(full[3].parse::<u32>().expect("moves") <= cut[3].parse::<u32>().expect("moves"));
}

/// `solve` rates every level it solves with the game's built-in model, or
/// with `--model FILE`, and `--terms` shows what each term adds.
#[test]
fn solve_rates_levels_by_a_model_and_shows_its_terms() {
    let level = "\
########
#      #
# $  $ #
#  ..  #
#@ ..  #
# $  $ #
#      #
########
";
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("four.xsb");
    std::fs::write(&file, level).expect("write");
    let solve = |extra: &[&str]| {
        let out = pregen()
            .args(["solve", "--game", "sokoban"])
            .args(extra)
            .arg(&file)
            .output()
            .expect("run solve");
        let stdout = String::from_utf8(out.stdout).expect("utf-8");
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: Vec<Vec<String>> = stdout
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect();
        rows
    };
    let plain = solve(&[]);
    assert_eq!(plain[0][9], "difficulty");
    let (moves, pushes): (f64, f64) = (
        plain[1][3].parse().expect("moves"),
        plain[1][4].parse().expect("pushes"),
    );
    let difficulty: f64 = plain[1][9].parse().expect("a difficulty");
    assert!(moves > pushes && difficulty.is_finite(), "{plain:?}");

    // The bias and a column per term of the built-in model, in its order.
    let model = pregen_games::GameKind::from_name("sokoban")
        .expect("sokoban")
        .default_model()
        .expect("the built-in model");
    let with_terms = solve(&["--terms"]);
    let columns: Vec<String> = std::iter::once("bias".to_string())
        .chain(model.terms.iter().map(|t| format!("term:{}", t.feature)))
        .collect();
    let end = 10 + columns.len();
    assert_eq!(with_terms[0][10..end], columns);
    let sum: f64 = with_terms[1][10..end]
        .iter()
        .map(|t| t.parse::<f64>().expect("a term"))
        .sum();
    assert!((sum - difficulty).abs() < 1e-5, "{with_terms:?}");
    assert_eq!(with_terms[1][end], plain[1][10], "the solution comes last");

    let model = dir.path().join("pushes.toml");
    std::fs::write(
        &model,
        "name = \"pushes-only\"\nversion = 1\ngame = \"sokoban\"\n\
         [[terms]]\nfeature = \"pushes\"\nweight = 1.0\n",
    )
    .expect("write");
    let custom = solve(&["--model", model.to_str().expect("utf-8")]);
    assert_eq!(custom[1][9].parse::<f64>().expect("difficulty"), pushes);

    std::fs::write(&model, "name = \"x\"\nversion = 1\ngame = \"sokoban\"\n[[terms]]\nfeature = \"fun\"\nweight = 1.0\n")
        .expect("write");
    let out = pregen()
        .args(["solve", "--game", "sokoban", "--model"])
        .arg(&model)
        .arg(&file)
        .output()
        .expect("run solve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("pushes.toml") && stderr.contains("`fun` is not a feature"),
        "{stderr}"
    );
}
