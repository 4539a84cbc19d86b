//! Source access (DESIGN §3): a local folder, an `s3://bucket/prefix`,
//! an `rclone:REMOTE:path` (any backend of the operator's rclone config;
//! bytes through one `rclone copy` per window, like S3 objects into
//! download slots) or a `git:` repository ([`crate::gitsrc`]: blobs read
//! into download slots, the blob OID as the ETag).
//! Everything the run does with source bytes goes through [`Access`]:
//! listing, hashing, making a file readable by the converters, and naming
//! its origin. S3 objects are streamed into a download slot under
//! `_derived/tmp/` (hashed on the way in, never buffered whole) and removed
//! once their batch is planted.

use crate::error::GardenError;
use crate::gitsrc::{is_git, GitSource, GitSourceError, GitSpec};
use crate::reconcile::HashPair;
use crate::walk::{FolderCensus, Listed};
pub use forest_derived::config::s3_options;
use forest_derived::config::{local_path, SourceConfig};
pub use forest_derived::paths::s3_uri;
use forest_derived::paths::URI_PATH_SET as PATH_SET;
use forest_storage::{Rclone, RcloneLocation, S3Client, S3Location};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

/// Download slots of S3 sources (swept at the start of every run: the
/// writer lock guarantees nobody else uses them).
pub const SLOTS_DIR: &str = "_derived/tmp/objects";

/// How a source's bytes are reached.
pub enum Access {
    /// A local folder (canonical path).
    Local {
        /// Canonical root.
        root: PathBuf,
        /// Walk into directory symlinks (the source's `follow_symlinks`).
        follow_symlinks: bool,
    },
    /// An S3 prefix.
    S3 {
        /// Bucket and prefix.
        loc: S3Location,
        /// Shared client.
        client: Arc<S3Client>,
        /// Where objects are downloaded for conversion.
        slots: PathBuf,
    },
    /// A path under an rclone remote.
    Rclone {
        /// Remote and path.
        loc: RcloneLocation,
        /// The runner (binary, config).
        rclone: Arc<Rclone>,
        /// Where files are downloaded for conversion.
        slots: PathBuf,
        /// The folder census of this run's listing, set once the whole
        /// listing is read (before its first file is planned).
        census: Arc<OnceLock<FolderCensus>>,
    },
    /// A git repository at one commit ([`GitSource`]); `Err` holds the one
    /// line why it could not be opened (unreachable URL, missing ref),
    /// reported by the listing as an unreachable source.
    Git {
        /// The opened source, or why not.
        git: Result<Arc<GitSource>, Arc<GitSourceError>>,
        /// Where blobs are written for conversion.
        slots: PathBuf,
    },
}

impl Access {
    /// Open a source's access (no network traffic yet for S3). Environment
    /// variables in the uri are resolved here (`E_CONFIG` when unset).
    pub fn open(forest: &Path, src: &SourceConfig) -> Result<Access, GardenError> {
        let uri = src.resolved_uri()?;
        if uri.starts_with("s3://") {
            let loc =
                S3Location::parse(&uri).map_err(|e| GardenError::Schema(format!("source '{}': {e}", src.name)))?;
            let client = S3Client::new(&s3_options(src))
                .map_err(|e| GardenError::Schema(format!("source '{}': {e}", src.name)))?;
            return Ok(Access::S3 { loc, client: Arc::new(client), slots: forest.join(SLOTS_DIR) });
        }
        if is_git(&uri) {
            let spec = GitSpec::parse(&uri).map_err(|e| GardenError::Schema(format!("source '{}': {e}", src.name)))?;
            let git = GitSource::open(forest, &spec).map(Arc::new).map_err(Arc::new);
            return Ok(Access::Git { git, slots: forest.join(SLOTS_DIR) });
        }
        if uri.starts_with("rclone:") {
            let loc =
                RcloneLocation::parse(&uri).map_err(|e| GardenError::Schema(format!("source '{}': {e}", src.name)))?;
            let opts = forest_derived::config::rclone_options(src)?;
            return Ok(Access::Rclone {
                loc,
                rclone: Arc::new(Rclone::new(opts)),
                slots: forest.join(SLOTS_DIR),
                census: Arc::default(),
            });
        }
        let root = local_path(&uri)
            .ok_or_else(|| GardenError::Schema(format!("source '{}': unsupported uri {}", src.name, src.uri)))?;
        Ok(Access::Local { root, follow_symlinks: src.follow_symlinks })
    }

    /// True for object-store sources.
    pub fn is_remote(&self) -> bool {
        matches!(self, Access::S3 { .. } | Access::Rclone { .. } | Access::Git { .. })
    }

    /// The git source, when this is one and it opened.
    pub fn git(&self) -> Option<&GitSource> {
        match self {
            Access::Git { git: Ok(g), .. } => Some(g),
            _ => None,
        }
    }

    /// Hash a listed file (both hashes when `with_sha`). For S3 this streams
    /// the object into its download slot, so a later conversion reads it
    /// from disk without a second download.
    pub fn hash(&self, f: &Listed, with_sha: bool) -> Result<HashPair, FetchError> {
        match (self, &f.object) {
            (Access::S3 { loc, client, .. }, Some(o)) => {
                if let Some(p) = f.abs.parent() {
                    std::fs::create_dir_all(p)
                        .map_err(|source| FetchError::Slot { path: p.display().to_string(), source })?;
                }
                let d = client.download_to(&loc.bucket, &o.key, &f.abs)?;
                Ok(HashPair { blake3: format!("blake3:{}", d.blake3_hex), sha256: d.sha256_hex })
            }
            (Access::Rclone { loc, rclone, .. }, Some(_)) => {
                if let Some(p) = f.abs.parent() {
                    std::fs::create_dir_all(p)
                        .map_err(|source| FetchError::Slot { path: p.display().to_string(), source })?;
                }
                let d = rclone.download_to(&loc.target(&f.rel), &f.abs)?;
                Ok(HashPair { blake3: format!("blake3:{}", d.blake3_hex), sha256: d.sha256_hex })
            }
            // Both hashes at once, as for S3: the conversion reuses the
            // slot instead of reading the blob a second time for sha256.
            (Access::Git { git, .. }, Some(o)) => git
                .as_ref()
                .map_err(|e| FetchError::Git(e.clone()))?
                .read_blob_to(&o.etag, &f.abs, true)
                .map_err(|e| FetchError::Git(Arc::new(e))),
            _ => hash_file(&f.abs, with_sha),
        }
    }

    /// Fetch a batch of remote files into their download slots in one go
    /// where the backend allows it: rclone takes one `rclone copy` with
    /// parallel transfers instead of one `rclone cat` process per file.
    /// Returns the paths whose slot now holds the bytes (to be hashed from
    /// disk); the rest (S3, local, a file rclone failed on) is left to
    /// [`Access::hash`], which gives each failure its own error.
    pub fn prefetch(&self, files: &[&Listed]) -> HashSet<String> {
        let Access::Rclone { loc, rclone, slots, .. } = self else { return HashSet::new() };
        let todo: Vec<&Listed> = files.iter().copied().filter(|f| f.object.is_some() && !f.abs.exists()).collect();
        if todo.len() < 2 {
            return HashSet::new();
        }
        static BATCH: AtomicU64 = AtomicU64::new(0);
        let n = BATCH.fetch_add(1, Ordering::Relaxed);
        let staging = slots.with_file_name(format!("rclone-batch-{}-{n}", std::process::id()));
        let rels: Vec<&str> = todo.iter().map(|f| f.rel.as_str()).collect();
        let arrived: HashSet<String> = match rclone.copy_listed(loc, &rels, &staging) {
            Ok(got) => got.into_iter().collect(),
            Err(e) => {
                tracing::debug!(event = "rclone.batch_failed", error = %e, "batch download failed; fetching one by one");
                HashSet::new()
            }
        };
        let mut placed = HashSet::with_capacity(arrived.len());
        for f in todo.iter().filter(|f| arrived.contains(&f.rel)) {
            let moved = f
                .abs
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::rename(staging.join(&f.rel), &f.abs));
            if moved.is_ok() {
                placed.insert(f.rel.clone());
            }
        }
        let _ = std::fs::remove_dir_all(&staging);
        placed
    }

    /// Make sure `f.abs` holds the bytes (S3: download when the hash pass
    /// did not already), returning fresh hashes when it had to read.
    pub fn ensure_local(&self, f: &Listed, known: Option<&HashPair>, with_sha: bool) -> Result<HashPair, FetchError> {
        match known {
            Some(h) if (!with_sha || !h.sha256.is_empty()) && (!self.is_remote() || f.abs.exists()) => Ok(h.clone()),
            _ => self.hash(f, with_sha),
        }
    }

    /// Drop a download slot once its file is planted (no-op for local files).
    pub fn release(&self, f: &Listed) {
        if self.is_remote() {
            let _ = std::fs::remove_file(&f.abs);
            if let Some(dir) = f.abs.parent() {
                let _ = std::fs::remove_dir(dir);
            }
        }
    }

    /// The `origin` URI of a listed file: `file://` (percent-encoded) or
    /// `s3://bucket/key`.
    pub fn origin(&self, f: &Listed) -> String {
        match (self, &f.object) {
            (Access::S3 { loc, .. }, Some(o)) => s3_uri(&loc.bucket, &o.key),
            (Access::Rclone { loc, .. }, _) => loc.object_uri(&f.rel),
            (Access::Git { .. }, _) => self.origin_of_rel(&f.rel),
            _ => {
                let s = f.abs.to_string_lossy();
                format!("file://{}", percent_encoding::utf8_percent_encode(&s, PATH_SET))
            }
        }
    }

    /// The origin URI a source-relative path would have.
    pub fn origin_of_rel(&self, rel: &str) -> String {
        match self {
            Access::S3 { loc, .. } => s3_uri(&loc.bucket, &format!("{}{rel}", loc.prefix)),
            Access::Rclone { loc, .. } => loc.object_uri(rel),
            Access::Git { git: Ok(g), .. } => g.origin(rel),
            Access::Git { git: Err(_), .. } => format!("git:{rel}"),
            Access::Local { root, .. } => {
                let s = root.join(rel).to_string_lossy().into_owned();
                format!("file://{}", percent_encoding::utf8_percent_encode(&s, PATH_SET))
            }
        }
    }

    /// Sweep download slots left by a killed run.
    pub fn sweep_slots(forest: &Path) {
        let _ = std::fs::remove_dir_all(forest.join(SLOTS_DIR));
    }
}

/// Why one listed file could not be fetched or hashed (a per-file
/// problem: its report line is the message and its causes).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The download slot's folder could not be made.
    #[error("cannot create {path}")]
    Slot {
        /// The folder.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The S3 or rclone download failed.
    #[error(transparent)]
    Storage(#[from] forest_storage::StorageError),
    /// The git source could not be opened or its blob read.
    #[error(transparent)]
    Git(Arc<crate::gitsrc::GitSourceError>),
    /// The local file could not be read.
    #[error("cannot read")]
    Read(#[source] std::io::Error),
}

/// blake3 (and sha256 when asked) of a local file in one read pass.
pub fn hash_file(path: &Path, with_sha: bool) -> Result<HashPair, FetchError> {
    forest_derived::hash::hash_file(path, with_sha).map_err(FetchError::Read)
}
