//! The run-level error ([`GardenError`]); per-file problems go into the
//! report instead. Imports nothing of the crate.

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
