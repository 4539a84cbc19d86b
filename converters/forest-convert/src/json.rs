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
            let body = format!("# {title}\n\n```json\n{pretty}\n```\n");
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
