//! Walking a local source (dialect §3.2-§3.3, DESIGN §10): ignore rules,
//! nested forests pruned, symlinks never leave the root, bad names reported.
//!
//! Symlinks: directory symlinks are not followed unless the source sets
//! `follow_symlinks` (then loops and targets outside the root are refused);
//! a file symlink whose target is walked anyway is skipped (the file is
//! planted once, under its own path); one to an ignored target is planted
//! under the link's path; a dangling one is one `dangling symlink` line.

use crate::outcomes::{OutcomeKind, StatKey};
use std::path::{Path, PathBuf};

mod census;
mod objects;
pub use census::FolderCensus;
pub use objects::{listing_from_objects, ObjectStream, Probe, ProbeError, HOLD_MAX};

/// Path components that are never walked.
pub const IGNORED_COMPONENTS: [&str; 7] = [".git", ".svn", ".hg", "__pycache__", "node_modules", "_derived", "_assets"];
/// Built-in ignore globs (right-anchored).
pub const IGNORED_GLOBS: [&str; 5] = ["~$*", "*.tmp", "*.lock", ".DS_Store", "Thumbs.db"];

/// One listed file.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// Source-relative POSIX path.
    pub rel: String,
    /// Absolute path to read.
    pub abs: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in milliseconds since the epoch.
    pub mtime_ms: i64,
    /// Object-store key and ETag for S3 sources (None for local files, whose
    /// `abs` is the file itself; for objects `abs` is the download slot).
    pub object: Option<ObjectRef>,
}

/// Where a listed S3 object lives.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRef {
    /// Full object key (prefix + rel).
    pub key: String,
    /// ETag without quotes.
    pub etag: String,
}

/// One object of an S3 listing, before the key is trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct RawObject {
    /// Raw key bytes (percent-decoded; may not be UTF-8).
    pub key: Vec<u8>,
    /// Size in bytes.
    pub size: u64,
    /// ETag without quotes.
    pub etag: String,
    /// LastModified in ms since the epoch.
    pub mtime_ms: i64,
}

/// Result of a walk.
#[derive(Debug, Default)]
pub struct Listing {
    /// Files, sorted by `rel`.
    pub files: Vec<Listed>,
    /// Per-path problems, one report line each.
    pub problems: Vec<WalkProblem>,
    /// Set when some directory could not be listed: stale marking is then
    /// unsafe (its files would look vanished).
    pub listing_error: Option<String>,
}

/// A path the walk could not list as a file.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkProblem {
    /// Source-relative path (lossy for names that are not UTF-8).
    pub rel: String,
    /// One clear line (`dangling symlink -> x: skipped`).
    pub message: String,
    /// `Skipped` (a policy: symlinks, names) or `Failed` (an I/O error).
    pub kind: OutcomeKind,
    /// The path's own stat key (lstat for symlinks), so the outcome is
    /// remembered until it changes; None when it could not be stat'ed.
    pub key: Option<StatKey>,
}

impl WalkProblem {
    fn skipped(rel: impl Into<String>, message: impl Into<String>, key: Option<StatKey>) -> WalkProblem {
        WalkProblem { rel: rel.into(), message: message.into(), kind: OutcomeKind::Skipped, key }
    }
    fn failed(rel: impl Into<String>, message: impl Into<String>, key: Option<StatKey>) -> WalkProblem {
        WalkProblem { rel: rel.into(), message: message.into(), kind: OutcomeKind::Failed, key }
    }
}

/// A right-anchored glob (Python `PurePath.match` semantics), compiled once.
pub struct RightGlob {
    parts: Vec<globset::GlobMatcher>,
}

impl RightGlob {
    /// Compile `pattern`; None when a component is not a valid glob.
    pub fn new(pattern: &str) -> Option<RightGlob> {
        let parts = pattern
            .trim_matches('/')
            .split('/')
            .map(|p| globset::Glob::new(p).ok().map(|g| g.compile_matcher()))
            .collect::<Option<Vec<_>>>()?;
        Some(RightGlob { parts })
    }

    /// Does the pattern match the last components of `rel`?
    pub fn matches(&self, rel: &str) -> bool {
        let comps: Vec<&str> = rel.split('/').collect();
        self.parts.len() <= comps.len() && self.parts.iter().rev().zip(comps.iter().rev()).all(|(m, c)| m.is_match(c))
    }
}

/// Right-anchored glob match of `pattern` against a `/`-separated path.
pub fn glob_match_right(pattern: &str, rel: &str) -> bool {
    RightGlob::new(pattern).is_some_and(|g| g.matches(rel))
}

struct Ignore {
    globs: Vec<RightGlob>,
}

impl Ignore {
    /// Built-in globs plus the source's own.
    fn new(extra: &[String]) -> Ignore {
        Ignore {
            globs: IGNORED_GLOBS
                .iter()
                .map(|s| s.to_string())
                .chain(extra.iter().cloned())
                .filter_map(|g| RightGlob::new(&g))
                .collect(),
        }
    }
    fn component_ignored(name: &str) -> bool {
        IGNORED_COMPONENTS.contains(&name) || name.starts_with('.')
    }
    fn matches(&self, rel: &str) -> bool {
        self.globs.iter().any(|g| g.matches(rel))
    }
}

/// mtime in ms exactly as the reference engine records it: Python's
/// `round(st_mtime, 3)` where `st_mtime = sec + nsec * 1e-9` (a double),
/// so passports either engine writes agree on the fast-path key.
pub fn mtime_ms(md: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    python_round_ms(md.mtime(), md.mtime_nsec())
}

/// `round(sec + nsec * 1e-9, 3)` in ms. Python rounds the exact binary
/// value to 3 decimals (ties to even); Rust's `{:.3}` formats the exact
/// value with the same rule, so the decimal digits are the ms.
pub fn python_round_ms(sec: i64, nsec: i64) -> i64 {
    let x = sec as f64 + nsec as f64 * 1e-9;
    let text = format!("{x:.3}");
    let (neg, digits) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text.as_str()),
    };
    let ms: i64 = digits.replace('.', "").parse().unwrap_or(sec.saturating_mul(1000));
    if neg {
        -ms
    } else {
        ms
    }
}

fn lstat_key(p: &Path) -> Option<StatKey> {
    std::fs::symlink_metadata(p).ok().map(|md| StatKey { size: md.len(), mtime_ms: mtime_ms(&md), etag: None })
}

fn rel_of(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).map(|r| r.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Walk `root` (directory symlinks followed only when `follow_symlinks`).
/// A failure to read `root` itself is a listing error.
pub fn walk_source(root: &Path, extra_ignore: &[String], follow_symlinks: bool) -> Listing {
    let mut files = vec![];
    let mut listing = walk_source_each(root, extra_ignore, follow_symlinks, &mut |f| files.push(f));
    listing.files = files;
    listing
}

/// Siblings ordered so the walk yields `rel` paths in byte order (the
/// manifest's `ORDER BY path`): a directory compares as `name/`, so
/// `a-c.md` comes before everything under `a/`.
fn path_order(a: &walkdir::DirEntry, b: &walkdir::DirEntry) -> std::cmp::Ordering {
    use std::os::unix::ffi::OsStrExt;
    let is_dir = |e: &walkdir::DirEntry| e.file_type().is_dir() || (e.file_type().is_symlink() && e.path().is_dir());
    let (na, nb) = (a.file_name().as_bytes(), b.file_name().as_bytes());
    let sa: &[u8] = if is_dir(a) { b"/" } else { b"" };
    let sb: &[u8] = if is_dir(b) { b"/" } else { b"" };
    na.iter().chain(sa).cmp(nb.iter().chain(sb))
}

/// Names of the sub-folders a walk would enter in source folder `rel_dir`
/// and the number of other entries (files), read from the directory alone
/// (no stat of regular entries): ignored names, nested forests and
/// unfollowed directory symlinks are left out. `None` when the folder
/// cannot be read.
pub(crate) fn census(
    root: &Path,
    rel_dir: &str,
    extra_ignore: &[String],
    follow_symlinks: bool,
) -> Option<(Vec<String>, usize)> {
    let ignore = Ignore::new(extra_ignore);
    let dir = if rel_dir.is_empty() { root.to_path_buf() } else { root.join(rel_dir) };
    let mut dirs = vec![];
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let Ok(name) = entry.file_name().into_string() else { continue };
        if census_ignored(&ignore, rel_dir, &name) {
            continue;
        }
        let Ok(ft) = entry.file_type() else { continue };
        let is_dir = if ft.is_symlink() {
            follow_symlinks && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
        } else {
            ft.is_dir()
        };
        if !is_dir {
            files += 1;
        } else if !entry.path().join("_index.md").exists() {
            dirs.push(name);
        }
    }
    Some((dirs, files))
}

fn census_ignored(ignore: &Ignore, rel_dir: &str, name: &str) -> bool {
    let rel = if rel_dir.is_empty() { name.to_string() } else { format!("{rel_dir}/{name}") };
    Ignore::component_ignored(name) || ignore.matches(&rel)
}

/// [`census`] of an S3 source: one delimiter listing of the folder's
/// prefix (ignored sub-folders left out; the file count is every object
/// directly in it). `None` when the listing fails (the caller then keeps
/// the folder's sub-folders flat, as before buckets existed).
pub(crate) fn census_s3(
    client: &forest_storage::S3Client,
    loc: &forest_storage::S3Location,
    rel_dir: &str,
    extra_ignore: &[String],
) -> Option<(Vec<String>, usize)> {
    let listing = match client.list_folder(loc, rel_dir) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(event = "gardener.census_failed", folder = rel_dir, error = %e);
            return None;
        }
    };
    let ignore = Ignore::new(extra_ignore);
    let dirs = listing.folders.into_iter().filter(|n| !census_ignored(&ignore, rel_dir, n)).collect();
    Some((dirs, listing.files))
}

/// [`census`] of a git source: folder `rel_dir` of `tree` (the source's
/// root tree), read from the trees alone. A submodule counts as a folder,
/// as its empty directory does in a checkout. `None` when it is missing.
pub(crate) fn census_git(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    rel_dir: &str,
    extra_ignore: &[String],
) -> Option<(Vec<String>, usize)> {
    let ignore = Ignore::new(extra_ignore);
    let dir = if rel_dir.is_empty() {
        repo.find_tree(tree.id()).ok()?
    } else {
        repo.find_tree(tree.get_path(Path::new(rel_dir)).ok()?.id()).ok()?
    };
    let (mut dirs, mut files) = (vec![], 0);
    for e in dir.iter() {
        let Some(name) = e.name().ok().filter(|n| !census_ignored(&ignore, rel_dir, n)) else { continue };
        match e.kind() {
            Some(git2::ObjectType::Tree) => {
                let nested = repo.find_tree(e.id()).is_ok_and(|t| t.get_name("_index.md").is_some());
                if !nested {
                    dirs.push(name.to_string());
                }
            }
            Some(git2::ObjectType::Commit) => dirs.push(name.to_string()),
            _ => files += 1,
        }
    }
    Some((dirs, files))
}

/// [`census`] of an rclone source: one non-recursive listing of the
/// folder. `None` when it fails (sub-folders then stay flat).
pub(crate) fn census_rclone(
    rclone: &forest_storage::Rclone,
    loc: &forest_storage::RcloneLocation,
    rel_dir: &str,
    extra_ignore: &[String],
) -> Option<(Vec<String>, usize)> {
    let dir = if rel_dir.is_empty() || rel_dir.ends_with('/') { rel_dir.to_string() } else { format!("{rel_dir}/") };
    let (dirs, files) = match rclone.list_folder(loc, &dir) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(event = "gardener.census_failed", folder = rel_dir, error = %e);
            return None;
        }
    };
    let ignore = Ignore::new(extra_ignore);
    Some((dirs.into_iter().filter(|n| !census_ignored(&ignore, rel_dir, n)).collect(), files))
}

/// [`walk_source`] as a stream: each file goes to `sink` as it is found,
/// in byte order of `rel`; the returned listing holds only the problems
/// and the listing error.
pub fn walk_source_each(
    root: &Path,
    extra_ignore: &[String],
    follow_symlinks: bool,
    sink: &mut dyn FnMut(Listed),
) -> Listing {
    let mut listing = Listing::default();
    let canon_root = match std::fs::canonicalize(root) {
        Ok(c) => c,
        Err(e) => {
            listing.listing_error = Some(format!("{}: {e}", root.display()));
            return listing;
        }
    };
    if let Err(e) = std::fs::read_dir(&canon_root) {
        listing.listing_error = Some(format!("{}: {e}", root.display()));
        return listing;
    }
    let ignore = Ignore::new(extra_ignore);
    let walked = |rel: &str| !rel.split('/').any(Ignore::component_ignored) && !ignore.matches(rel);
    let mut problems = vec![];
    let walker = walkdir::WalkDir::new(&canon_root).follow_links(follow_symlinks).sort_by(path_order);
    let mut it = walker.into_iter();
    while let Some(next) = it.next() {
        let entry = match next {
            Ok(e) => e,
            Err(e) => {
                problems.push(walk_error_problem(&canon_root, &e, &mut listing.listing_error));
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(relp) = entry.path().strip_prefix(&canon_root) else {
            continue;
        };
        let Some(rel) = relp.to_str().map(|s| s.replace('\\', "/")) else {
            let key = lstat_key(entry.path());
            problems.push(WalkProblem::skipped(
                relp.to_string_lossy().into_owned(),
                "file name is not valid UTF-8: skipped",
                key,
            ));
            if entry.file_type().is_dir() {
                it.skip_current_dir();
            }
            continue;
        };
        let name = entry.file_name().to_string_lossy();
        let (mut is_dir, mut is_file) = (entry.file_type().is_dir(), entry.file_type().is_file());
        if Ignore::component_ignored(&name) || ignore.matches(&rel) {
            if is_dir {
                it.skip_current_dir();
            }
            continue;
        }
        if entry.path_is_symlink() {
            match symlink_kind(&canon_root, entry.path(), follow_symlinks, &walked) {
                Ok((file, dir)) => {
                    is_file |= file;
                    is_dir = dir;
                }
                Err((msg, skip_dir)) => {
                    problems.push(WalkProblem::skipped(rel, msg, lstat_key(entry.path())));
                    if skip_dir && is_dir {
                        it.skip_current_dir();
                    }
                    continue;
                }
            }
        }
        if is_dir {
            if entry.path().join("_index.md").exists() {
                // A forest is never a source: prune nested forests whole.
                it.skip_current_dir();
            }
            continue;
        }
        if !is_file {
            continue;
        }
        match std::fs::metadata(entry.path()) {
            Ok(md) => sink(Listed {
                rel,
                abs: entry.path().to_path_buf(),
                size: md.len(),
                mtime_ms: mtime_ms(&md),
                object: None,
            }),
            Err(e) => {
                let key = lstat_key(entry.path());
                problems.push(WalkProblem::failed(rel, format!("cannot stat: {e}"), key))
            }
        }
    }
    listing.problems = problems;
    listing
}

/// The problem a walk error is: a symlink loop, a dangling link or a file
/// that vanished are skipped; anything else is a listing failure (the
/// first one also becomes the listing error).
fn walk_error_problem(canon_root: &Path, e: &walkdir::Error, listing_error: &mut Option<String>) -> WalkProblem {
    let path = e.path().map(|p| rel_of(canon_root, p)).unwrap_or_default();
    let key = e.path().and_then(lstat_key);
    let is_link = e.path().and_then(|p| std::fs::symlink_metadata(p).ok()).is_some_and(|m| m.is_symlink());
    if e.loop_ancestor().is_some() {
        WalkProblem::skipped(path, "symlink loop: skipped", key)
    } else if is_link && e.path().is_some_and(|p| std::fs::metadata(p).is_err()) {
        let target = e.path().and_then(|p| std::fs::read_link(p).ok());
        WalkProblem::skipped(path, dangling(target.as_deref()), key)
    } else if e.io_error().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) {
        WalkProblem::skipped(path, "vanished during the walk: skipped", key)
    } else {
        let msg = format!("cannot list: {e}");
        listing_error.get_or_insert_with(|| format!("{path}: {msg}"));
        WalkProblem::failed(path, msg, key)
    }
}

/// What a symlink inside the walk stands for: `Ok((planted as a file, a
/// directory to descend))`, or why it is skipped (`Err((message, skip its
/// directory))`). Symlinks may point anywhere: only those that stay inside
/// the source count, a file is planted once under its own path when the
/// walk reaches it, and directory links are followed only when asked.
fn symlink_kind(
    canon_root: &Path,
    link: &Path,
    follow_symlinks: bool,
    walked: &dyn Fn(&str) -> bool,
) -> Result<(bool, bool), (String, bool)> {
    let target = match std::fs::canonicalize(link) {
        Ok(t) => t,
        Err(_) => return Err((dangling(std::fs::read_link(link).ok().as_deref()), true)),
    };
    if !target.starts_with(canon_root) {
        return Err(("symlink points outside the source: skipped".into(), true));
    }
    let tmd = std::fs::metadata(link);
    let target_is_dir = tmd.as_ref().is_ok_and(|m| m.is_dir());
    if target_is_dir && !follow_symlinks {
        let msg = "directory symlink not followed (set follow_symlinks on the source to follow it): skipped";
        return Err((msg.into(), false));
    }
    let mut is_file = false;
    if tmd.as_ref().is_ok_and(|m| m.is_file()) {
        let trel = rel_of(canon_root, &target);
        if walked(&trel) {
            return Err((format!("file symlink to {trel}: planted once, under the target's own path; skipped"), true));
        }
        // The target is not walked itself: plant it under the link's path.
        is_file = true;
    }
    Ok((is_file, target_is_dir))
}

/// The one line a dangling symlink gets.
fn dangling(target: Option<&Path>) -> String {
    match target {
        Some(t) => format!("dangling symlink (-> {}): skipped", t.display()),
        None => "dangling symlink: skipped".into(),
    }
}

/// Why an untrusted object key (already stripped of the source prefix) is
/// refused, or None when it is a safe relative POSIX path. Keys are never
/// joined to a local path before passing this check.
pub fn unsafe_key_reason(rel: &str) -> Option<&'static str> {
    if rel.starts_with('/') {
        return Some("absolute object key: skipped");
    }
    if rel.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Some("object key has an empty, '.' or '..' segment: skipped (never a path escape)");
    }
    if rel.chars().any(|c| c.is_control() || c == '\\') {
        return Some("object key contains control characters or a backslash: skipped");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_anchored_globs() {
        assert!(glob_match_right("*.tmp", "a/b/c.tmp"));
        assert!(glob_match_right("~$*", "x/~$doc.docx"));
        assert!(glob_match_right("b/*.md", "a/b/c.md"));
        assert!(!glob_match_right("b/*.md", "a/c/c.md"));
        assert!(!glob_match_right("a/b/c/d", "c/d"));
    }

    #[test]
    fn walk_rules() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("a/.hidden")).unwrap();
        std::fs::create_dir_all(r.join("nested")).unwrap();
        std::fs::create_dir_all(r.join("node_modules")).unwrap();
        std::fs::write(r.join("a/x.md"), "x").unwrap();
        std::fs::write(r.join("a/.hidden/y.md"), "y").unwrap();
        std::fs::write(r.join("a/z.tmp"), "z").unwrap();
        std::fs::write(r.join("nested/_index.md"), "f").unwrap();
        std::fs::write(r.join("node_modules/m.md"), "m").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("escape")).unwrap();
        std::os::unix::fs::symlink(r.join("a"), r.join("a/loop")).unwrap();
        for follow in [false, true] {
            let l = walk_source(r, &[], follow);
            let rels: Vec<&str> = l.files.iter().map(|f| f.rel.as_str()).collect();
            assert_eq!(rels, vec!["a/x.md"], "follow={follow}");
            assert!(l.problems.iter().any(|p| p.rel == "escape" && p.message.contains("outside")));
            let want = if follow { "loop" } else { "not followed" };
            assert!(l.problems.iter().any(|p| p.rel == "a/loop" && p.message.contains(want)), "{:?}", l.problems);
            assert!(l.problems.iter().all(|p| p.kind == OutcomeKind::Skipped && p.key.is_some()));
            assert!(l.listing_error.is_none());
        }
    }

    #[test]
    fn symlink_policy() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("docs/deep")).unwrap();
        std::fs::create_dir_all(r.join(".private")).unwrap();
        std::fs::write(r.join("docs/deep/a.md"), "a").unwrap();
        std::fs::write(r.join(".private/hidden.md"), "h").unwrap();
        std::os::unix::fs::symlink(r.join("docs"), r.join("linked")).unwrap();
        std::os::unix::fs::symlink(r.join("docs/deep/a.md"), r.join("alias.md")).unwrap();
        std::os::unix::fs::symlink(r.join(".private/hidden.md"), r.join("shown.md")).unwrap();
        std::os::unix::fs::symlink(r.join("nowhere.md"), r.join("broken.md")).unwrap();
        let l = walk_source(r, &[], false);
        let rels: Vec<&str> = l.files.iter().map(|f| f.rel.as_str()).collect();
        // The linked folder is not planted twice; the file link to a walked
        // file is skipped; the link to an ignored target is the only path.
        assert_eq!(rels, vec!["docs/deep/a.md", "shown.md"]);
        let msg = |rel: &str| l.problems.iter().find(|p| p.rel == rel).map(|p| p.message.clone()).unwrap_or_default();
        assert!(msg("linked").contains("directory symlink not followed"), "{:?}", l.problems);
        assert!(msg("alias.md").contains("file symlink to docs/deep/a.md"), "{:?}", l.problems);
        assert!(msg("broken.md").starts_with("dangling symlink"), "{:?}", l.problems);
        assert!(!msg("broken.md").contains("vanished"));
        assert_eq!(l.problems.len(), 3, "{:?}", l.problems);
        // follow_symlinks: the folder is walked under the link's path too.
        let l = walk_source(r, &[], true);
        let rels: Vec<&str> = l.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, vec!["docs/deep/a.md", "linked/deep/a.md", "shown.md"]);
        let broken = l.problems.iter().find(|p| p.rel == "broken.md").map(|p| p.message.as_str());
        assert!(broken.is_some_and(|m| m.starts_with("dangling symlink")), "{:?}", l.problems);
    }

    #[test]
    fn mtime_rounds_like_python() {
        // (sec, nsec, Python's round(st_mtime, 3) * 1000), from CPython 3.11.
        let cases: [(i64, i64, i64); 17] = [
            (1700000000, 62500000, 1700000000062),
            (1700000000, 187500000, 1700000000188),
            (1764590000, 123456789, 1764590000123),
            (1764590000, 999999999, 1764590001000),
            (1764590000, 499999, 1764590000000),
            (1764590000, 500000, 1764590000000),
            (1764590000, 1500000, 1764590000001),
            (0, 0, 0),
            (1, 999500000, 2000),
            (1764590000, 123500000, 1764590000124),
            (1764590000, 124500000, 1764590000125),
            (1673856391, 161973069, 1673856391162),
            (1711969249, 698935572, 1711969249699),
            (1525923578, 77777868, 1525923578078),
            (1787699461, 101071364, 1787699461101),
            (1696327743, 625763863, 1696327743626),
            (1531137934, 976787301, 1531137934977),
        ];
        for (s, n, want) in cases {
            assert_eq!(python_round_ms(s, n), want, "{s}.{n:09}");
            // The passport's float is ms / 1000, which PyYAML reads back as
            // the same double as Python's round().
            let py = format!("{:.3}", s as f64 + n as f64 * 1e-9).parse::<f64>().unwrap();
            assert_eq!(want as f64 / 1000.0, py);
        }
    }
}
