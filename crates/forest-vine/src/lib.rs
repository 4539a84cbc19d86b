//! The read side of forest: the Vine primitives (vine spec v0.59) as plain
//! Rust functions over an open forest, each answer inside a hard token
//! budget with explicit truncation; sessions that deposit heat into
//! `_derived/trails.db`; and the MCP server (`forest serve`).
//!
//! In: a forest directory (Markdown + `_derived/`). Out: JSON payloads or
//! error envelopes. Touches: `_derived/` (catalog on-the-fly upserts,
//! traces, heat) on every engine; `.md` files and git only through the
//! writes of a writable engine holding `.vine.lock`.

pub mod access;
pub mod answers;
mod args;
pub mod audit;
mod batch;
mod budget;
mod caller;
mod confine;
mod dispatch;
mod engine;
mod error;
mod graft;
mod harvest;
mod heat;
pub mod http;
mod ids;
mod limits;
pub mod mcp;
pub mod origin;
mod pick;
pub mod pool;
pub mod primitive;
pub mod prims;
mod prune;
pub mod ratelimit;
mod read;
mod scan;
mod scoped;
mod section;
mod session;
mod sniff;
pub mod specs;
mod sql;
mod sqlcap;
mod sqllex;
pub mod tokens;
pub mod tools;
mod view;
mod window;
mod write;
mod yamljson;

pub use args::{
    CalendarArgs, CloseArgs, CoverageArgs, GraftArgs, HarvestArgs, HistoryArgs, IdArg, IdOnly, LocateArgs, LookArgs,
    MoveArgs, NodeSpecs, PickArgs, PlantArgs, PruneArgs, ScanArgs, SectionArg, SniffArgs, SqlArgs, TransplantArgs,
};
pub use budget::LIST_BUDGET;
pub use budget::{estimate, Dropped};
pub use dispatch::validate;
pub use engine::{norm_id, Vine, VineOptions, ALPHA};
pub use error::{VResult, VineError};
pub use harvest::{derive_terms, HARVEST_BUDGET};
pub use limits::{MAX_LIST, MAX_OBJECT, MAX_SQL, MAX_TERM, MAX_TEXT};
pub use pick::PICK_BUDGET;
pub use primitive::{Effect, Primitive, Ty};
pub use prims::{budget_of, signature, REGISTRY};
pub use read::{LOCATE_BUDGET, LOOK_BATCH_BUDGET, LOOK_BUDGET, MOVE_BUDGET};
pub use section::{blocks, extract_section};
pub use session::{new_session_id, Event, Tracer, CLOSE_HEAT, SESSION_HEAT};
pub use sniff::SNIFF_BUDGET;
pub use sql::{guard_query, guard_tend, QUERY_BUDGET, ROW_CAP};
pub use sqlcap::{cap_heap, TendBudget, HEAP_LIMIT, MAX_CELL, MAX_PATTERN, MAX_VALUE, TEND_MAX_BYTES, TEND_MAX_ROWS};
pub use sqllex::lex;
pub use window::Window;
