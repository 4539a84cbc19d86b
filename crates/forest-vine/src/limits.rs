//! Size caps of one call's parameters, checked at the MCP edge before any
//! work (a 400k-word locate never reaches the index).
//!
//! In: nothing. Out: constants. Touches nothing.

/// Characters a string parameter may hold (`sql` has [`MAX_SQL`]).
pub const MAX_TEXT: usize = 4096;
/// Characters of one sniff term.
pub const MAX_TERM: usize = 256;
/// Characters of a `query`/`tend` statement.
pub const MAX_SQL: usize = 100_000;
/// Entries of a list parameter.
pub const MAX_LIST: usize = 256;
/// Serialized bytes of an object parameter (`plant`'s nodes, `graft`'s patch).
pub const MAX_OBJECT: usize = 4 << 20;
