//! The Gardener: `forest adopt` / `forest sync` for local folders,
//! `s3://` prefixes, `rclone:` remotes ([`source`]) and `git:` repositories
//! ([`gitsrc`]), plus reads through the storage tiers
//! (`forest_derived::tiers`: fetch, prefetch, bodies).
//!
//! Stages (one module each under `src/stages/`, wired by `src/pipeline.rs`;
//! each takes the read-only `RunEnv` of `src/env.rs` and its input value,
//! and none imports `pipeline.rs` or `entry.rs`):
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
mod env;
mod error;
pub mod gitsrc;
pub mod manifest;
mod options;
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

pub use entry::{adopt, sync, AdoptSpec};
pub use error::{chain as error_chain, GardenError};
pub use options::{
    Curate, CurateError, Draft, DraftLink, NoProgress, Progress, RunOptions, DEFAULT_BATCH_BYTES, DEFAULT_CONVERT_BYTES,
};
pub use prepared::worker::{prepare, PrepareReport, PrepareSourceReport};
pub use report::{FileError, GardenReport, MoveRecord, SourceReport};
