//! Column type inference and coercion shared by CSV, JSON and workbooks
//! (dialect §3.5), with Python `int()`/`float()` string leniency.

use crate::samplemap::python_float_repr;
use crate::values::{Cell, ColType, Table};
use forest_model::slug::sql_column;

/// A raw source value before typing (Python-native value analogue).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Raw {
    fn is_empty(&self) -> bool {
        match self {
            Raw::Null => true,
            Raw::Str(s) => s.is_empty(),
            _ => false,
        }
    }

    /// Python `str(value)`.
    pub(crate) fn py_str(&self) -> String {
        match self {
            Raw::Null => "None".to_string(),
            Raw::Bool(true) => "True".to_string(),
            Raw::Bool(false) => "False".to_string(),
            Raw::Int(i) => i.to_string(),
            Raw::Float(f) => python_float_repr(*f),
            Raw::Str(s) => s.clone(),
        }
    }

    fn as_int(&self) -> Option<i64> {
        match self {
            Raw::Bool(b) => Some(i64::from(*b)),
            Raw::Int(i) => Some(*i),
            Raw::Str(s) => py_int(s),
            _ => None,
        }
    }

    fn as_float(&self) -> Option<f64> {
        match self {
            Raw::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Raw::Int(i) => Some(*i as f64),
            Raw::Float(f) => Some(*f),
            Raw::Str(s) => py_float(s),
            Raw::Null => None,
        }
    }
}

/// Validate Python-style digit grouping (`1_000`): underscores only between
/// digits; returns the string without underscores.
fn strip_underscores(s: &str) -> Option<String> {
    if !s.contains('_') {
        return Some(s.to_string());
    }
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let prev = i.checked_sub(1).map(|j| b[j]);
            let next = b.get(i + 1).copied();
            if !matches!(prev, Some(p) if p.is_ascii_digit()) || !matches!(next, Some(n) if n.is_ascii_digit()) {
                return None;
            }
        }
    }
    Some(s.replace('_', ""))
}

/// Python `int(s)` for decimal strings within `i64`.
pub(crate) fn py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (sign, digits) = match t.as_bytes().first() {
        Some(b'+') => ("", &t[1..]),
        Some(b'-') => ("-", &t[1..]),
        _ => ("", t),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit() || c == b'_') {
        return None;
    }
    let clean = strip_underscores(digits)?;
    format!("{sign}{clean}").parse().ok()
}

/// Python `float(s)`: surrounding whitespace, underscores between digits,
/// `inf`/`infinity`/`nan` in any case.
pub(crate) fn py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let body = t.trim_start_matches(['+', '-']);
    if t.len() - body.len() > 1 {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return t.to_ascii_lowercase().parse().ok();
    }
    // Rust accepts the same decimal literal grammar minus underscores.
    if !body.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-' | b'_')) {
        return None;
    }
    strip_underscores(t)?.parse().ok()
}

/// Infer a column type over all non-empty values.
pub(crate) fn infer<'a>(values: impl Iterator<Item = &'a Raw> + Clone) -> ColType {
    let mut any = false;
    let mut all_int = true;
    for v in values.clone().filter(|v| !v.is_empty()) {
        any = true;
        if matches!(v, Raw::Float(_)) || v.as_int().is_none() {
            all_int = false;
            break;
        }
    }
    if !any {
        return ColType::Text;
    }
    if all_int {
        return ColType::Integer;
    }
    if values.filter(|v| !v.is_empty()).all(|v| v.as_float().is_some()) {
        ColType::Real
    } else {
        ColType::Text
    }
}

/// Coerce one value to the column type, falling back to its string.
pub(crate) fn coerce(v: &Raw, ty: ColType) -> Cell {
    if v.is_empty() {
        return Cell::Null;
    }
    let fallback = || Cell::Text(v.py_str());
    match ty {
        ColType::Integer => v.as_int().map(Cell::Int).unwrap_or_else(fallback),
        ColType::Real => v.as_float().map(Cell::Real).unwrap_or_else(fallback),
        ColType::Text | ColType::Blob => fallback(),
    }
}

/// Dedupe names by appending `_` until unique (dialect §3.5).
pub(crate) fn dedupe(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for mut n in names {
        while seen.contains(&n) {
            n.push('_');
        }
        seen.insert(n.clone());
        out.push(n);
    }
    out
}

/// Column names from header cells: empty → `col<i>` (1-based), `sql_column`, deduped.
pub(crate) fn column_names(header: &[String]) -> Vec<String> {
    dedupe(header.iter().enumerate().map(|(i, h)| {
        let h = h.trim();
        if h.is_empty() {
            sql_column(&format!("col{}", i + 1))
        } else {
            sql_column(h)
        }
    }))
}

/// Build a typed table from header names and raw rows (rows padded/cut to width).
pub(crate) fn build_table(name: String, columns: Vec<String>, rows: Vec<Vec<Raw>>) -> Table {
    let width = columns.len();
    let rows: Vec<Vec<Raw>> = rows
        .into_iter()
        .map(|mut r| {
            r.resize(width, Raw::Null);
            r
        })
        .collect();
    let types: Vec<ColType> = (0..width).map(|c| infer(rows.iter().map(move |r| &r[c]))).collect();
    let cells = rows.iter().map(|r| r.iter().zip(&types).map(|(v, t)| coerce(v, *t)).collect()).collect();
    Table { name, columns: columns.into_iter().zip(types).collect(), rows: cells }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_int_leniency() {
        assert_eq!(py_int(" 42 "), Some(42));
        assert_eq!(py_int("1_000"), Some(1000));
        assert_eq!(py_int("-7"), Some(-7));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_int("_1"), None);
        assert_eq!(py_int("1.0"), None);
        assert_eq!(py_int(""), None);
    }

    #[test]
    fn python_float_leniency() {
        assert_eq!(py_float(" 1.5 "), Some(1.5));
        assert_eq!(py_float("1_000.25"), Some(1000.25));
        assert_eq!(py_float("inf"), Some(f64::INFINITY));
        assert_eq!(py_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(py_float("NaN").is_some_and(f64::is_nan));
        assert_eq!(py_float("1e3"), Some(1000.0));
        assert_eq!(py_float(".5"), Some(0.5));
        assert_eq!(py_float("abc"), None);
        assert_eq!(py_float("--1"), None);
    }

    #[test]
    fn inference_rules() {
        let s = |x: &str| Raw::Str(x.into());
        assert_eq!(infer([s("1"), s(""), s(" 2")].iter()), ColType::Integer);
        assert_eq!(infer([s("1"), s("2.5")].iter()), ColType::Real);
        assert_eq!(infer([Raw::Float(3.0)].iter()), ColType::Real);
        assert_eq!(infer([s("1"), s("x")].iter()), ColType::Text);
        assert_eq!(infer([s(""), Raw::Null].iter()), ColType::Text);
        assert_eq!(infer([Raw::Bool(true), Raw::Int(3)].iter()), ColType::Integer);
        assert_eq!(coerce(&s("1_000"), ColType::Integer), Cell::Int(1000));
        assert_eq!(coerce(&s(""), ColType::Text), Cell::Null);
        assert_eq!(coerce(&Raw::Float(2.0), ColType::Text), Cell::Text("2.0".into()));
    }

    #[test]
    fn names_dedupe() {
        let h = vec!["Name".to_string(), "name".into(), "".into(), "1st".into()];
        assert_eq!(column_names(&h), vec!["name", "name_", "col3", "c_1st"]);
    }
}
