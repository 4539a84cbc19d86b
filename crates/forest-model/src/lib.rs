//! The forest dialect model: nodes, frontmatter, ids, the scent contract and
//! the validator.
//!
//! Invariant: pure data + pure functions; the only I/O is reading files the
//! caller names (lint walks a forest read-only). The one write is the
//! derived lint cache (`lint_cache`), never a forest file.

pub mod aliases;
pub mod chain;
pub mod code;
pub mod comments;
pub mod dep5;
pub mod extract;
pub mod health_facts;
pub mod ids;
pub mod index;
pub mod kept_terms;
pub mod lint;
pub mod lint_cache;
pub mod node;
pub mod node_id;
pub mod scent;
pub mod schema;
pub mod scope;
pub mod sentences;
pub mod slug;
pub mod tokens;
pub mod walk;
pub mod yaml;

pub use chain::error_chain;
pub use code::ErrorCode;
pub use node_id::{Kind, NodeId};
