//! The run-level error ([`GardenError`]); per-file problems go into the
//! report instead. Imports nothing of the crate.
//!
//! A variant that wraps a cause keeps it as its `source` and does not
//! repeat it in its message, so a caller printing the chain (the CLI's
//! `render::error_chain`, anyhow's `{:#}`) prints each cause once.

/// Errors that stop a whole run (per-file problems go into the report).
#[derive(Debug, thiserror::Error)]
pub enum GardenError {
    /// Bad source or argument (the dialect's `E_SCHEMA`).
    #[error("E_SCHEMA: {0}")]
    Schema(String),
    /// A local source path that does not exist (a typo, an unmounted
    /// drive): `E_NOT_FOUND`, not a schema problem.
    #[error("E_NOT_FOUND: no such source folder: {path}")]
    SourceMissing {
        /// The path as given.
        path: String,
        /// Why it could not be opened.
        #[source]
        source: std::io::Error,
    },
    /// `_meta/gardener.yaml` is invalid.
    #[error("E_CONFIG: {0}")]
    Config(String),
    /// Filesystem error outside a single document.
    #[error("io: {context}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The source's listing cannot be trusted (out of path order, its
    /// thread died): nothing is decided from it.
    #[error("io: {0}")]
    Listing(String),
    /// Git layer failure.
    #[error(transparent)]
    Git(#[from] forest_git::GitError),
    /// The manifest (`_derived/manifest.db`, its `files` or `outcomes`
    /// table) failed.
    #[error("derived layer: {table}")]
    Manifest {
        /// `manifest` or `outcomes`.
        table: &'static str,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The catalog (`_derived/catalog.db`) failed.
    #[error("derived layer: catalog")]
    Catalog(#[source] forest_catalog::CatalogError),
    /// The payload journal could not be encoded.
    #[error("derived layer: payload journal")]
    Journal(#[source] serde_json::Error),
    /// The on-disk layer (config, catalog, tiers) failed.
    #[error(transparent)]
    Layer(#[from] forest_derived::DerivedError),
}

impl GardenError {
    /// Stable error code, for callers that branch on the kind of failure.
    pub fn code(&self) -> forest_model::ErrorCode {
        match self {
            GardenError::Schema(_) => forest_model::ErrorCode::Schema,
            GardenError::SourceMissing { .. } => forest_model::ErrorCode::NotFound,
            GardenError::Config(_) => forest_model::ErrorCode::Config,
            GardenError::Io { .. } | GardenError::Listing(_) => forest_model::ErrorCode::Io,
            GardenError::Git(g) => g.code(),
            GardenError::Manifest { .. } | GardenError::Catalog(_) | GardenError::Journal(_) => {
                forest_model::ErrorCode::Derived
            }
            GardenError::Layer(d) => d.code(),
        }
    }

    /// An I/O failure while doing `context` (a path, or what and where).
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> GardenError {
        GardenError::Io { context: context.into(), source }
    }
}

/// `e` and its causes, `: `-joined (for a per-file report line or a log
/// field, where no caller prints the chain): [`forest_model::error_chain`].
pub use forest_model::error_chain as chain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_prints_once_and_codes_stay() {
        let e = GardenError::io("payload journal", std::io::Error::other("disk full"));
        assert_eq!(e.to_string(), "io: payload journal");
        assert_eq!(chain(&e), "io: payload journal: disk full");
        assert_eq!(e.code(), "E_IO");
        let m = GardenError::Manifest { table: "manifest", source: rusqlite::Error::InvalidQuery };
        assert_eq!(m.code(), "E_DERIVED");
        assert_eq!(chain(&m).matches("Query is not read-only").count(), 1, "{}", chain(&m));
        assert_eq!(GardenError::Listing("the listing thread panicked".into()).code(), "E_IO");
        let missing = GardenError::SourceMissing {
            path: "/no/such/dir".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(missing.code(), "E_NOT_FOUND");
        assert_eq!(missing.to_string(), "E_NOT_FOUND: no such source folder: /no/such/dir");
    }
}
