//! The release archive: checked against SHA256SUMS, the same bytes from the
//! same release files wherever the pack lies, and readable by a tar reader.

use pregen_pack::PackDir;
use pregen_pack::manifest::ReleaseManifest;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::common::{job_text, pregen, run_pack};

fn archive(pack: &Path, dest: &Path) -> std::process::Output {
    archive_with(pack, &[], dest)
}

/// `pregen archive PACK ARGS --output DEST`.
fn archive_with(pack: &Path, args: &[&str], dest: &Path) -> std::process::Output {
    pregen()
        .arg("archive")
        .arg(pack)
        .args(args)
        .arg("--output")
        .arg(dest)
        .output()
        .expect("run pregen archive")
}

fn archived(pack: &Path, dest: &Path) -> Vec<u8> {
    let out = archive(pack, dest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(dest).expect("archive written")
}

/// Files below `dir` by their path relative to `root`.
fn files(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).expect("list") {
        let path: PathBuf = entry.expect("entry").path();
        if path.is_dir() {
            files(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).expect("below root");
            out.insert(
                rel.to_string_lossy().replace('\\', "/"),
                std::fs::read(&path).expect("read"),
            );
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("list") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

#[test]
fn the_release_archive_is_checked_and_reproducible() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job_text(100), 1);
    let first = archived(&pack, &dir.path().join("a.tar.zst"));
    assert_eq!(first, archived(&pack, &dir.path().join("b.tar.zst")));
    // A copy elsewhere (new paths, new file times) archives to the same bytes.
    let copy = dir.path().join("elsewhere/e2e");
    copy_dir(&pack, &copy);
    assert_eq!(first, archived(&copy, &dir.path().join("c.tar.zst")));

    // The archive holds the release files at their paths in the pack, and a
    // manifest listing each of them, under the pack's name.
    let mut want = BTreeMap::new();
    files(&pack, &pack.join("release"), &mut want);
    let mut got = BTreeMap::new();
    let decoder = zstd::Decoder::new(first.as_slice()).expect("zstd");
    let mut tar = tar::Archive::new(decoder);
    for entry in tar.entries().expect("tar entries") {
        let mut entry = entry.expect("entry");
        let header = entry.header();
        assert_eq!(header.mtime().expect("mtime"), 0);
        assert_eq!(header.mode().expect("mode"), 0o644);
        assert_eq!(header.uid().expect("uid"), 0);
        let path = entry.path().expect("path").to_string_lossy().into_owned();
        let name = path
            .strip_prefix("e2e/")
            .expect("under the pack's name")
            .to_string();
        let mut content = Vec::new();
        entry.read_to_end(&mut content).expect("content");
        got.insert(name, content);
    }
    let manifest: ReleaseManifest =
        serde_json::from_slice(&got.remove(pregen_pack::dir::MANIFEST).expect("a manifest"))
            .expect("the release manifest");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert!(got == want, "archived contents differ from the files");
    assert!(got.keys().any(|k| k == "release/campaigns.txt"));
    let listed: BTreeMap<String, String> = got
        .iter()
        .map(|(path, content)| (path.clone(), pregen_games::sha256_hex(content)))
        .collect();
    assert_eq!(
        manifest.files, listed,
        "the manifest names the archive's paths"
    );
    let full = PackDir::new(&pack).read_manifest().expect("manifest");
    assert_eq!(
        (manifest.job_id, manifest.counts),
        (full.job_id, full.counts)
    );

    // A damaged release file is refused, and nothing is written.
    let tier = copy.join("release/tier-01.txt");
    let mut text = std::fs::read(&tier).expect("tier file");
    text.extend_from_slice(b"; tampered\n");
    std::fs::write(&tier, text).expect("tamper");
    let refused = archive(&copy, &dir.path().join("d.tar.zst"));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("tier-01.txt") && stderr.contains("does not match SHA256SUMS"),
        "{stderr}"
    );
    assert!(!dir.path().join("d.tar.zst").exists());

    // So is a pack that was never finished.
    std::fs::remove_file(PackDir::new(&pack).success()).expect("remove _SUCCESS");
    let refused = archive(&pack, &dir.path().join("e.tar.zst"));
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a finished pack"));
}

/// the archive's bytes depend on the levels alone: one worker or
/// three (other timings, other worker names in the Parquet files) give the
/// same archive.
#[test]
fn the_archive_is_the_same_bytes_from_one_or_three_workers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let one = run_pack(&dir.path().join("one"), &job_text(100), 1);
    let three = run_pack(&dir.path().join("three"), &job_text(100), 3);
    let manifest = |pack: &Path| std::fs::read(PackDir::new(pack).manifest()).expect("manifest");
    assert_ne!(
        manifest(&one),
        manifest(&three),
        "the runs differ in their facts"
    );
    assert_eq!(
        archived(&one, &dir.path().join("one.tar.zst")),
        archived(&three, &dir.path().join("three.tar.zst")),
        "the archives differ"
    );
}

/// The archive's entries by their path below the pack's name.
fn unpack(archive: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut tar = tar::Archive::new(zstd::Decoder::new(archive).expect("zstd"));
    let mut out = BTreeMap::new();
    for entry in tar.entries().expect("tar entries") {
        let mut entry = entry.expect("entry");
        let path = entry.path().expect("path").to_string_lossy().into_owned();
        let mut content = Vec::new();
        entry.read_to_end(&mut content).expect("content");
        out.insert(
            path.strip_prefix("e2e/")
                .expect("under the pack")
                .to_string(),
            content,
        );
    }
    out
}

#[test]
fn an_archive_leaves_solutions_out_on_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job_text(100), 1);
    let full = unpack(&archived(&pack, &dir.path().join("full.tar.zst")));
    assert!(full.keys().any(|k| k.starts_with("release/solutions/")));
    let dest = dir.path().join("bare.tar.zst");
    let out = archive_with(&pack, &["--without", "solutions"], &dest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bare = unpack(&std::fs::read(&dest).expect("written"));
    assert!(
        !bare.keys().any(|k| k.contains("solutions")),
        "{:?}",
        bare.keys()
    );
    // What is left is whole: SHA256SUMS and the manifest name exactly it.
    let sums = String::from_utf8(bare["release/SHA256SUMS"].clone()).expect("text");
    assert!(!sums.contains("solutions/"), "{sums}");
    for line in sums.lines() {
        let (sum, name) = line.split_once("  ").expect("`SUM  NAME`");
        assert_eq!(
            pregen_games::sha256_hex(&bare[&format!("release/{name}")]),
            sum
        );
    }
    let manifest: ReleaseManifest =
        serde_json::from_slice(&bare.remove(pregen_pack::dir::MANIFEST).expect("manifest"))
            .expect("the release manifest");
    assert_eq!(
        manifest.files.keys().collect::<Vec<_>>(),
        bare.keys().collect::<Vec<_>>()
    );
    assert!(bare.keys().all(|k| full.contains_key(k)));
    // Its verify says the levels were checked without a replay, and the
    // full archive's that every level was replayed.
    let verify = |archive: &Path| {
        let out = crate::common::pregen()
            .args(["release", "verify"])
            .arg(archive)
            .output()
            .expect("run release verify");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = verify(&dest);
    assert!(
        said.contains("the release ships no solutions to replay"),
        "{said}"
    );
    assert!(!said.contains("replayed"), "{said}");
    let said = verify(&dir.path().join("full.tar.zst"));
    assert!(said.contains("levels checked and replayed"), "{said}");
}

/// Every part `--without` names leaves the archive, and only it; a pack whose
/// solutions are inline in its level files refuses `--without solutions`
/// with a message saying why, and writes nothing.
#[test]
fn every_without_leaves_its_part_out_and_inline_solutions_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job_text(100), 1);
    let full = unpack(&archived(&pack, &dir.path().join("full.tar.zst")));
    for (part, folder) in [
        ("seeds", "release/seeds/"),
        ("campaigns", "release/campaigns."),
    ] {
        assert!(
            full.keys().any(|k| k.starts_with(folder)),
            "{part} in the full archive"
        );
        let dest = dir.path().join(format!("without-{part}.tar.zst"));
        let out = archive_with(&pack, &["--without", part], &dest);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bare = unpack(&std::fs::read(&dest).expect("written"));
        assert!(
            !bare.keys().any(|k| k.starts_with(folder)),
            "{part}: {:?}",
            bare.keys()
        );
        let kept = |k: &&String| {
            !k.starts_with(folder) && !k.ends_with("SHA256SUMS") && !k.ends_with("manifest.json")
        };
        assert_eq!(
            full.keys().filter(kept).collect::<Vec<_>>(),
            bare.keys().filter(kept).collect::<Vec<_>>(),
            "{part}: nothing else left out"
        );
        // The manifest says what was left out, and the release verifies.
        let manifest = bare
            .iter()
            .find(|(k, _)| k.ends_with("manifest.json"))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .expect("a manifest");
        let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("json");
        assert_eq!(manifest["left_out"], serde_json::json!([part]), "{part}");
        let verify = crate::common::pregen()
            .args(["release", "verify"])
            .arg(&dest)
            .output()
            .expect("run release verify");
        let said = String::from_utf8_lossy(&verify.stdout);
        assert!(
            verify.status.success(),
            "{part}: {said}{}",
            String::from_utf8_lossy(&verify.stderr)
        );
        assert!(
            said.contains(&format!(
                "left out of this release, as its manifest says: {part}"
            )),
            "{said}"
        );
    }
    let inline = run_pack(
        &dir.path().join("inline"),
        &(job_text(60) + "[release]\nsolutions = \"inline\"\n"),
        1,
    );
    let dest = dir.path().join("inline.tar.zst");
    let out = archive_with(&inline, &["--without", "solutions"], &dest);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("level files hold their solutions"),
        "{stderr}"
    );
    assert!(!dest.exists(), "nothing written");
    // JSON Lines carry the solution in each line: the same refusal.
    let jsonl = run_pack(
        &dir.path().join("jsonl"),
        &(job_text(60) + "[release]\nformat = \"jsonl\"\n"),
        1,
    );
    let dest = dir.path().join("jsonl.tar.zst");
    let out = archive_with(&jsonl, &["--without", "solutions"], &dest);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(1) && stderr.contains("`format = \"jsonl\"`"),
        "{stderr}"
    );
    assert!(!dest.exists(), "nothing written");
}

/// The archive's bytes depend on the level, never on the compression
/// threads: one thread and four give the same archive, and another level
/// another one.
#[test]
fn the_archive_is_the_same_bytes_with_one_thread_or_four() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job_text(100), 1);
    let with = |threads: &str, level: &str| {
        let dest = dir.path().join(format!("t{threads}-l{level}.tar.zst"));
        let out = archive_with(&pack, &["--threads", threads, "--level", level], &dest);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(&dest).expect("written")
    };
    let one = with("1", "12");
    assert_eq!(one, with("4", "12"), "the threads changed the bytes");
    let other = with("2", "3");
    assert_ne!(one, other, "the level changes the bytes");
    assert_eq!(unpack(&one), unpack(&other), "the same files either way");
}
