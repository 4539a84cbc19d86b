//! The MCP edge of the engine: a call arrives as a primitive's wire name
//! and a JSON object; the signature table of [`crate::prims`] is enforced
//! (unknown parameter, missing required, null for required, wrong type,
//! too large → `E_SCHEMA` naming the primitive), the object becomes the
//! primitive's argument type, the primitive runs and the call is traced.
//! Below this edge no primitive sees a JSON argument map.

use forest_model::ErrorCode;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::engine::Vine;
use crate::error::{VResult, VineError};
use crate::limits::{MAX_LIST, MAX_OBJECT, MAX_SQL, MAX_TERM, MAX_TEXT};
use crate::primitive::Trace;
use crate::prims::{find, signature};

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

impl Vine {
    /// [`Vine::call`] under a deadline: long loops and SQLite work stop
    /// with `E_TIMEOUT` once it passes.
    pub fn call_until(&mut self, prim: &str, args: &Map<String, Value>, deadline: Option<Instant>) -> VResult<Value> {
        self.deadline = deadline;
        let out = self.call(prim, args);
        self.deadline = None;
        match out {
            Err(e) if e.code == ErrorCode::Internal && deadline.is_some_and(|d| Instant::now() >= d) => {
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
        let entry = find(prim).ok_or_else(|| VineError::schema(format!("unknown primitive '{prim}'")))?;
        let traced = (entry.trace != Trace::No).then(|| Value::Object(a.clone()));
        let id = a.get("id").and_then(Value::as_str).map(crate::engine::norm_id);
        let started = Instant::now();
        let out = entry.run(self, Value::Object(a))?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        if let Some(args) = traced {
            if let Some(id) = id.as_ref().filter(|_| entry.trace == Trace::WithHeat) {
                self.session_deposit(id)?;
            }
            self.tracer.record(prim, id, &args, &out, ms);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
