//! The batch rules shared by `look` and `pick` (spec C.11): the ids of a
//! batch call, and whole items dropped from a batch answer over budget.
//!
//! In: ids, an answer. Out: checked ids, a shrunk answer. Touches nothing.

use crate::budget::estimate_of;
use crate::engine::norm_id;
use crate::error::{VResult, VineError};

/// C.11 batch id rules: non-empty, capped, duplicates collapsed (first kept).
pub(crate) fn batch_ids(prim: &str, list: &[String], cap: usize) -> VResult<Vec<String>> {
    if list.is_empty() {
        return Err(VineError::schema(format!("{prim} received an empty id list")));
    }
    if list.len() > cap {
        return Err(VineError::schema(format!("{prim} accepts at most {cap} ids in one call; got {}", list.len())));
    }
    let mut seen = std::collections::HashSet::new();
    Ok(list.iter().map(|s| norm_id(s)).filter(|s| seen.insert(s.clone())).collect())
}

/// The parts of a batch answer the shrink edits: its items, the names
/// of those dropped and its `truncated` flag.
pub(crate) type BatchParts<'a, T> = (&'a mut Vec<T>, &'a mut Vec<String>, &'a mut bool);

/// Drop whole items from the tail of the batch's items into its dropped
/// names (request order kept) while the batch answer is over `budget`.
pub(crate) fn batch_shrink<P: serde::Serialize, T>(
    out: &mut P,
    budget: usize,
    parts: impl Fn(&mut P) -> BatchParts<'_, T>,
    name_of: impl Fn(&T) -> String,
) {
    while estimate_of(out) > budget {
        let (items, dropped, truncated) = parts(out);
        let Some(item) = items.pop() else { break };
        dropped.insert(0, name_of(&item));
        *truncated = true;
    }
}
