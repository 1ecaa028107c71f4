//! The inputs pregen takes from outside, one function per parser, each of
//! which must refuse what it cannot handle and never panic. The fuzz targets
//! in `checks/fuzz/` call these on every input they generate; `tests/corpora.rs`
//! replays every input the fuzzers kept (their corpora and the crashes they
//! found) so that CI holds the line without running a fuzzer.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pregen_coordinator::CommitLog;
use pregen_coordinator::LogKey;
use pregen_coordinator::{Scheduler, SchedulerConfig};
use pregen_games::external::ResponseBody;
use pregen_games::{Budget, GameKind, Outcome, PreparedGame};
use pregen_pack::Job;
use pregen_proto::v1::SeedResult;
use prost::Message;

/// What a fuzz target does with one input.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, as `checks/fuzz/fuzz_targets/<name>.rs` and
/// `checks/fuzz/corpus/<name>/` spell them.
pub const TARGETS: [(&str, Target); 5] = [
    ("level_text", level_text),
    ("job_file", job_file),
    ("seed_result", seed_result),
    ("commit_segment", commit_segment),
    ("game_message", game_message),
];

/// Node budget of the solvers under fuzzing: small, so every input is fast.
const FUZZ_NODES: u64 = 2_000;

/// A level file for one game (the first byte picks it), read and solved
/// with a small budget: every game's text parser (sokoban's XSB collections
/// included) and its solver.
pub fn level_text(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let games: Vec<GameKind> = GameKind::all().collect();
    let game = &games[pick as usize % games.len()];
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let _ = game.solve_text(text, &|| Budget::nodes(FUZZ_NODES), &mut drop);
}

/// A job file, parsed and validated.
pub fn job_file(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(job) = Job::parse(text)
    {
        let _ = job.id();
        let _ = job.plan();
    }
}

/// A worker's result off the wire, decoded, converted and, when it carries
/// a level, checked by the coordinator's checks (a tilt job, default params).
pub fn seed_result(data: &[u8]) {
    let Ok(result) = SeedResult::decode(data) else {
        return;
    };
    let Ok(outcome) = Outcome::try_from(result) else {
        return;
    };
    if let Ok(level) = outcome.result {
        let _ = tilt().check(&level);
    }
}

/// A game program's response line, read as a worker reads it: parsed, an
/// outcome checked whole, a description's rating model read, an accepted
/// level checked by the coordinator's checks (a tilt job, default params),
/// and a picture made safe as the report shows it.
pub fn game_message(data: &[u8]) {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(response) = pregen_games::external::read_response(line) else {
        return;
    };
    match response.body {
        ResponseBody::Outcome(message) => {
            if let Ok(Outcome {
                result: Ok(level), ..
            }) = message.into_outcome(&[])
            {
                let _ = tilt().check(&level);
            }
        }
        ResponseBody::Describe(d) => {
            let _ = pregen_games::rating::Model::parse(&d.rating_model, &d.name, &[]);
        }
        ResponseBody::Render(picture) => {
            let _ = pregen_analysis::picture::program_picture(&picture.svg);
        }
        _ => {}
    }
}

fn tilt() -> &'static PreparedGame {
    static TILT: OnceLock<PreparedGame> = OnceLock::new();
    TILT.get_or_init(|| {
        GameKind::from_name("tilt")
            .and_then(|g| g.prepare(&serde_json::json!({})))
            .expect("tilt with default params")
    })
}

/// A commit-log segment as found on disk, read by a resuming coordinator
/// and, if it reads, replayed into a scheduler (refusals and all). A header
/// line that names a keyed checksum gets it recomputed under the log's key,
/// as a log editor who holds the key would, so the fuzzer reaches the body.
pub fn commit_segment(data: &[u8]) {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let job = fuzz_job();
    let mut key = LogKey::from_bytes([7; 16]);
    if key.keep(dir.path(), true).is_err() {
        return;
    }
    let data = resealed(data, &key).unwrap_or_else(|| data.to_vec());
    if std::fs::write(dir.path().join("seg-00000001.bin"), data).is_err() {
        return;
    }
    let Ok(entries) = CommitLog::read(dir.path(), job) else {
        return;
    };
    let config = SchedulerConfig {
        strata: job.plan().iter().map(|p| (p.first_seed, p.count)).collect(),
        seeds_per_lease: 8,
        lease_ttl: Duration::from_secs(1),
        max_seeds: None,
        progress_limit: Duration::from_secs(1),
        cross_check: 0.5,
        check_key: [7; 16],
        audit_duplicate_levels: true,
        bands: Vec::new(),
    };
    let mut scheduler = Scheduler::new(config, entries);
    let _ = scheduler.grant(1, Instant::now());
    let _ = scheduler.take_selection();
}

/// `data` with its header's keyed checksum made right for its body, if its
/// header line is a JSON object with one.
fn resealed(data: &[u8], key: &LogKey) -> Option<Vec<u8>> {
    let end = data.iter().position(|&b| b == b'\n')?;
    let mut header: serde_json::Value = serde_json::from_slice(&data[..end]).ok()?;
    let body = &data[end + 1..];
    let job_id = header.get("job_id")?.as_str()?.to_string();
    let n = header.get("segment")?.as_u64()?;
    let records = header.get("records")?.as_u64()?;
    let seal = key.seal(&job_id, n, records, body);
    *header.get_mut("body")?.get_mut("hmac_sha256")? = seal.into();
    let mut out = serde_json::to_vec(&header).ok()?;
    out.push(b'\n');
    out.extend_from_slice(body);
    Some(out)
}

/// The job whose log `commit_segment` reads.
fn fuzz_job() -> &'static Job {
    static JOB: OnceLock<Job> = OnceLock::new();
    JOB.get_or_init(|| Job::parse("pack = \"fuzz\"\ngame = \"tilt\"\ncount = 10\n").expect("job"))
}
