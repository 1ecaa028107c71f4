//! The worker's side of the session protocol as a pure state machine:
//! inputs in (a coordinator message, an event of the seeds' runner, a timer,
//! the shutdown), actions out (a message to send, a grant to run, a lease
//! request to send later, the end of the session). No I/O and no clock: the
//! real session (`session.rs`, seeds on the pool) and the load client
//! (`load.rs`, seeds inline) drive the same machine, and its tests cover
//! every transition.

use std::time::Duration;

use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{
    Heartbeat, LeaseDone, LeaseGrant, LeaseRequest, LeaseReturn, Results, SeedResult,
};

use crate::error::SessionError;

/// What happened.
#[derive(Debug)]
pub(crate) enum Input {
    /// A message from the coordinator.
    Message(In),
    /// The coordinator closed the session's stream.
    Closed,
    /// The runner started a lease's seeds: time to ask for the next lease.
    LeaseStarted,
    /// The runner has these results ready, in order.
    Results(Vec<SeedResult>),
    /// The runner is done with a lease: every seed run (`complete`), or
    /// stopped by the drain.
    LeaseFinished {
        /// The lease.
        lease_id: u64,
        /// Whether every seed of it ran.
        complete: bool,
    },
    /// The heartbeat timer fired.
    Heartbeat,
    /// The worker is asked to stop: finish the seeds in progress, give the
    /// rest back.
    Shutdown,
}

/// What the session does about it.
#[derive(Debug, PartialEq)]
pub(crate) enum Action {
    /// Send this message to the coordinator.
    Send(Out),
    /// Run this lease's seeds.
    Run(LeaseGrant),
    /// Ask for a lease again after this delay.
    RequestAfter(Duration),
    /// Stop starting seeds (the drain began).
    StopRunning,
    /// The session is over.
    End(Ending),
}

/// How a session ended.
#[derive(Debug, PartialEq)]
pub(crate) enum Ending {
    /// The coordinator said the job is finished.
    Finished,
    /// The drain is complete: every lease given back or done.
    Drained,
    /// The coordinator broke the protocol or the session.
    Lost(String),
    /// The job cannot be run as given.
    Job(String),
}

impl Ending {
    /// The ending as the session's result.
    pub(crate) fn into_result(self) -> Result<(), SessionError> {
        match self {
            Ending::Finished | Ending::Drained => Ok(()),
            Ending::Lost(m) => Err(SessionError::Lost(m)),
            Ending::Job(m) => Err(SessionError::Job(m)),
        }
    }
}

/// The shortest and the longest wait after a `NoWork`, whatever it says.
const RETRY_WAIT: (u64, u64) = (10, 10_000);

/// Where one session stands.
#[derive(Debug)]
pub(crate) struct Session {
    /// The job's strata: a grant must name one of them.
    strata: usize,
    /// Leases handed to the runner and not finished.
    in_flight: usize,
    /// Whether the drain began.
    draining: bool,
}

impl Session {
    /// A session of a job with `strata` strata.
    pub(crate) fn new(strata: usize) -> Session {
        Session {
            strata,
            in_flight: 0,
            draining: false,
        }
    }

    /// The first actions: `requests` lease requests, so that the next lease
    /// is there when a lease ends.
    pub(crate) fn start(&mut self, requests: usize) -> Vec<Action> {
        (0..requests).map(|_| request()).collect()
    }

    /// What to do about `input`.
    pub(crate) fn on(&mut self, input: Input) -> Vec<Action> {
        match input {
            Input::Message(message) => self.message(message),
            Input::Closed => vec![Action::End(Ending::Lost(
                "the coordinator closed the session".into(),
            ))],
            Input::LeaseStarted if self.draining => Vec::new(),
            Input::LeaseStarted => vec![request()],
            Input::Results(results) => vec![Action::Send(Out::Results(Results { results }))],
            Input::LeaseFinished { lease_id, complete } => {
                self.in_flight = self.in_flight.saturating_sub(1);
                let mut actions = vec![if complete {
                    Action::Send(Out::LeaseDone(LeaseDone { lease_id }))
                } else {
                    Action::Send(Out::LeaseReturn(LeaseReturn { lease_id }))
                }];
                if self.draining && self.in_flight == 0 {
                    actions.push(Action::End(Ending::Drained));
                }
                actions
            }
            Input::Heartbeat => vec![Action::Send(Out::Heartbeat(Heartbeat {}))],
            Input::Shutdown if self.draining => Vec::new(),
            Input::Shutdown => {
                self.draining = true;
                let mut actions = vec![Action::StopRunning];
                if self.in_flight == 0 {
                    actions.push(Action::End(Ending::Drained));
                }
                actions
            }
        }
    }

    /// Leases handed to the runner and not finished.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Whether the drain began.
    pub(crate) fn draining(&self) -> bool {
        self.draining
    }

    fn message(&mut self, message: In) -> Vec<Action> {
        match message {
            In::Grant(grant) if self.draining => {
                vec![Action::Send(Out::LeaseReturn(LeaseReturn {
                    lease_id: grant.lease_id,
                }))]
            }
            In::Grant(grant) if grant.stratum as usize >= self.strata => {
                vec![Action::End(Ending::Job(format!(
                    "lease {} names stratum {}; the job has {}",
                    grant.lease_id, grant.stratum, self.strata
                )))]
            }
            In::Grant(grant) => {
                self.in_flight += 1;
                vec![Action::Run(grant)]
            }
            In::NoWork(wait) => vec![Action::RequestAfter(Duration::from_millis(
                wait.retry_after_ms.clamp(RETRY_WAIT.0, RETRY_WAIT.1),
            ))],
            In::Finished(_) => vec![Action::End(Ending::Finished)],
            In::Welcome(_) => vec![Action::End(Ending::Lost("Welcome sent twice".into()))],
        }
    }
}

/// A lease request.
pub(crate) fn request() -> Action {
    Action::Send(Out::LeaseRequest(LeaseRequest {}))
}

#[cfg(test)]
mod tests {
    use pregen_proto::v1::{Finished, NoWork, Welcome};

    use super::*;

    fn grant(lease_id: u64, stratum: u32) -> Input {
        Input::Message(In::Grant(LeaseGrant {
            lease_id,
            stratum,
            first_seed: 100,
            seed_count: 10,
            ..LeaseGrant::default()
        }))
    }

    fn finished(lease_id: u64, complete: bool) -> Input {
        Input::LeaseFinished { lease_id, complete }
    }

    fn done(lease_id: u64) -> Action {
        Action::Send(Out::LeaseDone(LeaseDone { lease_id }))
    }

    fn returned(lease_id: u64) -> Action {
        Action::Send(Out::LeaseReturn(LeaseReturn { lease_id }))
    }

    #[test]
    fn a_session_asks_ahead_then_runs_its_grants_and_asks_again_as_each_starts() {
        let mut s = Session::new(2);
        assert_eq!(s.start(2), vec![request(), request()]);
        let actions = s.on(grant(1, 1));
        assert!(matches!(&actions[..], [Action::Run(g)] if g.lease_id == 1));
        assert_eq!(s.in_flight(), 1);
        assert_eq!(s.on(Input::LeaseStarted), vec![request()]);
        let result = SeedResult {
            seed: 100,
            lease_id: 1,
            ..SeedResult::default()
        };
        assert_eq!(
            s.on(Input::Results(vec![result.clone(), result.clone()])),
            vec![Action::Send(Out::Results(Results {
                results: vec![result.clone(), result]
            }))]
        );
        assert_eq!(s.on(finished(1, true)), vec![done(1)]);
        assert_eq!(s.in_flight(), 0);
        assert_eq!(
            s.on(Input::Heartbeat),
            vec![Action::Send(Out::Heartbeat(Heartbeat {}))]
        );
    }

    #[test]
    fn a_grant_of_a_stratum_the_job_lacks_ends_the_session() {
        let mut s = Session::new(2);
        assert_eq!(
            s.on(grant(7, 2)),
            vec![Action::End(Ending::Job(
                "lease 7 names stratum 2; the job has 2".into()
            ))]
        );
        assert_eq!(s.in_flight(), 0);
    }

    #[test]
    fn no_work_means_ask_again_later_within_bounds() {
        let mut s = Session::new(1);
        let wait = |ms| Input::Message(In::NoWork(NoWork { retry_after_ms: ms }));
        assert_eq!(
            s.on(wait(250)),
            vec![Action::RequestAfter(Duration::from_millis(250))]
        );
        assert_eq!(
            s.on(wait(0)),
            vec![Action::RequestAfter(Duration::from_millis(10))]
        );
        assert_eq!(
            s.on(wait(u64::MAX)),
            vec![Action::RequestAfter(Duration::from_secs(10))]
        );
    }

    #[test]
    fn finished_ends_well_and_a_second_welcome_or_a_closed_stream_loses_the_session() {
        let mut s = Session::new(1);
        assert_eq!(
            s.on(Input::Message(In::Finished(Finished::default()))),
            vec![Action::End(Ending::Finished)]
        );
        assert_eq!(
            s.on(Input::Message(In::Welcome(Welcome::default()))),
            vec![Action::End(Ending::Lost("Welcome sent twice".into()))]
        );
        assert_eq!(
            s.on(Input::Closed),
            vec![Action::End(Ending::Lost(
                "the coordinator closed the session".into()
            ))]
        );
        assert!(Ending::Finished.into_result().is_ok());
        assert!(Ending::Drained.into_result().is_ok());
        assert!(matches!(
            Ending::Job("x".into()).into_result(),
            Err(SessionError::Job(m)) if m == "x"
        ));
    }

    #[test]
    fn the_drain_finishes_the_leases_in_flight_and_gives_back_new_grants() {
        let mut s = Session::new(1);
        s.on(grant(1, 0));
        s.on(grant(2, 0));
        assert_eq!(s.on(Input::Shutdown), vec![Action::StopRunning]);
        assert!(s.draining());
        assert_eq!(s.on(Input::Shutdown), Vec::new(), "once");
        // No new requests, and a grant that comes now goes back at once.
        assert_eq!(s.on(Input::LeaseStarted), Vec::new());
        assert_eq!(s.on(grant(3, 0)), vec![returned(3)]);
        assert_eq!(s.in_flight(), 2);
        assert_eq!(s.on(finished(1, true)), vec![done(1)]);
        assert_eq!(
            s.on(finished(2, false)),
            vec![returned(2), Action::End(Ending::Drained)]
        );
    }

    #[test]
    fn a_drain_with_nothing_in_flight_ends_at_once() {
        let mut s = Session::new(1);
        assert_eq!(
            s.on(Input::Shutdown),
            vec![Action::StopRunning, Action::End(Ending::Drained)]
        );
    }
}
