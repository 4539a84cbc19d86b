//! `forest bench`: every arm over every question, graded as the reference
//! grades (`answer_contains`, `expected_nodes`), with per-arm summaries
//! (accuracy, tokens per correct answer, p50/p95 wall time, hops) and a
//! per-question table.

use std::collections::BTreeMap;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::baselines::{chunk_forest, greedy, iterative, topk, ArmAnswer};
use crate::chunks::ChunkIndex;
use crate::forest::{Chat, Forest};
use crate::grade::{banana_precision, correct_text, summarize, Graded, Question, Summary};
use crate::navigator::{hunt, HuntOptions};
use crate::protocol::{step_budget, Actions};
use crate::troop::{troop, StopPolicy, TroopOptions};
use crate::NavError;

/// Arms of the bench.
pub const ARMS: [&str; 5] = ["greedy", "topk", "iterative", "navigator", "troop"];

/// Whether an arm calls the model.
pub fn needs_llm(arm: &str) -> bool {
    arm != "greedy"
}

/// One graded answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct BenchRow {
    /// Question id.
    pub id: String,
    /// Question text.
    pub question: String,
    /// The arm's answer.
    pub answer: Option<String>,
    /// Cited nodes.
    pub answer_nodes: Vec<String>,
    /// Ground truth nodes.
    pub expected_nodes: Vec<String>,
    /// Every `answer_contains` item found.
    pub correct_text: bool,
    /// |H∩E|/|H|.
    pub banana_precision: f64,
    /// Observation tokens.
    pub tokens: usize,
    /// Wall seconds.
    pub wall_s: f64,
    /// Hops (null when the arm has none).
    pub hops: Option<usize>,
    /// Question width (v4), for the single-chain/fork split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_width: Option<u64>,
    /// Arm detail (path, chunks, confidence, stop, LLM cost).
    pub detail: Value,
}

/// The bench report (`forest bench --json`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct BenchReport {
    /// Forest directory.
    pub forest: String,
    /// Question file.
    pub questions: String,
    /// Chat model (null when only model-free arms ran).
    pub model: Option<String>,
    /// How the navigator and troop arms asked for actions: `schema`
    /// (`response_format` json_schema) or `text` (the prompt only).
    #[serde(default)]
    pub actions: Actions,
    /// What the model actually got: `text` when `actions` is `text` or the
    /// server refused `response_format` (null when no LLM arm ran).
    #[serde(default)]
    pub actions_used: Option<Actions>,
    /// One row per arm (plus `<arm>/single-chain`, `<arm>/fork` when any
    /// question has `fork_width ≥ 2`).
    pub summaries: Vec<Summary>,
    /// Per arm, one row per question.
    pub results: BTreeMap<String, Vec<BenchRow>>,
}

/// Bench settings.
pub struct BenchOptions<'a> {
    /// Arms to run, in order.
    pub arms: Vec<String>,
    /// Chat model for the LLM arms.
    pub llm: Option<&'a dyn Chat>,
    /// Troop size.
    pub troop_n: usize,
    /// Troop stop policy.
    pub stop_policy: StopPolicy,
    /// Navigator step budget override (default B(q)).
    pub budget: Option<usize>,
    /// Schema-constrained actions or the text protocol.
    pub actions: Actions,
}

/// Per arm, the graded rows.
pub type Results = BTreeMap<String, Vec<BenchRow>>;

/// Opens a forest for one hunt with the given session id.
pub type Opener<'a> = dyn FnMut(&str) -> Result<Box<dyn Forest>, NavError> + 'a;

/// What a model got when `asked`: `text` when asked for it, or when the
/// model has no structured output (a server that refused `response_format`).
pub fn actions_used(asked: Actions, llm: &dyn Chat) -> Actions {
    if asked == Actions::Schema && llm.structured() {
        Actions::Schema
    } else {
        Actions::Text
    }
}

/// Check arm names and that LLM arms have a model.
pub fn check_arms(arms: &[String], has_llm: bool) -> Result<(), NavError> {
    for a in arms {
        if !ARMS.contains(&a.as_str()) {
            return Err(NavError::Usage(format!("unknown arm '{a}' (greedy|topk|iterative|navigator|troop)")));
        }
        if needs_llm(a) && !has_llm {
            return Err(NavError::Usage(format!(
                "arm '{a}' needs a chat model: pass --endpoint or set MONKEYLLM_LLM_ENDPOINT"
            )));
        }
    }
    Ok(())
}

/// Run the bench; `progress(arm, row)` is called after each question.
pub fn run_bench(
    open: &mut Opener<'_>,
    questions: &[Question],
    o: &BenchOptions<'_>,
    progress: &mut dyn FnMut(&str, &BenchRow),
) -> Result<(Vec<Summary>, Results), NavError> {
    check_arms(&o.arms, o.llm.is_some())?;
    let mut index: Option<ChunkIndex> = None;
    let mut results = BTreeMap::new();
    let mut summaries = vec![];
    for arm in &o.arms {
        if (arm == "topk" || arm == "iterative") && index.is_none() {
            let mut f = open("bench-chunks")?;
            let chunks = chunk_forest(f.as_mut());
            still_there(f.as_ref())?;
            index = Some(ChunkIndex::build(chunks).map_err(|e| NavError::Chunks(e.to_string()))?);
        }
        let mut rows = vec![];
        for q in questions {
            let started = Instant::now();
            let a = run_arm(arm, open, q, o, index.as_ref())?;
            let row = grade_row(q, a, started.elapsed().as_secs_f64());
            progress(arm, &row);
            rows.push(row);
        }
        summaries.extend(summaries_of(arm, &rows));
        results.insert(arm.clone(), rows);
    }
    Ok((summaries, results))
}

fn run_arm(
    arm: &str,
    open: &mut Opener<'_>,
    q: &Question,
    o: &BenchOptions<'_>,
    index: Option<&ChunkIndex>,
) -> Result<ArmAnswer, NavError> {
    let llm = o.llm;
    Ok(match (arm, llm, index) {
        ("greedy", _, _) => {
            let mut f = open(&format!("greedy-{}", q.id))?;
            let a = greedy(f.as_mut(), &q.question);
            still_there(f.as_ref())?;
            a
        }
        ("topk", Some(l), Some(ix)) => topk(ix, l, &q.question),
        ("iterative", Some(l), Some(ix)) => iterative(ix, l, &q.question),
        ("navigator", Some(l), _) => {
            let mut f = open(&format!("demo-{}", q.id))?;
            let budget = o.budget.unwrap_or_else(|| step_budget(q.fork_width));
            let opts = HuntOptions {
                expected: Some(q.expected_nodes.clone()),
                actions: o.actions,
                ..HuntOptions::solo(budget)
            };
            let r = hunt(f.as_mut(), l, &q.question, opts);
            still_there(f.as_ref())?;
            ArmAnswer {
                answer: r.answer.clone(),
                answer_nodes: r.answer_nodes.clone(),
                tokens: r.cost.observation_tokens,
                hops: r.cost.hops_to_banana,
                detail: json!({"confidence": r.confidence, "stop": r.stop, "forced": r.forced,
                    "rejections": r.rejections, "cost": r.cost, "error": r.error,
                    "model_turns": model_turns(&r.trail)}),
            }
        }
        ("troop", Some(l), _) => {
            let mut f = open(&format!("troop-{}-{}", q.id, &forest_vine::new_session_id()[..6]))?;
            let opts = TroopOptions {
                n: o.troop_n,
                policy: o.stop_policy,
                fork_width: q.fork_width.unwrap_or(1) as usize,
                expected: Some(q.expected_nodes.clone()),
                actions: o.actions,
            };
            let (r, info) = troop(f.as_mut(), l, &q.question, &opts);
            still_there(f.as_ref())?;
            ArmAnswer {
                answer: r.answer.clone(),
                answer_nodes: r.answer_nodes.clone(),
                tokens: r.cost.observation_tokens,
                hops: r.cost.hops_to_banana,
                detail: json!({"cost": r.cost, "troop": info}),
            }
        }
        (other, _, _) => return Err(NavError::Usage(format!("arm '{other}' cannot run here"))),
    })
}

/// What the model's turns were, by kind (`call`, `repeat`, `error`,
/// `unparseable`, `unknown_tool`, `answer`, `rejected`, `synthesis`...),
/// and the tools of the calls that ran, in order.
pub fn model_turns(trail: &[crate::report::Step]) -> Value {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    let mut tools = vec![];
    for st in trail.iter().filter(|s| s.by == "model") {
        *kinds.entry(st.kind.as_str()).or_default() += 1;
        if st.kind == "call" {
            tools.push(st.tool.clone().unwrap_or_default());
        }
    }
    json!({"kinds": kinds, "tools": tools})
}

/// A forest server gone ends the bench with one error (the rest would
/// only grade error envelopes).
fn still_there(f: &dyn Forest) -> Result<(), NavError> {
    f.lost().map_or(Ok(()), |why| Err(NavError::Lost(why)))
}

/// Grade one answer.
pub fn grade_row(q: &Question, a: ArmAnswer, wall_s: f64) -> BenchRow {
    BenchRow {
        id: q.id.clone(),
        question: q.question.clone(),
        correct_text: correct_text(a.answer.as_deref(), q),
        banana_precision: banana_precision(&a.answer_nodes, &q.expected_nodes),
        answer: a.answer,
        answer_nodes: a.answer_nodes,
        expected_nodes: q.expected_nodes.clone(),
        tokens: a.tokens,
        wall_s: (wall_s * 1000.0).round() / 1000.0,
        hops: a.hops,
        fork_width: q.fork_width,
        detail: a.detail,
    }
}

/// The arm's summary row, plus the single-chain/fork split when any
/// question is wider than 1.
pub fn summaries_of(arm: &str, rows: &[BenchRow]) -> Vec<Summary> {
    let g = |r: &BenchRow| Graded {
        correct: r.correct_text,
        precision: r.banana_precision,
        tokens: r.tokens,
        wall_s: r.wall_s,
        hops: r.hops,
    };
    let all: Vec<Graded> = rows.iter().map(g).collect();
    let mut out = vec![summarize(arm, &all)];
    if rows.iter().any(|r| r.fork_width.unwrap_or(1) >= 2) {
        let (fork, single): (Vec<&BenchRow>, Vec<&BenchRow>) =
            rows.iter().partition(|r| r.fork_width.unwrap_or(1) >= 2);
        out.push(summarize(&format!("{arm}/single-chain"), &single.into_iter().map(g).collect::<Vec<_>>()));
        out.push(summarize(&format!("{arm}/fork"), &fork.into_iter().map(g).collect::<Vec<_>>()));
    }
    out
}

/// The text table: summaries, then one line per question and arm.
pub fn render(report: &BenchReport) -> String {
    let mut s = format!(
        "bench: {} questions from {} on {}\n\n",
        report.results.values().next().map_or(0, Vec::len),
        report.questions,
        report.forest
    );
    if let Some(used) = report.actions_used {
        s.push_str(&format!("actions: {} (asked {})\n\n", used.as_str(), report.actions.as_str()));
    }
    s.push_str("arm                    correct  acc   prec  tok/correct  tok_med  p50_s  p95_s  hops\n");
    for m in &report.summaries {
        let tpc = m.tokens_per_correct.map_or("-".to_string(), |t| format!("{t:.0}"));
        let hops = m.hops_mean.map_or("-".to_string(), |h| format!("{h:.2}"));
        s.push_str(&format!(
            "{:<22} {:>3}/{:<4} {:.2}  {:.2}  {:>11}  {:>7}  {:>5.1}  {:>5.1}  {:>4}\n",
            m.arm,
            m.correct,
            m.n,
            m.accuracy,
            m.precision_mean,
            tpc,
            m.tokens_median,
            m.wall_s_median,
            m.wall_s_p95,
            hops
        ));
    }
    s.push_str("\nid     arm        ok  prec  tokens  wall_s  hops  answer_nodes\n");
    for (arm, rows) in &report.results {
        for r in rows {
            s.push_str(&format!(
                "{:<6} {:<10} {:<3} {:.2}  {:>6}  {:>6.1}  {:>4}  {}\n",
                r.id,
                arm,
                if r.correct_text { "yes" } else { "no" },
                r.banana_precision,
                r.tokens,
                r.wall_s,
                r.hops.map_or("-".to_string(), |h| h.to_string()),
                r.answer_nodes.join(", ")
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Step;

    fn step(by: &str, kind: &str, tool: Option<&str>) -> Step {
        Step {
            turn: 1,
            by: by.into(),
            kind: kind.into(),
            tool: tool.map(String::from),
            args: None,
            tokens: 0,
            note: None,
        }
    }

    #[test]
    fn model_turns_count_the_models_steps_only() {
        let trail = [
            step("harness", "call", Some("look")),
            step("model", "call", Some("locate")),
            step("model", "repeat", Some("locate")),
            step("model", "call", Some("pick")),
            step("model", "synthesis", None),
        ];
        let t = model_turns(&trail);
        assert_eq!(t["kinds"], json!({"call": 2, "repeat": 1, "synthesis": 1}));
        assert_eq!(t["tools"], json!(["locate", "pick"]));
    }
}
