//! Engine interchange with the reference engine (`vine`, monkeyllm 0.83 from
//! PyPI; `FOREST_TEST_MONKEYLLM` names its venv's bin directory, else these
//! print SKIPPED): a sync by either engine over a forest the other wrote,
//! from an unchanged source, rewrites nothing. Each runs twice: with the
//! stat key as written (the mtime rounding must agree) and after every
//! source file's mtime moved with its bytes unchanged (the content hash
//! must be one the other engine compares).

use super::snapshot::{mixed_source, ok, reference_bin, vine};
use super::*;
use std::time::{Duration, UNIX_EPOCH};

/// Sub-millisecond mtimes where truncating and rounding to ms disagree
/// (x.9999 s, x.1875 s as an exact binary tie, ...), one per source file.
fn set_awkward_mtimes(src: &Path, shift_s: u64) {
    let nanos = [999_999_999u32, 187_500_000, 123_456_789, 62_500_000, 500_000, 1_500_000];
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(src)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    files.sort();
    for (i, p) in files.iter().enumerate() {
        let t = UNIX_EPOCH + Duration::new(1_764_582_000 + shift_s + i as u64 * 60, nanos[i % nanos.len()]);
        fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
    }
}

/// What a sync must not change: the commit and the tracked files.
fn state(root: &Path) -> (String, String) {
    (git(root, &["rev-parse", "HEAD"]), git(root, &["status", "--porcelain", "--untracked-files=no"]))
}

#[test]
fn reference_sync_rewrites_nothing_in_a_forest_we_wrote() {
    let Some(bin) = reference_bin("reference_sync_rewrites_nothing_in_a_forest_we_wrote") else { return };
    let d = tempfile::tempdir().unwrap();
    let src = mixed_source(d.path());
    set_awkward_mtimes(&src, 0);
    let root = init(d.path());
    ok(&run(&["adopt", "--forest", &f(&root), src.to_str().unwrap()]), "forest adopt");
    let before = state(&root);
    for (phase, shift) in [("as written", None), ("mtimes moved, bytes unchanged", Some(3600))] {
        if let Some(s) = shift {
            set_awkward_mtimes(&src, s);
        }
        // No source argument: the reference reads `source_root` from _meta/gardener.yaml.
        let o = vine(&bin, &["sync", "--forest", root.to_str().unwrap()]);
        ok(&o, &format!("vine sync ({phase})"));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains("updated (") && !out.contains("planted ("), "vine sync ({phase}) rewrote: {out}");
        assert_eq!(state(&root), before, "vine sync ({phase}) changed the forest: {out}");
    }
}

#[test]
fn forest_sync_rewrites_nothing_in_a_forest_the_reference_wrote() {
    let Some(bin) = reference_bin("forest_sync_rewrites_nothing_in_a_forest_the_reference_wrote") else { return };
    let d = tempfile::tempdir().unwrap();
    let src = mixed_source(d.path());
    set_awkward_mtimes(&src, 0);
    let root = d.path().join("ref");
    ok(&vine(&bin, &["init", "--forest", root.to_str().unwrap(), "--title", "Ref"]), "vine init");
    ok(&vine(&bin, &["adopt", src.to_str().unwrap(), "--forest", root.to_str().unwrap()]), "vine adopt");
    let before = state(&root);
    for (phase, shift) in [("as written", None), ("mtimes moved, bytes unchanged", Some(3600))] {
        if let Some(s) = shift {
            set_awkward_mtimes(&src, s);
        }
        let o = run(&["sync", "--forest", &f(&root), "--json"]);
        assert_eq!(code(&o), 0, "forest sync ({phase}): {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for s in v["sources"].as_array().unwrap() {
            for k in ["planted", "updated", "stale", "branches"] {
                assert_eq!(s[k].as_array().map(|a| a.len()), Some(0), "forest sync ({phase}) {k}: {s}");
            }
        }
        assert_eq!(v["commits"].as_array().map(|a| a.len()), Some(0), "forest sync ({phase}) committed: {v}");
        assert_eq!(state(&root), before, "forest sync ({phase}) changed the forest");
    }
}
