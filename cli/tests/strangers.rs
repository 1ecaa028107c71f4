//! Clients without the token, or with it and nothing to say: every
//! listener is bounded, so none of them holds a place, a descriptor or a
//! session for long, and the pack is still made.

use crate::common::needs::{Need, needs};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use pregen_coordinator::Job;
use pregen_coordinator::LogKey;
use pregen_coordinator::server::{RunOptions, Started, start_job};
use pregen_coordinator::{CommitLog, LogEntry as Entry};
use pregen_pack::PackDir;
use tokio_util::sync::CancellationToken;

use crate::common::rogue::{Rogue, client};
use crate::common::{TOKEN, job_text, pregen, wait, worker, write_job};

/// A coordinator in this process with a connection cap and metrics.
async fn capped_coordinator(
    out: &Path,
    max_connections: usize,
    lease_ttl: Duration,
) -> (SocketAddr, SocketAddr, CancellationToken) {
    let shutdown = CancellationToken::new();
    let started = start_job(
        Job::parse(&job_text(50)).expect("job"),
        RunOptions {
            max_connections,
            lease_ttl,
            metrics: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            shutdown: shutdown.clone(),
            ..RunOptions::local(out.to_path_buf(), TOKEN.into())
        },
    )
    .await
    .expect("starts");
    let Started::Running(mut running) = started else {
        panic!("a new pack is not complete")
    };
    let listening = running.listening;
    tokio::spawn(async move {
        let _ = running.complete().await;
        running.stop().await;
    });
    (
        listening.grpc,
        listening.metrics.expect("metrics"),
        shutdown,
    )
}

/// Reads until the peer closes the connection (end of stream or a reset):
/// true if it did within 60 s.
fn closed_by_peer(stream: &mut TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// A TLS ClientHello's first bytes: a handshake record header and the start
/// of the hello, cut off.
const HALF_TLS_HELLO: &[u8] = &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03];

/// HTTP/2's connection preface and an empty SETTINGS frame: a connection
/// that opens no stream.
const PREFACE_AND_SETTINGS: &[u8] =
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_spoken_connections_are_closed_and_free_their_places() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (grpc, _, shutdown) = capped_coordinator(dir.path(), 4, Duration::from_secs(15)).await;
    let openings: [&[u8]; 4] = [
        b"P",
        b"PRI * HTTP/2.0\r\n",
        HALF_TLS_HELLO,
        PREFACE_AND_SETTINGS,
    ];
    let closed = tokio::task::spawn_blocking(move || {
        let mut streams: Vec<TcpStream> = openings
            .iter()
            .map(|opening| {
                let mut s = TcpStream::connect(grpc).expect("connect");
                s.write_all(opening).expect("send");
                s
            })
            .collect();
        streams
            .iter_mut()
            .map(closed_by_peer)
            .collect::<Vec<bool>>()
    })
    .await
    .expect("join");
    assert_eq!(
        closed, [true; 4],
        "one byte, half a preface, half a TLS hello, a preface without a session"
    );
    // The four places are free again: a worker gets in and gets work.
    let mut client = client(grpc).await;
    let mut rogue = Rogue::join(&mut client, "after").await;
    let grant = rogue.lease().await;
    assert!(grant.seed_count > 0);
    shutdown.cancel();
}

/// A stranger at 127.0.0.`host` reopening one-byte connections to `grpc`
/// every 5 ms, keeping the newest 32 open, until `flooding` is cancelled:
/// how many it opened.
fn flood(grpc: SocketAddr, host: u8, flooding: CancellationToken) -> tokio::task::JoinHandle<u32> {
    tokio::spawn(async move {
        let stranger = SocketAddr::from(([127, 0, 0, host], 0));
        let (mut opened, mut held) = (0u32, Vec::new());
        while !flooding.is_cancelled() {
            let socket = tokio::net::TcpSocket::new_v4().expect("socket");
            socket.bind(stranger).expect("bind a loopback address");
            if let Ok(mut stream) = socket.connect(grpc).await {
                use tokio::io::AsyncWriteExt;
                if stream.write_all(b"P").await.is_ok() {
                    opened += 1;
                    held.push(stream);
                }
            }
            // Keep the newest ones open; the coordinator closes the rest.
            if held.len() > 32 {
                held.remove(0);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        opened
    })
}

/// A stranger on one address who keeps reopening one-byte connections as
/// fast as they close holds at most a quarter of the places: a worker on
/// another address still gets in and gets work while the flood goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_reopening_connections_cannot_hold_the_whole_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (grpc, _, shutdown) = capped_coordinator(dir.path(), 8, Duration::from_secs(15)).await;
    let flooding = CancellationToken::new();
    // Loopback answers from any 127.x address: the stranger is 127.0.0.2.
    let flood = flood(grpc, 2, flooding.clone());
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut client = client(grpc).await;
    let mut rogue = Rogue::join(&mut client, "beside-the-flood").await;
    let grant = rogue.lease().await;
    assert!(grant.seed_count > 0, "a worker gets work during the flood");
    flooding.cancel();
    let opened = flood.await.expect("join");
    assert!(
        opened > 8,
        "the stranger kept reopening ({opened} connections)"
    );
    shutdown.cancel();
}

/// Strangers on eight addresses, each reopening one-byte connections as
/// fast as they close, together hold all but a quarter of the places: a
/// worker on another address still gets in and gets work while the flood
/// goes on (each address alone may hold a quarter: together they once held
/// every place).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_on_many_addresses_cannot_hold_the_whole_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (grpc, _, shutdown) = capped_coordinator(dir.path(), 16, Duration::from_secs(15)).await;
    let flooding = CancellationToken::new();
    let floods: Vec<_> = (2..10u8)
        .map(|host| flood(grpc, host, flooding.clone()))
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let joined = tokio::time::timeout(Duration::from_secs(10), async {
        let mut client = client(grpc).await;
        let mut rogue = Rogue::join(&mut client, "beside-the-crowd").await;
        rogue.lease().await
    })
    .await
    .expect("a worker got in within 10 s of the crowd");
    assert!(joined.seed_count > 0, "a worker gets work during the flood");
    flooding.cancel();
    let mut opened = 0;
    for flood in floods {
        opened += flood.await.expect("join");
    }
    assert!(
        opened > 16,
        "the strangers kept reopening ({opened} connections)"
    );
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_listener_is_capped_and_closes_what_lingers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, metrics, shutdown) = capped_coordinator(dir.path(), 64, Duration::from_secs(15)).await;
    let closed = tokio::task::spawn_blocking(move || {
        // Silent, or a request begun and never finished.
        let mut streams: Vec<TcpStream> = (0..40)
            .map(|i| {
                let mut s = TcpStream::connect(metrics).expect("connect");
                if i % 2 == 0 {
                    s.write_all(b"GET /metrics HTTP/1.1\r\n").expect("send");
                }
                s
            })
            .collect();
        let closed = streams
            .iter_mut()
            .filter_map(|s| closed_by_peer(s).then_some(()))
            .count();
        // And a scrape works afterwards.
        let mut s = TcpStream::connect(metrics).expect("connect");
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .expect("send");
        let mut page = String::new();
        s.read_to_string(&mut page).expect("read");
        (closed, page)
    })
    .await
    .expect("join");
    assert_eq!(closed.0, 40, "every lingering metrics connection is closed");
    assert!(closed.1.contains("pregen_levels_wanted 50"), "{}", closed.1);
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_silent_after_hello_is_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Lease TTL 2 s: a session silent for 10 s (the least limit) is closed.
    let (grpc, _, shutdown) = capped_coordinator(dir.path(), 64, Duration::from_secs(2)).await;
    let mut client = client(grpc).await;
    let mut rogue = Rogue::join(&mut client, "quiet").await;
    let refusal = rogue.refusal().await;
    assert_eq!(refusal.code(), tonic::Code::DeadlineExceeded);
    assert!(
        refusal
            .message()
            .contains("nothing from the worker for 10 s"),
        "{}",
        refusal.message()
    );
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_carries_a_few_sessions_at_most() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (grpc, _, shutdown) = capped_coordinator(dir.path(), 64, Duration::from_secs(15)).await;
    let tcp = tokio::net::TcpStream::connect(grpc).await.expect("connect");
    let (_send, mut connection) = h2::client::handshake(tcp).await.expect("HTTP/2");
    // The server's SETTINGS arrive with its first frames.
    let mut limit = connection.max_concurrent_send_streams();
    for _ in 0..100 {
        if limit != usize::MAX {
            break;
        }
        let _ = tokio::time::timeout(Duration::from_millis(50), &mut connection).await;
        limit = connection.max_concurrent_send_streams();
    }
    assert_eq!(
        limit,
        pregen_coordinator::MAX_SESSIONS_PER_CONNECTION as usize
    );
    shutdown.cancel();
}

/// The issue's case: 100 descriptors' worth of silent connections under a
/// tight open-file limit, to both listeners, while a worker makes the pack.
#[test]
fn silent_crowds_under_a_tight_file_limit_do_not_stop_the_pack() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(400));
    // `ulimit -n` sets the soft and the hard limit.
    let mut served = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 256 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_pregen"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
            "--token",
            TOKEN,
            "--write-give-up-s",
            "5",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .arg(&job)
        .env("PREGEN_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(
        served.stdout.take().expect("stdout"),
    ));
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
    let crowd: Vec<TcpStream> = (0..300)
        .filter_map(|i| {
            let to = if i % 3 == 0 { &metrics } else { &grpc };
            let mut s = TcpStream::connect(to).ok()?;
            let _ = s.write_all(b"P");
            Some(s)
        })
        .collect();
    let mut honest = worker(&format!("http://{grpc}"), "honest", TOKEN);
    let status = wait(&mut served, Duration::from_secs(120));
    let mut stderr = String::new();
    served
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("the open-file limit lowers --max-connections"),
        "{stderr}"
    );
    // the connections closed at the cap are logged once per 10 s
    // with their count, not a line each (the run lasts at most 120 s).
    let cap_lines = stderr.matches("connection cap reached").count();
    assert!(cap_lines <= 13, "{cap_lines} lines of refusals: {stderr}");
    assert!(wait(&mut honest, Duration::from_secs(30)).success());
    assert!(PackDir::new(dir.path().join("out/e2e")).is_complete());
    drop(crowd);
}

/// A cap the open-file limit cannot hold is refused before anything starts.
#[test]
fn a_cap_past_the_file_limit_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(50));
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 256 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_pregen"))
        .args(["serve", "--listen", "127.0.0.1:0", "--token", TOKEN])
        .args(["--max-connections", "500", "--out"])
        .arg(dir.path().join("out"))
        .arg(&job)
        .output()
        .expect("run serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("open-file limit of 256") && stderr.contains("--max-connections"),
        "{stderr}"
    );
}

/// A refusal in the log names an identity no new worker can have: a run
/// resumed over it finishes (it used to wait forever for `local-1`).
#[test]
fn a_logged_refusal_never_stalls_pregen_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = job_text(50);
    let job = Job::parse(&text).expect("job");
    let commit = dir.path().join("out/e2e/commit");
    let mut log = CommitLog::open(
        &commit,
        &job,
        LogKey::read_or_draw(&commit).expect("key"),
        |_| {},
    )
    .expect("log");
    log.append(&[Entry::Refused {
        worker: "local-1".into(),
        reason: "seed 7: made up".into(),
    }])
    .expect("append");
    drop(log);
    let path = write_job(dir.path(), &text);
    let mut run = pregen()
        .args(["run", "--no-progress", "--out"])
        .arg(dir.path().join("out"))
        .arg(&path)
        .spawn()
        .expect("run");
    assert!(wait(&mut run, Duration::from_secs(120)).success());
    assert!(PackDir::new(dir.path().join("out/e2e")).is_complete());
}

/// The exposition page as a real Prometheus parser reads it (the Python
/// client's OpenMetrics parser, which refuses what Prometheus would):
/// `name labels value` per sample, or the parser's error.
fn parse_metrics(page: &str) -> Result<Vec<String>, String> {
    let script = r#"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        print(s.name, sorted(s.labels.items()), s.value)
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("parser ends");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_and_reasons_cannot_forge_a_metric() {
    if !needs(&[Need::Python(&["prometheus_client"])]) {
        return;
    }
    use pregen_proto::v1::{SeedResult, seed_result};
    let dir = tempfile::tempdir().expect("tempdir");
    let (grpc, metrics, shutdown) =
        capped_coordinator(dir.path(), 64, Duration::from_secs(15)).await;
    let mut client = client(grpc).await;
    let forged = "w\"} pregen_levels_committed 99999\n# EOF\n";
    let refused = Rogue::try_join(&mut client, forged)
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(
        refused.message().contains("worker name"),
        "{}",
        refused.message()
    );
    // A reason's detail is the worker's to choose; the label shows its code.
    let mut rogue = Rogue::join(&mut client, "rogue").await;
    let grant = rogue.lease().await;
    rogue
        .results(vec![SeedResult {
            lease_id: grant.lease_id,
            seed: grant.first_seed,
            status: seed_result::Status::Rejected as i32,
            reason_code: pregen_proto::v1::ReasonCode::TooEasy as i32,
            reason_detail: forged.into(),
            ..Default::default()
        }])
        .await;
    let page = tokio::task::spawn_blocking(move || {
        for _ in 0..200 {
            let mut s = TcpStream::connect(metrics).expect("connect");
            write!(
                s,
                "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .expect("send");
            let mut page = String::new();
            s.read_to_string(&mut page).expect("read");
            if page.contains("pregen_rejected_total{") {
                return page;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the rejected result never showed");
    })
    .await
    .expect("join");
    let body = page
        .split_once("\r\n\r\n")
        .map_or(page.as_str(), |(_, b)| b);
    let samples = parse_metrics(body).unwrap_or_else(|e| panic!("{e}\n{body}"));
    let committed: Vec<&String> = samples
        .iter()
        .filter(|s| s.starts_with("pregen_levels_committed "))
        .collect();
    assert_eq!(committed.len(), 1, "{samples:#?}");
    assert!(!committed[0].ends_with(" 99999.0"), "{committed:?}");
    assert!(
        samples
            .iter()
            .any(|s| s.starts_with("pregen_rejected_total ")
                && s.contains("'too easy'")
                && !s.contains("99999")),
        "the reason's code is the label: {samples:#?}"
    );
    shutdown.cancel();
}

/// A log whose entries were written with valid checksums but hold a level
/// the coordinator's check refuses (an edited move count, a level of other
/// params) stops the resume with an error naming the seed; nothing merges.
#[test]
fn a_log_edited_with_fresh_checksums_is_refused_on_resume() {
    use pregen_games::{Budget, GameKind};
    use pregen_pack::SeedRecord;
    let text = job_text(50);
    let job = Job::parse(&text).expect("job");
    let game = GameKind::from_name("tilt")
        .and_then(|g| g.prepare(&job.plan()[0].params))
        .expect("game");
    let wider = GameKind::from_name("tilt")
        .and_then(|g| {
            g.prepare(&serde_json::json!({"width": 6, "height": 6, "pairs": 2, "min_moves": 3}))
        })
        .expect("game");
    let accepted = |game: &pregen_games::PreparedGame| {
        (0..200u64)
            .find_map(|seed| {
                let outcome = game.run(seed, &Budget::nodes(job.budget.max_nodes));
                outcome
                    .result
                    .is_ok()
                    .then(|| SeedRecord::from_outcome(seed, outcome, "w#000000000000".into(), 1))
            })
            .expect("an accepted seed")
    };
    let mut edited = accepted(&game);
    edited.level.as_mut().expect("level").moves += 1;
    let mut harder = accepted(&game);
    harder.level.as_mut().expect("level").difficulty += 1.0;
    let foreign = accepted(&wider);
    for (what, record) in [
        ("an edited move count", edited),
        ("an edited difficulty", harder),
        ("a 6x6 level", foreign),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let seed = record.seed;
        let commit = dir.path().join("out/e2e/commit");
        let mut log = CommitLog::open(
            &commit,
            &job,
            LogKey::read_or_draw(&commit).expect("key"),
            |_| {},
        )
        .expect("log");
        log.append(&[Entry::Result(record)]).expect("append");
        drop(log);
        let path = write_job(dir.path(), &text);
        let out = pregen()
            .args(["run", "--no-progress", "--out"])
            .arg(dir.path().join("out"))
            .arg(&path)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}");
        assert!(
            stderr.contains(&format!("the commit log's level for seed {seed} fails"))
                || stderr.contains(&format!("the commit log's difficulty for seed {seed} is")),
            "{what}: {stderr}"
        );
        assert!(!PackDir::new(dir.path().join("out/e2e")).is_complete());
    }
}
