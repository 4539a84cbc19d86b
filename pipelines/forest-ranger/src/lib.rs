//! The Ranger (dialect Part H, DESIGN §7): the forest's maintenance cycle.
//!
//! One run evaporates heat, clears stale session rows, evicts the payload
//! cache, promotes or prunes uncertain links, refreshes the master's
//! `## Landmarks`, reports health and lets git tend its repository.
//!
//! Invariant: one audited commit per run or none; idempotent at a fixed clock (run(t); run(t) == run(t)); never deletes nodes.
//!
//! Planning ([`plan_links`], [`plan_landmarks`], [`plan_eviction`]) is pure;
//! [`run`] does the I/O around it. Why a SIGKILL at any instant leaves the
//! forest valid: every Markdown change of a run goes into ONE commit made by
//! [`forest_git::GitForest::commit_batch`], which writes objects first and
//! moves the branch ref with one compare-and-swap; a kill before the ref moves
//! leaves only unreachable objects, a kill after it leaves a work tree that
//! `GitForest::open` restores from HEAD (its journal). Everything else the
//! run touches lives in `_derived/` (SQLite transactions, atomic renames)
//! and is a disposable cache; the next run re-reads the files, which win.

mod cache;
mod canopy;
mod config;
mod daemon;
mod health;
mod plan;
mod run;

pub use cache::{evict_payloads, plan_eviction, CacheFile, PayloadCacheReport, PAYLOADS_DIR};
pub use canopy::lock_after_staging;
pub use config::{CurationConfig, RangerConfig, RANGER_CONFIG_PATH};
pub use daemon::{
    daemon, daemon_with, install_signal_handlers, parse_schedule, read_state, Clock, DaemonOptions, DaemonSummary,
    RangerState, SystemClock, STATE_PATH,
};
pub use health::{health, HealthReport, LintCounts, ScentCounts, SuspectNode, MEDIA_STUB_SENTENCE};
pub use plan::{plan_landmarks, plan_links, round4, DegreeEntry, LinkAction, ManagedLink, MAX_LANDMARKS};
pub use run::{run, EvaporationReport, GcStatus, LandmarksReport, LinksReport, RangerReport, Timings};

/// Everything that can fail in a Ranger run or the daemon.
#[derive(Debug, thiserror::Error)]
pub enum RangerError {
    /// `_meta/ranger.yaml` is invalid; `key` names the offending key.
    #[error("E_CONFIG: _meta/ranger.yaml: {key}: {reason}")]
    Config {
        /// The offending key (`<root>` when the file itself is malformed).
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A cron schedule that does not parse.
    #[error("E_SCHEMA: bad schedule {schedule:?}: {reason}")]
    Schedule {
        /// The expression as given.
        schedule: String,
        /// Parser message.
        reason: String,
    },
    /// A node the run must rewrite cannot be read or parsed.
    #[error("node {id}: {reason}")]
    Node {
        /// Node id.
        id: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// Filesystem error.
    #[error("{context}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Git layer failure (including `E_LOCKED`).
    #[error(transparent)]
    Git(#[from] forest_git::GitError),
    /// Catalog or trails failure.
    #[error("derived layer")]
    Catalog(#[from] forest_catalog::CatalogError),
    /// The on-disk layer (opening / rebuilding the catalog, the config).
    #[error(transparent)]
    Derived(#[from] forest_derived::DerivedError),
}

impl RangerError {
    /// Dialect error code for the envelope.
    pub fn code(&self) -> forest_model::ErrorCode {
        match self {
            RangerError::Config { .. } => forest_model::ErrorCode::Config,
            RangerError::Schedule { .. } => forest_model::ErrorCode::Schema,
            RangerError::Git(e) => e.code(),
            RangerError::Catalog(e) => e.code(),
            RangerError::Derived(e) => e.code(),
            _ => forest_model::ErrorCode::Internal,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        RangerError::Io { context: context.into(), source }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, RangerError>;
