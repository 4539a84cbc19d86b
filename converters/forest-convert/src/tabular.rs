//! CSV → dataset (dialect §3.5): utf-8-sig, delimiter sniffing, quoted fields.

use crate::error::{schema, ConvertError};
use crate::infer::{build_table, column_names, Raw};
use crate::registry::Converter;
use crate::text::{file_name, stem};
use crate::{Conversion, Limits};
use forest_model::slug::{sql_name, title_from_stem};
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

/// Parse CSV with Python `csv` default dialect rules (double-quote escaping,
/// quoted newlines, text after a closing quote kept).
pub(crate) fn parse_csv(text: &str, delim: char) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut in_q = false;
    let mut at_start = true;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_q {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    in_q = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' if at_start => {
                in_q = true;
                at_start = false;
            }
            c if c == delim => {
                row.push(std::mem::take(&mut field));
                at_start = true;
            }
            '\r' | '\n' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
                at_start = true;
            }
            c => {
                field.push(c);
                at_start = false;
            }
        }
    }
    if !field.is_empty() || !row.is_empty() || in_q {
        row.push(field);
        rows.push(row);
    }
    rows
}

impl Converter for Csv {
    fn name(&self) -> &str {
        "Csv"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".csv".into()]
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let bytes = std::fs::read(path)?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let delim = sniff_delimiter(text);
        let mut rows: Vec<Vec<String>> =
            parse_csv(text, delim).into_iter().filter(|r| r.iter().any(|c| !c.trim().is_empty())).collect();
        if rows.len() < 2 {
            return Err(schema(format!("csv has no data rows: {}", file_name(path))));
        }
        let header = rows.remove(0);
        let columns = column_names(&header);
        let raw_rows = rows.into_iter().map(|r| r.into_iter().take(columns.len()).map(Raw::Str).collect()).collect();
        let stem = stem(path);
        let table = build_table(sql_name(&stem), columns, raw_rows);
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
