//! The store against an S3 server (moto's): objects written whole and read
//! back, create-only puts, the lease, and the errors that name the URL.

use std::time::Duration;

use pregen_store::testing::{Kind, S3Server};
use pregen_store::{Lease, LeaseError, Location, Remote, StoreError};

/// Every S3 test server this machine has (both under
/// `PREGEN_TESTS_NEED_EVERYTHING`), started.
fn servers() -> Vec<S3Server> {
    let mut started = Vec::new();
    for kind in Kind::ALL {
        if !kind.available() {
            assert!(
                std::env::var_os("PREGEN_TESTS_NEED_EVERYTHING").is_none(),
                "needs the S3 server {} (.ci/run installs it)",
                kind.name()
            );
            eprintln!(
                "skipped on {}: not installed (.ci/run installs it)",
                kind.name()
            );
            continue;
        }
        started.push(S3Server::start_kind(kind).expect("the S3 test server starts"));
    }
    started
}

fn remote(server: &S3Server, prefix: &str) -> Remote {
    Remote::with_options(&server.url(prefix), &server.env()).expect("a valid URL")
}

#[test]
fn objects_go_up_and_come_back_whole() {
    servers().iter().for_each(up_and_back);
}

fn up_and_back(server: &S3Server) {
    let pack = remote(server, "packs/demo");
    let folder = tempfile::tempdir().unwrap();
    // Larger than one part: a multipart upload.
    let big: Vec<u8> = (0..(pregen_store::PART_BYTES + 12345))
        .map(|i| (i % 251) as u8)
        .collect();
    std::fs::write(folder.path().join("big.bin"), &big).unwrap();
    pack.upload(&folder.path().join("big.bin"), "levels/big.bin")
        .unwrap();
    pack.write("manifest.json", b"{}".to_vec()).unwrap();

    let listed = pack.list().unwrap();
    let names: Vec<&str> = listed.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["levels/big.bin", "manifest.json"]);
    assert_eq!(listed[0].size, big.len() as u64);

    let back = tempfile::tempdir().unwrap();
    let got = pack
        .download_all(back.path(), |o| o.name.starts_with("levels/"))
        .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        std::fs::read(back.path().join("levels/big.bin")).unwrap(),
        big
    );
    assert_eq!(
        pack.read("manifest.json").unwrap().as_deref(),
        Some(&b"{}"[..])
    );
    assert_eq!(pack.read("absent").unwrap(), None);
    pack.delete("manifest.json").unwrap();
    pack.delete("manifest.json").unwrap();
    assert_eq!(pack.read("manifest.json").unwrap(), None);
}

#[test]
fn a_create_only_put_never_replaces() {
    servers().iter().for_each(create_only);
}

fn create_only(server: &S3Server) {
    let log = remote(server, "p/commit");
    assert!(log.create("seg-00000001.bin", b"first".to_vec()).unwrap());
    assert!(!log.create("seg-00000001.bin", b"second".to_vec()).unwrap());
    assert_eq!(
        log.read("seg-00000001.bin").unwrap().as_deref(),
        Some(&b"first"[..])
    );
}

#[test]
fn a_lease_keeps_a_second_holder_out_until_it_expires() {
    servers().iter().for_each(leased);
}

fn leased(server: &S3Server) {
    let pack = remote(server, "leased");
    let ttl = Duration::from_millis(1500);
    let mut first = Lease::take(&pack, "commit/LEASE", "first".into(), ttl).unwrap();
    let refused = Lease::take(&pack, "commit/LEASE", "second".into(), ttl).unwrap_err();
    assert!(
        matches!(&refused, LeaseError::Held { holder, .. } if holder == "first"),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .contains("s3://pregen-test/leased/commit/LEASE"),
        "{refused}"
    );
    first.renew().unwrap();
    // The first holder stops renewing; once it expires, the second takes over
    // and the first is fenced at its next renewal.
    std::thread::sleep(ttl + Duration::from_millis(200));
    let second = Lease::take(&pack, "commit/LEASE", "second".into(), ttl).unwrap();
    let lost = first.renew().unwrap_err();
    assert!(
        matches!(&lost, LeaseError::Lost { holder, .. } if holder == "second"),
        "{lost}"
    );
    second.release().unwrap();
    Lease::take(&pack, "commit/LEASE", "third".into(), ttl).unwrap();
}

#[test]
fn a_missing_bucket_is_named_with_the_cause() {
    // s3s-fs makes a bucket's folder on the first put: moto alone refuses.
    servers()
        .iter()
        .filter(|s| s.kind() == Kind::Moto)
        .for_each(missing_bucket);
}

fn missing_bucket(server: &S3Server) {
    let missing = Remote::with_options("s3://no-such-bucket/pack", &server.env()).unwrap();
    let err = missing.list().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, StoreError::Request { .. }), "{text}");
    assert!(text.starts_with("s3://no-such-bucket/pack"), "{text}");
    assert!(
        text.contains("NoSuchBucket") || text.contains("does not exist"),
        "{text}"
    );
}

#[test]
fn locations_parse_as_paths_or_stores() {
    assert!(
        matches!(Location::parse("out/demo").unwrap(), Location::Local(p) if p.ends_with("out/demo"))
    );
    assert!(
        matches!(Location::parse("file:///tmp/x").unwrap(), Location::Local(p) if p.ends_with("tmp/x"))
    );
    let s3 = Location::parse("s3://bucket/a/b").unwrap();
    assert_eq!(s3.to_string(), "s3://bucket/a/b");
    assert_eq!(s3.join("pack").to_string(), "s3://bucket/a/b/pack");
    let err = Location::parse("ftp://host/x").unwrap_err().to_string();
    assert!(
        err.contains("ftp://host/x") && err.contains("s3://"),
        "{err}"
    );
}
