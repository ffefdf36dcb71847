//! Golden tests of configuration errors: every `tests/fixtures/bad-configs/<name>.yaml` is loaded
//! and its rendered errors (`FILE:LINE: path: message`, one a line, as `warrant validate` prints
//! them) must equal `<name>.expected` byte for byte. `WARRANT_BLESS=1` rewrites the `.expected`
//! files instead, so a change of wording shows up in review as a diff of the goldens.
//!
//! Files are named relative to the repository root (`tests/fixtures/bad-configs/x.yaml`) so the
//! goldens do not depend on where the checkout lives.

use std::path::{Path, PathBuf};
use std::process::Command;

const DIR: &str = "tests/fixtures/bad-configs";

/// One fixture: its name relative to the repository root and its absolute path.
struct Fixture {
    name: String,
    path: PathBuf,
}

impl Fixture {
    fn expected_path(&self) -> PathBuf {
        self.path.with_extension("expected")
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bless() -> bool {
    std::env::var_os("WARRANT_BLESS").is_some_and(|v| v == "1")
}

/// Every `*.yaml` fixture, sorted by name.
fn fixtures() -> Vec<Fixture> {
    let dir = root().join(DIR);
    let mut out: Vec<Fixture> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|path| Fixture {
            name: format!("{DIR}/{}", path.file_name().unwrap().to_string_lossy()),
            path,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The errors as `config::load_file` renders them for a file opened under `f.name`: it reads
/// the bytes and parses them under the name it was given.
fn render(f: &Fixture) -> String {
    let bytes = std::fs::read(&f.path).unwrap_or_else(|e| panic!("{}: {e}", f.name));
    match warrant::config::parse(&f.name, &bytes) {
        Ok(_) => format!("{}: loaded without errors\n", f.name),
        Err(errors) => errors.iter().map(|e| format!("{e}\n")).collect(),
    }
}

/// Expected vs actual in full when they differ.
fn diff(name: &str, expected: &str, actual: &str) -> Option<String> {
    (expected != actual)
        .then(|| format!("--- {name}: expected\n{expected}--- {name}: actual\n{actual}"))
}

#[track_caller]
fn assert_no_diffs(diffs: &[String], total: usize) {
    assert!(
        diffs.is_empty(),
        "{} of {total} fixtures differ from their goldens (WARRANT_BLESS=1 rewrites them):\n\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

fn read_expected(f: &Fixture) -> String {
    let path = f.expected_path();
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        format!(
            "<cannot read {}: {e}; run with WARRANT_BLESS=1>\n",
            path.display()
        )
    })
}

#[test]
fn bad_configs_match_their_goldens() {
    let fixtures = fixtures();
    assert!(
        fixtures.len() >= 25,
        "only {} fixtures in {DIR}",
        fixtures.len()
    );
    let mut diffs = Vec::new();
    for f in &fixtures {
        let actual = render(f);
        if bless() {
            std::fs::write(f.expected_path(), &actual).unwrap();
        } else {
            diffs.extend(diff(&f.name, &read_expected(f), &actual));
        }
    }
    assert_no_diffs(&diffs, fixtures.len());
}

#[test]
fn every_golden_has_its_fixture() {
    let dir = root().join(DIR);
    let orphans: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "expected"))
        .filter(|p| !p.with_extension("yaml").exists())
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        orphans.is_empty(),
        "goldens without a fixture: {orphans:#?}"
    );
}

/// `warrant validate` prints the same lines: run from the repository root on the relative
/// name, it exits 1 and its output is the golden.
#[test]
fn warrant_validate_prints_the_goldens() {
    if bless() {
        return;
    }
    let fixtures = fixtures();
    let mut diffs = Vec::new();
    for f in &fixtures {
        let out = Command::new(env!("CARGO_BIN_EXE_warrant"))
            .args(["validate", &f.name])
            .current_dir(root())
            .output()
            .unwrap();
        let actual = String::from_utf8_lossy(&out.stdout);
        let actual = match out.status.code() {
            Some(1) => actual.into_owned(),
            other => format!("<warrant validate exited with {other:?}>\n{actual}"),
        };
        diffs.extend(diff(&f.name, &read_expected(f), &actual));
    }
    assert_no_diffs(&diffs, fixtures.len());
}
