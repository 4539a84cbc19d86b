//! The batch rules shared by `look` and `pick` (spec C.11): the ids of a
//! batch call, and whole items dropped from a batch answer over budget.
//!
//! In: ids, an answer. Out: checked ids, a shrunk answer. Touches nothing.

use serde_json::{json, Map, Value};

use crate::budget::{estimate_map, id_of};
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

/// Drop whole items from the tail of `nodes` into `dropped` (request
/// order kept) while the batch payload is over `budget`.
pub(crate) fn batch_shrink(out: &mut Map<String, Value>, budget: usize) {
    while estimate_map(out) > budget {
        let Some(item) = out.get_mut("nodes").and_then(Value::as_array_mut).and_then(|a| a.pop()) else { break };
        if let Some(arr) = out.get_mut("dropped").and_then(Value::as_array_mut) {
            arr.insert(0, id_of(&item));
        }
        out.insert("truncated".into(), json!(true));
    }
}
