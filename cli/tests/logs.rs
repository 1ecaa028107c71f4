//! Logs written to a file or a pipe carry no colour codes; `--log-format
//! json` writes one JSON object per log line, for log collectors.

use crate::common::{job_text, pregen, write_job};

/// `pregen run` of a small pack with info logs; its stderr.
fn run_stderr(dir: &std::path::Path, extra: &[&str]) -> String {
    let job = write_job(dir, &job_text(20));
    let out = pregen()
        .env("PREGEN_LOG", "info")
        .env_remove("NO_COLOR")
        .args(["run", "--no-progress", "--out"])
        .arg(dir.join("out"))
        .args(extra)
        .arg(&job)
        .output()
        .expect("run pregen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).expect("utf-8")
}

#[test]
fn logs_to_a_pipe_are_plain_text_or_json_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = run_stderr(&dir.path().join("text"), &[]);
    assert!(text.contains("coordinator listening"), "{text}");
    assert!(!text.contains('\u{1b}'), "colour codes in a pipe: {text:?}");

    let json = run_stderr(&dir.path().join("json"), &["--log-format", "json"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["level"] == "INFO" && l["fields"]["message"] == "coordinator listening"),
        "{json}"
    );
    assert!(!json.contains('\u{1b}'));
}
