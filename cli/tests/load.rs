//! A busy machine: the same job gives the same bytes beside a CPU hog as on
//! a quiet machine, because a seed's watchdog counts the CPU time of the
//! thread that runs it (a game program's: of its process group), not the
//! wall clock that load stretches.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::needs::{PYTHON, needs};
use crate::common::run_pack;

/// Threads that keep `per_core` times the machine's cores busy until
/// dropped (or for ten minutes at most: a test that fails stops them too).
struct Hog {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Hog {
    fn start(per_core: usize) -> Hog {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..cores * per_core)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let until = Instant::now() + Duration::from_secs(600);
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        for i in 0..10_000u64 {
                            x = std::hint::black_box(
                                x.wrapping_mul(6364136223846793005).wrapping_add(i),
                            );
                        }
                    }
                })
            })
            .collect();
        Hog { stop, threads }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The slowest seed of a pack (generation plus verification, ms), from its
/// levels and rejects.
fn slowest_seed_ms(pack: &Path) -> f64 {
    use pregen_pack::read::{f64_column, read_batches};
    let mut slowest: f64 = 0.0;
    let mut files: Vec<_> = std::fs::read_dir(pack.join("levels"))
        .expect("levels")
        .map(|e| e.expect("entry").path())
        .collect();
    files.push(pack.join("rejects/rejects.parquet"));
    for path in files {
        for batch in read_batches(&path).expect("parquet") {
            let g = f64_column(&batch, "generate_ms", &path).expect("generate_ms");
            let s = f64_column(&batch, "solve_ms", &path).expect("solve_ms");
            for (g, s) in g.iter().zip(&s) {
                slowest = slowest.max(g + s);
            }
        }
    }
    slowest
}

fn timeouts(pack: &Path) -> u64 {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pack.join("manifest.json")).expect("manifest"))
            .expect("JSON");
    manifest["timeouts"]
        .as_array()
        .map_or(0, |t| t.len() as u64)
}

/// A job whose watchdog is three times its slowest seed on a quiet machine
/// (and at least `least_ms`) writes the same release beside a hog that
/// keeps eight times the cores busy: every seed's wall time is stretched
/// about ninefold, and a wall-clock watchdog fires on the slow seeds.
fn the_same_release_quiet_and_busy(job: &dyn Fn(u64) -> String, least_ms: f64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let measured = run_pack(&dir.path().join("measure"), &job(600_000), 1);
    let watchdog = (3.0 * slowest_seed_ms(&measured)).ceil().max(least_ms) as u64;
    let quiet = run_pack(&dir.path().join("quiet"), &job(watchdog), 1);
    assert_eq!(timeouts(&quiet), 0, "watchdog {watchdog} ms");
    let busy = {
        let _hog = Hog::start(8);
        run_pack(&dir.path().join("busy"), &job(watchdog), 1)
    };
    assert_eq!(timeouts(&busy), 0, "watchdog {watchdog} ms, busy");
    let sums = |p: &Path| std::fs::read_to_string(p.join("release/SHA256SUMS")).expect("sums");
    assert_eq!(sums(&quiet), sums(&busy), "the release differs under load");
}

/// A built-in game (doors), whose watchdog counts its thread's CPU time.
#[test]
fn a_busy_machine_writes_the_same_pack() {
    let job = |watchdog_ms: u64| {
        format!(
            "pack = \"e2e\"\ngame = \"doors\"\ncount = 12\nseeds_per_lease = 4\n\
             [params]\nrooms = 4\ncolours = 2\n\
             [budget]\nwatchdog_ms = {watchdog_ms}\n\
             [tiers]\nscheme = \"equal\"\ncount = 2\n"
        )
    };
    the_same_release_quiet_and_busy(&job, 20.0);
}

/// A game program (the Rush Hour example, in Python), whose watchdog
/// counts its process group's CPU time. (With the wall clock in its place,
/// 3 of its seeds time out beside the hog.)
#[test]
fn a_busy_machine_writes_the_same_pack_of_a_game_program() {
    if !needs(&[PYTHON]) {
        return;
    }
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/external");
    let job = |watchdog_ms: u64| {
        format!(
            "pack = \"e2e\"\ngame = \"external\"\ncount = 16\nseeds_per_lease = 4\n\
             [external]\ncommand = [\"python3\", \"rushhour.py\"]\ndir = {examples:?}\n\
             files = [\"rushhour.py\", \"pregen_game.py\"]\n\
             [params]\nvehicles = 8\nmin_moves = 4\n\
             [budget]\nmax_nodes = 200000\nwatchdog_ms = {watchdog_ms}\n\
             [tiers]\nscheme = \"equal\"\ncount = 2\n"
        )
    };
    the_same_release_quiet_and_busy(&job, 50.0);
}
