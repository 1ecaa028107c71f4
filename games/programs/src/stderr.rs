//! A game program's stderr, logged a line at a time with the seed that
//! wrote it, each line cut and the lines rate-limited.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pregen_game_core::clock::Instant;

use super::MAX_LINE;

/// No seed's answer awaited ([`InFlight`]).
pub(crate) const NO_SEED: u64 = u64::MAX;

/// Lines of a process's stderr logged per [`STDERR_WINDOW`]; the rest are
/// counted and said in one line when the window ends, so that a chatty
/// program cannot fill the disk with pregen's log.
const STDERR_LINES: u32 = 100;

/// The most of one stderr line that is logged, in characters (escapes
/// included): a longer line is cut there, its length said.
const STDERR_LINE_CHARS: usize = 2_000;

/// The window of [`STDERR_LINES`].
const STDERR_WINDOW: Duration = Duration::from_secs(10);

/// Logs the program's stderr, a line at a time (at most
/// [`STDERR_LINE_CHARS`] of each, control characters escaped so that a `\r`
/// cannot rewrite a log line), naming the program and the seed that wrote
/// it: the one a line is marked with (`[seed N] `, as the SDKs mark what a
/// game writes while it makes a seed), else the seed awaited when it is the
/// only one in flight, else the seeds in flight; at most [`STDERR_LINES`]
/// lines per [`STDERR_WINDOW`], the rest counted. Bytes past a line's first
/// [`MAX_LINE`] are read and dropped, never held.
pub(crate) fn log_stderr(stderr: impl Read, program: &str, in_flight: &InFlight) {
    let mut reader = BufReader::new(stderr);
    let (mut window, mut logged, mut dropped) = (Instant::now(), 0u32, 0u64);
    let mut rest_of_line = false;
    loop {
        let mut buf = Vec::new();
        let read = (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut buf);
        let continued = std::mem::replace(&mut rest_of_line, buf.last() != Some(&b'\n'));
        match read {
            Ok(0) | Err(_) => {
                if dropped > 0 {
                    tracing::warn!(target: "pregen::program", program, dropped, "stderr lines not logged (too many)");
                }
                return;
            }
            Ok(_) if continued => continue,
            Ok(_) => {
                if window.elapsed() >= STDERR_WINDOW {
                    if dropped > 0 {
                        tracing::warn!(target: "pregen::program", program, dropped, "stderr lines not logged (too many)");
                    }
                    (window, logged, dropped) = (Instant::now(), 0, 0);
                }
                if logged >= STDERR_LINES {
                    dropped += 1;
                    continue;
                }
                logged += 1;
                let text = String::from_utf8_lossy(&buf);
                let (marked, text) = seed_mark(text.trim_end());
                let mut line = printable(text, STDERR_LINE_CHARS);
                if rest_of_line {
                    line.push_str(&format!(" ... (a line of over {MAX_LINE} bytes, cut)"));
                }
                match marked.map_or_else(|| in_flight.seeds(), |seed| (seed, seed)) {
                    (NO_SEED, _) => tracing::warn!(target: "pregen::program", program, "{line}"),
                    (seed, last) if seed == last => {
                        tracing::warn!(target: "pregen::program", program, seed, "{line}")
                    }
                    (first, last) => {
                        let seeds = format!("{first}..={last}");
                        tracing::warn!(target: "pregen::program", program, seeds, "{line}")
                    }
                }
            }
        }
    }
}

/// The seed a stderr line is marked with (`[seed N] ` before the text, as
/// the SDKs write it), and the text after the mark.
fn seed_mark(line: &str) -> (Option<u64>, &str) {
    let marked = line.strip_prefix("[seed ").and_then(|rest| {
        let (digits, text) = rest.split_once("] ")?;
        Some((digits.parse::<u64>().ok()?, text))
    });
    match marked {
        Some((seed, text)) => (Some(seed), text),
        None => (None, line),
    }
}

/// The seeds whose answers a process owes: the one awaited and the last
/// sent ([`NO_SEED`]: none), for the log of its stderr.
pub(crate) struct InFlight {
    pub(crate) awaited: AtomicU64,
    pub(crate) last_sent: AtomicU64,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        InFlight {
            awaited: AtomicU64::new(NO_SEED),
            last_sent: AtomicU64::new(NO_SEED),
        }
    }

    /// The seeds in flight, as (first, last): `(NO_SEED, _)` when none.
    fn seeds(&self) -> (u64, u64) {
        let awaited = self.awaited.load(Ordering::Relaxed);
        let last = self.last_sent.load(Ordering::Relaxed);
        match awaited {
            NO_SEED => (NO_SEED, NO_SEED),
            awaited => (awaited, last.max(awaited)),
        }
    }
}

/// `text` with its control characters escaped (`\r` as `\r`, others as
/// `\u{..}`), cut at `most` characters with the length of the rest said.
fn printable(text: &str, most: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for (at, c) in text.char_indices() {
        let before = out.len();
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        count += out[before..].chars().count();
        if count > most {
            out.truncate(before);
            out.push_str(&format!(" ... ({} more bytes)", text.len() - at));
            break;
        }
    }
    out
}
