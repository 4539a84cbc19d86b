//! CSV/TSV/any delimiter (the `csv` crate) and JSON Lines → dataset (dialect §3.5):
//! utf-8-sig, delimiter sniffing, quoted fields; a header-only table is a small document.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, skipped, ConvertError};
use crate::infer::{build_table, column_names, dedupe, Raw};
use crate::text::{decode_text, file_name, stem};
use crate::values::SourceMeta;
use forest_model::slug::{sql_column, sql_name, title_from_stem};
use std::path::Path;

/// The CSV converter.
pub(crate) struct Csv;

const CANDIDATES: [char; 4] = [',', ';', '\t', '|'];

/// Count `delim` per line outside double quotes.
fn counts_per_line(sample: &str, delim: char) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_q = false;
    let mut n = 0;
    for c in sample.chars() {
        match c {
            '"' => in_q = !in_q,
            '\n' if !in_q => {
                out.push(n);
                n = 0;
            }
            c if c == delim && !in_q => n += 1,
            _ => {}
        }
    }
    out
}

/// Pick the delimiter whose per-line count is most consistent (and non-zero)
/// over the complete lines of the first 4096 chars; comma when nothing fits.
pub(crate) fn sniff_delimiter(text: &str) -> char {
    let sample: String = text.chars().take(4096).collect();
    // With no newline in the sample the single line still counts.
    let sample = if sample.contains('\n') { sample } else { format!("{sample}\n") };
    let mut best = (',', 0usize, 0usize);
    for d in CANDIDATES {
        let counts: Vec<usize> = counts_per_line(&sample, d);
        let nonblank: Vec<usize> = counts.iter().copied().filter(|&c| c > 0).collect();
        if nonblank.is_empty() {
            continue;
        }
        // Mode of the non-zero counts.
        let mut freq = std::collections::HashMap::new();
        for c in &nonblank {
            *freq.entry(*c).or_insert(0usize) += 1;
        }
        let (mode, consistent) = freq.into_iter().max_by_key(|(count, f)| (*f, *count)).unwrap_or((0, 0));
        if (consistent, mode) > (best.1, best.2) {
            best = (d, consistent, mode);
        }
    }
    best.0
}

/// Parse delimited text with the `csv` crate (RFC 4180 quoting, quoted
/// newlines, ragged rows kept as they are).
pub(crate) fn parse_csv(text: &str, delim: char) -> Vec<Vec<String>> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(u8::try_from(delim).unwrap_or(b','))
        .from_reader(text.as_bytes());
    rdr.records().filter_map(Result::ok).map(|r| r.iter().map(str::to_string).collect()).collect()
}

/// A pipe table of `rows` (first row as header), `|` escaped, padded to the widest row.
pub(crate) fn pipe_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut out = Vec::with_capacity(rows.len() + 1);
    for (i, r) in rows.iter().enumerate() {
        let cells: Vec<String> = (0..width)
            .map(|k| {
                r.get(k)
                    .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|"))
                    .unwrap_or_default()
            })
            .collect();
        out.push(format!("| {} |", cells.join(" | ")));
        if i == 0 {
            out.push(format!("|{}", " --- |".repeat(width)));
        }
    }
    out.join("\n")
}

/// Rows (all non-empty) → dataset, or a small document when there is no data row.
pub(crate) fn rows_to_conversion(
    path: &Path,
    mut rows: Vec<Vec<String>>,
    what: &str,
) -> Result<Conversion, ConvertError> {
    let stem = stem(path);
    let title = title_from_stem(&stem);
    match rows.len() {
        0 => Err(skipped(format!("{what} has no rows: {}", file_name(path)))),
        1 => {
            let body = format!("# {title}\n\nA {what} with a header row and no data rows.\n\n{}\n", pipe_table(&rows));
            Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
        }
        _ => {
            let header = rows.remove(0);
            let columns = column_names(&header);
            let raw_rows =
                rows.into_iter().map(|r| r.into_iter().take(columns.len()).map(Raw::Str).collect()).collect();
            let table = build_table(sql_name(&stem), columns, raw_rows);
            Ok(Conversion::Dataset { title, tables: vec![table] })
        }
    }
}

impl Converter for Csv {
    fn name(&self) -> &str {
        "Csv"
    }
    fn extensions(&self) -> Vec<String> {
        [".csv", ".tsv", ".tab", ".psv"].map(String::from).to_vec()
    }
    fn version(&self) -> u32 {
        2
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let text = decode_text(&std::fs::read(path)?);
        let delim = match path.extension().map(|e| e.to_string_lossy().to_lowercase()).as_deref() {
            Some("tsv" | "tab") => '\t',
            Some("psv") => '|',
            _ => sniff_delimiter(&text),
        };
        let rows: Vec<Vec<String>> =
            parse_csv(&text, delim).into_iter().filter(|r| r.iter().any(|c| !c.trim().is_empty())).collect();
        rows_to_conversion(path, rows, "table")
    }
}

/// JSON Lines / NDJSON: one JSON object per line → dataset (nested values as
/// JSON text); lines that are not objects are counted in a warning.
pub(crate) struct JsonLines;

impl Converter for JsonLines {
    fn name(&self) -> &str {
        "JsonLines"
    }
    fn extensions(&self) -> Vec<String> {
        [".jsonl", ".ndjson", ".jsonlines"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, _: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        use serde_json::Value;
        let text = decode_text(&std::fs::read(path)?);
        let mut keys: Vec<String> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let mut objs = Vec::new();
        let mut bad = 0usize;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(o)) => {
                    for k in o.keys() {
                        if !index.contains_key(k) {
                            index.insert(k.clone(), keys.len());
                            keys.push(k.clone());
                        }
                    }
                    objs.push(o);
                }
                _ => bad += 1,
            }
        }
        if bad > 0 {
            warnings.push(format!("{bad} line(s) are not JSON objects and were left out"));
        }
        if objs.is_empty() {
            return Err(if bad > 0 {
                schema(format!("no JSON object lines in {}", file_name(path)))
            } else {
                skipped(format!("no records: {}", file_name(path)))
            });
        }
        let rows: Vec<Vec<Raw>> = objs
            .iter()
            .map(|o| {
                let mut row = vec![Raw::Null; keys.len()];
                for (k, v) in o {
                    if let Some(&i) = index.get(k) {
                        row[i] = match v {
                            Value::Null => Raw::Null,
                            Value::Bool(b) => Raw::Bool(*b),
                            Value::Number(n) => n.as_i64().map_or(Raw::Float(n.as_f64().unwrap_or(f64::NAN)), Raw::Int),
                            Value::String(s) => Raw::Str(s.clone()),
                            other => Raw::Str(other.to_string()),
                        };
                    }
                }
                row
            })
            .collect();
        let stem = stem(path);
        let columns = dedupe(keys.iter().map(|k| sql_column(k)));
        let table = build_table(sql_name(&stem), columns, rows);
        Ok(Conversion::Dataset { title: title_from_stem(&stem), tables: vec![table] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_common_delimiters() {
        assert_eq!(sniff_delimiter("a;b;c\n1;2;3\n4;5;6\n"), ';');
        assert_eq!(sniff_delimiter("a\tb\n1\t2\n"), '\t');
        assert_eq!(sniff_delimiter("a|b\n1|2\n"), '|');
        assert_eq!(sniff_delimiter("a,b\n\"x;y\",2\n"), ',');
        assert_eq!(sniff_delimiter("single\ncolumn\n"), ',');
    }

    #[test]
    fn parses_quotes_and_newlines() {
        let rows = parse_csv("a,b\r\n\"x, \"\"q\"\"\",\"multi\nline\"\n1,2", ',');
        assert_eq!(rows[1], vec!["x, \"q\"", "multi\nline"]);
        assert_eq!(rows[2], vec!["1", "2"]);
        assert_eq!(rows.len(), 3);
    }
}
