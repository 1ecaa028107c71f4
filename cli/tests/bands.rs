//! Difficulty bands: a stratum's levels are the first of its seeds whose
//! difficulty lies in its band, with any number of workers and after a
//! crash; a band out of reach ends the run with an error naming it.

use std::time::Duration;

use pregen_pack::PackDir;
use pregen_pack::job::{Band, STRATUM_SEEDS};

use crate::common::{PackContent, killed_and_rerun, pregen, run_pack, write_job};

/// Three strata of 5x5 tilt, one band each, easiest first.
fn banded_job(count: u64) -> String {
    format!(
        "pack = \"e2e\"\ngame = \"tilt\"\nseeds_per_lease = 32\n\
         [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n\
         [budget]\nmax_nodes = 50000\nwatchdog_ms = 60000\n\
         [tiers]\nscheme = \"thresholds\"\nthresholds = [{LOW}, {HIGH}]\n\
         [[strata]]\nname = \"easy\"\ncount = {count}\ndifficulty = {{ max = {LOW} }}\n\
         [[strata]]\nname = \"middle\"\ncount = {count}\ndifficulty = {{ min = {LOW}, max = {HIGH} }}\n\
         [[strata]]\nname = \"hard\"\ncount = {count}\ndifficulty = {{ min = {HIGH} }}\n"
    )
}

/// The band edges, on tilt's scale.
const LOW: f64 = 7.5;
const HIGH: f64 = 10.0;

fn bands() -> [Band; 3] {
    [
        Band {
            min: None,
            max: Some(LOW),
        },
        Band {
            min: Some(LOW),
            max: Some(HIGH),
        },
        Band {
            min: Some(HIGH),
            max: None,
        },
    ]
}

/// Every level lies in its stratum's band and its tier is its band; the
/// seeds refused for their difficulty are in the rejects.
fn assert_banded(content: &PackContent, count: u64) {
    let bands = bands();
    assert_eq!(content.levels.len() as u64, 3 * count);
    for level in &content.levels {
        let stratum = (level.seed / STRATUM_SEEDS) as usize;
        assert!(
            bands[stratum].contains(level.difficulty),
            "seed {} of stratum {stratum} rates {}",
            level.seed,
            level.difficulty
        );
        assert_eq!(level.tier as usize, stratum + 1, "seed {}", level.seed);
    }
    assert!(
        content
            .reject_seeds
            .iter()
            .any(|(_, status, reason)| status == "rejected" && reason.starts_with("out of band")),
        "no level was refused for its difficulty"
    );
}

#[test]
fn banded_strata_are_the_same_pack_with_one_or_three_workers_and_after_a_crash() {
    const COUNT: u64 = 1000;
    let one = tempfile::tempdir().expect("tempdir");
    let reference = PackContent::read(&run_pack(one.path(), &banded_job(COUNT), 1));
    assert_banded(&reference, COUNT);
    let three = tempfile::tempdir().expect("tempdir");
    PackContent::read(&run_pack(three.path(), &banded_job(COUNT), 3)).assert_same(&reference);

    // The coordinator killed once its log holds two segments, then run again.
    let dir = tempfile::tempdir().expect("tempdir");
    let (pack, _) = killed_and_rerun(dir.path(), &banded_job(COUNT), Duration::from_secs(240));
    PackContent::read(&pack).assert_same(&reference);

    // The summary shows each stratum's band, fill rate and cost.
    let out = pregen()
        .args(["analysis", "summary"])
        .arg(&pack)
        .output()
        .expect("summary");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{summary}");
    for band in bands() {
        assert!(summary.contains(&band.to_string()), "{band}: {summary}");
    }
    assert!(
        summary.contains("s/level") && summary.contains("out of band"),
        "{summary}"
    );
    // The diff of two runs shows each stratum's band, fill rate and cost.
    let out = pregen()
        .args(["analysis", "diff"])
        .arg(one.path().join("out/e2e"))
        .arg(&pack)
        .output()
        .expect("diff");
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{diff}");
    assert!(
        diff.contains("fill a -> b") && diff.contains("[7.5, 10)"),
        "{diff}"
    );
}

#[test]
fn a_band_out_of_reach_ends_the_run_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = "pack = \"e2e\"\ngame = \"tilt\"\ncount = 5\n\
                difficulty = { min = 1000 }\n\
                [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n";
    let job = write_job(dir.path(), text);
    let out = pregen()
        .args(["run", "--no-progress", "--max-seeds", "300", "--out"])
        .arg(dir.path().join("out"))
        .arg(&job)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the difficulty band >= 1000 cannot be filled: 0 of 5 levels in the band after 300 seeds; the difficulty nearest the band was"),
        "{stderr}"
    );
    assert!(!PackDir::new(dir.path().join("out/e2e")).is_complete());
}
