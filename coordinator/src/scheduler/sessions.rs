//! The worker sessions open now: each one's worker, threads, leases out and
//! cost per seed, and when it last sent a result.

use std::collections::HashMap;
use std::time::Instant;

use super::SessionId;
use super::sizing::Cost;

/// The most threads a Hello is believed for.
const MAX_THREADS: u32 = 1024;

/// An open session.
#[derive(Debug, Clone, Default)]
pub(super) struct SessionInfo {
    /// The worker's name.
    pub(super) worker: String,
    /// Worker threads, as its Hello said (0: unknown).
    pub(super) threads: u32,
    /// Its leases out.
    pub(super) leases: Vec<u64>,
    /// The cost per seed in its results.
    pub(super) cost: Cost,
}

/// Every open session, with their threads summed.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    open: HashMap<SessionId, SessionInfo>,
    threads: u64,
    /// When each session last sent a result.
    last_result: HashMap<SessionId, Instant>,
}

impl Sessions {
    /// A session of `worker` with `threads` opened (again: its worker and
    /// threads are replaced).
    pub(super) fn start(&mut self, session: SessionId, worker: &str, threads: u32) {
        let info = self.open.entry(session).or_default();
        info.worker = worker.to_string();
        self.threads -= u64::from(info.threads);
        info.threads = threads.min(MAX_THREADS);
        self.threads += u64::from(info.threads);
    }

    /// The session is gone: its leases still out, to be released.
    pub(super) fn end(&mut self, session: SessionId) -> Vec<u64> {
        self.last_result.remove(&session);
        let Some(info) = self.open.remove(&session) else {
            return Vec::new();
        };
        self.threads -= u64::from(info.threads);
        info.leases
    }

    /// The session, if open.
    pub(super) fn get(&self, session: SessionId) -> Option<&SessionInfo> {
        self.open.get(&session)
    }

    /// Its threads (0 when not known or not open).
    pub(super) fn threads_of(&self, session: SessionId) -> u32 {
        self.get(session).map_or(0, |s| s.threads)
    }

    /// The threads of every open session.
    pub(super) fn threads(&self) -> u64 {
        self.threads
    }

    /// Sessions open.
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    /// The names of the workers of the open sessions (one per session).
    pub(super) fn workers(&self) -> impl Iterator<Item = &str> {
        self.open.values().map(|s| s.worker.as_str())
    }

    /// Every lease out to a session of `worker`, with its session.
    pub(super) fn leases_of_worker(&self, worker: &str) -> Vec<(SessionId, u64)> {
        self.open
            .iter()
            .filter(|(_, s)| s.worker == worker)
            .flat_map(|(&session, s)| s.leases.iter().map(move |&id| (session, id)))
            .collect()
    }

    /// Lease `id` went out to the session (opened now if it was not).
    pub(super) fn add_lease(&mut self, session: SessionId, id: u64) {
        self.open.entry(session).or_default().leases.push(id);
    }

    /// Lease `id` is no longer out to the session.
    pub(super) fn drop_lease(&mut self, session: SessionId, id: u64) {
        if let Some(info) = self.open.get_mut(&session) {
            info.leases.retain(|&l| l != id);
        }
    }

    /// The session sent results at `now`, costing `mean` ms a seed.
    pub(super) fn results(&mut self, session: SessionId, now: Instant, mean: f64) {
        self.last_result.insert(session, now);
        if let Some(info) = self.open.get_mut(&session) {
            info.cost.observe(mean);
        }
    }

    /// When the session last sent a result.
    pub(super) fn last_result(&self, session: SessionId) -> Option<Instant> {
        self.last_result.get(&session).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_summed_over_open_sessions_and_a_hello_again_replaces_them() {
        let mut s = Sessions::default();
        s.start(1, "a", 4);
        s.start(2, "b", 8);
        assert_eq!((s.threads(), s.len()), (12, 2));
        s.start(1, "a", 2);
        assert_eq!(s.threads(), 10);
        s.start(3, "c", 1_000_000);
        assert_eq!(s.threads_of(3), MAX_THREADS);
        s.end(3);
        s.end(2);
        assert_eq!((s.threads(), s.len()), (2, 1));
        assert_eq!(s.threads_of(2), 0);
    }

    #[test]
    fn an_ended_session_hands_back_its_leases_and_forgets_its_results() {
        let mut s = Sessions::default();
        let now = Instant::now();
        s.start(1, "a", 2);
        s.add_lease(1, 10);
        s.add_lease(1, 11);
        s.add_lease(1, 12);
        s.drop_lease(1, 11);
        s.results(1, now, 5.0);
        assert_eq!(s.last_result(1), Some(now));
        assert_eq!(s.get(1).map(|i| i.cost.ms()), Some(Some(5.0)));
        assert_eq!(s.leases_of_worker("a"), vec![(1, 10), (1, 12)]);
        assert_eq!(s.end(1), vec![10, 12]);
        assert_eq!(s.last_result(1), None);
        assert_eq!(s.end(1), Vec::<u64>::new());
    }

    #[test]
    fn workers_are_named_once_per_session() {
        let mut s = Sessions::default();
        s.start(1, "a", 1);
        s.start(2, "a", 1);
        s.start(3, "b", 1);
        let mut names: Vec<&str> = s.workers().collect();
        names.sort_unstable();
        assert_eq!(names, ["a", "a", "b"]);
        assert!(s.leases_of_worker("c").is_empty());
    }
}
