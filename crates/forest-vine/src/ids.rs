//! Node ids as the wire gives them: normalised, and the envelope of an id
//! that is not there.
//!
//! In: id text. Out: a normalised id, an envelope. Touches nothing.

use crate::error::VineError;

/// Strip surrounding whitespace and `/` from an id.
pub fn norm_id(id: &str) -> String {
    id.trim().trim_matches('/').to_string()
}

/// The catalog-path not-found envelope.
pub(crate) fn not_found(id: &str) -> VineError {
    VineError::not_found(format!("node not found: {id}")).hint("Use locate() to find entry points.")
}
