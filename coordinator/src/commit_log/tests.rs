//! The commit log's tests: round trips, damage of every kind, torn ends,
//! segments forged without the key, and logs of older formats.

use super::*;
use pregen_pack::{Reason, Status};

fn job(count: u64) -> Job {
    Job::parse(&format!("pack = \"t\"\ngame = \"tilt\"\ncount = {count}\n")).expect("valid job")
}

/// Opens the log and collects what it held.
fn open(dir: &Path, job: &Job) -> Result<(CommitLog, Vec<Entry>), CoordinatorError> {
    let mut entries = Vec::new();
    let key = LogKey::read_or_draw(dir)?;
    let log = CommitLog::open(dir, job, key, |e| entries.push(e))?;
    Ok((log, entries))
}

fn rec(seed: u64) -> Entry {
    Entry::Result(record(seed))
}

fn seeds(entries: &[Entry]) -> Vec<u64> {
    entries
        .iter()
        .filter_map(|e| e.result().map(|r| r.seed))
        .collect()
}

fn record(seed: u64) -> SeedRecord {
    SeedRecord {
        seed,
        status: Status::Unsolvable,
        reason: None,
        level: None,
        generate_ms: 1.5,
        solve_ms: 0.5,
        nodes: 7,
        worker: "w1".into(),
        attempt: 1,
    }
}

#[test]
fn segments_survive_reopen_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, old) = open(dir.path(), &job(5)).expect("open");
    assert!(old.is_empty());
    log.append(&[rec(1), rec(2)]).expect("append");
    log.append(&[]).expect("empty batch");
    log.append(&[rec(3)]).expect("append");
    drop(log);
    let (mut log, old) = open(dir.path(), &job(5)).expect("reopen");
    assert_eq!(seeds(&old), vec![1, 2, 3]);
    log.append(&[rec(4)]).expect("append after reopen");
    drop(log);
    let (_, old) = open(dir.path(), &job(5)).expect("reopen");
    assert_eq!(old.len(), 4);
    // A leftover temp file from a crash mid-write is ignored.
    fs::write(dir.path().join(".seg-00000009.jsonl.tmp"), b"{garbage").expect("write");
    assert_eq!(open(dir.path(), &job(5)).expect("reopen").1.len(), 4);
}

#[test]
fn the_copy_in_memory_is_the_log_while_it_fits() {
    let append = |log: &mut CommitLog, batch: Vec<Entry>| {
        log.append(&batch).expect("append");
        log.keep(batch);
    };
    let taken = |log: &mut CommitLog| {
        let mut entries = Vec::new();
        log.take_entries(&job(5), |e| entries.push(e))
            .expect("entries");
        entries
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    log.keep_in_memory(1 << 20);
    let refused = Entry::Refused {
        worker: "w1".into(),
        reason: "why".into(),
    };
    append(&mut log, vec![rec(1), refused, rec(2)]);
    append(&mut log, vec![rec(3)]);
    assert!(log.kept.is_some());
    let from_memory = taken(&mut log);
    assert_eq!(
        from_memory,
        CommitLog::read(dir.path(), &job(5)).expect("read")
    );
    // Taken once; then read back from disk, alike.
    assert!(log.kept.is_none());
    assert_eq!(taken(&mut log), from_memory);

    // Past the limit the copy is dropped whole and the log read back.
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    log.keep_in_memory(3 * rec(1).result().expect("a result").memory());
    append(&mut log, vec![rec(1), rec(2)]);
    assert!(log.kept.is_some());
    append(&mut log, vec![rec(3), rec(4)]);
    assert!(log.kept.is_none(), "dropped past the limit");
    append(&mut log, vec![rec(5)]);
    assert_eq!(seeds(&taken(&mut log)), vec![1, 2, 3, 4, 5]);

    // A resumed log is on disk: nothing is kept.
    drop(log);
    let (mut log, _) = open(dir.path(), &job(5)).expect("reopen");
    log.keep_in_memory(1 << 20);
    assert!(log.kept.is_none());
    append(&mut log, vec![rec(6)]);
    assert_eq!(seeds(&taken(&mut log)), vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn refusals_are_entries_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    let refused = Entry::Refused {
        worker: "w1".into(),
        reason: "seed 1: it reported \"x\"".into(),
    };
    log.append(&[rec(1), refused.clone(), rec(2)])
        .expect("append");
    let back = CommitLog::read(dir.path(), &job(5)).expect("read");
    assert_eq!(back, vec![rec(1), refused, rec(2)]);
}

#[test]
fn another_job_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    open(dir.path(), &job(5)).expect("open");
    let err = open(dir.path(), &job(6)).expect_err("different job");
    assert!(err.to_string().contains("holds job"), "{err}");
}

#[test]
fn every_float_reads_back_bit_for_bit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    // Values whose shortest decimal form a best-effort parser reads one
    // ULP off, and a spread of bit patterns.
    let mut values = vec![0.1 + 0.2, 2.0f64.sqrt(), 1.0 / 3.0, 5e-324, f64::MAX];
    let mut bits = 0x3ff0_0000_0000_0001u64;
    for _ in 0..2000 {
        bits = bits
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = f64::from_bits(bits >> 2 | 0x3000_0000_0000_0000);
        values.push(v);
    }
    let records: Vec<SeedRecord> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| SeedRecord {
            generate_ms: v,
            solve_ms: v / 7.0,
            ..record(i as u64)
        })
        .collect();
    let entries: Vec<Entry> = records.iter().cloned().map(Entry::Result).collect();
    log.append(&entries).expect("append");
    let back = CommitLog::read(dir.path(), &job(5)).expect("read");
    let back: Vec<&SeedRecord> = back.iter().filter_map(Entry::result).collect();
    for (a, b) in records.iter().zip(back) {
        assert_eq!(a.generate_ms.to_bits(), b.generate_ms.to_bits());
        assert_eq!(a.solve_ms.to_bits(), b.solve_ms.to_bits());
    }
}

fn job_b() -> Job {
    Job::parse("pack = \"t\"\ngame = \"tilt\"\ncount = 5\n[params]\nwidth = 4\n")
        .expect("valid job")
}

fn error(dir: &Path, job: &Job) -> String {
    open(dir, job).expect_err("refused").to_string()
}

#[test]
fn a_second_coordinator_is_refused_while_the_first_holds_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = open(dir.path(), &job(5)).expect("open");
    let err = error(dir.path(), &job(5));
    assert!(err.contains("in use by another coordinator (pid"), "{err}");
    drop(first);
    open(dir.path(), &job(5)).expect("free again");
}

#[test]
fn foreign_edited_and_missing_segments_are_refused_naming_the_file() {
    let a = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(a.path(), &job(5)).expect("open");
    log.append(&[rec(1), rec(2)]).expect("append");
    log.append(&[rec(3)]).expect("append");
    drop(log);
    let seg1 = a.path().join("seg-00000001.bin");

    // Another job's segment, copied in (same pack name, other params).
    let b = tempfile::tempdir().expect("tempdir");
    open(b.path(), &job_b()).expect("open b");
    fs::copy(&seg1, b.path().join("seg-00000001.bin")).expect("copy");
    let err = error(b.path(), &job_b());
    assert!(err.contains("seg-00000001.bin: written for job"), "{err}");

    // job.json deleted and the folder opened for another job.
    fs::remove_file(a.path().join("job.json")).expect("rm");
    let err = error(a.path(), &job_b());
    assert!(err.contains("written for job"), "{err}");
    fs::write(
        a.path().join("job.json"),
        serde_json::to_string(&job(5)).expect("json"),
    )
    .expect("restore");

    // A byte of the body changed, or the body cut short.
    let bytes = fs::read(&seg1).expect("read");
    let mut edited = bytes.clone();
    let last = edited.len() - 1;
    edited[last] ^= 1;
    fs::write(&seg1, &edited).expect("edit");
    let err = error(a.path(), &job(5));
    assert!(
        err.contains("seg-00000001.bin: the segment fails its keyed checksum"),
        "{err}"
    );
    fs::write(&seg1, &bytes[..bytes.len() - 3]).expect("cut");
    let err = error(a.path(), &job(5));
    assert!(err.contains("the header says"), "{err}");

    // A seed the job never had, in a segment otherwise whole.
    let foreign = SeedRecord {
        seed: 2199023255552,
        ..record(2)
    };
    let key = LogKey::read(a.path()).expect("key").expect("a key");
    let segment = SegmentEncoder::new(key)
        .and_then(|mut e| e.encode(&job(5).id(), 1, &[rec(1), Entry::Result(foreign)]))
        .expect("encode");
    fs::write(&seg1, segment).expect("write");
    let err = error(a.path(), &job(5));
    assert!(
        err.contains("entry 2 holds seed 2199023255552, not one of the job's"),
        "{err}"
    );
    fs::write(&seg1, &bytes).expect("restore");
    open(a.path(), &job(5)).expect("whole again");

    // Two segments under one number, and one removed from the middle.
    fs::write(a.path().join("seg-00000001.jsonl"), b"{}\n").expect("write");
    let err = error(a.path(), &job(5));
    assert!(err.contains("a second segment numbered 1"), "{err}");
    fs::remove_file(a.path().join("seg-00000001.jsonl")).expect("rm");
    fs::rename(&seg1, a.path().join("moved-away")).expect("move");
    let err = error(a.path(), &job(5));
    assert!(err.contains("segment 1 is missing"), "{err}");
}

#[test]
fn a_torn_last_segment_is_cut_back_and_the_log_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    log.append(&[rec(1)]).expect("append");
    // Big enough for several zstd blocks, so a cut keeps some whole.
    let many: Vec<Entry> = (2..40_000)
        .map(|seed| {
            Entry::Result(SeedRecord {
                status: Status::Rejected,
                reason: Some(Reason::new(
                    pregen_games::doors::reasons::DEFECT,
                    format!("{:x}", seed * 7919),
                )),
                nodes: seed * 31,
                ..record(seed)
            })
        })
        .collect();
    log.append(&many).expect("append");
    drop(log);
    let seg2 = dir.path().join("seg-00000002.bin");
    let bytes = fs::read(&seg2).expect("read");
    fs::write(&seg2, &bytes[..bytes.len() - bytes.len() / 3]).expect("tear");
    let (mut log, old) = open(dir.path(), &job(5)).expect("cut back");
    let kept = seeds(&old);
    assert_eq!(kept, [1], "nothing of a torn segment is taken");
    log.append(&[rec(40_000)]).expect("append");
    drop(log);
    let (_, again) = open(dir.path(), &job(5)).expect("reopen");
    assert_eq!(seeds(&again).len(), kept.len() + 1);
    // Now that a segment follows it, a cut in segment 2 is damage.
    let whole = fs::read(&seg2).expect("read");
    fs::write(&seg2, &whole[..whole.len() - 5]).expect("tear");
    let err = error(dir.path(), &job(5));
    assert!(err.contains("seg-00000002.bin: a body of"), "{err}");
}

/// A last segment edited without the key and recompressed shorter, its
/// header kept, looks torn: nothing of it is taken (every entry decodes,
/// but none is proven), and the repair re-seals none of them.
#[test]
fn a_shortened_last_segment_is_dropped_not_taken() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    log.append(&[rec(1)]).expect("append");
    let many: Vec<Entry> = (2..2_000).map(|seed| Entry::Result(record(seed))).collect();
    log.append(&many).expect("append");
    drop(log);
    let seg2 = dir.path().join("seg-00000002.bin");
    let bytes = fs::read(&seg2).expect("read");
    let cut = bytes
        .iter()
        .position(|&b| b == b'\n')
        .expect("a header line")
        + 1;
    let plain = zstd::decode_all(&bytes[cut..]).expect("the body is zstd");
    let shorter = zstd::encode_all(&plain[..], 19).expect("zstd");
    assert!(
        shorter.len() < bytes.len() - cut,
        "the forgery must be shorter"
    );
    fs::write(&seg2, [&bytes[..cut], &shorter[..]].concat()).expect("forge");
    let (log, old) = open(dir.path(), &job(5)).expect("opens, dropping the segment");
    assert_eq!(seeds(&old), [1], "no entry of a shortened segment is taken");
    drop(log);
    let (_, again) = open(dir.path(), &job(5)).expect("reopen");
    assert_eq!(seeds(&again), [1], "and none was sealed again");
}

/// A forger who rewrites a segment consistently (its count, length and
/// checksum recomputed) but cannot read the key: sealing it under a key of
/// their own, or in the unkeyed form of format 4, is refused; so is a log
/// whose key file is gone.
#[test]
fn segments_rewritten_without_the_key_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    log.append(&[rec(1), rec(2)]).expect("append");
    drop(log);
    let seg1 = dir.path().join("seg-00000001.bin");
    let whole = fs::read(&seg1).expect("read");
    let forged = Entry::Result(SeedRecord {
        nodes: 1,
        ..record(2)
    });

    // Sealed under a key of the forger's own.
    let guessed = LogKey::read_or_draw(tempfile::tempdir().expect("tempdir").path()).expect("key");
    let segment = SegmentEncoder::new(guessed)
        .and_then(|mut e| e.encode(&job(5).id(), 1, &[rec(1), forged.clone()]))
        .expect("encode");
    fs::write(&seg1, &segment).expect("write");
    let err = error(dir.path(), &job(5));
    assert!(
        err.contains("seg-00000001.bin: the segment fails its keyed checksum"),
        "{err}"
    );

    // The header of format 4: the body's plain SHA-256, which anyone can
    // recompute.
    let body_at = segment.iter().position(|&b| b == b'\n').expect("header") + 1;
    let body = &segment[body_at..];
    let old = format!(
        "{{\"format\":\"pregen-commit-log\",\"version\":4,\"job_id\":\"{}\",\"segment\":1,\
         \"records\":2,\"body\":{{\"bytes\":{},\"sha256\":\"{}\"}}}}\n",
        job(5).id(),
        body.len(),
        pregen_games::sha256_hex(body)
    );
    fs::write(&seg1, [old.as_bytes(), body].concat()).expect("write");
    let err = error(dir.path(), &job(5));
    assert!(
        err.contains("seg-00000001.bin: written by an older pregen (commit-log format 4)"),
        "{err}"
    );

    // The whole segment back, its key gone.
    fs::write(&seg1, &whole).expect("restore");
    let (_, entries) = open(dir.path(), &job(5)).expect("whole again");
    assert_eq!(seeds(&entries), [1, 2]);
    fs::remove_file(dir.path().join(key::KEY_FILE)).expect("rm key");
    let err = CommitLog::read(dir.path(), &job(5))
        .expect_err("no key")
        .to_string();
    assert!(err.contains("cross-check.key is missing"), "{err}");
    let err = error(dir.path(), &job(5));
    assert!(err.contains("cross-check.key is missing"), "{err}");
}

/// A key file that is a device or a FIFO is refused at once: never read
/// without end (`/dev/zero`), never waited on (a FIFO with no writer).
#[test]
fn a_key_that_is_not_a_file_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut log, _) = open(dir.path(), &job(5)).expect("open");
    log.append(&[rec(1)]).expect("append");
    drop(log);
    let key = dir.path().join(key::KEY_FILE);
    fs::remove_file(&key).expect("rm key");
    std::os::unix::fs::symlink("/dev/zero", &key).expect("link");
    let err = error(dir.path(), &job(5));
    assert!(err.contains("cross-check.key"), "{err}");
    fs::remove_file(&key).expect("rm link");
    let made = std::process::Command::new("mkfifo")
        .arg(&key)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let at = dir.path().to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(error(&at, &job(5)));
    });
    let err = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("a FIFO key held the resume");
    assert!(err.contains("cross-check.key"), "{err}");
}

/// The commit log stores a level as the wire's `pregen.v1.Level`: the
/// log's bytes of a level are the wire's encoding of it, and the wire's
/// bytes read back through the log's decoder as the same level. One
/// schema for a stored level, whichever way it came.
#[test]
fn a_stored_level_is_the_wires_message() {
    use pregen_proto::v1::Level;
    use prost::Message;

    /// A record's field 4, the level, and nothing else of it.
    #[derive(Clone, PartialEq, prost::Message)]
    struct LevelField {
        #[prost(message, optional, tag = "4")]
        level: Option<Level>,
    }

    let levels = [
        pregen_games::Candidate {
            difficulty: 0.1 + 0.2,
            moves: 17,
            moves_optimal: true,
            layout: "#####\n#1.2#\n#####\n".into(),
            level_json: "{\"w\":5}".into(),
            solution: "LRUD".into(),
            metrics: [
                ("states", 120.0),
                ("zero", 0.0),
                ("share", -0.25),
                ("", 3.0),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            level_hash: "ab".repeat(32),
            canonical: Some("cd".repeat(32)),
        },
        pregen_games::Candidate {
            difficulty: 0.0,
            moves: 0,
            moves_optimal: false,
            layout: String::new(),
            level_json: String::new(),
            solution: String::new(),
            metrics: Default::default(),
            level_hash: String::new(),
            canonical: None,
        },
    ];
    for level in levels {
        let record = SeedRecord {
            status: Status::Accepted,
            level: Some(level.clone()),
            ..record(9)
        };
        let mut log = Vec::new();
        pregen_pack::codec::encode(&record, &mut log);
        let wire = Level::from(level.clone());
        let stored = LevelField::decode(&log[..])
            .expect("the log's record")
            .level;
        assert_eq!(
            stored.clone().map(|l| l.encode_to_vec()),
            Some(wire.encode_to_vec()),
            "the log's level is the wire's bytes"
        );
        assert_eq!(stored, Some(wire.clone()));
        // The wire's bytes in a record's place read back as the level.
        let mut bytes = Vec::new();
        pregen_pack::codec::encode(
            &SeedRecord {
                level: None,
                ..record.clone()
            },
            &mut bytes,
        );
        bytes.extend(LevelField { level: Some(wire) }.encode_to_vec());
        let back = pregen_pack::codec::decode(&bytes).expect("decodes");
        assert_eq!(back.level, Some(level));
        assert_eq!(back, record);
    }
}
