//! The Gardener: `forest adopt` / `forest sync` for local folders and
//! `s3://` prefixes ([`source`]), plus reads through the storage tiers
//! ([`tiers`]: fetch, prefetch, bodies).
//!
//! Stages (one module each under `src/stages/`, wired by `src/pipeline.rs`):
//! catchup -> list -> reconcile (pure decisions in [`reconcile`]) -> fetch +
//! convert (rayon) -> plan writes (ids, branch chain, index entries,
//! coverage, FLESH/BONE policies) -> propose + curate (own pool,
//! overlapping the next slice's conversion) -> commit (one git commit per
//! batch, then manifest, catalog, heat re-keys).
//!
//! Invariant: a batch is one commit or nothing; the Gardener never deletes a
//! passport (vanished sources become `stale`), never rewrites a file whose
//! content did not change, and never overwrites hand-edited scent.

pub mod curate;
pub mod demand;
mod entry;
pub mod init;
pub mod manifest;
pub mod outcomes;
pub mod pending;
mod pipeline;
pub mod prepared;
pub mod reconcile;
pub mod report;
pub mod rollup;
pub mod source;
mod stages;
pub mod walk;

pub use config::{GardenerConfig, SourceConfig};
pub use entry::{
    adopt, sync, AdoptSpec, Curate, Draft, DraftLink, NoProgress, Progress, RunOptions, DEFAULT_BATCH_BYTES,
};
/// The on-disk layer lives in `forest-derived` (the read side uses it
/// without the Gardener); re-exported under the Gardener's old paths.
pub use forest_derived::{catalog as derived, config, tiers};
pub use prepared::worker::{prepare, PrepareReport, PrepareSourceReport};
pub use report::{FileError, GardenReport, MoveRecord, SourceReport};

/// Errors that stop a whole run (per-file problems go into the report).
#[derive(Debug, thiserror::Error)]
pub enum GardenError {
    /// Bad source or argument (the dialect's `E_SCHEMA`).
    #[error("E_SCHEMA: {0}")]
    Schema(String),
    /// `_meta/gardener.yaml` is invalid.
    #[error("E_CONFIG: {0}")]
    Config(String),
    /// Filesystem error outside a single document.
    #[error("io: {0}")]
    Io(String),
    /// Git layer failure.
    #[error("{0}")]
    Git(#[from] forest_git::GitError),
    /// Manifest/catalog failure.
    #[error("derived layer: {0}")]
    Derived(String),
    /// The on-disk layer (config, catalog, tiers) failed.
    #[error(transparent)]
    Layer(#[from] forest_derived::DerivedError),
}

impl GardenError {
    /// Stable error code, for callers that branch on the kind of failure.
    pub fn code(&self) -> &'static str {
        match self {
            GardenError::Schema(_) => "E_SCHEMA",
            GardenError::Config(_) => "E_CONFIG",
            GardenError::Io(_) => "E_IO",
            GardenError::Git(g) => g.code(),
            GardenError::Derived(_) => "E_DERIVED",
            GardenError::Layer(d) => d.code(),
        }
    }
}
