//! What a result teaches the harness: ids seen, hits pending, opened
//! nodes, datasets, and the normalised text the audit checks against.
//! Pure over JSON values.

use serde_json::Value;

use crate::audit::{norm, numbers, Seen};

/// Every string leaf of `v`, space-joined.
pub fn strings(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push(' ');
            }
            Value::Number(n) => {
                out.push_str(&n.to_string());
                out.push(' ');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut s = String::new();
    walk(v, &mut s);
    s
}

/// Ids named in a result (`id`/`target` keys, any depth), in order, and
/// the ids of objects whose `type` is `dataset`.
pub fn ids_in(v: &Value) -> (Vec<String>, Vec<String>) {
    fn walk(v: &Value, ids: &mut Vec<String>, ds: &mut Vec<String>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, ids, ds)),
            Value::Object(m) => {
                for key in ["id", "target"] {
                    if let Some(s) = m.get(key).and_then(Value::as_str) {
                        if !ids.iter().any(|i| i == s) {
                            ids.push(s.to_string());
                        }
                        if m.get("type").and_then(Value::as_str) == Some("dataset") && !ds.iter().any(|d| d == s) {
                            ds.push(s.to_string());
                        }
                    }
                }
                m.values().for_each(|x| walk(x, ids, ds));
            }
            _ => {}
        }
    }
    let (mut ids, mut ds) = (vec![], vec![]);
    walk(v, &mut ids, &mut ds);
    (ids, ds)
}

/// Hit ids of a search result (`results[].id`), in rank order.
pub fn hits(v: &Value) -> Vec<String> {
    v.get("results")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|x| x.get("id").and_then(Value::as_str).map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Fold a successful result of `tool` on `id` into what has been seen.
pub fn absorb(seen: &mut Seen, tool: &str, id: Option<&str>, result: &Value) {
    let (ids, ds) = ids_in(result);
    seen.ids.extend(ids);
    seen.datasets.extend(ds);
    let raw = strings(result);
    seen.nums.extend(numbers(&raw));
    if let Some(id) = id {
        if matches!(tool, "look" | "pick" | "query") {
            seen.opened.insert(id.to_string());
            let e = seen.evidence.entry(id.to_string()).or_default();
            e.push(' ');
            e.push_str(&raw);
        }
        if tool == "query" {
            seen.queried.insert(id.to_string());
        }
    }
    // Batched look/pick name their nodes inside the result.
    if matches!(tool, "look" | "pick") && id.is_none() {
        for n in result.get("nodes").and_then(Value::as_array).into_iter().flatten() {
            if let Some(nid) = n.get("id").and_then(Value::as_str) {
                seen.opened.insert(nid.to_string());
                seen.evidence.entry(nid.to_string()).or_default().push_str(&strings(n));
            }
        }
    }
    seen.text.push(' ');
    seen.text.push_str(&norm(&raw));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absorbs_ids_datasets_and_text() {
        let mut s = Seen::default();
        let r = json!({"results": [{"id": "a/b", "type": "note"}, {"id": "s/d", "type": "dataset"}],
            "edges": [{"target": "c/d"}]});
        assert_eq!(hits(&r), vec!["a/b", "s/d"]);
        absorb(&mut s, "locate", None, &r);
        assert!(s.ids.contains("c/d") && s.datasets.contains("s/d") && s.opened.is_empty());
        absorb(&mut s, "pick", Some("a/b"), &json!({"id": "a/b", "body": "Revenue was 1,200."}));
        assert!(
            s.opened.contains("a/b") && s.evidence["a/b"].contains("Revenue was 1,200.") && s.nums.contains("1200")
        );
        absorb(&mut s, "look", None, &json!({"nodes": [{"id": "x/y", "summary": "S"}]}));
        assert!(s.opened.contains("x/y"));
        absorb(&mut s, "query", Some("s/d"), &json!({"rows": [[1]]}));
        assert!(s.queried.contains("s/d"));
    }
}
