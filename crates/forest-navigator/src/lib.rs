//! forest-navigator: the agent that walks a forest (navigator spec v0.59).
//!
//! - [`navigator::hunt`]: one navigator over the text protocol (one JSON
//!   `{"tool", "args"}` per turn), width-aware step budget, visited cache,
//!   stall ladder, eager digests, answer gate, forced synthesis;
//!   `close_session` and shortcut minting when the forest takes them.
//! - [`troop::troop`]: N monkeys over a partition of `locate`'s frontier,
//!   a shared cache and session heat, stop policies (patience P = 2), judge.
//! - [`bench::run_bench`]: the arms `greedy` (model-free), `topk`,
//!   `iterative`, `navigator`, `troop`, graded as the reference grades.
//!
//! In: a [`Forest`] (the Vine's dispatcher in process, or [`McpForest`]:
//! a `forest serve` over MCP streamable HTTP) and a [`Chat`]
//! model (the Curator's OpenAI-compatible client). Out: typed results.
//! Touches nothing itself: heat and traces are the Vine's.
//! Pure parts (protocol, audit, grading, chunking, stop rules) are unit-tested
//! without I/O.

pub mod audit;
pub mod baselines;
pub mod bench;
pub mod chunks;
pub mod context;
mod error;
pub mod forest;
pub mod grade;
pub mod mcp;
pub mod navigator;
pub mod observe;
pub mod protocol;
pub mod report;
pub mod troop;

pub use error::NavError;
pub use forest::{Chat, ChatError, Forest, InProcess};
pub use mcp::McpForest;
pub use navigator::{hunt, HuntOptions};
pub use report::{Cost, HuntResult, Step};
pub use troop::{troop, StopPolicy, TroopInfo, TroopOptions};
