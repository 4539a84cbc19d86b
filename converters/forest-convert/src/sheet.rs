//! XLSX/XLSM/XLSB/XLS/ODS/OTS/FODS workbooks → dataset via calamine (dialect §3.5).
//! Encrypted workbooks become stubs; one-row sheets a small document; no cells a skip.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, skipped, ConvertError};
use crate::infer::{build_table, column_names, dedupe, Raw};
use crate::text::{file_name, stem};
use crate::values::{SourceMeta, Table};
use crate::zipguard;
use calamine::{Data, Reader};
use forest_model::slug::{sql_name, title_from_stem};
use std::io::Cursor;
use std::path::Path;

/// The workbook converter.
pub(crate) struct Workbook;

/// Map a calamine cell to a raw value. `int_floats`: integral floats become
/// ints (openpyxl reads `<v>5</v>` as int; xlrd keeps floats for `.xls`).
fn raw_of(d: &Data, int_floats: bool) -> Raw {
    match d {
        Data::Empty => Raw::Null,
        Data::Int(i) => Raw::Int(*i),
        Data::Float(f) => {
            if int_floats && f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 {
                Raw::Int(*f as i64)
            } else {
                Raw::Float(*f)
            }
        }
        Data::String(s) => Raw::Str(s.clone()),
        Data::Bool(b) => Raw::Bool(*b),
        // Dates as ISO text, Python `str(datetime)` form.
        Data::DateTime(dt) => match dt.as_datetime() {
            Some(v) if dt.is_datetime() => Raw::Str(v.format("%Y-%m-%d %H:%M:%S").to_string()),
            _ => Raw::Float(dt.as_f64()),
        },
        Data::DateTimeIso(s) | Data::DurationIso(s) => Raw::Str(s.clone()),
        Data::Error(e) => Raw::Str(e.to_string()),
    }
}

fn is_blank(r: &Raw) -> bool {
    matches!(r, Raw::Null) || matches!(r, Raw::Str(s) if s.is_empty())
}

/// Non-blank rows of a sheet.
fn sheet_rows(range: &calamine::Range<Data>, int_floats: bool) -> Vec<Vec<Raw>> {
    range
        .rows()
        .map(|r| r.iter().map(|c| raw_of(c, int_floats)).collect::<Vec<_>>())
        .filter(|r: &Vec<Raw>| r.iter().any(|c| !is_blank(c)))
        .collect()
}

/// One sheet → table, or `None` when it has fewer than 2 non-empty rows.
fn sheet_table(name: String, mut rows: Vec<Vec<Raw>>) -> Option<Table> {
    if rows.len() < 2 {
        return None;
    }
    // Extent from real content: the widest last non-empty cell.
    let width = rows.iter().map(|r| r.iter().rposition(|c| !is_blank(c)).map_or(0, |i| i + 1)).max().unwrap_or(0);
    for r in &mut rows {
        r.truncate(width);
    }
    let header: Vec<String> = rows
        .remove(0)
        .iter()
        .map(|c| if is_blank(c) { String::new() } else { c.py_str() })
        .chain(std::iter::repeat(String::new()))
        .take(width)
        .collect();
    Some(build_table(name, column_names(&header), rows))
}

impl Converter for Workbook {
    fn name(&self) -> &str {
        "Workbook"
    }
    fn extensions(&self) -> Vec<String> {
        [".xlsx", ".xlsm", ".xlsb", ".xls", ".xla", ".xlam", ".ods", ".ots", ".fods"].map(String::from).to_vec()
    }
    fn version(&self) -> u32 {
        3
    }
    fn convert(&self, path: &Path, limits: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let mut bytes = std::fs::read(path)?;
        let title = title_from_stem(&stem(path));
        let is_xls = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("xls"));
        if crate::odf::ooxml_encrypted(&bytes) {
            return Ok(crate::odf::encrypted_stub(&title, "workbook"));
        }
        if bytes.starts_with(b"PK") {
            zipguard::open_checked(&bytes, limits)?;
        } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("fods")) {
            // Flat ODS is the content.xml of a zipped one: calamine reads it re-wrapped.
            bytes = crate::odf::wrap_flat_ods(&bytes)?;
        }
        let mut wb = match calamine::open_workbook_auto_from_rs(Cursor::new(bytes)) {
            Ok(wb) => wb,
            Err(e) if e.to_string().contains("password protected") => {
                return Ok(crate::odf::encrypted_stub(&title, "workbook"));
            }
            Err(e) => return Err(schema(format!("not a readable workbook: {name}: {e}"))),
        };
        let sheets = wb.sheet_names().len();
        if sheets > limits.max_sheets {
            let max = limits.max_sheets;
            return Err(ConvertError::OverLimit(format!("workbook of {sheets} sheets, over the limit of {max}")));
        }
        let mut tables = Vec::new();
        let mut small: Vec<(String, Vec<Vec<Raw>>)> = Vec::new();
        for sheet in wb.sheet_names() {
            match wb.worksheet_range(&sheet) {
                Ok(range) => {
                    let rows = sheet_rows(&range, !is_xls);
                    if rows.len() == 1 {
                        small.push((sheet.clone(), rows.clone()));
                    }
                    tables.extend(sheet_table(sql_name(&sheet), rows));
                }
                Err(e) => warnings.push(format!("sheet {sheet} skipped: {e}")),
            }
        }
        if tables.is_empty() {
            if small.is_empty() {
                return Err(skipped(format!("workbook has no cells: {name}")));
            }
            // One-row sheets are real content, too small for a dataset: a document with their cells.
            let mut body = format!("# {title}\n\nA workbook without data rows; its cells:\n");
            for (sheet, rows) in &small {
                let cells: Vec<Vec<String>> = rows
                    .iter()
                    .map(|r| r.iter().map(|c| if is_blank(c) { String::new() } else { c.py_str() }).collect())
                    .collect();
                body.push_str(&format!("\n## {sheet}\n\n{}\n", crate::tabular::pipe_table(&cells)));
            }
            return Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() });
        }
        let names = dedupe(tables.iter().map(|t| t.name.clone()));
        for (t, n) in tables.iter_mut().zip(names) {
            t.name = n;
        }
        Ok(Conversion::Dataset { title, tables })
    }
}
