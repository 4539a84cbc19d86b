//! Integration tests of the Vine primitives on real copies of the fixture
//! forest (real files, real SQLite, real git).

use std::path::{Path, PathBuf};
use std::process::Command;

use forest_vine::{Vine, VineOptions};
use serde_json::{json, Map, Value};

#[path = "forest_vine/access.rs"]
mod access;
#[path = "forest_vine/budgets.rs"]
mod budgets;
#[path = "forest_vine/hostile.rs"]
mod hostile;
#[path = "forest_vine/reads.rs"]
mod reads;
#[path = "forest_vine/sessions.rs"]
mod sessions;
#[path = "forest_vine/sql.rs"]
mod sql;
#[path = "forest_vine/sweep.rs"]
mod sweep;
#[path = "forest_vine/tools.rs"]
mod tools;
#[path = "forest_vine/writes.rs"]
mod writes;

pub fn fixtures() -> PathBuf {
    if let Ok(p) = std::env::var("FOREST_FIXTURES") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures")
}

fn copy_dir(src: &Path, dst: &Path) {
    for e in walkdir::WalkDir::new(src) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(src).unwrap();
        let to = dst.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

pub fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(root).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A git-initialised copy of a fixture forest (only `.md` tracked).
pub fn forest_copy(dir: &Path, name: &str) -> PathBuf {
    let root = dir.join(name);
    copy_dir(&fixtures().join(name), &root);
    std::fs::write(root.join(".gitignore"), "_derived/\n*.db\n.vine.lock\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A", "."]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init: fixture"]);
    root
}

pub fn open(root: &Path, writable: bool) -> Vine {
    Vine::open(root, VineOptions { writable, session: None }).unwrap()
}

pub fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

pub fn call(v: &mut Vine, prim: &str, a: Value) -> Value {
    match v.call(prim, &args(a.clone())) {
        Ok(x) => x,
        Err(e) => panic!("{prim}({a}) failed: {e:?}"),
    }
}

pub fn err(v: &mut Vine, prim: &str, a: Value) -> forest_vine::VineError {
    match v.call(prim, &args(a.clone())) {
        Ok(x) => panic!("{prim}({a}) should fail, got {x}"),
        Err(e) => e,
    }
}

#[test]
fn opens_and_counts_the_fixture() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let v = open(&root, false);
    assert_eq!(v.catalog().count_nodes().unwrap(), 82);
    assert!(!v.writable());
    let _ = json!(null);
}
