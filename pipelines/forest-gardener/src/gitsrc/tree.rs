//! Listing a git tree and diffing two trees, without reading a blob.
//!
//! Git stores tree entries sorted as if a sub-tree's name ended in `/`,
//! which is the byte order of full paths: a pre-order walk yields paths in
//! the order the reconcile join needs. [`diff`] merges the entries of two
//! trees in that order and opens a sub-tree only when its OID differs, so
//! its cost is the changed paths times their depth, not the tree's size.
//! Sizes come from object headers (`read_header`), never from contents.

use super::error::GitSourceError;
use crate::outcomes::{OutcomeKind, StatKey};
use crate::walk::{RawObject, WalkProblem};
use git2::{ObjectType, Oid, Repository, Tree};
use std::cmp::Ordering;

/// Mode bits of a symbolic link entry.
const LINK_MODE: i32 = 0o120000;

/// What a listing or a diff found besides files.
#[derive(Default)]
pub struct Found {
    /// Files (added or modified), in path order, keyed relative to the
    /// source root; the ETag is the blob OID.
    pub files: Vec<RawObject>,
    /// Deleted file paths (source-relative), in path order.
    pub deleted: Vec<String>,
    /// Symlinks and submodules: listed, not followed.
    pub problems: Vec<WalkProblem>,
    /// Paths named `_index.md` added or deleted (a folder became, or
    /// stopped being, a nested forest).
    pub markers_changed: bool,
}

/// A failed read of object `oid`.
fn gerr(oid: Oid) -> impl FnOnce(git2::Error) -> GitSourceError {
    GitSourceError::read(format!("cannot read object {oid}"))
}

/// The sort key git uses for an entry: its name, plus `/` for a tree.
fn entry_key(e: &git2::TreeEntry<'_>) -> Vec<u8> {
    let mut k = e.name_bytes().to_vec();
    if e.kind() == Some(ObjectType::Tree) {
        k.push(b'/');
    }
    k
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = prefix.to_vec();
    p.extend_from_slice(name);
    p
}

/// What one entry is, when it is not a plain file.
fn not_followed(e: &git2::TreeEntry<'_>) -> Option<String> {
    match e.kind() {
        Some(ObjectType::Commit) => Some(format!("submodule at commit {} (listed, not followed): skipped", e.id())),
        Some(ObjectType::Blob) if e.filemode() == LINK_MODE => Some("symlink in the repository: skipped".into()),
        Some(ObjectType::Blob) => None,
        _ => Some("unknown tree entry: skipped".into()),
    }
}

fn problem(path: &[u8], msg: String, oid: Oid) -> WalkProblem {
    let key = Some(StatKey { size: 0, mtime_ms: 0, etag: Some(oid.to_string()) });
    WalkProblem { rel: String::from_utf8_lossy(path).into_owned(), message: msg, kind: OutcomeKind::Skipped, key }
}

/// A file entry as the listing's raw object (size from the header).
fn raw(repo: &Repository, path: Vec<u8>, oid: Oid) -> Result<RawObject, GitSourceError> {
    let (size, _) = repo.odb().and_then(|o| o.read_header(oid)).map_err(gerr(oid))?;
    Ok(RawObject { key: path, size: size as u64, etag: oid.to_string(), mtime_ms: 0 })
}

/// Walk `tree` in path order: files to `file`, the rest to `found`.
pub fn walk(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &[u8],
    file: &mut dyn FnMut(RawObject),
    found: &mut Found,
) -> Result<(), GitSourceError> {
    for e in tree.iter() {
        let path = join(prefix, e.name_bytes());
        if e.kind() == Some(ObjectType::Tree) {
            let sub = repo.find_tree(e.id()).map_err(gerr(e.id()))?;
            walk(repo, &sub, &join(&path, b"/"), file, found)?;
        } else if let Some(msg) = not_followed(&e) {
            found.problems.push(problem(&path, msg, e.id()));
        } else {
            file(raw(repo, path, e.id())?);
        }
    }
    Ok(())
}

/// Files and problems of a whole sub-tree, one side of a diff.
fn one_side(
    repo: &Repository,
    e: &git2::TreeEntry<'_>,
    path: &[u8],
    added: bool,
    out: &mut Found,
) -> Result<(), GitSourceError> {
    if e.kind() == Some(ObjectType::Tree) {
        let sub = repo.find_tree(e.id()).map_err(gerr(e.id()))?;
        let mut files = vec![];
        let mut side = Found::default();
        walk(repo, &sub, &join(path, b"/"), &mut |f| files.push(f), &mut side)?;
        out.markers_changed |= files.iter().any(|f| is_marker(&f.key));
        if added {
            out.files.extend(files);
            out.problems.extend(side.problems);
        } else {
            out.deleted.extend(files.into_iter().map(|f| String::from_utf8_lossy(&f.key).into_owned()));
        }
        return Ok(());
    }
    out.markers_changed |= is_marker(path);
    if let Some(msg) = not_followed(e) {
        if added {
            out.problems.push(problem(path, msg, e.id()));
        }
    } else if added {
        out.files.push(raw(repo, path.to_vec(), e.id())?);
    } else {
        out.deleted.push(String::from_utf8_lossy(path).into_owned());
    }
    Ok(())
}

fn is_marker(path: &[u8]) -> bool {
    path == b"_index.md" || path.ends_with(b"/_index.md")
}

/// Changes from tree `old` to tree `new` (see the module doc): a file
/// whose blob or mode changed is listed again (a modification is
/// reconcile's suspect, an addition its new file), a rename is a deletion
/// plus an addition that reconcile pairs as a move.
pub fn diff(
    repo: &Repository,
    old: &Tree<'_>,
    new: &Tree<'_>,
    prefix: &[u8],
    out: &mut Found,
) -> Result<(), GitSourceError> {
    let (mut a, mut b) = (old.iter().peekable(), new.iter().peekable());
    loop {
        let ord = match (a.peek(), b.peek()) {
            (None, None) => return Ok(()),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(x), Some(y)) => entry_key(x).cmp(&entry_key(y)),
        };
        match ord {
            Ordering::Less => {
                let Some(x) = a.next() else { return Ok(()) };
                one_side(repo, &x, &join(prefix, x.name_bytes()), false, out)?;
            }
            Ordering::Greater => {
                let Some(y) = b.next() else { return Ok(()) };
                one_side(repo, &y, &join(prefix, y.name_bytes()), true, out)?;
            }
            Ordering::Equal => {
                let (Some(x), Some(y)) = (a.next(), b.next()) else { return Ok(()) };
                if x.id() == y.id() && x.filemode() == y.filemode() {
                    continue; // unchanged: a sub-tree is not even opened
                }
                let path = join(prefix, y.name_bytes());
                if y.kind() == Some(ObjectType::Tree) {
                    let t0 = repo.find_tree(x.id()).map_err(gerr(x.id()))?;
                    let t1 = repo.find_tree(y.id()).map_err(gerr(y.id()))?;
                    diff(repo, &t0, &t1, &join(&path, b"/"), out)?;
                } else if x.kind() != y.kind() || not_followed(&x).is_some() != not_followed(&y).is_some() {
                    one_side(repo, &x, &path, false, out)?;
                    one_side(repo, &y, &path, true, out)?;
                } else {
                    one_side(repo, &y, &path, true, out)?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit_files(repo: &Repository, files: &[(&str, &str)]) -> Oid {
        let mut idx = git2::Index::new().expect("index");
        for (p, body) in files {
            let oid = repo.blob(body.as_bytes()).expect("blob");
            let mut e = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: body.len() as u32,
                id: oid,
                flags: 0,
                flags_extended: 0,
                path: p.as_bytes().to_vec(),
            };
            e.flags = (p.len() as u16) & 0xfff;
            idx.add(&e).expect("add");
        }
        idx.write_tree_to(repo).expect("tree")
    }

    #[test]
    fn diff_lists_only_changes_in_path_order() {
        let d = tempfile::tempdir().expect("tmp");
        let repo = Repository::init_bare(d.path()).expect("repo");
        let before = [("a/x.md", "x"), ("a-c.md", "c"), ("b/deep/y.md", "y"), ("b/z.md", "z"), ("gone/g.md", "g")];
        let after = [("a/x.md", "x2"), ("a-c.md", "c"), ("b/deep/y.md", "y"), ("b/moved.md", "z"), ("new/n.md", "n")];
        let (t0, t1) = (commit_files(&repo, &before), commit_files(&repo, &after));
        let (t0, t1) = (repo.find_tree(t0).expect("t0"), repo.find_tree(t1).expect("t1"));
        let mut out = Found::default();
        diff(&repo, &t0, &t1, b"", &mut out).expect("diff");
        let files: Vec<String> = out.files.iter().map(|f| String::from_utf8_lossy(&f.key).into_owned()).collect();
        assert_eq!(files, vec!["a/x.md", "b/moved.md", "new/n.md"]);
        assert_eq!(out.deleted, vec!["b/z.md", "gone/g.md"]);
        assert_eq!(out.files[0].size, 2);
        assert_eq!(out.files[1].etag, repo.blob(b"z").expect("blob").to_string());
        assert!(!out.markers_changed);
        let mut none = Found::default();
        diff(&repo, &t1, &t1, b"", &mut none).expect("diff");
        assert!(none.files.is_empty() && none.deleted.is_empty());
        let mut all = vec![];
        walk(&repo, &t1, b"", &mut |f| all.push(String::from_utf8_lossy(&f.key).into_owned()), &mut Found::default())
            .expect("walk");
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(all, sorted);
        assert_eq!(all.len(), 5);
    }
}
