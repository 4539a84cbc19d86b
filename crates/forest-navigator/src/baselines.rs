//! The bench's baselines over the same forest: `greedy` (model-free
//! descent by scent), `topk` (chunked top-k RAG, one LLM call) and
//! `iterative` (retrieve-reason-requery). Each reads the forest only
//! through [`Forest`] primitives.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::chunks::{node_chunks, Chunk, ChunkIndex};
use crate::forest::{msg, Chat, Forest};
use crate::navigator::salvage;
use crate::protocol::{estimate_str, parse_action, tokens};

/// Chunks per topk answer.
pub const TOPK_K: usize = 6;
/// Chunks per iterative search.
pub const ITER_K: usize = 5;
/// Characters of a chunk an iterative search shows (150 tokens).
pub const ITER_CHARS: usize = 600;
/// Turns of the iterative loop.
pub const ITER_TURNS: usize = 14;

/// One arm's answer to one question.
#[derive(Debug, Clone, Default)]
pub struct ArmAnswer {
    /// Answer text.
    pub answer: Option<String>,
    /// Cited node ids.
    pub answer_nodes: Vec<String>,
    /// Observation tokens.
    pub tokens: usize,
    /// Hops (greedy: descents; topk 1; iterative: searches).
    pub hops: Option<usize>,
    /// Extra per-arm detail.
    pub detail: Value,
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Content words of a question (stopwords and one-letter tokens out, plural `s` folded).
pub fn content_words(q: &str) -> BTreeSet<String> {
    const STOP: &[&str] = &[
        "the", "an", "of", "in", "on", "for", "and", "or", "to", "with", "was", "is", "are", "what", "which", "who",
        "how", "many", "much", "did", "does", "do", "by", "from", "that", "this", "at", "it", "its", "be", "as",
        "there", "their", "when", "where", "between", "about", "roughly",
    ];
    tokens(q).into_iter().filter(|t| t.len() > 1 && !STOP.contains(&t.as_str())).map(fold).collect()
}

fn fold(t: String) -> String {
    if t.len() > 3 && t.ends_with('s') && !t.ends_with("ss") {
        t[..t.len() - 1].to_string()
    } else {
        t
    }
}

/// Scent match of a child: question words found in its id, title, aliases,
/// tags and summary (title and tags count double).
pub fn scent_score(q: &BTreeSet<String>, child: &Value) -> usize {
    let field = |k: &str| -> BTreeSet<String> {
        let s = match child.get(k) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "),
            _ => String::new(),
        };
        tokens(&s).into_iter().map(fold).collect()
    };
    let strong: BTreeSet<String> = field("title").into_iter().chain(field("tags")).chain(field("id")).collect();
    let weak: BTreeSet<String> = field("summary").into_iter().chain(field("aliases")).collect();
    q.iter().map(|w| 2 * usize::from(strong.contains(w)) + usize::from(weak.contains(w))).sum()
}

/// The greedy arm: from `_index`, descend to the child whose scent best
/// matches the question until a leaf (or no child matches), then answer
/// with that node's body. No model.
pub fn greedy(forest: &mut dyn Forest, question: &str) -> ArmAnswer {
    let q = content_words(question);
    let mut node = "_index".to_string();
    let mut out = ArmAnswer::default();
    let mut path = vec![];
    let fields = json!(["id", "kind", "title", "summary", "tags", "aliases"]);
    for _ in 0..16 {
        let Ok(listing) = forest.call("scan", &obj(json!({"parent_id": node, "fields": fields, "limit": 50}))) else {
            break;
        };
        out.tokens += forest_vine::estimate(&listing);
        let kids = listing["nodes"].as_array().cloned().unwrap_or_default();
        let mut scored: Vec<usize> = kids.iter().map(|k| scent_score(&q, k)).collect();
        if scored.iter().all(|s| *s == 0) {
            // No child's own scent matches: look one level down (a branch
            // scores its best child's match).
            for (i, k) in kids.iter().enumerate().filter(|(_, k)| k["kind"].as_str() == Some("branch")) {
                let id = k["id"].as_str().unwrap_or("");
                if let Ok(sub) = forest.call("scan", &obj(json!({"parent_id": id, "fields": fields, "limit": 50}))) {
                    out.tokens += forest_vine::estimate(&sub);
                    let subs = sub["nodes"].as_array().cloned().unwrap_or_default();
                    scored[i] = subs.iter().map(|c| scent_score(&q, c)).max().unwrap_or(0);
                }
            }
        }
        let best = (0..kids.len()).filter(|&i| scored[i] > 0).fold(None::<usize>, |acc, i| match acc {
            Some(a) if scored[a] >= scored[i] => Some(a),
            _ => Some(i),
        });
        let Some(child) = best.map(|i| &kids[i]) else { break };
        let id = child["id"].as_str().unwrap_or("").to_string();
        path.push(id.clone());
        node = id;
        if child["kind"].as_str() != Some("branch") {
            break;
        }
    }
    out.hops = Some(path.len());
    if node != "_index" {
        if let Ok(body) = forest.call("pick", &obj(json!({"id": node}))) {
            out.tokens += forest_vine::estimate(&body);
            out.answer = body["body"].as_str().map(String::from);
        }
        out.answer_nodes = vec![node];
    }
    out.detail = json!({"path": path});
    out
}

/// Every node's chunks, read through `scan` (recursive, paged) and `pick`.
pub fn chunk_forest(forest: &mut dyn Forest) -> Vec<Chunk> {
    let mut rows = vec![];
    let mut after: Option<String> = None;
    loop {
        let mut a = json!({"parent_id": "_index", "recursive": true, "fields": ["id", "kind", "title", "summary"], "limit": 50});
        if let Some(x) = &after {
            a["after"] = json!(x);
        }
        let Ok(page) = forest.call("scan", &obj(a)) else { break };
        let nodes = page["nodes"].as_array().cloned().unwrap_or_default();
        rows.extend(nodes.iter().cloned());
        match page["next"].as_str() {
            Some(n) if !nodes.is_empty() && after.as_deref() != Some(n) => after = Some(n.to_string()),
            _ => break,
        }
    }
    let mut out = vec![];
    for r in rows {
        let id = r["id"].as_str().unwrap_or("").to_string();
        let body = match forest.call("pick", &obj(json!({"id": id}))) {
            Ok(b) => b["body"].as_str().unwrap_or("").to_string(),
            Err(_) => String::new(),
        };
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        out.extend(node_chunks(&id, &s("title"), &s("summary"), &body));
    }
    out
}

const TOPK_PROMPT: &str = "Answer the question using only the context below. Reply with only JSON \
{\"text\": \"...\", \"answer_nodes\": [\"ids in brackets from the context\"]}. If the context does not \
hold the answer, say so in text.";

/// The topk arm: the 6 best chunks as context, one call.
pub fn topk(index: &ChunkIndex, llm: &dyn Chat, question: &str) -> ArmAnswer {
    let hits = index.search(question, TOPK_K);
    let context = hits.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n\n---\n\n");
    let user = format!("Context:\n{context}\n\nQuestion: {question}");
    let mut out = ArmAnswer { tokens: estimate_str(&context), hops: Some(1), ..ArmAnswer::default() };
    match llm.chat(&[msg("system", TOPK_PROMPT), msg("user", &user)]) {
        Ok(reply) => match salvage(&reply) {
            Some((t, n, _, _)) => {
                out.answer = Some(t);
                out.answer_nodes = n;
            }
            None => out.answer = Some(reply),
        },
        Err(e) => out.detail = json!({"error": e.to_string()}),
    }
    out.detail["retrieval"] = json!("bm25");
    out.detail["chunks"] = json!(hits.iter().map(|c| c.id.clone()).collect::<Vec<_>>());
    out
}

const ITER_PROMPT: &str = "You answer questions from a document store. Each turn reply with ONE JSON \
object: {\"tool\":\"search\",\"args\":{\"query\":\"...\"}} returns the 5 best passages as [{id, text}]; \
{\"tool\":\"answer\",\"args\":{\"text\":\"...\",\"answer_nodes\":[\"ids\"]}} ends. Search again with \
new words when a passage points elsewhere.";

/// The iterative arm: ≤ 14 turns of search/answer; no forced synthesis.
pub fn iterative(index: &ChunkIndex, llm: &dyn Chat, question: &str) -> ArmAnswer {
    let mut messages = vec![msg("system", ITER_PROMPT), msg("user", &format!("Question: {question}"))];
    let mut out = ArmAnswer { hops: Some(0), ..ArmAnswer::default() };
    for _ in 0..ITER_TURNS {
        let reply = match llm.chat(&messages) {
            Ok(r) => r,
            Err(e) => {
                out.detail = json!({"error": e.to_string()});
                break;
            }
        };
        messages.push(msg("assistant", &reply));
        let Some(a) = parse_action(&reply) else {
            messages.push(msg("user", "Reply with ONE JSON object: search or answer."));
            continue;
        };
        if a.tool == "answer" {
            if let Some((t, n, _, _)) = salvage(&reply) {
                out.answer = Some(t);
                out.answer_nodes = n.into_iter().map(|x| x.split('#').next().unwrap_or("").to_string()).collect();
            }
            break;
        }
        let q = a.args.get("query").and_then(Value::as_str).unwrap_or(question);
        let payload: Vec<Value> = index
            .search(q, ITER_K)
            .into_iter()
            .map(|c| {
                let t: String = c.text.chars().take(ITER_CHARS).collect();
                let t = if c.text.chars().count() > ITER_CHARS { format!("{t}…") } else { t };
                json!({"id": c.id, "text": t})
            })
            .collect();
        let payload = Value::Array(payload);
        out.tokens += forest_vine::estimate(&payload);
        out.hops = out.hops.map(|h| h + 1);
        messages.push(msg("user", &payload.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scent_prefers_title_and_tags() {
        let q = content_words("What is the catalog code of the field telemetry devices?");
        assert!(q.contains("device") && q.contains("telemetry") && !q.contains("the"));
        let a = json!({"id": "products/_index", "title": "Products", "summary": "Devices and kits", "tags": []});
        let b = json!({"id": "people/_index", "title": "People", "summary": "The team", "tags": ["team"]});
        let c = json!({"id": "products/sensor-x", "title": "Sensor X", "summary": "field telemetry device", "tags": ["telemetry"]});
        assert!(scent_score(&q, &a) > scent_score(&q, &b));
        assert!(scent_score(&q, &c) > scent_score(&q, &a));
    }
}
