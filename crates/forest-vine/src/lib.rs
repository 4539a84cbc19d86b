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
pub mod audit;
mod budget;
mod confine;
mod dispatch;
mod engine;
mod error;
mod harvest;
pub mod http;
pub mod mcp;
pub mod origin;
mod pick;
pub mod pool;
pub mod ratelimit;
mod read;
mod scan;
mod scoped;
mod session;
mod sniff;
mod sql;
mod sqlcap;
pub mod tokens;
pub mod tools;
mod window;
mod write;
mod yamljson;

pub use budget::{estimate, shrink_list};
pub use dispatch::{signature, validate, Ty};
pub use dispatch::{MAX_LIST, MAX_OBJECT, MAX_SQL, MAX_TERM, MAX_TEXT};
pub use engine::{norm_id, Vine, VineOptions, ALPHA};
pub use error::{VResult, VineError};
pub use harvest::{derive_terms, HarvestArgs, HARVEST_BUDGET};
pub use pick::{blocks, extract_section, SectionArg, PICK_BUDGET};
pub use read::{IdArg, LocateArgs, LOCATE_BUDGET, LOOK_BATCH_BUDGET, LOOK_BUDGET, MOVE_BUDGET};
pub use scan::{ScanArgs, LIST_BUDGET};
pub use session::{new_session_id, Event, Tracer, CLOSE_HEAT, SESSION_HEAT};
pub use sniff::{SniffArgs, SNIFF_BUDGET};
pub use sql::{guard_query, guard_tend, lex, QUERY_BUDGET, ROW_CAP};
pub use sqlcap::{cap_heap, TendBudget, HEAP_LIMIT, MAX_CELL, MAX_PATTERN, MAX_VALUE, TEND_MAX_BYTES, TEND_MAX_ROWS};
pub use window::Window;

/// Budget of each read primitive by wire name (the contract's ceilings).
pub fn budget_of(prim: &str) -> Option<usize> {
    Some(match prim {
        "locate" | "sniff" | "scan" | "coverage" | "history" | "calendar" => 800,
        "look" => 500,
        "move" => 600,
        "pick" | "harvest" => 4000,
        "query" => 2000,
        _ => return None,
    })
}
