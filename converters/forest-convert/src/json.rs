//! JSON → dataset (list of flat objects) or a fenced Markdown document.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::infer::{build_table, dedupe, Raw};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use forest_model::slug::{sql_column, sql_name, title_from_stem};
use serde_json::Value;
use std::path::Path;

/// The JSON converter.
pub(crate) struct Json;

fn scalar(v: &Value) -> Option<Raw> {
    match v {
        Value::Null => Some(Raw::Null),
        Value::Bool(b) => Some(Raw::Bool(*b)),
        Value::Number(n) => Some(match n.as_i64() {
            Some(i) => Raw::Int(i),
            None => Raw::Float(n.as_f64().unwrap_or(f64::NAN)),
        }),
        Value::String(s) => Some(Raw::Str(s.clone())),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// A non-empty array whose items are all objects with scalar values.
fn flat_records(v: &Value) -> Option<&Vec<Value>> {
    let items = v.as_array()?;
    let flat = !items.is_empty()
        && items.iter().all(|i| i.as_object().is_some_and(|o| o.values().all(|x| scalar(x).is_some())));
    flat.then_some(items)
}

/// At most this many names listed per level of [`outline`].
const OUTLINE_NAMES: usize = 8;

/// The first `OUTLINE_NAMES` keys of an object, `(+N more)` after them.
fn names<'a>(keys: impl ExactSizeIterator<Item = &'a String>) -> String {
    let n = keys.len();
    let mut out = keys.take(OUTLINE_NAMES).map(String::as_str).collect::<Vec<_>>().join(", ");
    if n > OUTLINE_NAMES {
        out.push_str(&format!(" (+{} more)", n - OUTLINE_NAMES));
    }
    out
}

/// One sentence saying what a JSON document holds (issue 26): its top-level
/// keys and, for the first object-valued ones, their keys; for an array,
/// its length, item kind and the first string items or object keys. The
/// body's only prose, so the derived summary and keyphrases have words to
/// take where the fenced data has none.
fn outline(value: &Value) -> String {
    match value {
        Value::Object(o) if o.is_empty() => "An empty JSON object.".to_string(),
        Value::Object(o) => {
            let nested: Vec<String> = o
                .iter()
                .filter_map(|(k, v)| {
                    v.as_object().filter(|c| !c.is_empty()).map(|c| format!("{k} ({})", names(c.keys())))
                })
                .take(3)
                .collect();
            let mut s = format!("A JSON object with the keys {}.", names(o.keys()));
            if !nested.is_empty() {
                s.push_str(&format!(" Under them: {}.", nested.join("; ")));
            }
            s
        }
        Value::Array(items) => {
            let n = match items.len() {
                1 => "1 item".to_string(),
                n => format!("{n} items"),
            };
            let strings: Vec<&str> = items.iter().filter_map(Value::as_str).take(OUTLINE_NAMES).collect();
            if let Some(first) = items.iter().find_map(Value::as_object) {
                format!("A JSON array of {n}; the first object has the keys {}.", names(first.keys()))
            } else if !strings.is_empty() {
                let more = if items.len() > strings.len() { ", ..." } else { "" };
                format!("A JSON array of {n}: {}{more}.", strings.join(", "))
            } else {
                format!("A JSON array of {n}.")
            }
        }
        Value::String(s) => format!("A JSON string of {} characters.", s.chars().count()),
        _ => "A single JSON value.".to_string(),
    }
}

impl Converter for Json {
    fn name(&self) -> &str {
        "Json"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".json".into()]
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let bytes = std::fs::read(path)?;
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| schema(format!("invalid JSON in {}: {e}", file_name(path))))?;
        let stem = stem(path);
        let title = title_from_stem(&stem);
        let Some(items) = flat_records(&value) else {
            let pretty = serde_json::to_string_pretty(&value)
                .map_err(|e| schema(format!("cannot render JSON {}: {e}", file_name(path))))?;
            let body = format!("# {title}\n\n{}\n\n```json\n{pretty}\n```\n", outline(&value));
            return Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() });
        };
        // Union of keys in first-seen order; index map keeps lookups linear.
        let mut keys: Vec<String> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for obj in items.iter().filter_map(Value::as_object) {
            for k in obj.keys() {
                if !index.contains_key(k) {
                    index.insert(k.clone(), keys.len());
                    keys.push(k.clone());
                }
            }
        }
        let rows: Vec<Vec<Raw>> = items
            .iter()
            .filter_map(Value::as_object)
            .map(|obj| {
                let mut row = vec![Raw::Null; keys.len()];
                for (k, v) in obj {
                    if let (Some(&i), Some(r)) = (index.get(k), scalar(v)) {
                        row[i] = r;
                    }
                }
                row
            })
            .collect();
        let columns = dedupe(keys.iter().map(|k| sql_column(k)));
        let table = build_table(sql_name(&stem), columns, rows);
        Ok(Conversion::Dataset { title, tables: vec![table] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_outline_names_keys_nested_keys_and_array_items() {
        // botocore/data/mwaa/2020-07-01/paginators-1.json
        let v = json!({"pagination": {"ListEnvironments": {"input_token": "NextToken"}, "ListSessions": {}}});
        assert_eq!(
            outline(&v),
            "A JSON object with the keys pagination. Under them: pagination (ListEnvironments, ListSessions)."
        );
        let many: serde_json::Map<String, Value> = (0..10).map(|i| (format!("k{i}"), json!(i))).collect();
        assert_eq!(
            outline(&Value::Object(many)),
            "A JSON object with the keys k0, k1, k2, k3, k4, k5, k6, k7 (+2 more)."
        );
        assert_eq!(outline(&json!(["emr-7.12.0", "emr-7.11.0"])), "A JSON array of 2 items: emr-7.12.0, emr-7.11.0.");
        assert_eq!(
            outline(&json!([{"ami_id": "x", "tags": {}}])),
            "A JSON array of 1 item; the first object has the keys ami_id, tags."
        );
        assert_eq!(outline(&json!([])), "A JSON array of 0 items.");
        assert_eq!(outline(&json!({})), "An empty JSON object.");
        assert_eq!(outline(&json!(7)), "A single JSON value.");
    }
}
