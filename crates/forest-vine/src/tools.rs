//! The MCP tool surface: names, descriptions and input schemas, rendered
//! the way the reference server (pydantic) renders them, so an agent
//! configured for one server works with the other. Built from the
//! primitives' adverts in [`crate::prims::REGISTRY`], not copied: a test
//! compares it with the reference's listing.

use once_cell::sync::Lazy;
use serde_json::{json, Map, Value};

pub use crate::primitive::P;
use crate::prims::REGISTRY;

const FOREST: (&str, P) = ("forest", P::OptStr);

/// One tool: name, description, advertised parameters.
pub type ToolDef = (&'static str, &'static str, Vec<(&'static str, P)>);

/// `(tool, description, params)` in the reference's `tools/list` order:
/// `forests` (the server's own), then every advertised primitive.
pub static TOOLS: Lazy<Vec<ToolDef>> = Lazy::new(|| {
    let forests: ToolDef = ("forests", "List the forests this server can navigate (spec C.0).", vec![]);
    let prims = REGISTRY.iter().filter_map(|e| {
        let (desc, params) = e.tool?;
        let mut p = params.to_vec();
        p.push(FOREST);
        Some((e.name, desc, p))
    });
    std::iter::once(forests).chain(prims).collect()
});

fn title(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn prop(name: &str, p: P, tool: &str) -> (Value, bool) {
    let s = json!({"type": "string"});
    let sl = json!({"items": {"type": "string"}, "type": "array"});
    let o = json!({"additionalProperties": true, "type": "object"});
    let nul = json!({"type": "null"});
    let t = title(name);
    // close_session.success is required in the reference (no default).
    let (v, req) = match p {
        P::Bool(_) if tool == "close_session" => (json!({"title": t, "type": "boolean"}), true),
        P::Str => (json!({"title": t, "type": "string"}), true),
        P::OptStr => (json!({"anyOf": [s, nul], "default": null, "title": t}), false),
        P::Int(d) => (json!({"default": d, "title": t, "type": "integer"}), false),
        P::Bool(d) => (json!({"default": d, "title": t, "type": "boolean"}), false),
        P::StrDef(d) => (json!({"default": d, "title": t, "type": "string"}), false),
        P::StrList => (json!({"items": {"type": "string"}, "title": t, "type": "array"}), true),
        P::OptStrList => (json!({"anyOf": [sl, nul], "default": null, "title": t}), false),
        P::StrOrList => (json!({"anyOf": [s, sl], "title": t}), true),
        P::OptStrOrList => (json!({"anyOf": [s, sl, nul], "default": null, "title": t}), false),
        P::Obj => (json!({"additionalProperties": true, "title": t, "type": "object"}), true),
        P::OptObj => (json!({"anyOf": [o, nul], "default": null, "title": t}), false),
        P::ObjOrList => (json!({"anyOf": [o, {"items": o, "type": "array"}], "title": t}), true),
    };
    (v, req)
}

/// `{name, description, inputSchema}` of every tool, in order.
pub fn listing() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|(name, desc, params)| {
            let mut props = Map::new();
            let mut required = vec![];
            for (p, ty) in params.iter() {
                let (v, req) = prop(p, *ty, name);
                if req {
                    required.push(json!(p));
                }
                props.insert(p.to_string(), v);
            }
            let mut schema = Map::new();
            schema.insert("properties".into(), Value::Object(props));
            if !required.is_empty() {
                schema.insert("required".into(), Value::Array(required));
            }
            schema.insert("type".into(), json!("object"));
            schema.insert("title".into(), json!(format!("{name}Arguments")));
            json!({"name": name, "description": desc, "inputSchema": schema})
        })
        .collect()
}

/// Server instructions (paraphrasing the reference's two ways in).
pub const INSTRUCTIONS: &str = "Two ways in: harvest(query) for one-shot evidence, or navigate — look('_index'), \
locate (curated scent), sniff (bodies), look, move, pick, query. plant/graft write nodes, tend writes dataset rows. \
Close the hunt with close_session(success, answer_nodes) so the trail keeps its heat.";
