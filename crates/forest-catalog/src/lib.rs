//! The derived layer's SQLite stores: the FTS5 catalog (`_derived/catalog.db`,
//! dialect §7.1), the heat store (`_derived/trails.db`, dialect §6) and the
//! `locate` ranking over both (dialect §7.2–§7.3).
//!
//! Invariant: the catalog and trails are disposable caches: everything in catalog.db is derivable from the Markdown (deleting trails.db loses memory, breaks nothing); readers never block on a writer (WAL).
//!
//! The catalog never parses Markdown: callers hand it [`NodeRow`]s.

mod catalog;
mod degrees;
mod expand;
mod fusion;
mod locate;
mod node;
pub mod pyjson;
mod query;
mod rows;
mod scope;
mod topk;
mod trails;
pub mod verified;
mod window;

pub use catalog::{
    body_hash_of, Candidate, Catalog, CatalogDump, CatalogState, EdgeRow, FtsRow, MoveRow, RebuildReason, RebuildRow,
};
pub use expand::expand_query;
pub use fusion::{blend_fuse, rrf_fuse, Dense, Fusion, RRF_K};
pub use locate::{
    fit_budget, locate, locate_simple, parse_coverage, Admit, Coverage, DenseAnswer, LocateHooks, LocateItem,
    LocateQuery, LocateResult, Scope, TopkDump, LOCATE_BUDGET,
};
pub use node::{CatalogLink, NodeRow};
pub use query::sanitize_query;
pub use rows::{BodyCandidate, PayloadRow, ScentRow};
pub use topk::{index_terms, IndexTerms};
pub use trails::{Evaporation, HeatStats, Trails, PERSISTENT_SCOPE};
pub use window::{Window, WindowCounts};

/// Errors of the catalog, the heat store and `locate`.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// SQLite failed (I/O, lock timeout, corrupt file, ...).
    #[error("sqlite")]
    Sqlite(#[from] rusqlite::Error),
    /// Filesystem error around the database files.
    #[error("io")]
    Io(#[from] std::io::Error),
    /// A JSON column could not be (de)serialized.
    #[error("json")]
    Json(#[from] serde_json::Error),
    /// A caller argument outside the accepted set (the dialect's `E_SCHEMA`).
    #[error("{0}")]
    Schema(String),
    /// A caller's filter stopped a ranking (its deadline passed).
    #[error("stopped by the caller")]
    Stopped,
}

impl CatalogError {
    /// Dialect error code for the envelope (`E_SCHEMA` or `E_INTERNAL`).
    pub fn code(&self) -> forest_model::ErrorCode {
        match self {
            CatalogError::Schema(_) => forest_model::ErrorCode::Schema,
            _ => forest_model::ErrorCode::Internal,
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, CatalogError>;

/// Open a derived SQLite file with the dialect's pragmas
/// (WAL, synchronous=NORMAL, busy_timeout 5000 ms).
pub(crate) fn open_tuned(path: &std::path::Path) -> Result<rusqlite::Connection> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_millis(5000))?;
    let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
    Ok(conn)
}
