//! The answers of the primitives as types: each serializes to the bytes
//! the wire carries (field order is the wire's key order; a flag the wire
//! omits when false is skipped when false).
//!
//! In: nothing. Out: the answer types. Touches nothing.

mod flag;
mod lists;
mod look;
mod pick;
mod search;
mod sql;
mod write;

pub use lists::*;
pub use look::*;
pub use pick::*;
pub use search::*;
pub use sql::*;
pub use write::*;
