//! `pregen analysis calibrate`: a rating fitted to labelled levels, on public
//! Sokoban levels others sorted and on a pack's own tiers.

use std::path::{Path, PathBuf};

use crate::common::{job_text, pregen, run_pack};

fn data(class: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/boxoban/{class}.txt"))
}

/// Runs calibrate; its table rows (pair, base AUC, fitted AUC) and the model.
fn calibrate(args: &[String], out: &Path) -> (Vec<(String, f64, f64)>, String) {
    let run = pregen()
        .args(["analysis", "calibrate"])
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run calibrate");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let auc = |cell: &str| {
        cell.split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .expect("an AUC")
    };
    let rows = stdout
        .lines()
        .skip(2)
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), auc(cells[2]), auc(cells[3]))
        })
        .collect();
    (rows, std::fs::read_to_string(out).expect("the model"))
}

#[test]
fn calibrate_fits_sokoban_to_boxoban_classes_and_solve_uses_the_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("fitted.toml");
    let classes: Vec<String> = ["unfiltered", "medium", "hard"]
        .iter()
        .flat_map(|c| ["--class".to_string(), format!("{c}={}", data(c).display())])
        .collect();
    let args = [vec!["--game".to_string(), "sokoban".to_string()], classes].concat();
    let (rows, model) = calibrate(&args, &out);
    let pairs: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        pairs,
        [
            "AUC medium vs unfiltered",
            "AUC hard vs unfiltered",
            "AUC hard vs medium"
        ]
    );
    // 120 levels a class: the fit tells the classes apart as the full split
    // does, within what so few levels allow.
    for (pair, _, fitted) in &rows {
        assert!(*fitted > 0.55, "{pair}: {fitted}");
    }
    assert!(rows[1].2 > 0.8, "hard vs unfiltered: {rows:?}");
    assert!(
        model.contains("name = \"sokoban-calibrated\"") && model.contains("bias = "),
        "{model}"
    );
    // The same input, the same model.
    let again = dir.path().join("again.toml");
    let (_, same) = calibrate(&args, &again);
    assert_eq!(same, model);
    // The fitted model rates with `solve`.
    let solved = pregen()
        .args(["solve", "--game", "sokoban", "--model"])
        .arg(&out)
        .arg(data("hard"))
        .output()
        .expect("run solve");
    assert!(solved.status.success());
    let stdout = String::from_utf8_lossy(&solved.stdout);
    assert_eq!(stdout.lines().count(), 121, "a row per level");
}

/// Another game's labelled files: a tilt pack's easiest and hardest tiers,
/// read from its release files, are told apart by a model fitted to them.
#[test]
fn calibrate_reads_another_games_release_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job_text(200), 1);
    let tier = |n: u32| {
        pack.join(format!("release/tier-{n:02}.txt"))
            .display()
            .to_string()
    };
    let args: Vec<String> = [
        "--game",
        "tilt",
        "--class",
        &format!("easy={},{}", tier(1), tier(2)),
        "--class",
        &format!("hard={},{}", tier(9), tier(10)),
    ]
    .map(String::from)
    .to_vec();
    let (rows, model) = calibrate(&args, &dir.path().join("tilt.toml"));
    assert_eq!(rows.len(), 1);
    let (pair, base, fitted) = &rows[0];
    assert_eq!(pair, "AUC hard vs easy");
    assert_eq!(*base, 1.0, "the tiers are cut by the built-in model");
    assert!(*fitted > 0.9, "{rows:?}");
    assert!(model.contains("game = \"tilt\""), "{model}");
    // The base rates these tiers perfectly (it cut them): the verdict says
    // the fit is not better, and each term's words are its fitted weight's.
    assert!(
        model.contains(
            "# verdict: better than tilt-default on 0 of 1 measures; not on AUC hard vs easy"
        ),
        "{model}"
    );
    assert!(
        model.contains("to the difficulty per unit of moves (fitted)"),
        "{model}"
    );
    assert!(
        !model.contains("doubling"),
        "the base's words are gone: {model}"
    );
}

/// Labels from playtests, by level id of a pack: classes by name, or solve
/// times (Spearman); a label that is neither is refused with its line.
#[test]
fn calibrate_takes_a_packs_levels_labelled_by_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job_text(120), 1);
    // Labels from the pack's own rating: the hardest half "hard", and a
    // "solve time" that grows with the difficulty.
    let summary = pregen_analysis::summarize(&pack).expect("summary");
    assert_eq!(summary.statuses.get("accepted"), Some(&120));
    let out = pregen()
        .args(["analysis", "levels"])
        .arg(&pack)
        .output()
        .expect("levels");
    let listing = String::from_utf8_lossy(&out.stdout);
    let rated: Vec<(String, f64)> = listing
        .lines()
        .filter_map(|l| {
            // `; id ID seed S tier N rank R overall O difficulty D moves M`
            let words: Vec<&str> = l.strip_prefix("; id ")?.split_whitespace().collect();
            let id = words.first().filter(|w| w.starts_with("tilt-"))?;
            let d = words
                .iter()
                .position(|w| *w == "difficulty")
                .map(|i| words[i + 1])?;
            Some((id.to_string(), d.parse().ok()?))
        })
        .collect();
    assert_eq!(rated.len(), 120, "{listing}");
    let mut sorted: Vec<f64> = rated.iter().map(|r| r.1).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[60];
    let classes: String = rated
        .iter()
        .map(|(id, d)| format!("{id},{}\n", if *d >= median { "hard" } else { "easy" }))
        .collect();
    let times: String = rated
        .iter()
        .map(|(id, d)| format!("{id},{:.3}\n", 2.0 * d + 5.0))
        .collect();
    let csv = dir.path().join("labels.csv");
    let calibrate = |extra: &[&str], body: &str| {
        std::fs::write(&csv, format!("level_id,label\n{body}")).expect("write");
        pregen()
            .args(["analysis", "calibrate", "--game", "tilt", "--pack"])
            .arg(&pack)
            .arg("--labels")
            .arg(&csv)
            .args(extra)
            .arg("-o")
            .arg(dir.path().join("m.toml"))
            .output()
            .expect("calibrate")
    };
    let by_class = calibrate(&["--order", "easy,hard"], &classes);
    let stdout = String::from_utf8_lossy(&by_class.stdout);
    assert!(
        by_class.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&by_class.stderr)
    );
    assert!(stdout.contains("| AUC hard vs easy | 1.000"), "{stdout}");
    let by_time = calibrate(&["--values"], &times);
    let stdout = String::from_utf8_lossy(&by_time.stdout);
    assert!(
        by_time.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&by_time.stderr)
    );
    assert!(
        stdout.contains("| Spearman with the labels | 1.000"),
        "{stdout}"
    );
    let bad = calibrate(
        &["--order", "easy,hard"],
        "tilt-00000000000000000001,medium\n",
    );
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        stderr.contains("line 2") && stderr.contains("not a class of --order"),
        "{stderr}"
    );
}
