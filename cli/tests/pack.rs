//! A complete pack: every level replays, tiers and campaigns follow the rules,
//! an independent reader sees the documented schema.

use crate::common::needs::{Need, PARQUET_READERS, needs};
use std::collections::HashSet;
use std::process::Command;

use pregen_games::GameKind;

use crate::common::{COUNT, PackContent, pregen, pregen_stdout, reference, run_pack};
use pregen_pack::PackDir;

#[test]
fn every_level_of_a_pack_replays_to_a_win() {
    let pack = reference();
    assert_eq!(pack.levels.len() as u64, COUNT);
    for row in &pack.levels {
        GameKind::from_name("tilt")
            .expect("a game")
            .replay_json(&row.level_json, &row.solution)
            .unwrap_or_else(|e| panic!("seed {}: {e}\n{}", row.seed, row.layout));
    }
    let seeds: HashSet<u64> = pack
        .levels
        .iter()
        .map(|r| r.seed)
        .chain(pack.reject_seeds.iter().map(|r| r.0))
        .collect();
    assert_eq!(
        seeds.len(),
        pack.levels.len() + pack.reject_seeds.len(),
        "no seed twice"
    );
    // The pack is the first COUNT accepted seeds: every seed up to the last is accounted for.
    let last = seeds.iter().max().copied().unwrap_or(0);
    assert_eq!(seeds.len() as u64, last + 1, "seeds 0..={last} all present");
}

#[test]
fn tiers_are_equal_groups_sorted_by_difficulty_then_seed() {
    let pack = reference();
    for tier in 1..=10u32 {
        let rows: Vec<_> = pack.levels.iter().filter(|r| r.tier == tier).collect();
        assert_eq!(rows.len() as u64, COUNT / 10, "tier {tier}");
        assert!(
            rows.windows(2)
                .all(|w| (w[0].difficulty, w[0].seed) < (w[1].difficulty, w[1].seed)),
            "tier {tier} sorted"
        );
    }
    let maxima: Vec<f64> = (1..=10)
        .map(|t| {
            pack.levels
                .iter()
                .filter(|r| r.tier == t)
                .map(|r| r.difficulty)
                .fold(f64::MIN, f64::max)
        })
        .collect();
    let minima: Vec<f64> = (1..=10)
        .map(|t| {
            pack.levels
                .iter()
                .filter(|r| r.tier == t)
                .map(|r| r.difficulty)
                .fold(f64::MAX, f64::min)
        })
        .collect();
    for t in 0..9 {
        assert!(
            maxima[t] <= minima[t + 1],
            "tier {} overlaps tier {}",
            t + 1,
            t + 2
        );
    }
}

/// analysis/python/check_pack.py on the pack: the schema, statistics every
/// reader uses, the manifest's checksums, the SQL of analysis/sql/.
pub fn check_with_pyarrow(pack: &std::path::Path) {
    if !needs(&[PARQUET_READERS]) {
        return;
    }
    let (ok, out) = run_check_pack(pack);
    assert!(ok, "pyarrow check of {} failed:\n{out}", pack.display());
}

/// Runs check_pack.py: whether it passed, and what it printed.
fn run_check_pack(pack: &std::path::Path) -> (bool, String) {
    run_checker("check_pack.py", pack)
}

/// Runs one of analysis/python/'s checkers on a pack: whether it passed, and
/// what it printed.
fn run_checker(script: &str, pack: &std::path::Path) -> (bool, String) {
    let script = format!("{}/../analysis/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(script)
        .arg(pack)
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The checker refuses the faults analysts met: float statistics readers
/// ignore (a tier file rewritten by a plain Parquet writer), a Hive tier
/// folder (pandas cannot merge its `tier` with the files'), a row whose
/// stratum's name is not the manifest's, rows without their pack, a reason
/// code with numbers in it.
#[test]
fn check_pack_refuses_what_analysts_could_not_use() {
    if !needs(&[PARQUET_READERS]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let job = crate::common::job_text(100).replace("min_moves = 3", "min_moves = 6");
    let pack = run_pack(dir.path(), &job, 1);
    check_with_pyarrow(&pack);
    let faulty = |name: &str, fault: &dyn Fn(&std::path::Path), says: &str| {
        let copy = dir.path().join(name);
        copy_tree(&pack, &copy);
        fault(&copy);
        let (ok, out) = run_check_pack(&copy);
        assert!(!ok, "{name}: passed\n{out}");
        assert!(out.contains(says), "{name}: expected `{says}` in\n{out}");
    };
    faulty(
        "plain-writer",
        &|p| {
            let tier = p.join(pregen_pack::dir::tier_part(1, 0));
            rewrite_parquet(
                &tier,
                parquet::basic::Compression::ZSTD(Default::default()),
                1000,
            );
        },
        "no usable min/max",
    );
    faulty(
        "hive-folder",
        &|p| {
            let part = p.join(pregen_pack::dir::tier_part(1, 0));
            std::fs::create_dir(p.join("levels/tier=1")).expect("mkdir");
            std::fs::rename(part, p.join("levels/tier=1/part-00000.parquet")).expect("rename");
        },
        "level file outside the layout",
    );
    faulty(
        "stratum-name",
        &|p| {
            let rejects = p.join(pregen_pack::dir::REJECTS_FILE);
            rewrite_column(&rejects, "stratum_name", |_| "elsewhere".into());
        },
        "named 'elsewhere'",
    );
    faulty(
        "reason-with-numbers",
        &|p| {
            let rejects = p.join(pregen_pack::dir::REJECTS_FILE);
            rewrite_column(&rejects, "reason", |r| format!("{r} 3"));
        },
        "reason code with a number",
    );
    faulty(
        "another-pack",
        &|p| {
            let campaigns = p.join(pregen_pack::dir::CAMPAIGNS_FILE);
            rewrite_column(&campaigns, "pack", |_| "other".to_string());
        },
        "campaigns.pack",
    );
}

/// Rewrites one text column of a Parquet file, row by row (the footer's
/// metadata and statistics as the plain writer makes them).
fn rewrite_column(path: &std::path::Path, name: &str, edit: impl Fn(&str) -> String) {
    use arrow_array::cast::AsArray;
    use parquet::arrow::ArrowWriter;
    let batches = pregen_pack::read::read_batches(path).expect("read");
    let schema = batches[0].schema();
    let at = schema.index_of(name).expect("column");
    let file = std::fs::File::create(path).expect("create");
    let mut writer = ArrowWriter::try_new(file, schema.clone(), None).expect("writer");
    for batch in batches {
        let mut columns = batch.columns().to_vec();
        let edited: arrow_array::StringArray = columns[at]
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(&edit))
            .collect();
        columns[at] = std::sync::Arc::new(edited);
        let batch = arrow_array::RecordBatch::try_new(schema.clone(), columns).expect("batch");
        writer.write(&batch).expect("write");
    }
    writer.close().expect("close");
}

#[test]
fn independent_reader_sees_documented_schema() {
    if !needs(&[
        PARQUET_READERS,
        Need::Python(&["pyspark", "datafusion"]),
        Need::Java,
    ]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &crate::common::job_text(200), 1);
    check_with_pyarrow(&pack);
    // Spark, as an analyst's cluster reads it (one local JVM; pyspark and a
    // Java runtime, which `.ci/run` installs).
    let (ok, out) = run_checker("check_spark.py", &pack);
    assert!(ok, "Spark check of {} failed:\n{out}", pack.display());
    let summary = pregen_analysis::summarize(&pack).expect("summary");
    assert_eq!(summary.tiers.values().sum::<u64>(), 200);
    // The summary's percentiles are DuckDB's quantile_cont (and polars' median).
    let script = format!(
        "import duckdb, polars as pl\n\
         q = duckdb.sql(\"SELECT quantile_cont(difficulty, [0.5, 0.9, 0.99]) \
         FROM read_parquet('{0}/levels/*.parquet')\").fetchall()[0][0]\n\
         m = pl.read_parquet('{0}/levels/*.parquet')['moves'].median()\n\
         print(*q, m)",
        pack.display()
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|v| v.parse().expect("a number"))
        .collect();
    let ours = [
        summary.difficulty.p50,
        summary.difficulty.p90,
        summary.difficulty.p99,
        summary.moves.p50,
    ];
    for (a, b) in ours.iter().zip(&theirs) {
        assert!(
            (a - b).abs() < 1e-9,
            "summary {ours:?}, DuckDB and polars {theirs:?}"
        );
    }
    assert_eq!(summary.statuses.get("accepted"), Some(&200));

    // The same figures as JSON, for scripts.
    let json: serde_json::Value =
        serde_json::from_str(&pregen_stdout(&["analysis", "summary", "--json"], &pack))
            .expect("summary --json is JSON");
    let tiers = json["tiers"].as_object().expect("tiers");
    assert_eq!(tiers.len(), summary.tiers.len());
    // Tiers keyed as the manifest keys them.
    let manifest = PackDir::new(&pack).read_manifest().expect("manifest");
    let keyed: Vec<String> = manifest
        .counts
        .by_tier
        .keys()
        .map(|k| {
            serde_json::to_value(k)
                .expect("a key")
                .as_str()
                .expect("text")
                .to_string()
        })
        .collect();
    assert_eq!(tiers.keys().cloned().collect::<Vec<_>>(), keyed);
    assert!(tiers.contains_key("01"), "{tiers:?}");
    assert_eq!(tiers.values().filter_map(|n| n.as_u64()).sum::<u64>(), 200);
    assert_eq!(json["statuses"]["accepted"], 200);
    assert_eq!(json["difficulty"]["count"], 200);
    assert_eq!(json["difficulty"]["max"], summary.difficulty.max);
}

/// `pregen analysis report` writes one self-contained page holding the pack's
/// own figures: the tier table, the seeds, every rejection reason, five charts
/// whose columns add up to the pack.
#[test]
fn the_html_report_shows_the_packs_figures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &crate::common::job_text(200), 1);
    let page = dir.path().join("report.html");
    let status = pregen()
        .args(["analysis", "report"])
        .arg(&pack)
        .arg("-o")
        .arg(&page)
        .status()
        .expect("pregen runs");
    assert!(status.success());
    let html = std::fs::read_to_string(&page).expect("report written");
    let summary = pregen_analysis::summarize(&pack).expect("summary");
    let seeds: u64 = summary.statuses.values().sum();
    assert!(html.contains(&format!("<td>seeds in the pack</td><td>{seeds}</td>")));
    assert_eq!(seeds, summary.seeds_in_pack);
    // The tiers side by side: a column each, the levels of each in a row.
    let tiers: String = summary
        .tiers
        .keys()
        .map(|t| format!("<th>{t:02}</th>"))
        .collect();
    let counts: String = summary
        .tiers
        .values()
        .map(|n| format!("<td>{n}</td>"))
        .collect();
    assert!(
        html.contains(&format!("<tr><th>tier</th>{tiers}</tr>")),
        "the tiers' columns"
    );
    assert!(
        html.contains(&format!("<tr><th>levels</th>{counts}</tr>")),
        "the tiers' levels"
    );
    for (reason, n) in &summary.reasons {
        let tooltip = format!(
            "<title>{}: {n}</title>",
            pregen_analysis::svg::escape(reason)
        );
        assert!(html.contains(&tooltip), "{reason}: {n}");
    }
    assert!(html.contains("<th>states</th>"), "the game's metrics");
    // Five charts, and the pictures: three a tier and the first campaign's ten.
    let charts = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox";
    let pictures = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"level\"";
    assert_eq!(html.matches(charts).count(), 5);
    assert_eq!(html.matches(pictures).count(), 3 * 10 + 10);
    let swatches = pregen_analysis::picture::legend("tilt").len();
    assert_eq!(html.matches("class=\"swatch\"").count(), swatches);
    assert_eq!(html.matches("</svg>").count(), 5 + 3 * 10 + 10 + swatches);
    // The difficulty chart's columns hold every level once.
    let start = html.find(charts).expect("chart");
    let first_chart = &html[start..start + html[start..].find("</svg>").expect("end")];
    let counted: f64 = first_chart
        .split("<title>")
        .skip(1)
        .filter_map(|t| t.split(": ").nth(1)?.split(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(counted, 200.0);
    // The campaigns' ramp, the last chart: at every position the median
    // lies between the 10th and 90th percentiles, and it rises from the
    // first position to the last.
    let ramp = &html[html.rfind(charts).expect("the ramp")..];
    let series = |name: &str| -> Vec<f64> {
        ramp.split(&format!("<title>{name} at "))
            .skip(1)
            .filter_map(|t| t.split(": ").nth(1)?.split('<').next()?.parse().ok())
            .collect()
    };
    let (low, median, high) = (
        series("10th percentile"),
        series("median"),
        series("90th percentile"),
    );
    assert!(median.len() >= 2, "{ramp}");
    assert_eq!((low.len(), high.len()), (median.len(), median.len()));
    for i in 0..median.len() {
        assert!(
            low[i] <= median[i] && median[i] <= high[i],
            "position {}",
            i + 1
        );
    }
    assert!(median[median.len() - 1] > median[0], "{median:?}");
    // Self-contained: nothing to fetch, nothing to run.
    for outside in ["<script", "src=", "href=", "@import"] {
        assert!(!html.contains(outside), "{outside}");
    }
}

/// A dungeon pack through the same pipeline: every level replays, none has a
/// dead end, and the release files show the grid.
#[test]
fn a_dungeon_pack_replays_and_proves_no_dead_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = "pack = \"e2e\"\ngame = \"dungeon\"\ncount = 200\nseeds_per_lease = 16\n\
               [params]\nwidth = 17\nheight = 17\nchains = true\n";
    let pack = PackContent::read(&run_pack(dir.path(), job, 2));
    assert_eq!(pack.levels.len(), 200);
    for row in &pack.levels {
        GameKind::from_name("dungeon")
            .expect("a game")
            .replay_json(&row.level_json, &row.solution)
            .unwrap_or_else(|e| panic!("seed {}: {e}\n{}", row.seed, row.layout));
        use pregen_games::Game;
        use pregen_games::dungeon::Dungeon;
        let level: <Dungeon as Game>::Level =
            serde_json::from_str(&row.level_json).expect("level JSON");
        assert_eq!(
            Dungeon::from_text(&row.layout).ok(),
            Some(level),
            "seed {}: the text form parses back",
            row.seed
        );
    }
    let tier = std::fs::read_to_string(dir.path().join("out/e2e/release/tier-01.txt"))
        .expect("release file");
    assert!(tier.contains("start ") && tier.contains('#'), "{tier}");
    // The command a release pipeline runs agrees.
    let verified = pregen_stdout(&["analysis", "verify"], &dir.path().join("out/e2e"));
    assert!(verified.starts_with("200 levels replayed"), "{verified}");
    // A level file solved on its own gives the pack's solution.
    let row = &pack.levels[0];
    let file = dir.path().join("level.txt");
    std::fs::write(&file, &row.layout).expect("write level");
    let table = pregen_stdout(&["solve", "--game", "dungeon"], &file);
    assert!(table.contains(&format!("\t{}\n", row.solution)), "{table}");
}

/// A sokoban pack of tiny levels, where duplicates are common: every level
/// replays, no two share a canonical form, each duplicate names a kept seed,
/// 3 workers and 1 give the same pack, and the printed XSB collection solves
/// with `pregen solve`.
#[test]
fn a_sokoban_pack_holds_each_level_once_and_prints_as_xsb() {
    use pregen_games::sokoban::level::{Level, parse_collection};
    let dir = tempfile::tempdir().expect("tempdir");
    let job = "pack = \"e2e\"\ngame = \"sokoban\"\ncount = 40\nseeds_per_lease = 8\n\
               [params]\nmethod = \"reverse\"\nwidth = 6\nheight = 6\nboxes = 1\n";
    let pack_dir = run_pack(dir.path(), job, 3);
    check_with_pyarrow(&pack_dir);
    let pack = PackContent::read(&pack_dir);
    assert_eq!(pack.levels.len(), 40);
    // One worker keeps the same levels and names the same duplicates.
    let alone = tempfile::tempdir().expect("tempdir");
    pack.assert_same(&PackContent::read(&run_pack(alone.path(), job, 1)));
    let mut forms = HashSet::new();
    for row in &pack.levels {
        GameKind::from_name("sokoban")
            .expect("a game")
            .replay_json(&row.level_json, &row.solution)
            .unwrap_or_else(|e| panic!("seed {}: {e}\n{}", row.seed, row.layout));
        let level = Level::from_xsb(&row.layout).expect("the layout is XSB");
        assert!(
            forms.insert(level.canonical()),
            "seed {} repeats a level",
            row.seed
        );
    }
    let kept: HashSet<u64> = pack.levels.iter().map(|r| r.seed).collect();
    let duplicates: Vec<u64> = pack
        .reject_seeds
        .iter()
        .filter_map(|(_, _, reason)| reason.strip_prefix("duplicate: the level of seed "))
        .map(|seed| seed.parse().expect("a seed"))
        .collect();
    assert!(
        !duplicates.is_empty(),
        "tiny levels repeat: {:?}",
        pack.reject_seeds
    );
    assert!(duplicates.iter().all(|s| kept.contains(s)));
    let xsb = pregen_stdout(&["analysis", "levels"], &pack_dir);
    assert_eq!(parse_collection(&xsb).expect("an XSB collection").len(), 40);
    let file = dir.path().join("pack.xsb");
    std::fs::write(&file, &xsb).expect("write");
    let table = pregen_stdout(&["solve", "--game", "sokoban"], &file);
    assert_eq!(table.lines().count(), 41, "{table}");
    assert!(
        table
            .lines()
            .skip(1)
            .all(|l| l.split('\t').nth(2) == Some("optimal")),
        "{table}"
    );
}

/// A doors pack under the source's uniqueness key: no two levels share it, each
/// duplicate names a kept seed, no defects, every grid holds its level, 3
/// workers and 1 give the same pack, and the printed levels solve with
/// `pregen solve`.
#[test]
fn a_doors_pack_holds_each_solution_key_once_with_its_grid() {
    use pregen_games::Game;
    use pregen_games::doors::{Doors, DoorsParams, Puzzle};
    let dir = tempfile::tempdir().expect("tempdir");
    let job = "pack = \"e2e\"\ngame = \"doors\"\ncount = 12\nseeds_per_lease = 4\n\
               [params]\nrooms = 3\ncolours = 2\n";
    let pack_dir = run_pack(dir.path(), job, 3);
    check_with_pyarrow(&pack_dir);
    let pack = PackContent::read(&pack_dir);
    assert_eq!(pack.levels.len(), 12);
    let alone = tempfile::tempdir().expect("tempdir");
    pack.assert_same(&PackContent::read(&run_pack(alone.path(), job, 1)));
    let params = DoorsParams {
        rooms: 3,
        colours: 2,
        ..DoorsParams::default()
    };
    let mut keys = HashSet::new();
    for row in &pack.levels {
        GameKind::from_name("doors")
            .expect("a game")
            .replay_json(&row.level_json, &row.solution)
            .unwrap_or_else(|e| panic!("seed {}: {e}\n{}", row.seed, row.layout));
        let puzzle: Puzzle = serde_json::from_str(&row.level_json).expect("json");
        assert!(
            !puzzle.level.grid.is_empty(),
            "seed {} has no grid",
            row.seed
        );
        assert_eq!(
            Doors::from_text(&row.layout).expect("text").level,
            puzzle.level
        );
        let key = Doors::canonical(&params, &puzzle).expect("keyed");
        assert!(keys.insert(key), "seed {} repeats a key", row.seed);
    }
    let kept: HashSet<u64> = pack.levels.iter().map(|r| r.seed).collect();
    for (_, _, reason) in &pack.reject_seeds {
        let seed = reason
            .strip_prefix("duplicate: the level of seed ")
            .unwrap_or_else(|| panic!("only duplicates are rejected, not `{reason}`"));
        assert!(kept.contains(&seed.parse().expect("a seed")));
    }
    let text = pregen_stdout(&["analysis", "levels"], &pack_dir);
    let file = dir.path().join("pack.txt");
    std::fs::write(&file, &text).expect("write");
    let table = pregen_stdout(&["solve", "--game", "doors"], &file);
    assert_eq!(table.lines().count(), 13, "{table}");
}

/// `analysis verify` passes a pack as written and names what was tampered
/// with: a release file, a Parquet file, the manifest's job.
#[test]
fn verify_names_every_tampered_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &crate::common::job_text(120), 1);
    let verify = || {
        pregen()
            .args(["analysis", "verify"])
            .arg(&pack)
            .output()
            .expect("run verify")
    };
    let clean = verify();
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );

    let release = pack.join("release/tier-01.txt");
    let text = std::fs::read_to_string(&release).expect("read");
    std::fs::write(&release, text.replacen('#', ".", 1)).expect("edit");
    let manifest_path = pack.join("manifest.json");
    let manifest = std::fs::read_to_string(&manifest_path).expect("read");
    std::fs::write(
        &manifest_path,
        manifest.replacen("\"min_moves\": 3", "\"min_moves\": 4", 1),
    )
    .expect("edit");
    let tampered = verify();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&tampered.stdout),
        String::from_utf8_lossy(&tampered.stderr)
    );
    assert!(!tampered.status.success(), "{out}");
    assert!(out.contains("release/tier-01.txt"), "{out}");
    assert!(out.contains("manifest.json"), "{out}");
    assert!(out.contains("does not fit the params"), "{out}");
}

/// A levels file's difficulty edited (one level made harder, keeping the
/// tier's order) and the manifest's checksum of it made anew: `analysis
/// verify` re-rates the level with the job's model and refuses it, naming
/// the level and both figures.
#[test]
fn verify_refuses_a_forged_difficulty_with_its_checksum_rewritten() {
    use arrow_array::{Array, Float64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use std::sync::Arc;
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &crate::common::job_text(60), 1);
    let mut files = Vec::new();
    parquet_files(&pack.join("levels"), &mut files);
    files.sort();
    let last = files.last().expect("a levels file").clone();
    let reader =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&last).expect("open"))
            .expect("parquet");
    let schema = reader.schema().clone();
    let batches: Vec<RecordBatch> = reader
        .build()
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("batches");
    let at = schema.index_of("difficulty").expect("difficulty column");
    let out = std::fs::File::create(&last).expect("create");
    let mut writer = ArrowWriter::try_new(out, schema.clone(), None).expect("writer");
    for (b, batch) in batches.iter().enumerate() {
        let mut columns = batch.columns().to_vec();
        let old = columns[at]
            .as_any()
            .downcast_ref::<Float64Array>()
            .expect("f64");
        let mut values: Vec<f64> = old.values().to_vec();
        if b + 1 == batches.len() {
            // The hardest level of the last tier, harder still: no order broken.
            *values.last_mut().expect("a level") += 0.5;
        }
        columns[at] = Arc::new(Float64Array::from(values));
        writer
            .write(&RecordBatch::try_new(schema.clone(), columns).expect("batch"))
            .expect("write");
    }
    writer.close().expect("close");
    let name = last
        .strip_prefix(&pack)
        .expect("inside the pack")
        .to_string_lossy()
        .into_owned();
    let manifest_path = pack.join("manifest.json");
    let manifest = std::fs::read_to_string(&manifest_path).expect("read");
    let listed: serde_json::Value = serde_json::from_str(&manifest).expect("json");
    let old_sum = listed["files"][&name].as_str().expect("the file's sum");
    let sum = pregen_pack::durable::sha256_file(&last).expect("sum");
    std::fs::write(&manifest_path, manifest.replacen(old_sum, &sum, 1)).expect("write");
    let verify = pregen()
        .args(["analysis", "verify"])
        .arg(&pack)
        .output()
        .expect("run verify");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    assert!(!verify.status.success(), "{said}");
    assert!(said.contains("is not the rating of its metrics"), "{said}");
    assert!(!said.contains("out of difficulty order"), "{said}");
    assert!(!said.contains("SHA-256"), "{said}");
}

/// Rewrites a Parquet file as another tool might: `compression`, row groups
/// of `rows_per_group` rows, the same schema and rows.
fn rewrite_parquet(
    path: &std::path::Path,
    compression: parquet::basic::Compression,
    rows_per_group: usize,
) {
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::properties::WriterProperties;
    let file = std::fs::File::open(path).expect("open");
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).expect("parquet");
    let schema = reader.schema().clone();
    let batches: Vec<_> = reader
        .build()
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("batches");
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    let out = std::fs::File::create(path).expect("create");
    let mut writer = ArrowWriter::try_new(out, schema, Some(props)).expect("writer");
    for batch in &batches {
        writer.write(batch).expect("write");
    }
    writer.close().expect("close");
}

/// pregen reads its tables back whatever the compression and the
/// row groups (pyarrow and DuckDB write snappy by default; others gzip, lz4,
/// brotli or none): the summary and the printed levels are unchanged.
#[test]
fn pregen_reads_parquet_of_any_compression_and_row_groups() {
    use parquet::basic::{BrotliLevel, Compression, GzipLevel};
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &crate::common::job_text(60), 1);
    let summary = pregen_analysis::summarize(&pack).expect("summary");
    let levels = pregen_stdout(&["analysis", "levels"], &pack);
    for (i, compression) in [
        Compression::SNAPPY,
        Compression::GZIP(GzipLevel::default()),
        Compression::LZ4_RAW,
        Compression::LZ4,
        Compression::BROTLI(BrotliLevel::default()),
        Compression::UNCOMPRESSED,
    ]
    .into_iter()
    .enumerate()
    {
        let copy = dir.path().join(format!("copy{i}"));
        copy_tree(&pack, &copy);
        let mut files = Vec::new();
        parquet_files(&copy, &mut files);
        assert!(files.len() >= 3, "{files:?}");
        for file in &files {
            rewrite_parquet(file, compression, 7);
        }
        let got =
            pregen_analysis::summarize(&copy).unwrap_or_else(|e| panic!("{compression:?}: {e:#}"));
        assert_eq!(got, summary, "{compression:?}");
        assert_eq!(
            pregen_stdout(&["analysis", "levels"], &copy),
            levels,
            "{compression:?}"
        );
    }
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("list") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

fn parquet_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("list") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            parquet_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
}

/// `pregen analysis diff`: a pack against itself is empty; against a pack of
/// a stricter job it names the seeds that vanished and appeared, and its
/// counts add up on both sides.
#[test]
fn analysis_diff_names_what_changed_between_two_packs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = crate::common::job_text(200);
    let a = run_pack(&dir.path().join("a"), &job, 1);
    let b = run_pack(
        &dir.path().join("b"),
        &job.replace("min_moves = 3", "min_moves = 4"),
        1,
    );
    let itself = pregen_analysis::diff(&a, &a).expect("diff");
    assert!(itself.is_empty(), "{itself}");
    assert_eq!(itself.same, 200);

    let d = pregen_analysis::diff(&a, &b).expect("diff");
    let [pa, pb] = &d.packs;
    assert_ne!(pa.job_id, pb.job_id);
    assert_eq!(d.same + d.changed.count + d.vanished.count, pa.levels);
    assert_eq!(d.same + d.changed.count + d.appeared.count, pb.levels);
    // Levels of 3 moves are too easy for b: exactly those vanished.
    let mut three: Vec<u64> = PackContent::read(&a)
        .levels
        .iter()
        .filter(|r| r.moves == 3)
        .map(|r| r.seed)
        .collect();
    three.sort_unstable();
    assert!(!three.is_empty(), "a holds 3-move levels");
    assert_eq!(d.vanished.count, three.len() as u64, "{d}");
    assert_eq!(d.vanished.seeds, three, "every vanished seed is listed");
    assert_eq!(d.job_changes, ["params.min_moves: 3 -> 4"], "{d}");
    assert!(d.appeared.count > 0 && d.changed.count == 0, "{d}");
    assert!(d.tiers.values().map(|t| t.after.count).sum::<usize>() == 200);

    let text = pregen_stdout(&["analysis", "diff", a.to_str().expect("utf-8")], &b);
    assert!(
        text.contains("vanished") && text.contains("appeared"),
        "{text}"
    );
    assert!(text.contains("params.min_moves: 3 -> 4"), "{text}");
    assert!(!text.contains("different games"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&pregen_stdout(
        &["analysis", "diff", "--json", a.to_str().expect("utf-8")],
        &b,
    ))
    .expect("JSON");
    assert_eq!(json["vanished"]["count"], d.vanished.count);
    assert_eq!(
        json["vanished"]["seeds"].as_array().map(Vec::len),
        Some(three.len()),
        "--json lists every seed"
    );
    assert_eq!(
        json["tiers"]["01"]["before"]["count"],
        d.tiers[&1].before.count
    );
}

/// A job's `[rating] model = "FILE"` rates its levels: every difficulty is
/// the model's, the manifest and every Parquet footer name the model, and
/// the job's identity covers the model's text.
#[test]
fn a_jobs_rating_model_rates_its_levels() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("moves.toml"),
        "name = \"tilt-moves\"\nversion = 3\ngame = \"tilt\"\n\
         [[terms]]\nfeature = \"moves\"\nweight = 2.0\n",
    )
    .expect("write the model");
    let job = crate::common::job_text(60) + "[rating]\nmodel = \"moves.toml\"\n";
    let pack = crate::common::run_pack(dir.path(), &job, 1);
    let content = crate::common::PackContent::read(&pack);
    assert_eq!(content.levels.len(), 60);
    for level in &content.levels {
        assert_eq!(
            level.difficulty,
            2.0 * f64::from(level.moves),
            "seed {}",
            level.seed
        );
    }
    let manifest = pregen_pack::Manifest::read(&pack.join("manifest.json")).expect("manifest");
    assert_eq!(
        (manifest.rating.name.as_str(), manifest.rating.version),
        ("tilt-moves", 3)
    );
    assert_eq!(manifest.rating.sha256.len(), 64);
    let plain = pregen_pack::Job::parse(&crate::common::job_text(60)).expect("job");
    assert_ne!(manifest.job_id, plain.id(), "the model is part of the job");
    // A model that does not fit the game is refused by name, before any run.
    std::fs::write(
        dir.path().join("moves.toml"),
        "name = \"x\"\nversion = 1\ngame = \"tilt\"\n[[terms]]\nfeature = \"pushes\"\nweight = 1.0\n",
    )
    .expect("write the model");
    let path = crate::common::write_job(dir.path(), &job);
    let out = crate::common::pregen()
        .args(["run", "--no-progress", "--out"])
        .arg(dir.path().join("out2"))
        .arg(&path)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("rating.model") && stderr.contains("`pushes` is not a feature of tilt"),
        "{stderr}"
    );
}

/// `pregen retier` rates a finished pack again with another model from its
/// commit log, running no seed, and writes the same bytes a run of the job
/// with that model from the start writes.
#[test]
fn a_retiered_pack_is_the_pack_its_model_makes_from_the_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = "name = \"tilt-moves\"\nversion = 3\ngame = \"tilt\"\n\
                 [[terms]]\nfeature = \"moves\"\nweight = 2.0\n\
                 [[terms]]\nfeature = \"states\"\ntransform = \"log2\"\nweight = -0.25\n";
    let original = crate::common::run_pack(&dir.path().join("a"), &crate::common::job_text(300), 2);
    let model_file = dir.path().join("moves.toml");
    std::fs::write(&model_file, model).expect("write the model");
    let retiered = dir.path().join("retiered");
    // Named as the fresh run's pack below, for the two to be the same bytes.
    let retier = |pack: &std::path::Path, output: &std::path::Path| {
        crate::common::pregen()
            .args(["retier", "--name", "e2e", "--model"])
            .arg(&model_file)
            .arg("-o")
            .arg(output)
            .arg(pack)
            .output()
            .expect("run retier")
    };
    let out = retier(&original, &retiered);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    std::fs::create_dir_all(dir.path().join("b")).expect("mkdir");
    std::fs::write(dir.path().join("b/moves.toml"), model).expect("write the model");
    let job = crate::common::job_text(300) + "[rating]\nmodel = \"moves.toml\"\n";
    let fresh = crate::common::run_pack(&dir.path().join("b"), &job, 1);

    let (r, f) = (
        crate::common::PackContent::read(&retiered),
        crate::common::PackContent::read(&fresh),
    );
    r.assert_same(&f);
    let manifest = |p: &std::path::Path| {
        pregen_pack::Manifest::read(&p.join("manifest.json")).expect("manifest")
    };
    let (mr, mf) = (manifest(&retiered), manifest(&fresh));
    let mr_job_id = mr.job_id.clone();
    assert_eq!(
        (mr.job_id, mr.rating, mr.counts),
        (mf.job_id, mf.rating, mf.counts)
    );
    assert_ne!(
        crate::common::PackContent::read(&original).release_sums,
        r.release_sums,
        "the new model reorders the release"
    );
    // By default the new pack is named after the old one and the model,
    // and lies beside it.
    crate::common::succeeds(
        pregen()
            .args(["retier", "--model"])
            .arg(&model_file)
            .arg(&original),
    );
    let beside = original.with_file_name("e2e-tilt-moves");
    assert_eq!(manifest(&beside).pack, "e2e-tilt-moves");
    assert_ne!(manifest(&beside).job_id, mr_job_id);
    // A folder that holds something is not overwritten.
    let again = retier(&original, &retiered);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));
    // A retiered pack keeps no commit log: it is refused, and left as it is.
    let twice = retier(&retiered, &dir.path().join("twice"));
    assert!(!twice.status.success());
    assert!(String::from_utf8_lossy(&twice.stderr).contains("has no commit log"));
    assert!(!retiered.join("commit").exists());
}

/// Strata as analysts read them: the summary (text and JSON), the
/// report and the manifest agree per stratum on levels, seeds in the pack and
/// seeds computed, and a long stratum name keeps the text table's columns
/// aligned; a diff against a pack of another game says so.
#[test]
fn strata_show_in_the_summary_the_report_and_the_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = "pack = \"e2e\"\ngame = \"tilt\"\nseeds_per_lease = 32\n\
               [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n\
               [[strata]]\nname = \"small\"\ncount = 40\n\
               [[strata]]\nname = \"wide, with three pairs of fruit\"\ncount = 30\n\
               params = { width = 6, pairs = 3 }\n\
               [budget]\nmax_nodes = 50000\nwatchdog_ms = 60000\n";
    let pack = run_pack(dir.path(), job, 1);
    check_with_pyarrow(&pack);
    let summary = pregen_analysis::summarize(&pack).expect("summary");
    let names: Vec<&str> = summary.strata.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["small", "wide, with three pairs of fruit"]);
    let manifest = PackDir::new(&pack).read_manifest().expect("manifest");
    for (st, entry) in summary.strata.iter().zip(&manifest.strata) {
        assert_eq!(
            st.statuses.get("accepted"),
            Some(&entry.count),
            "{}",
            st.name
        );
        assert_eq!(st.seeds_in_pack, entry.seeds, "{}", st.name);
        assert_eq!(st.seeds_computed, entry.computed, "{}", st.name);
        assert!(st.seeds_computed >= st.seeds_in_pack, "{st:?}");
    }
    assert_eq!(summary.seeds_in_pack, manifest.seeds.tried);
    assert_eq!(
        summary.strata.iter().map(|s| s.seeds_in_pack).sum::<u64>(),
        summary.seeds_in_pack
    );
    assert_eq!(summary.seeds_computed, manifest.seeds.computed);
    let text = pregen_stdout(&["analysis", "summary"], &pack);
    assert!(
        text.contains(&format!("seeds in the pack: {}", summary.seeds_in_pack)),
        "{text}"
    );
    let header = text
        .lines()
        .find(|l| l.starts_with("stratum "))
        .expect("the strata table");
    let row = text
        .lines()
        .find(|l| l.starts_with("wide, with three pairs of fruit "))
        .expect("the long name's row");
    let wanted = header.find("wanted").expect("wanted") + "wanted".len();
    assert_eq!(&row[wanted - 3..wanted], " 30", "{header}\n{row}");
    let json: serde_json::Value =
        serde_json::from_str(&pregen_stdout(&["analysis", "summary", "--json"], &pack))
            .expect("JSON");
    assert_eq!(json["strata"][1]["name"], "wide, with three pairs of fruit");
    assert_eq!(json["strata"][1]["statuses"]["accepted"], 30);
    let html = pregen_analysis::report(&pack).expect("report");
    assert!(html.contains("<h2>Strata</h2>"), "no strata section");
    assert!(
        html.contains(
            "<tr><td>wide, with three pairs of fruit</td><td>-</td><td>30</td><td>30</td>"
        ),
        "wide's row"
    );

    let other = run_pack(
        &dir.path().join("other"),
        "pack = \"e2e\"\ngame = \"synthetic\"\ncount = 20\n",
        1,
    );
    let text = pregen_stdout(&["analysis", "diff", pack.to_str().expect("utf-8")], &other);
    assert!(
        text.contains("different games (tilt and synthetic)"),
        "{text}"
    );
    assert!(text.contains("game: tilt -> synthetic"), "{text}");
}

/// `analysis/python/query.py` prints the result of every statement of a
/// query, not the last alone.
#[test]
fn query_py_prints_every_statements_result() {
    if !needs(&[Need::Python(&["duckdb"])]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &crate::common::job_text(30), 1);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../analysis/python/query.py");
    let stdout = crate::common::succeeds(Command::new("python3").arg(script).arg(&pack).arg(
        "SELECT count(*) AS first_count FROM levels; SELECT max(tier) AS second_tier FROM levels;",
    ));
    assert!(
        stdout.contains("first_count") && stdout.contains("second_tier"),
        "{stdout}"
    );
}

/// The data dictionary documents every field of a written manifest, and no
/// field a manifest does not have (a game program's `program` aside).
#[test]
fn the_data_dictionary_documents_the_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &crate::common::job_text(30), 1);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(PackDir::new(&pack).manifest()).expect("read"))
            .expect("json");
    let documented: HashSet<&str> = pregen_pack::schema::MANIFEST_FIELDS
        .iter()
        .map(|(field, _)| *field)
        .collect();
    let mut found = HashSet::new();
    for (key, value) in manifest.as_object().expect("an object") {
        match value.as_object() {
            Some(fields) if !["job", "files", "program"].contains(&key.as_str()) => {
                found.extend(fields.keys().map(|f| format!("{key}.{f}")));
            }
            _ => {
                found.insert(key.clone());
            }
        }
    }
    for field in &found {
        assert!(
            documented.contains(field.as_str()),
            "`{field}` is not in the dictionary"
        );
    }
    // A program's description, and what an archive left out, are not in a
    // built-in game's pack.
    for field in documented
        .iter()
        .filter(|f| !["program", "left_out"].contains(*f))
    {
        assert!(
            found.contains(*field),
            "the dictionary has `{field}`, the manifest not"
        );
    }
}
