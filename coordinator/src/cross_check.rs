//! The sampled cross-check's bookkeeping: which seeds are sampled, which
//! wait for a second run, which are disputed, and which workers are refused.
//!
//! A share of seeds is drawn by a keyed hash of the seed; the key is drawn by
//! the coordinator when it starts and never leaves it, so a worker cannot
//! tell which of its results will be checked. The first result of a sampled
//! seed counts at once (the pack does not wait for it) and the seed waits for
//! a second run by another worker (identity); the pack is not written while a
//! sampled seed inside it waits. When two results of a seed disagree, the
//! coordinator runs the seed itself and refuses every worker that disagreed
//! with it: none of that worker's results count any more and its seeds are
//! run again by others. The [`Scheduler`](crate::scheduler::Scheduler) holds
//! a [`CrossCheck`] and applies these rules to its records.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::time::Instant;

use pregen_pack::manifest::CrossCheck as Facts;
use pregen_pack::{SeedRecord, Status};
use sha2::{Digest, Sha256};

/// The worker name of the coordinator's own runs (refused to workers).
pub const COORDINATOR: &str = "coordinator";

/// Where a sampled seed's second run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckState {
    /// Waiting for a worker to ask.
    Queued,
    /// Out in this lease.
    Leased(u64),
    /// The coordinator runs it (no other worker could).
    Coordinator,
}

/// A sampled seed whose first result waits for a second run.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The seed's stratum.
    pub stratum: u32,
    /// The first result: its worker may not run the check.
    pub first: Claim,
    /// Since when it waits for a worker (the coordinator's grace starts here).
    pub since: Instant,
    /// Where it stands.
    pub state: CheckState,
}

/// Two results of one seed that disagree; the coordinator's run decides.
#[derive(Debug, Clone)]
pub struct Dispute {
    /// The seed's stratum.
    pub stratum: u32,
    /// The results that disagree.
    pub results: [Claim; 2],
    /// The coordinator runs it now.
    pub running: bool,
}

/// A seed whose exchange with the game program broke on a worker; the
/// coordinator's own run decides what it is.
#[derive(Debug, Clone)]
pub struct BrokenSeed {
    /// The seed's stratum.
    pub stratum: u32,
    /// What broke, as the worker said it.
    pub detail: String,
    /// The coordinator runs it now.
    pub running: bool,
}

/// The cross-check's state.
#[derive(Debug)]
pub struct CrossCheck {
    share: f64,
    key: [u8; 16],
    /// Sampled seeds waiting for their second run.
    pub pending: BTreeMap<u64, Pending>,
    /// Seeds of `pending` in the order they are handed out (entries no
    /// longer queued are skipped as met).
    pub queue: VecDeque<u64>,
    /// Seeds with two disagreeing results.
    pub disputes: BTreeMap<u64, Dispute>,
    /// Seeds whose exchange with the game program broke on a worker, even
    /// asked alone (a crash, a kill, a broken message): nothing is recorded
    /// of them until the coordinator's own run gives the seed's verdict.
    pub broken: BTreeMap<u64, BrokenSeed>,
    refused: BTreeMap<String, String>,
    /// Seeds a second run confirmed, and seeds whose runs disagreed: kept
    /// by seed, each once (a refused worker's seeds run and are checked
    /// again), so that the manifest counts those of the pack alone (how
    /// many checks past the pack's last seed finish before it is written
    /// depends on timing; the pack's own do not).
    confirmed: HashSet<u64>,
    disputed: HashSet<u64>,
}

impl CrossCheck {
    /// Samples `share` of the seeds (0 to 1) by a hash keyed with `key`.
    pub fn new(share: f64, key: [u8; 16]) -> Self {
        CrossCheck {
            share,
            key,
            pending: BTreeMap::new(),
            queue: VecDeque::new(),
            disputes: BTreeMap::new(),
            broken: BTreeMap::new(),
            refused: BTreeMap::new(),
            confirmed: HashSet::new(),
            disputed: HashSet::new(),
        }
    }

    /// Whether `seed` is sampled for a second run.
    pub fn sampled(&self, seed: u64) -> bool {
        if self.share <= 0.0 {
            return false;
        }
        if self.share >= 1.0 {
            return true;
        }
        let digest = Sha256::new()
            .chain_update(self.key)
            .chain_update(seed.to_le_bytes())
            .finalize();
        let mut head = [0u8; 8];
        head.copy_from_slice(&digest[..8]);
        // A uniform draw in [0, 1) from the hash's first 53 bits.
        let draw = (u64::from_le_bytes(head) >> 11) as f64 / (1u64 << 53) as f64;
        draw < self.share
    }

    /// Why `worker` is refused, if it is: by its identity, or by its ID
    /// under another name (a client certificate's ID is the same whatever
    /// name its holder gives).
    pub fn refusal(&self, worker: &str) -> Option<&str> {
        if let Some(reason) = self.refused.get(worker) {
            return Some(reason);
        }
        let id = worker.rsplit_once('#')?.1;
        self.refused
            .iter()
            .find(|(refused, _)| refused.rsplit_once('#').is_some_and(|(_, r)| r == id))
            .map(|(_, reason)| reason.as_str())
    }

    /// Records the refusal; false if the worker was refused already.
    pub fn refuse(&mut self, worker: &str, reason: &str) -> bool {
        if self.refused.contains_key(worker) {
            return false;
        }
        self.refused.insert(worker.to_string(), reason.to_string());
        self.pending.retain(|_, p| p.first.worker != worker);
        // Its disputes stay: the other side may be lying too, and only the
        // coordinator's run can tell.
        true
    }

    /// A second run of `seed` agreed with the first.
    pub fn confirm(&mut self, seed: u64) {
        self.confirmed.insert(seed);
    }

    /// Two runs of `seed` disagreed (whatever the dispute's end).
    pub fn count_dispute(&mut self, seed: u64) {
        self.disputed.insert(seed);
    }

    /// The first queued check that `worker` may run (not its own result),
    /// looking at the first `window` entries of the queue; `keep` says
    /// whether a seed still needs checking (others are dropped).
    pub fn next_for(
        &mut self,
        worker: &str,
        window: usize,
        mut keep: impl FnMut(u64) -> bool,
    ) -> Option<u64> {
        let mut i = 0;
        while i < self.queue.len().min(window) {
            let seed = self.queue[i];
            let live = self
                .pending
                .get(&seed)
                .is_some_and(|p| p.state == CheckState::Queued);
            if !live || !keep(seed) {
                if live {
                    self.pending.remove(&seed);
                }
                self.queue.remove(i);
                continue;
            }
            if self.pending[&seed].first.worker != worker {
                self.queue.remove(i);
                return Some(seed);
            }
            i += 1;
        }
        None
    }

    /// What a manifest and a progress report say about the cross-check:
    /// confirmations and disputes of the seeds `counts` keeps (the pack's,
    /// once it is complete).
    pub fn facts(&self, counts: impl Fn(u64) -> bool) -> Facts {
        Facts {
            share: self.share,
            confirmed: self.confirmed.iter().filter(|s| counts(**s)).count() as u64,
            disputes: self.disputed.iter().filter(|s| counts(**s)).count() as u64,
            refused: self.refused.clone(),
        }
    }
}

/// One worker's result for a seed, as the cross-check judges it: who sent
/// it, its verdict's fingerprint and how a refusal names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The worker.
    pub worker: String,
    /// Its status.
    pub status: Status,
    /// Its verdict's fingerprint ([`crate::verdicts::Verdicts::fingerprint`]).
    pub fingerprint: u32,
    /// The result in words.
    pub description: String,
    /// Whether it is a broken exchange with a game program (a crash, a
    /// kill): like a watchdog timeout, it proves nothing either way.
    pub broken: bool,
}

impl Claim {
    /// The claim of a whole record.
    pub fn of(r: &SeedRecord, fingerprint: u32) -> Claim {
        Claim {
            worker: r.worker.clone(),
            status: r.status,
            fingerprint,
            description: describe(r),
            broken: is_broken(r.reason.as_ref().map(|r| r.code)),
        }
    }

    /// Whether the claim proves nothing either way: a watchdog timeout or a
    /// broken exchange with a program.
    pub fn proves_nothing(&self) -> bool {
        self.status == Status::Timeout || self.broken
    }
}

/// Whether a refusal's code is a broken exchange with a game program.
pub fn is_broken(code: Option<pregen_games::Code>) -> bool {
    code == Some(pregen_games::Code::Broken)
}

/// One result as a refusal names it.
pub fn describe(r: &SeedRecord) -> String {
    match (&r.status, &r.level) {
        (Status::Accepted, Some(level)) => {
            let hash = level.level_hash.get(..12).unwrap_or(&level.level_hash);
            format!("accepted, level {hash}, {} nodes", r.nodes)
        }
        (status, _) => match &r.reason {
            None => format!("{status}, {} nodes", r.nodes),
            Some(reason) => format!("{status} ({reason}), {} nodes", r.nodes),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_the_share_and_depends_on_the_key() {
        let a = CrossCheck::new(0.05, [1; 16]);
        let b = CrossCheck::new(0.05, [2; 16]);
        let in_a: Vec<u64> = (0..100_000).filter(|&s| a.sampled(s)).collect();
        let in_b: Vec<u64> = (0..100_000).filter(|&s| b.sampled(s)).collect();
        for n in [in_a.len(), in_b.len()] {
            assert!((4_500..5_500).contains(&n), "{n} of 100,000 sampled");
        }
        let both = in_a
            .iter()
            .filter(|s| in_b.binary_search(s).is_ok())
            .count();
        assert!(
            both < 500,
            "{both} seeds in both samples: the key must matter"
        );
        assert!(!(0..1000).any(|s| CrossCheck::new(0.0, [1; 16]).sampled(s)));
        assert!((0..1000).all(|s| CrossCheck::new(1.0, [1; 16]).sampled(s)));
    }

    /// The chance that a worker lying on `lies` seeds has at least one of
    /// them sampled, over 2,000 coordinator keys, against 1 - (1 - share)^lies
    /// (docs/trust.md's table of catch rates is this test's output).
    #[test]
    fn the_catch_rate_of_a_liar_is_what_the_share_promises() {
        for (share, lies) in [(0.01, 1), (0.01, 10), (0.01, 100), (0.05, 10), (0.1, 10)] {
            let keys = 2_000u32;
            let caught = (0..keys)
                .filter(|&k| {
                    let mut key = [0u8; 16];
                    key[..4].copy_from_slice(&k.to_le_bytes());
                    let c = CrossCheck::new(share, key);
                    (0..lies).any(|i| c.sampled(1_000 + 37 * i))
                })
                .count() as f64
                / f64::from(keys);
            let expected = 1.0 - (1.0 - share).powi(lies as i32);
            // Four standard deviations of a binomial share of 2,000.
            let tolerance = 4.0 * (expected * (1.0 - expected) / f64::from(keys)).sqrt() + 0.002;
            println!("share {share}, {lies} lies: caught {caught:.3}, expected {expected:.3}");
            assert!(
                (caught - expected).abs() <= tolerance,
                "{share} {lies}: {caught} vs {expected}"
            );
        }
    }

    #[test]
    fn a_worker_never_checks_its_own_result() {
        let mut c = CrossCheck::new(1.0, [0; 16]);
        let now = Instant::now();
        for (seed, first) in [(5, "a"), (6, "b"), (7, "a")] {
            c.pending.insert(
                seed,
                Pending {
                    stratum: 0,
                    first: Claim {
                        worker: first.into(),
                        status: Status::Accepted,
                        fingerprint: 0,
                        description: String::new(),
                        broken: false,
                    },
                    since: now,
                    state: CheckState::Queued,
                },
            );
            c.queue.push_back(seed);
        }
        assert_eq!(c.next_for("a", 64, |_| true), Some(6));
        assert_eq!(c.next_for("a", 64, |_| true), None);
        // Seeds no longer needed are dropped as met.
        assert_eq!(c.next_for("b", 64, |s| s != 5), Some(7));
        assert!(c.queue.is_empty() && !c.pending.contains_key(&5));
        c.refuse("a", "lied");
        assert_eq!(
            c.pending.keys().collect::<Vec<_>>(),
            [&6],
            "a's own seeds dropped"
        );
        assert!(!c.refuse("a", "again"));
        assert_eq!(c.refusal("a"), Some("lied"));
    }
}
