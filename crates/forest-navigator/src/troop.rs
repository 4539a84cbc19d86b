//! The troop (navigator spec §2): a scout partitions `locate`'s frontier
//! among N monkeys (k = 2N, FIFO steal queue), monkeys run the plain loop
//! (14 steps per entry) sharing a result cache and session heat, a stop
//! policy ends the run (patience: P = 2 dry harvests), and a judge merges
//! the harvests. Monkeys take turns on one thread (round-robin over
//! entries): the chat endpoint's slots, not threads, bound parallelism.

use std::collections::BTreeSet;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::forest::{msg, Chat, Forest};
use crate::navigator::{salvage, Hunt, HuntOptions, SharedCache, Want};
use crate::protocol::{answer_schema, estimate_str, Actions, BASE_STEPS};
use crate::report::{part_d, Cost, HuntResult};

/// Default troop size.
pub const DEFAULT_N: usize = 3;
/// Patience: consecutive dry harvests that stop the troop.
pub const PATIENCE: usize = 2;

/// When the troop stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StopPolicy {
    /// One harvest.
    First,
    /// `(N+1)/2` harvests (duplicates count).
    Quorum,
    /// `max(fork_width, 1)` harvests that each add a new node.
    Coverage,
    /// `P = 2` consecutive dry harvests after at least one harvest.
    Patience,
    /// Until the steal queue is empty.
    None,
}

impl std::str::FromStr for StopPolicy {
    type Err = crate::protocol::UnknownChoice;
    fn from_str(s: &str) -> Result<Self, crate::protocol::UnknownChoice> {
        Ok(match s {
            "first" => StopPolicy::First,
            "quorum" => StopPolicy::Quorum,
            "coverage" => StopPolicy::Coverage,
            "patience" => StopPolicy::Patience,
            "none" => StopPolicy::None,
            other => {
                return Err(crate::protocol::UnknownChoice {
                    what: "stop policy",
                    value: other.to_string(),
                    allowed: "first|quorum|coverage|patience|none",
                })
            }
        })
    }
}

/// The stop rule's running state. Pure.
#[derive(Debug, Clone)]
pub struct StopState {
    policy: StopPolicy,
    n: usize,
    fork_width: usize,
    harvests: usize,
    fresh: usize,
    dry_run: usize,
    ids: BTreeSet<String>,
}

impl StopState {
    /// A fresh rule for N monkeys and a question of width `fork_width`.
    pub fn new(policy: StopPolicy, n: usize, fork_width: usize) -> Self {
        StopState { policy, n, fork_width: fork_width.max(1), harvests: 0, fresh: 0, dry_run: 0, ids: BTreeSet::new() }
    }

    /// Record one harvest's nodes; true when the troop should stop.
    pub fn harvest(&mut self, nodes: &[String]) -> bool {
        let before = self.ids.len();
        let preceded = self.harvests > 0;
        self.ids.extend(nodes.iter().cloned());
        let fresh = self.ids.len() > before;
        self.harvests += 1;
        if fresh {
            self.fresh += 1;
            self.dry_run = 0;
        } else if preceded {
            self.dry_run += 1;
        }
        match self.policy {
            StopPolicy::First => true,
            StopPolicy::Quorum => self.harvests >= self.n.div_ceil(2),
            StopPolicy::Coverage => self.fresh >= self.fork_width,
            StopPolicy::Patience => self.dry_run >= PATIENCE,
            StopPolicy::None => false,
        }
    }
}

/// One monkey's account.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct MonkeyStat {
    /// 1-based monkey number.
    pub monkey: usize,
    /// Entry ids it started from (own, then stolen).
    pub entries: Vec<String>,
    /// Steps over all its sub-hunts.
    pub steps: usize,
    /// Observation tokens.
    pub tokens: usize,
    /// Primitive calls.
    pub calls: usize,
    /// Harvests (answers with text and nodes).
    pub harvests: usize,
}

/// The troop's part of a result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TroopInfo {
    /// Monkeys.
    pub n: usize,
    /// Stop policy.
    pub stop_policy: StopPolicy,
    /// Per monkey.
    pub monkeys: Vec<MonkeyStat>,
    /// Every harvest `{monkey, answer, answer_nodes}`.
    pub harvests: Vec<Value>,
    /// Whether the judge was called (≥ 2 harvests).
    pub judged: bool,
}

/// Troop settings.
#[derive(Debug, Clone)]
pub struct TroopOptions {
    /// Monkeys.
    pub n: usize,
    /// Stop policy.
    pub policy: StopPolicy,
    /// The question's fork width (coverage).
    pub fork_width: usize,
    /// Ground truth for the close (bench).
    pub expected: Option<Vec<String>>,
    /// Schema-constrained actions for the monkeys and the judge, or text.
    pub actions: Actions,
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Run a troop on `question`.
pub fn troop(forest: &mut dyn Forest, llm: &dyn Chat, question: &str, o: &TroopOptions) -> (HuntResult, TroopInfo) {
    let started = Instant::now();
    let n = o.n.max(1);
    let mut cache = SharedCache::default();
    let mut scout_cost = Cost::default();
    let (index, frontier) = scout(forest, question, n, &mut cache, &mut scout_cost);
    let own: Vec<Option<Value>> = (0..n).map(|i| frontier.get(i).cloned()).collect();
    let mut steal: std::collections::VecDeque<Value> = frontier.iter().skip(n).cloned().collect();
    let entry_ids: Vec<String> = own.iter().flatten().filter_map(|e| e["id"].as_str().map(String::from)).collect();
    let mut stats: Vec<MonkeyStat> = (1..=n)
        .map(|m| MonkeyStat { monkey: m, entries: vec![], steps: 0, tokens: 0, calls: 0, harvests: 0 })
        .collect();
    let mut stop = StopState::new(o.policy, n, o.fork_width);
    let (mut harvests, mut trail, mut calls) = (vec![], vec![], vec![]);
    let mut winner_calls: Vec<Vec<(String, Option<String>)>> = vec![];
    let mut stopped = false;
    let mut round: Vec<(usize, Option<Value>)> = own.into_iter().enumerate().collect();
    while !round.is_empty() && !stopped {
        for (i, entry) in std::mem::take(&mut round) {
            if stopped {
                break;
            }
            let extra = monkey_brief(i, n, entry.as_ref(), &entry_ids);
            let opts = HuntOptions { budget: BASE_STEPS, sniff: true, aids: false, expected: None, actions: o.actions };
            let mut h = Hunt::new(&mut *forest, llm, opts);
            h.shared = Some(&mut cache);
            h.messages.push(msg("system", &crate::protocol::system_prompt(true)));
            h.messages.push(msg("user", &format!("{}{extra}", crate::protocol::opening_message(&index, question))));
            let (done, _) = h.walk(&|| false);
            let f = match done {
                Some(f) => Some(f),
                None if h.turns >= 1 && h.error.is_none() => forced_turn(&mut h),
                None => None,
            };
            let s = &mut stats[i];
            s.entries.push(entry.as_ref().and_then(|e| e["id"].as_str()).unwrap_or("").to_string());
            s.steps += h.turns;
            s.tokens += h.cost.observation_tokens;
            s.calls += h.cost.calls;
            scout_cost.llm_calls += h.cost.llm_calls;
            scout_cost.prompt_tokens_est += h.cost.prompt_tokens_est;
            scout_cost.completion_tokens_est += h.cost.completion_tokens_est;
            for mut st in std::mem::take(&mut h.trail) {
                st.by = format!("monkey{}", i + 1);
                trail.push(st);
            }
            calls.extend(h.calls.clone());
            let harvest = f.filter(|f| f.text.as_ref().is_some_and(|t| !t.trim().is_empty()) && !f.nodes.is_empty());
            if let Some(f) = harvest {
                s.harvests += 1;
                harvests.push(json!({"monkey": i + 1, "answer": f.text, "answer_nodes": f.nodes}));
                winner_calls.push(h.calls.clone());
                stopped = stop.harvest(&f.nodes);
            }
            // A forest server gone: no monkey can walk on.
            stopped |= forest.lost().is_some();
            if !stopped {
                if let Some(next) = steal.pop_front() {
                    round.push((i, Some(next)));
                }
            }
        }
    }
    let (answer, nodes, judge_tokens, judged) = judge(llm, question, &harvests, o.actions, &mut scout_cost);
    scout_cost.observation_tokens += stats.iter().map(|s| s.tokens).sum::<usize>() + judge_tokens;
    scout_cost.calls = calls.len() + 2;
    scout_cost.steps = stats.iter().map(|s| s.steps).sum();
    scout_cost.budget = BASE_STEPS;
    let win = harvests
        .iter()
        .position(|h| h["answer_nodes"].as_array().is_some_and(|a| a.iter().any(|x| nodes.iter().any(|n| x == n))))
        .unwrap_or(0);
    let (hops, trail_len) = winner_calls.get(win).map(|c| part_d(c, &nodes)).unwrap_or((None, None));
    scout_cost.hops_to_banana = hops;
    scout_cost.trail_len = trail_len;
    scout_cost.wall_s = started.elapsed().as_secs_f64();
    let mut r = HuntResult {
        question: question.to_string(),
        answer,
        answer_nodes: nodes,
        confidence: if judged { 0.9 } else { 0.5 },
        rejections: 0,
        stop: if harvests.is_empty() { "no_harvest".into() } else { "harvested".into() },
        forced: false,
        error: forest.lost(),
        trail,
        cost: scout_cost,
        session: forest.session(),
        closed: None,
        shortcuts: vec![],
    };
    let success = match &o.expected {
        Some(e) => crate::grade::success(r.answer.as_deref(), &r.answer_nodes, e),
        None => r.answer.is_some() && !r.answer_nodes.is_empty(),
    };
    r.closed = forest.close(success, &r.answer_nodes);
    let info = TroopInfo { n, stop_policy: o.policy, monkeys: stats, harvests, judged };
    (r, info)
}

/// The scout: `look("_index")` (seeds the cache) and `locate(question, k = 2N)`.
fn scout(
    forest: &mut dyn Forest,
    question: &str,
    n: usize,
    cache: &mut SharedCache,
    cost: &mut Cost,
) -> (Value, Vec<Value>) {
    let index = match forest.call("look", &args(json!({"id": "_index"}))) {
        Ok(v) => {
            cache.put("look", &args(json!({"id": "_index"})), &v);
            cost.observation_tokens += forest_vine::estimate(&v);
            v
        }
        Err(e) => e,
    };
    let frontier: Vec<Value> = match forest.call("locate", &args(json!({"query": question, "k": 2 * n}))) {
        Ok(v) => {
            cost.observation_tokens += forest_vine::estimate(&v);
            v["results"].as_array().cloned().unwrap_or_default()
        }
        Err(_) => vec![],
    };
    (index, frontier)
}

/// The monkey's brief appended to the opening message.
fn monkey_brief(i: usize, n: usize, entry: Option<&Value>, all: &[String]) -> String {
    let mine = entry.map(|e| e.to_string()).unwrap_or_else(|| "none (small forest): start from the index".into());
    let others: Vec<&String> =
        all.iter().filter(|x| Some(x.as_str()) != entry.and_then(|e| e["id"].as_str())).collect();
    format!(
        "\n\nYou are monkey {} of {n} in a troop. Your entry: {mine}\nOther monkeys start at: {}\n\
Answer the part of the question your region holds; start at your entry and do not retrace the others.",
        i + 1,
        serde_json::to_string(&others).unwrap_or_default()
    )
}

/// One forced-answer turn after the plain loop ran out.
fn forced_turn(h: &mut Hunt<'_>) -> Option<crate::navigator::Final> {
    h.say(&json!({"steps_over": true, "instruction": "Reply now with only the answer JSON."}));
    let reply = h.ask(Want::Answer)?;
    let (text, nodes, conf, _) = salvage(&reply)?;
    Some(crate::navigator::Final { text: Some(text), nodes, confidence: conf.min(0.5) })
}

/// The judge: 0 harvests ⇒ null; 1 ⇒ as is; ≥ 2 ⇒ one call (constrained
/// to the answer action over the harvests' nodes under `Actions::Schema`); returns
/// `(answer, nodes, judge tokens, judged)`.
fn judge(
    llm: &dyn Chat,
    question: &str,
    harvests: &[Value],
    actions: Actions,
    cost: &mut Cost,
) -> (Option<String>, Vec<String>, usize, bool) {
    let nodes_of = |h: &Value| -> Vec<String> {
        h["answer_nodes"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default()
    };
    match harvests {
        [] => (None, vec![], 0, false),
        [one] => (one["answer"].as_str().map(String::from), nodes_of(one), 0, false),
        many => {
            let user = format!("Question: {question}\nHarvests: {}", Value::Array(many.to_vec()));
            let messages = vec![msg("system", JUDGE_PROMPT), msg("user", &user)];
            let tokens = estimate_str(&user);
            cost.llm_calls += 1;
            cost.prompt_tokens_est += tokens + estimate_str(JUDGE_PROMPT);
            // The judge's answer names only nodes the harvests support.
            let mut supported: Vec<String> = many.iter().flat_map(nodes_of).collect();
            supported.sort();
            supported.dedup();
            let format = (actions == Actions::Schema).then(|| answer_schema(false, &supported));
            match llm.chat_with(&messages, format.as_ref()) {
                Ok(reply) => {
                    cost.completion_tokens_est += estimate_str(&reply);
                    match salvage(&reply) {
                        Some((t, n, _, _)) => (Some(t), n, tokens, true),
                        None => (None, vec![], tokens, true),
                    }
                }
                Err(_) => (None, vec![], tokens, true),
            }
        }
    }
}

const JUDGE_PROMPT: &str = "You judge a troop of agents that searched one knowledge forest in parallel. \
Use only their harvests below. Merge complementary parts; on conflict pick the best-supported one. For \
\"all members\" questions name every supported member with its attribute. Never claim completeness or a \
negative the harvests do not prove. Reply with only {\"tool\":\"answer\",\"args\":{\"text\":\"...\",\
\"answer_nodes\":[\"ids from the supporting harvests\"]}}.";

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn stop_policies() {
        let mut p = StopState::new(StopPolicy::Patience, 3, 1);
        assert!(!p.harvest(&ids(&["a"])));
        assert!(!p.harvest(&ids(&["a"])), "one dry harvest is patience, not a stop");
        assert!(!p.harvest(&ids(&["b"])), "a fresh one resets the count");
        assert!(!p.harvest(&ids(&["a", "b"])));
        assert!(p.harvest(&ids(&["b"])));
        assert!(StopState::new(StopPolicy::First, 3, 1).harvest(&ids(&["a"])));
        let mut q = StopState::new(StopPolicy::Quorum, 3, 1);
        assert!(!q.harvest(&ids(&["a"])) && q.harvest(&ids(&["a"])));
        let mut c = StopState::new(StopPolicy::Coverage, 3, 2);
        assert!(!c.harvest(&ids(&["a"])) && !c.harvest(&ids(&["a"])) && c.harvest(&ids(&["b"])));
        let mut n = StopState::new(StopPolicy::None, 3, 1);
        assert!(!n.harvest(&ids(&["a"])) && !n.harvest(&ids(&["a"])) && !n.harvest(&ids(&["a"])));
        assert!("bogus".parse::<StopPolicy>().is_err());
        assert_eq!("patience".parse::<StopPolicy>(), Ok(StopPolicy::Patience));
    }

    #[test]
    fn the_judge_prompt_example_fits_the_judge_schema() {
        let a = JUDGE_PROMPT.find('{').unwrap();
        let b = JUDGE_PROMPT.rfind('}').unwrap();
        let example: Value = serde_json::from_str(&JUDGE_PROMPT[a..=b]).unwrap();
        assert_eq!(crate::protocol::check_format(&answer_schema(false, &[]), &example), Ok(()));
        let with_proof = json!({"tool": "answer", "args": {"text": "t", "answer_nodes": [], "proof": "p"}});
        assert!(crate::protocol::check_format(&answer_schema(false, &[]), &with_proof).is_err());
    }

    #[test]
    fn cache_keys_are_order_free() {
        let mut c = SharedCache::default();
        c.put("look", &args(json!({"id": "a", "fields": ["x"]})), &json!(1));
        assert_eq!(c.get("look", &args(json!({"fields": ["x"], "id": "a"}))), Some(json!(1)));
        assert_eq!(c.get("pick", &args(json!({"id": "a"}))), None);
    }
}
