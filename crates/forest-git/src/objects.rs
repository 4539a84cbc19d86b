//! Object-store reads and writes that move no ref and touch no work tree:
//! a thread's own handle ([`Objects`]), a blob's id in a tree, the id git
//! gives some bytes.

use std::path::Path;

use git2::{ErrorCode, ObjectType, Oid, Repository};

use crate::GitError;

/// One thread's handle on a forest's object store ([`GitForest::objects`]):
/// tree lookups and blob writes, nothing that moves a ref or the work tree.
pub struct Objects {
    repo: Repository,
}

impl Objects {
    /// A new handle on the repository at `git_dir`.
    pub(crate) fn open(git_dir: &Path) -> Result<Objects, GitError> {
        Ok(Objects { repo: Repository::open(git_dir)? })
    }

    /// [`GitForest::write_blob`] on this handle.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<Oid, GitError> {
        Ok(self.repo.odb()?.write(ObjectType::Blob, bytes)?)
    }

    /// [`GitForest::tree_blob_id`] on this handle.
    pub fn tree_blob_id(&self, tree: Oid, path: &str) -> Result<Option<Oid>, GitError> {
        blob_in_tree(&self.repo, tree, path)
    }
}

/// The blob at `path` in tree `tree`, `None` when absent or not a file.
pub(crate) fn blob_in_tree(repo: &Repository, tree: Oid, path: &str) -> Result<Option<Oid>, GitError> {
    let tree = repo.find_tree(tree)?;
    let entry = match tree.get_path(Path::new(path)) {
        Ok(e) => e,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok((entry.kind() == Some(ObjectType::Blob)).then(|| entry.id()))
}

/// The id git gives `bytes` as a blob (`git hash-object`), computed without
/// a repository: equal to a tree entry's id exactly when the contents are.
pub fn blob_id(bytes: &[u8]) -> Result<Oid, GitError> {
    Ok(Oid::hash_object(ObjectType::Blob, bytes)?)
}
