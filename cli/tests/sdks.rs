//! The game SDKs (`sdk/python/pregen_game.py`, `sdk/node/pregen_game.js`)
//! through the whole pipeline, each with its shipped example: Rush Hour in
//! Python, Lights Out in Node.js.

use std::path::Path;
use std::time::Duration;

use pregen_games::external::Program;
use pregen_games::{Rejection, Status};
use pregen_pack::PackDir;

use crate::common::needs::{Need, PYTHON, needs};
use crate::common::{PackContent, pregen, pregen_stdout, run_pack, succeeds};

/// An SDK's example: its command and the job that runs it.
struct Example {
    /// The interpreter and the program's file.
    command: [&'static str; 2],
    /// The SDK's file beside it.
    sdk: &'static str,
    /// What the interpreter needs.
    need: Need,
    /// The job's params, and a stratum that gives the game's own reason.
    params: &'static str,
    own_reason_stratum: &'static str,
    /// The game's own reason code.
    own_reason: &'static str,
}

const EXAMPLES: [Example; 2] = [
    Example {
        command: ["python3", "rushhour.py"],
        sdk: "pregen_game.py",
        need: PYTHON,
        params: "vehicles = 8\nmin_moves = 5\n",
        own_reason_stratum: "[[strata]]\nname = \"crowded\"\ncount = 5\nparams = { vehicles = 14 }\n",
        own_reason: "crowded",
    },
    Example {
        command: ["node", "lightsout.js"],
        sdk: "pregen_game.js",
        need: Need::Node,
        params: "size = 5\npresses = 10\nmin_moves = 4\n",
        own_reason_stratum: "[[strata]]\nname = \"two\"\ncount = 20\nparams = { presses = 2, min_moves = 0 }\n",
        own_reason: "dark",
    },
];

fn example_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/external").to_string()
}

impl Example {
    fn job(&self) -> String {
        format!(
            "pack = \"e2e\"\ngame = \"external\"\nseeds_per_lease = 16\ncross_check = 0.05\n\
             [external]\ncommand = [{:?}, {:?}]\ndir = {:?}\nfiles = [{:?}, {:?}]\n\
             [params]\n{}\
             [budget]\nmax_nodes = 200000\nwatchdog_ms = 60000\n\
             [[strata]]\nname = \"main\"\ncount = 30\n{}",
            self.command[0],
            self.command[1],
            example_dir(),
            self.command[1],
            self.sdk,
            self.params,
            self.own_reason_stratum,
        )
    }
}

/// Each SDK's example makes a pack: the same bytes with 1 worker and with
/// 3, every level verified again by the program (`analysis verify`) and
/// from the release files (`release verify`), and the game's own reason
/// code in the rejects table and, with its meaning, in the manifest's
/// description (the program's data dictionary). The designer's tools take
/// the program's levels: `solve --job` solves a release file to the moves
/// its headers state, `analysis calibrate --job` fits a model from two
/// tiers' files, and `retier` rates the pack again with it.
#[test]
fn each_sdks_example_makes_a_verified_pack_the_designers_tools_take() {
    for example in &EXAMPLES {
        if !needs(&[example.need]) {
            continue;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let job = example.job();
        let alone = run_pack(&dir.path().join("one"), &job, 1);
        let reference = PackContent::read(&alone);
        let three = run_pack(&dir.path().join("three"), &job, 3);
        PackContent::read(&three).assert_same(&reference);
        assert!(!reference.levels.is_empty(), "{}", example.command[1]);
        let job_file = dir.path().join("one/job.toml");
        let mine = ["--job", job_file.to_str().expect("utf-8")];
        let verified = pregen_stdout(&[&["analysis", "verify"][..], &mine].concat(), &alone);
        assert!(
            verified.starts_with(&format!("{} levels", reference.levels.len())),
            "{verified}"
        );
        let release = pregen_stdout(&[&["release", "verify"][..], &mine].concat(), &alone);
        // Named by nothing, a program's pack is not judged: the command its
        // manifest names is never run.
        let unnamed = pregen()
            .args(["release", "verify"])
            .arg(&alone)
            .output()
            .expect("run pregen");
        let said = String::from_utf8_lossy(&unnamed.stderr);
        assert!(!unnamed.status.success(), "{said}");
        assert!(said.contains("judged by a program you name"), "{said}");
        assert!(release.contains("regenerated"), "{release}");
        let own: Vec<_> = reference
            .reject_seeds
            .iter()
            .filter(|(_, _, reason)| reason.starts_with(example.own_reason))
            .collect();
        assert!(
            !own.is_empty(),
            "{}: no `{}` reject among {:?}",
            example.command[1],
            example.own_reason,
            reference.reject_seeds
        );
        assert!(own.iter().all(|(_, status, _)| status == "rejected"));
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(PackDir::new(&alone).manifest()).expect("read"))
                .expect("manifest");
        let declared = &manifest["program"]["reasons"][0];
        assert_eq!(declared["word"], example.own_reason, "{manifest}");
        assert!(declared["meaning"].as_str().is_some_and(|m| !m.is_empty()));
        designers_tools(&dir.path().join("one/job.toml"), &alone);
    }
}

/// `solve`, `calibrate` and `retier` on a game program's pack; `pregen web`
/// refuses it.
fn designers_tools(job: &Path, pack: &Path) {
    // The browser pages carry the built-in games alone: refused, saying so.
    let web = pregen()
        .arg("web")
        .arg(pack.join("web"))
        .output()
        .expect("run pregen web");
    let said = String::from_utf8_lossy(&web.stderr);
    assert!(!web.status.success(), "{said}");
    assert!(said.contains("is a pack of the game program"), "{said}");
    assert!(!pack.join("web").exists(), "nothing written");

    let release = pack.join("release");
    let tier = |n: u32| release.join(format!("tier-{n:02}.txt"));
    let stdout = succeeds(
        pregen()
            .args(["solve", "--job"])
            .arg(job)
            .arg(tier(1))
            .arg(tier(10)),
    );
    let rows: Vec<&str> = stdout.lines().skip(1).collect();
    assert!(!rows.is_empty());
    for row in rows {
        let fields: Vec<&str> = row.split('\t').collect();
        let stated = fields[1].rsplit(' ').next().expect("the header's moves");
        assert_eq!((fields[2], fields[3]), ("optimal", stated), "{row}");
    }
    let classes = |tiers: [u32; 3]| tiers.map(|t| tier(t).display().to_string()).join(",");
    let model = pack.with_file_name("calibrated.toml");
    succeeds(
        pregen()
            .args(["analysis", "calibrate", "--folds", "2", "--job"])
            .arg(job)
            .arg("--class")
            .arg(format!("easy={}", classes([1, 2, 3])))
            .arg("--class")
            .arg(format!("hard={}", classes([8, 9, 10])))
            .arg("-o")
            .arg(&model),
    );
    // Without a program named, retier refuses rather than run the
    // manifest's command; with the job, it rates the pack again.
    let retiered = pack.with_file_name("retiered");
    let refused = pregen()
        .args(["retier", "--model"])
        .arg(&model)
        .arg("-o")
        .arg(&retiered)
        .arg(pack)
        .output()
        .expect("run retier");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("--program-dir DIR"), "{said}");
    assert!(!PackDir::new(&retiered).is_complete());
    succeeds(
        pregen()
            .args(["retier", "--model"])
            .arg(&model)
            .arg("--job")
            .arg(job)
            .arg("-o")
            .arg(&retiered)
            .arg(pack),
    );
    assert!(PackDir::new(&retiered).is_complete());
}

/// Seeds reach the game exactly in every SDK, above 2^53 too (where a JSON
/// number read as a double loses digits): neighbouring seeds there make
/// different levels, and the same seed the same level twice.
#[test]
fn each_sdk_reads_seeds_above_2_pow_53_exactly() {
    for example in &EXAMPLES {
        if !needs(&[example.need]) {
            continue;
        }
        let command: Vec<String> = example.command.iter().map(|s| s.to_string()).collect();
        let (mut program, _) =
            Program::start(&command, Some(example_dir().into())).expect("starts");
        let params = serde_json::json!({ "min_moves": 0 });
        let wait = Duration::from_secs(60);
        let base = (1u64 << 53) - 4;
        let mut levels = Vec::new();
        for seed in base..base + 12 {
            let outcome = program.generate(seed, &params, 200_000, wait);
            let again = program.generate(seed, &params, 200_000, wait);
            assert_eq!(outcome.result, again.result, "seed {seed}");
            match outcome.result {
                Ok(level) => levels.push((seed, level.level_hash)),
                Err(Rejection::Refused(r)) => assert_eq!(r.code.status(), Status::Rejected),
                Err(Rejection::Unsolvable) => {}
                Err(other) => panic!("seed {seed}: {other:?}"),
            }
        }
        assert!(levels.len() >= 4, "{}: {levels:?}", example.command[1]);
        let mut hashes: Vec<&String> = levels.iter().map(|(_, h)| h).collect();
        hashes.sort();
        hashes.dedup();
        assert_eq!(
            hashes.len(),
            levels.len(),
            "{}: two seeds made one level: {levels:?}",
            example.command[1]
        );
    }
}

/// Each SDK answers a long batch (its requests written at once, as a
/// worker writes a lease's) every one in order with its id, and ends
/// quietly, with no error on stderr, when the reader goes away mid-batch.
#[test]
fn each_sdk_answers_a_long_batch_in_order_and_ends_quietly_when_unread() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    const REQUESTS: u64 = 5000;
    let batch: String = (1..=REQUESTS)
        .map(|id| format!("{{\"id\":{id},\"prepare\":{{\"params\":{{}}}}}}\n"))
        .collect();
    for example in &EXAMPLES {
        if !needs(&[example.need]) {
            continue;
        }
        let start = || {
            let mut child = Command::new(example.command[0])
                .arg(example.command[1])
                .current_dir(example_dir())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("starts");
            let mut stdin = child.stdin.take().expect("stdin");
            let batch = batch.clone();
            // The program may end before it has read everything: a failed
            // write is no fault here.
            let writer = std::thread::spawn(move || {
                let _ = stdin.write_all(batch.as_bytes());
            });
            (child, writer)
        };

        let (mut child, writer) = start();
        let answers = BufReader::new(child.stdout.take().expect("stdout"));
        let mut ids = Vec::new();
        for line in answers.lines() {
            let answer: serde_json::Value =
                serde_json::from_str(&line.expect("a line")).expect("an answer is JSON");
            assert_eq!(answer["prepare"]["ok"], true, "{answer}");
            ids.push(answer["id"].as_u64().expect("an id"));
        }
        writer.join().expect("writer");
        assert!(child.wait().expect("wait").success());
        assert_eq!(
            ids,
            (1..=REQUESTS).collect::<Vec<_>>(),
            "{}",
            example.command[1]
        );

        let (mut child, writer) = start();
        let mut answers = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        answers.read_line(&mut first).expect("the first answer");
        assert!(first.contains("\"id\":1"), "{first}");
        drop(answers);
        writer.join().expect("writer");
        let ended = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&ended.stderr);
        assert!(
            ended.status.success(),
            "{}: {:?} {stderr}",
            example.command[1],
            ended.status
        );
        assert!(stderr.is_empty(), "{}: {stderr}", example.command[1]);
    }
}

/// docs/external.md's shortest path, as written, for each SDK: the example,
/// its job and its SDK copied into a folder of one's own, run, verified.
#[test]
fn the_newcomers_path_works_as_written() {
    for (need, program, job, sdk, pack) in [
        (
            PYTHON,
            "rushhour.py",
            "rushhour.toml",
            "python/pregen_game.py",
            "rushhour",
        ),
        (
            Need::Node,
            "lightsout.js",
            "lightsout.toml",
            "node/pregen_game.js",
            "lightsout",
        ),
    ] {
        if !needs(&[need]) {
            continue;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let mine = dir.path().join("mygame");
        std::fs::create_dir(&mine).expect("mkdir mygame");
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        for from in [
            format!("{root}/examples/external/{program}"),
            format!("{root}/examples/external/{job}"),
            format!("{root}/sdk/{sdk}"),
        ] {
            let name = std::path::Path::new(&from).file_name().expect("a name");
            std::fs::copy(&from, mine.join(name)).expect("cp");
        }
        let at = |args: &[&str]| succeeds(pregen().current_dir(dir.path()).args(args));
        at(&[
            "run",
            "--no-progress",
            &format!("mygame/{job}"),
            "--count",
            "20",
        ]);
        let said = at(&[
            "analysis",
            "verify",
            "--program-dir",
            "mygame",
            &format!("out/{pack}"),
        ]);
        assert!(said.starts_with("20 levels"), "{said}");
    }
}
