//! A game program's stderr is logged line by line, with the program and the
//! seed that wrote it, each line cut to a bound (a test binary of its own: it sets the process's
//! log subscriber).

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pregen_games::external::Program;

/// The log, kept in memory.
#[derive(Clone, Default)]
struct Kept(Arc<Mutex<Vec<u8>>>);

impl Write for Kept {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_programs_stderr_is_logged_with_its_seed() {
    let kept = Kept::default();
    let writer = kept.clone();
    tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();
    let dir = tempfile_dir();
    let script = dir.join("talks.sh");
    let id = "id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')";
    std::fs::write(
        &script,
        format!(
            "read line\n{id}\necho \"{{\\\"id\\\":$id,\\\"describe\\\":{{\\\"protocol\\\":1,\\\"name\\\":\\\"talks\\\",\\\"version\\\":\\\"1\\\",\\\"text_format\\\":\\\"x\\\",\\\"params\\\":{{}},\\\"metrics\\\":[]}}}}\"\n\
             while read line; do\n{id}\necho 'thinking hard' >&2\necho '[seed 99] marked line' >&2\n\
             head -c 100000 /dev/zero | tr '\\000' '\\001' >&2\necho >&2\nsleep 0.2\n\
             echo \"{{\\\"id\\\":$id,\\\"outcome\\\":{{\\\"status\\\":\\\"unsolvable\\\",\\\"generate_ms\\\":1,\\\"solve_ms\\\":1,\\\"nodes\\\":0}}}}\"\ndone\n"
        ),
    )
    .expect("script");
    let command = vec!["sh".to_string(), script.display().to_string()];
    let (mut program, _) = Program::start(&command, None).expect("starts");
    let outcome = program.generate(41, &serde_json::json!({}), 10, Duration::from_secs(20));
    assert!(outcome.result.is_err(), "{:?}", outcome.result);
    drop(program);
    // The log thread may still be writing the line.
    let mut log = String::new();
    for _ in 0..100 {
        log = String::from_utf8_lossy(&kept.0.lock().expect("log")).into_owned();
        if log.contains("thinking hard") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let line = log
        .lines()
        .find(|l| l.contains("thinking hard"))
        .unwrap_or_else(|| panic!("the program's line is logged: {log}"));
    assert!(line.contains("seed=41"), "{line}");
    assert!(line.contains("talks.sh"), "{line}");
    // A line the program marked with its seed is logged with that seed,
    // the mark taken off.
    let marked = log
        .lines()
        .find(|l| l.contains("marked line"))
        .unwrap_or_else(|| panic!("the marked line is logged: {log}"));
    assert!(marked.contains("seed=99"), "{marked}");
    assert!(!marked.contains("[seed 99]"), "{marked}");
    // A line of 100,000 control bytes (600,000 once escaped) is cut.
    let long = log
        .lines()
        .find(|l| l.contains("\\u{1}"))
        .unwrap_or_else(|| panic!("the long line is logged: {log}"));
    assert!(long.len() < 3_000, "{} bytes logged", long.len());
    assert!(long.contains("more bytes)"), "{long}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pregen-stderr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}
