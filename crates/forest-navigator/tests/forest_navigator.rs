//! Integration tests of forest-navigator on a copy of the fixture forest:
//! the loop against a scripted OpenAI-compatible server (fault injection
//! only) and, when FOREST_TEST_LLM_URL is set, the real small model.

#[path = "forest_navigator/faults.rs"]
mod faults;
#[path = "forest_navigator/live.rs"]
mod live;
#[path = "forest_navigator/schema.rs"]
mod schema;
#[allow(dead_code)]
#[path = "../../forest-curator/tests/forest_curator/support.rs"]
mod support;
#[path = "forest_navigator/troop.rs"]
mod troop;

use std::path::{Path, PathBuf};

use forest_navigator::InProcess;
use forest_vine::{Vine, VineOptions};

/// A private copy of the fixture forest (the Vine writes `_derived/`).
pub fn fixture() -> (tempfile::TempDir, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures/fixture-forest");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    for e in walkdir::WalkDir::new(&src).into_iter().filter_map(Result::ok) {
        let rel = e.path().strip_prefix(&src).unwrap();
        if rel.starts_with("_derived") {
            continue;
        }
        let to = root.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    (dir, root)
}

/// The forest in process, read-only; `learn` closes sessions.
pub fn forest(root: &Path, learn: bool) -> InProcess {
    let vine = Vine::open(root, VineOptions { writable: false, session: Some("test-hunt".into()) }).unwrap();
    InProcess { vine, learn }
}
