//! The scheduler's behaviour through its facade: leases, results, strata,
//! the cross-check and resume.

use super::*;
use pregen_pack::{Code, Reason};

fn config(count: u64, per_lease: u64) -> SchedulerConfig {
    SchedulerConfig {
        strata: vec![(100, count)],
        seeds_per_lease: per_lease,
        lease_ttl: Duration::from_secs(10),
        max_seeds: None,
        progress_limit: Duration::from_secs(3600),
        cross_check: 0.0,
        check_key: [0; 16],
        audit_duplicate_levels: false,
        bands: Vec::new(),
    }
}

/// Seeds divisible by 3 are accepted.
pub(super) fn result(seed: u64) -> SeedRecord {
    let accepted = seed.is_multiple_of(3);
    SeedRecord {
        seed,
        status: if accepted {
            Status::Accepted
        } else {
            Status::Rejected
        },
        reason: (!accepted).then(|| Reason::new(Code::TooEasy, "1 move")),
        level: None,
        generate_ms: 0.0,
        solve_ms: 0.0,
        nodes: 0,
        worker: "w".into(),
        attempt: 0,
    }
}

fn accepted_seeds(pack: &[SeedRecord]) -> Vec<u64> {
    pack.iter()
        .filter(|r| r.status == Status::Accepted)
        .map(|r| r.seed)
        .collect()
}

fn lease(g: Grant) -> Lease {
    match g {
        Grant::Lease(l) => l,
        other => panic!("expected a lease, got {other:?}"),
    }
}

fn finish(s: &mut Scheduler, session: SessionId, l: &Lease) {
    for seed in l.first_seed..l.first_seed + l.seed_count {
        s.record(session, l.id, result(seed)).expect("in lease");
    }
    s.lease_done(session, l.id);
}

#[test]
fn a_stratum_gives_up_after_max_seeds() {
    let now = Instant::now();
    // Seeds 100.. accept every third: 10 seeds hold 3 levels, not 4.
    let mut s = Scheduler::new(
        SchedulerConfig {
            max_seeds: Some(10),
            progress_limit: Duration::from_secs(3600),
            ..config(4, 4)
        },
        vec![],
    );
    let mut granted = Vec::new();
    while let Grant::Lease(l) = s.grant(1, now) {
        granted.push((l.first_seed, l.seed_count));
        assert!(s.exhausted().is_none(), "not every seed is recorded yet");
        finish(&mut s, 1, &l);
    }
    assert_eq!(granted, vec![(100, 4), (104, 4), (108, 2)]);
    assert!(!s.is_complete());
    assert!(s.is_finished());
    assert_eq!(
        s.exhausted(),
        Some(Exhausted {
            stratum: 0,
            seeds: 10,
            accepted: 3,
            wanted: 4,
            band: None,
            closest: None,
        })
    );
    assert_eq!(s.grant(1, now), Grant::Finished);
    // Resumed with a higher limit, it goes on from seed 110.
    let committed: Vec<Entry> = (100..110).map(result).map(Entry::Result).collect();
    let mut s = Scheduler::new(
        SchedulerConfig {
            max_seeds: Some(20),
            progress_limit: Duration::from_secs(3600),
            ..config(4, 4)
        },
        committed,
    );
    assert!(s.exhausted().is_none());
    let l = lease(s.grant(1, now));
    assert_eq!(l.first_seed, 110);
    finish(&mut s, 1, &l);
    assert!(s.is_complete());
}

#[test]
fn duplicates_lose_to_the_lowest_seed_whatever_the_order() {
    let now = Instant::now();
    let mut s = Scheduler::new(config(3, 6), vec![]);
    // Every accepted level has one of two canonical forms, except seed 111.
    let with_key = |seed: u64| {
        let r = result(seed);
        if r.status != Status::Accepted {
            return r;
        }
        let key = if seed == 111 {
            "c".into()
        } else {
            format!("k{}", seed % 2)
        };
        let mut r = rated(seed, seed as f64);
        r.level.as_mut().expect("level").canonical = Some(key);
        r
    };
    // Later ranges first: their levels come in before their originals.
    while !s.is_complete() {
        let mut out = Vec::new();
        while let Grant::Lease(l) = s.grant(1 + out.len() as u64 % 2, now) {
            out.push(l);
        }
        for l in out.iter().rev() {
            for seed in l.first_seed..l.first_seed + l.seed_count {
                s.record(l.session, l.id, with_key(seed)).expect("in lease");
            }
            s.lease_done(l.session, l.id);
        }
    }
    assert!(s.is_complete());
    let pack = s.take_pack_records().expect("complete");
    let accepted = accepted_seeds(&pack);
    // 102 (k0), 105 (k1), 108 (k0 again), 111 (c).
    assert_eq!(accepted, vec![102, 105, 111]);
    let duplicates: Vec<(u64, &str)> = pack
        .iter()
        .filter_map(|r| Some((r.seed, r.reason.as_ref()?)))
        .filter(|(_, reason)| reason.code == Code::Duplicate)
        .map(|(seed, reason)| (seed, reason.detail.as_str()))
        .collect();
    assert_eq!(duplicates, vec![(108, "the level of seed 102")]);
    assert_eq!(s.progress().rejected.get(&Refusal::DUPLICATE), Some(&1));
}

/// An accepted record of `seed` whose level has `difficulty`.
fn rated(seed: u64, difficulty: f64) -> SeedRecord {
    let mut r = result(seed);
    r.status = Status::Accepted;
    r.reason = None;
    r.level = Some(pregen_pack::record::LevelRecord {
        difficulty,
        moves: 1,
        moves_optimal: true,
        layout: String::new(),
        level_json: String::new(),
        solution: String::new(),
        metrics: Default::default(),
        level_hash: seed.to_string(),
        canonical: None,
    });
    r
}

/// With a band, only levels in it count: the pack is the first `count` of
/// them in seed order, whatever order the results come in; the others are
/// written as `rejected: out of band`, naming their difficulty and the band.
#[test]
fn a_band_counts_only_the_levels_in_it() {
    let now = Instant::now();
    let band = pregen_pack::job::Band {
        min: Some(1.0),
        max: Some(2.0),
    };
    let banded = || SchedulerConfig {
        bands: vec![Some(band)],
        ..config(3, 4)
    };
    // Seed s rates (s % 5) / 2: 0, 0.5, 1.0, 1.5, 2.0 (in band: s % 5 of 2 or 3).
    let difficulty = |seed: u64| (seed % 5) as f64 / 2.0;
    let mut s = Scheduler::new(banded(), vec![]);
    while !s.is_complete() {
        let mut out = Vec::new();
        while let Grant::Lease(l) = s.grant(1 + out.len() as u64 % 2, now) {
            out.push(l);
        }
        for l in out.iter().rev() {
            for seed in l.first_seed..l.first_seed + l.seed_count {
                s.record(l.session, l.id, rated(seed, difficulty(seed)))
                    .expect("in lease");
            }
            s.lease_done(l.session, l.id);
        }
    }
    let pack = s.take_pack_records().expect("complete");
    assert_eq!(accepted_seeds(&pack), vec![102, 103, 107]);
    let out: Vec<(u64, &str)> = pack
        .iter()
        .filter_map(|r| Some((r.seed, r.reason.as_ref()?)))
        .filter(|(_, reason)| reason.code == Code::OutOfBand)
        .map(|(seed, reason)| (seed, reason.detail.as_str()))
        .collect();
    assert_eq!(out.len(), 5, "100, 101, 104, 105, 106: {out:?}");
    assert_eq!(out[2], (104, "difficulty 2 outside the band [1, 2)"));
    // The progress counts every seed recorded, those past the pack too.
    let counted = s.progress().rejected[&Refusal {
        status: Status::Rejected,
        code: Some(Code::OutOfBand),
    }];
    assert!(counted >= 5, "{counted}");

    // A band out of reach gives up after `BAND_TRIES` seeds, naming the
    // difficulty nearest it.
    let far = pregen_pack::job::Band {
        min: Some(10.0),
        max: None,
    };
    let log: Vec<Entry> = (100..100 + BAND_TRIES)
        .map(|seed| Entry::Result(rated(seed, difficulty(seed))))
        .collect();
    let s = Scheduler::new(
        SchedulerConfig {
            bands: vec![Some(far)],
            ..config(3, 4)
        },
        log,
    );
    let e = s.exhausted().expect("given up");
    assert_eq!((e.seeds, e.accepted, e.closest), (BAND_TRIES, 0, Some(2.0)));
    assert_eq!(e.band, Some(far));
}

/// Grants leases to sessions 1 and 2 in turn until none is wanted, then
/// finishes them, the later ranges first; again until the pack is complete.
fn run_backwards(s: &mut Scheduler, now: Instant) {
    while !s.is_complete() {
        let mut out = Vec::new();
        while let Grant::Lease(l) = s.grant(1 + out.len() as u64 % 2, now) {
            out.push(l);
        }
        assert!(!out.is_empty(), "no lease while incomplete");
        for l in out.iter().rev() {
            finish(s, l.session, l);
        }
    }
}

#[test]
fn pack_is_first_count_accepted_in_seed_order_whatever_the_order() {
    let now = Instant::now();
    let mut s = Scheduler::new(config(5, 4), vec![]);
    run_backwards(&mut s, now);
    assert!(s.is_complete());
    let pack = s.take_pack_records().expect("complete");
    let accepted = accepted_seeds(&pack);
    assert_eq!(accepted, vec![102, 105, 108, 111, 114]);
    assert_eq!(pack.first().map(|r| r.seed), Some(100));
    assert_eq!(pack.last().map(|r| r.seed), Some(114));
    assert_eq!(s.grant(1, now), Grant::Finished);
}

#[test]
fn broken_session_requeues_missing_seeds_with_next_attempt() {
    let now = Instant::now();
    let mut s = Scheduler::new(config(3, 4), vec![]);
    let a = lease(s.grant(1, now));
    s.record(1, a.id, result(100)).expect("ok");
    s.session_ended(1);
    let again = lease(s.grant(2, now));
    // The lease held the 3 seeds 3 levels may need at most.
    assert_eq!(
        (again.first_seed, again.seed_count, again.attempt),
        (101, 2, 2)
    );
    // A late result of the dead session for its old lease is still taken once.
    s.record(1, a.id, result(101))
        .expect("late result of own lease");
    s.record(2, again.id, result(101))
        .expect("duplicate is idempotent");
    assert_eq!(s.progress().seeds, 2);
}

#[test]
fn expired_leases_are_reissued_and_heartbeats_extend_them() {
    let now = Instant::now();
    let mut s = Scheduler::new(config(3, 4), vec![]);
    let a = lease(s.grant(1, now));
    let b = lease(s.grant(2, now));
    s.heartbeat(2, now + Duration::from_secs(8));
    assert_eq!(s.expire(now + Duration::from_secs(11)), 1);
    assert!(s.lease(a.id).is_none());
    assert!(s.lease(b.id).is_some());
    let again = lease(s.grant(3, now));
    assert_eq!(again.first_seed, a.first_seed);
}

#[test]
fn results_are_checked_against_the_lease() {
    let now = Instant::now();
    let mut s = Scheduler::new(config(3, 4), vec![]);
    let a = lease(s.grant(1, now));
    assert!(matches!(
        s.record(1, a.id, result(104)),
        Err(RecordError::SeedOutsideLease { seed: 104, .. })
    ));
    assert!(matches!(
        s.record(2, a.id, result(100)),
        Err(RecordError::NotYourLease { .. })
    ));
    assert!(matches!(
        s.record(1, 99, result(100)),
        Err(RecordError::UnknownLease(99))
    ));
    assert_eq!(s.progress().seeds, 0, "nothing recorded");
}

#[test]
fn resume_requeues_holes_and_continues_after_the_last_seed() {
    let committed: Vec<Entry> = [100, 101, 105, 106]
        .into_iter()
        .map(result)
        .map(Entry::Result)
        .collect();
    let mut s = Scheduler::new(config(4, 4), committed);
    let now = Instant::now();
    let hole = lease(s.grant(1, now));
    assert_eq!((hole.first_seed, hole.seed_count), (102, 3));
    let next = lease(s.grant(1, now));
    assert_eq!(next.first_seed, 107);
    assert!(
        s.take_unflushed().is_empty(),
        "resumed records are already durable"
    );
}

#[test]
fn no_new_ranges_once_enough_accepted_but_holes_still_served() {
    let now = Instant::now();
    let (mut s, a) = tail(now);
    // Enough accepted in b, but a's seeds come first in order.
    s.session_ended(1);
    let again = lease(s.grant(2, now));
    assert_eq!((again.first_seed, again.twin), (a.first_seed, None));
    finish(&mut s, 2, &again);
    assert!(s.is_complete());
    let pack = s.take_pack_records().expect("complete");
    assert_eq!(
        pack.iter().map(|r| r.seed).collect::<Vec<_>>(),
        (100..=105).collect::<Vec<_>>()
    );
}

/// The tail of a run: session 2 finished its lease, which holds enough
/// levels, while session 1 still holds `a`, whose seeds come first. (Seeds
/// 100 and 101, refused, make the share a third: then two leases are out.)
fn tail(now: Instant) -> (Scheduler, Lease) {
    let mut s = Scheduler::new(config(2, 3), vec![]);
    let first = lease(s.grant(1, now));
    assert_eq!((first.first_seed, first.seed_count), (100, 2));
    finish(&mut s, 1, &first);
    let a = lease(s.grant(1, now));
    let b = lease(s.grant(2, now));
    assert_eq!((a.first_seed, b.first_seed), (102, 105));
    finish(&mut s, 2, &b);
    (s, a)
}

#[test]
fn at_the_tail_an_idle_worker_runs_a_copy_of_the_oldest_lease() {
    let now = Instant::now();
    let (mut s, a) = tail(now);
    // Nothing left to lease but a, which session 1 still holds.
    let copy = lease(s.grant(2, now));
    assert_eq!(
        (copy.first_seed, copy.seed_count, copy.attempt, copy.twin),
        (a.first_seed, a.seed_count, 2, Some(a.id))
    );
    assert_eq!(s.grant(3, now), Grant::Wait, "a lease is copied once");
    finish(&mut s, 2, &copy);
    assert!(s.is_complete());
    // The original's late results are duplicates, taken quietly.
    finish(&mut s, 1, &a);
    let p = s.progress();
    assert_eq!(
        (p.speculative, p.duplicate_results, p.mismatches),
        (1, 3, 0)
    );
    let pack = s.take_pack_records().expect("complete");
    assert_eq!(
        pack.iter().map(|r| r.seed).collect::<Vec<_>>(),
        (100..=105).collect::<Vec<_>>()
    );
}

#[test]
fn a_twin_given_back_leaves_its_range_to_the_other() {
    let now = Instant::now();
    let (mut s, a) = tail(now);
    let copy = lease(s.grant(2, now));
    s.lease_returned(2, copy.id);
    assert_eq!(
        s.grant(3, now),
        Grant::Lease(Lease {
            id: 5,
            session: 3,
            granted: now,
            deadline: now + Duration::from_secs(10),
            attempt: 2,
            twin: Some(a.id),
            ..a.clone()
        }),
        "copied again, not re-queued twice"
    );
    s.session_ended(1);
    s.session_ended(3);
    let again = lease(s.grant(2, now));
    assert_eq!((again.first_seed, again.twin), (a.first_seed, None));
    assert_eq!(s.grant(2, now), Grant::Wait, "the range is queued once");
}

#[test]
fn leases_are_sized_from_the_cost_per_seed() {
    let now = Instant::now();
    let mut s = Scheduler::new(config(1000, 512), vec![]);
    s.session_started(1, "w", 2).expect("open");
    let first = lease(s.grant(1, now));
    assert_eq!(
        first.seed_count, 8,
        "a few per thread before any cost is known"
    );
    // 100 ms a seed on 2 threads: 3 s is 60 seeds.
    let slow = (first.first_seed..first.first_seed + 8)
        .map(|seed| {
            (
                first.id,
                SeedRecord {
                    generate_ms: 60.0,
                    solve_ms: 40.0,
                    ..result(seed)
                },
            )
        })
        .collect();
    s.record_batch(1, slow, now).expect("in lease");
    s.lease_done(1, first.id);
    assert_eq!(lease(s.grant(1, now)).seed_count, 60);
    // Cheap seeds: the job's seeds_per_lease is the cap.
    let mut cheap = Scheduler::new(config(1000, 512), vec![]);
    cheap.session_started(1, "w", 2).expect("open");
    let l = lease(cheap.grant(1, now));
    let fast = (l.first_seed..l.first_seed + l.seed_count)
        .map(|seed| {
            (
                l.id,
                SeedRecord {
                    generate_ms: 0.01,
                    ..result(seed)
                },
            )
        })
        .collect();
    cheap.record_batch(1, fast, now).expect("in lease");
    assert_eq!(lease(cheap.grant(1, now)).seed_count, 512);
}

#[test]
fn strata_fill_in_order_and_the_pack_holds_each_prefix() {
    let now = Instant::now();
    let mut s = Scheduler::new(
        SchedulerConfig {
            strata: vec![(0, 2), (1 << 40, 3)],
            seeds_per_lease: 4,
            lease_ttl: Duration::from_secs(10),
            max_seeds: None,
            progress_limit: Duration::from_secs(3600),
            cross_check: 0.0,
            check_key: [0; 16],
            audit_duplicate_levels: false,
            bands: Vec::new(),
        },
        Vec::new(),
    );
    let mut leases = Vec::new();
    while let Grant::Lease(l) = s.grant(1, now) {
        leases.push(l.clone());
        for seed in l.first_seed..l.first_seed + l.seed_count {
            s.record(1, l.id, result(seed)).expect("recorded");
        }
        s.lease_done(1, l.id);
    }
    assert!(s.is_complete());
    // Stratum 0 first (seeds 0..), then stratum 1, each lease inside one stratum.
    assert_eq!((leases[0].stratum, leases[0].first_seed), (0, 0));
    assert!(
        leases
            .iter()
            .all(|l| (l.stratum == 1) == (l.first_seed >= 1 << 40))
    );
    assert!(leases.iter().any(|l| l.stratum == 1));
    let pack = s.take_pack_records().expect("complete");
    let accepted = accepted_seeds(&pack);
    // Multiples of 3: two from stratum 0, three from stratum 1 (2^40 + 2 is one).
    let base = 1u64 << 40;
    let firsts: Vec<u64> = (base..).filter(|v| v % 3 == 0).take(3).collect();
    assert_eq!(accepted, [vec![0, 3], firsts].concat());
    assert_eq!(s.progress().committed, 5);
}

#[test]
fn a_session_holds_a_few_leases_at_most_and_none_while_paused() {
    let mut s = Scheduler::new(config(1000, 5), vec![]);
    let now = Instant::now();
    for _ in 0..MAX_LEASES_PER_SESSION {
        lease(s.grant(1, now));
    }
    assert_eq!(s.grant(1, now), Grant::Wait);
    lease(s.grant(2, now));
    s.set_paused(true);
    assert_eq!(s.grant(3, now), Grant::Wait);
    s.set_paused(false);
    lease(s.grant(3, now));
}

#[test]
fn heartbeats_without_results_do_not_keep_a_lease() {
    let mut cfg = config(10, 5);
    cfg.lease_ttl = Duration::from_secs(1);
    cfg.progress_limit = Duration::from_secs(3);
    let mut s = Scheduler::new(cfg, vec![]);
    let t0 = Instant::now();
    let idle = lease(s.grant(1, t0));
    let busy = lease(s.grant(2, t0));
    for step in 1..=5 {
        let now = t0 + Duration::from_millis(500 * step);
        s.heartbeat(1, now);
        s.heartbeat(2, now);
    }
    // Session 2 shows progress at 2.5 s; session 1 only heartbeats.
    let t = t0 + Duration::from_millis(2500);
    s.record_batch(2, vec![(busy.id, result(busy.first_seed))], t)
        .expect("in lease");
    s.heartbeat(1, t0 + Duration::from_millis(3000));
    s.heartbeat(2, t0 + Duration::from_millis(3000));
    assert_eq!(s.expire(t0 + Duration::from_millis(3100)), 1);
    assert!(
        s.lease(idle.id).is_none(),
        "the idle session's lease is reclaimed"
    );
    assert!(s.lease(busy.id).is_some(), "the busy one keeps its lease");
    let again = lease(s.grant(3, t0 + Duration::from_millis(3200)));
    assert_eq!((again.first_seed, again.attempt), (idle.first_seed, 2));
}

#[test]
fn a_batch_is_taken_whole_or_not_at_all() {
    let mut s = Scheduler::new(config(10, 5), vec![]);
    let l = lease(s.grant(1, Instant::now()));
    let batch = vec![
        (l.id, result(l.first_seed)),
        (l.id, result(l.first_seed + 40)),
    ];
    let err = s
        .record_batch(1, batch, Instant::now())
        .expect_err("outside");
    assert!(matches!(err, RecordError::SeedOutsideLease { .. }));
    assert_eq!(s.progress().seeds, 0, "the valid result was not taken");
}

fn checked(count: u64, per_lease: u64, share: f64) -> Scheduler {
    let config = SchedulerConfig {
        cross_check: share,
        ..config(count, per_lease)
    };
    Scheduler::new(config, vec![])
}

fn by(worker: &str, record: SeedRecord) -> SeedRecord {
    SeedRecord {
        worker: worker.into(),
        ..record
    }
}

/// The true result, except that a liar calls every other accepted seed
/// (102, 108, ...) rejected.
fn answer(worker: &str, seed: u64) -> SeedRecord {
    let r = by(worker, result(seed));
    if worker.starts_with("liar") && seed.is_multiple_of(6) {
        return SeedRecord {
            status: Status::Rejected,
            reason: Some(Reason::new(Code::TooEasy, "1 move")),
            ..r
        };
    }
    r
}

/// Takes leases for `session` (as `worker`) and answers them until it is
/// told to wait; returns the leases it ran.
fn work(s: &mut Scheduler, session: SessionId, worker: &str) -> Vec<Lease> {
    work_with(s, session, |seed| answer(worker, seed))
}

/// [`work`] with the answers of `answer`.
fn work_with(
    s: &mut Scheduler,
    session: SessionId,
    answer: impl Fn(u64) -> SeedRecord,
) -> Vec<Lease> {
    let mut ran = Vec::new();
    while let Grant::Lease(l) = s.grant(session, Instant::now()) {
        let batch = (l.first_seed..l.first_seed + l.seed_count)
            .map(|seed| (l.id, answer(seed)))
            .collect();
        if s.record_batch(session, batch, Instant::now()).is_err() {
            break;
        }
        s.lease_done(session, l.id);
        ran.push(l);
    }
    ran
}

fn own_runs(s: &mut Scheduler, grace: Duration) -> usize {
    let work = s.coordinator_work(Instant::now() + grace, grace);
    for &(_, seed) in &work {
        s.coordinator_result(by(COORDINATOR, result(seed)));
    }
    work.len()
}

#[test]
fn a_sampled_seed_is_checked_by_another_worker_before_the_pack_is_complete() {
    let mut s = checked(4, 6, 1.0);
    s.session_started(1, "a", 0).expect("open");
    s.session_started(2, "b", 0).expect("open");
    let first = lease(s.grant(1, Instant::now()));
    let end = first.first_seed + first.seed_count;
    for seed in first.first_seed..end {
        s.record(1, first.id, answer("a", seed)).expect("in lease");
    }
    s.lease_done(1, first.id);
    // a gets fresh seeds, never its own to check.
    let next = lease(s.grant(1, Instant::now()));
    assert!(!next.check && next.first_seed == end);
    s.lease_returned(1, next.id);
    let check = lease(s.grant(2, Instant::now()));
    assert!(check.check && check.seed_count == 1 && check.first_seed == 100);
    s.record(2, check.id, answer("b", 100)).expect("in lease");
    assert_eq!(s.progress().cross_check.confirmed, 1);
    // A check lease given back goes to the next taker.
    let check = lease(s.grant(2, Instant::now()));
    s.lease_returned(2, check.id);
    let again = lease(s.grant(2, Instant::now()));
    assert_eq!(again.first_seed, check.first_seed);
    s.record(2, again.id, answer("b", again.first_seed))
        .expect("in lease");
    work(&mut s, 2, "b");
    work(&mut s, 1, "a");
    work(&mut s, 2, "b");
    assert!(s.is_complete());
    assert!(s.progress().cross_check.confirmed >= 12);
    assert_eq!(s.progress().cross_check.disputes, 0);
}

#[test]
fn a_liar_is_refused_its_results_run_again_and_the_pack_is_the_honest_one() {
    let mut honest_run = checked(4, 6, 0.0);
    work(&mut honest_run, 1, "honest");
    let honest_pack = honest_run.take_pack_records().expect("complete");

    let mut s = checked(4, 6, 1.0);
    s.session_started(1, "liar", 0).expect("open");
    s.session_started(2, "honest", 0).expect("open");
    work(&mut s, 1, "liar");
    let lied = s.progress().seeds;
    assert!(lied > 0);
    // The honest worker checks the liar's seeds and disagrees on 102.
    work(&mut s, 2, "honest");
    assert!(!s.is_complete(), "a disputed seed holds the pack back");
    assert!(own_runs(&mut s, Duration::ZERO) >= 1);
    assert!(s.refusal("liar").is_some_and(|r| r.contains("seed 102")));
    assert!(!s.progress().per_worker.contains_key("liar"));
    assert!(matches!(
        s.record(1, 1, answer("liar", 100)),
        Err(RecordError::Refused { .. })
    ));
    assert!(matches!(s.grant(1, Instant::now()), Grant::Wait));
    assert!(s.session_started(3, "liar", 0).is_err(), "refused for good");
    // Everything the liar ran is run again by the honest worker.
    work(&mut s, 2, "honest");
    own_runs(&mut s, Duration::from_secs(2));
    work(&mut s, 2, "honest");
    assert!(s.is_complete());
    let entries = s.take_unflushed();
    let pack = s.take_pack_records().expect("complete");
    let verdicts =
        |p: &[SeedRecord]| -> Vec<(u64, Status)> { p.iter().map(|r| (r.seed, r.status)).collect() };
    assert_eq!(verdicts(&pack), verdicts(&honest_pack));
    assert!(pack.iter().all(|r| r.worker != "liar"));

    // The log replays to the same state: the liar refused, the pack whole.
    assert!(
        entries
            .iter()
            .any(|e| matches!(e, Entry::Refused { worker, .. } if worker == "liar"))
    );
    let mut resumed = Scheduler::new(
        SchedulerConfig {
            cross_check: 1.0,
            ..config(4, 6)
        },
        entries,
    );
    assert!(resumed.refusal("liar").is_some());
    let replayed = resumed.take_pack_records().expect("complete after replay");
    assert_eq!(verdicts(&replayed), verdicts(&honest_pack));
}

/// An accepted seed's true result, with a level.
fn leveled(worker: &str, seed: u64) -> SeedRecord {
    let mut r = by(worker, result(seed));
    if r.status == Status::Accepted {
        r.nodes = 40 + seed;
        r.level = Some(pregen_games::Candidate {
            difficulty: seed as f64 / 7.0,
            moves: 5,
            moves_optimal: true,
            layout: format!("level {seed}"),
            level_json: format!("{{\"seed\":{seed}}}"),
            solution: "U R D".into(),
            metrics: [("pushes".to_string(), 3.0)].into(),
            level_hash: format!("{seed:064x}"),
            canonical: None,
        });
    }
    r
}

#[test]
fn any_deterministic_field_that_differs_is_a_dispute() {
    type Forgery = (&'static str, fn(&mut SeedRecord));
    let forgeries: [Forgery; 7] = [
        ("difficulty", |r| {
            r.level.as_mut().expect("level").difficulty += 1e-9;
        }),
        ("a metric", |r| {
            r.level
                .as_mut()
                .expect("level")
                .metrics
                .insert("pushes".into(), 4.0);
        }),
        ("a metric added", |r| {
            r.level
                .as_mut()
                .expect("level")
                .metrics
                .insert("agents".into(), 0.0);
        }),
        ("moves_optimal", |r| {
            r.level.as_mut().expect("level").moves_optimal = false;
        }),
        ("the solution", |r| {
            r.level.as_mut().expect("level").solution = "U R D D U".into();
        }),
        ("nodes", |r| r.nodes += 1),
        ("the layout", |r| {
            r.level.as_mut().expect("level").layout.push(' ');
        }),
    ];
    for (what, forge) in forgeries {
        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "liar", 0).expect("open");
        s.session_started(2, "honest", 0).expect("open");
        work_with(&mut s, 1, |seed| {
            let mut r = leveled("liar", seed);
            if seed == 105 {
                forge(&mut r);
            }
            r
        });
        work_with(&mut s, 2, |seed| leveled("honest", seed));
        assert_eq!(s.progress().cross_check.disputes, 1, "{what}");
        let work = s.coordinator_work(Instant::now(), Duration::ZERO);
        for &(_, seed) in &work {
            s.coordinator_result(leveled(COORDINATOR, seed));
        }
        assert!(
            s.refusal("liar").is_some_and(|r| r.contains("seed 105")),
            "{what}: {:?}",
            s.refusal("liar")
        );
        assert!(s.refusal("honest").is_none(), "{what}");
    }
}

#[test]
fn another_seeds_level_has_both_seeds_run_by_the_coordinator() {
    let audited = || SchedulerConfig {
        audit_duplicate_levels: true,
        bands: Vec::new(),
        ..config(4, 6)
    };
    let mut s = Scheduler::new(audited(), vec![]);
    s.session_started(1, "liar", 0).expect("open");
    // Seed 102 carries seed 105's real level; nothing else is wrong.
    work_with(&mut s, 1, |seed| {
        let mut r = leveled("liar", if seed == 102 { 105 } else { seed });
        r.seed = seed;
        r
    });
    assert!(!s.is_complete(), "the two seeds wait for the coordinator");
    let mut work = s.coordinator_work(Instant::now(), Duration::from_secs(60));
    work.sort_unstable();
    assert_eq!(work, [(0, 102), (0, 105)]);
    for &(_, seed) in &work {
        s.coordinator_result(leveled(COORDINATOR, seed));
    }
    assert!(s.refusal("liar").is_some_and(|r| r.contains("seed 102")));

    // Honest twins (two seeds, one level) cost two runs and refuse no one.
    let mut s = Scheduler::new(audited(), vec![]);
    s.session_started(1, "honest", 0).expect("open");
    let twin = |seed: u64| {
        let mut r = leveled("honest", if seed == 102 { 105 } else { seed });
        r.seed = seed;
        r
    };
    work_with(&mut s, 1, twin);
    for (_, seed) in s.coordinator_work(Instant::now(), Duration::from_secs(60)) {
        s.coordinator_result(by(COORDINATOR, twin(seed)));
    }
    assert!(s.refusal("honest").is_none());
    assert!(s.is_complete());
}

/// A level outside its stratum's band is still the level its worker sent:
/// when the coordinator runs its seed (here: a level met at two seeds), an
/// honest worker's out-of-band level agrees with the coordinator's.
#[test]
fn an_out_of_band_level_agrees_with_the_coordinators_run_of_it() {
    let banded = SchedulerConfig {
        audit_duplicate_levels: true,
        // `leveled` rates seed s at s / 7: 102 rates 14.6, outside the band.
        bands: vec![Some(pregen_pack::job::Band {
            min: None,
            max: Some(14.0),
        })],
        ..config(4, 6)
    };
    let mut s = Scheduler::new(banded, vec![]);
    s.session_started(1, "honest", 0).expect("open");
    let twin = |seed: u64| {
        let mut r = leveled("honest", if seed == 105 { 102 } else { seed });
        r.seed = seed;
        r
    };
    work_with(&mut s, 1, twin);
    let work = s.coordinator_work(Instant::now(), Duration::from_secs(60));
    assert!(!work.is_empty(), "the twins wait for the coordinator");
    for (_, seed) in work {
        s.coordinator_result(by(COORDINATOR, twin(seed)));
    }
    assert_eq!(s.refusal("honest"), None);
}

#[test]
fn a_dispute_between_two_liars_outlives_the_refusal_of_one() {
    let mut s = checked(4, 6, 1.0);
    s.session_started(1, "liar-a", 0).expect("open");
    s.session_started(2, "liar-b", 0).expect("open");
    let lie = |worker: &'static str, by: f64| {
        move |seed: u64| {
            let mut r = leveled(worker, seed);
            if seed == 105 {
                r.level.as_mut().expect("level").difficulty += by;
            }
            r
        }
    };
    work_with(&mut s, 1, lie("liar-a", 1.0));
    work_with(&mut s, 2, lie("liar-b", 2.0));
    assert_eq!(s.progress().cross_check.disputes, 1);
    // liar-a is refused for something else first.
    s.refuse("liar-a", "seed 7: a forged level");
    let work = s.coordinator_work(Instant::now(), Duration::ZERO);
    assert!(work.contains(&(0, 105)), "the dispute stays: {work:?}");
    for &(_, seed) in &work {
        s.coordinator_result(leveled(COORDINATOR, seed));
    }
    assert!(s.refusal("liar-b").is_some_and(|r| r.contains("seed 105")));
}

#[test]
fn a_lying_checker_is_refused_and_the_first_result_stands() {
    let mut s = checked(4, 6, 1.0);
    s.session_started(1, "honest", 0).expect("open");
    s.session_started(2, "liar", 0).expect("open");
    work(&mut s, 1, "honest");
    work(&mut s, 2, "liar");
    own_runs(&mut s, Duration::ZERO);
    assert!(s.refusal("liar").is_some());
    assert!(s.refusal("honest").is_none());
    // With the liar gone, the coordinator checks what is left itself.
    s.session_ended(2);
    own_runs(&mut s, Duration::from_secs(2));
    work(&mut s, 1, "honest");
    own_runs(&mut s, Duration::from_secs(2));
    assert!(s.is_complete());
    let pack = s.take_pack_records().expect("complete");
    assert_eq!(accepted_seeds(&pack), vec![102, 105, 108, 111]);
}

#[test]
fn with_one_worker_the_coordinator_checks_the_sample_itself() {
    let mut s = checked(4, 6, 1.0);
    s.session_started(1, "alone", 0).expect("open");
    let first = lease(s.grant(1, Instant::now()));
    for seed in first.first_seed..first.first_seed + 2 {
        s.record(1, first.id, answer("alone", seed))
            .expect("in lease");
    }
    assert_eq!(
        s.coordinator_work(Instant::now(), Duration::from_secs(60)),
        vec![],
        "not before the grace while seeds are still wanted"
    );
    for seed in first.first_seed + 2..first.first_seed + first.seed_count {
        s.record(1, first.id, answer("alone", seed))
            .expect("in lease");
    }
    s.lease_done(1, first.id);
    work(&mut s, 1, "alone");
    assert!(!s.is_complete());
    // At the tail no other worker will come for them: at once.
    let at_once = s.coordinator_work(Instant::now(), Duration::from_secs(60));
    assert!(at_once.len() >= 12, "{at_once:?}");
    for &(_, seed) in &at_once {
        s.coordinator_result(by(COORDINATOR, result(seed)));
    }
    assert!(s.is_complete());
    assert_eq!(s.progress().cross_check.disputes, 0);
}

#[test]
fn a_worker_that_never_asks_for_work_does_not_hold_the_checks_back() {
    let mut s = checked(4, 6, 1.0);
    s.session_started(1, "busy", 0).expect("open");
    s.session_started(2, "silent", 0).expect("open");
    work(&mut s, 1, "busy");
    let later = Instant::now() + Duration::from_secs(2);
    assert_eq!(s.coordinator_work(later, Duration::from_secs(1)), vec![]);
    let ttl = Instant::now() + Duration::from_secs(11);
    assert!(s.coordinator_work(ttl, Duration::from_secs(1)).len() >= 12);
}

#[test]
fn a_session_that_hoards_checks_does_not_hold_the_pack_back() {
    let mut s = checked(4, 6, 1.0);
    s.session_started(1, "a", 0).expect("open");
    s.session_started(2, "hoarder", 0).expect("open");
    work(&mut s, 1, "a");
    let start = Instant::now();
    // The hoarder takes checks and never answers; what it gives back it
    // takes again at once.
    let mut held: Vec<Lease> = Vec::new();
    while let Grant::Lease(l) = s.grant(2, start) {
        held.push(l);
    }
    assert!(!held.is_empty() && held.iter().all(|l| l.check));
    s.lease_returned(2, held[0].id);
    let again = lease(s.grant(2, start));
    assert_eq!(again.first_seed, held[0].first_seed);
    s.heartbeat(2, start + Duration::from_secs(9));
    // A lease TTL on, at the tail, the coordinator runs every check.
    let later = start + Duration::from_secs(11);
    let work = s.coordinator_work(later, Duration::from_secs(1));
    for l in held.iter().skip(1).chain([&again]) {
        assert!(
            work.iter().any(|&(_, seed)| seed == l.first_seed),
            "{work:?}"
        );
    }
    for &(_, seed) in &work {
        s.coordinator_result(by(COORDINATOR, result(seed)));
    }
    assert!(s.is_complete(), "the hoarder holds nothing back");
    assert!(s.refusal("hoarder").is_none(), "holding is not lying");
}

#[test]
fn a_far_off_record_costs_nothing_on_resume() {
    let far = 100 + (1 << 39);
    let committed = [100, far]
        .into_iter()
        .map(result)
        .map(Entry::Result)
        .collect();
    let mut s = Scheduler::new(config(4, 4), committed);
    let hole = lease(s.grant(1, Instant::now()));
    assert_eq!((hole.first_seed, hole.seed_count), (101, 4));
    let next = lease(s.grant(1, Instant::now()));
    assert_eq!((next.first_seed, next.seed_count), (105, 4));
}

/// a game that fails every seed (a program whose every level breaks a
/// rule) stops the run after [`ERRORS_BEFORE_STOP`] errors with no level
/// come in, with the first error's detail, instead of running for ever;
/// normal rejections between the errors do not reset it, one level disarms
/// it.
#[test]
fn a_run_whose_every_seed_fails_stops() {
    let error = |seed: u64| SeedRecord {
        status: Status::Error,
        reason: Some(Reason::new(
            Code::Protocol,
            format!("seed {seed}: the layout does not end with a newline"),
        )),
        ..result(seed)
    };
    let rejected = |seed: u64| SeedRecord {
        status: Status::Rejected,
        reason: Some(Reason::new(Code::TooEasy, "1 move")),
        ..result(seed)
    };
    // Every other seed an error, the others rejected as too easy.
    let entries = (100..100 + 2 * ERRORS_BEFORE_STOP)
        .map(|seed| match seed % 2 {
            0 => Entry::Result(error(seed)),
            _ => Entry::Result(rejected(seed)),
        })
        .collect();
    let s = Scheduler::new(config(10, 100), entries);
    assert!(s.is_finished());
    let fault = s.program_fault().expect("stopped");
    assert!(
        fault.starts_with("1000 seeds ended in an error or a timeout and no level came in"),
        "{fault}"
    );
    assert!(
        fault.contains("the first, seed 100: protocol: seed 100: the layout does not end"),
        "{fault}"
    );

    // A program that times out on every seed trips it too.
    let timeouts = (100..100 + ERRORS_BEFORE_STOP)
        .map(|seed| {
            Entry::Result(SeedRecord {
                status: Status::Timeout,
                reason: None,
                ..result(seed)
            })
        })
        .collect();
    let s = Scheduler::new(config(10, 100), timeouts);
    let fault = s.program_fault().expect("stopped");
    assert!(fault.contains("the first, seed 100: timeout"), "{fault}");

    // One level (seed 102 is accepted) among as many errors: no stop.
    let mut entries: Vec<Entry> = vec![Entry::Result(result(102))];
    entries.extend((103..103 + ERRORS_BEFORE_STOP).map(|seed| Entry::Result(error(seed))));
    let s = Scheduler::new(config(10_000, 100), entries);
    assert!(s.program_fault().is_none());
}

/// A worker's seed whose exchange with the game program broke is no
/// verdict: nothing of it is recorded and the coordinator runs the seed
/// itself; its own verdict is the seed's, and a seed that breaks there too
/// stops the run naming it.
#[test]
fn a_seed_broken_on_a_worker_is_settled_by_the_coordinators_run() {
    let broken = |seed: u64| SeedRecord {
        status: Status::Error,
        reason: Some(Reason::new(
            Code::Broken,
            "the program ended before answering",
        )),
        ..result(seed)
    };
    let now = Instant::now();
    let mut s = Scheduler::new(config(10, 4), vec![]);
    let l = lease(s.grant(1, now));
    s.record(1, l.id, result(100)).expect("in lease");
    s.record(1, l.id, broken(101)).expect("in lease");
    s.record(1, l.id, broken(102)).expect("in lease");
    assert_eq!(s.progress().seeds, 1, "the broken seeds are not recorded");
    assert_eq!(s.progress().broken, 2);
    assert!(
        !s.take_unflushed()
            .iter()
            .any(|e| matches!(e, Entry::Result(r) if r.seed != 100))
    );
    let work = s.coordinator_work(now, Duration::ZERO);
    assert_eq!(work, vec![(0, 101), (0, 102)]);
    assert!(
        s.coordinator_work(now, Duration::ZERO).is_empty(),
        "handed out once"
    );

    s.coordinator_result(by(COORDINATOR, result(101)));
    assert_eq!(s.progress().seeds, 2);
    assert!(s.program_fault().is_none());
    s.coordinator_result(by(COORDINATOR, broken(102)));
    let fault = s.program_fault().expect("the run stops");
    assert!(
        fault.contains("the game program breaks on seed 102 even asked alone"),
        "{fault}"
    );
    assert!(s.is_finished());
}
