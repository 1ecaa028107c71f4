//! What a game program's processes are doing, for its watchdog: the CPU
//! time its process group has used, and whether any of it is running or
//! waiting for a core. Read from `/proc` (Linux); elsewhere not known, and
//! the watchdog counts wall time.
//!
//! A busy machine stretches a program's wall time but not its CPU time, so
//! a watchdog that counts CPU time fires on a busy machine only where it
//! fires on a quiet one, as a built-in game's does
//! (`pregen_game_core::clock::thread_cpu`).

use std::time::Duration;

/// A program's process group at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    /// The CPU time (user and system) its processes have used, with their
    /// children's that they have waited for.
    pub cpu: Duration,
    /// Whether any of its processes is running, waiting for a core, or in
    /// an uninterruptible wait (disk): working, as opposed to waiting for
    /// input or sleeping.
    pub working: bool,
}

/// The usage of process group `group`, or `None` where it cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn group_usage(group: u32) -> Option<Usage> {
    let ticks = rustix::param::clock_ticks_per_second();
    if ticks == 0 {
        return None;
    }
    let mut total = 0u64;
    let mut working = false;
    let mut found = false;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        // A process that ended since the listing has no file: not counted.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(process) = parse_stat(&stat) else {
            continue;
        };
        if process.group == group {
            found = true;
            total += process.ticks;
            working |= matches!(process.state, 'R' | 'D');
        }
    }
    found.then(|| Usage {
        cpu: Duration::from_nanos(total.saturating_mul(1_000_000_000) / ticks),
        working,
    })
}

/// Not known here.
#[cfg(not(target_os = "linux"))]
pub(crate) fn group_usage(_group: u32) -> Option<Usage> {
    None
}

/// The fields of a `/proc/<pid>/stat` line the watchdog reads.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    state: char,
    group: u32,
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
        state: field(3)?.chars().next()?,
        group: field(5)?.parse().ok()?,
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
                state: 'R',
                group: 4240,
                ticks: 290
            })
        );
        assert_eq!(parse_stat("4242 (sh) S 1"), None);
        assert_eq!(parse_stat("no parenthesis"), None);
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
