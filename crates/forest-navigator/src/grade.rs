//! Bench questions and grading (navigator spec §3): the reference's
//! question files read unchanged, `correct_text`, `banana_precision`, and
//! the per-arm summary statistics. Pure.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One bench question (v1-v4, wide, demo files; unknown fields ignored).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Question {
    /// Question id.
    pub id: String,
    /// The question text.
    pub question: String,
    /// Ids of the nodes that hold the answer.
    #[serde(default)]
    pub expected_nodes: Vec<String>,
    /// Substrings every correct answer contains (case-insensitive).
    #[serde(default)]
    pub answer_contains: Vec<String>,
    /// Hops a walk needs at least (informational, v3/v4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_hops: Option<u64>,
    /// Independent sub-chains (v4): drives the step budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_width: Option<u64>,
}

/// Parse a question file (a JSON array of questions).
pub fn parse_questions(text: &str) -> Result<Vec<Question>, serde_json::Error> {
    serde_json::from_str(text)
}

/// Answer non-null and each `answer_contains` item a case-insensitive substring.
pub fn correct_text(answer: Option<&str>, q: &Question) -> bool {
    match answer {
        None => false,
        Some(a) => {
            let a = a.to_lowercase();
            q.answer_contains.iter().all(|c| a.contains(&c.to_lowercase()))
        }
    }
}

/// `|H∩E|/|H|` over answer nodes with `#…` stripped, 0 when H = ∅, 2 dp.
pub fn banana_precision(answer_nodes: &[String], expected: &[String]) -> f64 {
    let h: BTreeSet<&str> = answer_nodes.iter().map(|n| n.split('#').next().unwrap_or("")).collect();
    if h.is_empty() {
        return 0.0;
    }
    let e: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
    round2(h.intersection(&e).count() as f64 / h.len() as f64)
}

/// Ground-truth success (heat deposit rule): answer and a hit on expected.
pub fn success(answer: Option<&str>, answer_nodes: &[String], expected: &[String]) -> bool {
    answer.is_some_and(|a| !a.is_empty()) && answer_nodes.iter().any(|n| expected.contains(n))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Python's `round` (half to even) of a non-negative float to an integer.
fn round_half_even(x: f64) -> usize {
    let f = x.floor();
    let d = x - f;
    let n = f as usize;
    if (d - 0.5).abs() < 1e-12 {
        if n.is_multiple_of(2) {
            n
        } else {
            n + 1
        }
    } else if d > 0.5 {
        n + 1
    } else {
        n
    }
}

/// Median of values (mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if !n.is_multiple_of(2) {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// p95 as the reference: sorted at `min(n−1, round(0.95·(n−1)))`.
pub fn p95(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    s[(n - 1).min(round_half_even(0.95 * (n - 1) as f64))]
}

/// The inputs of one arm's summary row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Graded {
    /// Text correct.
    pub correct: bool,
    /// Precision.
    pub precision: f64,
    /// Observation tokens.
    pub tokens: usize,
    /// Wall seconds.
    pub wall_s: f64,
    /// Hops, when the arm has them.
    pub hops: Option<usize>,
}

/// Per-arm summary (reference names, plus tokens per correct and hops).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Summary {
    /// Arm name (`<arm>/single-chain`, `<arm>/fork` for split rows).
    pub arm: String,
    /// Correct answers.
    pub correct: usize,
    /// Questions.
    pub n: usize,
    /// correct / n, 2 dp.
    pub accuracy: f64,
    /// Mean banana precision, 2 dp.
    pub precision_mean: f64,
    /// Median observation tokens (truncated).
    pub tokens_median: usize,
    /// Mean observation tokens (1 dp).
    pub tokens_mean: f64,
    /// Total observation tokens ÷ correct answers (null with none correct).
    pub tokens_per_correct: Option<f64>,
    /// Median wall seconds (p50), 1 dp.
    pub wall_s_median: f64,
    /// p95 wall seconds, 1 dp.
    pub wall_s_p95: f64,
    /// Total wall seconds, 1 dp.
    pub wall_s_total: f64,
    /// Mean hops over results that report them (null when none do).
    pub hops_mean: Option<f64>,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Summarise graded results of one arm.
pub fn summarize(arm: &str, rows: &[Graded]) -> Summary {
    let n = rows.len();
    let correct = rows.iter().filter(|r| r.correct).count();
    let tokens: Vec<f64> = rows.iter().map(|r| r.tokens as f64).collect();
    let walls: Vec<f64> = rows.iter().map(|r| r.wall_s).collect();
    let total_tokens: f64 = tokens.iter().sum();
    let hops: Vec<f64> = rows.iter().filter_map(|r| r.hops.map(|h| h as f64)).collect();
    Summary {
        arm: arm.to_string(),
        correct,
        n,
        accuracy: if n == 0 { 0.0 } else { round2(correct as f64 / n as f64) },
        precision_mean: if n == 0 { 0.0 } else { round2(rows.iter().map(|r| r.precision).sum::<f64>() / n as f64) },
        tokens_median: median(&tokens) as usize,
        tokens_mean: if n == 0 { 0.0 } else { round1(total_tokens / n as f64) },
        tokens_per_correct: (correct > 0).then(|| round1(total_tokens / correct as f64)),
        wall_s_median: round1(median(&walls)),
        wall_s_p95: round1(p95(&walls)),
        wall_s_total: round1(walls.iter().sum()),
        hops_mean: (!hops.is_empty()).then(|| round2(hops.iter().sum::<f64>() / hops.len() as f64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q() -> Question {
        Question {
            id: "q".into(),
            question: "?".into(),
            expected_nodes: vec!["a/b".into(), "c/d".into()],
            answer_contains: vec!["Jimmy".into(), "recife".into()],
            min_hops: None,
            fork_width: None,
        }
    }

    #[test]
    fn grading_follows_the_reference() {
        assert!(correct_text(Some("jimmy lives in RECIFE"), &q()));
        assert!(!correct_text(Some("Jimmy"), &q()));
        assert!(!correct_text(None, &q()));
        assert_eq!(banana_precision(&["a/b#3".into(), "x/y".into(), "z".into()], &q().expected_nodes), 0.33);
        assert_eq!(banana_precision(&[], &q().expected_nodes), 0.0);
        assert!(success(Some("x"), &["c/d".into()], &q().expected_nodes));
        assert!(!success(Some(""), &["c/d".into()], &q().expected_nodes));
    }

    #[test]
    fn statistics_match_python() {
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
        // n = 11: index round(9.5) = 10 (half to even); n = 12: round(10.45) = 10.
        let v: Vec<f64> = (0..11).map(f64::from).collect();
        assert_eq!(p95(&v), 10.0);
        let w: Vec<f64> = (0..12).map(f64::from).collect();
        assert_eq!(p95(&w), 10.0);
        assert_eq!(round_half_even(2.5), 2);
        assert_eq!(round_half_even(3.5), 4);
        let g = |c, t| Graded { correct: c, precision: 1.0, tokens: t, wall_s: 1.0, hops: Some(2) };
        let s = summarize("greedy", &[g(true, 100), g(false, 300), g(true, 200)]);
        assert_eq!((s.correct, s.n, s.tokens_median, s.tokens_per_correct), (2, 3, 200, Some(300.0)));
        assert_eq!(s.hops_mean, Some(2.0));
    }

    #[test]
    fn reads_the_reference_files() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures");
        for f in ["questions-v1.json", "questions-demo.json"] {
            let qs = parse_questions(&std::fs::read_to_string(root.join(f)).unwrap()).unwrap();
            assert!(qs.len() >= 10 && qs.iter().all(|q| !q.expected_nodes.is_empty()), "{f}");
        }
    }
}
