//! The release files: levels, solutions apart (or inline, or left out), and
//! the seed-only release from which a client that links `pregen-games`
//! regenerates every level bit for bit.

use crate::common::needs::{Need, PYTHON, needs};
use std::collections::BTreeMap;
use std::path::Path;

use pregen_games::seeds::SeedFile;

use crate::common::run_pack;

/// A small tilt pack in two strata (so that seeds map to their params), with
/// `release` as its `[release]` table.
fn job(release: &str) -> String {
    format!(
        "pack = \"e2e\"\ngame = \"tilt\"\nseeds_per_lease = 32\n\
         [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n\
         [[strata]]\nname = \"small\"\ncount = 120\n\
         [[strata]]\nname = \"wide\"\ncount = 80\nparams = {{ width = 6, pairs = 3 }}\n\
         [budget]\nmax_nodes = 50000\nwatchdog_ms = 60000\n\
         [tiers]\nscheme = \"equal\"\ncount = 4\n\
         {release}"
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The levels of the pack's Parquet files: seed -> (tier, hash, solution).
fn parquet_levels(pack: &Path) -> BTreeMap<u64, (u32, String, String)> {
    use pregen_pack::read::{read_batches, text_column, u64_column};
    let mut out = BTreeMap::new();
    for tier in 1..=4u32 {
        let path = pack.join(pregen_pack::dir::tier_part(tier, 0));
        for batch in read_batches(&path).expect("tier file") {
            let seeds = u64_column(&batch, "seed", &path).expect("seed");
            let hashes = text_column(&batch, "level_hash", &path).expect("level_hash");
            let solutions = text_column(&batch, "solution", &path).expect("solution");
            for (i, seed) in seeds.into_iter().enumerate() {
                let row = (
                    tier,
                    hashes.value(i).to_string(),
                    solutions.value(i).to_string(),
                );
                out.insert(seed, row);
            }
        }
    }
    out
}

#[test]
fn a_seed_only_release_regenerates_every_level_bit_for_bit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job(""), 2);
    let levels = parquet_levels(&pack);
    assert_eq!(levels.len(), 200);
    let mut regenerated = 0;
    for tier in 1..=4u32 {
        let text = read(
            &pack
                .join("release/seeds")
                .join(format!("tier-{tier:02}.txt")),
        );
        let file = SeedFile::parse(&text).expect("a seed file");
        assert_eq!(
            (file.header.game.as_str(), file.header.tier),
            ("tilt", tier)
        );
        assert_eq!(file.header.strata.len(), 2, "both parameter sets listed");
        // The client's side: levels made again from the seeds alone.
        let made = file.regenerate().expect("every level regenerates");
        for ((seed, hash), level) in file.levels.iter().zip(&made) {
            let (in_tier, in_parquet, _) = &levels[seed];
            assert_eq!((in_tier, in_parquet), (&tier, hash), "seed {seed}");
            assert_eq!(&level.level_hash, hash, "seed {seed}");
        }
        regenerated += made.len();
    }
    assert_eq!(
        regenerated, 200,
        "every level of the pack is in a seed file"
    );

    // A seed file whose hash was edited, or that a newer generator made, is refused.
    let text = read(&pack.join("release/seeds/tier-01.txt"));
    let first = SeedFile::parse(&text).expect("parse").levels[0].1.clone();
    let edited = SeedFile::parse(&text.replacen(&first, &"0".repeat(64), 1)).expect("parse");
    let err = edited.regenerate().expect_err("a wrong hash").to_string();
    assert!(err.contains("the file lists"), "{err}");
    let newer = text.replacen("\"generator\":\"", "\"generator\":\"9", 1);
    let err = SeedFile::parse(&newer)
        .expect("parse")
        .regenerate()
        .expect_err("newer");
    assert!(err.to_string().contains("made by generator"), "{err}");
    let err = SeedFile::parse("not json\n1 abc\n").expect_err("no header");
    assert!(err.to_string().contains("not a seed file"), "{err}");
}

#[test]
fn solutions_ship_apart_inline_or_not_at_all() {
    let dir = tempfile::tempdir().expect("tempdir");
    let apart = run_pack(&dir.path().join("apart"), &job(""), 1);
    let levels = parquet_levels(&apart);
    for tier in 1..=4u32 {
        let name = format!("tier-{tier:02}.txt");
        let text = read(&apart.join("release").join(&name));
        assert!(
            !text.contains("; solution"),
            "no solution in the level file"
        );
        let solutions = read(&apart.join("release/solutions").join(&name));
        let ids: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("; id "))
            .map(|l| l.split(' ').next().unwrap_or_default())
            .collect();
        let listed: Vec<(&str, &str)> = solutions
            .lines()
            .map(|l| l.split_once(' ').expect("`ID SOLUTION`"))
            .collect();
        assert_eq!(ids.len(), listed.len(), "one solution per level");
        for (id, (solved, solution)) in ids.iter().zip(&listed) {
            assert_eq!(id, solved, "in the tier file's order");
            let seed: u64 = id.trim_start_matches("tilt-").parse().expect("seed");
            assert_eq!(*solution, levels[&seed].2, "seed {seed}");
        }
    }
    let sums = read(&apart.join("release/SHA256SUMS"));
    assert!(sums.contains("  solutions/tier-01.txt\n"), "{sums}");
    assert!(sums.contains("  seeds/tier-01.txt\n"), "{sums}");

    let inline = run_pack(
        &dir.path().join("inline"),
        &job("[release]\nsolutions = \"inline\"\n"),
        1,
    );
    let text = read(&inline.join("release/tier-01.txt"));
    assert_eq!(
        text.matches("; solution ").count(),
        text.matches("; id ").count(),
        "a solution above every level"
    );
    assert!(!inline.join("release/solutions").exists());

    let none = run_pack(
        &dir.path().join("none"),
        &job("[release]\nsolutions = \"none\"\n"),
        1,
    );
    assert!(!read(&none.join("release/tier-01.txt")).contains("; solution"));
    assert!(!none.join("release/solutions").exists());
    assert!(!read(&none.join("release/SHA256SUMS")).contains("solutions/"));
    // The levels are the same whatever ships with them.
    assert!(parquet_levels(&none) == levels);
}

/// The level files' ids in order, read from a text release file.
fn text_ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("; id "))
        .map(|l| l.split_whitespace().next().expect("an id").to_string())
        .collect()
}

/// `[release] levels_per_file`: each tier cut into files of that many levels,
/// the ids in the one-file order, each solutions file beside its level file.
#[test]
fn a_tier_is_cut_into_files_of_levels_per_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let whole = run_pack(&dir.path().join("whole"), &job(""), 1);
    let cut = run_pack(
        &dir.path().join("cut"),
        &job("[release]\nlevels_per_file = 7\n"),
        1,
    );
    let sums = read(&cut.join("release/SHA256SUMS"));
    let mut overall = 0;
    for tier in 1..=4u32 {
        let expected = text_ids(&read(&whole.join(format!("release/tier-{tier:02}.txt"))));
        assert!(!cut.join(format!("release/tier-{tier:02}.txt")).exists());
        let (mut ids, mut file) = (Vec::new(), 0);
        while let Ok(text) =
            std::fs::read_to_string(cut.join(format!("release/tier-{tier:02}-{file:05}.txt")))
        {
            let here = text_ids(&text);
            assert!(
                !here.is_empty() && here.len() <= 7,
                "tier {tier} file {file}"
            );
            assert!(
                text.starts_with(&format!(
                    "; pack e2e game tilt tier {tier:02} file {file}: {} of its {} levels",
                    here.len(),
                    expected.len()
                )),
                "{text}"
            );
            assert!(text.contains("; level 1\n"), "numbered within the file");
            // Each level's rank in its tier and in the release run on across files.
            for (i, id) in here.iter().enumerate() {
                let rank = ids.len() + i + 1;
                overall += 1;
                assert!(
                    text.contains(&format!("; id {id} "))
                        && text.contains(&format!(
                            " tier {tier} rank {rank} overall {overall} difficulty"
                        )),
                    "tier {tier} file {file}: {id} is rank {rank}, overall {overall}: {text}"
                );
            }
            let solutions =
                read(&cut.join(format!("release/solutions/tier-{tier:02}-{file:05}.txt")));
            let solved: Vec<&str> = solutions
                .lines()
                .map(|l| l.split(' ').next().expect("id"))
                .collect();
            assert_eq!(
                solved, here,
                "tier {tier} file {file}: its solutions beside it"
            );
            assert!(
                sums.contains(&format!("  tier-{tier:02}-{file:05}.txt\n")),
                "{sums}"
            );
            // Its seed file beside it, cut the same way.
            let seeds = read(&cut.join(format!("release/seeds/tier-{tier:02}-{file:05}.txt")));
            let header: serde_json::Value =
                serde_json::from_str(seeds.lines().next().expect("a header")).expect("json");
            assert_eq!(header["levels"], here.len(), "{seeds}");
            let seeded: Vec<String> = seeds
                .lines()
                .skip(1)
                .map(|l| {
                    let seed: u64 = l.split(' ').next().expect("seed").parse().expect("a seed");
                    format!("tilt-{seed:020}")
                })
                .collect();
            assert_eq!(seeded, here, "tier {tier} file {file}: its seeds beside it");
            ids.extend(here);
            file += 1;
        }
        assert_eq!(
            ids, expected,
            "tier {tier}: the same levels in the same order"
        );
        assert_eq!(file as usize, expected.len().div_ceil(7));
    }
    let verified = crate::common::pregen_stdout(&["analysis", "verify"], &cut);
    assert!(verified.starts_with("200 levels"), "{verified}");
    let released = crate::common::pregen_stdout(&["release", "verify"], &cut);
    assert!(released.contains("200 regenerated"), "{released}");
    assert!(!cut.join("release/seeds/tier-01.txt").exists());
    // Every campaign in one file, each level under its campaign and place.
    let campaigns = read(&cut.join("release/campaigns.txt"));
    assert_eq!(campaigns.matches("; campaign ").count(), 200, "{campaigns}");
    assert!(campaigns.contains("\n; campaign 20 position 10\n; id tilt-"));
    assert!(!cut.join("release/campaigns").exists());
    let refused = crate::common::pregen()
        .args(["run", "--no-progress", "--out"])
        .arg(dir.path().join("huge"))
        .arg(crate::common::write_job(
            &dir.path().join("huge-job"),
            &job("[release]\nlevels_per_file = 1000000000\n"),
        ))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("release.levels_per_file"),
        "{stderr}"
    );
}

/// `[release] format = "jsonl"`: one JSON object a level, read by Python's
/// json module and by Chromium's JSON.parse as a client would, every field
/// the pack's own.
#[test]
fn jsonl_release_files_are_read_by_python_and_chromium() {
    if !needs(&[PYTHON, Need::Chromium]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(
        &dir.path().join("jsonl"),
        &job("[release]\nformat = \"jsonl\"\nlevels_per_file = 50\n[campaigns]\nlength = 5\n"),
        1,
    );
    let levels = parquet_levels(&pack);
    assert!(!pack.join("release/tier-01.txt").exists());
    assert!(
        !pack.join("release/solutions").exists(),
        "solutions are in the lines"
    );
    // Python's json: every line an object whose fields are the pack's.
    let script = r#"
import hashlib, json, pathlib, sys
out = {}
for path in sorted(pathlib.Path(sys.argv[1]).glob("tier-*.jsonl")):
    for line in path.read_text().splitlines():
        level = json.loads(line)
        assert hashlib.sha256(level["level_json"].encode()).hexdigest() == level["level_hash"]
        json.loads(level["level_json"])
        out[level["seed"]] = [level["tier"], level["level_hash"], level["solution"], level["id"], path.name]
for path in sorted(pathlib.Path(sys.argv[1]).glob("campaigns/*.jsonl")):
    for line in path.read_text().splitlines():
        level = json.loads(line)
        assert out[level["seed"]][1] == level["level_hash"]
print(json.dumps(out))
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(pack.join("release"))
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read_back: BTreeMap<String, (u32, String, String, String, String)> =
        serde_json::from_slice(&out.stdout).expect("python's answer");
    assert_eq!(read_back.len(), levels.len());
    for (seed, (tier, hash, solution, id, file)) in &read_back {
        let seed: u64 = seed.parse().expect("seed");
        assert_eq!(
            (tier, hash, solution),
            (&levels[&seed].0, &levels[&seed].1, &levels[&seed].2)
        );
        assert_eq!(id, &format!("tilt-{seed:020}"));
        assert!(file.starts_with(&format!("tier-{tier:02}-")), "{file}");
    }
    // Chromium's JSON.parse, on a page that reads a file as a web game would.
    let release = pack.join("release");
    let page = release.join("read.html");
    std::fs::write(
        &page,
        "<!doctype html><html><body><pre id=\"out\"></pre><script>\n\
         const x = new XMLHttpRequest();\n\
         x.open('GET', 'tier-01-00000.jsonl', false);\n\
         x.send();\n\
         const levels = x.responseText.trim().split('\\n').map(JSON.parse);\n\
         const seen = levels.map(l => [l.seed, l.tier, l.level_hash, JSON.parse(l.level_json).width].join(' '));\n\
         document.getElementById('out').textContent = 'read ' + levels.length + '\\n' + seen.join('\\n');\n\
         </script></body></html>\n",
    )
    .expect("page");
    let shown = crate::common::browser::page_dom(
        &dir.path().join("chromium"),
        &page,
        &["--allow-file-access-from-files"],
    );
    let dom = String::from_utf8_lossy(&shown.stdout);
    let first = read(&release.join("tier-01-00000.jsonl"));
    let count = first.lines().count();
    assert!(dom.contains(&format!("read {count}\n")), "{dom}");
    for line in first.lines() {
        let level: serde_json::Value = serde_json::from_str(line).expect("a line");
        let seed = level["seed"].as_u64().expect("seed");
        let json: serde_json::Value =
            serde_json::from_str(level["level_json"].as_str().expect("text")).expect("json");
        let shown_line = format!("{seed} 1 {} {}", levels[&seed].1, json["width"]);
        assert!(dom.contains(&shown_line), "{shown_line} in {dom}");
    }
}

/// `pregen release verify PATH`.
fn release_verify(path: &Path) -> std::process::Output {
    crate::common::pregen()
        .args(["release", "verify"])
        .arg(path)
        .output()
        .expect("pregen")
}

/// Replaces, in the text level file at `path`, the first level's text with
/// the second's: a real level, but not the one its seed makes.
fn swap_first_level(path: &Path) {
    let text = read(path);
    let mut blocks: Vec<String> = text.split("\n\n").map(str::to_string).collect();
    let layout = |b: &str| -> String {
        b.lines()
            .filter(|l| !l.starts_with(';'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // blocks[0] is the file's header.
    let (first, second) = (layout(&blocks[1]), layout(&blocks[2]));
    assert_ne!(first, second, "{}", path.display());
    blocks[1] = blocks[1].replace(&first, &second);
    std::fs::write(path, blocks.join("\n\n")).expect("write");
}

/// A copy of `pack` at `to`, as a forger's starting point.
fn copy_pack(pack: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(pack)
        .arg(to)
        .status()
        .expect("cp");
    assert!(status.success());
}

/// Writes `release/SHA256SUMS` anew for the files it lists, as a forger
/// who changes a file would.
fn resum(pack: &Path) {
    let sums_path = pack.join("release/SHA256SUMS");
    let sums: String = read(&sums_path)
        .lines()
        .map(|line| {
            let (_, name) = line.split_once("  ").expect("a sum line");
            let bytes = std::fs::read(pack.join("release").join(name)).expect("listed file");
            let sum = pregen_games::sha256_hex(&bytes);
            format!("{sum}  {name}\n")
        })
        .collect();
    std::fs::write(&sums_path, sums).expect("sums");
}

/// `pregen release verify` on a pack folder, its archive and the archive
/// unpacked: all pass; then each forgery is named, with a non-zero exit,
/// whether or not the forger wrote the checksums anew.
#[test]
fn release_verify_checks_a_release_with_the_binary_alone() {
    use crate::common::pregen;
    let dir = tempfile::tempdir().expect("tempdir");
    let verify = release_verify;
    let passes = |path: &Path| {
        let out = verify(path);
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let pack = run_pack(
        &dir.path().join("text"),
        &job("[campaigns]\nlength = 5\n"),
        1,
    );
    let said = passes(&pack);
    assert!(said.contains("200 regenerated from their seeds"), "{said}");
    let archive = dir.path().join("e2e.tar.zst");
    let out = pregen()
        .arg("archive")
        .arg(&pack)
        .arg("-o")
        .arg(&archive)
        .output()
        .expect("archive");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    passes(&archive);
    let unpacked = dir.path().join("unpacked");
    std::fs::create_dir_all(&unpacked).expect("dir");
    let status = std::process::Command::new("tar")
        .args(["--zstd", "-xf"])
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .expect("tar");
    assert!(status.success());
    passes(&unpacked.join("e2e"));
    passes(&run_pack(
        &dir.path().join("jsonl"),
        &job("[release]\nformat = \"jsonl\"\nlevels_per_file = 30\n"),
        1,
    ));

    // Forgeries, each in a copy of the unpacked archive.
    let forged = |name: &str, forge: &dyn Fn(&Path), says: &[&str]| {
        let copy = dir.path().join(name);
        copy_pack(&unpacked.join("e2e"), &copy);
        forge(&copy);
        let out = verify(&copy);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        for said in says {
            assert!(stderr.contains(said), "{name}: `{said}` in {stderr}");
        }
    };
    forged(
        "stray",
        &|p| std::fs::write(p.join("release/extra.txt"), "x").expect("write"),
        &["extra.txt: is not listed in SHA256SUMS"],
    );
    forged(
        "flipped",
        &|p| {
            let path = p.join("release/tier-01.txt");
            std::fs::write(&path, read(&path).replacen("moves", "moves ", 1)).expect("write");
        },
        &["tier-01.txt: its SHA-256 is not the one SHA256SUMS lists"],
    );
    forged(
        "solution",
        &|p| {
            let path = p.join("release/solutions/tier-02.txt");
            let text = read(&path);
            let first = text.lines().next().expect("a line").to_string();
            let (id, _) = first.split_once(' ').expect("id");
            std::fs::write(&path, text.replacen(&first, &format!("{id} U"), 1)).expect("write");
            resum(p);
        },
        &[
            "SHA256SUMS: its SHA-256 is not the manifest's",
            "tier-02.txt: tilt-",
            "the solution does not win",
        ],
    );
    forged(
        "seed",
        &|p| {
            let path = p.join("release/seeds/tier-03.txt");
            let text = read(&path);
            let line = text.lines().nth(1).expect("a level").to_string();
            let (seed, _) = line.split_once(' ').expect("seed");
            std::fs::write(
                &path,
                text.replacen(&line, &format!("{seed} {}", "0".repeat(64)), 1),
            )
            .expect("write");
            resum(p);
        },
        &[
            "seeds/tier-03.txt: cannot regenerate: seed",
            "the file lists 0000",
        ],
    );
    forged(
        "rank",
        &|p| {
            let path = p.join("release/tier-02.txt");
            let text = read(&path);
            std::fs::write(
                &path,
                text.replacen(" rank 1 overall", " rank 2 overall", 1),
            )
            .expect("write");
            resum(p);
        },
        &["it says rank 2; the seed files put it at 1"],
    );
    forged(
        "swapped",
        &|p| {
            swap_first_level(&p.join("release/tier-01.txt"));
            resum(p);
        },
        &["it is not the level seed"],
    );
    let out = verify(&dir.path().join("nowhere"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a release"));
}

/// `pregen release verify` passes every release form of every game, as a
/// folder and as an archive: text with solutions apart, text with solutions
/// inline cut into files of 5 levels, JSON Lines cut alike. In each game's
/// text release a level swapped for another real level of the pack is
/// still refused, and so is a JSON Lines line that carries another level.
/// (Sokoban and doors levels once carried their generator's figures in
/// their JSON, which their text form cannot hold: every text level failed.)
#[test]
fn release_verify_passes_every_form_of_every_game() {
    use crate::common::pregen;
    let dir = tempfile::tempdir().expect("tempdir");
    let verify = release_verify;
    let forms = [
        ("apart", ""),
        (
            "inline",
            "[release]\nsolutions = \"inline\"\nlevels_per_file = 5\n",
        ),
        (
            "jsonl",
            "[release]\nformat = \"jsonl\"\nlevels_per_file = 5\n",
        ),
    ];
    for game in ["tilt", "sokoban", "cube", "doors", "dungeon"] {
        for (form, release) in forms {
            let root = dir.path().join(format!("{game}-{form}"));
            let job = format!(
                "pack = \"e2e\"\ngame = \"{game}\"\ncount = 12\nseeds_per_lease = 4\n\
                 [tiers]\nscheme = \"equal\"\ncount = 2\n[campaigns]\nlength = 2\n{release}"
            );
            let pack = run_pack(&root, &job, 1);
            let archive = root.join("e2e.tar.zst");
            let out = pregen()
                .arg("archive")
                .arg(&pack)
                .arg("-o")
                .arg(&archive)
                .output()
                .expect("archive");
            assert!(out.status.success(), "{game} {form}: {out:?}");
            for path in [&pack, &archive] {
                let out = verify(path);
                let said = String::from_utf8_lossy(&out.stdout);
                assert!(
                    out.status.success(),
                    "{game} {form} {}: {}{said}",
                    path.display(),
                    String::from_utf8_lossy(&out.stderr),
                );
                assert!(said.contains("12 regenerated from their seeds"), "{said}");
            }
            let refused = |forge: &dyn Fn(&Path)| {
                let copy = root.join("forged");
                copy_pack(&pack, &copy);
                forge(&copy);
                resum(&copy);
                let out = verify(&copy);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{game} {form}: {stderr}");
                assert!(
                    stderr.contains("it is not the level seed"),
                    "{game} {form}: {stderr}"
                );
            };
            match form {
                "apart" => refused(&|p| swap_first_level(&p.join("release/tier-01.txt"))),
                "jsonl" => refused(&|p| {
                    // The first line's level (JSON, hash and text) is the second's.
                    let path = p.join("release/tier-01-00000.jsonl");
                    let text = read(&path);
                    let mut lines: Vec<serde_json::Value> = text
                        .lines()
                        .map(|l| serde_json::from_str(l).expect("a JSON line"))
                        .collect();
                    for key in ["level_json", "level_hash", "text"] {
                        lines[0][key] = lines[1][key].clone();
                    }
                    let lines: Vec<String> = lines.iter().map(|l| l.to_string() + "\n").collect();
                    std::fs::write(&path, lines.concat()).expect("write");
                }),
                _ => {}
            }
        }
    }
}

/// Writes the manifest's sum of `release/SHA256SUMS` anew, as a forger who
/// rewrites a release consistently would.
fn resum_manifest(pack: &Path) {
    let path = pack.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_str(&read(&path)).expect("manifest");
    let sums = std::fs::read(pack.join("release/SHA256SUMS")).expect("sums");
    manifest["files"]["release/SHA256SUMS"] = pregen_games::sha256_hex(&sums).into();
    std::fs::write(&path, manifest.to_string()).expect("manifest");
}

/// A forgery of a release: its name, what it does to a copy, and what
/// `release verify` must say of it.
type Forgery<'a> = (&'static str, Box<dyn Fn(&Path) + 'a>, &'static str);

/// `release verify` accounts for every level of a release
/// rewritten consistently (sums and manifest included): a forged
/// difficulty, tier or move count, a level of no seed file, a block with no
/// id, a removed or doubled level, a link where a file should be, and an
/// archive holding a link are each named; none passes.
#[test]
fn release_verify_accounts_for_every_level() {
    use crate::common::pregen;
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(
        &dir.path().join("pack"),
        &job("[campaigns]\nlength = 5\n"),
        1,
    );
    let verify = |path: &Path| {
        let out = pregen()
            .args(["release", "verify"])
            .arg(path)
            .output()
            .expect("pregen");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(verify(&pack).0, Some(0), "{}", verify(&pack).1);
    let edit = |p: &Path, name: &str, change: &dyn Fn(String) -> String| {
        let path = p.join("release").join(name);
        std::fs::write(&path, change(read(&path))).expect("write");
    };
    let first_header = |text: &str| -> String {
        text.lines()
            .find(|l| l.starts_with("; id "))
            .expect("a level")
            .to_string()
    };
    let cases: Vec<Forgery> = vec![
        (
            "difficulty",
            Box::new(|p: &Path| {
                edit(p, "tier-02.txt", &|t| {
                    let h = first_header(&t);
                    let (head, rest) = h.split_once(" difficulty ").expect("difficulty");
                    let (_, tail) = rest.split_once(' ').expect("after");
                    t.replacen(&h, &format!("{head} difficulty 0.5 {tail}"), 1)
                })
            }),
            "it says difficulty 0.5",
        ),
        (
            "tier",
            Box::new(|p: &Path| {
                edit(p, "tier-02.txt", &|t| {
                    let h = first_header(&t);
                    t.replacen(&h, &h.replace(" tier 2 ", " tier 3 "), 1)
                })
            }),
            "its seed file puts it in tier 2",
        ),
        (
            "moves",
            Box::new(|p: &Path| {
                edit(p, "tier-03.txt", &|t| {
                    let h = first_header(&t);
                    let (head, _) = h.rsplit_once(" moves ").expect("moves");
                    t.replacen(&h, &format!("{head} moves 99"), 1)
                })
            }),
            "it says 99 moves",
        ),
        (
            "stranger",
            Box::new(|p: &Path| {
                edit(p, "tier-04.txt", &|t| {
                    let block = t.split("\n\n").nth(1).expect("a level").to_string();
                    let h = first_header(&block);
                    let rest = h
                        .split(" seed ")
                        .nth(1)
                        .and_then(|r| r.split_once(' '))
                        .expect("seed")
                        .1;
                    let forged = format!("; id tilt-{:020} seed 987654321 {rest}", 987654321);
                    format!("{t}{}\n\n", block.replace(&h, &forged))
                })
            }),
            "seed 987654321 is in no seed file",
        ),
        (
            "no id",
            Box::new(|p: &Path| {
                edit(p, "tier-04.txt", &|t| {
                    let block = t.split("\n\n").nth(1).expect("a level").to_string();
                    let bare: Vec<&str> = block.lines().filter(|l| !l.starts_with(';')).collect();
                    format!("{t}{}\n\n", bare.join("\n"))
                })
            }),
            "a level with no `; id` line",
        ),
        (
            "removed",
            Box::new(|p: &Path| {
                edit(p, "tier-01.txt", &|t| {
                    let block = t.split("\n\n").nth(1).expect("a level").to_string();
                    t.replacen(&format!("{block}\n\n"), "", 1)
                });
                edit(p, "seeds/tier-01.txt", &|t| {
                    let mut lines: Vec<&str> = t.lines().collect();
                    lines.remove(1);
                    let mut header: serde_json::Value =
                        serde_json::from_str(lines[0]).expect("header");
                    header["levels"] = (header["levels"].as_u64().expect("levels") - 1).into();
                    let header = header.to_string();
                    lines[0] = &header;
                    lines.join("\n") + "\n"
                });
            }),
            "the manifest counts",
        ),
        (
            "doubled",
            Box::new(|p: &Path| {
                edit(p, "tier-02.txt", &|t| {
                    let block = t.split("\n\n").nth(1).expect("a level").to_string();
                    format!("{t}{block}\n\n")
                })
            }),
            "times",
        ),
        (
            "campaign",
            Box::new(|p: &Path| {
                // Two levels of a campaign change places (a ramp reversed).
                edit(p, "campaigns.txt", &|t| {
                    let blocks: Vec<&str> = t.split("\n\n").collect();
                    let mut swapped: Vec<&str> = blocks.clone();
                    swapped.swap(1, 2);
                    swapped.join("\n\n")
                })
            }),
            "campaign 1: it is not the campaign the job draws: position 1",
        ),
        (
            "link",
            Box::new(|p: &Path| {
                let evil = p.join("release/evil.txt");
                std::os::unix::fs::symlink("/dev/zero", &evil).expect("link");
                let sums = p.join("release/SHA256SUMS");
                let text = read(&sums) + &format!("{}  evil.txt\n", "0".repeat(64));
                std::fs::write(&sums, text).expect("sums");
                std::os::unix::fs::symlink("/", p.join("release/root")).expect("link");
            }),
            "evil.txt: is not a regular file",
        ),
    ];
    for (name, forge, says) in cases {
        let copy = dir.path().join(name.replace(' ', "-"));
        copy_pack(&pack, &copy);
        forge(&copy);
        if name != "link" {
            resum(&copy);
        }
        // The manifest names the sums as the forger wrote them (the link's
        // line kept as written).
        resum_manifest(&copy);
        let (code, stderr) = verify(&copy);
        assert_eq!(code, Some(1), "{name}: passed: {stderr}");
        assert!(stderr.contains(says), "{name}: `{says}` not in {stderr}");
    }

    // An archive holding a link is refused before anything is read through it.
    let staged = dir.path().join("staged");
    std::fs::create_dir_all(&staged).expect("dir");
    copy_pack(&pack, &staged.join("e2e"));
    std::os::unix::fs::symlink("/dev/zero", staged.join("e2e/release/zero.txt")).expect("link");
    let archive = tar_zst(&staged, &dir.path().join("evil.tar.zst"));
    let (code, stderr) = verify(&archive);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("Symlink entry"), "{stderr}");

    // A zstd bomb: 400 MB of zeros in a few kilobytes, listed in the sums. It
    // is refused at the read bound, and nothing is written to disk.
    std::fs::remove_file(staged.join("e2e/release/zero.txt")).expect("rm");
    let zeros = std::fs::File::create(staged.join("e2e/release/zeros.txt")).expect("create");
    zeros.set_len(400 << 20).expect("size");
    drop(zeros);
    let bomb = tar_zst(&staged, &dir.path().join("bomb.tar.zst"));
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let out = pregen()
        .args(["release", "verify"])
        .arg(&bomb)
        .env("TMPDIR", &tmp)
        .output()
        .expect("pregen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("1000 times its size: refused"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&tmp).expect("tmp").count(),
        0,
        "verify wrote to TMPDIR"
    );
}

/// `staged/e2e` packed by GNU tar into the `.tar.zst` at `archive`, as a
/// hand-made release would be.
fn tar_zst(staged: &Path, archive: &Path) -> std::path::PathBuf {
    let status = std::process::Command::new("tar")
        .args(["--zstd", "-cf"])
        .arg(archive)
        .arg("-C")
        .arg(staged)
        .arg("e2e")
        .status()
        .expect("tar");
    assert!(status.success());
    archive.to_path_buf()
}

/// `release verify` on every core finds what it finds on one, in the same
/// order; `--sums-only` checks the checksums alone; `--sample N` checks
/// about N levels, the same ones on every run, and says so.
#[test]
fn release_verify_is_the_same_on_any_threads_and_samples_by_id() {
    use crate::common::pregen;
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(
        &dir.path().join("text"),
        &job("[campaigns]\nlength = 5\n"),
        1,
    );
    let verify = |args: &[&str], path: &Path| {
        pregen()
            .args(["release", "verify"])
            .args(args)
            .arg(path)
            .output()
            .expect("pregen")
    };
    let forged = dir.path().join("forged");
    copy_pack(&pack, &forged);
    for tier in ["tier-01.txt", "tier-02.txt", "tier-03.txt"] {
        swap_first_level(&forged.join("release").join(tier));
    }
    resum(&forged);
    let one = verify(&["--threads", "1"], &forged);
    let two = verify(&["--threads", "2"], &forged);
    assert_eq!(one.status.code(), Some(1));
    assert_eq!(two.status.code(), Some(1));
    let said = String::from_utf8_lossy(&one.stderr);
    assert_eq!(
        said.matches("it is not the level seed").count(),
        3,
        "{said}"
    );
    assert_eq!(one.stderr, two.stderr, "one thread and two find the same");

    let sums = verify(&["--sums-only"], &pack);
    assert!(sums.status.success());
    let stdout = String::from_utf8_lossy(&sums.stdout);
    assert!(stdout.contains("checksums only"), "{stdout}");
    // The forger's checksums match their files: only the manifest's sum of
    // SHA256SUMS tells, and a checksums-only check says so.
    let sums = verify(&["--sums-only"], &forged);
    let stderr = String::from_utf8_lossy(&sums.stderr);
    assert!(!sums.status.success(), "{stderr}");
    assert!(
        stderr.contains("SHA256SUMS: its SHA-256 is not the manifest's"),
        "{stderr}"
    );
    assert!(!stderr.contains("it is not the level seed"), "{stderr}");

    let sampled = verify(&["--sample", "20"], &pack);
    let again = verify(&["--sample", "20", "--threads", "1"], &pack);
    assert!(sampled.status.success());
    assert_eq!(sampled.stdout, again.stdout, "the same sample every run");
    let stdout = String::from_utf8_lossy(&sampled.stdout);
    assert!(
        stdout.contains("a sample: the levels whose id's SHA-256"),
        "{stdout}"
    );
    let regenerated: u64 = stdout
        .split("; ")
        .find(|part| part.contains(" regenerated from their seeds"))
        .and_then(|part| part.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a count of regenerated seeds");
    assert!((1..100).contains(&regenerated), "{stdout}");
}

/// `analysis levels` heads each level with the very `; id` line its release
/// file gives it: one header format, ranks included.
#[test]
fn analysis_levels_and_release_files_share_their_headers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job(""), 1);
    let ids = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("; id "))
            .map(str::to_string)
            .collect()
    };
    for tier in ["1", "3"] {
        let listed = crate::common::pregen_stdout(&["analysis", "levels", "--tier", tier], &pack);
        let released = read(&pack.join(format!("release/tier-0{tier}.txt")));
        assert_eq!(ids(&listed), ids(&released), "tier {tier}");
        assert!(!ids(&listed).is_empty());
    }
}

/// An archive entry has one meaning: a release verify reads ustar headers
/// alone, so an entry that a GNU long name names for one reader and a pax
/// `path` for another (GNU tar and Python's `tarfile` read the pax name) is
/// refused, as is any such header however large, unread; a folder that
/// carries data is refused rather than read through.
#[test]
fn an_archive_entry_with_two_names_or_a_folder_with_data_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(&dir.path().join("pack"), &job(""), 1);
    let made = dir.path().join("made.tar.zst");
    let out = crate::common::pregen()
        .arg("archive")
        .arg(&pack)
        .arg("--output")
        .arg(&made)
        .output()
        .expect("pregen archive");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The archive's entries, in order: (header, data).
    let bytes = zstd::decode_all(std::fs::File::open(&made).expect("open")).expect("zstd");
    let mut entries = Vec::new();
    let mut archive = tar::Archive::new(&bytes[..]);
    for entry in archive.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).expect("read");
        entries.push((entry.header().clone(), data));
    }
    let tier = |n: u32| format!("tier-{n:02}.txt");
    // Writes the entries again with `forge` called before each one.
    let forged = |name: &str, forge: &dyn Fn(&mut tar::Builder<Vec<u8>>, &tar::Header)| {
        let mut builder = tar::Builder::new(Vec::new());
        for (header, data) in &entries {
            forge(&mut builder, header);
            builder.append(header, &data[..]).expect("append");
        }
        let tar = builder.into_inner().expect("tar");
        let path = dir.path().join(format!("{name}.tar.zst"));
        std::fs::write(&path, zstd::encode_all(&tar[..], 3).expect("zstd")).expect("write");
        path
    };
    let is = |header: &tar::Header, file: &str| {
        header
            .path()
            .is_ok_and(|p| p.to_string_lossy().ends_with(&format!("release/{file}")))
    };
    let pax = forged("pax", &|builder, header| {
        if is(header, &tier(1)) {
            let other = format!("e2e/release/{}", tier(2));
            builder
                .append_pax_extensions([("path", other.as_bytes())])
                .expect("pax");
        }
    });
    let long = forged("long", &|builder, header| {
        if is(header, &tier(1)) {
            let mut gnu = tar::Header::new_gnu();
            let name = format!("e2e/release/{}", "x".repeat(200));
            gnu.set_entry_type(tar::EntryType::GNULongName);
            gnu.set_size(name.len() as u64 + 1);
            gnu.set_cksum();
            let mut data = name.into_bytes();
            data.push(0);
            builder.append(&gnu, &data[..]).expect("long name");
        }
    });
    let folder = forged("folder", &|builder, header| {
        if is(header, &tier(1)) {
            let mut folder = tar::Header::new_ustar();
            folder.set_path("e2e/release/data/").expect("path");
            folder.set_entry_type(tar::EntryType::Directory);
            folder.set_mode(0o755);
            folder.set_size(1 << 20);
            folder.set_cksum();
            builder
                .append(&folder, &vec![0u8; 1 << 20][..])
                .expect("folder");
        }
    });
    for (archive, says) in [
        (
            &pax,
            "is a XHeader entry: a release holds folders and files alone",
        ),
        (&long, "is a GNULongName entry"),
        (
            &folder,
            "carries 1048576 bytes of data: a folder holds none",
        ),
    ] {
        let out = release_verify(archive);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{}: passed", archive.display());
        assert!(stderr.contains(says), "{}: {stderr}", archive.display());
    }
    let out = release_verify(&made);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
