//! What a studio's game program does by accident never changes a pack:
//! stray output on stdout (Python buffered and unbuffered, Node), a crash
//! on a seed, a program whose every level breaks a rule. Each run is
//! compared byte for byte with 1 and 2 workers, and with the same game
//! written cleanly.

use std::path::{Path, PathBuf};

use crate::common::needs::{Need, PYTHON, needs};
use crate::common::{PackContent, TOKEN, pregen, run_pack, serve, wait, write_job};

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/external")
}

/// A folder holding the examples and their SDKs, with `extra` files
/// beside them.
fn programs(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in [
        "rushhour.py",
        "pregen_game.py",
        "lightsout.js",
        "pregen_game.js",
    ] {
        std::fs::copy(example_dir().join(name), dir.path().join(name)).expect("copy");
    }
    for (name, text) in extra {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    dir
}

/// Rush Hour that prints as a developer debugging it would: a line before
/// `serve`, a line per seed, a long line now and then, and a partial line
/// with no newline.
const STRAY_PY: &str = r#"import sys
import pregen_game as pg
import rushhour
print("loading the game")

class Chatty(rushhour.RushHour):
    def generate(self, seed, params, max_nodes):
        print(f"debug: making seed {seed}")
        if seed % 7 == 0:
            print("x" * 20000)
        sys.stdout.write("no newline yet ")
        return super().generate(seed, params, max_nodes)

pg.serve(Chatty(None))
"#;

/// Lights Out that logs to stdout, before `serve` and for each seed.
const STRAY_JS: &str = r#"const pg = require('./pregen_game.js');
const game = require('./lightsout.js');
console.log('loading the game');
const generate = game.generate;
game.generate = function (seed, params, maxNodes) {
  console.log('debug: making seed', String(seed));
  if (seed % 7n === 0n) process.stdout.write('a partial line ');
  return generate.call(this, seed, params, maxNodes);
};
pg.serve(game);
"#;

fn job(command: &[&str], files: &[&str], dir: &Path, params: &str, count: u64) -> String {
    let quoted = |words: &[&str]| {
        words
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "pack = \"e2e\"\ngame = \"external\"\ncount = {count}\nseeds_per_lease = 64\n\
         cross_check = 0.05\n\
         [external]\ncommand = [{}]\ndir = {:?}\nfiles = [{}]\n\
         [params]\n{params}\
         [budget]\nmax_nodes = 200000\nwatchdog_ms = 60000\n",
        quoted(command),
        dir.display().to_string(),
        quoted(files),
    )
}

/// A pack's levels and rejects as (seed, status, reason) and level rows,
/// the parts a program's identity does not change.
fn verdicts(pack: &PackContent) -> (Vec<String>, Vec<(u64, String, String)>) {
    let levels = pack
        .levels
        .iter()
        .map(|l| format!("{} {} {} {}", l.tier, l.seed, l.level_hash, l.solution))
        .collect();
    (levels, pack.reject_seeds.clone())
}

/// Stray output in Python (buffered and unbuffered) and Node reaches no
/// pack: 1 and 2 workers give the same bytes, the levels and rejects are
/// those of the same game that prints nothing, and the stray lines are in
/// the log, marked with the seed that wrote them.
#[test]
fn stray_output_changes_no_pack() {
    let games: [(Need, &str, &str, &str, &str, &str, u64); 2] = [
        (
            PYTHON,
            "python3",
            "stray.py",
            "rushhour.py",
            "pregen_game.py",
            "vehicles = 8\nmin_moves = 5\n",
            40,
        ),
        (
            Need::Node,
            "node",
            "stray.js",
            "lightsout.js",
            "pregen_game.js",
            "size = 5\npresses = 10\nmin_moves = 4\n",
            200,
        ),
    ];
    let dir = programs(&[("stray.py", STRAY_PY), ("stray.js", STRAY_JS)]);
    for (need, interpreter, stray, clean, sdk, params, count) in games {
        if !needs(&[need]) {
            continue;
        }
        let root = tempfile::tempdir().expect("tempdir");
        let clean_job = job(
            &[interpreter, clean],
            &[clean, sdk],
            dir.path(),
            params,
            count,
        );
        let reference = PackContent::read(&run_pack(&root.path().join("clean"), &clean_job, 1));
        let stray_job = job(
            &[interpreter, stray],
            &[stray, clean, sdk],
            dir.path(),
            params,
            count,
        );
        let buffering: &[Option<&str>] = match interpreter {
            "python3" => &[None, Some("1")],
            _ => &[None],
        };
        for unbuffered in buffering {
            let mut packs = Vec::new();
            for workers in [1, 2] {
                let at = root
                    .path()
                    .join(format!("{stray}-{workers}-{}", unbuffered.is_some()));
                let (pack, stderr) = run_logged(&at, &stray_job, workers, *unbuffered);
                assert!(
                    stderr.contains("debug: making seed") && stderr.contains("seed="),
                    "{stray}: the stray lines are not in the log with their seed: {stderr}"
                );
                assert!(!stderr.contains("went wrong"), "{stray}: {stderr}");
                packs.push(PackContent::read(&pack));
            }
            packs[1].assert_same(&packs[0]);
            assert_eq!(
                verdicts(&packs[0]),
                verdicts(&reference),
                "{stray} (PYTHONUNBUFFERED {unbuffered:?}): not the clean game's pack"
            );
        }
    }
}

/// Runs `job` with `pregen run` (`workers` workers, Python's buffering as
/// `unbuffered` says) and returns the pack and the run's stderr.
fn run_logged(
    root: &Path,
    job: &str,
    workers: usize,
    unbuffered: Option<&str>,
) -> (PathBuf, String) {
    let (ran, stderr) = run_job(root, job, workers, unbuffered);
    assert!(ran, "pregen run failed: {stderr}");
    (root.join("out/e2e"), stderr)
}

/// Runs `job` with `pregen run` (`workers` workers, `PYTHONUNBUFFERED` as
/// `unbuffered` says) in `root`: whether it succeeded, and its stderr.
fn run_job(root: &Path, job: &str, workers: usize, unbuffered: Option<&str>) -> (bool, String) {
    let job_path = write_job(root, job);
    let mut command = pregen();
    command.env_remove("PYTHONUNBUFFERED");
    if let Some(value) = unbuffered {
        command.env("PYTHONUNBUFFERED", value);
    }
    let out = command
        .args([
            "run",
            "--no-progress",
            "--workers",
            &workers.to_string(),
            "--out",
        ])
        .arg(root.join("out"))
        .arg(&job_path)
        .output()
        .expect("run pregen");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A program that dies on a seed (the example with `--lie crash:10`)
/// stops the run naming a seed that kills it alone, with 1 worker and
/// with 2, and writes no pack: a crash never becomes a seed's verdict, so
/// no two runs can differ by which seeds were held when it died.
#[test]
fn a_seed_that_crashes_its_program_stops_the_run_naming_it() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = programs(&[]);
    let job = job(
        &["python3", "rushhour.py", "--lie", "crash:10"],
        &["rushhour.py", "pregen_game.py"],
        dir.path(),
        "vehicles = 8\nmin_moves = 5\n",
        40,
    );
    for workers in [1, 2] {
        let root = tempfile::tempdir().expect("tempdir");
        let stderr = run_failing(root.path(), &job, workers);
        let (_, after) = stderr
            .split_once("the game program breaks on seed ")
            .unwrap_or_else(|| panic!("no seed named: {stderr}"));
        let named: u64 = after
            .split_once(' ')
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("no seed number: {stderr}"));
        assert_eq!(named % 10, 0, "{stderr}");
        assert!(after.contains("ended before answering"), "{stderr}");
        assert!(!root.path().join("out/e2e/_SUCCESS").exists());
    }
}

/// A program whose every level breaks a rule (its layouts lack their final
/// newline), among normal rejections, stops after the circuit breaker's
/// errors with the rule's own message, rather than run for ever.
#[test]
fn a_program_whose_every_level_is_refused_stops_and_says_why() {
    if !needs(&[PYTHON]) {
        return;
    }
    let no_newline = r#"import pregen_game as pg
import rushhour

class Cut(rushhour.RushHour):
    def generate(self, seed, params, max_nodes):
        level = super().generate(seed, params, max_nodes)
        level.layout = level.layout.rstrip("\n")
        return level

pg.serve(Cut(None))
"#;
    let dir = programs(&[("cut.py", no_newline)]);
    let job = job(
        &["python3", "cut.py"],
        &["cut.py", "rushhour.py", "pregen_game.py"],
        dir.path(),
        "vehicles = 8\nmin_moves = 1\n",
        40,
    );
    let root = tempfile::tempdir().expect("tempdir");
    let stderr = run_failing(root.path(), &job, 1);
    assert!(
        stderr.contains("seeds ended in an error or a timeout and no level came in"),
        "{stderr}"
    );
    assert!(
        stderr.contains("newline"),
        "the layout rule is not said: {stderr}"
    );
}

/// Runs `job` with `pregen run` (`workers` workers) in `root`, which must
/// fail: its stderr.
fn run_failing(root: &Path, job: &str, workers: usize) -> String {
    let (ran, stderr) = run_job(root, job, workers, None);
    assert!(!ran, "{stderr}");
    stderr
}

/// A worker whose copy of the program crashes on some seeds (its
/// environment makes the example die on every multiple of 10: the same
/// files, so the same identity) costs the pack nothing: each seed that
/// breaks alone on it is run by the coordinator, whose verdict is the
/// seed's, and the pack is the one a healthy run makes; the last lines say
/// how many seeds broke.
#[test]
fn a_worker_whose_program_crashes_changes_no_pack() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = programs(&[]);
    let job = job(
        &["python3", "rushhour.py"],
        &["rushhour.py", "pregen_game.py"],
        dir.path(),
        "vehicles = 8\nmin_moves = 5\n",
        30,
    );
    let root = tempfile::tempdir().expect("tempdir");
    let reference = PackContent::read(&run_pack(&root.path().join("healthy"), &job, 1));
    let mut served = serve(&root.path().join("served"), &job, 2_000);
    let mut crashing = pregen()
        .args(["worker", "--coordinator", &served.url, "--token", TOKEN])
        .args(["--threads", "2", "--name", "crashing"])
        .env("RUSHHOUR_LIE", "crash:10")
        .spawn()
        .expect("spawn the worker");
    let limit = std::time::Duration::from_secs(240);
    let status = wait(&mut served.child, limit);
    let _ = wait(&mut crashing, limit);
    assert!(status.success(), "serve failed");
    let pack = root.path().join("served/out/e2e");
    let served_pack = PackContent::read(&pack);
    assert_eq!(verdicts(&served_pack), verdicts(&reference));
    assert_eq!(served_pack.release_sums, reference.release_sums);
}
