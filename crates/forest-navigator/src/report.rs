//! The typed result of one hunt (`forest hunt --json`): answer, answer
//! nodes, the trail of every turn, and what it cost.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One entry of the trail: a model turn or a call the harness made.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Step {
    /// Model turn number (0 = the harness's opening).
    pub turn: usize,
    /// `model` or `harness`.
    pub by: String,
    /// What happened: `call`, `error`, `repeat`, `unknown_tool`,
    /// `unparseable`, `answer`, `rejected`, `deadline`, `synthesis`.
    pub kind: String,
    /// Tool name, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Arguments as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// Estimated tokens of what came back (0 when nothing ran).
    pub tokens: usize,
    /// Error code or a short note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a hunt spent.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Cost {
    /// Step budget B(q) (or the troop's per-entry budget).
    pub budget: usize,
    /// Turns counted against the budget (turns − rejections).
    pub steps: usize,
    /// Chat completions requested.
    pub llm_calls: usize,
    /// Estimated prompt tokens sent over all completions (chars/4).
    pub prompt_tokens_est: usize,
    /// Estimated completion tokens received (chars/4).
    pub completion_tokens_est: usize,
    /// Observation tokens: Σ tokens of every tool result (the bench's
    /// `tokens_to_banana`).
    pub observation_tokens: usize,
    /// Primitive calls that ran (model and harness).
    pub calls: usize,
    /// look+move calls before the first pick/query (null if none).
    pub hops_to_banana: Option<usize>,
    /// Calls before the first pick/query of an answer node (null if none).
    pub trail_len: Option<usize>,
    /// Wall seconds.
    pub wall_s: f64,
}

/// The result of one navigator hunt.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct HuntResult {
    /// The question.
    pub question: String,
    /// The answer (null when nothing usable came back).
    pub answer: Option<String>,
    /// Ids of the nodes the answer rests on.
    pub answer_nodes: Vec<String>,
    /// Effective (audited) confidence.
    pub confidence: f64,
    /// Answers the gate bounced.
    pub rejections: usize,
    /// Why the loop ended: `answered`, `budget`, `stalled`, `llm_error`.
    pub stop: String,
    /// True when the answer came from forced synthesis.
    pub forced: bool,
    /// Transport error of the chat endpoint, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every turn and harness call in order.
    pub trail: Vec<Step>,
    /// What it cost.
    pub cost: Cost,
    /// Session id of the walk.
    pub session: String,
    /// The `close_session` record (`--learn` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<Value>,
    /// Shortcuts grafted or fortified (`--learn` only).
    #[serde(default)]
    pub shortcuts: Vec<Value>,
}

/// Part D metrics over the calls that ran, in order: `(hops_to_banana,
/// trail_len)`.
pub fn part_d(calls: &[(String, Option<String>)], answer_nodes: &[String]) -> (Option<usize>, Option<usize>) {
    let harvest = |p: &str| p == "pick" || p == "query";
    let first = calls.iter().position(|(p, _)| harvest(p));
    let hops = first.map(|i| calls[..i].iter().filter(|(p, _)| p == "look" || p == "move").count());
    let trail =
        calls.iter().position(|(p, id)| harvest(p) && id.as_ref().is_some_and(|i| answer_nodes.iter().any(|a| a == i)));
    (hops, trail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_d_metrics() {
        let c = |p: &str, id: Option<&str>| (p.to_string(), id.map(String::from));
        let calls = vec![
            c("look", Some("_index")),
            c("locate", None),
            c("move", Some("a")),
            c("pick", Some("b")),
            c("pick", Some("x")),
        ];
        assert_eq!(part_d(&calls, &["x".into()]), (Some(2), Some(4)));
        assert_eq!(part_d(&calls[..3], &["x".into()]), (None, None));
    }
}
