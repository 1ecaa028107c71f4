use super::*;

fn check_err(toml_text: &str, needle: &str) {
    let err = Job::parse(toml_text).expect_err("invalid job").to_string();
    assert!(
        err.contains(needle),
        "error `{err}` should mention `{needle}`"
    );
}

#[test]
fn minimal_job_takes_defaults() {
    let job = Job::parse("pack = \"demo\"\ngame = \"tilt\"\ncount = 100\n").expect("valid");
    assert_eq!(job.seeds_per_lease, 512);
    assert_eq!(job.tiers, TierScheme::Equal { count: 10 });
    assert_eq!(job.campaign_count(), 10);
}

#[test]
fn a_count_scales_the_strata_in_proportion() {
    assert_eq!(scaled(&[20, 20, 20], 60), [20, 20, 20]);
    assert_eq!(scaled(&[20, 20, 20], 10), [4, 3, 3]);
    assert_eq!(scaled(&[1, 1, 98], 3), [1, 1, 1]);
    assert_eq!(scaled(&[1, 99], 50), [1, 49]);
    assert_eq!(scaled(&[3, 1], 2), [1, 1]);
    assert_eq!(
        scaled(&[5, 5, 5, 5], 1_000_002),
        [250_001, 250_001, 250_000, 250_000]
    );
    for total in 4..200 {
        let got = scaled(&[7, 1, 30, 2], total);
        assert_eq!(got.iter().sum::<u64>(), total, "{got:?}");
        assert!(got.iter().all(|&n| n >= 1), "{got:?}");
    }
    let text = "pack = \"p\"\ngame = \"tilt\"\n[[strata]]\ncount = 5\n[[strata]]\ncount = 15\n";
    let mut job = Job::parse(text).expect("valid");
    job.scale_count(8).expect("scales");
    assert_eq!(
        (job.count, job.strata[0].count, job.strata[1].count),
        (8, 2, 6)
    );
    job.validate().expect("still valid");
    let err = job.scale_count(1).expect_err("one level for two strata");
    assert!(err.to_string().contains("fewer than the 2 strata"), "{err}");
}

#[test]
fn strata_merge_params_sum_counts_and_keep_seeds_apart() {
    let job = Job::parse(
        "pack = \"d\"\ngame = \"tilt\"\nfirst_seed = 7\n[params]\npairs = 2\nwidth = 5\n\
         [[strata]]\ncount = 30\nparams = { pairs = 3 }\n\
         [[strata]]\nname = \"wide\"\ncount = 20\nparams = { width = 6 }\n",
    )
    .expect("valid");
    assert_eq!(job.count, 50);
    let plan = job.plan();
    assert_eq!(plan.len(), 2);
    assert_eq!(
        (plan[0].name.as_str(), plan[0].first_seed, plan[0].count),
        ("0", 7, 30)
    );
    assert_eq!(plan[0].params["pairs"], 3);
    assert_eq!(plan[0].params["width"], 5);
    assert_eq!(
        (plan[1].name.as_str(), plan[1].first_seed),
        ("wide", 7 + STRATUM_SEEDS)
    );
    assert_eq!(plan[1].params["pairs"], 2);
    assert_eq!(plan[1].params["width"], 6);
    assert_eq!(job.stratum_of(7 + STRATUM_SEEDS + 5), 1);
    // Without strata: one stratum, the job's own params and count.
    let plain = Job::parse("pack = \"d\"\ngame = \"tilt\"\ncount = 9\n").expect("valid");
    assert_eq!(plain.plan().len(), 1);
    assert_eq!(plain.plan()[0].count, 9);
}

#[test]
fn bad_strata_are_named() {
    let base = "pack = \"d\"\ngame = \"tilt\"\n";
    check_err(
        &format!("{base}[[strata]]\ncount = 5\n[[strata]]\ncount = 5\nparams = {{ pairs = 40 }}\n"),
        "strata[1].params",
    );
    check_err(&format!("{base}[[strata]]\ncount = 0\n"), "strata[0].count");
    check_err(
        &format!("{base}count = 3\n[[strata]]\ncount = 5\n"),
        "sum of the strata",
    );
}

#[test]
fn bad_fields_are_named() {
    check_err("pack = \"d\"\ngame = \"chess\"\ncount = 1\n", "tilt");
    check_err("pack = \"d\"\ngame = \"tilt\"\ncount = 0\n", "count");
    check_err("pack = \"../x\"\ngame = \"tilt\"\ncount = 1\n", "pack");
    check_err(
        "pack = \"d\"\ngame = \"tilt\"\ncount = 1\n[params]\npairs = 40\n",
        "pairs",
    );
    check_err(
        "pack = \"d\"\ngame = \"tilt\"\ncount = 10\ncolour = 3\n",
        "colour",
    );
    check_err(
        "pack = \"d\"\ngame = \"tilt\"\ncount = 10\n[tiers]\nscheme = \"thresholds\"\nthresholds = [3, 1]\n",
        "ascending",
    );
    check_err(
        "pack = \"d\"\ngame = \"tilt\"\ncount = 10\n[tiers]\nscheme = \"quantile\"\n",
        "equal",
    );
    check_err("pack = \"d\"\ngame = \"tilt\"\n", "count");
}

#[test]
fn job_id_depends_on_content() {
    let a = Job::parse("pack = \"d\"\ngame = \"tilt\"\ncount = 10\n").expect("valid");
    let b = Job::parse("pack = \"d\"\ngame = \"tilt\"\ncount = 11\n").expect("valid");
    assert_ne!(a.id(), b.id());
    assert_eq!(a.id(), a.clone().id());
}

/// A game program's table is checked as written, and parsing never
/// starts the program: only `resolve_program` does, and it holds the
/// program's files to an identity the job gives.
#[test]
fn an_external_table_is_checked() {
    let base = "pack = \"d\"\ncount = 10\n";
    for (text, field) in [
        ("game = \"external\"\n", "field `external`"),
        (
            "game = \"external\"\n[external]\ncommand = []\n",
            "field `external.command`",
        ),
        (
            "game = \"external\"\n[external]\ncommand = [\"\"]\n",
            "field `external.command`",
        ),
        (
            "game = \"tilt\"\n[external]\ncommand = [\"sh\"]\n",
            "field `external`",
        ),
        (
            "game = \"external\"\n[external]\ncommand = [\"sh\"]\nshell = true\n",
            "unknown field `shell`",
        ),
    ] {
        let err = Job::parse(&format!("{base}{text}"))
            .expect_err(text)
            .to_string();
        assert!(err.contains(field), "{text}: {err}");
    }
    // Parsed, not started: `sh prog.sh` is never run here.
    let dir = std::env::temp_dir().join(format!("pregen-job-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("prog.sh"), "exit 3\n").expect("script");
    let text = format!(
        "{base}game = \"external\"\n[external]\ncommand = [\"sh\", \"prog.sh\"]\n\
         identity = \"sha256:00\"\n"
    );
    let mut job = Job::parse(&text).expect("parses");
    assert_eq!(job.game_name(), "", "not described before it is resolved");
    let err = job
        .resolve_program(Some(&dir))
        .expect_err("another identity")
        .to_string();
    assert!(
        err.contains("field `external.identity`: the program's files hash to sha256:"),
        "{err}"
    );
    // The folder is where the program lies, not what it is.
    let mut moved = job.clone();
    if let Some(e) = &mut moved.external {
        e.dir = "/elsewhere".into();
    }
    assert_eq!(moved.id(), job.id());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A game program is never sent a seed at or above 2^63: a job whose seeds
/// could reach it is refused, naming the range.
#[test]
fn a_programs_job_stays_below_seed_2_pow_63() {
    let job = |first: u64, max: &str| {
        format!(
            "pack = \"d\"\ncount = 10\nfirst_seed = {first}\n{max}game = \"external\"\n\
             [external]\ncommand = [\"sh\", \"prog.sh\"]\n"
        )
    };
    let near = (1u64 << 63) - (1 << 39);
    check_err(
        &job(near, ""),
        &format!(
            "field `first_seed`: a game program's seeds must stay below 2^63 \
             (9223372036854775808); this job may run seeds {near} to {}",
            near + (1 << 40) - 1
        ),
    );
    Job::parse(&job(near, "max_seeds = 100000\n")).expect("within 2^63");
    let tilt = job(near, "").replace(
        "game = \"external\"\n[external]\ncommand = [\"sh\", \"prog.sh\"]\n",
        "game = \"tilt\"\n",
    );
    Job::parse(&tilt).expect("a built-in game takes any seed");
}

#[test]
fn difficulty_bands_are_read_checked_and_inherited() {
    let text = "pack = \"p\"\ngame = \"tilt\"\ndifficulty = { min = 1.5 }\n\
                [[strata]]\ncount = 5\n\
                [[strata]]\ncount = 5\ndifficulty = { min = 0.5, max = 1.5 }\n";
    let job = Job::parse(text).expect("valid");
    let bands: Vec<Option<Band>> = job.plan().iter().map(|p| p.band).collect();
    let floor = Band {
        min: Some(1.5),
        max: None,
    };
    let middle = Band {
        min: Some(0.5),
        max: Some(1.5),
    };
    assert_eq!(bands, [Some(floor), Some(middle)]);
    assert!(middle.contains(0.5) && middle.contains(1.49) && !middle.contains(1.5));
    assert_eq!((middle.distance(1.0), middle.distance(2.0)), (0.0, 0.5));
    assert_eq!(middle.to_string(), "[0.5, 1.5)");
    let plain = Job::parse("pack = \"p\"\ngame = \"tilt\"\ncount = 5\n").expect("valid");
    assert_ne!(
        plain.id(),
        Job::parse("pack = \"p\"\ngame = \"tilt\"\ncount = 5\ndifficulty = { max = 1 }\n")
            .expect("valid")
            .id(),
        "a band is part of what the job makes"
    );
    let base = "pack = \"p\"\ngame = \"tilt\"\ncount = 5\n";
    check_err(
        &format!("{base}difficulty = {{ min = 2, max = 1 }}\n"),
        "field `difficulty`: `min` (2) must be below `max` (1)",
    );
    check_err(
        &format!("{base}difficulty = {{}}\n"),
        "field `difficulty`: give `min`, `max` or both",
    );
    check_err(
        &format!("{base}difficulty = {{ min = nan }}\n"),
        "field `difficulty`: bounds must be finite numbers",
    );
    check_err(
        "pack = \"p\"\ngame = \"tilt\"\n[[strata]]\ncount = 5\ndifficulty = { max = inf }\n",
        "field `strata[0].difficulty`",
    );
}

/// Every job in `examples/` reads and passes the job checks (params included,
/// as `Job::load` checks them against the game).
#[test]
fn every_shipped_example_job_reads() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"));
    let mut read = 0;
    for entry in std::fs::read_dir(dir).expect("examples/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            Job::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            read += 1;
        }
    }
    assert!(read >= 10, "only {read} example jobs");
}

/// In each `examples/*-campaign.toml`, each chapter is a band of its own,
/// the bands are in order and apart, and each tier is its chapter: the
/// thresholds lie between the bands, so a level's tier is its band.
#[test]
fn each_campaign_examples_tiers_are_its_banded_chapters() {
    for game in ["tilt", "dungeon", "cube", "sokoban", "doors"] {
        let path = format!(
            "{}/../examples/{game}-campaign.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let job = Job::load(std::path::Path::new(&path)).expect("the example");
        let bands: Vec<Band> = job
            .strata
            .iter()
            .map(|s| s.difficulty.expect("every chapter has a band"))
            .collect();
        assert!(bands.len() >= 6, "{game}: {} chapters", bands.len());
        assert_eq!(bands[0].min, None, "{game}: the first chapter has no floor");
        assert_eq!(
            bands[bands.len() - 1].max,
            None,
            "{game}: nor the last a ceiling"
        );
        for pair in bands.windows(2) {
            let (below, above) = (
                pair[0].max.expect("a ceiling"),
                pair[1].min.expect("a floor"),
            );
            assert!(
                below <= above,
                "{game}: bands {} and {} overlap",
                pair[0],
                pair[1]
            );
        }
        let TierScheme::Thresholds { thresholds } = &job.tiers else {
            panic!("{game}: tiers by thresholds");
        };
        assert_eq!(
            thresholds.len() + 1,
            bands.len(),
            "{game}: a tier per chapter"
        );
        for (cut, pair) in thresholds.iter().zip(bands.windows(2)) {
            let (below, above) = (
                pair[0].max.expect("a ceiling"),
                pair[1].min.expect("a floor"),
            );
            assert!(
                below <= *cut && *cut <= above,
                "{game}: threshold {cut} is not between bands {} and {}",
                pair[0],
                pair[1]
            );
        }
        assert_eq!(
            job.campaigns.length as usize,
            bands.len(),
            "{game}: a campaign is a level of each chapter"
        );
    }
}
