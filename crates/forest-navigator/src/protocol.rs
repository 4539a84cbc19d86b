//! The text protocol of the navigator (navigator spec §1): one JSON object
//! `{"tool": NAME, "args": {...}}` per model turn, the tool templates, the
//! system prompt, the width-aware step budget, the visited-cache keys and
//! the `response_format` schemas that constrain a model to valid actions.
//! Pure: no I/O.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
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

/// How the model is asked for its actions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Actions {
    /// Every turn carries a `response_format` json_schema of the allowed
    /// actions ([`action_schema`]); a server that refuses it gets the text
    /// protocol for the rest of the run.
    #[default]
    Schema,
    /// The text protocol only: the prompt describes the actions, the reply
    /// is parsed by [`parse_action`].
    Text,
}

/// An option value that names none of its choices.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{value}' ({allowed})")]
pub struct UnknownChoice {
    /// What the option chooses.
    pub what: &'static str,
    /// The value given.
    pub value: String,
    /// The choices, `|`-separated.
    pub allowed: &'static str,
}

impl std::str::FromStr for Actions {
    type Err = UnknownChoice;
    fn from_str(s: &str) -> Result<Self, UnknownChoice> {
        match s {
            "schema" => Ok(Actions::Schema),
            "text" => Ok(Actions::Text),
            other => Err(UnknownChoice { what: "actions mode", value: other.to_string(), allowed: "schema|text" }),
        }
    }
}

impl Actions {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Actions::Schema => "schema",
            Actions::Text => "text",
        }
    }
}

/// Longest string a constrained model may write for a query, a term or an
/// id when no ids are known (a 135M model fills a free string with digits
/// up to its bound).
pub const MAX_ARG_CHARS: usize = 120;
/// Longest answer text.
pub const MAX_ANSWER_CHARS: usize = 300;
/// Longest proof.
pub const MAX_PROOF_CHARS: usize = 200;
/// Longest SQL statement.
pub const MAX_SQL_CHARS: usize = 300;
/// Most ids an id argument's `enum` lists.
pub const MAX_ENUM_IDS: usize = 200;

fn string(max: usize) -> Value {
    json!({"type": "string", "maxLength": max})
}

/// An id argument: one of `ids` (the ids the hunt has seen) when any are
/// known, else a bounded string.
fn id_schema(ids: &[String]) -> Value {
    if ids.is_empty() {
        string(MAX_ARG_CHARS)
    } else {
        json!({"type": "string", "enum": ids.iter().take(MAX_ENUM_IDS).collect::<Vec<_>>()})
    }
}

fn nullable(v: Value) -> Value {
    json!({"anyOf": [v, {"type": "null"}]})
}

/// One action object: `tool` fixed to `name`, `args` with `props`
/// (`required` among them, no others).
fn action(name: &str, props: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": [name]},
            "args": {"type": "object", "properties": props, "required": required, "additionalProperties": false}
        },
        "required": ["tool", "args"],
        "additionalProperties": false
    })
}

/// The `answer` action; with `sniff` (the solo navigator) it carries
/// `confidence` and `proof`, as the prompt's template does.
fn answer_action(sniff: bool, ids: &[String]) -> Value {
    let mut props = json!({
        "text": string(MAX_ANSWER_CHARS),
        "answer_nodes": {"type": "array", "items": id_schema(ids), "maxItems": 5}
    });
    if sniff {
        props["confidence"] = json!({"type": "number"});
        props["proof"] = string(MAX_PROOF_CHARS);
    }
    action("answer", props, &["text", "answer_nodes"])
}

/// The read actions of [`tool_catalogue`] (without `sniff` unless offered).
fn read_actions(sniff: bool, ids: &[String]) -> Vec<Value> {
    let k = json!({"type": "integer", "minimum": 1, "maximum": 10});
    let id = id_schema(ids);
    let mut v = vec![action("locate", json!({"query": string(MAX_ARG_CHARS), "k": k}), &["query"])];
    if sniff {
        v.push(action(
            "sniff",
            json!({"terms": {"type": "array", "items": string(60), "minItems": 1, "maxItems": 5},
                "scope": nullable(id.clone())}),
            &["terms"],
        ));
    }
    v.extend([
        action("look", json!({"id": id}), &["id"]),
        action("move", json!({"id": id, "rel": nullable(string(40))}), &["id"]),
        action("pick", json!({"id": id, "section": nullable(string(MAX_ARG_CHARS))}), &["id"]),
        action("query", json!({"id": id, "sql": string(MAX_SQL_CHARS)}), &["id", "sql"]),
        action(
            "scan",
            json!({"parent_id": id, "filter": {"type": "object", "properties": {
                "tags_any": {"type": "array", "items": string(60), "maxItems": 5},
                "kind": {"type": "string", "enum": ["note", "branch"]},
                "updated_after": string(40)}, "additionalProperties": false}}),
            &["parent_id"],
        ),
        action("harvest", json!({"query": string(MAX_ARG_CHARS), "k": k}), &["query"]),
    ]);
    v
}

fn response_format(name: &str, schema: Value) -> Value {
    json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}})
}

/// The `response_format` of a navigator turn: exactly the actions of
/// [`tool_catalogue`]`(sniff)`, one `anyOf` branch per tool, every string
/// bounded so a small model cannot ramble to `max_tokens`. `ids` (the ids
/// the hunt has seen, most useful first, at most [`MAX_ENUM_IDS`] used)
/// are the values an id argument may take; empty: any bounded string.
pub fn action_schema(sniff: bool, ids: &[String]) -> Value {
    let mut any = read_actions(sniff, ids);
    any.push(answer_action(sniff, ids));
    response_format("navigator_action", json!({"anyOf": any}))
}

/// The `response_format` of a turn that must answer (forced synthesis, a
/// monkey's last turn, the judge): the `answer` action only.
pub fn answer_schema(sniff: bool, ids: &[String]) -> Value {
    response_format("navigator_answer", answer_action(sniff, ids))
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

/// The first place a value breaks an action schema, and how.
#[cfg(test)]
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{at}: {what}")]
pub(crate) struct SchemaViolation {
    /// JSON path of the value (`$.args.id`).
    at: String,
    /// What is wrong there.
    what: String,
}

#[cfg(test)]
impl SchemaViolation {
    fn new(at: &str, what: String) -> Self {
        SchemaViolation { at: at.to_string(), what }
    }
}

/// A JSON Schema checker for the subset the action schemas use (no
/// `jsonschema` crate in the workspace): `Err` names the first violation,
/// and a keyword outside the subset is an error, not silently ignored.
#[cfg(test)]
pub(crate) fn check(schema: &Value, v: &Value, at: &str) -> Result<(), SchemaViolation> {
    const KNOWN: [&str; 12] = [
        "type",
        "enum",
        "anyOf",
        "properties",
        "required",
        "additionalProperties",
        "maxLength",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
    ];
    let s = schema.as_object().ok_or_else(|| SchemaViolation::new(at, "schema is not an object".into()))?;
    if let Some(k) = s.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(SchemaViolation::new(at, format!("keyword '{k}' outside the checked subset")));
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        let errs: Vec<String> = any.iter().filter_map(|b| check(b, v, at).err().map(|e| e.to_string())).collect();
        if errs.len() == any.len() {
            return Err(SchemaViolation::new(at, format!("no anyOf branch matches ({})", errs.join("; "))));
        }
    }
    let ty = s.get("type").and_then(Value::as_str);
    let ok = match ty {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("object") => v.is_object(),
        Some("array") => v.is_array(),
        Some("null") => v.is_null(),
        Some(other) => return Err(SchemaViolation::new(at, format!("unknown type '{other}'"))),
        None => true,
    };
    if !ok {
        return Err(SchemaViolation::new(at, format!("{v} is not of type {}", ty.unwrap_or("?"))));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            return Err(SchemaViolation::new(at, format!("{v} not in {}", Value::Array(e.clone()))));
        }
    }
    let num = |k: &str| s.get(k).and_then(Value::as_f64);
    if let (Some(x), Some(m)) = (v.as_f64(), num("minimum")) {
        if x < m {
            return Err(SchemaViolation::new(at, format!("{x} < minimum {m}")));
        }
    }
    if let (Some(x), Some(m)) = (v.as_f64(), num("maximum")) {
        if x > m {
            return Err(SchemaViolation::new(at, format!("{x} > maximum {m}")));
        }
    }
    if let (Some(t), Some(m)) = (v.as_str(), num("maxLength")) {
        if t.chars().count() as f64 > m {
            return Err(SchemaViolation::new(at, format!("longer than {m}")));
        }
    }
    if let Some(a) = v.as_array() {
        if num("minItems").is_some_and(|m| (a.len() as f64) < m) || num("maxItems").is_some_and(|m| a.len() as f64 > m)
        {
            return Err(SchemaViolation::new(at, format!("{} items out of bounds", a.len())));
        }
        if let Some(items) = s.get("items") {
            for (i, x) in a.iter().enumerate() {
                check(items, x, &format!("{at}[{i}]"))?;
            }
        }
    }
    if let Some(o) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !o.contains_key(r) {
                return Err(SchemaViolation::new(at, format!("missing '{r}'")));
            }
        }
        for (k, x) in o {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => check(ps, x, &format!("{at}.{k}"))?,
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(SchemaViolation::new(at, format!("property '{k}' not allowed")))
                }
                None => {}
            }
        }
    }
    Ok(())
}

/// `check` against a `response_format` value's schema.
#[cfg(test)]
pub(crate) fn check_format(format: &Value, v: &Value) -> Result<(), SchemaViolation> {
    check(&format["json_schema"]["schema"], v, "$")
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

    /// The JSON examples of the system prompt's tool catalogue.
    fn prompt_examples(sniff: bool) -> Vec<Value> {
        system_prompt(sniff)
            .lines()
            .filter_map(|l| l.strip_prefix("- {"))
            .map(|l| {
                let t = format!("{{{}", l.split("  -- ").next().unwrap_or(""));
                serde_json::from_str(&t).unwrap_or_else(|e| panic!("example {t}: {e}"))
            })
            .collect()
    }

    #[test]
    fn every_prompt_example_validates_against_the_action_schema() {
        for sniff in [true, false] {
            let examples = prompt_examples(sniff);
            assert_eq!(examples.len(), tool_catalogue(sniff).len(), "one example per tool");
            let schema = action_schema(sniff, &[]);
            for e in &examples {
                assert_eq!(check_format(&schema, e), Ok(()), "{e}");
                assert!(parse_action(&e.to_string()).is_some(), "{e}");
            }
            let branches = schema["json_schema"]["schema"]["anyOf"].as_array().unwrap().len();
            assert_eq!(branches, examples.len(), "one anyOf branch per tool, sniff {sniff}");
            let answer = examples.iter().find(|e| e["tool"] == "answer").unwrap();
            assert_eq!(check_format(&answer_schema(sniff, &[]), answer), Ok(()));
        }
    }

    #[test]
    fn the_action_schema_refuses_what_the_loop_would_bounce() {
        let s = action_schema(true, &[]);
        let bad = [
            json!({"tool": "fly", "args": {}}),
            json!({"tool": "look", "args": {"id": 42}}),
            json!({"tool": "look", "args": {}}),
            json!({"tool": "pick", "args": {"id": "a", "bogus": 1}}),
            json!({"tool": "pick", "args": ["a"]}),
            json!({"tool": "locate", "args": {"query": "x".repeat(MAX_ARG_CHARS + 1)}}),
            json!({"tool": "locate", "args": {"query": "x", "k": 50}}),
            json!({"tool": "sniff", "args": {"terms": []}}),
            json!({"tool": "scan", "args": {"parent_id": "a", "filter": {"colour": "red"}}}),
            json!({"tool": "look", "args": {"id": "a"}, "thought": "..."}),
        ];
        for b in &bad {
            assert!(check_format(&s, b).is_err(), "{b} should be refused");
        }
        let good = json!({"tool": "move", "args": {"id": "people/_index", "rel": "children"}});
        assert_eq!(check_format(&s, &good), Ok(()));
        let no_sniff = action_schema(false, &[]);
        assert!(check_format(&no_sniff, &json!({"tool": "sniff", "args": {"terms": ["a"]}})).is_err());
        let answer_only = answer_schema(true, &[]);
        assert!(check_format(&answer_only, &json!({"tool": "look", "args": {"id": "a"}})).is_err());
        assert_eq!(s["type"], "json_schema");
    }

    #[test]
    fn known_ids_are_the_only_ids() {
        let ids = vec!["products/sensor-x".to_string(), "products/_index".to_string()];
        let s = action_schema(true, &ids);
        let ok = json!({"tool": "pick", "args": {"id": "products/sensor-x"}});
        assert_eq!(check_format(&s, &ok), Ok(()));
        let scoped = json!({"tool": "sniff", "args": {"terms": ["A-101"], "scope": "products/_index"}});
        assert_eq!(check_format(&s, &scoped), Ok(()));
        for bad in [
            json!({"tool": "pick", "args": {"id": "products/sensor-y"}}),
            json!({"tool": "scan", "args": {"parent_id": "1234567890"}}),
            json!({"tool": "answer", "args": {"text": "t", "answer_nodes": ["made/up"]}}),
        ] {
            assert!(check_format(&s, &bad).is_err(), "{bad}");
        }
        let many: Vec<String> = (0..MAX_ENUM_IDS + 50).map(|i| format!("n/{i}")).collect();
        let big = action_schema(true, &many);
        let listed = big.pointer("/json_schema/schema/anyOf/2/properties/args/properties/id/enum").unwrap();
        assert_eq!(listed.as_array().unwrap().len(), MAX_ENUM_IDS);
    }

    #[test]
    fn actions_mode_parses() {
        assert_eq!("schema".parse::<Actions>(), Ok(Actions::Schema));
        assert_eq!("text".parse::<Actions>(), Ok(Actions::Text));
        assert!("json".parse::<Actions>().is_err());
        assert_eq!(Actions::default().as_str(), "schema");
    }
}
