//! YAML frontmatter values as JSON (for digests and the node spec).

use forest_model::yaml::{Mapping, Value as Y};
use serde_json::Value;

/// Convert a YAML value to JSON (tags dropped, non-string keys stringified).
pub fn to_json(v: &Y) -> Value {
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number),
        },
        Y::String(s) => Value::String(s.clone()),
        Y::Sequence(s) => Value::Array(s.iter().map(to_json).collect()),
        Y::Mapping(m) => Value::Object(m.iter().map(|(k, v)| (json_key(k), to_json(v))).collect()),
        Y::Tagged(t) => to_json(&t.value),
    }
}

/// A YAML key as a JSON object key (a non-string key as its JSON text).
fn json_key(k: &Y) -> String {
    match k {
        Y::String(s) => s.clone(),
        other => serde_json::to_string(&to_json(other)).unwrap_or_default(),
    }
}

/// Convert JSON to YAML (for writes).
pub fn to_yaml(v: &Value) -> Y {
    match v {
        Value::Null => Y::Null,
        Value::Bool(b) => Y::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Y::Number(i.into())
            } else {
                Y::Number(n.as_f64().unwrap_or(0.0).into())
            }
        }
        Value::String(s) => Y::String(s.clone()),
        Value::Array(a) => Y::Sequence(a.iter().map(to_yaml).collect()),
        Value::Object(o) => {
            let mut m = Mapping::new();
            for (k, v) in o {
                m.insert(Y::String(k.clone()), to_yaml(v));
            }
            Y::Mapping(m)
        }
    }
}
