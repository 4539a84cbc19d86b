//! Shared helpers: the git CLI and tree comparisons.

use std::path::Path;
use std::process::Command;

/// Run the git CLI in `root`, returning (success, stdout, stderr).
pub fn git(root: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Assert `git fsck --strict` passes with no error lines.
pub fn assert_fsck_clean(root: &Path) {
    let (ok, out, err) = git(root, &["fsck", "--strict", "--no-progress"]);
    assert!(ok, "git fsck failed:\n{out}\n{err}");
    for line in out.lines().chain(err.lines()) {
        assert!(!line.starts_with("error") && !line.contains("missing") && !line.contains("broken"), "fsck: {line}");
    }
}

/// `git status --porcelain` including untracked files.
pub fn status(root: &Path) -> String {
    let (ok, out, err) = git(root, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(ok, "git status failed: {err}");
    out
}

/// Tracked paths at HEAD, sorted.
pub fn ls_tree(root: &Path) -> Vec<String> {
    let (ok, out, err) = git(root, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(ok, "git ls-tree failed: {err}");
    out.lines().map(str::to_string).collect()
}

/// The dialect's exact `.gitignore`.
pub const GITIGNORE: &str = "_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n";
