//! The text protocol of the navigator (navigator spec §1): one JSON object
//! `{"tool": NAME, "args": {...}}` per model turn, the tool templates, the
//! system prompt, the width-aware step budget and the visited-cache keys.
//! Pure: no I/O.

use serde_json::{json, Map, Value};

/// Read tools the navigator may call (plus the terminal `answer`).
pub const READ_TOOLS: [&str; 8] = ["locate", "sniff", "look", "move", "pick", "query", "scan", "harvest"];

/// Steps of a one-chain question (B(q) at w = 1).
pub const BASE_STEPS: usize = 14;
/// Extra steps per additional independent sub-chain.
pub const STEPS_PER_FORK: usize = 3;

/// `B(q) = 14 + 3·(w − 1)`; `w` = `fork_width` (missing or < 1 counts as 1).
pub fn step_budget(fork_width: Option<u64>) -> usize {
    let w = fork_width.unwrap_or(1).max(1) as usize;
    BASE_STEPS + STEPS_PER_FORK * (w - 1)
}

/// One parsed model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// Tool name as the model wrote it.
    pub tool: String,
    /// Arguments (a non-object `args` becomes an empty object plus
    /// `bad_args`, so the tool answers with an error envelope).
    pub args: Map<String, Value>,
    /// True when `args` was present but not an object.
    pub bad_args: bool,
}

/// The reference's parse rule: the span from the first `{` to the last `}`
/// decoded as JSON, else the whole reply; only an object with `"tool"`.
pub fn parse_action(reply: &str) -> Option<Action> {
    let span = match (reply.find('{'), reply.rfind('}')) {
        (Some(a), Some(b)) if b > a => &reply[a..=b],
        _ => reply,
    };
    let v: Value = serde_json::from_str(span).or_else(|_| serde_json::from_str(reply.trim())).ok()?;
    let obj = v.as_object()?;
    let tool = obj.get("tool")?.as_str()?.trim().to_string();
    let (args, bad_args) = match obj.get("args") {
        None | Some(Value::Null) => (Map::new(), false),
        Some(Value::Object(m)) => (m.clone(), false),
        Some(_) => (Map::new(), true),
    };
    Some(Action { tool, args, bad_args })
}

/// Words the visited key of `locate` ignores.
const STOP: [&str; 26] = [
    "the", "a", "an", "of", "in", "on", "for", "and", "or", "to", "with", "was", "is", "are", "what", "which", "who",
    "how", "many", "much", "did", "does", "do", "by", "from", "",
];

/// Lowercase alphanumeric tokens of `s`.
pub fn tokens(s: &str) -> Vec<String> {
    s.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// Sorted-key JSON of a value (serde_json's map keeps insertion order).
pub fn sorted_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// The visited-cache key of a call: `locate` = sorted set of its content
/// tokens; `sniff` = sorted lowercased terms + scope; else sorted-key JSON.
pub fn visited_key(tool: &str, args: &Map<String, Value>) -> String {
    match tool {
        "locate" => {
            let q = args.get("query").and_then(Value::as_str).unwrap_or("");
            let mut t: Vec<String> = tokens(q).into_iter().filter(|t| !STOP.contains(&t.as_str())).collect();
            t.sort();
            t.dedup();
            format!("locate:{}", t.join(" "))
        }
        "sniff" => {
            let mut terms: Vec<String> = match args.get("terms") {
                Some(Value::String(s)) => vec![s.to_lowercase()],
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_lowercase).collect(),
                _ => vec![],
            };
            terms.sort();
            let scope = args.get("scope").and_then(Value::as_str).unwrap_or("");
            format!("sniff:{}|{scope}", terms.join("\u{1f}"))
        }
        _ => format!("{tool}:{}", sorted_json(&Value::Object(args.clone()))),
    }
}

/// One-line template and gloss per tool (the prompt's catalogue).
pub fn tool_catalogue(sniff: bool) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        (r#"{"tool":"locate","args":{"query":"...","k":5}}"#, "ranked entry points over titles, tags and summaries"),
        (
            r#"{"tool":"sniff","args":{"terms":["..."],"scope":null}}"#,
            "literal search in bodies: node, section, snippet",
        ),
        (r#"{"tool":"look","args":{"id":"..."}}"#, "digest of a node: summary, outline, children, links"),
        (r#"{"tool":"move","args":{"id":"...","rel":null}}"#, "neighbours of a node; rel:\"children\" lists a branch"),
        (r#"{"tool":"pick","args":{"id":"...","section":null}}"#, "the body of a node, or one section of it"),
        (r#"{"tool":"query","args":{"id":"...","sql":"SELECT ..."}}"#, "read-only SQL over a dataset node"),
        (r#"{"tool":"scan","args":{"parent_id":"...","filter":{}}}"#, "metadata listing of a branch's children"),
        (
            r#"{"tool":"harvest","args":{"query":"...","k":3}}"#,
            "one-shot evidence: ranked notes with bodies or sections",
        ),
    ];
    if sniff {
        v.push((
            r#"{"tool":"answer","args":{"text":"...","answer_nodes":["full/id"],"confidence":0.9,"proof":"..."}}"#,
            "final answer (ends the hunt)",
        ));
    } else {
        v.retain(|(t, _)| !t.contains("\"sniff\""));
        v.push((
            r#"{"tool":"answer","args":{"text":"...","answer_nodes":["full/id"]}}"#,
            "final answer (ends the hunt)",
        ));
    }
    v
}

/// The navigator's system prompt: role, catalogue, strategy, rules, and
/// where the master index is (structure of the reference, own words).
pub fn system_prompt(sniff: bool) -> String {
    let mut s = String::from(
        "You navigate a knowledge forest: a tree of Markdown notes with short summaries, tags and typed links. \
You may only use the tools below and must never invent facts or ids.\n\nTools (reply with exactly ONE JSON object per turn):\n",
    );
    for (t, g) in tool_catalogue(sniff) {
        s.push_str(&format!("- {t}  -- {g}\n"));
    }
    s.push_str(
        "\nStrategy:\n\
- An exact rare term (a code, a name, a number): sniff it, then pick(id, section) on the hit.\n\
- A conceptual question: locate, look at the best hits, and open bodies (pick) only on the target.\n\
- \"Which/who among...\" questions: enumerate with move(branch, rel=\"children\") and look at each.\n\
- Spend few tokens: prefer look and sections over whole bodies.\n\
\nRules:\n\
- truncated:true means the result was cut, not that the rest is absent.\n\
- Repeating a call returns the same result; do something else.\n\
- Datasets are read only with query (their look shows the table manual); totals come only from query.\n\
- answer_nodes are exact full ids of nodes you opened or that sniff returned.\n\
- proof is one sentence copied verbatim from a result; text repeats its numbers.\n\
- confidence: 0.9 proven, 0.5 partial, 0.2 guess. A low-confidence answer is bounced back with what to fix.\n\
- The master index of the forest is in the first user message.\n",
    );
    s
}

/// The first user message: master index, then the question.
pub fn opening_message(index: &Value, question: &str) -> String {
    format!("Forest master index:\n{index}\n\nQuestion: {question}")
}

/// The nudge after an unparseable reply.
pub fn nudge() -> Value {
    json!({"error": {"code": "E_PROTOCOL", "message": "reply with ONE JSON object {\"tool\": NAME, \"args\": {...}}",
        "hint": "tools: locate, sniff, look, move, pick, query, scan, harvest, answer"}})
}

/// The envelope of a tool the navigator does not offer.
pub fn unknown_tool(tool: &str) -> Value {
    json!({"error": {"code": "E_SCHEMA", "message": format!("unknown tool '{tool}'"),
        "hint": "tools: locate, sniff, look, move, pick, query, scan, harvest, answer"}})
}

/// Token estimate of a string (`ceil(chars/4)`, code points).
pub fn estimate_str(s: &str) -> usize {
    s.chars().count().div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rule_takes_the_outer_braces() {
        let a = parse_action("Sure! {\"tool\": \"look\", \"args\": {\"id\": \"a/b\"}} done").unwrap();
        assert_eq!(a.tool, "look");
        assert_eq!(a.args["id"], "a/b");
        assert!(parse_action("no json here").is_none());
        assert!(parse_action("{\"args\": {}}").is_none(), "an object without tool is refused");
        assert!(parse_action("[1, 2]").is_none());
        let b = parse_action("{\"tool\": \"pick\", \"args\": [\"x\"]}").unwrap();
        assert!(b.bad_args && b.args.is_empty());
        let c = parse_action("```json\n{\"tool\":\"locate\",\n \"args\":{\"query\":\"q\"}}\n```").unwrap();
        assert_eq!(c.args["query"], "q");
        // Two objects: the greedy span does not decode, the whole reply neither.
        assert!(parse_action("{\"tool\":\"a\"} {\"tool\":\"b\"}").is_none());
    }

    #[test]
    fn budget_is_width_aware() {
        assert_eq!(step_budget(None), 14);
        assert_eq!(step_budget(Some(0)), 14);
        assert_eq!(step_budget(Some(1)), 14);
        assert_eq!(step_budget(Some(3)), 20);
    }

    #[test]
    fn visited_keys_normalise() {
        let m = |v: Value| v.as_object().cloned().unwrap();
        assert_eq!(
            visited_key("locate", &m(json!({"query": "What is the Sensor-X code?"}))),
            visited_key("locate", &m(json!({"query": "code sensor x", "k": 3})))
        );
        assert_eq!(
            visited_key("sniff", &m(json!({"terms": ["B", "a"]}))),
            visited_key("sniff", &m(json!({"terms": ["A", "b"], "scope": null})))
        );
        assert_ne!(
            visited_key("sniff", &m(json!({"terms": ["a"], "scope": "x"}))),
            visited_key("sniff", &m(json!({"terms": ["a"]})))
        );
        assert_eq!(
            visited_key("look", &m(json!({"id": "a", "fields": ["x"]}))),
            visited_key("look", &m(json!({"fields": ["x"], "id": "a"})))
        );
    }

    #[test]
    fn prompt_lists_every_tool_once() {
        let p = system_prompt(true);
        for t in READ_TOOLS {
            assert!(p.contains(&format!("\"tool\":\"{t}\"")), "{t}");
        }
        assert!(!system_prompt(false).contains("\"sniff\""));
        assert_eq!(estimate_str("abcde"), 2);
    }
}
