//! The MCP tool surface: names, descriptions and input schemas, rendered
//! the way the reference server (pydantic) renders them, so an agent
//! configured for one server works with the other. Built from this table,
//! not copied: a test compares it with the reference's listing.

use serde_json::{json, Map, Value};

/// Schema shape of one advertised parameter.
#[derive(Debug, Clone, Copy)]
pub enum P {
    /// string, required
    Str,
    /// string|null = null
    OptStr,
    /// integer = default
    Int(i64),
    /// boolean = default
    Bool(bool),
    /// string = default
    StrDef(&'static str),
    /// [string], required
    StrList,
    /// [string]|null = null
    OptStrList,
    /// string|[string], required
    StrOrList,
    /// string|[string]|null = null
    OptStrOrList,
    /// object, required
    Obj,
    /// object|null = null
    OptObj,
    /// object|[object], required
    ObjOrList,
}

const FOREST: (&str, P) = ("forest", P::OptStr);

/// One tool: name, description, advertised parameters.
pub type ToolDef = (&'static str, &'static str, &'static [(&'static str, P)]);

/// `(tool, description, params)` in the reference's `tools/list` order.
pub const TOOLS: &[ToolDef] = &[
    ("forests", "List the forests this server can navigate (spec C.0).", &[]),
    ("harvest", "One-shot evidence: ranked notes with their body or matched sections and exact snippets (locate and sniff fused, superseded notes left out unless include_superseded). lang filters both halves.", &[("query", P::Str), ("terms", P::OptStrList), ("k", P::Int(3)), ("lang", P::OptStr), ("include_superseded", P::Bool(false)), FOREST]),
    ("locate", "Find entry points over curated metadata (titles, aliases, tags, summaries). scope: all|branches|notes. include=[\"outline\"] adds section headers; since/until (YYYY, YYYY-MM or YYYY-MM-DD) bound by date; lang filters by declared language. An empty answer points at sniff(), which searches bodies.", &[("query", P::Str), ("k", P::Int(5)), ("scope", P::StrDef("all")), ("type_filter", P::OptStr), ("include", P::OptStrList), ("since", P::OptStr), ("until", P::OptStr), ("date_field", P::OptStr), ("lang", P::OptStr), FOREST]),
    ("sniff", "Literal search over node bodies: exact terms -> node + section + snippet. since/until bound it by date; lang narrows it to a declared language.", &[("terms", P::StrOrList), ("scope", P::OptStr), ("k", P::Int(5)), ("type_filter", P::OptStr), ("since", P::OptStr), ("until", P::OptStr), ("date_field", P::OptStr), ("lang", P::OptStr), FOREST]),
    ("calendar", "How many nodes each period holds, most recent first; each bucket carries the since/until the windowed reads take. granularity: day|week|month|year.", &[("scope", P::OptStr), ("date_field", P::StrDef("created")), ("granularity", P::StrDef("month")), ("since", P::OptStr), ("until", P::OptStr), ("limit", P::Int(24)), FOREST]),
    ("look", "Digest of a node (<=500 tokens): summary, outline/children, edges, provenance, stats. id may be a list of up to 10 (one 2000-token budget). fields narrows the digest; a clipped field is named in truncated_fields.", &[("id", P::StrOrList), ("fields", P::OptStrList), FOREST]),
    ("move", "Neighbors of a node (<=600 tokens). rel='children' lists a branch's children; direction out|in|both.", &[("id", P::Str), ("rel", P::OptStr), ("direction", P::StrDef("out")), FOREST]),
    ("pick", "The body (or sections) of a node in one 4000-token budget. id may be a list of up to 5, section a list of up to 10. A longer body comes in pages: pass next back as after.", &[("id", P::StrOrList), ("section", P::OptStrOrList), ("after", P::OptStr), FOREST]),
    ("view", "The image behind a media node, as an MCP image block beside a JSON header (local payloads, images only, at most 6 MiB).", &[("id", P::Str), FOREST]),
    ("query", "Read-only SELECT/WITH over a dataset node's SQLite payload (200 rows, 2 s, 2000 tokens).", &[("id", P::Str), ("sql", P::Str), FOREST]),
    ("tend", "Write to a dataset node's SQLite payload: one INSERT/UPDATE/DELETE, WHERE required on UPDATE/DELETE; refreshes payload_hash and commits the .md.", &[("id", P::Str), ("sql", P::Str), FOREST]),
    ("scan", "Metadata listing of a branch's children from the catalog (no file opens), <=800 tokens; fewer fields means more items per page.", &[("parent_id", P::Str), ("filter", P::OptObj), ("fields", P::OptStrList), ("recursive", P::Bool(false)), ("limit", P::Int(50)), FOREST]),
    ("plant", "Create a node (atomic: file + parent index + one git commit). node needs id, type, title, summary (<=60 tokens), parent; a list plants up to 20 in one commit.", &[("node", P::ObjOrList), ("if_absent", P::Bool(false)), ("dry_run", P::Bool(false)), FOREST]),
    ("graft", "Patch a node in one commit: set_frontmatter, add_links, remove_links, append_section, replace_section, replace_body. Re-adding an existing link reinforces it (heat) instead of duplicating it.", &[("id", P::Str), ("patch", P::Obj), FOREST]),
    ("prune", "Delete a node in one commit; refused while other nodes point at it unless force=true.", &[("id", P::Str), ("force", P::Bool(false)), FOREST]),
    ("transplant", "Move a leaf to a new id in one commit; the old id answers E_MOVED with moved_to.", &[("id", P::Str), ("new_id", P::Str), FOREST]),
    ("history", "The commits that touched a node, newest first (<=50).", &[("id", P::Str), ("limit", P::Int(20)), FOREST]),
    ("close_session", "End the hunt: success with answer_nodes deposits heat on their trails and may suggest shortcuts.", &[("success", P::Bool(false)), ("answer_nodes", P::StrList), FOREST]),
];

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
