//! The Gardener's stages, one module each, in the order data flows:
//!
//! ```text
//! catchup ─► list ─► reconcile ─► Work (path order) ─┐
//!   (manifest +        │ fetch (hash suspects,       │ per batch of commit_every:
//!    catalog to HEAD)  │ move candidates)            ▼
//!                      │               fetch+convert (batch N+1, CPU pool)
//!                      │                     ║ overlaps ║
//!                      │        plan (N) ─► propose ─► curate (N, own pool)
//!                      │                                 │
//!                      └────────────────────────► commit (N): one git commit,
//!                                                 then manifest, catalog, trails
//! ```
//!
//! `pipeline.rs` wires them. A stage takes the read-only
//! [`crate::env::RunEnv`] and its input value and returns its output value
//! (and its part of the report); when it must update run state it gets
//! exactly that piece `&mut`. No stage imports `pipeline.rs` or `entry.rs`.
//! Pure decisions live in [`crate::reconcile`] (stat pass, classification,
//! move pairing, stale guard), [`text`] and `plan/draft.rs`; the stages do
//! the I/O around them.

pub(crate) mod catchup;
pub(crate) mod commit;
pub(crate) mod convert;
pub(crate) mod curate;
pub(crate) mod fetch;
pub(crate) mod list;
pub(crate) mod plan;
pub(crate) mod propose;
pub(crate) mod reconcile;
pub(crate) mod scent;
pub(crate) mod text;
pub(crate) mod transient;
pub(crate) mod work;

/// Marker: the catalog holds rows of a batch that may not have committed.
pub const CATALOG_DIRTY: &str = "_derived/catalog.dirty";
/// Manifest path inside a forest.
pub use crate::manifest::MANIFEST_PATH;
/// Journal of payload renames pending around a commit.
pub const PAYLOAD_JOURNAL: &str = "_derived/payload-journal.json";
