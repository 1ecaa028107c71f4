//! A game program's processes as a whole: its process group, every
//! descendant that left it, and what is handed to pregen when a parent
//! ends (pregen is the child subreaper of what programs fork), killed and
//! reaped as a program stops; every live program killed by [`stop_all`] as
//! a command ends.

use std::process::Child;

use crate::watchdog;

/// The processes of every program running now (their group ids), for
/// [`stop_all`].
pub(crate) static LIVE: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Kills `child`'s process group (its own, `Program` starts it so) and
/// every descendant that left it, and reaps the child and what was handed
/// to this process from it.
pub(crate) fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        let strays = watchdog::strays(child.id());
        kill_whole(child.id());
        for stray in strays {
            kill_whole(stray);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    reap_orphans();
}

/// Kills process `pid` and, when it leads one, its process group.
#[cfg(unix)]
fn kill_whole(pid: u32) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, Signal::KILL);
        let _ = kill_process(pid, Signal::KILL);
    }
}

/// Makes this process the child subreaper of what its game programs fork
/// (Linux): a descendant whose parent ends (a daemon that forked twice and
/// left its session) is handed to this process rather than to init, where
/// [`reap_orphans`] kills and reaps it.
pub(crate) fn adopt_orphans() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(target_os = "linux")]
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    });
}

/// Kills and reaps the processes handed to this process that left their
/// program's session ([`watchdog::orphans`]).
fn reap_orphans() {
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    #[cfg(unix)]
    for orphan in watchdog::orphans(&live) {
        kill_whole(orphan);
        if let Some(pid) = i32::try_from(orphan)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
        }
    }
    #[cfg(not(unix))]
    drop(live);
}

/// Kills every game program's process group still running: what a command
/// calls as it ends, so that no program (nor anything it forked) outlives
/// pregen, even one that hangs or ignores its closed stdin.
pub fn stop_all() {
    let live = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
    #[cfg(unix)]
    for id in live {
        let strays = watchdog::strays(id);
        kill_whole(id);
        for stray in strays {
            kill_whole(stray);
        }
    }
    #[cfg(not(unix))]
    drop(live);
    reap_orphans();
}
