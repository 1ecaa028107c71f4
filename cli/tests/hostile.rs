//! A worker that lies: forged levels, mixed batches and oversized results are
//! refused before anything of their batch counts (a level that fails the
//! coordinator's check refuses its worker for good), and the pack comes out
//! as an honest run makes it.

use std::time::Duration;

use pregen_games::{Budget, GameKind};
use pregen_pack::Job;
use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{LeaseDone, LeaseGrant, LeaseRequest, Results, SeedResult};

use pregen_coordinator::COORDINATOR;
use pregen_coordinator::{CommitLog, LogEntry as Entry};

use crate::common::rogue::{Rogue, client, coordinator};
use crate::common::{COUNT, PackContent, TOKEN, job_text, reference, serve, wait, worker};

/// The true results of a lease, as an honest worker sends them.
fn honest(job: &Job, grant: &LeaseGrant) -> Vec<SeedResult> {
    let game = GameKind::from_name(&job.game)
        .and_then(|g| g.prepare(&job.plan()[0].params))
        .expect("game");
    let budget = Budget::nodes(job.budget.max_nodes);
    (grant.first_seed..grant.first_seed + grant.seed_count)
        .map(|seed| SeedResult::from_outcome(grant.lease_id, seed, game.run(seed, &budget)))
        .collect()
}

/// The first accepted result among `results`, with its index.
fn accepted(results: &[SeedResult]) -> (usize, SeedResult) {
    results
        .iter()
        .enumerate()
        .find(|(_, r)| r.level.is_some())
        .map(|(i, r)| (i, r.clone()))
        .expect("an accepted level in the lease")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_results_are_refused_whole_and_the_pack_is_the_honest_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = job_text(COUNT);
    let job = Job::parse(&text).expect("job");
    let coordinator = coordinator(dir.path(), &text, Duration::from_secs(15)).await;
    let mut client = client(coordinator.addr).await;

    // What is forged, how, and what the refusal says. A level that fails the
    // check refuses its worker (PermissionDenied); a result too large to
    // read ends the session (InvalidArgument).
    type Forgery = (&'static str, fn(&mut SeedResult), &'static str);
    let forgeries: [Forgery; 6] = [
        (
            "made-up layout",
            |r| {
                let level = r.level.as_mut().expect("level");
                level.layout = level.layout.replace('.', "#");
            },
            "the layout is not the level's",
        ),
        (
            "another solution",
            |r| {
                let level = r.level.as_mut().expect("level");
                level.solution = level.solution.chars().rev().collect();
            },
            "the solution does not win",
        ),
        (
            "inflated moves",
            |r| {
                r.level.as_mut().expect("level").moves += 3;
            },
            "moves is",
        ),
        (
            "a 200 KB text",
            |r| {
                r.level.as_mut().expect("level").layout = "#".repeat(200 << 10);
            },
            "layout of size",
        ),
        (
            "a hash of something else",
            |r| {
                r.level.as_mut().expect("level").level_hash = "0".repeat(64);
            },
            "level_hash is not the hash",
        ),
        (
            "a level from a larger board",
            |r| {
                let level = r.level.as_mut().expect("level");
                level.level_json = level.level_json.replacen("\"width\":7", "\"width\":8", 1);
            },
            "refused",
        ),
    ];
    for (n, (what, forge, expected)) in forgeries.into_iter().enumerate() {
        let name = format!("rogue-{n}");
        let mut rogue = Rogue::join(&mut client, &name).await;
        let grant = rogue.lease().await;
        let mut results = honest(&job, &grant);
        let (i, mut forged) = accepted(&results);
        forge(&mut forged);
        results[i] = forged;
        rogue.results(results).await;
        let refusal = rogue.refusal().await;
        assert!(
            refusal.message().contains(expected),
            "{what}: {}",
            refusal.message()
        );
        if refusal.code() == tonic::Code::PermissionDenied {
            let key = rogue.welcome.worker_key.clone();
            let again = Rogue::try_join_with_key(&mut client, &name, &key).await;
            assert_eq!(
                again.err().map(|e| e.code()),
                Some(tonic::Code::PermissionDenied),
                "{what}"
            );
        } else {
            assert_eq!(refusal.code(), tonic::Code::InvalidArgument, "{what}");
            assert_eq!(what, "a 200 KB text");
        }
    }

    // Another seed's real level passes every check of the level itself; the
    // coordinator makes the seed's level again and refuses it.
    let mut rogue = Rogue::join(&mut client, "swapper").await;
    let (mut results, grant) = loop {
        let grant = rogue.lease().await;
        let results = honest(&job, &grant);
        if results.iter().filter(|r| r.level.is_some()).count() >= 2 {
            break (results, grant);
        }
        rogue.results(results).await;
        rogue
            .send(Out::LeaseDone(LeaseDone {
                lease_id: grant.lease_id,
            }))
            .await;
    };
    let levels: Vec<usize> = (0..results.len())
        .filter(|&i| results[i].level.is_some())
        .collect();
    results[levels[0]].level = results[levels[1]].level.clone();
    rogue.results(results).await;
    let refusal = rogue.refusal().await;
    assert_eq!(refusal.code(), tonic::Code::PermissionDenied, "{grant:?}");
    assert!(
        refusal.message().contains("is not the one seed"),
        "{}",
        refusal.message()
    );

    // A valid result beside one outside the lease: neither counts.
    let mut rogue = Rogue::join(&mut client, "rogue").await;
    let grant = rogue.lease().await;
    let mut results = honest(&job, &grant);
    results.truncate(1);
    let mut outside = results[0].clone();
    outside.seed = grant.first_seed + grant.seed_count + 7;
    results.push(outside);
    rogue.results(results).await;
    assert!(rogue.refusal().await.message().contains("is outside lease"));

    // An honest worker finishes the pack.
    let mut honest_worker = worker(&format!("http://{}", coordinator.addr), "honest", TOKEN);
    let summary = coordinator
        .run
        .await
        .expect("join")
        .expect("the pack completes");
    wait(&mut honest_worker, Duration::from_secs(60));
    PackContent::read(&summary.dir).assert_same(reference());
    let entries =
        pregen_coordinator::CommitLog::read(&summary.dir.join("commit"), &job).expect("log opens");
    assert!(
        entries
            .iter()
            .filter_map(Entry::result)
            .all(|r| r.worker.starts_with("honest#") || r.worker == COORDINATOR),
        "nothing the rogues sent was recorded"
    );
    let refused = entries
        .iter()
        .filter(|e| matches!(e, Entry::Refused { .. }))
        .count();
    assert_eq!(
        refused, 6,
        "every worker whose level failed the check is refused"
    );
    let manifest =
        pregen_pack::Manifest::read(&summary.dir.join("manifest.json")).expect("manifest");
    assert_eq!(manifest.cross_check.refused.len(), 6);
}

/// What a liar sends for a lease: the true results, except that every other
/// accepted seed is called rejected (a lie only a second run finds; another
/// seed's real level is refused by the check, below).
fn lies(job: &Job, grant: &LeaseGrant, told: &mut u64) -> Vec<SeedResult> {
    let mut results = honest(job, grant);
    for r in results.iter_mut().filter(|r| r.level.is_some()) {
        *told += 1;
        if told.is_multiple_of(2) {
            r.level = None;
            r.status = pregen_proto::v1::seed_result::Status::Rejected as i32;
            r.reason_code = pregen_proto::v1::ReasonCode::TooEasy as i32;
            r.reason_detail = "2 moves < min_moves 3".into();
        }
    }
    results
}

/// A worker that lies on some seeds (wrong verdicts and a real level passed
/// off as another seed's) beside an honest worker process: the sampled
/// cross-check catches it, it is refused, everything it sent is run again,
/// and the pack is the clean run's, with the liar named in the manifest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_worker_is_caught_refused_and_leaves_no_trace_in_the_pack() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = job_text(COUNT).replacen('\n', "\ncross_check = 0.2\n", 1);
    let job = Job::parse(&text).expect("job");
    let mut served = serve(dir.path(), &text, 15_000);
    let addr = served
        .url
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .expect("address");
    let mut client = client(addr).await;
    let mut liar = Rogue::join(&mut client, "liar").await;
    let mut honest_worker = None;
    let (mut told, mut leases) = (0, 0);
    let refusal = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            // Once refused, its sends fail and the next read is the refusal.
            liar.offer(Out::LeaseRequest(LeaseRequest {})).await;
            match liar.next_or_refusal().await {
                Ok(Some(In::Grant(grant))) => {
                    let results = lies(&job, &grant, &mut told);
                    liar.offer(Out::Results(Results { results })).await;
                    liar.offer(Out::LeaseDone(LeaseDone {
                        lease_id: grant.lease_id,
                    }))
                    .await;
                    leases += 1;
                }
                Ok(Some(In::NoWork(_))) => tokio::time::sleep(Duration::from_millis(50)).await,
                Ok(other) => panic!("the liar was never caught: {other:?}"),
                Err(status) => return status,
            }
            // The honest worker joins once the liar's results are in.
            if leases == 8 && honest_worker.is_none() {
                honest_worker = Some(worker(&served.url, "honest", TOKEN));
            }
        }
    })
    .await
    .expect("the liar is refused within 120 s");
    assert_eq!(refusal.code(), tonic::Code::PermissionDenied);
    assert!(
        refusal.message().starts_with("worker liar#")
            && refusal.message().contains(" is refused: seed"),
        "{}",
        refusal.message()
    );
    let key = liar.welcome.worker_key.clone();
    let again = Rogue::try_join_with_key(&mut client, "liar", &key).await;
    assert_eq!(
        again.err().map(|e| e.code()),
        Some(tonic::Code::PermissionDenied)
    );

    let mut honest_worker = honest_worker.unwrap_or_else(|| worker(&served.url, "honest", TOKEN));
    assert!(wait(&mut served.child, Duration::from_secs(120)).success());
    wait(&mut honest_worker, Duration::from_secs(30));
    let pack = dir.path().join("out/e2e");
    PackContent::read(&pack).assert_same(reference());
    let manifest = pregen_pack::Manifest::read(&pack.join("manifest.json")).expect("manifest");
    let why = manifest
        .cross_check
        .refused
        .get(&liar.welcome.worker_id)
        .expect("the liar is named");
    assert!(why.contains("the coordinator's own run found"), "{why}");
    assert!(manifest.cross_check.confirmed > 0);
    let entries = CommitLog::read(&pack.join("commit"), &job).expect("log opens");
    let refused_at = entries
        .iter()
        .position(
            |e| matches!(e, Entry::Refused { worker, .. } if *worker == liar.welcome.worker_id),
        )
        .expect("the refusal is logged");
    assert!(
        entries[..refused_at]
            .iter()
            .filter_map(Entry::result)
            .any(|r| r.worker == liar.welcome.worker_id),
        "the liar's results were taken before it was caught"
    );
    assert!(
        entries[refused_at..]
            .iter()
            .filter_map(Entry::result)
            .all(|r| !r.worker.starts_with("liar#")),
        "nothing of the liar's is taken after"
    );
}

/// A rogue that takes an honest worker's name and sends a forged level is
/// refused alone: the name is a label, the identity is the coordinator's
///. The honest `w1` goes on, nothing of its is dropped, and a session
/// presenting the rogue's key is refused while a new one is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stolen_name_refuses_only_the_thief() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = job_text(COUNT);
    let job = Job::parse(&text).expect("job");
    let mut served = serve(dir.path(), &text, 15_000);
    let addr = served
        .url
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .expect("address");
    let mut honest_w1 = worker(&served.url, "w1", TOKEN);
    crate::common::wait_for_segments(&dir.path().join("out/e2e"), 1, Duration::from_secs(120));
    let mut client = client(addr).await;
    let mut thief = Rogue::join(&mut client, "w1").await;
    // Honest leases until one holds an accepted level, which it forges.
    let mut results = loop {
        let grant = thief.lease().await;
        let results = honest(&job, &grant);
        if results.iter().any(|r| r.level.is_some()) {
            break results;
        }
        thief.results(results).await;
        thief
            .send(Out::LeaseDone(LeaseDone {
                lease_id: grant.lease_id,
            }))
            .await;
    };
    let (i, mut forged) = accepted(&results);
    forged.level.as_mut().expect("level").moves += 1;
    results[i] = forged;
    thief.results(results).await;
    let refusal = thief.refusal().await;
    assert_eq!(refusal.code(), tonic::Code::PermissionDenied);
    let thief_id = thief.welcome.worker_id.clone();
    let key = thief.welcome.worker_key.clone();
    let again = Rogue::try_join_with_key(&mut client, "w1", &key).await;
    assert_eq!(
        again.err().map(|e| e.code()),
        Some(tonic::Code::PermissionDenied)
    );
    drop(Rogue::join(&mut client, "w1").await);

    assert!(wait(&mut served.child, Duration::from_secs(120)).success());
    assert!(wait(&mut honest_w1, Duration::from_secs(30)).success());
    let pack = dir.path().join("out/e2e");
    PackContent::read(&pack).assert_same(reference());
    let manifest = pregen_pack::Manifest::read(&pack.join("manifest.json")).expect("manifest");
    assert_eq!(
        manifest.cross_check.refused.keys().collect::<Vec<_>>(),
        [&thief_id],
        "only the thief is refused"
    );
    let entries = CommitLog::read(&pack.join("commit"), &job).expect("log opens");
    let honest_results = entries
        .iter()
        .filter_map(Entry::result)
        .filter(|r| r.worker.starts_with("w1#") && r.worker != thief_id)
        .count();
    assert!(
        honest_results as u64 >= COUNT,
        "the honest w1's results stay: {honest_results}"
    );
}

/// A worker that shifts the difficulty of its levels (and so their tiers,
/// campaign places and release order) is caught: the coordinator rates every
/// level from its metrics, and at `cross_check = 1.0` two results agree
/// only when every deterministic field does, metrics included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shifted_difficulty_is_a_lie_the_coordinator_catches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = job_text(400).replacen('\n', "\ncross_check = 1.0\n", 1);
    let job = Job::parse(&text).expect("job");
    let mut served = serve(dir.path(), &text, 15_000);
    let addr = served
        .url
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .expect("address");
    let mut client = client(addr).await;
    let mut shifter = Rogue::join(&mut client, "shifter").await;
    let mut honest_worker = None;
    let refusal = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            shifter.offer(Out::LeaseRequest(LeaseRequest {})).await;
            match shifter.next_or_refusal().await {
                Ok(Some(In::Grant(grant))) => {
                    let mut results = honest(&job, &grant);
                    for level in results.iter_mut().filter_map(|r| r.level.as_mut()) {
                        level.difficulty += 0.5;
                    }
                    shifter.offer(Out::Results(Results { results })).await;
                    shifter
                        .offer(Out::LeaseDone(LeaseDone {
                            lease_id: grant.lease_id,
                        }))
                        .await;
                    honest_worker.get_or_insert_with(|| worker(&served.url, "honest", TOKEN));
                }
                Ok(Some(In::NoWork(_))) => tokio::time::sleep(Duration::from_millis(50)).await,
                Ok(other) => panic!("the shifter was never caught: {other:?}"),
                Err(status) => return status,
            }
        }
    })
    .await
    .expect("the shifter is refused within 120 s");
    assert_eq!(refusal.code(), tonic::Code::PermissionDenied);
    assert!(
        refusal
            .message()
            .contains("is not the rating of its metrics"),
        "{}",
        refusal.message()
    );
    let mut honest_worker = honest_worker.unwrap_or_else(|| worker(&served.url, "honest", TOKEN));
    assert!(wait(&mut served.child, Duration::from_secs(120)).success());
    wait(&mut honest_worker, Duration::from_secs(30));
    let pack = dir.path().join("out/e2e");
    let manifest = pregen_pack::Manifest::read(&pack.join("manifest.json")).expect("manifest");
    assert!(
        manifest
            .cross_check
            .refused
            .contains_key(&shifter.welcome.worker_id),
        "{:?}",
        manifest.cross_check.refused
    );
    // Every level in the pack has the difficulty its seed gives.
    let game = GameKind::from_name("tilt")
        .and_then(|g| g.prepare(&job.plan()[0].params))
        .expect("game");
    let content = PackContent::read(&pack);
    assert_eq!(content.levels.len(), 400);
    for (seed, difficulty) in content.levels.iter().map(|l| (l.seed, l.difficulty)) {
        let truth = game.run(seed, &Budget::nodes(job.budget.max_nodes));
        assert_eq!(
            truth.result.map(|c| c.difficulty).ok(),
            Some(difficulty),
            "seed {seed}"
        );
    }
}

/// A session that takes the cross-check's leases and never answers them
/// (giving back every other lease) does not hold the pack back while it
/// stays: the coordinator runs a check held a lease TTL at the tail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_hoarding_checks_does_not_hold_the_pack_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = job_text(200).replacen('\n', "\ncross_check = 1.0\n", 1);
    let coordinator = coordinator(dir.path(), &text, Duration::from_secs(2)).await;
    let mut client = client(coordinator.addr).await;
    let mut hoarder = Rogue::join(&mut client, "hoarder").await;
    let mut honest_worker = worker(&format!("http://{}", coordinator.addr), "honest", TOKEN);
    let mut run = coordinator.run;
    let mut held = 0;
    // Well under the progress limit (the job's 60 s watchdog + the TTL), past
    // which a held lease went back to the queue before.
    let summary = tokio::time::timeout(Duration::from_secs(45), async {
        loop {
            hoarder.offer(Out::LeaseRequest(LeaseRequest {})).await;
            hoarder
                .offer(Out::Heartbeat(pregen_proto::v1::Heartbeat {}))
                .await;
            let next = tokio::select! {
                done = &mut run => return done,
                next = hoarder.next_or_refusal() => next,
            };
            match next {
                Ok(Some(In::Grant(grant))) if grant.seed_count == 1 => held += 1,
                Ok(Some(In::Grant(grant))) => {
                    hoarder
                        .offer(Out::LeaseReturn(pregen_proto::v1::LeaseReturn {
                            lease_id: grant.lease_id,
                        }))
                        .await;
                }
                Ok(Some(In::Finished(_)) | None) | Err(_) => return run.await,
                Ok(Some(_)) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    })
    .await
    .expect("the pack is written while the hoarder stays")
    .expect("join")
    .expect("the pack completes");
    assert!(held > 0, "the hoarder held checks");
    wait(&mut honest_worker, Duration::from_secs(30));
    assert!(pregen_pack::PackDir::new(&summary.dir).is_complete());
}
