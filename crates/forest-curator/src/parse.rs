//! Reading model replies: JSON extraction, truncated-reply salvage, tags.

use once_cell::sync::Lazy;
use regex::Regex;
use serde_json::{Map, Value};

static OBJECT: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?s)\{.*\}").expect("static regex"));
static SALVAGE: Lazy<Regex> =
    Lazy::new(|| Regex::new(r#"(?s)"summary"\s*:\s*"((?:[^"\\]|\\.)*)"#).expect("static regex"));
static TAG: Lazy<Regex> = Lazy::new(|| Regex::new(r"^[a-z0-9][a-z0-9_-]*$").expect("static regex"));

/// Maximum tags taken from one reply.
pub const MAX_TAGS: usize = 5;

/// The first `{...}` span (greedy, multiline) parsed as a JSON object.
pub fn json_object(reply: &str) -> Option<Map<String, Value>> {
    let m = OBJECT.find(reply)?;
    match serde_json::from_str::<Value>(m.as_str()) {
        Ok(Value::Object(o)) => Some(o),
        _ => None,
    }
}

/// A summary (maybe blank) and its raw tags, read from a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Summary text (`None` when absent or not a string).
    pub summary: Option<String>,
    /// Cleaned tags.
    pub tags: Vec<String>,
}

/// Parse a summary reply: JSON object first, else salvage a truncated reply
/// by regex on `"summary": "<...>` (closing quote optional, tags = []).
pub fn summary_reply(reply: &str) -> Reply {
    if let Some(o) = json_object(reply) {
        if let Some(Value::String(s)) = o.get("summary") {
            let tags = o.get("tags").and_then(Value::as_array).map(|a| clean_tags(a)).unwrap_or_default();
            return Reply { summary: Some(s.clone()), tags };
        }
    }
    let summary = SALVAGE.captures(reply).and_then(|c| c.get(1)).map(|m| unescape(m.as_str()));
    Reply { summary, tags: Vec::new() }
}

/// JSON-unescape a captured string body; a dangling escape (cut mid-`\u`)
/// is dropped, an undecodable one kept raw.
fn unescape(raw: &str) -> String {
    let mut s = raw.to_string();
    for _ in 0..6 {
        if let Ok(Value::String(v)) = serde_json::from_str::<Value>(&format!("\"{s}\"")) {
            return v;
        }
        match s.rfind('\\') {
            Some(i) if s.len() - i <= 6 => s.truncate(i),
            _ => break,
        }
    }
    raw.to_string()
}

/// Tags: strings only, trimmed, lowercased, matching `^[a-z0-9][a-z0-9_-]*$`,
/// deduplicated, at most five.
pub fn clean_tags(raw: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in raw {
        let Some(s) = v.as_str() else { continue };
        let t = s.trim().to_lowercase();
        if TAG.is_match(&t) && !out.contains(&t) {
            out.push(t);
            if out.len() == MAX_TAGS {
                break;
            }
        }
    }
    out
}

/// Append `new` tags after `existing`, skipping duplicates (dialect §4.3).
pub fn append_tags(existing: &[String], new: &[String]) -> Vec<String> {
    let mut out = existing.to_vec();
    for t in new {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extracts_object_amid_prose() {
        let r =
            summary_reply("Sure! {\"summary\": \"Cats.\", \"tags\": [\"Pets\", \"pets\", \"été\", 3, \"a-b\"]} bye");
        assert_eq!(r.summary.as_deref(), Some("Cats."));
        assert_eq!(r.tags, vec!["pets", "a-b"]);
    }

    #[test]
    fn salvages_truncated_reply() {
        let r = summary_reply("{\"summary\": \"Sales \\\"Q1\\\" 2026, 14 rows");
        assert_eq!(r.summary.as_deref(), Some("Sales \"Q1\" 2026, 14 rows"));
        assert!(r.tags.is_empty());
        let r = summary_reply("{\"summary\": \"Cut mid escape \\u00");
        assert_eq!(r.summary.as_deref(), Some("Cut mid escape "));
    }

    #[test]
    fn garbage_has_no_summary() {
        assert_eq!(summary_reply("I cannot do that.").summary, None);
        assert_eq!(summary_reply("{\"summary\": 3}").summary, None);
    }

    #[test]
    fn tags_capped_and_merged() {
        let raw: Vec<Value> = (0..9).map(|i| json!(format!("t{i}"))).collect();
        assert_eq!(clean_tags(&raw).len(), MAX_TAGS);
        let merged = append_tags(&["a".into(), "t0".into()], &clean_tags(&raw));
        assert_eq!(merged[..3], ["a".to_string(), "t0".into(), "t1".into()]);
    }
}
