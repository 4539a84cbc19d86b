//! One entry point for every surface (MCP tools, CLI verbs): the C.12
//! signature table is enforced before dispatch (unknown parameter, missing
//! required, null for required, wrong type → `E_SCHEMA` naming the
//! primitive), then the call is traced.

use std::time::Instant;

use serde_json::{json, Map, Value};

use crate::engine::Vine;
use crate::error::{VResult, VineError};
use crate::harvest::HarvestArgs;
use crate::pick::SectionArg;
use crate::read::{IdArg, LocateArgs};
use crate::scan::ScanArgs;
use crate::sniff::SniffArgs;

/// Wire types of the signature table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// string
    Str,
    /// integer (bool refused)
    Int,
    /// boolean
    Bool,
    /// list of strings
    StrList,
    /// string or list of strings
    StrOrList,
    /// object
    Obj,
    /// object or list of objects
    ObjOrList,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Str => "string",
            Ty::Int => "integer",
            Ty::Bool => "boolean",
            Ty::StrList => "list of string",
            Ty::StrOrList => "string or list of string",
            Ty::Obj => "object",
            Ty::ObjOrList => "object or list of object",
        }
    }
    fn admits(self, v: &Value) -> bool {
        let strs = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
        match self {
            Ty::Str => v.is_string(),
            Ty::Int => v.is_i64() || v.is_u64(),
            Ty::Bool => v.is_boolean(),
            Ty::StrList => strs(v),
            Ty::StrOrList => v.is_string() || strs(v),
            Ty::Obj => v.is_object(),
            Ty::ObjOrList => v.is_object() || v.as_array().is_some_and(|a| a.iter().all(Value::is_object)),
        }
    }
}

fn what(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "boolean".into(),
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Object(_) => "object".into(),
        Value::Array(a) if a.is_empty() => "empty list".into(),
        Value::Array(a) => {
            let mut kinds: Vec<String> = a.iter().map(what).collect();
            kinds.sort();
            kinds.dedup();
            format!("list of {}", kinds.join("/"))
        }
    }
}

/// `(name, type, required)` per primitive (C.12 wire names + `lang` + `forest`).
pub fn signature(prim: &str) -> Option<&'static [(&'static str, Ty, bool)]> {
    use Ty::*;
    Some(match prim {
        "locate" => &[
            ("query", Str, true),
            ("k", Int, false),
            ("scope", Str, false),
            ("type_filter", Str, false),
            ("include", StrList, false),
            ("since", Str, false),
            ("until", Str, false),
            ("date_field", Str, false),
            ("lang", Str, false),
            ("hybrid", Bool, false),
            ("fusion", Str, false),
        ],
        "look" => {
            &[("id", StrOrList, true), ("fields", StrList, false), ("gauntlet", Bool, false), ("toward", Str, false)]
        }
        "move" => &[
            ("id", Str, true),
            ("rel", Str, false),
            ("direction", Str, false),
            ("gauntlet", Bool, false),
            ("toward", Str, false),
        ],
        "pick" => &[("id", StrOrList, true), ("section", StrOrList, false), ("after", Str, false)],
        "view" => &[("id", Str, true)],
        "scan" => &[
            ("parent_id", Str, true),
            ("filter", Obj, false),
            ("fields", StrList, false),
            ("recursive", Bool, false),
            ("limit", Int, false),
            ("after", Str, false),
            ("gauntlet", Bool, false),
            ("toward", Str, false),
            ("since", Str, false),
            ("until", Str, false),
            ("date_field", Str, false),
        ],
        "sniff" => &[
            ("terms", StrOrList, true),
            ("scope", Str, false),
            ("k", Int, false),
            ("type_filter", Str, false),
            ("since", Str, false),
            ("until", Str, false),
            ("date_field", Str, false),
            ("lang", Str, false),
        ],
        "calendar" => &[
            ("scope", Str, false),
            ("date_field", Str, false),
            ("granularity", Str, false),
            ("since", Str, false),
            ("until", Str, false),
            ("limit", Int, false),
        ],
        "coverage" => &[("scope", Str, false), ("date_field", Str, false)],
        "query" | "tend" => &[("id", Str, true), ("sql", Str, true)],
        "plant" => &[("node", ObjOrList, true), ("if_absent", Bool, false), ("dry_run", Bool, false)],
        "graft" => &[("id", Str, true), ("patch", Obj, true)],
        "prune" => &[("id", Str, true), ("force", Bool, false)],
        "transplant" => &[("id", Str, true), ("new_id", Str, true)],
        "history" => &[("id", Str, true), ("limit", Int, false)],
        "harvest" => &[
            ("query", Str, true),
            ("terms", StrList, false),
            ("k", Int, false),
            ("since", Str, false),
            ("until", Str, false),
            ("date_field", Str, false),
            ("include_superseded", Bool, false),
            ("lang", Str, false),
        ],
        "close_session" => &[("success", Bool, true), ("answer_nodes", StrList, true)],
        _ => return None,
    })
}

/// Primitives whose calls are traced (vine spec §3.1).
const TRACED: [&str; 16] = [
    "locate",
    "look",
    "move",
    "pick",
    "view",
    "query",
    "scan",
    "sniff",
    "calendar",
    "coverage",
    "history",
    "plant",
    "graft",
    "tend",
    "prune",
    "transplant",
];

/// Validate `args` against the table; returns the arguments with nulls
/// removed (null = absent for optional parameters).
pub fn validate(prim: &str, args: &Map<String, Value>) -> VResult<Map<String, Value>> {
    let sig = signature(prim).ok_or_else(|| VineError::schema(format!("unknown primitive '{prim}'")))?;
    let mut clean = Map::new();
    for (k, v) in args {
        if k == "forest" {
            continue;
        }
        let Some((_, ty, req)) = sig.iter().find(|(n, _, _)| n == k) else {
            let names: Vec<&str> = sig.iter().map(|s| s.0).collect();
            return Err(VineError::schema(format!("{prim}: unknown parameter '{k}'"))
                .hint(format!("{prim} accepts: {}.", names.join(", "))));
        };
        if v.is_null() {
            if *req {
                return Err(VineError::schema(format!(
                    "{prim}: parameter '{k}' is required and was null ({})",
                    ty.name()
                )));
            }
            continue;
        }
        if !ty.admits(v) {
            return Err(VineError::schema(format!("{prim}: parameter '{k}' expects {}, got {}", ty.name(), what(v))));
        }
        cap(prim, k, v)?;
        clean.insert(k.clone(), v.clone());
    }
    for (n, ty, req) in sig {
        if *req && !clean.contains_key(*n) {
            return Err(VineError::schema(format!("{prim}: missing required parameter '{n}' ({})", ty.name())));
        }
    }
    Ok(clean)
}

/// Characters a string parameter may hold (`sql` has [`MAX_SQL`]).
pub const MAX_TEXT: usize = 4096;
/// Characters of one sniff term.
pub const MAX_TERM: usize = 256;
/// Characters of a `query`/`tend` statement.
pub const MAX_SQL: usize = 100_000;
/// Entries of a list parameter.
pub const MAX_LIST: usize = 256;
/// Serialized bytes of an object parameter (`plant`'s nodes, `graft`'s patch).
pub const MAX_OBJECT: usize = 4 << 20;

/// Size caps of one parameter: refused fast with a clear `E_SCHEMA`
/// before any work (a 400k-word locate never reaches the index).
fn cap(prim: &str, k: &str, v: &Value) -> VResult<()> {
    let too = |what: String, max: usize| {
        Err(VineError::schema(format!("{prim}: parameter '{k}' is too large ({what}, at most {max})"))
            .hint("Shorten it: a few distinctive words find as much as a pasted document."))
    };
    let max = if k == "sql" {
        MAX_SQL
    } else if k == "terms" {
        MAX_TERM
    } else {
        MAX_TEXT
    };
    match v {
        Value::String(t) if t.len() > max && t.chars().count() > max => {
            too(format!("{} chars", t.chars().count()), max)
        }
        Value::Array(a) if a.len() > MAX_LIST => too(format!("{} entries", a.len()), MAX_LIST),
        Value::Array(a) => a.iter().try_for_each(|x| cap(prim, k, x)),
        Value::Object(_) => {
            let n = serde_json::to_string(v).map(|t| t.len()).unwrap_or(usize::MAX);
            if n > MAX_OBJECT {
                return too(format!("{n} bytes"), MAX_OBJECT);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn s(a: &Map<String, Value>, k: &str) -> Option<String> {
    a.get(k).and_then(Value::as_str).map(String::from)
}
fn i(a: &Map<String, Value>, k: &str) -> Option<i64> {
    a.get(k).and_then(Value::as_i64)
}
fn b(a: &Map<String, Value>, k: &str) -> bool {
    a.get(k).and_then(Value::as_bool).unwrap_or(false)
}
fn list(a: &Map<String, Value>, k: &str) -> Option<Vec<String>> {
    a.get(k).and_then(Value::as_array).map(|v| v.iter().filter_map(|x| x.as_str().map(String::from)).collect())
}
fn id_arg(a: &Map<String, Value>, k: &str) -> IdArg {
    match a.get(k) {
        Some(Value::Array(_)) => IdArg::Many(list(a, k).unwrap_or_default()),
        _ => IdArg::One(s(a, k).unwrap_or_default()),
    }
}

impl Vine {
    /// [`Vine::call`] under a deadline: long loops and SQLite work stop
    /// with `E_TIMEOUT` once it passes.
    pub fn call_until(&mut self, prim: &str, args: &Map<String, Value>, deadline: Option<Instant>) -> VResult<Value> {
        self.deadline = deadline;
        let out = self.call(prim, args);
        self.deadline = None;
        match out {
            Err(e) if e.code == "E_INTERNAL" && deadline.is_some_and(|d| Instant::now() >= d) => {
                Err(crate::engine::timeout(prim))
            }
            other => other,
        }
    }

    /// Validate, run and trace one primitive call by wire name.
    pub fn call(&mut self, prim: &str, args: &Map<String, Value>) -> VResult<Value> {
        let a = validate(prim, args)?;
        if a.get("after").is_some() && (a.contains_key("toward") || a.contains_key("gauntlet")) {
            return Err(VineError::schema(format!("{prim}: after cannot be combined with toward/gauntlet")));
        }
        let started = Instant::now();
        let out = self.run(prim, &a)?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        if TRACED.contains(&prim) {
            let id = a.get("id").and_then(Value::as_str).map(crate::engine::norm_id);
            if let Some(id) = id.as_ref().filter(|_| prim == "pick" || prim == "query") {
                self.session_deposit(id)?;
            }
            self.tracer.record(prim, id, &Value::Object(a.clone()), &out, ms);
        }
        Ok(out)
    }

    fn run(&mut self, prim: &str, a: &Map<String, Value>) -> VResult<Value> {
        match prim {
            "locate" => self.locate(&LocateArgs {
                query: s(a, "query").unwrap_or_default(),
                k: i(a, "k"),
                scope: s(a, "scope"),
                type_filter: s(a, "type_filter"),
                include: list(a, "include"),
                since: s(a, "since"),
                until: s(a, "until"),
                date_field: s(a, "date_field"),
                lang: s(a, "lang"),
                // the reference's `hybrid`: true is its RRF, false BM25 alone
                fusion: s(a, "fusion").or_else(|| {
                    a.get("hybrid").and_then(Value::as_bool).map(|h| if h { "rrf" } else { "bm25" }.to_string())
                }),
            }),
            "look" => self.look(&id_arg(a, "id"), list(a, "fields").as_deref()),
            "move" => self.move_(&s(a, "id").unwrap_or_default(), s(a, "rel").as_deref(), s(a, "direction").as_deref()),
            "pick" => {
                let section = match a.get("section") {
                    Some(Value::Array(_)) => Some(SectionArg::Many(list(a, "section").unwrap_or_default())),
                    Some(Value::String(x)) => Some(SectionArg::One(x.clone())),
                    _ => None,
                };
                self.pick(&id_arg(a, "id"), section.as_ref(), s(a, "after").as_deref())
            }
            "view" => self.view(&s(a, "id").unwrap_or_default()),
            "query" => self.query(&s(a, "id").unwrap_or_default(), &s(a, "sql").unwrap_or_default()),
            "tend" => self.tend(&s(a, "id").unwrap_or_default(), &s(a, "sql").unwrap_or_default()),
            "scan" => self.scan(&ScanArgs {
                parent_id: s(a, "parent_id").unwrap_or_default(),
                filter: a.get("filter").and_then(Value::as_object).cloned(),
                fields: list(a, "fields"),
                recursive: b(a, "recursive"),
                limit: i(a, "limit"),
                after: s(a, "after"),
                since: s(a, "since"),
                until: s(a, "until"),
                date_field: s(a, "date_field"),
            }),
            "sniff" => {
                let terms = match a.get("terms") {
                    Some(Value::String(t)) => vec![t.clone()],
                    _ => list(a, "terms").unwrap_or_default(),
                };
                self.sniff(&SniffArgs {
                    terms,
                    scope: s(a, "scope"),
                    k: i(a, "k"),
                    type_filter: s(a, "type_filter"),
                    since: s(a, "since"),
                    until: s(a, "until"),
                    date_field: s(a, "date_field"),
                    lang: s(a, "lang"),
                })
            }
            "harvest" => self.harvest(&HarvestArgs {
                query: s(a, "query").unwrap_or_default(),
                terms: list(a, "terms"),
                k: i(a, "k"),
                since: s(a, "since"),
                until: s(a, "until"),
                date_field: s(a, "date_field"),
                include_superseded: b(a, "include_superseded"),
                lang: s(a, "lang"),
            }),
            "calendar" => self.calendar(
                s(a, "scope").as_deref(),
                s(a, "date_field").as_deref(),
                s(a, "granularity").as_deref(),
                s(a, "since").as_deref(),
                s(a, "until").as_deref(),
                i(a, "limit"),
            ),
            "coverage" => self.coverage(s(a, "scope").as_deref(), s(a, "date_field").as_deref()),
            "history" => self.history(&s(a, "id").unwrap_or_default(), i(a, "limit")),
            "plant" => self.plant(a.get("node").unwrap_or(&Value::Null), b(a, "if_absent"), b(a, "dry_run")),
            "graft" => {
                let patch = a.get("patch").and_then(Value::as_object).cloned().unwrap_or_default();
                self.graft(&s(a, "id").unwrap_or_default(), &patch)
            }
            "prune" => self.prune(&s(a, "id").unwrap_or_default(), b(a, "force")),
            "transplant" => self.transplant(&s(a, "id").unwrap_or_default(), &s(a, "new_id").unwrap_or_default()),
            "close_session" => self.close_session(b(a, "success"), &list(a, "answer_nodes").unwrap_or_default()),
            other => Err(VineError::schema(format!("unknown primitive '{other}'"))),
        }
    }

    /// `view(id)`: the image payload of a media node (header only; the
    /// server adds the bytes as an image block).
    pub fn view(&mut self, id: &str) -> VResult<Value> {
        let row = self.row(id)?;
        let nf = || crate::engine::not_found(&row.id);
        let payload = row.payload.clone().filter(|p| !p.is_empty()).ok_or_else(nf)?;
        if let Some((scheme, _)) = payload.split_once("://") {
            return Err(VineError::schema(format!("remote payload scheme '{scheme}' is not served"))
                .hint("Prefetch it into the cache first."));
        }
        let path = self.root.join(forest_model::ids::folder_of(&row.id)).join(&payload);
        let canon = std::fs::canonicalize(&path).map_err(|_| nf())?;
        if !canon.starts_with(&self.root) {
            return Err(VineError::schema("payload escapes the forest"));
        }
        if !self.file_in_scope(&canon) {
            return Err(nf());
        }
        let ext = canon.extension().and_then(|e| e.to_str()).unwrap_or("").to_lowercase();
        let mime = match ext.as_str() {
            "png" => "image/png",
            "jpg" | "jpeg" => "image/jpeg",
            "gif" => "image/gif",
            "webp" => "image/webp",
            "svg" => "image/svg+xml",
            "db" | "sqlite" => "application/vnd.sqlite3",
            "pdf" => "application/pdf",
            _ => "application/octet-stream",
        };
        if !mime.starts_with("image/") {
            return Err(VineError::schema(format!("payload is not an image ({mime})")));
        }
        let size = std::fs::metadata(&canon)?.len();
        if size > 6_291_456 {
            return Err(VineError::schema(format!("image payload is {size} bytes, over the 6291456-byte view limit")));
        }
        Ok(
            json!({"id": row.id, "path": canon.display().to_string(), "media_type": mime, "size": size, "payload_hash": row.payload_hash.unwrap_or_default()}),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_strict() {
        let m = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(validate("locate", &m(json!({"query": "x", "k": 3, "forest": null}))).is_ok());
        let e = validate("locate", &m(json!({"query": "x", "k": "three"}))).unwrap_err();
        assert_eq!(e.message, "locate: parameter 'k' expects integer, got string");
        let e = validate("locate", &m(json!({"query": "x", "k": true}))).unwrap_err();
        assert!(e.message.contains("got boolean"));
        let e = validate("scan", &m(json!({"parent_id": "_index", "bogus": 1}))).unwrap_err();
        assert!(e.message.contains("unknown parameter 'bogus'"));
        let e = validate("look", &m(json!({"id": null}))).unwrap_err();
        assert!(e.message.contains("'id' is required and was null"));
        let e = validate("pick", &m(json!({}))).unwrap_err();
        assert!(e.message.contains("missing required parameter 'id'"));
        assert!(validate("look", &m(json!({"id": ["a", 1]}))).unwrap_err().message.contains("list of integer/string"));
        let ok = validate("move", &m(json!({"id": "a", "rel": null}))).unwrap();
        assert!(!ok.contains_key("rel"));
    }
}
