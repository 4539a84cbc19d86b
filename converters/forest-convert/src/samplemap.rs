//! The generated dataset body map (dialect §1.9) and the dataset summary
//! template (dialect §3.7).

use crate::values::{Cell, PayloadTable, Table};
use std::fmt::Write as _;

const SAMPLE_ROWS: usize = 3;
const SAMPLE_MAX_COLUMNS: usize = 12;
const SAMPLE_MAX_TABLES: usize = 20;
const SAMPLE_CELL_CHARS: usize = 120;

/// One table as the sample map sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct MapTable {
    /// Table name.
    pub name: String,
    /// Column name and declared type (empty type → name only in the manual).
    pub columns: Vec<(String, String)>,
    /// First rows (only the first 3 are shown).
    pub sample: Vec<Vec<Cell>>,
    /// Row count when known.
    pub count: Option<i64>,
}

impl From<&Table> for MapTable {
    fn from(t: &Table) -> Self {
        MapTable {
            name: t.name.clone(),
            columns: t.columns.iter().map(|(c, ty)| (c.clone(), ty.sql().to_string())).collect(),
            sample: t.rows.iter().take(SAMPLE_ROWS).cloned().collect(),
            count: i64::try_from(t.rows.len()).ok(),
        }
    }
}

impl From<&PayloadTable> for MapTable {
    fn from(t: &PayloadTable) -> Self {
        MapTable {
            name: t.name.clone(),
            columns: t.columns.clone(),
            sample: t.sample.iter().take(SAMPLE_ROWS).cloned().collect(),
            count: t.count,
        }
    }
}

/// Python `repr(float)`: shortest round-trip digits, fixed notation for
/// decimal exponents in [-4, 16), else `d.ddde±XX`.
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // `{:e}` yields the shortest round-trip digits, e.g. `-1.2345e-5`.
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let sign = if neg { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                format!("{digits}{}.0", "0".repeat((int_len - n) as usize))
            } else {
                let (a, b) = digits.split_at(int_len as usize);
                format!("{a}.{b}")
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let m = if rest.is_empty() { first.to_string() } else { format!("{first}.{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

/// Render one cell for a sample row (dialect §1.9 cell rendering).
pub fn render_cell(cell: &Cell) -> String {
    let raw = match cell {
        Cell::Null => return String::new(),
        Cell::Blob(b) => return format!("<blob {} bytes>", b.len()),
        Cell::Int(i) => i.to_string(),
        Cell::Real(f) => python_float_repr(*f),
        Cell::Text(s) => s.clone(),
    };
    let collapsed = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut = if collapsed.chars().count() > SAMPLE_CELL_CHARS {
        let head: String = collapsed.chars().take(SAMPLE_CELL_CHARS).collect();
        format!("{}…", head.trim_end())
    } else {
        collapsed
    };
    cut.replace('|', "\\|")
}

fn rows_phrase(n: i64) -> String {
    if n == 1 {
        "1 row".into()
    } else {
        format!("{n} rows")
    }
}

/// Render `## Query manual` and `## Sample rows` exactly as dialect §1.9.
pub fn render_sample_map(tables: &[MapTable]) -> String {
    let mut out = String::from("## Query manual\n\nTables:\n");
    for t in tables {
        let cols: Vec<String> = t
            .columns
            .iter()
            .map(|(c, ty)| {
                let ty = ty.trim();
                if ty.is_empty() {
                    c.clone()
                } else {
                    format!("{c} {}", ty.to_uppercase())
                }
            })
            .collect();
        let _ = writeln!(out, "- `{}({})`", t.name, cols.join(", "));
    }
    out.push_str("\nExample queries:\n");
    for t in tables {
        if t.columns.len() <= SAMPLE_MAX_COLUMNS {
            let _ = writeln!(out, "- `SELECT * FROM {} LIMIT 5`", t.name);
            let _ = writeln!(out, "- `SELECT COUNT(*) FROM {}`", t.name);
        } else {
            let _ = writeln!(out, "- `SELECT COUNT(*) FROM {}`", t.name);
            let _ = writeln!(
                out,
                "- _`{}` has {} columns: `SELECT *` will not fit the query budget; name the columns you need._",
                t.name,
                t.columns.len()
            );
        }
    }
    out.push_str("\n## Sample rows\n");
    for t in tables.iter().take(SAMPLE_MAX_TABLES) {
        match t.count {
            Some(n) => {
                let _ = write!(out, "\n### {} — {}\n\n", t.name, rows_phrase(n));
            }
            None => {
                let _ = write!(out, "\n### {}\n\n", t.name);
            }
        }
        if t.sample.is_empty() {
            out.push_str("_No rows._\n");
            continue;
        }
        let shown = t.columns.len().min(SAMPLE_MAX_COLUMNS);
        let header: Vec<String> = t.columns.iter().take(shown).map(|(c, _)| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "|{}", " --- |".repeat(shown));
        for row in t.sample.iter().take(SAMPLE_ROWS) {
            let cells: Vec<String> = (0..shown).map(|i| row.get(i).map(render_cell).unwrap_or_default()).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if t.columns.len() > shown {
            let _ = writeln!(
                out,
                "_{} further column(s) exist and are queryable; the manual above names them all._",
                t.columns.len() - shown
            );
        }
    }
    if tables.len() > SAMPLE_MAX_TABLES {
        let _ = write!(
            out,
            "\n_{} further table(s) not sampled; the manual above lists them all._\n",
            tables.len() - SAMPLE_MAX_TABLES
        );
    }
    out
}

/// The LLM-free dataset summary (dialect §3.7, G.2.3 rule 5); falls back to
/// the short form when the long one would exceed 60 tokens.
pub fn dataset_summary(title: &str, tables: &[(String, Option<i64>)]) -> String {
    let noun = if tables.len() == 1 { "table".to_string() } else { format!("{} tables", tables.len()) };
    let mut items: Vec<String> = tables
        .iter()
        .take(4)
        .map(|(name, count)| match count {
            Some(n) => format!("{name} ({})", rows_phrase(*n)),
            None => name.clone(),
        })
        .collect();
    if tables.len() > 4 {
        items.push(format!("+{} more", tables.len() - 4));
    }
    let long = format!("Tabular data '{title}': {noun} {}. Adopted from source; pending curation.", items.join(", "));
    if !tables.is_empty() && forest_model::tokens::estimate_tokens(&long) <= 60 {
        long
    } else {
        format!("Tabular data '{title}' with {} table(s). Adopted from source; pending curation.", tables.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (300.0, "300.0"),
            (1250.5, "1250.5"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1.5e-7, "1.5e-07"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789.125, "123456789.125"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-0.0, "-0.0"),
        ];
        for (f, want) in cases {
            assert_eq!(python_float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn cells_render() {
        assert_eq!(render_cell(&Cell::Null), "");
        assert_eq!(render_cell(&Cell::Blob(vec![1, 2, 3])), "<blob 3 bytes>");
        assert_eq!(render_cell(&Cell::Text("a |  b\n c".into())), "a \\| b c");
        let long = "x".repeat(130);
        assert_eq!(render_cell(&Cell::Text(long)), format!("{}…", "x".repeat(120)));
    }

    #[test]
    fn summary_template() {
        let t = |n: &str, c| (n.to_string(), Some(c));
        assert_eq!(
            dataset_summary("Orders", &[t("orders", 10)]),
            "Tabular data 'Orders': table orders (10 rows). Adopted from source; pending curation."
        );
        let many: Vec<_> = (0..6).map(|i| t(&format!("t{i}"), 1)).collect();
        let s = dataset_summary("X", &many);
        assert!(s.contains("6 tables t0 (1 row), t1 (1 row), t2 (1 row), t3 (1 row), +2 more."), "{s}");
        let long_title = "y".repeat(300);
        assert!(dataset_summary(&long_title, &many).contains("with 6 table(s)"));
    }
}
