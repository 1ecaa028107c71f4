//! The worker's errors. Each keeps what caused it as its `source()`, so a
//! caller prints the whole chain (`{:#}` with anyhow: `cannot reach the
//! coordinator at https://... within 3s: transport error: invalid peer
//! certificate: UnknownIssuer`) or matches on the cause.

use std::time::Duration;

use pregen_games::GameError;
use tonic::Code;

/// Why a worker stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// The coordinator URL does not parse, or its TLS settings do not load.
    #[error("bad coordinator address `{url}`")]
    Address {
        /// The URL given.
        url: String,
        /// What the transport said.
        #[source]
        source: tonic::transport::Error,
    },
    /// TLS files that cannot serve this URL.
    #[error("bad coordinator address `{url}`: {problem}")]
    Tls {
        /// The URL given.
        url: String,
        /// What is wrong with the files.
        problem: &'static str,
    },
    /// The coordinator could not be reached in time.
    #[error("cannot reach the coordinator at {url} within {within:?}")]
    Unreachable {
        /// The URL given.
        url: String,
        /// How long the worker tried.
        within: Duration,
        /// The last attempt's failure.
        #[source]
        source: SessionError,
    },
    /// The coordinator refused the worker (token, versions, its name).
    #[error("coordinator refused this worker")]
    Refused(#[source] SessionError),
    /// The job cannot run here.
    #[error("cannot run the job")]
    Job(#[source] SessionError),
    /// The worker's pool could not start.
    #[error("cannot start {threads} threads")]
    Threads {
        /// The threads asked for.
        threads: usize,
        /// What rayon said.
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
    /// A load client's session ended early (1-based).
    #[error("load session {index}")]
    Load {
        /// The session's number.
        index: usize,
        /// How it ended.
        #[source]
        source: SessionError,
    },
    /// A load client's session panicked.
    #[error("a load session panicked")]
    Panicked(#[source] tokio::task::JoinError),
}

/// How a session ended before the job did.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The coordinator refused the worker.
    #[error("{}: {}", code_name(.0.code()), .0.message())]
    Refused(tonic::Status),
    /// The token cannot travel in a header.
    #[error("the token has characters a header cannot carry")]
    Token(#[source] tonic::metadata::errors::InvalidMetadataValue),
    /// The job's game or params do not run with this build.
    #[error(transparent)]
    Game(#[from] GameError),
    /// The job's game program cannot be used here.
    #[error(transparent)]
    Program(#[from] pregen_games::external::ProgramError),
    /// The job's params are not JSON.
    #[error("params are not JSON")]
    Params(#[source] serde_json::Error),
    /// A thread the session needs could not start.
    #[error("cannot start the feed thread")]
    Thread(#[source] std::io::Error),
    /// The job as the coordinator sent it cannot be run.
    #[error("{0}")]
    Job(String),
    /// The connection could not be made.
    #[error(transparent)]
    Connect(#[from] tonic::transport::Error),
    /// The stream ended with an error status.
    #[error("{}", .0.message())]
    Status(tonic::Status),
    /// The session broke off, or the coordinator broke the protocol.
    #[error("{0}")]
    Lost(String),
}

/// What a session's end means for the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outlook {
    /// Connect again.
    Retry,
    /// The coordinator will not take this worker.
    Refused,
    /// The job cannot run here.
    Job,
}

impl SessionError {
    /// Whether to connect again, or why not.
    pub(crate) fn outlook(&self) -> Outlook {
        match self {
            SessionError::Refused(_) | SessionError::Token(_) => Outlook::Refused,
            SessionError::Game(_)
            | SessionError::Program(_)
            | SessionError::Params(_)
            | SessionError::Thread(_)
            | SessionError::Job(_) => Outlook::Job,
            SessionError::Connect(_) | SessionError::Status(_) | SessionError::Lost(_) => {
                Outlook::Retry
            }
        }
    }

    /// Whether the session was lost (the coordinator may still have sent its
    /// `Finished`).
    pub(crate) fn is_lost(&self) -> bool {
        self.outlook() == Outlook::Retry
    }

    /// The worker's error for a session that cannot go on; itself back
    /// when the worker connects again.
    pub(crate) fn into_worker_error(self) -> Result<WorkerError, SessionError> {
        match self.outlook() {
            Outlook::Retry => Err(self),
            Outlook::Refused => Ok(WorkerError::Refused(self)),
            Outlook::Job => Ok(WorkerError::Job(self)),
        }
    }
}

impl From<tonic::Status> for SessionError {
    fn from(s: tonic::Status) -> Self {
        match s.code() {
            Code::Unauthenticated
            | Code::PermissionDenied
            | Code::FailedPrecondition
            | Code::InvalidArgument => SessionError::Refused(s),
            _ => SessionError::Status(s),
        }
    }
}

fn code_name(code: Code) -> &'static str {
    match code {
        Code::Unauthenticated => "unauthenticated",
        Code::PermissionDenied => "permission denied",
        Code::FailedPrecondition => "failed precondition",
        Code::InvalidArgument => "invalid argument",
        _ => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain a user sees: every cause, outermost first.
    fn chain(e: &dyn std::error::Error) -> String {
        let mut text = e.to_string();
        let mut source = e.source();
        while let Some(cause) = source {
            text = format!("{text}: {cause}");
            source = cause.source();
        }
        text
    }

    #[test]
    fn errors_keep_their_cause() {
        let refused = SessionError::from(tonic::Status::permission_denied("bad token"));
        let e = refused.into_worker_error().expect("not retried");
        assert_eq!(
            chain(&e),
            "coordinator refused this worker: permission denied: bad token"
        );
        let params = serde_json::from_str::<serde_json::Value>("{").expect_err("not JSON");
        let e = SessionError::Params(params)
            .into_worker_error()
            .expect("not retried");
        assert!(matches!(&e, WorkerError::Job(SessionError::Params(_))));
        assert!(
            chain(&e).starts_with("cannot run the job: params are not JSON: EOF"),
            "{}",
            chain(&e)
        );
        let lost = SessionError::from(tonic::Status::unavailable("gone"));
        assert!(lost.is_lost());
        assert!(lost.into_worker_error().is_err());
    }
}
