//! Prometheus metrics of a served job, scraped over plain HTTP while it runs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use crate::common::{COUNT, TOKEN, job_text, pregen, wait, wait_for_segments, worker, write_job};

fn scrape(addr: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect to the metrics server");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

/// The value of the sample line that starts with `name` (labels included).
fn sample(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn a_served_job_exposes_its_progress_as_prometheus_metrics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(COUNT));
    let mut served = pregen()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
            "--token",
            TOKEN,
            "--out",
        ])
        .arg(dir.path().join("out"))
        .arg(&job)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut lines = BufReader::new(served.stdout.take().expect("stdout")).lines();
    let mut line = || lines.next().expect("a line").expect("utf-8");
    let grpc = line()
        .strip_prefix("listening on ")
        .expect("address")
        .to_string();
    let metrics = line();
    let metrics = metrics
        .strip_prefix("metrics on http://")
        .and_then(|m| m.strip_suffix("/metrics"))
        .expect("metrics address")
        .to_string();

    let before = scrape(&metrics);
    assert_eq!(
        sample(&before, "pregen_levels_wanted"),
        Some(COUNT),
        "{before}"
    );
    assert_eq!(sample(&before, "pregen_seeds_total"), Some(0), "{before}");
    assert!(before.contains("# TYPE pregen_seeds counter"), "{before}");

    let mut w = worker(&format!("http://{grpc}"), "w1", TOKEN);
    wait_for_segments(&dir.path().join("out/e2e"), 1, Duration::from_secs(240));
    let during = scrape(&metrics);
    let seeds = sample(&during, "pregen_seeds_total").expect("seeds");
    assert!(seeds > 0, "{during}");
    // Labelled by the identity the coordinator gave: the name, then its ID.
    let w1 = during
        .lines()
        .find(|l| l.starts_with("pregen_worker_results_total{worker=\"w1#"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok());
    assert!(w1.is_some_and(|n| n > 0), "{during}");
    assert!(
        sample(
            &during,
            "pregen_rejected_total{status=\"unsolvable\",reason=\"\"}"
        )
        .is_some(),
        "{during}"
    );
    assert_eq!(
        sample(&during, "pregen_workers_connected"),
        Some(1),
        "{during}"
    );
    assert!(
        sample(&during, "pregen_worker_threads").is_some_and(|n| n >= 1),
        "{during}"
    );
    every_dashboard_metric_is_exported(&during);
    // One lease being worked on and one waiting, never a pile of them.
    assert!(
        sample(&during, "pregen_leases_out").is_some_and(|n| n <= 2),
        "{during}"
    );
    assert!(
        wait(&mut served, Duration::from_secs(240)).success(),
        "serve failed"
    );
    assert!(
        wait(&mut w, Duration::from_secs(240)).success(),
        "worker failed"
    );
}

/// The Grafana dashboard of deploy/grafana/ asks only for metrics the
/// coordinator exports (a renamed metric would leave a panel empty).
fn every_dashboard_metric_is_exported(scraped: &str) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/grafana/pregen-dashboard.json"
    );
    let dashboard = std::fs::read_to_string(path).expect("the dashboard");
    let mut asked: Vec<&str> = dashboard
        .match_indices("pregen_")
        .map(|(at, _)| {
            let rest = &dashboard[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect();
    asked.sort_unstable();
    asked.dedup();
    assert!(asked.len() >= 10, "{asked:?}");
    for name in asked {
        assert!(
            scraped
                .lines()
                .any(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{'])),
            "the dashboard asks for {name}, which is not exported:\n{scraped}"
        );
    }
}
