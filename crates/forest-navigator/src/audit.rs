//! The answer gate (navigator spec §1): id repair, the audit checks, the
//! accept rule and the evidence suffix. Pure: the caller passes what the
//! hunt has seen.

use std::collections::{BTreeMap, BTreeSet};

use once_cell::sync::Lazy;
use regex::Regex;

/// Effective confidence at which an answer is accepted.
pub const CONF_ACCEPT: f64 = 0.7;
/// Rejections after which any answer is accepted.
pub const MAX_REJECTIONS: usize = 3;
/// Rejection from which unexplored branches are offered with the fix.
pub const RELOCATE_AFTER: usize = 2;

/// Everything the hunt has seen, for repair and audit.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// Ids that appeared in any result (hits, children, links).
    pub ids: BTreeSet<String>,
    /// Ids whose digest or body was opened (look/pick/query).
    pub opened: BTreeSet<String>,
    /// Dataset ids seen / queried.
    pub datasets: BTreeSet<String>,
    /// Dataset ids successfully queried.
    pub queried: BTreeSet<String>,
    /// Normalised text of every result.
    pub text: String,
    /// Digit strings of every result (from the raw text).
    pub nums: BTreeSet<String>,
    /// Raw evidence text per opened id.
    pub evidence: BTreeMap<String, String>,
}

/// Lowercase; runs of non-`[a-z0-9]` become one space; trimmed.
pub fn norm(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut gap = false;
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

static DIGITS: Lazy<Regex> = Lazy::new(|| Regex::new(r"[0-9][0-9.,]*[0-9]|[0-9]").expect("regex"));
static ID_LIKE: Lazy<Regex> = Lazy::new(|| Regex::new(r"[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)+").expect("regex"));

/// Digit strings of `s` (separators dropped: "1,234.5" → "12345").
pub fn numbers(s: &str) -> Vec<String> {
    DIGITS.find_iter(s).map(|m| m.as_str().chars().filter(char::is_ascii_digit).collect()).collect()
}

/// Repair the model's answer ids: rescue `a/b` from garbled strings; an
/// unknown id becomes the unique seen id with the same last segment; an
/// empty list becomes ≤ 2 opened nodes whose evidence holds the proof, else
/// the ≤ 2 sharing most numbers with `text`.
pub fn repair_ids(nodes: &[String], text: &str, proof: &str, seen: &Seen) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for raw in nodes {
        let id = raw.trim().trim_matches('/').to_string();
        let id = if seen.ids.contains(&id) || seen.opened.contains(&id) {
            id
        } else if let Some(m) = ID_LIKE.find(raw).map(|m| m.as_str().trim_matches('/').to_string()) {
            m
        } else {
            id
        };
        let known = |i: &String| seen.ids.contains(i) || seen.opened.contains(i);
        let id = if known(&id) {
            id
        } else {
            let last = id.rsplit('/').next().unwrap_or("").to_string();
            let same: Vec<&String> = seen
                .ids
                .iter()
                .chain(seen.opened.iter())
                .filter(|s| s.rsplit('/').next() == Some(last.as_str()))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if same.len() == 1 {
                same[0].clone()
            } else {
                id
            }
        };
        if !id.is_empty() && !out.contains(&id) {
            out.push(id);
        }
    }
    if !out.is_empty() {
        return out;
    }
    let p = norm(proof);
    if !p.is_empty() {
        let hits: Vec<String> =
            seen.evidence.iter().filter(|(_, e)| norm(e).contains(&p)).map(|(i, _)| i.clone()).take(2).collect();
        if !hits.is_empty() {
            return hits;
        }
    }
    let want: BTreeSet<String> = numbers(text).into_iter().filter(|n| n.len() >= 2).collect();
    if want.is_empty() {
        return vec![];
    }
    let mut scored: Vec<(usize, String)> = seen
        .evidence
        .iter()
        .map(|(i, e)| (numbers(e).iter().filter(|n| want.contains(*n)).count(), i.clone()))
        .filter(|(n, _)| *n > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(2).map(|(_, i)| i).collect()
}

/// The outcome of the audit: score, the failing check, what to fix.
#[derive(Debug, Clone, PartialEq)]
pub struct Audit {
    /// 0.0 … 0.9.
    pub score: f64,
    /// Name of the first failing check (`ok` when none).
    pub check: &'static str,
    /// The fix sent back with a rejection.
    pub fix: String,
    /// Whether the failing check bounces only once.
    pub soft: bool,
}

fn fail(score: f64, check: &'static str, fix: impl Into<String>, soft: bool) -> Audit {
    Audit { score, check, fix: fix.into(), soft }
}

/// The audit checks in order, first failing wins; soft checks already in
/// `bounced` are skipped (each bounces once).
pub fn audit(text: &str, nodes: &[String], proof: &str, seen: &Seen, bounced: &BTreeSet<&'static str>) -> Audit {
    let live = |c: &'static str| !bounced.contains(c);
    if nodes.is_empty() {
        return fail(0.0, "no_nodes", "cite the exact full ids of the nodes that hold the answer", false);
    }
    if let Some(u) = nodes.iter().find(|n| !seen.ids.contains(*n) && !seen.opened.contains(*n)) {
        return fail(0.0, "unknown_id", format!("'{u}' never appeared in a result; cite ids you saw"), false);
    }
    if let Some(d) = nodes.iter().find(|n| seen.datasets.contains(*n) && !seen.queried.contains(*n)) {
        return fail(
            0.2,
            "dataset_unqueried",
            format!("'{d}' is a dataset: read it with query before citing it"),
            false,
        );
    }
    let nt = norm(text);
    let unqueried = seen.datasets.iter().any(|d| !seen.queried.contains(d));
    if unqueried && (nt.contains("not available") || nt.contains("no information") || nt.contains("not found")) {
        return fail(
            0.2,
            "absent_claim",
            "a dataset you saw was never queried: query it before saying it is absent",
            false,
        );
    }
    if live("unopened") {
        if let Some(n) = nodes.iter().find(|n| !seen.opened.contains(*n)) {
            return fail(0.3, "unopened", format!("open '{n}' (look or pick) before citing it"), true);
        }
    }
    if live("number") {
        if let Some(x) =
            numbers(text).into_iter().find(|x| x.len() >= 2 && !seen.nums.iter().any(|s| s.starts_with(x.as_str())))
        {
            return fail(
                0.3,
                "number",
                format!("the number {x} appears in no result; copy numbers from the evidence"),
                true,
            );
        }
    }
    let np = norm(proof);
    if live("proof_unseen") && !np.is_empty() && !seen.text.contains(&np) {
        return fail(0.5, "proof_unseen", "proof must be one sentence copied verbatim from a result", true);
    }
    if live("no_proof") && np.is_empty() {
        return fail(0.6, "no_proof", "add proof: one sentence copied verbatim from a result", true);
    }
    fail(0.9, "ok", "", false)
}

/// The accept rule: effective ≥ 0.7, or 3 rejections, or ≤ 1 step left.
pub fn accept(effective: f64, rejections: usize, steps_left: usize) -> bool {
    effective >= CONF_ACCEPT || rejections >= MAX_REJECTIONS || steps_left <= 1
}

/// Accepted proof seen but absent from the text: ` [evidence: "<proof>"]`.
pub fn with_evidence(text: &str, proof: &str, seen: &Seen) -> String {
    let np = norm(proof);
    if np.is_empty() || !seen.text.contains(&np) || norm(text).contains(&np) {
        return text.to_string();
    }
    format!("{text} [evidence: \"{}\"]", proof.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen() -> Seen {
        let mut s = Seen::default();
        s.ids.extend(["sales/report-q1-2026".to_string(), "products/sensor-x".to_string(), "data/sales".to_string()]);
        s.opened.insert("products/sensor-x".into());
        s.datasets.insert("data/sales".into());
        let raw = "The Sensor X has catalog code A-101. Revenue was 1,234,500 in Q1.";
        s.text = norm(raw);
        s.nums = numbers(raw).into_iter().collect();
        s.evidence.insert("products/sensor-x".into(), raw.to_string());
        s
    }

    #[test]
    fn norm_and_numbers() {
        assert_eq!(norm("  Hello, WORLD!! a-101 "), "hello world a 101");
        assert_eq!(numbers("R$ 1,234.50 and 7"), vec!["123450", "7"]);
    }

    #[test]
    fn repair_rescues_and_resolves() {
        let s = seen();
        let got = repair_ids(&["see `products/sensor-x`!".into(), "report-q1-2026".into()], "", "", &s);
        assert_eq!(got, vec!["products/sensor-x", "sales/report-q1-2026"]);
        let by_proof = repair_ids(&[], "", "catalog code A-101", &s);
        assert_eq!(by_proof, vec!["products/sensor-x"]);
        let by_num = repair_ids(&[], "about 1,234,500", "", &s);
        assert_eq!(by_num, vec!["products/sensor-x"]);
        assert!(repair_ids(&[], "nothing", "", &s).is_empty());
    }

    #[test]
    fn audit_order_and_soft_bounces() {
        let s = seen();
        let none = BTreeSet::new();
        let ids = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(audit("x", &[], "", &s, &none).check, "no_nodes");
        assert_eq!(audit("x", &ids(&["nope/x"]), "", &s, &none).score, 0.0);
        assert_eq!(audit("x", &ids(&["data/sales"]), "", &s, &none).check, "dataset_unqueried");
        assert_eq!(audit("x", &ids(&["sales/report-q1-2026"]), "", &s, &none).check, "unopened");
        let p = ids(&["products/sensor-x"]);
        assert_eq!(audit("code 999", &p, "", &s, &none).check, "number");
        assert_eq!(audit("code A-101", &p, "Sensor X has catalog code A-101", &s, &none).score, 0.9);
        assert_eq!(audit("code 101", &p, "made up", &s, &none).check, "proof_unseen");
        assert_eq!(audit("code 101", &p, "", &s, &none).check, "no_proof");
        let bounced: BTreeSet<&'static str> = ["no_proof"].into_iter().collect();
        assert_eq!(audit("code 101", &p, "", &s, &bounced).score, 0.9);
        assert!(accept(0.9, 0, 5) && accept(0.2, 3, 5) && accept(0.0, 0, 1) && !accept(0.6, 2, 4));
        assert_eq!(with_evidence("A-101", "catalog code A-101", &s), "A-101 [evidence: \"catalog code A-101\"]");
        assert_eq!(with_evidence("the catalog code A-101", "catalog code A-101", &s), "the catalog code A-101");
    }
}
