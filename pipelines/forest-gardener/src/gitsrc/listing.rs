//! A git source's listing for the reconcile join: the whole tree at the
//! mirrored commit, or only what changed since the commit the manifest
//! recorded ([`delta`]). Both go through the walk's [`ObjectStream`] filter
//! (ignore rules, unsafe names, nested forests), and both read no blob.

use super::tree::{diff, walk, Found};
use super::{GitSource, GitSourceError};
use crate::walk::{Listed, Listing, ObjectStream, ProbeError, RawObject, WalkProblem};
use git2::{Oid, Repository, Tree};
use std::collections::BTreeMap;
use std::path::Path;

/// The changes since the recorded commit, ready for the join.
pub struct Delta {
    /// Added and modified files, in path order.
    pub files: Vec<Listed>,
    /// Every path the join must look up in the manifest (changed and
    /// deleted), sorted.
    pub paths: Vec<String>,
    /// Symlinks and submodules among the changes.
    pub problems: Vec<WalkProblem>,
    /// One line when the history was rewritten (a force-push).
    pub note: Option<String>,
}

/// Why a delta cannot stand for the whole listing (the run lists the
/// whole tree instead, and says why once).
#[derive(Debug, thiserror::Error)]
pub enum Fallback {
    /// The recorded commit is no longer in the repository.
    #[error("the recorded commit {0} is no longer in the repository: listing the whole tree")]
    CommitGone(String),
    /// A folder became or stopped being a nested forest.
    #[error("a folder became or stopped being a nested forest: listing the whole tree")]
    NestedForest,
    /// The repository could not be read for the diff.
    #[error("cannot compare the trees: listing the whole tree")]
    Git(#[from] GitSourceError),
}

/// Does folder `dir` (`""` or ending in `/`) of `tree` hold `_index.md`?
fn holds_index(tree: &Tree<'_>, dir: &str) -> bool {
    tree.get_path(Path::new(&format!("{dir}_index.md"))).is_ok()
}

fn source_tree<'r>(repo: &'r Repository, git: &GitSource) -> Result<Tree<'r>, GitSourceError> {
    repo.find_tree(git.tree).map_err(GitSourceError::read(format!("cannot read the tree of {}", git.commit)))
}

/// Stream the whole tree at the mirrored commit into `sink`.
pub fn list_tree(git: &GitSource, slots: &Path, ignore: &[String], sink: &mut dyn FnMut(Listed)) -> Listing {
    let failed = |e: GitSourceError| Listing { listing_error: Some(crate::error::chain(&e)), ..Default::default() };
    let repo = match git.repo() {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    let tree = match source_tree(&repo, git) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let mut stream = ObjectStream::new("", ignore, slots);
    let mut probe = |dir: &str| -> Result<bool, ProbeError> { Ok(holds_index(&tree, dir)) };
    let mut found = Found::default();
    let walked = walk(&repo, &tree, b"", &mut |o| stream.push(o, &mut probe, sink), &mut found);
    let mut end = stream.finish(sink);
    end.problems.extend(found.problems);
    if let Err(e) = walked {
        end.listing_error.get_or_insert(format!("{}: {}", git.spec, crate::error::chain(&e)));
    }
    end
}

/// The changes from `since` (a commit the manifest recorded) to the
/// mirrored commit. `Err` when a delta cannot stand for the whole listing:
/// the recorded commit is gone from the repository, or a folder became or
/// stopped being a nested forest.
pub fn delta(git: &GitSource, since: &str, slots: &Path, ignore: &[String]) -> Result<Delta, Fallback> {
    let repo = git.repo()?;
    let old = Oid::from_str(since).ok().and_then(|o| repo.find_commit(o).ok());
    let Some(old) = old else {
        return Err(Fallback::CommitGone(since.to_string()));
    };
    let note = match repo.graph_descendant_of(git.commit, old.id()) {
        Ok(true) => None,
        _ if old.id() == git.commit => None,
        _ => Some(format!(
            "history rewritten (force-push?): the recorded commit {since} is not an ancestor of {}; the trees were compared",
            git.commit
        )),
    };
    let new_tree = source_tree(&repo, git)?;
    let read = || GitSourceError::read(format!("cannot read the tree of {since}"));
    let old_tree = match &git.spec.subdir {
        None => old.tree().map_err(read())?,
        Some(s) => match old.tree().and_then(|t| t.get_path(Path::new(s))) {
            Ok(e) => repo.find_tree(e.id()).map_err(read())?,
            Err(_) => repo.treebuilder(None).and_then(|b| b.write()).and_then(|o| repo.find_tree(o)).map_err(read())?,
        },
    };
    let mut found = Found::default();
    diff(&repo, &old_tree, &new_tree, b"", &mut found)?;
    if found.markers_changed {
        return Err(Fallback::NestedForest);
    }
    let mut paths: Vec<String> = found.deleted.clone();
    // The stream decides nested forests by the markers it passes: give it
    // the markers above every changed file (from the new tree).
    let mut objects: BTreeMap<Vec<u8>, RawObject> = BTreeMap::new();
    for f in found.files {
        let rel = String::from_utf8_lossy(&f.key).into_owned();
        for (i, _) in rel.match_indices('/') {
            let dir = &rel[..=i];
            let marker = format!("{dir}_index.md");
            if !objects.contains_key(marker.as_bytes()) && holds_index(&new_tree, dir) {
                let m = RawObject { key: marker.clone().into_bytes(), size: 0, etag: String::new(), mtime_ms: 0 };
                objects.insert(marker.into_bytes(), m);
            }
        }
        paths.push(rel);
        objects.insert(f.key.clone(), f);
    }
    let mut stream = ObjectStream::new("", ignore, slots);
    let mut probe = |dir: &str| -> Result<bool, ProbeError> { Ok(holds_index(&new_tree, dir)) };
    let mut files = vec![];
    for (_, o) in objects {
        stream.push(o, &mut probe, &mut |f| files.push(f));
    }
    let end = stream.finish(&mut |f| files.push(f));
    paths.sort();
    paths.dedup();
    let mut problems = found.problems;
    problems.extend(end.problems);
    Ok(Delta { files, paths, problems, note })
}

/// The manifest `meta` key of a git source's recorded state.
pub fn state_key(source: &str) -> String {
    format!("git:{source}")
}

/// The state a finished run records: the mirrored commit and a
/// fingerprint of what else decides the listing (the uri, the ignore
/// rules), so a changed rule lists the whole tree once.
pub fn state(git: &GitSource, uri: &str, ignore: &[String]) -> String {
    format!("{} {}", git.commit, rules_fingerprint(uri, ignore))
}

fn rules_fingerprint(uri: &str, ignore: &[String]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(uri.as_bytes());
    for g in ignore {
        h.update(b"\n");
        h.update(g.as_bytes());
    }
    h.finalize().to_hex()[..16].to_string()
}

/// The commit to diff from, when the recorded state was made under the
/// same rules.
pub fn recorded_since<'a>(recorded: &'a str, uri: &str, ignore: &[String]) -> Option<&'a str> {
    let (commit, fp) = recorded.split_once(' ')?;
    (fp == rules_fingerprint(uri, ignore)).then_some(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_state_holds_only_under_the_same_rules() {
        let rules = vec!["*.draft".to_string()];
        let rec = format!("abc123 {}", rules_fingerprint("git:/r", &rules));
        assert_eq!(recorded_since(&rec, "git:/r", &rules), Some("abc123"));
        assert_eq!(recorded_since(&rec, "git:/r", &[]), None);
        assert_eq!(recorded_since(&rec, "git:/r:docs", &rules), None);
        assert_eq!(recorded_since("garbage", "git:/r", &rules), None);
        assert_eq!(state_key("wiki"), "git:wiki");
    }
}
