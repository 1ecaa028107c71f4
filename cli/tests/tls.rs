//! `serve --tls-cert/--tls-key` and `worker --tls-ca`: a pack made over TLS,
//! and a worker that does not trust the coordinator's certificate refused.

use crate::common::needs::{Need, needs};
use pregen_pack::PackDir;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::{TOKEN, job_text, pregen, serve_with, wait};

/// A test CA and a `localhost` certificate it signed, made with the openssl CLI.
fn certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=pregen test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write extensions");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
}

/// A worker certificate the test CA signed, for client authentication, and
/// the ID the coordinator gives its holder (the first 12 hex digits of the
/// certificate's SHA-256).
fn client_certificate(dir: &Path) -> String {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    openssl(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "client.key",
        "-out",
        "client.csr",
        "-subj",
        "/CN=worker-7",
    ]);
    std::fs::write(
        dir.join("client.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n",
    )
    .expect("write extensions");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "client.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "client.pem",
        "-days",
        "2",
        "-extfile",
        "client.ext",
    ]);
    let fingerprint = openssl(&[
        "x509",
        "-in",
        "client.pem",
        "-noout",
        "-fingerprint",
        "-sha256",
    ]);
    let hex: String = fingerprint
        .split_once('=')
        .expect("a fingerprint")
        .1
        .chars()
        .filter(char::is_ascii_hexdigit)
        .collect();
    hex[..12].to_ascii_lowercase()
}

fn tls_worker(url: &str, ca: Option<&Path>) -> std::process::Child {
    let mut cmd = pregen();
    cmd.args([
        "worker",
        "--coordinator",
        url,
        "--token",
        TOKEN,
        "--threads",
        "1",
    ])
    .args(["--connect-timeout-s", "2"])
    .stderr(std::process::Stdio::piped());
    if let Some(ca) = ca {
        cmd.arg("--tls-ca").arg(ca);
    }
    cmd.spawn().expect("spawn worker")
}

#[test]
fn a_pack_is_made_over_tls_and_an_untrusting_worker_is_refused() {
    if !needs(&[Need::Openssl]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    certificates(dir.path());
    let (cert, key) = (dir.path().join("server.pem"), dir.path().join("server.key"));
    let mut served = serve_with(
        dir.path(),
        &job_text(100),
        15_000,
        &[
            OsStr::new("--tls-cert"),
            cert.as_os_str(),
            OsStr::new("--tls-key"),
            key.as_os_str(),
        ],
    );
    let port = served.url.rsplit(':').next().expect("port").to_string();
    let url = format!("https://localhost:{port}");

    // Without the test CA the certificate is not trusted: no session, a clear failure.
    let untrusting = tls_worker(&url, None)
        .wait_with_output()
        .expect("worker exits");
    assert!(!untrusting.status.success());
    let stderr = String::from_utf8_lossy(&untrusting.stderr);
    assert!(stderr.contains("cannot reach the coordinator"), "{stderr}");
    assert!(
        stderr.contains("certificate"),
        "the cause is named: {stderr}"
    );
    // Plain gRPC to a TLS port gets nowhere either.
    let plain = tls_worker(&format!("http://127.0.0.1:{port}"), None)
        .wait_with_output()
        .expect("worker exits");
    assert!(!plain.status.success());

    let mut trusting = tls_worker(&url, Some(&dir.path().join("ca.pem")));
    assert!(wait(&mut trusting, Duration::from_secs(120)).success());
    assert!(wait(&mut served.child, Duration::from_secs(60)).success());
    let pack = dir.path().join("out").join("e2e");
    assert!(PackDir::new(&pack).is_complete(), "pack written over TLS");
    let summary = pregen_analysis::summarize(&pack).expect("summary");
    assert_eq!(summary.statuses.get("accepted"), Some(&100));
}

/// `serve --tls-client-ca`: a worker without a certificate the CA signed
/// gets no session; one with it makes the pack, recorded under the
/// certificate's ID whatever name it gives.
#[test]
fn client_certificates_are_the_workers_identity() {
    if !needs(&[Need::Openssl]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    certificates(dir.path());
    let id = client_certificate(dir.path());
    let path = |f: &str| dir.path().join(f);
    let (cert, key, ca) = (path("server.pem"), path("server.key"), path("ca.pem"));
    let mut served = serve_with(
        dir.path(),
        &job_text(100),
        15_000,
        &[
            OsStr::new("--tls-cert"),
            cert.as_os_str(),
            OsStr::new("--tls-key"),
            key.as_os_str(),
            OsStr::new("--tls-client-ca"),
            ca.as_os_str(),
        ],
    );
    let port = served.url.rsplit(':').next().expect("port").to_string();
    let url = format!("https://localhost:{port}");

    let anonymous = tls_worker(&url, Some(&ca))
        .wait_with_output()
        .expect("worker exits");
    assert!(
        !anonymous.status.success(),
        "a worker without a certificate got in"
    );

    let mut holder = pregen()
        .args([
            "worker",
            "--coordinator",
            &url,
            "--token",
            TOKEN,
            "--threads",
            "1",
        ])
        .args(["--name", "anything"])
        .arg("--tls-ca")
        .arg(&ca)
        .arg("--tls-cert")
        .arg(path("client.pem"))
        .arg("--tls-key")
        .arg(path("client.key"))
        .spawn()
        .expect("spawn worker");
    assert!(wait(&mut holder, Duration::from_secs(120)).success());
    assert!(wait(&mut served.child, Duration::from_secs(60)).success());
    let pack = dir.path().join("out").join("e2e");
    let job = pregen_coordinator::Job::parse(&job_text(100)).expect("job");
    let entries = pregen_coordinator::CommitLog::read(&pack.join("commit"), &job).expect("log");
    let expected = format!("anything#{id}");
    assert!(
        entries
            .iter()
            .filter_map(pregen_coordinator::LogEntry::result)
            .all(|r| r.worker == expected || r.worker == "coordinator"),
        "recorded as {expected}"
    );
}
