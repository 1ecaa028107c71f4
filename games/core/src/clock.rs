//! The clock the games read: `std::time::Instant`, except on WebAssembly
//! without an operating system (`wasm32-unknown-unknown`, the browser build
//! of `web/`), whose standard library has no clock. There time stands still:
//! a deadline never passes and every time is zero, so only node budgets bound
//! a search. No level depends on time anywhere, so the levels are the same.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use std::time::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use still::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod still {
    use std::time::Duration;

    /// A moment of a clock that stands still.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub struct Instant;

    impl Instant {
        /// The one moment.
        pub fn now() -> Instant {
            Instant
        }

        /// No time since.
        pub fn elapsed(&self) -> Duration {
            Duration::ZERO
        }

        /// No time between.
        pub fn saturating_duration_since(&self, _earlier: Instant) -> Duration {
            Duration::ZERO
        }
    }

    impl std::ops::Add<Duration> for Instant {
        type Output = Instant;

        fn add(self, _: Duration) -> Instant {
            Instant
        }
    }
}

/// The CPU time the calling thread has used, where the system tells it
/// (Unix); `None` elsewhere. A seed's watchdog counts it rather than the
/// wall clock, so that a busy machine, which slows every thread down, does
/// not make a seed time out: the watchdog stays a guard against a search
/// that never ends, and a pack's bytes do not depend on the machine's load.
#[cfg(unix)]
pub fn thread_cpu() -> Option<std::time::Duration> {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(std::time::Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    ))
}

/// The CPU time the calling thread has used: not known here.
#[cfg(not(unix))]
pub fn thread_cpu() -> Option<std::time::Duration> {
    None
}
