//! The writer's tests: the same bytes whatever the sort's memory and the
//! order the tiers are written in.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::record::{Code, LevelRecord, Reason, Status};

fn job(count: u64) -> Job {
    Job::parse(&format!(
        "pack = \"w\"\ngame = \"tilt\"\ncount = {count}\n[campaigns]\ncount = 3\nlength = 40\n"
    ))
    .expect("valid job")
}

/// Seeds 0..n: every third accepted with a scattered difficulty.
fn records(n: u64) -> Vec<SeedRecord> {
    (0..n)
        .map(|seed| {
            let accepted = seed % 3 == 0;
            SeedRecord {
                seed,
                status: if accepted {
                    Status::Accepted
                } else {
                    Status::Rejected
                },
                reason: (!accepted).then(|| Reason::new(Code::TooEasy, "")),
                level: accepted.then(|| LevelRecord {
                    difficulty: (seed.wrapping_mul(2654435761) % 1000) as f64 / 100.0,
                    moves: (seed % 17) as u32,
                    moves_optimal: true,
                    layout: format!("#{seed}#\n"),
                    level_json: format!("{{\"seed\":{seed}}}"),
                    solution: "LR".into(),
                    metrics: [("states".to_string(), seed as f64)].into_iter().collect(),
                    level_hash: format!("{seed:064x}"),
                    canonical: None,
                }),
                generate_ms: seed as f64 / 3.0,
                solve_ms: 0.25,
                nodes: seed,
                worker: "w1".into(),
                attempt: 1,
            }
        })
        .collect()
}

fn write(dir: &Path, records: &[SeedRecord], options: WriteOptions) -> Manifest {
    let pack = PackDir::new(dir);
    let count = records.iter().filter(|r| r.accepted().is_some()).count() as u64;
    let mut writer = PackWriter::new(&pack, &job(count), options).expect("writer");
    // Given in an order unlike the seeds'.
    for r in records.iter().rev() {
        writer.add(r.clone()).expect("add");
    }
    writer.finish(&RunFacts::default()).expect("finish")
}

#[test]
fn the_sort_memory_changes_no_byte_of_the_pack() {
    let records = records(6000);
    let (a, b, c) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let memory = |sort_memory| WriteOptions {
        sort_memory,
        ..WriteOptions::default()
    };
    // Every tier handed whole to the pool; about one at a time (the
    // others written as they come); none (and the sorts spilled).
    let roomy = write(a.path(), &records, WriteOptions::default());
    let middling = write(c.path(), &records, memory(256 << 10));
    let tight = write(b.path(), &records, memory(16 << 10));
    assert_eq!(roomy.files, middling.files);
    assert_eq!(roomy.files, tight.files);
    assert_eq!(roomy.counts.accepted, 2000);
    assert!(
        !b.path().join(dir::SPILL).exists(),
        "the spill folder is removed"
    );
}

#[test]
fn the_progress_counts_every_record_then_every_level() {
    let records = records(600);
    let out = tempfile::tempdir().expect("tmp");
    let pack = PackDir::new(out.path());
    let progress = Arc::new(WriteProgress::default());
    let mut writer = PackWriter::new(&pack, &job(200), WriteOptions::default())
        .expect("writer")
        .with_progress(progress.clone());
    for r in &records[..250] {
        writer.add(r.clone()).expect("add");
    }
    assert_eq!((progress.records(), progress.levels()), (250, 0));
    for r in &records[250..] {
        writer.add(r.clone()).expect("add");
    }
    writer.finish(&RunFacts::default()).expect("finish");
    assert_eq!((progress.records(), progress.levels()), (600, 200));
}

#[test]
fn a_tier_splits_into_parts_of_row_groups_in_order() {
    let records = records(6000);
    let out = tempfile::tempdir().expect("tmp");
    let manifest = write(
        out.path(),
        &records,
        WriteOptions {
            sort_memory: 16 << 10,
            rows_per_group: 50,
            rows_per_part: 120,
            delivery: None,
        },
    );
    let pack = PackDir::new(out.path());
    let mut per_tier: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut parts = 0;
    for (tier, path) in pack.level_parts().expect("parts") {
        parts += 1;
        let batches = crate::read::read_batches(&path).expect("reads");
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert!(rows <= 120, "{} holds {rows} rows", path.display());
        let meta = parquet::file::reader::SerializedFileReader::new(
            std::fs::File::open(&path).expect("open"),
        )
        .expect("parquet");
        use parquet::file::reader::FileReader;
        for g in meta.metadata().row_groups() {
            assert!(g.num_rows() <= 50);
        }
        for b in &batches {
            per_tier
                .entry(tier)
                .or_default()
                .extend(crate::read::f64_column(b, "difficulty", &path).expect("difficulty"));
        }
    }
    let total: usize = per_tier.values().map(Vec::len).sum();
    assert_eq!(total as u64, manifest.counts.accepted);
    assert!(parts > per_tier.len(), "some tier has several parts");
    for difficulties in per_tier.values() {
        assert!(
            difficulties.is_sorted(),
            "each tier's parts run in difficulty order"
        );
    }
}

#[test]
fn a_delivery_takes_every_file_as_it_is_closed_and_changes_no_byte() {
    let records = records(6000);
    let (plain, delivered, taken) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let kept = write(plain.path(), &records, WriteOptions::default());
    // The delivery moves each file away, as an upload to a store does.
    let to = taken.path().to_path_buf();
    let names = Arc::new(Mutex::new(Vec::new()));
    let seen = names.clone();
    let delivery = Delivery(Arc::new(move |root: &Path, name: &str| {
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().expect("a folder")).expect("mkdir");
        std::fs::rename(root.join(name), &target).map_err(PackError::io("move", &target))?;
        seen.lock().expect("names").push(name.to_string());
        Ok(())
    }));
    let options = WriteOptions {
        delivery: Some(delivery),
        rows_per_part: 300,
        ..WriteOptions::default()
    };
    let sent = write(delivered.path(), &records, options);
    let names = names.lock().expect("names").clone();
    // Every Parquet and release file but the checksums, which the manifest
    // names too, went as it closed; none is left behind.
    assert!(names.iter().any(|n| n.starts_with("levels/")), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("release/tier-")),
        "{names:?}"
    );
    assert!(
        names.contains(&"rejects/rejects.parquet".to_string()),
        "{names:?}"
    );
    for name in sent.files.keys() {
        let here = delivered.path().join(name);
        let gone = taken.path().join(name);
        assert_ne!(here.exists(), gone.exists(), "{name}: in one place only");
    }
    // The same release bytes as a pack whose files stayed (the parts cut
    // at 300 rows change only the Parquet files' layout).
    let release = |files: &BTreeMap<String, String>| -> Vec<(String, String)> {
        files
            .iter()
            .filter(|(n, _)| n.starts_with("release/"))
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect()
    };
    assert_eq!(release(&kept.files), release(&sent.files));
}
