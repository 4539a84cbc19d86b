//! `git:` sources (DESIGN §3; decisions/git-sources.md): a repository read
//! with git2 at one commit, without a checkout. A local repository (working
//! tree or bare) is read in place and never written; a URL is fetched by
//! the `git` binary (every transport, git's own credential helpers, no
//! prompt) into a bare mirror under [`MIRRORS_DIR`].
//!
//! The blob OID is the change token (the listing's ETag), so listing reads
//! no blob. A sync whose manifest recorded the commit it mirrored diffs the
//! recorded tree against the new one ([`tree::diff`]: equal subtree OIDs
//! are skipped unopened) and hands reconcile only the changed paths.

pub mod error;
pub mod facts;
pub mod lfs;
pub mod listing;
pub mod spec;
pub mod tree;

use crate::reconcile::HashPair;
pub use error::GitSourceError;
use git2::{Oid, Repository};
pub use spec::{is_git, GitSpec, Locator};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bare mirrors of fetched repositories (one per URL), inside the forest.
pub const MIRRORS_DIR: &str = "_derived/git";
/// Where a fetched remote's HEAD lands in its mirror.
const MIRROR_HEAD: &str = "refs/forest/HEAD";
/// Blobs up to this size are read through git2 in one piece; larger ones
/// are streamed by `git cat-file` (git2 cannot stream packed objects).
pub const BLOB_IN_MEMORY_MAX: u64 = 8 << 20;

/// A `git:` source opened at the commit this run mirrors.
pub struct GitSource {
    /// The parsed spec (local paths canonical).
    pub spec: GitSpec,
    /// The git directory read (the repository itself, or the mirror).
    pub git_dir: PathBuf,
    /// The commit mirrored.
    pub commit: Oid,
    /// The tree of the source's root (SUBDIR) at `commit`.
    pub tree: Oid,
    /// The web page base of the remote (`https://github.com/o/r`), if any.
    pub web: Option<String>,
    blobs_read: AtomicU64,
    facts: std::sync::Mutex<facts::Facts>,
}

impl GitSource {
    /// Open the source: fetch a URL into its mirror, resolve the ref, find
    /// SUBDIR. Every failure (missing repository, unreachable URL, missing
    /// ref or folder) is one line, and nothing has been touched then.
    pub fn open(forest: &Path, spec: &GitSpec) -> Result<GitSource, GitSourceError> {
        let (git_dir, remote_url) = match &spec.locator {
            Locator::Path(p) => {
                let repo =
                    Repository::open(p).map_err(|source| GitSourceError::NotARepository { path: p.clone(), source })?;
                let url = repo.find_remote("origin").ok().and_then(|r| r.url().ok().map(str::to_string));
                (repo.path().to_path_buf(), url)
            }
            Locator::Url(u) => (fetch_mirror(forest, u)?, Some(u.clone())),
        };
        let repo = Repository::open_bare(&git_dir)
            .or_else(|_| Repository::open(&git_dir))
            .map_err(GitSourceError::read(format!("cannot open {}", git_dir.display())))?;
        let commit = resolve(&repo, spec)?;
        let root = repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(GitSourceError::read(format!("cannot read commit {commit}")))?;
        let tree = match &spec.subdir {
            None => root.id(),
            Some(s) => match root.get_path(Path::new(s)) {
                Ok(e) if e.kind() == Some(git2::ObjectType::Tree) => e.id(),
                _ => {
                    let location = spec.location().to_string();
                    return Err(GitSourceError::NoFolder { subdir: s.clone(), commit, location });
                }
            },
        };
        Ok(GitSource {
            spec: spec.clone(),
            git_dir,
            commit,
            tree,
            web: remote_url.as_deref().and_then(facts::web_base),
            blobs_read: AtomicU64::new(0),
            facts: Default::default(),
        })
    }

    /// Open the repository read (one handle per thread: git2 handles are
    /// not shared between threads).
    pub fn repo(&self) -> Result<Repository, GitSourceError> {
        Repository::open(&self.git_dir).map_err(GitSourceError::read(format!("cannot open {}", self.git_dir.display())))
    }

    /// Run `f` with this thread's handle on the repository (opened once
    /// per thread: opening one per blob re-reads the pack indexes).
    fn with_repo<R>(&self, f: impl FnOnce(&Repository) -> Result<R, GitSourceError>) -> Result<R, GitSourceError> {
        thread_local! {
            static HANDLE: std::cell::RefCell<Option<(PathBuf, Repository)>> = const { std::cell::RefCell::new(None) };
        }
        HANDLE.with(|h| {
            let mut h = h.borrow_mut();
            if h.as_ref().is_none_or(|(p, _)| p != &self.git_dir) {
                *h = Some((self.git_dir.clone(), self.repo()?));
            }
            match h.as_ref() {
                Some((_, repo)) => f(repo),
                None => self.repo().and_then(|r| f(&r)),
            }
        })
    }

    /// Blobs read so far (listing reads none).
    pub fn blobs_read(&self) -> u64 {
        self.blobs_read.load(Ordering::Relaxed)
    }

    /// Path of `rel` (source-relative) inside the repository.
    pub fn repo_path(&self, rel: &str) -> String {
        match &self.spec.subdir {
            Some(s) => format!("{s}/{rel}"),
            None => rel.to_string(),
        }
    }

    /// The origin URI of a source-relative path:
    /// `git:LOCATION#COMMIT:REPO_PATH`.
    pub fn origin(&self, rel: &str) -> String {
        format!("{}{}#{}:{}", spec::PREFIX, self.spec.location(), self.commit, self.repo_path(rel))
    }

    /// Write blob `oid` to `dest` and hash it (sha256 too when asked).
    /// Small blobs go through git2 in one piece; larger ones are streamed
    /// by `git cat-file`, so memory stays bounded whatever the blob.
    pub fn read_blob_to(&self, oid: &str, dest: &Path, with_sha: bool) -> Result<HashPair, GitSourceError> {
        let what = || format!("cannot read blob {oid}");
        let id = Oid::from_str(oid).map_err(GitSourceError::read(what()))?;
        if let Some(p) = dest.parent() {
            std::fs::create_dir_all(p).map_err(GitSourceError::io(p))?;
        }
        let small = self.with_repo(|repo| {
            let (size, kind) = repo.odb().and_then(|o| o.read_header(id)).map_err(GitSourceError::read(what()))?;
            if kind != git2::ObjectType::Blob {
                return Err(GitSourceError::read(what())(git2::Error::from_str("not a blob")));
            }
            if (size as u64) > BLOB_IN_MEMORY_MAX {
                return Ok(false);
            }
            let blob = repo.find_blob(id).map_err(GitSourceError::read(what()))?;
            std::fs::write(dest, blob.content()).map_err(GitSourceError::io(dest))?;
            Ok(true)
        })?;
        if !small {
            stream_blob(&self.git_dir, oid, dest)?;
        }
        self.blobs_read.fetch_add(1, Ordering::Relaxed);
        forest_derived::hash::hash_file(dest, with_sha).map_err(GitSourceError::io(dest))
    }

    /// Last author and date of `rel` (see [`facts`]).
    pub fn facts(&self, rel: &str) -> facts::FileFacts {
        let path = self.repo_path(rel);
        let mut f = self.facts.lock().unwrap_or_else(|p| p.into_inner());
        f.of(self, &path)
    }
}

/// The `git` binary (tests may point `FOREST_GIT` at another).
pub fn git_binary() -> String {
    std::env::var("FOREST_GIT").unwrap_or_else(|_| "git".into())
}

/// `git cat-file blob OID > dest` (git streams large blobs).
fn stream_blob(git_dir: &Path, oid: &str, dest: &Path) -> Result<(), GitSourceError> {
    let out = std::fs::File::create(dest).map_err(GitSourceError::io(dest))?;
    let st = Command::new(git_binary())
        .arg("--git-dir")
        .arg(git_dir)
        .args(["cat-file", "blob", oid])
        .stdout(out)
        .stderr(Stdio::null())
        .status()
        .map_err(|source| GitSourceError::Spawn { binary: git_binary(), source })?;
    if !st.success() {
        return Err(GitSourceError::CatFile { oid: oid.to_string(), status: st });
    }
    Ok(())
}

/// Fetch `url` into its mirror (created bare on first use) and return the
/// mirror's path. Branches, tags and the remote HEAD are fetched; nothing
/// prompts (`GIT_TERMINAL_PROMPT=0`), credential helpers still answer.
fn fetch_mirror(forest: &Path, url: &str) -> Result<PathBuf, GitSourceError> {
    let key = blake3::hash(url.as_bytes()).to_hex();
    let dir = forest.join(MIRRORS_DIR).join(format!("{}.git", &key[..16]));
    if !dir.join("HEAD").exists() {
        let repo =
            Repository::init_bare(&dir).map_err(GitSourceError::read(format!("cannot create {}", dir.display())))?;
        if let Ok(mut c) = repo.config() {
            let _ = c.set_i32("gc.auto", 0);
        }
    }
    let out = Command::new(git_binary())
        .arg("--git-dir")
        .arg(&dir)
        .args(["fetch", "--quiet", "--prune", "--no-write-fetch-head", "--"])
        .arg(url)
        .args([&format!("+HEAD:{MIRROR_HEAD}"), "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| GitSourceError::Spawn { binary: git_binary(), source })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let reason = why.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_string();
        return Err(GitSourceError::Fetch { url: url.to_string(), reason });
    }
    Ok(dir)
}

/// The commit of the spec's ref (HEAD when none): a branch, a tag or a
/// commit id, peeled to a commit.
fn resolve(repo: &Repository, spec: &GitSpec) -> Result<Oid, GitSourceError> {
    let mirrored = matches!(spec.locator, Locator::Url(_));
    let obj = match spec.reference.as_deref() {
        None | Some("HEAD") if mirrored => repo.revparse_single(MIRROR_HEAD),
        None => repo.revparse_single("HEAD"),
        Some(r) => repo
            .revparse_single(&format!("refs/heads/{r}"))
            .or_else(|_| repo.revparse_single(&format!("refs/tags/{r}")))
            .or_else(|_| repo.revparse_single(r)),
    };
    let reference = spec.reference.clone().unwrap_or_else(|| "HEAD".into());
    let location = spec.location().to_string();
    let Ok(obj) = obj else {
        return Err(GitSourceError::RefNotFound { reference, location });
    };
    obj.peel_to_commit().map(|c| c.id()).map_err(|_| GitSourceError::NotACommit { reference, location })
}
