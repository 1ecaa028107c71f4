use std::io::Cursor;
use std::time::Duration;

use super::*;
use crate::registry::GameKind;
use crate::{Code, Rejection, Status};

fn tilt() -> GameKind {
    GameKind::from_name("tilt").expect("tilt")
}

fn params() -> serde_json::Value {
    serde_json::json!({ "width": 5, "height": 5, "pairs": 2, "min_moves": 3 })
}

/// The responses `serve` gives to `requests`.
fn served(requests: &[serde_json::Value]) -> Vec<Response> {
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let mut output = Vec::new();
    serve(
        tilt(),
        &mut std::io::BufReader::new(Cursor::new(input)),
        &mut output,
    )
    .expect("serves");
    String::from_utf8(output)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a response"))
        .collect()
}

/// What a built-in game answers over the protocol is what it computes: the
/// same outcome for every seed, the same check.
#[test]
fn a_served_game_answers_as_it_runs() {
    let game = tilt().prepare(&params()).expect("params");
    let mut requests = vec![serde_json::json!({"id": 1, "describe": {"protocol": PROTOCOL}})];
    for seed in 0..40u64 {
        requests.push(serde_json::json!({
            "id": seed + 2,
            "generate": {"seed": seed, "params": params(), "max_nodes": 50_000}
        }));
    }
    let responses = served(&requests);
    assert_eq!(responses.len(), requests.len());
    let ResponseBody::Describe(d) = &responses[0].body else {
        panic!("{:?}", responses[0]);
    };
    assert_eq!((d.name.as_str(), d.protocol), ("tilt", PROTOCOL));
    assert_eq!(d.params["pairs"], tilt().default_params()["pairs"]);
    assert!(d.metrics.iter().any(|m| m.name == "states"));
    let mut accepted = None;
    for (seed, response) in responses[1..].iter().enumerate() {
        assert_eq!(response.id, seed as u64 + 2);
        let ResponseBody::Outcome(message) = &response.body else {
            panic!("{response:?}");
        };
        let native = game.run(seed as u64, &Budget::nodes(50_000));
        let back = message
            .clone()
            .into_outcome(game.kind().reasons())
            .expect("a valid outcome");
        assert_eq!(back.result, native.result, "seed {seed}");
        assert_eq!(back.nodes, native.nodes, "seed {seed}");
        if let Ok(level) = back.result {
            accepted = Some(level);
        }
    }
    let level = accepted.expect("some seed accepted");
    let mut forged = level.clone();
    forged.moves += 1;
    let checks = served(&[
        serde_json::json!({"id": 5, "check": {"params": params(), "level": level}}),
        serde_json::json!({"id": 6, "check": {"params": params(), "level": forged}}),
        serde_json::json!({"id": 7, "describe": {"protocol": 99}}),
        serde_json::json!({"id": 8, "launch": {}}),
    ]);
    assert!(matches!(&checks[0].body, ResponseBody::Check(c) if c.ok));
    assert!(matches!(&checks[1].body, ResponseBody::Check(c) if !c.ok && !c.reason.is_empty()));
    assert!(matches!(&checks[2].body, ResponseBody::Error(e) if e.contains("protocol 1, not 99")));
    assert!(
        matches!(&checks[3], Response { id: 8, body: ResponseBody::Error(e) } if e.contains("not a request"))
    );
}

#[test]
fn an_outcome_that_does_not_hold_together_is_refused() {
    let base = OutcomeMessage {
        status: Status::Rejected,
        reason_code: Some("too easy".into()),
        reason_detail: "2 moves".into(),
        level: None,
        generate_ms: 1.0,
        solve_ms: 1.0,
        nodes: 3,
    };
    assert!(base.clone().into_outcome(&[]).is_ok());
    let cases: [(OutcomeMessage, &str); 6] = [
        (
            OutcomeMessage {
                reason_code: None,
                ..base.clone()
            },
            "without a reason_code",
        ),
        (
            OutcomeMessage {
                reason_code: Some("bored".into()),
                ..base.clone()
            },
            "unknown reason code `bored`",
        ),
        (
            OutcomeMessage {
                reason_code: Some("internal error".into()),
                ..base.clone()
            },
            "with status rejected",
        ),
        (
            OutcomeMessage {
                status: Status::Accepted,
                ..base.clone()
            },
            "accepted without a level",
        ),
        (
            OutcomeMessage {
                status: Status::Timeout,
                ..base.clone()
            },
            "a reason_code with status timeout",
        ),
        (
            OutcomeMessage {
                solve_ms: f64::NAN,
                ..base.clone()
            },
            "solve_ms is NaN",
        ),
    ];
    for (message, says) in cases {
        let err = message.into_outcome(&[]).expect_err(says);
        assert!(err.to_string().contains(says), "{err} / {says}");
    }
}

/// A program written as a shell script: it describes itself (as `name`),
/// then answers each `generate` with the next of `answers` (`-` reads the
/// request and says nothing; `exit` ends the process; `spin N ANSWER`
/// counts to N, work for the CPU, then answers ANSWER; `spin` alone works
/// for ever; `read` waits to read another line, as a program whose answer
/// is left in its buffer does).
fn script(dir: &std::path::Path, name: &str, answers: &[&str]) -> Vec<String> {
    let describe = format!(
        r#"{{"id":ID,"describe":{{"protocol":1,"name":"{name}","version":"1","text_format":"x","params":{{}},"metrics":[]}}}}"#
    );
    let mut body =
        String::from("read line\nid=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n");
    body.push_str(&format!("echo '{describe}' | sed \"s/ID/$id/\"\n"));
    for answer in answers {
        body.push_str(
            "read line || exit 0\nid=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n",
        );
        match *answer {
            "-" => body.push_str("sleep 30\n"),
            "read" => body.push_str("read more\n"),
            "exit" => body.push_str("exit 3\n"),
            "spin" => body.push_str("while :; do :; done\n"),
            a if a.starts_with("spin ") => {
                let (count, answer) = a["spin ".len()..].split_once(' ').expect("spin N ANSWER");
                body.push_str(&format!(
                    "i=0; while [ $i -lt {count} ]; do i=$((i+1)); done\n\
                     echo '{answer}' | sed \"s/ID/$id/\"\n"
                ));
            }
            a => body.push_str(&format!("echo '{a}' | sed \"s/ID/$id/\"\n")),
        }
    }
    body.push_str("sleep 30\n");
    let path = dir.join(format!("{name}.sh"));
    std::fs::write(&path, body).expect("script");
    vec!["sh".into(), path.display().to_string()]
}

fn rejected_json() -> &'static str {
    r#"{"id":ID,"outcome":{"status":"rejected","reason_code":"too easy","reason_detail":"1 move","generate_ms":1,"solve_ms":1,"nodes":2}}"#
}

/// Every way a program can break the protocol is that seed's failure,
/// named, and the program is started again for the next seed; past the
/// watchdog the seed is a timeout.
#[test]
fn a_broken_program_fails_its_seed_not_the_worker() {
    let dir = std::env::temp_dir().join(format!("pregen-program-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    // A broken exchange (no answer to be had) is `broken`; an answer that
    // breaks a rule of the protocol is `protocol`, the seed's verdict.
    let cases: [(&str, &str, &str, Code); 5] = [
        ("garbage", "not json", "not a message", Code::Broken),
        (
            "wrong-id",
            r#"{"id":999,"outcome":{"status":"unsolvable","generate_ms":1,"solve_ms":1,"nodes":0}}"#,
            "came for request 999",
            Code::Broken,
        ),
        (
            "lie",
            r#"{"id":ID,"outcome":{"status":"accepted","generate_ms":1,"solve_ms":1,"nodes":0}}"#,
            "accepted without a level",
            Code::Protocol,
        ),
        ("crash", "exit", "ended before answering", Code::Broken),
        (
            "error",
            r#"{"id":ID,"error":"no such params"}"#,
            "the program says: no such params",
            Code::Protocol,
        ),
    ];
    for (name, answer, says, code) in cases {
        let command = script(&dir, name, &[answer, rejected_json()]);
        let (mut program, description) = Program::start(&command, None).expect("starts");
        assert_eq!(description.name, name);
        let outcome = program.generate(1, &serde_json::json!({}), 100, Duration::from_secs(20));
        let Err(Rejection::Refused(reason)) = &outcome.result else {
            panic!("{name}: {:?}", outcome.result);
        };
        assert_eq!(reason.code, code, "{name}");
        assert!(reason.detail.contains(says), "{name}: {}", reason.detail);
        // Started again: the script answers its first request anew.
        let next = program.generate(2, &serde_json::json!({}), 100, Duration::from_secs(20));
        assert!(
            matches!(&next.result, Err(r) if r.code() == Some(code) || r.code() == Some(Code::TooEasy)),
            "{name}: {:?}",
            next.result
        );
    }
    let command = script(&dir, "hang", &["-", rejected_json()]);
    let (mut program, _) = Program::start(&command, None).expect("starts");
    let outcome = program.generate(1, &serde_json::json!({}), 100, Duration::from_millis(300));
    assert_eq!(outcome.result, Err(Rejection::Timeout));
    let command = script(&dir, "old", &[]);
    let text = std::fs::read_to_string(&command[1]).expect("script");
    std::fs::write(
        &command[1],
        text.replace("\\\"protocol\\\":1", "\\\"protocol\\\":0")
            .replace("\"protocol\":1", "\"protocol\":0"),
    )
    .expect("script");
    let refused = Program::start(&command, None).err().expect("refused");
    assert!(
        refused
            .to_string()
            .contains("protocol 0; this pregen speaks 1"),
        "{refused}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program's watchdog counts the CPU time of its process group, as a
/// built-in game's counts its thread's: one held back by a busy core (its
/// wall time several times its watchdog) answers, one that works past its
/// watchdog does not, and one that does no work is waited for its
/// watchdog's wall time, with the hint to flush.
#[cfg(target_os = "linux")]
#[test]
fn a_programs_watchdog_counts_its_cpu_time_not_a_busy_cores_wall_time() {
    use std::os::unix::process::CommandExt;
    use std::time::Instant;
    let dir = std::env::temp_dir().join(format!("pregen-cpu-watchdog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let work = format!("spin 200000 {}", rejected_json());
    let pinned = |command: Vec<String>| -> Vec<String> {
        ["taskset", "-c", "0"]
            .iter()
            .map(|s| s.to_string())
            .chain(command)
            .collect()
    };
    let command = pinned(script(&dir, "work", &[&work, &work]));
    let (mut program, _) = Program::start(&command, None).expect("starts");
    let too_easy =
        |o: &crate::Outcome| matches!(&o.result, Err(r) if r.code() == Some(Code::TooEasy));

    // Quiet: its wall time is about its CPU time.
    let started = Instant::now();
    let quiet = program.generate(1, &serde_json::json!({}), 100, Duration::from_secs(60));
    let alone = started.elapsed();
    assert!(too_easy(&quiet), "{:?}", quiet.result);
    let watchdog = (alone * 3).max(Duration::from_millis(100));

    // Eight busy loops on its core: a ninth of the core each. Each in a
    // process group of its own, killed whole (`timeout` and its loop), and
    // ended by `timeout` should this test be killed first.
    struct Hogs(Vec<std::process::Child>);
    impl Drop for Hogs {
        fn drop(&mut self) {
            for hog in &mut self.0 {
                let group = format!("kill -9 -{}", hog.id());
                let _ = std::process::Command::new("sh")
                    .args(["-c", &group])
                    .status();
                let _ = hog.wait();
            }
        }
    }
    let hogs = Hogs(
        (0..8)
            .map(|_| {
                std::process::Command::new("taskset")
                    .args([
                        "-c",
                        "0",
                        "timeout",
                        "120",
                        "sh",
                        "-c",
                        "while :; do :; done",
                    ])
                    .process_group(0)
                    .spawn()
                    .expect("a hog")
            })
            .collect(),
    );
    let started = Instant::now();
    let busy = program.generate(2, &serde_json::json!({}), 100, watchdog);
    let stretched = started.elapsed();
    drop(hogs);
    assert!(
        too_easy(&busy),
        "{:?}: {stretched:?} of wall time, watchdog {watchdog:?}",
        busy.result
    );
    assert!(
        stretched > watchdog,
        "the hogs did not hold it back ({stretched:?}, watchdog {watchdog:?}): the test shows nothing"
    );

    // Working past its watchdog, and doing nothing: each named.
    for (name, answer, says) in [
        ("forever", "spin", "of its CPU time"),
        (
            "asleep",
            "-",
            "used no CPU for 300 ms (waiting: sleep, a lock, I/O)",
        ),
        (
            "unflushed",
            "read",
            "waiting to read its next request with this answer unwritten",
        ),
    ] {
        let (mut program, _) =
            Program::start(&script(&dir, name, &[answer]), None).expect("starts");
        let refused = program
            .prepare(&serde_json::json!({}), Duration::from_millis(300))
            .expect_err(name);
        assert!(refused.contains(says), "{name}: {refused}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Seeds sent at once are answered as if sent one by one: when a process
/// dies or hangs on a seed, nothing it still held counts, and that seed
/// and the ones after it are asked again alone, one at a time, in a new
/// process. (The script answers from its first answer in each process, so
/// the seed asked alone gets the first answer, and the one after it breaks
/// alone.)
#[test]
fn a_batch_that_breaks_is_asked_again_alone() {
    let dir = std::env::temp_dir().join(format!("pregen-batch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    for (name, broken, watchdog, says) in [
        (
            "dies",
            "exit",
            Duration::from_secs(20),
            Some("ended before answering"),
        ),
        ("hangs", "-", Duration::from_millis(300), None),
    ] {
        let command = script(&dir, name, &[rejected_json(), broken, rejected_json()]);
        let (mut program, _) = Program::start(&command, None).expect("starts");
        let mut outcomes = Vec::new();
        program.generate_many(
            &[1, 2, 3, 4],
            &serde_json::json!({}),
            100,
            watchdog,
            &mut |seed, o| outcomes.push((seed, o.result)),
        );
        let seeds: Vec<u64> = outcomes.iter().map(|(s, _)| *s).collect();
        assert_eq!(seeds, [1, 2, 3, 4], "{name}: every seed answered, in order");
        let too_easy = |r: &Result<Candidate, Rejection>| matches!(r, Err(r) if r.code() == Some(Code::TooEasy));
        assert!(too_easy(&outcomes[0].1), "{name}: {:?}", outcomes[0]);
        let broke = |r: &Result<Candidate, Rejection>| match says {
            Some(says) => {
                matches!(r, Err(Rejection::Refused(r)) if r.code == Code::Broken && r.detail.contains(says))
            }
            None => *r == Err(Rejection::Timeout),
        };
        assert!(
            too_easy(&outcomes[1].1),
            "{name}, asked again alone: {:?}",
            outcomes[1]
        );
        assert!(
            broke(&outcomes[2].1),
            "{name}, broken alone: {:?}",
            outcomes[2]
        );
        assert!(too_easy(&outcomes[3].1), "{name}: {:?}", outcomes[3]);
        assert_eq!(program.reruns(), 1, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program in `dir` (`NAME.sh`, which appends its pid to `dir/pids` as it
/// starts) that answers `prepare` with yes and every seed `unsolvable`
/// after `pause` (shell `sleep` words, empty for none); `concurrent` as its
/// description says. Its game, registered.
fn unsolvable_program(
    dir: &std::path::Path,
    name: &str,
    concurrent: bool,
    pause: &str,
) -> GameKind {
    let id = "id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')";
    let script = format!(
        "echo $$ >> pids\nread line\n{id}\n\
         echo \"{{\\\"id\\\":$id,\\\"describe\\\":{{\\\"protocol\\\":1,\\\"name\\\":\\\"{name}\\\",\\\"version\\\":\\\"1\\\",\\\"text_format\\\":\\\"x\\\",\\\"params\\\":{{}},\\\"metrics\\\":[],\\\"concurrent\\\":{concurrent}}}}}\"\n\
         while read line; do\n{id}\ncase \"$line\" in\n\
         *prepare*) echo \"{{\\\"id\\\":$id,\\\"prepare\\\":{{\\\"ok\\\":true}}}}\" ;;\n\
         *) {pause}echo \"{{\\\"id\\\":$id,\\\"outcome\\\":{{\\\"status\\\":\\\"unsolvable\\\",\\\"generate_ms\\\":1,\\\"solve_ms\\\":1,\\\"nodes\\\":0}}}}\" ;;\n\
         esac\ndone\n"
    );
    std::fs::write(dir.join(format!("{name}.sh")), script).expect("script");
    GameKind::external(&ProgramSpec {
        command: vec!["sh".into(), format!("{name}.sh")],
        dir: dir.to_path_buf(),
        files: Vec::new(),
    })
    .expect("starts")
}

/// A program that runs several seeds at once (`concurrent`) has one
/// process, which the threads take in turn; every seed is answered.
#[test]
fn a_concurrent_program_runs_as_one_process() {
    let dir = std::env::temp_dir().join(format!("pregen-concurrent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let game = unsolvable_program(&dir, "together", true, "sleep 0.01; ");
    let prepared = game.prepare(&serde_json::json!({})).expect("params");
    let answered = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for first in [0u64, 100] {
            let (prepared, answered) = (&prepared, &answered);
            scope.spawn(move || {
                let seeds: Vec<u64> = (first..first + 8).collect();
                prepared.run_many(&seeds, &|| Budget::nodes(10), &mut |_, outcome| {
                    assert_eq!(outcome.result, Err(Rejection::Unsolvable));
                    answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                });
            });
        }
    });
    assert_eq!(answered.into_inner(), 16);
    let pids = std::fs::read_to_string(dir.join("pids")).expect("pids");
    assert_eq!(pids.lines().count(), 1, "one process: {pids}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program lives while a handle on its game does: registering it again
/// meanwhile gives the same program (one process); once the last handle is
/// dropped its process is stopped, and registering starts it anew. Its
/// reason code still reads back by number after it is gone, as a stored
/// outcome's would.
#[test]
fn a_program_lives_while_its_game_is_held() {
    let dir = std::env::temp_dir().join(format!("pregen-held-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let id = "id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')";
    let script = format!(
        "echo $$ >> pids\nread line\n{id}\n\
         echo \"{{\\\"id\\\":$id,\\\"describe\\\":{{\\\"protocol\\\":1,\\\"name\\\":\\\"held\\\",\\\"version\\\":\\\"1\\\",\\\"text_format\\\":\\\"x\\\",\\\"params\\\":{{}},\\\"metrics\\\":[],\\\"reasons\\\":[{{\\\"word\\\":\\\"no spark\\\",\\\"status\\\":\\\"rejected\\\",\\\"meaning\\\":\\\"nothing lit\\\"}}]}}}}\"\n\
         while read line; do\n{id}\n\
         echo \"{{\\\"id\\\":$id,\\\"prepare\\\":{{\\\"ok\\\":true}}}}\"\n\
         done\n"
    );
    std::fs::write(dir.join("held.sh"), script).expect("script");
    let spec = ProgramSpec {
        command: vec!["sh".into(), "held.sh".into()],
        dir: dir.clone(),
        files: Vec::new(),
    };
    let pids = || {
        std::fs::read_to_string(dir.join("pids"))
            .expect("pids")
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let game = GameKind::external(&spec).expect("starts");
    let code = game.code("no spark").expect("its own code");
    let again = GameKind::external(&spec).expect("the same");
    assert_eq!(pids().len(), 1, "one program while held: {:?}", pids());
    let prepared = game.prepare(&serde_json::json!({})).expect("params");
    drop((game, again));
    let first = pids()[0].clone();
    assert!(alive(&first), "a prepared game holds its program");
    drop(prepared);
    assert!(!alive(&first), "the last handle dropped stops the program");
    assert_eq!(crate::registry::code_of_number(code.number()), Some(code));
    let restarted = GameKind::external(&spec).expect("starts again");
    assert_eq!(restarted.code("no spark"), Some(code));
    assert_eq!(pids().len(), 2, "started anew: {:?}", pids());
    drop(restarted);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program's identity is its files' bytes: kept for files unchanged on
/// disk, read anew once one changes.
#[test]
fn an_identity_follows_the_programs_files() {
    let dir = std::env::temp_dir().join(format!("pregen-identity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("game.py"), "print('a')\n").expect("program");
    let spec = ProgramSpec {
        command: vec!["python3".into(), "game.py".into()],
        dir: dir.clone(),
        files: Vec::new(),
    };
    let first = identity(&spec).expect("an identity");
    assert!(
        first.starts_with("sha256:") && first.len() == 7 + 64,
        "{first}"
    );
    assert_eq!(identity(&spec).expect("again"), first);
    std::fs::write(dir.join("game.py"), "print('changed')\n").expect("program");
    let changed = identity(&spec).expect("an identity");
    assert_ne!(changed, first, "a changed file is read anew");
    std::fs::remove_file(dir.join("game.py")).expect("remove");
    let gone = identity(&spec).expect_err("no file left to name");
    assert!(gone.to_string().contains("names a file"), "{gone}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// This process's resident memory in KiB (Linux).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Whether process `pid` is alive: it exists and is not a zombie (one
/// killed whose parent is gone waits there for its reaper).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .ok()
        .and_then(|stat| {
            let state = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .next()?
                .to_string();
            Some(state != "Z" && state != "X")
        })
        .unwrap_or(false)
}

/// a program that writes lines nobody asked for holds a bounded
/// share of pregen's memory (its lines were once queued without bound: 6 GB
/// in 30 s), the stray line is that seed's protocol error, and what the
/// program forked dies with it; a program that closes its stdout but keeps
/// running fails its seed at once instead of holding its thread for ever.
#[test]
fn a_hostile_program_is_held_to_bounds_and_killed_whole() {
    let dir = std::env::temp_dir().join(format!("pregen-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let describe = r#"{"id":ID,"describe":{"protocol":1,"name":"spam","version":"1","text_format":"x","params":{},"metrics":[]}}"#;
    let head = format!(
        "read line\nid=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n\
         echo '{describe}' | sed \"s/ID/$id/\"\n"
    );
    let spam = dir.join("spam.sh");
    let pid_file = dir.join("spam.pid");
    std::fs::write(
        &spam,
        format!(
            "{head}( while :; do echo '{{\"id\":12345,\"error\":\"unasked\"}}'; done ) &\n\
             echo $! > {}\nread line\nsleep 600\n",
            pid_file.display()
        ),
    )
    .expect("script");
    let before = resident_kib();
    let command = vec!["sh".to_string(), spam.display().to_string()];
    let (mut program, _) = Program::start(&command, None).expect("starts");
    std::thread::sleep(Duration::from_secs(2));
    let grown = resident_kib().saturating_sub(before);
    assert!(
        grown < 100 * 1024,
        "pregen grew {grown} KiB while the program spoke unasked"
    );
    let outcome = program.generate(1, &serde_json::json!({}), 100, Duration::from_secs(20));
    let Err(Rejection::Refused(reason)) = &outcome.result else {
        panic!("{:?}", outcome.result);
    };
    assert_eq!(reason.code, Code::Broken, "{reason:?}");
    let forked = std::fs::read_to_string(&pid_file).expect("the forked writer's pid");
    drop(program);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(&forked), "the program's child {forked} outlived it");

    // Its stdout closed, the process sleeping on: the seed fails, now.
    let closed = dir.join("closed.sh");
    std::fs::write(&closed, format!("{head}exec 1>&-\nsleep 600\n")).expect("script");
    let command = vec!["sh".to_string(), closed.display().to_string()];
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut program, _) = Program::start(&command, None).expect("starts");
        let _ = tx.send(program.generate(1, &serde_json::json!({}), 100, Duration::from_secs(300)));
    });
    let outcome = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("a program that closed its stdout held its thread");
    let Err(Rejection::Refused(reason)) = &outcome.result else {
        panic!("{:?}", outcome.result);
    };
    assert!(
        reason.detail.contains("ended before answering"),
        "{reason:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The coordinator's runs apart from the pool (the determinism probe, the
/// cross-check and disputes run each seed in a second process) reuse one
/// warm process, never a process per seed: ten seeds run twice start two
/// processes in all.
#[test]
fn runs_apart_from_the_pool_reuse_a_warm_process() {
    let dir = std::env::temp_dir().join(format!("pregen-apart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let game = unsolvable_program(&dir, "apart", false, "");
    let prepared = game.prepare(&serde_json::json!({})).expect("params");
    for seed in 0..10 {
        let outcome = prepared
            .run_twice(seed, &|| Budget::nodes(10))
            .expect("one answer");
        assert_eq!(outcome.result, Err(Rejection::Unsolvable));
    }
    let pids = std::fs::read_to_string(dir.join("pids")).expect("pids");
    assert_eq!(pids.lines().count(), 2, "the pool's and one apart: {pids}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program that cannot start says where it was started, why the system
/// refused, and how to run a copy elsewhere.
#[test]
fn a_program_that_cannot_start_names_its_folder_and_the_cause() {
    let dir = std::env::temp_dir().join(format!("pregen-nostart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let command = vec!["./not-here.py".to_string()];
    let Err(e) = Program::start(&command, Some(dir.clone())) else {
        panic!("a missing program started");
    };
    let said = e.to_string();
    assert!(
        said.contains(&format!(
            "cannot start `./not-here.py` in {}",
            dir.display()
        )),
        "{said}"
    );
    assert!(said.contains("No such file or directory"), "{said}");
    assert!(said.contains("--program-dir"), "{said}");
    // Its interpreter starts, its file is not there: the same words.
    let command = vec!["sh".to_string(), "not-here.sh".to_string()];
    let Err(e) = Program::start(&command, Some(dir.clone())) else {
        panic!("a missing script described itself");
    };
    let said = e.to_string();
    assert!(
        said.contains("the program ended before answering"),
        "{said}"
    );
    assert!(
        said.contains(&format!("started in {}", dir.display())),
        "{said}"
    );
    assert!(said.contains("--program-dir"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a program forks is its own however it leaves: a child in a session
/// of its own is counted by the watchdog and killed with the program, and a
/// daemon (forked twice, its parent gone) is handed to pregen and killed too.
#[test]
fn a_programs_children_are_counted_and_killed_however_they_leave() {
    let dir = std::env::temp_dir().join(format!("pregen-escape-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (child, daemon) = (dir.join("child.pid"), dir.join("daemon.pid"));
    let describe = r#"{"id":ID,"describe":{"protocol":1,"name":"escape","version":"1","text_format":"x","params":{},"metrics":[]}}"#;
    let script = format!(
        "read line\nid=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n\
         setsid sh -c 'echo $$ > {child}; while :; do :; done' &\n\
         ( setsid sh -c 'echo $$ > {daemon}; while :; do sleep 1; done' & )\n\
         echo '{describe}' | sed \"s/ID/$id/\"\n\
         read line\nsleep 600\n",
        child = child.display(),
        daemon = daemon.display(),
    );
    std::fs::write(dir.join("escape.sh"), script).expect("script");
    let command = vec![
        "sh".to_string(),
        dir.join("escape.sh").display().to_string(),
    ];
    let (mut program, _) = Program::start(&command, None).expect("starts");
    // The program sleeps, its child in another session spins: the CPU time
    // is the program's.
    let outcome = program.generate(1, &serde_json::json!({}), 100, Duration::from_millis(500));
    assert_eq!(outcome.result, Err(Rejection::Timeout));
    let read = |path: &std::path::Path| {
        for _ in 0..100 {
            if let Ok(pid) = std::fs::read_to_string(path)
                && !pid.trim().is_empty()
            {
                return pid.trim().to_string();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("{} not written", path.display());
    };
    let (child, daemon) = (read(&child), read(&daemon));
    drop(program);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !alive(&child),
        "the child in its own session {child} outlived the program"
    );
    assert!(!alive(&daemon), "the daemon {daemon} outlived the program");
    let _ = std::fs::remove_dir_all(&dir);
}
