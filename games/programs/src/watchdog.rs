//! The watchdog of a game program's answer: the answer is waited for while
//! the program works, up to the watchdog's worth of the CPU time of its
//! process group (its process and what it forks), read from `/proc`
//! (Linux); elsewhere the watchdog counts wall time.
//!
//! A busy machine stretches a program's wall time but not its CPU time, so
//! a watchdog that counts CPU time fires on a busy machine only where it
//! fires on a quiet one, as a built-in game's does
//! (`pregen_game_core::clock::thread_cpu`).

use pregen_game_core::clock::Instant;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// Why an answer is waited for no longer.
#[derive(Debug)]
pub(crate) enum Overtime {
    /// The program used its watchdog's worth of CPU time.
    Cpu(Duration),
    /// It did no work for its watchdog's worth of wall time: it waits for
    /// its next request (its answer left in its buffer: `Some(true)`), or
    /// sleeps, waits on a lock or for I/O (`Some(false)`); `None` where
    /// which is not known.
    Idle(Option<bool>),
    /// [`WALL_FACTOR`] times its watchdog went by on the wall clock.
    Wall(Duration),
}

/// What an answer not heard in time most often means.
const FLUSH_HINT: &str = "a program must write each answer as one line on stdout and flush \
                          it at once (Python: `print(..., flush=True)`), or its answers wait \
                          in its buffer";

impl Overtime {
    /// What went wrong, for a watchdog of `wait`.
    pub(crate) fn message(&self, wait: Duration) -> String {
        // Whole milliseconds, rounded: a watchdog given as a deadline
        // comes a few microseconds short.
        let wait = (wait.as_secs_f64() * 1e3).round();
        match self {
            Overtime::Idle(Some(true)) => format!(
                "no answer within {wait} ms: it used no CPU, waiting to read its next request \
                 with this answer unwritten ({FLUSH_HINT})"
            ),
            Overtime::Idle(Some(false)) => {
                format!("no answer: it used no CPU for {wait} ms (waiting: sleep, a lock, I/O)")
            }
            Overtime::Idle(None) => format!(
                "no answer: it used no CPU for {wait} ms (waiting: sleep, a lock, I/O, or for \
                 its next request with this answer in its buffer: {FLUSH_HINT})"
            ),
            Overtime::Cpu(used) => format!(
                "no answer within {wait} ms of its CPU time ({:.0} ms used, counted in the \
                 kernel's clock ticks)",
                used.as_secs_f64() * 1e3
            ),
            Overtime::Wall(waited) => format!(
                "no answer in {:.1} s of wall time, {WALL_FACTOR} times its {wait} ms, on a \
                 machine too busy to let it run",
                waited.as_secs_f64()
            ),
        }
    }
}

/// The wall time after which a program that keeps working is no longer
/// waited for, in watchdogs: a guard against a machine so busy that the
/// program barely runs (its CPU time is what the watchdog counts).
const WALL_FACTOR: u32 = 20;

/// The share of its watchdog that a program's answer is waited for before
/// its CPU time is read (an answer sooner costs no look at `/proc`); that
/// first share is counted as if all of it were the program's CPU time.
const FIRST_LOOK: u32 = 10;

/// What a program has written that pregen has yet to take: bytes in its
/// stdout's pipe, or a line the reader has read and not yet handed over. A
/// program that waits with its answer on the way is not idle, however long
/// a busy machine keeps the reader off a core.
pub(crate) struct Unread {
    /// A second handle on the read end of the program's stdout.
    #[cfg(unix)]
    pipe: Option<std::os::fd::OwnedFd>,
    /// Set by the reader from the moment a read returns until its lines are
    /// handed over.
    holding: AtomicBool,
}

impl Unread {
    /// For the program whose stdout is `stdout`.
    pub(crate) fn new(stdout: &std::process::ChildStdout) -> Self {
        Self {
            #[cfg(unix)]
            pipe: std::os::fd::AsFd::as_fd(stdout).try_clone_to_owned().ok(),
            holding: AtomicBool::new(false),
        }
    }

    /// The reader holds bytes of the program's (`true`), or none that make
    /// a line (`false`).
    pub(crate) fn holding(&self, holding: bool) {
        self.holding.store(holding, Ordering::Relaxed);
    }

    /// Whether anything the program wrote is still on its way to pregen.
    fn any(&self) -> bool {
        if self.holding.load(Ordering::Relaxed) {
            return true;
        }
        #[cfg(unix)]
        if let Some(pipe) = &self.pipe {
            return rustix::io::ioctl_fionread(pipe).is_ok_and(|n| n > 0);
        }
        false
    }
}

/// The program's next line from `lines` (`None`: the reader ended), for
/// work that began at `since`, waited for while the program (process group
/// `group`) works: until it has used `wait` of CPU time, or for `wait` of
/// wall time once it does no work and nothing it wrote is on its way
/// (`unread`), or for [`WALL_FACTOR`] times `wait` in all. Where CPU time
/// is not known, or is not one answer's (`cpu_per_answer` false: a
/// `concurrent` program works on several at once), for `wait` of wall time.
pub(crate) fn next<T>(
    lines: &Receiver<T>,
    group: u32,
    unread: &Unread,
    since: Instant,
    wait: Duration,
    cpu_per_answer: bool,
) -> Result<Option<T>, Overtime> {
    let waited = wait_for(lines, since, wait, &mut || {
        let usage = cpu_per_answer.then(|| group_usage(group)).flatten()?;
        Some(Usage {
            working: usage.working || unread.any(),
            ..usage
        })
    });
    match waited {
        Err(Overtime::Idle(_)) => Err(Overtime::Idle(reads_stdin(group))),
        other => other,
    }
}

/// Whether process `pid` is blocked reading its stdin (a `read` of file
/// descriptor 0, from `/proc/PID/syscall`); `None` where that is not known
/// (another system call that may wait for input, such as `epoll_wait`, or
/// no `/proc`).
fn reads_stdin(pid: u32) -> Option<bool> {
    // `read`, and the calls that wait for input on any descriptor, or for
    // several (poll, select, epoll and their kin): whether stdin is among
    // them is not said.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    const READ: &str = "0";
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    const POLLS: [&str; 7] = ["7", "23", "232", "270", "271", "281", "441"];
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    const READ: &str = "63";
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    const POLLS: [&str; 4] = ["22", "72", "73", "441"];
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    {
        let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok()?;
        let mut words = text.split_whitespace();
        let (call, fd) = (words.next()?, words.next()?);
        return match call {
            READ => Some(fd == "0x0"),
            "running" => Some(false),
            call if POLLS.contains(&call) => None,
            _ => Some(false),
        };
    }
    #[allow(unreachable_code)]
    {
        let _ = pid;
        None
    }
}

/// [`next`], the program's usage read by `usage` at each look.
fn wait_for<T>(
    lines: &Receiver<T>,
    since: Instant,
    wait: Duration,
    usage: &mut dyn FnMut() -> Option<Usage>,
) -> Result<Option<T>, Overtime> {
    let wall_deadline = since + wait;
    let mut look_at = since + wait / FIRST_LOOK;
    // The usage at the first look and when, and at the last look.
    let mut first: Option<(Usage, Instant)> = None;
    let mut last: Option<Usage> = None;
    loop {
        match lines.recv_timeout(look_at.saturating_duration_since(Instant::now())) {
            Ok(line) => return Ok(Some(line)),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        let Some(usage) = usage() else {
            if now >= wall_deadline {
                return Err(Overtime::Idle(None));
            }
            look_at = wall_deadline;
            continue;
        };
        let Some((at_first, first_at)) = first else {
            first = Some((usage, now));
            last = Some(usage);
            look_at = wall_deadline.max(now);
            continue;
        };
        // Its CPU time since the first look, and all the wall time
        // before it (at most what it used then).
        let used =
            usage.cpu.saturating_sub(at_first.cpu) + first_at.saturating_duration_since(since);
        if used >= wait {
            return Err(Overtime::Cpu(used));
        }
        let waited = now.saturating_duration_since(since);
        if waited >= wait * WALL_FACTOR {
            return Err(Overtime::Wall(waited));
        }
        // Doing nothing at two looks in a row, its CPU time still: an
        // answer read in the instant before the reader says it holds it
        // (`Unread`) is not taken for nothing; the look between gives the
        // reader the time.
        let idle = !usage.working && last.is_some_and(|l| !l.working && usage.cpu <= l.cpu);
        if idle && now >= wall_deadline {
            return Err(Overtime::Idle(None));
        }
        last = Some(usage);
        // Looked at again when it may have used the rest, or once more
        // past the wall deadline, whichever comes first.
        let rest = (wait - used).max(wait / FIRST_LOOK);
        look_at = if now < wall_deadline {
            wall_deadline.min(now + rest)
        } else {
            now + rest
        };
    }
}

/// A program's process group at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Usage {
    /// The CPU time (user and system) its processes have used, with their
    /// children's that they have waited for.
    cpu: Duration,
    /// Whether any of its processes is running, waiting for a core, or in
    /// an uninterruptible wait (disk): working, as opposed to waiting for
    /// input or sleeping.
    working: bool,
}

/// The usage of process group `group`, or `None` where it cannot be read.
#[cfg(target_os = "linux")]
fn group_usage(group: u32) -> Option<Usage> {
    let ticks = rustix::param::clock_ticks_per_second();
    if ticks == 0 {
        return None;
    }
    let mut total = 0u64;
    let mut working = false;
    let mut found = false;
    for process in family(group, &processes()?) {
        found = true;
        total += process.ticks;
        working |= matches!(process.state, 'R' | 'D');
    }
    found.then(|| Usage {
        cpu: Duration::from_nanos(total.saturating_mul(1_000_000_000) / ticks),
        working,
    })
}

/// Every process now, from `/proc` (one that ends during the listing is
/// left out).
#[cfg(target_os = "linux")]
fn processes() -> Option<Vec<Stat>> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Some(process) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| parse_stat(&stat))
        {
            all.push(process);
        }
    }
    Some(all)
}

/// A program's processes among `all`: those of its process group `group`
/// (its leader's pid) and every descendant of its leader, so that a child
/// that left the group (`setsid`, `setpgid`) is counted and killed too.
fn family(group: u32, all: &[Stat]) -> Vec<&Stat> {
    let mut children: std::collections::HashMap<u32, Vec<&Stat>> = Default::default();
    for process in all {
        children.entry(process.parent).or_default().push(process);
    }
    let mut kept: Vec<&Stat> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut next: Vec<&Stat> = all
        .iter()
        .filter(|p| p.group == group || p.pid == group)
        .collect();
    while let Some(process) = next.pop() {
        if !seen.insert(process.pid) {
            continue;
        }
        kept.push(process);
        next.extend(children.get(&process.pid).into_iter().flatten());
    }
    kept
}

/// The processes of the program led by `leader` that left its process
/// group: what killing the group alone would miss.
pub(crate) fn strays(leader: u32) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    if let Some(all) = processes() {
        return family(leader, &all)
            .into_iter()
            .filter(|p| p.group != leader)
            .map(|p| p.pid)
            .collect();
    }
    let _ = leader;
    Vec::new()
}

/// This process's children in a session of their own that are none of
/// `ours` (its game programs): a program's descendant that left its
/// session and was handed to this process (a child subreaper) when its
/// parent ended, such as a daemon.
pub(crate) fn orphans(ours: &[u32]) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    if let Some(all) = processes() {
        let me = std::process::id();
        let Some(session) = all.iter().find(|p| p.pid == me).map(|p| p.session) else {
            return Vec::new();
        };
        return all
            .iter()
            .filter(|p| p.parent == me && p.session != session && !ours.contains(&p.pid))
            .map(|p| p.pid)
            .collect();
    }
    let _ = ours;
    Vec::new()
}

/// Not known here.
#[cfg(not(target_os = "linux"))]
fn group_usage(_group: u32) -> Option<Usage> {
    None
}

/// The fields of a `/proc/<pid>/stat` line the watchdog reads.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    pid: u32,
    state: char,
    parent: u32,
    group: u32,
    session: u32,
    /// utime + stime + cutime + cstime, in clock ticks.
    ticks: u64,
}

/// Reads a `/proc/<pid>/stat` line: `pid (comm) state ppid pgrp ...`, the
/// command in parentheses free to hold spaces and parentheses, so the
/// fields are counted from the last `)`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // After the command: state (3), ppid (4), pgrp (5), ... utime (14),
    // stime (15), cutime (16), cstime (17); numbered as proc(5) does.
    let field = |n: usize| fields.get(n - 3).copied();
    let ticks = (14..=17)
        .map(|n| field(n)?.parse::<i64>().ok())
        .sum::<Option<i64>>()?;
    Some(Stat {
        pid: line.split_ascii_whitespace().next()?.parse().ok()?,
        state: field(3)?.chars().next()?,
        parent: field(4)?.parse().ok()?,
        group: field(5)?.parse().ok()?,
        session: field(6)?.parse().ok()?,
        ticks: u64::try_from(ticks).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_reads_past_a_command_with_spaces_and_parentheses() {
        let line = "4242 (a (b) c) R 1 4240 4240 0 -1 4194304 100 0 0 0 \
                    250 30 7 3 20 0 1 0 100 1000 10 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                pid: 4242,
                state: 'R',
                parent: 1,
                group: 4240,
                session: 4240,
                ticks: 290
            })
        );
        assert_eq!(parse_stat("4242 (sh) S 1"), None);
        assert_eq!(parse_stat("no parenthesis"), None);
    }

    /// Answers `wait_for` with the usages of `looks`, one a look (the
    /// last for any look after), and the line sent at look `line_at`
    /// (counted from 1), if any.
    fn watch(looks: &[Usage], line_at: Option<usize>) -> Result<Option<&'static str>, Overtime> {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut looked = 0;
        let mut tx = Some(tx);
        wait_for(&rx, Instant::now(), Duration::from_millis(20), &mut || {
            looked += 1;
            if line_at == Some(looked) {
                // Sent while the watchdog looks: the reader hands the line
                // over a moment after the program went back to waiting.
                let _ = tx.take().map(|tx| tx.send("answer"));
            }
            Some(looks[(looked - 1).min(looks.len() - 1)])
        })
    }

    const fn usage(cpu_ms: u64, working: bool) -> Usage {
        Usage {
            cpu: Duration::from_millis(cpu_ms),
            working,
        }
    }

    #[test]
    fn a_program_that_has_just_answered_is_not_taken_for_an_idle_one() {
        // Working at the first two looks; at the third, past the deadline,
        // waiting for input with its answer written but not yet handed
        // over: one look later the answer is there.
        let looks = [usage(100, true), usage(110, true), usage(110, false)];
        assert!(matches!(watch(&looks, Some(3)), Ok(Some("answer"))));
        // Doing nothing at two looks in a row, its CPU time still: idle.
        assert!(matches!(watch(&looks, None), Err(Overtime::Idle(_))));
        let asleep = [usage(100, false)];
        assert!(matches!(watch(&asleep, None), Err(Overtime::Idle(_))));
        // Working past the watchdog's CPU time.
        let busy = [usage(100, true), usage(130, true)];
        assert!(matches!(watch(&busy, None), Err(Overtime::Cpu(_))));
    }

    /// A program asleep with its answer written but not yet read (the
    /// reader kept off a core) is not idle; once the answer is read and
    /// none comes, it is.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_program_whose_answer_is_on_its_way_is_not_idle() {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "echo answer; exec sleep 30"])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("sh");
        let stdout = child.stdout.take().expect("stdout");
        let unread = Unread::new(&stdout);
        let group = child.id();
        // No reader: the line stays in the pipe.
        let (_tx, lines) = std::sync::mpsc::channel::<String>();
        std::thread::sleep(Duration::from_millis(100));
        assert!(unread.any());
        let wait = Duration::from_millis(20);
        let on_its_way = next(&lines, group, &unread, Instant::now(), wait, true);
        let mut reader = std::io::BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line).expect("the answer");
        assert_eq!(line, "answer\n");
        assert!(!unread.any());
        let gone = next(&lines, group, &unread, Instant::now(), wait, true);
        unread.holding(true);
        assert!(unread.any());
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            matches!(on_its_way, Err(Overtime::Wall(_))),
            "{on_its_way:?}"
        );
        assert!(matches!(gone, Err(Overtime::Idle(_))), "{gone:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_group_that_works_gains_cpu_time_and_one_that_sleeps_does_not() {
        use std::os::unix::process::CommandExt;
        let start = |script: &str| {
            std::process::Command::new("sh")
                .args(["-c", script])
                .process_group(0)
                .spawn()
                .expect("sh")
        };
        let mut busy = start("while :; do :; done");
        let mut sleeping = start("sleep 30");
        let group = |c: &std::process::Child| c.id();
        // Past their start, whose exec may still take a tick.
        std::thread::sleep(Duration::from_millis(100));
        let before = (
            group_usage(group(&busy)).expect("busy"),
            group_usage(group(&sleeping)).expect("sleeping"),
        );
        std::thread::sleep(Duration::from_millis(300));
        let after = (
            group_usage(group(&busy)).expect("busy"),
            group_usage(group(&sleeping)).expect("sleeping"),
        );
        for child in [&mut busy, &mut sleeping] {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(after.0.cpu > before.0.cpu, "{before:?} {after:?}");
        assert!(after.0.working);
        assert_eq!(after.1.cpu, before.1.cpu, "{before:?} {after:?}");
        assert!(!after.1.working);
        assert_eq!(group_usage(u32::MAX), None);
    }
}
