//! The Canopy (issue 31; navigator spec §4): the optional vector layer of
//! `locate`. One L2-normalised vector per node, embedding its scent
//! (title, aliases, tags, summary), under `_derived/canopy/`:
//!
//! - `index.json` + `vectors.f32`: the reference engine's layout
//!   (`{model, dim, built_at, ids}`, headerless little-endian float32 rows
//!   in `ids` order), so either engine can open the other's canopy;
//! - `quant.i8`, `bits.b1`, `ids.bin`, `hashes.bin`, `forest.json`: ours,
//!   for a search that memory-maps int8 rows (or, at 2x10^5 rows and more,
//!   sign bits first) and never parses `index.json`, and for maintenance
//!   that embeds only changed scents (blake3 of each text);
//! - `stale.json`: a writer that could not embed marked the layer behind.
//!
//! Builds and refreshes are streamed (`stream.rs`): rows come in id order
//! from a [`Rows`] source and are written as their window is embedded, so
//! memory holds a window, the ids and the text hashes, not the layer.
//!
//! Nothing here knows the Gardener, the converters or the catalog's schema
//! beyond the scent columns `forest.rs` reads: callers hand `(id, text)`
//! rows in and get rankings out.

mod abtt;
mod bert;
mod binary;
mod embed;
mod encoder;
mod error;
mod fast;
mod forest;
mod maintain;
mod memo;
mod search;
mod store;
mod stream;
mod text;
mod tokfile;

pub use embed::{identity_from_env, normalize, shared_from_env, Embedder, LocalEmbedder, SharedEmbedder, MODEL_VAR};
pub use encoder::{identity_for, outdated_encoder, shared_encoder, Encoder, ENCODER_VAR};
pub use error::{CanopyError, Result};
pub use fast::{StaticEmbedder, STATIC_MARK, STATIC_SUFFIX};
pub use forest::{
    begin_dense, build_forest, catalog_len, dense_ranking, dense_scored, ensure_forest, maintain_forest, query_vector,
    stage_upgrade, upgrade_forest, upgrade_in_run, CatalogRows, DenseQuery, Fallback, FULL_REFRESH_MAX,
    FULL_REFRESH_VAR, IN_RUN_FULL_MAX, IN_RUN_FULL_VAR,
};
pub use maintain::{
    diff, maintain, maintain_after, refresh, refresh_rows, refresh_rows_from, text_hash, Diff, Loader, Merge, OldIndex,
    RefreshReport,
};
pub use memo::{collapse, memo_path, MemoMode, MEMO_CAP};
pub use search::{open_shared, Searcher, BINARY_FROM};
pub use store::{canopy_dir, kept_full_dir, mark_stale, quantize, stale_reason, Canopy};
pub use stream::{OldRows, Rows, SortedRows, Writer, Written};
pub use text::{node_text, scent_text};
