//! Replays every input the fuzzers kept: the corpora under `checks/fuzz/corpus/`
//! and the crashes once found, under `checks/fuzz/regressions/`. None may panic.

use std::path::{Path, PathBuf};

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_kept_input_is_refused_or_taken_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut replayed = 0;
    for (name, target) in pregen_fuzzing::TARGETS {
        for kind in ["corpus", "regressions"] {
            for input in inputs(&root.join(kind).join(name)) {
                // A fuzzer running beside may have reduced it away meanwhile.
                let Ok(data) = std::fs::read(&input) else {
                    continue;
                };
                let run = std::panic::catch_unwind(|| target(&data));
                assert!(run.is_ok(), "{} panics", input.display());
                replayed += 1;
            }
        }
    }
    assert!(replayed > 0, "no corpus found under {}", root.display());
}
