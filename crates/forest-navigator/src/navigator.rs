//! The solo navigator (navigator spec §1): the text-protocol loop over a
//! [`Forest`] and a [`Chat`] model, with the width-aware step budget, the
//! visited cache, the stall ladder, eager digests on `locate`, the answer
//! gate and forced synthesis. Every tool result is a primitive's own
//! budgeted answer; a bad call gets the error envelope, never a panic.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use serde_json::{json, Map, Value};

use crate::audit::{accept, audit, repair_ids, with_evidence, Seen, RELOCATE_AFTER};
use crate::forest::{msg, Chat, Forest};
use crate::observe::{absorb, hits};
use crate::protocol::{
    action_schema, answer_schema, estimate_str, nudge, opening_message, parse_action, sorted_json, system_prompt,
    unknown_tool, visited_key, Actions, READ_TOOLS,
};
use crate::report::{part_d, Cost, HuntResult, Step};

/// Harness-opened hits per hunt (stall ladder).
pub const MAX_AUTO_OPEN: usize = 3;
/// Forced-synthesis attempts.
pub const SYNTH_ATTEMPTS: usize = 3;
/// Confidence ceiling of a synthesised answer.
pub const SYNTH_CAP: f64 = 0.5;
/// The forced-synthesis request.
const SYNTH_INSTRUCTION: &str = "No more tools. Reply now with only {\"tool\":\"answer\",\"args\":{\"text\":\"...\",\"answer_nodes\":[\"full/id\"],\"confidence\":0.5,\"proof\":\"...\"}}: at most 2 sentences, from what you have seen.";

/// How one hunt runs.
#[derive(Debug, Clone)]
pub struct HuntOptions {
    /// Step budget B(q).
    pub budget: usize,
    /// Offer `sniff` (and `confidence`/`proof` on answers).
    pub sniff: bool,
    /// Harness aids (digests, ladder, deadline) and the answer gate; off
    /// for troop monkeys (the plain loop).
    pub aids: bool,
    /// Ground truth for the close (bench); a hunt without it counts an
    /// accepted, non-forced answer with nodes as success.
    pub expected: Option<Vec<String>>,
    /// Schema-constrained actions (`response_format`) or the text protocol.
    pub actions: Actions,
}

impl HuntOptions {
    /// The solo navigator with budget `budget` (schema-constrained actions).
    pub fn solo(budget: usize) -> Self {
        HuntOptions { budget, sniff: true, aids: true, expected: None, actions: Actions::Schema }
    }
}

/// What a turn must produce: any action, or the answer only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    Action,
    Answer,
}

/// The final answer of a loop.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Final {
    pub(crate) text: Option<String>,
    pub(crate) nodes: Vec<String>,
    pub(crate) confidence: f64,
}

/// The state of one hunt.
pub(crate) struct Hunt<'a> {
    forest: &'a mut dyn Forest,
    llm: &'a dyn Chat,
    pub(crate) opts: HuntOptions,
    pub(crate) messages: Vec<Value>,
    pub(crate) trail: Vec<Step>,
    pub(crate) seen: Seen,
    visited: HashSet<String>,
    pending: Vec<String>,
    stall: usize,
    auto_opened: usize,
    searches_in_row: usize,
    pub(crate) turns: usize,
    pub(crate) rejections: usize,
    bounced: BTreeSet<&'static str>,
    pub(crate) cost: Cost,
    pub(crate) calls: Vec<(String, Option<String>)>,
    pub(crate) entry: Option<String>,
    pub(crate) error: Option<String>,
    deadline_sent: bool,
    /// Troop: results shared between monkeys (`tool + sorted JSON` → result).
    pub(crate) shared: Option<&'a mut SharedCache>,
    /// The prompt budget (our estimate) learnt from a context refusal.
    ctx_limit: Option<usize>,
    /// The opening message as first sent (index and question).
    opening: String,
    /// Turns left out so far to fit the context.
    ctx_dropped: usize,
}

impl<'a> Hunt<'a> {
    pub(crate) fn new(forest: &'a mut dyn Forest, llm: &'a dyn Chat, opts: HuntOptions) -> Self {
        let budget = opts.budget;
        Hunt {
            forest,
            llm,
            opts,
            messages: vec![],
            trail: vec![],
            seen: Seen::default(),
            visited: HashSet::new(),
            pending: vec![],
            stall: 0,
            auto_opened: 0,
            searches_in_row: 0,
            turns: 0,
            rejections: 0,
            bounced: BTreeSet::new(),
            cost: Cost { budget, ..Cost::default() },
            calls: vec![],
            entry: None,
            error: None,
            deadline_sent: false,
            shared: None,
            ctx_limit: None,
            opening: String::new(),
            ctx_dropped: 0,
        }
    }

    fn steps_used(&self) -> usize {
        self.turns.saturating_sub(self.rejections)
    }

    fn steps_left(&self) -> usize {
        self.opts.budget.saturating_sub(self.steps_used())
    }

    fn step(
        &mut self,
        by: &str,
        kind: &str,
        tool: Option<&str>,
        args: Option<Value>,
        tokens: usize,
        note: Option<String>,
    ) {
        self.trail.push(Step {
            turn: self.turns,
            by: by.into(),
            kind: kind.into(),
            tool: tool.map(String::from),
            args,
            tokens,
            note,
        });
    }

    /// Run one primitive, trace it in the trail, fold it into what was seen.
    pub(crate) fn run_tool(&mut self, by: &str, tool: &str, args: &Map<String, Value>) -> Result<Value, Value> {
        let out = self.forest.call(tool, args);
        let id = args.get("id").and_then(Value::as_str).map(|s| s.trim().trim_matches('/').to_string());
        let (kind, note, tokens) = match &out {
            Ok(v) => ("call", None, forest_vine::estimate(v)),
            Err(e) => ("error", e.pointer("/error/code").and_then(Value::as_str).map(String::from), 0),
        };
        self.step(by, kind, Some(tool), Some(Value::Object(args.clone())), tokens, note);
        if let Ok(v) = &out {
            self.cost.calls += 1;
            self.cost.observation_tokens += tokens;
            self.calls.push((tool.to_string(), id.clone()));
            absorb(&mut self.seen, tool, id.as_deref(), v);
            if by == "model" && self.entry.is_none() && matches!(tool, "look" | "move" | "pick" | "query" | "scan") {
                self.entry = id.clone().or_else(|| args.get("parent_id").and_then(Value::as_str).map(String::from));
            }
        }
        out
    }

    /// One chat completion, with the cost counted; `None` on transport
    /// failure. A context-window refusal is answered once by learning the
    /// window and leaving out the oldest turns ([`crate::context`]); every
    /// later prompt of the hunt is kept under it.
    pub(crate) fn ask(&mut self, want: Want) -> Option<String> {
        let format = self.format(want);
        for attempt in 0..2 {
            if let Some(limit) = self.ctx_limit {
                self.fit_context(limit);
            }
            self.cost.llm_calls += 1;
            let estimated = crate::context::estimate(&self.messages);
            self.cost.prompt_tokens_est += estimated;
            let e = match self.llm.chat_with(&self.messages, format.as_ref()) {
                Ok(r) => {
                    self.cost.completion_tokens_est += estimate_str(&r);
                    return Some(r);
                }
                Err(e) => e.to_string(),
            };
            let learnt = crate::context::overflow(&e).and_then(|o| crate::context::budget_after(o, estimated));
            match learnt {
                Some(limit) if attempt == 0 && self.ctx_limit.is_none_or(|l| limit < l) => {
                    tracing::info!(event = "navigator.context_fit", limit, estimated);
                    self.ctx_limit = Some(limit);
                }
                _ => {
                    tracing::warn!(event = "navigator.llm_error", error = %e);
                    self.error = Some(e);
                    return None;
                }
            }
        }
        None
    }

    /// The `response_format` of the next turn (`None`: the text protocol):
    /// the allowed actions, their id arguments limited to the ids seen so
    /// far (opened first, then pending hits, then the rest).
    fn format(&self, want: Want) -> Option<Value> {
        if self.opts.actions != Actions::Schema {
            return None;
        }
        let mut ids: Vec<String> = vec![];
        let known = self.seen.opened.iter().chain(&self.pending).chain(&self.seen.ids);
        for id in known {
            if ids.len() >= crate::protocol::MAX_ENUM_IDS {
                break;
            }
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        Some(match want {
            Want::Action => action_schema(self.opts.sniff, &ids),
            Want::Answer => answer_schema(self.opts.sniff, &ids),
        })
    }

    /// Leave out the oldest turns so that the prompt fits `limit`.
    fn fit_context(&mut self, limit: usize) {
        let calls: Vec<String> =
            self.calls.iter().map(|(t, id)| format!("{t}({})", id.as_deref().unwrap_or(""))).collect();
        let (kept, dropped) =
            crate::context::fit(&self.messages, limit, &self.opening, &calls.join(", "), self.ctx_dropped);
        if dropped > self.ctx_dropped {
            self.step("harness", "context_fit", None, None, 0, Some(format!("{dropped} turn(s) left out")));
        }
        self.messages = kept;
        self.ctx_dropped = dropped;
    }

    pub(crate) fn say(&mut self, v: &Value) {
        self.messages.push(msg("user", &v.to_string()));
    }

    /// Opening: `look("_index")`, system prompt, index + question.
    pub(crate) fn open(&mut self, question: &str, extra: &str) {
        let args = json!({"id": "_index"}).as_object().cloned().unwrap_or_default();
        let index = self.run_tool("harness", "look", &args).unwrap_or_else(|e| e);
        self.opening = format!("{}{extra}", opening_message(&index, question));
        self.messages.push(msg("system", &system_prompt(self.opts.sniff)));
        self.messages.push(msg("user", &self.opening));
    }

    /// The main loop; `Some(final)` on an accepted answer, else `None` with
    /// the stop reason.
    pub(crate) fn walk(&mut self, stop: &dyn Fn() -> bool) -> (Option<Final>, &'static str) {
        while self.steps_used() < self.opts.budget {
            if let Some(why) = self.forest.lost() {
                self.error = Some(why);
                return (None, "forest_lost");
            }
            if stop() {
                return (None, "stopped");
            }
            if self.opts.aids && self.steps_left() == 2 && !self.deadline_sent {
                self.deadline_sent = true;
                self.say(&json!({"deadline": "2 steps left: answer now with the answer tool and what you have."}));
                self.step("harness", "deadline", None, None, 0, None);
            }
            let Some(reply) = self.ask(Want::Action) else { return (None, "llm_error") };
            self.turns += 1;
            self.messages.push(msg("assistant", &reply));
            let Some(action) = parse_action(&reply) else {
                self.stall += 1;
                self.step("model", "unparseable", None, None, 0, Some(clip(&reply, 120)));
                self.say(&nudge());
                continue;
            };
            if action.tool == "answer" {
                if let Some(f) = self.on_answer(&action.args) {
                    return (Some(f), "answered");
                }
                continue;
            }
            if !READ_TOOLS.contains(&action.tool.as_str()) || (!self.opts.sniff && action.tool == "sniff") {
                self.stall += 1;
                self.step("model", "unknown_tool", Some(&action.tool), Some(Value::Object(action.args)), 0, None);
                self.say(&unknown_tool(&action.tool));
                continue;
            }
            if action.bad_args {
                self.stall += 1;
                let e = json!({"error": {"code": "E_SCHEMA", "message": format!("{}: args must be an object", action.tool)}});
                self.step("model", "error", Some(&action.tool), None, 0, Some("E_SCHEMA".into()));
                self.say(&e);
                continue;
            }
            if !self.on_tool(&action.tool, action.args) {
                return (None, "stalled");
            }
        }
        (None, "budget")
    }

    /// A read-tool turn; false when the stall ladder leaves the loop.
    fn on_tool(&mut self, tool: &str, args: Map<String, Value>) -> bool {
        let key = visited_key(tool, &args);
        if let Some(cached) = self.shared.as_ref().and_then(|c| c.get(tool, &args)) {
            self.step("model", "cached", Some(tool), Some(Value::Object(args)), 0, None);
            self.say(&json!({"cached": true, "hint": "another monkey already ran this call", "result": cached}));
            return true;
        }
        if !self.visited.insert(key) {
            self.step("model", "repeat", Some(tool), Some(Value::Object(args)), 0, None);
            let mut reply = json!({"repeat": true, "hint": "you already made this call; its result is above. Try something else or answer."});
            if self.opts.aids && self.stall >= 2 {
                match self.auto_open() {
                    Some(v) => reply["auto_opened"] = v,
                    None => return false,
                }
            }
            self.stall += 1;
            self.say(&reply);
            return true;
        }
        let out = self.run_tool("model", tool, &args);
        let reply = match out {
            Ok(v) => {
                self.stall = 0;
                if let Some(c) = self.shared.as_mut() {
                    c.put(tool, &args, &v);
                }
                self.after_success(tool, &args, v)
            }
            Err(e) => {
                self.stall += 1;
                let mut e = e;
                if tool == "query" {
                    e["hint_harness"] = json!("query failed: pick the node to read its body instead");
                }
                e
            }
        };
        self.say(&reply);
        true
    }

    /// Aids on a successful result: pending hits, digests, dataset hints.
    fn after_success(&mut self, tool: &str, args: &Map<String, Value>, mut v: Value) -> Value {
        let search = matches!(tool, "locate" | "sniff" | "harvest");
        if search {
            for h in hits(&v) {
                if !self.pending.contains(&h) {
                    self.pending.push(h);
                }
            }
            self.searches_in_row += 1;
        } else {
            self.searches_in_row = 0;
        }
        if !self.opts.aids || !v.is_object() {
            return v;
        }
        if tool == "locate" {
            let digests = self.digests();
            if !digests.is_empty() {
                v["digests"] = Value::Array(digests);
            }
        }
        if search && self.searches_in_row >= 3 {
            if let Some(r) = self.auto_open_one() {
                v["rescue_digest"] = r;
            }
        }
        let id = args.get("id").and_then(Value::as_str).unwrap_or("");
        if tool == "look" && self.seen.datasets.contains(id) {
            v["hint_harness"] = json!("this node is a dataset: read it with query(id, sql)");
        }
        v
    }

    fn unopened(&self) -> Vec<String> {
        self.pending.iter().filter(|h| !self.seen.opened.contains(*h)).cloned().collect()
    }

    /// Eager digests: look the top-2 unopened hits, pick the first's body.
    fn digests(&mut self) -> Vec<Value> {
        let top: Vec<String> = self.unopened().into_iter().take(2).collect();
        let mut out = vec![];
        for (i, id) in top.iter().enumerate() {
            let a = json!({"id": id}).as_object().cloned().unwrap_or_default();
            if let Ok(d) = self.run_tool("harness", "look", &a) {
                out.push(d);
            }
            if i == 0 && !self.seen.datasets.contains(id) {
                if let Ok(b) = self.run_tool("harness", "pick", &a) {
                    out.push(b);
                }
            }
        }
        out
    }

    fn auto_open_one(&mut self) -> Option<Value> {
        let id = self.unopened().into_iter().next()?;
        let a = json!({"id": id}).as_object().cloned().unwrap_or_default();
        self.run_tool("harness", "look", &a).ok()
    }

    /// The ladder's rung: look the next unopened hit (≤ 3 per hunt).
    fn auto_open(&mut self) -> Option<Value> {
        if self.auto_opened >= MAX_AUTO_OPEN {
            return None;
        }
        let v = self.auto_open_one()?;
        self.auto_opened += 1;
        Some(v)
    }

    /// The answer gate; `Some` when accepted.
    fn on_answer(&mut self, args: &Map<String, Value>) -> Option<Final> {
        let (text, nodes, reported, proof) = answer_fields(args);
        let args_v = Value::Object(args.clone());
        if !self.opts.aids {
            self.step("model", "answer", Some("answer"), Some(args_v), 0, None);
            return Some(Final { text: Some(text), nodes, confidence: reported });
        }
        let nodes = repair_ids(&nodes, &text, &proof, &self.seen);
        let a = audit(&text, &nodes, &proof, &self.seen, &self.bounced);
        let effective = reported.min(a.score);
        if accept(effective, self.rejections, self.steps_left()) {
            self.step("model", "answer", Some("answer"), Some(args_v), 0, Some(a.check.into()));
            let text = with_evidence(&text, &proof, &self.seen);
            return Some(Final { text: Some(text), nodes, confidence: effective });
        }
        self.rejections += 1;
        if a.soft {
            self.bounced.insert(a.check);
        }
        self.step("model", "rejected", Some("answer"), Some(args_v), 0, Some(a.check.into()));
        let mut r = json!({"answer_rejected": true, "confidence": effective, "fix": a.fix});
        if self.rejections >= RELOCATE_AFTER {
            let unexplored: Vec<&String> = self
                .seen
                .ids
                .iter()
                .filter(|i| i.ends_with("_index") && !self.seen.opened.contains(*i))
                .take(3)
                .collect();
            r["unexplored"] = json!(unexplored);
        }
        self.say(&r);
        None
    }

    /// Forced synthesis: ≤ 3 no-tool requests for the answer JSON, regex
    /// salvage, one bounce when the audit says ≤ 0.3, confidence ≤ 0.5;
    /// last resorts: salvaged text (0.2) or the raw reply (0.1).
    pub(crate) fn synthesize(&mut self) -> Final {
        let mut salvaged: Option<(String, Vec<String>)> = None;
        let mut raw: Option<String> = None;
        let mut bounced = false;
        for _ in 0..SYNTH_ATTEMPTS {
            if self.error.is_some() {
                break;
            }
            self.say(&json!({"steps_over": true, "instruction": SYNTH_INSTRUCTION}));
            let Some(reply) = self.ask(Want::Answer) else { break };
            self.messages.push(msg("assistant", &reply));
            self.step("model", "synthesis", None, None, 0, Some(clip(&reply, 120)));
            raw = Some(reply.clone());
            let Some((text, nodes, reported, proof)) = salvage(&reply) else { continue };
            let nodes = repair_ids(&nodes, &text, &proof, &self.seen);
            let a = audit(&text, &nodes, &proof, &self.seen, &BTreeSet::new());
            if a.score <= 0.3 && !bounced {
                bounced = true;
                salvaged = Some((text, nodes));
                self.say(&json!({"answer_rejected": true, "fix": a.fix}));
                continue;
            }
            let confidence = reported.min(a.score).min(SYNTH_CAP);
            return Final { text: Some(with_evidence(&text, &proof, &self.seen)), nodes, confidence };
        }
        let fallback: Vec<String> = self.seen.opened.iter().filter(|i| i.contains('/')).take(3).cloned().collect();
        match (salvaged, raw) {
            (Some((t, n)), _) => {
                Final { text: Some(t), nodes: if n.is_empty() { fallback } else { n }, confidence: 0.2 }
            }
            (None, Some(r)) if !r.trim().is_empty() => {
                Final { text: Some(clip(r.trim(), 400)), nodes: fallback, confidence: 0.1 }
            }
            _ => Final { text: None, nodes: fallback, confidence: 0.0 },
        }
    }

    /// Assemble the result (cost, Part D metrics, wall time).
    pub(crate) fn result(
        &mut self,
        question: &str,
        f: Final,
        stop: &str,
        forced: bool,
        started: Instant,
    ) -> HuntResult {
        self.cost.steps = self.steps_used();
        let (hops, trail_len) = part_d(&self.calls, &f.nodes);
        self.cost.hops_to_banana = hops;
        self.cost.trail_len = trail_len;
        self.cost.wall_s = started.elapsed().as_secs_f64();
        HuntResult {
            question: question.to_string(),
            answer: f.text,
            answer_nodes: f.nodes,
            confidence: (f.confidence * 100.0).round() / 100.0,
            rejections: self.rejections,
            stop: stop.to_string(),
            forced,
            error: self.error.clone(),
            trail: std::mem::take(&mut self.trail),
            cost: self.cost.clone(),
            session: self.forest.session(),
            closed: None,
            shortcuts: vec![],
        }
    }

    /// Close the session (when the forest takes it) and mint shortcuts.
    pub(crate) fn close(&mut self, r: &mut HuntResult) {
        let success = match &self.opts.expected {
            Some(e) => crate::grade::success(r.answer.as_deref(), &r.answer_nodes, e),
            None => r.answer.is_some() && !r.forced && !r.answer_nodes.is_empty(),
        };
        let Some(closed) = self.forest.close(success, &r.answer_nodes) else { return };
        let suggest: Vec<String> = closed["suggest_shortcuts"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default();
        if let Some(entry) = self.entry.clone() {
            for target in suggest.iter().filter(|t| **t != entry) {
                let patch =
                    json!({"id": entry, "patch": {"add_links": [{"rel": "discovered-shortcut", "target": target}]}});
                let out = self.forest.call("graft", patch.as_object().unwrap_or(&Map::new()));
                r.shortcuts.push(json!({"entry": entry, "target": target, "result": out.unwrap_or_else(|e| e)}));
            }
        }
        r.closed = Some(closed);
    }
}

/// `(text, answer_nodes, confidence, proof)` of an answer's args.
pub(crate) fn answer_fields(args: &Map<String, Value>) -> (String, Vec<String>, f64, String) {
    let text = match args.get("text") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    };
    let nodes = match args.get("answer_nodes") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(String::from).collect(),
        _ => vec![],
    };
    let conf = args.get("confidence").and_then(Value::as_f64).unwrap_or(0.9).clamp(0.0, 1.0);
    let proof = args.get("proof").and_then(Value::as_str).unwrap_or("").to_string();
    (text, nodes, conf, proof)
}

/// Salvage an answer from a synthesis reply: the answer JSON, a bare
/// `{text, answer_nodes}` object, or `"text": "..."` by regex.
pub(crate) fn salvage(reply: &str) -> Option<(String, Vec<String>, f64, String)> {
    use once_cell::sync::Lazy;
    use regex::Regex;
    static TEXT: Lazy<Regex> = Lazy::new(|| Regex::new(r#""text"\s*:\s*"((?:[^"\\]|\\.)*)""#).expect("regex"));
    static NODES: Lazy<Regex> = Lazy::new(|| Regex::new(r#""answer_nodes"\s*:\s*\[([^\]]*)\]"#).expect("regex"));
    if let Some(a) = parse_action(reply).filter(|a| a.tool == "answer") {
        let f = answer_fields(&a.args);
        return (!f.0.trim().is_empty()).then_some(f);
    }
    let (a, b) = (reply.find('{'), reply.rfind('}'));
    if let (Some(a), Some(b)) = (a, b) {
        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&reply[a..=b.max(a)]) {
            let f = answer_fields(m.get("args").and_then(Value::as_object).unwrap_or(&m));
            if !f.0.trim().is_empty() {
                return Some(f);
            }
        }
    }
    let text = TEXT.captures(reply)?.get(1)?.as_str().replace("\\\"", "\"");
    let nodes = NODES
        .captures(reply)
        .and_then(|c| c.get(1))
        .map(|m| {
            m.as_str().split(',').map(|s| s.trim().trim_matches('"').to_string()).filter(|s| !s.is_empty()).collect()
        })
        .unwrap_or_default();
    Some((text, nodes, SYNTH_CAP, String::new()))
}

/// The first `n` chars of `s`.
pub(crate) fn clip(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Run one solo hunt for `question`.
pub fn hunt(forest: &mut dyn Forest, llm: &dyn Chat, question: &str, opts: HuntOptions) -> HuntResult {
    let started = Instant::now();
    let mut h = Hunt::new(forest, llm, opts);
    h.open(question, "");
    let (done, stop) = h.walk(&|| false);
    let (f, forced) = match done {
        Some(f) => (f, false),
        None => (h.synthesize(), true),
    };
    let mut r = h.result(question, f, stop, forced, started);
    h.close(&mut r);
    r
}

/// Successful results shared by the monkeys (key: tool + sorted JSON).
#[derive(Debug, Default)]
pub struct SharedCache {
    map: HashMap<String, Value>,
}

impl SharedCache {
    fn key(tool: &str, args: &Map<String, Value>) -> String {
        format!("{tool}:{}", sorted_json(&Value::Object(args.clone())))
    }
    /// A cached result.
    pub fn get(&self, tool: &str, args: &Map<String, Value>) -> Option<Value> {
        self.map.get(&Self::key(tool, args)).cloned()
    }
    /// Remember a successful result.
    pub fn put(&mut self, tool: &str, args: &Map<String, Value>, v: &Value) {
        self.map.insert(Self::key(tool, args), v.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salvage_rules() {
        let a =
            salvage(r#"{"tool":"answer","args":{"text":"A-101","answer_nodes":["p/s"],"confidence":0.9}}"#).unwrap();
        assert_eq!((a.0.as_str(), a.1.len(), a.2), ("A-101", 1, 0.9));
        let b = salvage(r#"Here: {"text": "Recife", "answer_nodes": ["people/j"]}"#).unwrap();
        assert_eq!(b.1, vec!["people/j"]);
        let c = salvage(r#"oops "text": "half \"quoted\"", "answer_nodes": ["a/b", "c/d"] trailing {"#).unwrap();
        assert_eq!((c.0.as_str(), c.1.len()), ("half \"quoted\"", 2));
        assert!(salvage("I don't know").is_none());
        assert!(salvage(r#"{"tool":"answer","args":{"text":"  "}}"#).is_none());
    }

    #[test]
    fn the_synthesis_example_fits_the_answer_schema() {
        let (a, b) = (SYNTH_INSTRUCTION.find('{').unwrap(), SYNTH_INSTRUCTION.rfind('}').unwrap());
        let example: Value = serde_json::from_str(&SYNTH_INSTRUCTION[a..=b]).unwrap();
        assert_eq!(crate::protocol::check_format(&answer_schema(true, &[]), &example), Ok(()));
        assert!(salvage(&example.to_string()).is_some());
    }

    #[test]
    fn answer_fields_tolerate_shapes() {
        let m = json!({"text": 42, "answer_nodes": "a/b", "confidence": 7}).as_object().cloned().unwrap();
        let (t, n, c, p) = answer_fields(&m);
        assert_eq!((t.as_str(), n, c, p.as_str()), ("42", vec!["a/b".to_string()], 1.0, ""));
    }
}
