//! The on-disk layer that the write side (Gardener, Ranger) and the read
//! side (Vine, `forest serve`) share: where derived files live
//! ([`paths`]), Markdown node -> catalog row and opening/rebuilding the
//! catalog ([`catalog`]), the versioned `_meta/gardener.yaml`
//! ([`config`]), content hashes ([`hash`]), and reading through the
//! storage tiers: FLESH bodies and BONE payloads ([`tiers`]); the dialect
//! skeleton of `forest init` ([`init`]), the remembered outcomes of files
//! that were not planted ([`outcomes`]) and the contract of a budgeted
//! curation run ([`curation`]), which the Ranger reads without the Gardener.
//!
//! Invariant: nothing here converts, curates or plans; this crate depends
//! on no pipeline and no converter, so the read side links none of them.

pub mod catalog;
pub mod config;
pub mod curation;
pub mod hash;
pub mod init;
pub mod outcomes;
pub mod paths;
pub mod tiers;

/// Errors of the on-disk layer. Each variant names what it was doing; the
/// underlying error is its `source()`, never repeated in the message.
#[derive(Debug, thiserror::Error)]
pub enum DerivedError {
    /// `_meta/gardener.yaml` (or a source recorded in it) is invalid.
    #[error("E_CONFIG: {0}")]
    Config(String),
    /// `forest init` on a folder that already holds a forest.
    #[error("E_SCHEMA: {path} already holds a forest (_index.md exists)")]
    AlreadyForest {
        /// The folder.
        path: String,
    },
    /// The manifest (`_derived/manifest.db`, its `outcomes` table) failed.
    #[error("derived layer: {table}")]
    Manifest {
        /// The table read.
        table: &'static str,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// A file of the forest could not be read or written.
    #[error("cannot access {path}")]
    Io {
        /// Forest-relative or absolute path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The catalog (`_derived/catalog.db`) failed.
    #[error("catalog {}", paths::CATALOG_PATH)]
    Catalog(#[source] forest_catalog::CatalogError),
    /// The payload cache or its S3 client could not be set up.
    #[error("payload cache {}", paths::PAYLOADS_DIR)]
    Storage(#[source] forest_storage::StorageError),
    /// The git layer failed.
    #[error(transparent)]
    Git(#[from] forest_git::GitError),
}

impl DerivedError {
    /// Stable error code (the dialect's where one applies).
    pub fn code(&self) -> forest_model::ErrorCode {
        match self {
            DerivedError::Config(_) => forest_model::ErrorCode::Config,
            DerivedError::AlreadyForest { .. } => forest_model::ErrorCode::Schema,
            DerivedError::Manifest { .. } => forest_model::ErrorCode::Derived,
            DerivedError::Io { .. } => forest_model::ErrorCode::Io,
            DerivedError::Catalog(_) => forest_model::ErrorCode::Derived,
            DerivedError::Storage(_) => forest_model::ErrorCode::Storage,
            DerivedError::Git(g) => g.code(),
        }
    }

    pub(crate) fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        DerivedError::Io { path: path.into(), source }
    }
}

/// Result alias of this crate.
pub type Result<T, E = DerivedError> = std::result::Result<T, E>;
