//! Headless Chromium for tests: a page loaded, its DOM after the scripts ran
//! dumped, bounded in time (a hung run is killed and tried again).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Headless Chromium with the flags a closed network and root need.
pub fn chromium(user_data: &Path) -> Command {
    let binary = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let mut cmd = Command::new(binary);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1100,2400",
    ])
    .arg(format!("--user-data-dir={}", user_data.display()));
    cmd
}

/// How long one headless Chromium run may take: it takes a few seconds, but
/// now and then it hangs (seen on a loaded 2-core machine), and a test must
/// stop by itself.
const CHROMIUM_LIMIT: Duration = Duration::from_secs(90);

/// Chromium's screenshot of `page` into `shot`, with the DOM it parsed on
/// stdout: a run that outlives [`CHROMIUM_LIMIT`] is killed and tried again,
/// twice at most, each with a fresh profile under `user_data`.
pub fn screenshot(user_data: &Path, shot: &Path, page: &Path) -> Output {
    run_page(
        user_data,
        page,
        &[format!("--screenshot={}", shot.display())],
    )
}

/// The DOM of `page` after its scripts ran, on stdout; `flags` are given to
/// Chromium besides its usual ones.
pub fn page_dom(user_data: &Path, page: &Path, flags: &[&str]) -> Output {
    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    run_page(user_data, page, &flags)
}

/// Chromium on `page` with `flags`, its DOM dumped: a run that outlives
/// [`CHROMIUM_LIMIT`] is killed and tried again, twice at most, each with a
/// fresh profile under `user_data`.
fn run_page(user_data: &Path, page: &Path, flags: &[String]) -> Output {
    for attempt in 1..=3 {
        let mut child = chromium(&user_data.join(format!("attempt-{attempt}")))
            .args(flags)
            .arg("--dump-dom")
            .arg(format!("file://{}", page.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so that a kill reaches its helpers too
            // (they hold the pipes open).
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("headless Chromium (`chromium`, or $CHROMIUM) must be installed: {e}")
            });
        let stdout = drain(child.stdout.take().expect("piped stdout"));
        let stderr = drain(child.stderr.take().expect("piped stderr"));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for chromium") {
                break Some(status);
            }
            if started.elapsed() > CHROMIUM_LIMIT {
                kill_group(child.id());
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        // A helper left behind after a clean exit would keep the pipes open.
        kill_group(child.id());
        let (stdout, stderr) = (
            stdout.join().expect("stdout reader"),
            stderr.join().expect("stderr reader"),
        );
        match status {
            Some(status) => {
                return Output {
                    status,
                    stdout,
                    stderr,
                };
            }
            None => eprintln!(
                "chromium hung for {} s (attempt {attempt} of 3); killed",
                CHROMIUM_LIMIT.as_secs()
            ),
        }
    }
    panic!("headless Chromium hung three times on {}", page.display())
}

/// Reads `pipe` to its end on a thread of its own.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Kills every process of the group `leader` leads (none left is fine).
fn kill_group(leader: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{leader}")])
        .stderr(Stdio::null())
        .status();
}
