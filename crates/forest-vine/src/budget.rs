//! Token sizing and the generic list shrink (vine spec §1.3).
//!
//! Sizes are estimated over the text Python's `json.dumps(x,
//! ensure_ascii=False)` would produce (`forest_catalog::pyjson`), so the
//! budgets agree with the reference engine's. Every cut is explicit: the
//! payload's `truncated` flag is set and the dropped items are named.

use forest_catalog::pyjson::dumps;
use forest_model::tokens::estimate_tokens;
use serde_json::{json, Map, Value};

/// Estimated tokens of a JSON value in its Python textual form.
pub fn estimate(v: &Value) -> usize {
    estimate_tokens(&dumps(v))
}

/// Estimated tokens of an object payload.
pub fn estimate_map(m: &Map<String, Value>) -> usize {
    // The serializer only needs a borrowed view; clone is cheap next to the I/O of a read.
    estimate(&Value::Object(m.clone()))
}

/// Drop items from the tail of `payload[key]` while the whole payload is
/// over `budget`; each drop sets `truncated: true` and its name (by
/// `name_of`) is listed in `payload["dropped"]`, request order kept. The
/// names are sized into the budget too; if the names alone do not fit,
/// they are replaced by `dropped_count`. Returns the number of items dropped.
pub fn shrink_list(payload: &mut Map<String, Value>, key: &str, budget: usize, name_of: fn(&Value) -> Value) -> usize {
    if estimate_map(payload) <= budget {
        return 0;
    }
    let mut dropped: Vec<Value> = Vec::new();
    loop {
        let over = estimate_map(payload) > budget;
        let empty = payload.get(key).and_then(Value::as_array).is_none_or(|a| a.is_empty());
        if !over || empty {
            break;
        }
        let item = match payload.get_mut(key).and_then(Value::as_array_mut).and_then(|a| a.pop()) {
            Some(i) => i,
            None => break,
        };
        dropped.insert(0, name_of(&item));
        payload.insert("truncated".into(), json!(true));
        payload.insert("dropped".into(), Value::Array(dropped.clone()));
    }
    let n = dropped.len();
    if n > 0 && estimate_map(payload) > budget {
        payload.remove("dropped");
        payload.insert("dropped_count".into(), json!(n));
    }
    n
}

/// `item["id"]`, the usual name of a dropped list item.
pub fn id_of(v: &Value) -> Value {
    v.get("id").cloned().unwrap_or(Value::Null)
}

/// First `max_tokens*4` chars, right-trimmed, plus `…` when cut.
pub fn clip(text: &str, max_tokens: usize) -> String {
    forest_model::tokens::truncate_tokens(text, max_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrink_names_what_it_drops() {
        let items: Vec<Value> = (0..40).map(|i| json!({"id": format!("n/{i}"), "summary": "x".repeat(80)})).collect();
        let mut p = Map::new();
        p.insert("results".into(), Value::Array(items));
        p.insert("truncated".into(), json!(false));
        let n = shrink_list(&mut p, "results", 300, id_of);
        assert!(n > 0);
        assert!(estimate_map(&p) <= 300);
        assert_eq!(p["truncated"], json!(true));
        let kept = p["results"].as_array().map(|a| a.len()).unwrap_or(0);
        assert_eq!(kept + n, 40);
        let names = p["dropped"].as_array().cloned().unwrap_or_default();
        assert_eq!(names.first(), Some(&json!(format!("n/{kept}"))));
        assert_eq!(names.last(), Some(&json!("n/39")));
    }

    #[test]
    fn fits_untouched() {
        let mut p = Map::new();
        p.insert("results".into(), json!([{"id": "a"}]));
        assert_eq!(shrink_list(&mut p, "results", 800, id_of), 0);
        assert!(p.get("dropped").is_none());
    }
}
