//! The game protocol end to end: `pregen game-server` run as a game program
//! and spoken to by `games::external::Program`, as a worker would speak to a
//! game in another language.

use std::process::Stdio;
use std::time::Duration;

use pregen_games::external::{Program, ProgramSpec};
use pregen_games::seeds::SeedFile;
use pregen_games::{Budget, GameKind, Rejection};
use pregen_pack::PackDir;

use crate::common::needs::{PYTHON, needs};
use crate::common::{
    PackContent, TOKEN, job_text, pregen, pregen_stdout, run_pack, serve,
    serve_with_a_worker_killed, wait, worker,
};

const LIMIT: Duration = Duration::from_secs(240);

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
            // A game's own codes come back as the program's codes of the same
            // word (numbered as a program's): compared by word.
            let words = |r: &Result<pregen_games::Candidate, Rejection>| match r {
                Err(Rejection::Refused(reason)) => Err(reason.to_string()),
                other => Ok(other.clone()),
            };
            assert_eq!(
                words(&over.result),
                words(&here.result),
                "{name} seed {seed}"
            );
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
    if !needs(&[PYTHON]) {
        return;
    }
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

/// The folder of the shipped Python example.
fn example_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/external").to_string()
}

/// A Rush Hour job of `count` levels, run by the shipped example (every seed
/// cross-checked at `cross_check`).
pub(crate) fn rushhour_job(count: u64, cross_check: f64) -> String {
    format!(
        "pack = \"e2e\"\ngame = \"external\"\ncount = {count}\nseeds_per_lease = 64\n\
         cross_check = {cross_check}\n\
         [external]\ncommand = [\"python3\", \"rushhour.py\"]\ndir = {:?}\n\
         files = [\"rushhour.py\", \"pregen_game.py\"]\n\
         [params]\nvehicles = 8\nmin_moves = 5\n\
         [budget]\nmax_nodes = 200000\nwatchdog_ms = 60000\n",
        example_dir()
    )
}

/// [`job_text`]'s tilt job with its game a program: `pregen game-server
/// tilt`, this build's binary.
fn tilt_through_the_protocol(count: u64) -> String {
    job_text(count).replace("game = \"tilt\"", "game = \"external\"")
        + &format!(
            "[external]\ncommand = [{:?}, \"game-server\", \"tilt\"]\n",
            env!("CARGO_BIN_EXE_pregen")
        )
}

/// The protocol is complete: a tilt pack made through `pregen game-server
/// tilt` holds the native pack's levels, rejects, campaigns and release
/// files byte for byte, with 1 worker and with 3. (The job, so its id, is
/// another: the provenance columns and the manifest's job differ.)
#[test]
fn a_tilt_pack_through_the_protocol_is_the_native_pack() {
    let dir = tempfile::tempdir().expect("tempdir");
    let native_dir = run_pack(&dir.path().join("native"), &job_text(300), 1);
    let native = PackContent::read(&native_dir);
    let job = tilt_through_the_protocol(300);
    assert!(
        job.contains("[external]") && job.contains("[params]"),
        "{job}"
    );
    for workers in [1, 3] {
        let pack = run_pack(&dir.path().join(format!("w{workers}")), &job, workers);
        let content = PackContent::read(&pack);
        content.assert_same_but_job(&native);
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(PackDir::new(&pack).manifest()).expect("read"))
                .expect("manifest");
        let external = &manifest["job"]["external"];
        assert_eq!(external["name"], "tilt", "{manifest}");
        assert!(
            external["identity"]
                .as_str()
                .is_some_and(|i| i.starts_with("sha256:")),
            "{manifest}"
        );
        let job_file = dir.path().join(format!("w{workers}/job.toml"));
        let job_file = job_file.to_str().expect("utf-8");
        let verified = pregen_stdout(&["analysis", "verify", "--job", job_file], &pack);
        assert!(verified.starts_with("300 levels"), "{verified}");
    }
}

/// The Python example makes a pack with `pregen run`, and `analysis
/// verify` checks every level with the program; `serve` with two worker
/// processes, one killed mid-run, gives the same pack.
#[test]
fn the_python_example_makes_a_verified_pack_whatever_fails() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let job = rushhour_job(40, 0.01);
    let alone = run_pack(&dir.path().join("run"), &job, 1);
    let reference = PackContent::read(&alone);
    assert_eq!(reference.levels.len(), 40);
    assert!(reference.levels.iter().all(|l| l.level_hash.len() == 64));
    let job_file = dir.path().join("run/job.toml");
    let mine = ["--job", job_file.to_str().expect("utf-8")];
    let verified = pregen_stdout(&[&["analysis", "verify"][..], &mine].concat(), &alone);
    assert!(verified.starts_with("40 levels"), "{verified}");
    // The release too: its seed files regenerate through the program, and
    // the program checks every level of its level files.
    let release = pregen_stdout(&[&["release", "verify"][..], &mine].concat(), &alone);
    assert!(release.contains("40 regenerated"), "{release}");
    // Pictures are the program's own (its red car), in `render` and the report.
    let seed = reference.levels[0].seed.to_string();
    // Only a program named runs: without one, the levels are drawn from
    // their text form and the manifest's command is never run.
    let render = ["analysis", "render", "--seed", &seed, "-o", "-"];
    let picture = pregen_stdout(&[&render[..], &mine].concat(), &alone);
    assert!(picture.contains("#dd3333"), "{picture}");
    let unnamed = pregen_stdout(&render, &alone);
    assert!(!unnamed.contains("#dd3333"), "{unnamed}");
    let html = crate::common::report_html(&alone, &dir.path().join("report.html"), &mine);
    assert!(
        html.contains("#dd3333"),
        "the report draws the program's pictures"
    );
    let html = crate::common::report_html(&alone, &dir.path().join("plain.html"), &[]);
    assert!(
        !html.contains("#dd3333"),
        "no program named: no program run"
    );
    // The seed-only release regenerates through the program, hash by hash.
    let seeds = SeedFile::parse(
        &std::fs::read_to_string(alone.join("release/seeds/tier-01.txt")).expect("seed file"),
    )
    .expect("a seed file");
    let refused = seeds.regenerate().expect_err("needs the program");
    assert!(
        refused.to_string().contains("game program rushhour 1.0.0"),
        "{refused}"
    );
    let program = GameKind::external(&ProgramSpec {
        command: vec!["python3".into(), "rushhour.py".into()],
        dir: example_dir().into(),
        files: Vec::new(),
    })
    .expect("the example starts");
    let levels = seeds.regenerate_with(&program).expect("regenerates");
    assert_eq!(levels.len() as u64, seeds.header.levels);

    let pack = serve_with_a_worker_killed(&dir.path().join("serve"), &job, LIMIT);
    PackContent::read(&pack).assert_same(&reference);
}

/// Liars through the pipeline. A worker whose program drops each
/// solution's last move is refused by the coordinator's check (its own
/// process of the program); one whose program answers a seed with another
/// seed's level passes that check but not the cross-check, which names the
/// seed in the manifest. Either way the pack is the honest one. A worker
/// whose copy of the program differs is refused before it runs a seed.
#[test]
fn a_lying_program_is_caught_and_its_worker_refused() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let job = rushhour_job(30, 1.0);
    let reference = PackContent::read(&run_pack(&dir.path().join("run"), &job, 1));
    for (lie, caught) in [("solution", "refused"), ("level", "disagreed")] {
        let root = dir.path().join(lie);
        let mut served = serve(&root, &job, 2_000);
        // The same program, files and all: only its environment lies.
        let mut liar = pregen()
            .args(["worker", "--coordinator", &served.url, "--token", TOKEN])
            .args(["--threads", "1", "--name", "liar"])
            .env("RUSHHOUR_LIE", lie)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the liar");
        std::thread::sleep(Duration::from_millis(300));
        let mut honest = worker(&served.url, "honest", TOKEN);
        assert!(wait(&mut served.child, LIMIT).success(), "serve failed");
        assert!(wait(&mut honest, LIMIT).success(), "honest worker failed");
        let _ = wait(&mut liar, LIMIT);
        let pack = root.join("out/e2e");
        PackContent::read(&pack).assert_same(&reference);
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(PackDir::new(&pack).manifest()).expect("read"))
                .expect("manifest");
        let refused = &manifest["cross_check"]["refused"];
        let why = refused
            .as_object()
            .and_then(|r| r.iter().find(|(k, _)| k.starts_with("liar")))
            .map(|(_, why)| why.to_string())
            .unwrap_or_else(|| panic!("{lie}: the liar is not refused: {manifest}"));
        assert!(why.contains("seed"), "{lie}: {why}");
        eprintln!("{lie}: {caught}: {why}");
    }

    // A node whose copy of the program is another is refused at once.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).expect("dir");
    let script = std::fs::read_to_string(format!("{}/rushhour.py", example_dir())).expect("read");
    std::fs::write(other.join("rushhour.py"), script.replace("1.0.0", "1.0.1")).expect("write");
    std::fs::copy(
        format!("{}/pregen_game.py", example_dir()),
        other.join("pregen_game.py"),
    )
    .expect("copy the SDK");
    let root = dir.path().join("identity");
    let _served = serve(&root, &job, 2_000);
    let out = pregen()
        .args(["worker", "--coordinator", &_served.url, "--token", TOKEN])
        .arg("--program-dir")
        .arg(&other)
        .output()
        .expect("run the worker");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the game program in") && stderr.contains("the job's is sha256:"),
        "{stderr}"
    );
}

/// `pregen run` of `job` under `root`, which must fail: its stderr.
fn run_failing(root: &std::path::Path, job: &str) -> String {
    let job_path = crate::common::write_job(root, job);
    let out = pregen()
        .args(["run", "--no-progress", "--out"])
        .arg(root.join("out"))
        .arg(&job_path)
        .output()
        .expect("run pregen");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "the run passed: {stderr}");
    stderr
}

/// A release that carries its program (`[release] program = true`)
/// verifies, folder and archive, with the program gone from where it ran;
/// a carried file changed is caught.
#[test]
fn a_release_that_carries_its_program_needs_nothing_beside_it() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ran_from = dir.path().join("ran");
    std::fs::create_dir(&ran_from).expect("mkdir");
    for file in ["rushhour.py", "pregen_game.py"] {
        std::fs::copy(format!("{}/{file}", example_dir()), ran_from.join(file))
            .expect("copy the program");
    }
    let job = rushhour_job(10, 0.0)
        .replace(&format!("{:?}", example_dir()), &format!("{ran_from:?}"))
        + "[release]\nprogram = true\n";
    let pack = run_pack(&dir.path().join("run"), &job, 1);
    assert!(pack.join("release/program/rushhour.py").is_file());
    assert!(pack.join("release/program/pregen_game.py").is_file());
    let archive = dir.path().join("release.tar.zst");
    let out = pregen()
        .arg("archive")
        .arg(&pack)
        .arg("-o")
        .arg(&archive)
        .output()
        .expect("run pregen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&ran_from).expect("remove the program");
    for release in [&archive, &pack] {
        let verified = pregen_stdout(&["release", "verify", "--trust-carried-program"], release);
        assert!(
            verified.contains("(the program the release carries)"),
            "{verified}"
        );
    }
    let carried = pack.join("release/program/rushhour.py");
    let text = std::fs::read_to_string(&carried).expect("read");
    std::fs::write(&carried, text + "\n").expect("change the carried program");
    let changed = pregen()
        .args(["release", "verify", "--trust-carried-program"])
        .arg(&pack)
        .output()
        .expect("run pregen");
    let stderr = String::from_utf8_lossy(&changed.stderr);
    assert!(!changed.status.success(), "{stderr}");
    assert!(stderr.contains("program/rushhour.py"), "{stderr}");
}

/// A program's pack verifies away from the folder it ran from: with the
/// program moved, both verifies fail without `--program-dir` and pass with
/// it; a program that is not the pack's (one byte changed) is refused by
/// identity.
#[test]
fn a_programs_pack_verifies_with_the_program_elsewhere() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (ran_from, moved_to) = (dir.path().join("ran"), dir.path().join("moved"));
    std::fs::create_dir(&ran_from).expect("mkdir");
    for file in ["rushhour.py", "pregen_game.py"] {
        std::fs::copy(format!("{}/{file}", example_dir()), ran_from.join(file))
            .expect("copy the program");
    }
    let job =
        rushhour_job(10, 0.0).replace(&format!("{:?}", example_dir()), &format!("{ran_from:?}"));
    let pack = run_pack(&dir.path().join("run"), &job, 1);
    std::fs::rename(&ran_from, &moved_to).expect("move the program");
    let verify = |args: &[&str]| pregen().args(args).arg(&pack).output().expect("run pregen");
    for command in [&["analysis", "verify"][..], &["release", "verify"]] {
        let lost = verify(command);
        assert!(
            !lost.status.success(),
            "{command:?} passed without the program"
        );
        let moved = moved_to.to_str().expect("utf-8");
        let found = verify(&[command, &["--program-dir", moved]].concat());
        assert!(
            found.status.success(),
            "{command:?}: {}",
            String::from_utf8_lossy(&found.stderr)
        );
    }
    let program = moved_to.join("rushhour.py");
    let text = std::fs::read_to_string(&program).expect("read");
    std::fs::write(&program, text + "\n").expect("change the program");
    let other = verify(&[
        "release",
        "verify",
        "--program-dir",
        moved_to.to_str().expect("utf-8"),
    ]);
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(!other.status.success(), "{stderr}");
    assert!(stderr.contains("the pack's is sha256:"), "{stderr}");
}

/// A program that runs past a watchdog of 20 ms on its slowest seeds (some
/// take over 100 ms) still makes its pack from the other seeds, and the
/// run's last lines say how many seeds went wrong and why, with the first
/// seed of each reason; each timeout is logged with the watchdog's limit it
/// met. (A crash is no seed's verdict: `accidents.rs`.)
#[test]
fn a_run_whose_program_times_out_says_so_on_its_last_lines() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let job = rushhour_job(30, 0.0).replace("watchdog_ms = 60000", "watchdog_ms = 20");
    assert!(job.contains("watchdog_ms = 20\n"), "{job}");
    let job_path = crate::common::write_job(dir.path(), &job);
    let out = pregen()
        .args(["run", "--no-progress", "--workers", "1", "--out"])
        .arg(dir.path().join("out"))
        .arg(&job_path)
        .output()
        .expect("run pregen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("warning: ") && l.contains("went wrong"))
        .unwrap_or_else(|| panic!("no word of the timeouts: {stderr}"));
    let count = |line: &str| -> Option<u64> { line.split_whitespace().next()?.parse().ok() };
    let went_wrong = count(warning.trim_start_matches("warning: "))
        .unwrap_or_else(|| panic!("no count in `{warning}`"));
    // The line after it: "  <count>  timeout (the first, seed N: timeout)".
    let timeouts = stderr
        .lines()
        .filter(|l| {
            l.trim_start()
                .split_once("  ")
                .is_some_and(|(_, r)| r.starts_with("timeout (the first, seed "))
        })
        .find_map(count)
        .unwrap_or(0);
    assert!(timeouts > 0, "{stderr}");
    assert_eq!(timeouts, went_wrong, "{stderr}");
    assert!(
        stderr.contains("a timeout depends on the machine"),
        "{stderr}"
    );
    // Each timed-out seed of the pack is in the log with the limit it met
    // (a seed run again, as the probe of determinism does, once a run).
    let manifest = PackDir::new(dir.path().join("out/e2e"))
        .read_manifest()
        .expect("manifest");
    assert!(!manifest.timeouts.is_empty(), "{stderr}");
    let logged: std::collections::BTreeSet<u64> = stderr
        .lines()
        .filter_map(|l| {
            let (before, _) = l.split_once(": timeout: no answer within 20 ms of its CPU time")?;
            before.rsplit_once("seed ")?.1.parse().ok()
        })
        .collect();
    let unlogged: Vec<_> = manifest
        .timeouts
        .iter()
        .filter(|s| !logged.contains(s))
        .collect();
    assert!(unlogged.is_empty(), "not logged: {unlogged:?}: {stderr}");
    assert!(manifest.seeds.tried > 30, "{:?}", manifest.seeds);
}

/// a program that is not deterministic (the example with
/// `--lie random:P`, which answers a share P of the seeds it runs with the
/// level of a seed drawn at random) is named as such, at 20% and at 2%, by
/// the default run: the run fails before the pack is written, naming the
/// seed and what differs, blaming no worker and advising no resume.
#[test]
fn a_program_that_is_not_deterministic_is_named_not_shipped() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for share in ["0.2", "0.02"] {
        let job = rushhour_job(40, 0.01).replace(
            "command = [\"python3\", \"rushhour.py\"]",
            &format!("command = [\"python3\", \"rushhour.py\", \"--lie\", \"random:{share}\"]"),
        );
        assert!(job.contains("random:"), "{job}");
        let root = dir.path().join(share);
        let stderr = run_failing(&root, &job);
        assert!(
            stderr.contains("the program answers seed")
                && stderr.contains("it is not deterministic"),
            "{share}: {stderr}"
        );
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.contains("it is not deterministic"), "{share}: {last}");
        assert!(!last.contains("resume"), "{share}: {last}");
        assert!(!root.join("out/e2e/_SUCCESS").exists(), "{share}: shipped");
    }
    // The honest program passes the same probe.
    let pack = run_pack(&dir.path().join("honest"), &rushhour_job(20, 0.01), 1);
    assert!(pack.join("_SUCCESS").exists());
}

/// a program whose `check` accepts wrong solutions passes them
/// when it judges itself; with an independent checker (`[external] checker`,
/// the honest example) the coordinator refuses them, and a pack the checker
/// judged says so in both verifies.
#[test]
fn an_independent_checker_judges_in_the_programs_place() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let liar = rushhour_job(10, 0.01).replace(
        "command = [\"python3\", \"rushhour.py\"]",
        "command = [\"python3\", \"rushhour.py\", \"--lie\", \"check\"]",
    );
    // Judging itself, the liar's pack passes when its own job is named: the
    // program is the judge.
    let pack = run_pack(&dir.path().join("alone"), &liar, 1);
    let job_of = |name: &str| dir.path().join(name).join("job.toml");
    let liars_job = job_of("alone");
    let mine = ["--job", liars_job.to_str().expect("utf-8")];
    let said = pregen_stdout(&[&["analysis", "verify"][..], &mine].concat(), &pack);
    assert!(
        said.contains("accepted by the game program's own check"),
        "{said}"
    );
    // A receiver's copy of the honest program is never run with the
    // arguments the pack names: the lie is refused, not judged by.
    for command in [["analysis", "verify"], ["release", "verify"]] {
        let out = pregen()
            .args(command)
            .args(["--program-dir", &example_dir()])
            .arg(&pack)
            .output()
            .expect("run pregen");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command:?}: {stderr}");
        assert!(
            stderr.contains("the pack runs its game program as `python3 rushhour.py --lie check`: it passes arguments"),
            "{command:?}: {stderr}"
        );
    }
    // With the honest program as its checker, no level of it counts, and
    // no worker is blamed: each seed is the checker's refusal of the level
    // the generator makes, until the circuit breaker stops the run.
    let checked = liar
        .replace(
            "[params]",
            "checker = [\"python3\", \"rushhour.py\"]\n[params]",
        )
        .replace("min_moves = 5", "min_moves = 1");
    assert!(checked.contains("checker ="), "{checked}");
    let stderr = run_failing(&dir.path().join("checked"), &checked);
    assert!(
        stderr.contains("the job's checker refuses the level its generator makes"),
        "{stderr}"
    );
    assert!(stderr.contains("no level came in"), "{stderr}");
    assert!(
        !stderr.contains("refused and its results run again"),
        "a worker was blamed: {stderr}"
    );
    // An honest program with a checker: both verifies name the checker.
    let honest = rushhour_job(10, 0.01).replace(
        "[params]",
        "checker = [\"python3\", \"rushhour.py\"]\n[params]",
    );
    let pack = run_pack(&dir.path().join("honest"), &honest, 1);
    let honest_job = job_of("honest");
    let mine = ["--job", honest_job.to_str().expect("utf-8")];
    let said = pregen_stdout(&[&["analysis", "verify"][..], &mine].concat(), &pack);
    assert!(
        said.contains("accepted by the job's checker program"),
        "{said}"
    );
    let said = pregen_stdout(&[&["release", "verify"][..], &mine].concat(), &pack);
    assert!(
        said.contains("accepted by the job's checker program"),
        "{said}"
    );
}

/// a program whose check refuses the levels its own generate
/// makes is named as contradicting itself, and no worker is blamed for it.
#[test]
fn a_program_whose_check_refuses_its_own_levels_is_named() {
    if !needs(&[PYTHON]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let job = rushhour_job(10, 0.01).replace(
        "command = [\"python3\", \"rushhour.py\"]",
        "command = [\"python3\", \"rushhour.py\", \"--lie\", \"strict\"]",
    );
    let stderr = run_failing(&dir.path().join("strict"), &job);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.contains("the program contradicts itself"), "{stderr}");
    assert!(!stderr.contains("is refused"), "a worker blamed: {stderr}");
}
