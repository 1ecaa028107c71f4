//! The repository's guardrails: each test reads the sources or docs and
//! names every place that breaks its rule, with the way to fix it.

use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folders of Rust code the rules cover: every workspace member.
const CODE: &[&str] = &[
    "proto",
    "games",
    "pack",
    "worker",
    "coordinator",
    "analysis",
    "pictures",
    "cli",
    "web",
    "checks/fuzzing",
    "checks/tidy",
];

/// Every `.rs` file below `dir`, build output left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != "target" && name != "node_modules" {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every file of the code the rules cover, with its text and its path
/// below the root.
fn sources() -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    for dir in CODE {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read a source file");
            let name = path
                .strip_prefix(&root)
                .expect("below the root")
                .to_string_lossy()
                .into_owned();
            (name, text)
        })
        .collect()
}

/// The most lines a function may have, counted as clippy's
/// `too_many_lines` counts them: its body's lines that are neither blank
/// nor comments.
const MOST_LINES: usize = 100;

/// Functions longer than [`MOST_LINES`] that predate the rule, with their
/// length when it came: none may grow, and each leaves the list when it is
/// split. A function not listed may not pass the limit.
const LONG_BEFORE: &[(&str, usize)] = &[
    ("cli/benches/pipeline.rs::main", 107),
    ("cli/tests/common/mod.rs::read", 113),
    (
        "cli/tests/hostile.rs::forged_results_are_refused_whole_and_the_pack_is_the_honest_one",
        147,
    ),
    (
        "cli/tests/release.rs::a_tier_is_cut_into_files_of_levels_per_file",
        102,
    ),
    (
        "cli/tests/release.rs::release_verify_checks_a_release_with_the_binary_alone",
        136,
    ),
    (
        "cli/tests/release.rs::release_verify_accounts_for_every_level",
        190,
    ),
    (
        "cli/tests/web.rs::a_seed_only_release_is_rebuilt_and_played_in_chromium",
        103,
    ),
    ("games/src/doors/layout.rs::read_back", 118),
    ("games/src/doors/mcts.rs::run", 101),
    ("games/src/dungeon/solve.rs::analyse", 110),
    (
        "games/src/tilt/tests.rs::analysis_agrees_with_a_plain_search_under_the_literal_rules",
        125,
    ),
];

/// Each function's name, first line and length, in one file.
struct Lengths<'a> {
    lines: Vec<&'a str>,
    found: Vec<(String, usize, usize)>,
}

impl Lengths<'_> {
    fn body(&mut self, name: String, body: &syn::Block) {
        let braces = body.brace_token.span;
        let (start, end) = (braces.open().start().line, braces.close().end().line);
        let counted = self.lines[start.saturating_sub(1)..end.min(self.lines.len())]
            .iter()
            .map(|line| line.trim())
            .filter(|line| !line.is_empty() && !line.starts_with("//"))
            .count();
        self.found.push((name, start, counted));
    }
}

impl<'ast> Visit<'ast> for Lengths<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.body(f.sig.ident.to_string(), &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.body(f.sig.ident.to_string(), &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = &f.default {
            self.body(f.sig.ident.to_string(), body);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// No function passes [`MOST_LINES`] lines, but those listed in
/// [`LONG_BEFORE`], which may not grow.
#[test]
fn no_function_passes_a_hundred_lines() {
    let mut over = Vec::new();
    let mut long = Vec::new();
    for (name, text) in sources() {
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut lengths = Lengths {
            lines: text.lines().collect(),
            found: Vec::new(),
        };
        lengths.visit_file(&file);
        for (function, line, counted) in lengths.found {
            let key = format!("{name}::{function}");
            if counted > MOST_LINES {
                long.push(key.clone());
            }
            let allowed = LONG_BEFORE
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(MOST_LINES, |(_, n)| *n);
            if counted > allowed {
                over.push(format!(
                    "{name}:{line} `{function}`: {counted} lines (at most {allowed})"
                ));
            }
        }
    }
    assert!(
        over.is_empty(),
        "functions over their limit; split them into steps with names of their own:\n{}",
        over.join("\n")
    );
    let stale: Vec<&str> = LONG_BEFORE
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !long.iter().any(|l| l == key))
        .collect();
    assert!(
        stale.is_empty(),
        "listed as long but no longer over {MOST_LINES} lines (or gone): take them off \
         LONG_BEFORE:\n{}",
        stale.join("\n")
    );
}

/// Whether a type is `Result<_, String>`.
fn is_result_of_string(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    let error = args.args.iter().nth(1);
    last.ident == "Result"
        && matches!(error, Some(syn::GenericArgument::Type(syn::Type::Path(e)))
            if e.path.is_ident("String"))
}

/// The signatures of one file that return `Result<_, String>`.
struct StringErrors(Vec<String>);

impl<'ast> Visit<'ast> for StringErrors {
    fn visit_signature(&mut self, sig: &'ast syn::Signature) {
        if let syn::ReturnType::Type(_, ty) = &sig.output
            && is_result_of_string(ty)
        {
            self.0
                .push(format!("{}:{}", sig.ident, sig.ident.span().start().line));
        }
        syn::visit::visit_signature(self, sig);
    }
}

/// The edges where an error is only ever words for a person: the command
/// line's and the browser's.
const WORDS_ONLY: &[&str] = &["cli/", "web/"];

/// The most `Result<_, String>` signatures allowed beyond those edges:
/// lowered as each gets a typed error, down to 10 (the game programs'
/// driver, whose errors are a program's own words).
const MOST_STRING_ERRORS: usize = 28;

/// Errors inside the product are typed (`thiserror` enums a caller can
/// match); `Result<_, String>` stays at the edges.
#[test]
fn string_errors_stay_at_the_edges() {
    let mut found = Vec::new();
    for (name, text) in sources() {
        if WORDS_ONLY.iter().any(|edge| name.starts_with(edge)) || name.contains("/tests") {
            continue;
        }
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut errors = StringErrors(Vec::new());
        errors.visit_file(&file);
        found.extend(errors.0.into_iter().map(|at| format!("{name}: {at}")));
    }
    assert!(
        found.len() <= MOST_STRING_ERRORS,
        "{} signatures return `Result<_, String>` outside the command line and the browser \
         (at most {MOST_STRING_ERRORS}); give them a typed error:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The docs with a word budget, and the budget: a game's doc and the scale
/// doc are references, read whole; history lives in commit messages.
const BUDGETS: &[(&str, usize)] = &[
    ("docs/tilt.md", 3000),
    ("docs/sokoban.md", 3000),
    ("docs/cube.md", 3000),
    ("docs/doors.md", 3000),
    ("docs/dungeon.md", 3000),
    ("docs/scale.md", 3000),
];

#[test]
fn docs_keep_their_word_budgets() {
    let over: Vec<String> = BUDGETS
        .iter()
        .filter_map(|(doc, budget)| {
            let text = std::fs::read_to_string(root().join(doc)).expect("read a doc");
            let words = text.split_whitespace().count();
            (words >= *budget).then(|| format!("{doc}: {words} words (under {budget})"))
        })
        .collect();
    assert!(
        over.is_empty(),
        "docs over their budgets; keep today's figures and decisions, cut the history:\n{}",
        over.join("\n")
    );
}

/// The repository paths ARCHITECTURE.md names in backquotes: words with a
/// `/` or a file's extension, with no placeholder or glob in them.
fn named_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (i, quoted) in text.split('`').enumerate() {
        if i % 2 == 0 || quoted.contains(char::is_whitespace) {
            continue;
        }
        let is_path = quoted.contains('/')
            || [
                ".rs", ".md", ".toml", ".proto", ".py", ".js", ".sh", ".yaml",
            ]
            .iter()
            .any(|ext| quoted.ends_with(ext));
        let placeholder = quoted
            .chars()
            .any(|c| matches!(c, '<' | '>' | '*' | '{' | '}' | '$' | ':' | '='))
            || quoted.starts_with("..")
            || quoted.starts_with('/')
            || quoted.starts_with("http");
        if is_path && !placeholder {
            paths.push(quoted.trim_end_matches(['.', ',']).to_string());
        }
    }
    paths
}

/// Every file of the repository, build output and history left out, as
/// paths below the root.
fn repository_files(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == ".git" || name == "node_modules" {
            continue;
        }
        if let Ok(below) = path.strip_prefix(root) {
            out.push(below.to_string_lossy().into_owned());
        }
        if path.is_dir() {
            repository_files(&path, root, out);
        }
    }
}

/// Every repository path ARCHITECTURE.md names exists: one that starts at
/// a top-level folder exists there; a file named from inside its folder
/// (`scheduler/checks.rs`, `python/pregen_game.py`) exists below some
/// folder. Names of a pack's own layout (`levels/`, `commit/LOCK`) are
/// not the repository's and are left alone.
#[test]
fn architecture_names_only_paths_that_exist() {
    let root = root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut all = Vec::new();
    repository_files(&root, &root, &mut all);
    let top: Vec<&str> = all
        .iter()
        .filter(|p| !p.contains('/'))
        .map(String::as_str)
        .collect();
    let missing: Vec<String> = named_paths(&text)
        .into_iter()
        .filter(|path| {
            let trimmed = path.trim_end_matches('/');
            let first = trimmed.split('/').next().unwrap_or(trimmed);
            if trimmed.contains('/') && top.contains(&first) {
                return !root.join(trimmed).exists();
            }
            let is_file = [".rs", ".proto", ".py", ".js", ".sh", ".toml", ".yaml"]
                .iter()
                .any(|ext| trimmed.ends_with(ext));
            is_file
                && !all
                    .iter()
                    .any(|file| file == trimmed || file.ends_with(&format!("/{trimmed}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist:\n{}",
        missing.join("\n")
    );
}
