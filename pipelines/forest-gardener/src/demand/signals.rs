//! Gathering the demand signals of pending leaves from `_derived/`: shared
//! heat (`trails.db`, the persistent scope the Vine's closes and
//! `forest heat deposit` write) and opens (the Vine's traces,
//! `_derived/traces/<session>.jsonl` and their rotated `.jsonl.1`).
//!
//! A trace line records the primitive and the `id` it was called with; a
//! close line records the hunt's `answer_nodes`. `locate`'s results are not
//! in the trace (only its query), so "returned" counts the answers of hunts
//! and "opened" every traced call on an id.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use forest_catalog::Trails;
use forest_derived::catalog::TRAILS_PATH;
use serde_json::Value;

use super::attempts::Attempts;
use super::Demand;

/// Traced primitives that open a node by id.
const OPENING: [&str; 6] = ["look", "move", "pick", "sniff", "view", "query"];

/// Fill in `heat`, `opens` and `attempts` of each leaf, given with its
/// current `scent_hash` (missing stores count as nothing: a forest nobody
/// has walked is ordered by recency).
pub fn gather(forest: &Path, leaves: Vec<(Demand, String)>, attempts: Option<&Attempts>) -> Vec<Demand> {
    let opens = trace_opens(&forest.join("_derived/traces"));
    let ids: Vec<String> = leaves.iter().map(|(d, _)| d.id.clone()).collect();
    let heat = shared_heat(forest, &ids);
    let tried = attempts.map(|a| a.get(&leaves.iter().map(|(d, h)| (d.id.clone(), h.clone())).collect::<Vec<_>>()));
    leaves
        .into_iter()
        .map(|(mut d, _)| {
            d.heat = heat.get(&d.id).copied().unwrap_or(0.0);
            d.opens = opens.get(&d.id).copied().unwrap_or(0);
            d.attempts = tried.as_ref().and_then(|t| t.get(&d.id).copied()).unwrap_or(0);
            d
        })
        .collect()
}

/// Persistent heat of `ids`; empty when there is no heat store yet (it is
/// not created here).
fn shared_heat(forest: &Path, ids: &[String]) -> HashMap<String, f64> {
    let path = forest.join(TRAILS_PATH);
    if !path.exists() {
        return HashMap::new();
    }
    match Trails::open(&path).and_then(|t| t.heat_map(ids, None)) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!(event = "gardener.demand.heat_unreadable", error = %crate::error::chain(&e));
            HashMap::new()
        }
    }
}

/// Opens per id over every trace file in `dir` (unreadable lines skipped:
/// traces are telemetry).
pub fn trace_opens(dir: &Path) -> HashMap<String, u64> {
    let mut counts: HashMap<String, u64> = HashMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return counts };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".jsonl") || name.ends_with(".jsonl.1")) {
            continue;
        }
        let Ok(f) = std::fs::File::open(e.path()) else { continue };
        for line in std::io::BufReader::new(f).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                count_line(&v, &mut counts);
            }
        }
    }
    counts
}

/// One trace line's contribution: a traced call on an id, or a close's
/// answers.
fn count_line(v: &Value, counts: &mut HashMap<String, u64>) {
    if let (Some(p), Some(id)) = (v["primitive"].as_str(), v["id"].as_str()) {
        if OPENING.contains(&p) {
            *counts.entry(id.to_string()).or_default() += 1;
        }
    }
    if let Some(answers) = v["outcome"]["answer_nodes"].as_array() {
        for id in answers.iter().filter_map(Value::as_str) {
            *counts.entry(id.to_string()).or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_count_traced_calls_on_ids_and_hunt_answers() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            r#"{"ts":1,"session":"s","primitive":"pick","id":"a/x","tokens_in":1,"tokens_out":2,"elapsed_ms":0.1}"#,
            r#"{"ts":2,"session":"s","primitive":"look","id":"a/x"}"#,
            r#"{"ts":3,"session":"s","primitive":"locate","id":null}"#,
            r#"{"ts":4,"session":"s","primitive":"scan","id":"a/_index"}"#,
            "not json",
            r#"{"ts":5,"session":"s","outcome":{"success":true,"answer_nodes":["a/y","a/x"]},"metrics":{}}"#,
        ];
        std::fs::write(dir.path().join("s.jsonl"), lines.join("\n")).unwrap();
        std::fs::write(dir.path().join("t.jsonl.1"), r#"{"primitive":"sniff","id":"a/y"}"#).unwrap();
        std::fs::write(dir.path().join("notes.txt"), r#"{"primitive":"pick","id":"a/z"}"#).unwrap();
        let c = trace_opens(dir.path());
        assert_eq!(c.get("a/x"), Some(&3));
        assert_eq!(c.get("a/y"), Some(&2));
        assert_eq!(c.get("a/_index"), None, "scan lists, it does not open");
        assert_eq!(c.get("a/z"), None, "only trace files count");
        assert!(trace_opens(&dir.path().join("missing")).is_empty());
    }
}
