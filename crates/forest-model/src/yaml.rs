//! Frontmatter YAML: parse into an order-preserving value, emit in the
//! dialect's style (PyYAML `safe_dump` block style, unicode allowed).
//!
//! The emitter quotes every string that any YAML 1.1 or 1.2 reader could
//! resolve to something other than that string (bools like `yes`, numbers,
//! dates, nulls), so what we write re-parses to the same data everywhere.

pub use yaml_serde::{Mapping, Value};

mod fast;

/// A frontmatter or config document that is not a YAML mapping.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// Not YAML (the parser's message says where).
    #[error(transparent)]
    Syntax(#[from] yaml_serde::Error),
    /// YAML, but a list or a scalar.
    #[error("frontmatter is not a mapping")]
    NotMapping,
}

/// Parse a YAML document that must be a mapping.
pub fn parse_mapping(text: &str) -> Result<Mapping, YamlError> {
    if text.trim().is_empty() {
        return Ok(Mapping::new());
    }
    if let Some(m) = fast::parse(text) {
        return Ok(m);
    }
    let v: Value = yaml_serde::from_str(text)?;
    match v {
        Value::Mapping(m) => Ok(m),
        Value::Null => Ok(Mapping::new()),
        _ => Err(YamlError::NotMapping),
    }
}

/// Whether [`parse_mapping`] reads `text` without the library (for the
/// parse benchmark, `examples/frontmatter_parse.rs`).
pub fn fast_path_takes(text: &str) -> bool {
    fast::parse(text).is_some()
}

/// Emit a mapping as block-style YAML (no trailing newline).
pub fn emit_mapping(m: &Mapping) -> String {
    let mut out = String::new();
    emit_map_body(m, 0, &mut out);
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

fn indent(n: usize, out: &mut String) {
    for _ in 0..n {
        out.push(' ');
    }
}

fn emit_map_body(m: &Mapping, ind: usize, out: &mut String) {
    let mut first = true;
    for (k, v) in m {
        if !first {
            indent(ind, out);
        }
        first = false;
        emit_key(k, out);
        emit_value_after_key(v, ind, out);
    }
}

fn emit_key(k: &Value, out: &mut String) {
    match k {
        Value::String(s) => out.push_str(&scalar_string(s)),
        other => out.push_str(&scalar(other)),
    }
    out.push(':');
}

fn emit_value_after_key(v: &Value, ind: usize, out: &mut String) {
    match v {
        Value::Mapping(m) if !m.is_empty() => {
            out.push('\n');
            indent(ind + 2, out);
            emit_map_body(m, ind + 2, out);
        }
        Value::Sequence(s) if !s.is_empty() => {
            out.push('\n');
            // PyYAML's default: sequences in mappings are not indented.
            emit_seq_body(s, ind, out);
        }
        Value::Tagged(t) => emit_value_after_key(&t.value, ind, out),
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn emit_seq_body(s: &[Value], ind: usize, out: &mut String) {
    for item in s {
        indent(ind, out);
        out.push_str("- ");
        match item {
            Value::Mapping(m) if !m.is_empty() => emit_map_body(m, ind + 2, out),
            Value::Sequence(inner) if !inner.is_empty() => {
                // Nested sequence: first item on the same line is legal YAML.
                let mut sub = String::new();
                emit_seq_body(inner, ind + 2, &mut sub);
                out.push_str(sub.trim_start());
            }
            Value::Tagged(t) => {
                let mut sub = String::new();
                emit_seq_body(std::slice::from_ref(&t.value), ind, &mut sub);
                out.push_str(sub.trim_start().trim_start_matches("- "));
            }
            other => {
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                float_repr(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => scalar_string(s),
        Value::Sequence(_) => "[]".into(),
        Value::Mapping(_) => "{}".into(),
        Value::Tagged(t) => scalar(&t.value),
    }
}

/// Float text that YAML 1.1 and 1.2 readers both parse as the same float
/// (and that matches Python's repr for the common cases: `1.0`, `0.3`).
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf".into() } else { "-.inf".into() };
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        // YAML 1.1 needs a dot in the mantissa: 1.0e-05.
        let s = format!("{f:e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = if mant.contains('.') { mant.to_string() } else { format!("{mant}.0") };
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("+", exp),
        };
        return format!("{mant}e{sign}{digits:0>2}");
    }
    let s = format!("{f}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

fn needs_quotes(s: &str) -> bool {
    if s.is_empty() || s != s.trim() {
        return true;
    }
    let first = s.chars().next().unwrap_or(' ');
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        // `- x` / `? x` / `: x` are indicators; a lone `-` too. Keep it simple: quote.
        return true;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return true;
    }
    if s.chars().any(|c| c.is_control() || c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}') {
        return true;
    }
    let low = s.to_ascii_lowercase();
    const SPECIAL: [&str; 14] =
        ["null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", ".inf", "-.inf", "+.inf", ".nan"];
    if SPECIAL.contains(&low.as_str()) || low == "=" || low == "<<" {
        return true;
    }
    // Anything that starts like a number or a date may resolve to one in
    // some reader (1_000, 0x1F, 1:20, 2026-06-01, .5, +1): quote it.
    let mut chars = s.chars();
    let c0 = chars.next().unwrap_or(' ');
    let c1 = chars.next();
    if c0.is_ascii_digit() {
        return true;
    }
    if (c0 == '+' || c0 == '.') && c1.is_some_and(|c| c.is_ascii_digit() || c == '.') {
        return true;
    }
    false
}

/// A string scalar: plain when safe, single-quoted when printable, else
/// double-quoted with escapes.
pub fn scalar_string(s: &str) -> String {
    if !needs_quotes(s) {
        return s.to_string();
    }
    let printable = !s.chars().any(|c| c.is_control() || c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}');
    if printable {
        return format!("'{}'", s.replace('\'', "''"));
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}' => {
                let cp = c as u32;
                if cp <= 0xff {
                    out.push_str(&format!("\\x{cp:02x}"));
                } else {
                    out.push_str(&format!("\\u{cp:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(m: &Mapping) {
        let text = emit_mapping(m);
        let back = parse_mapping(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(&back, m, "\n{text}");
    }

    #[test]
    fn round_trips_tricky_scalars() {
        let src = "id: a/b\ntitle: 'yes'\nsummary: \"Line: one # two\\nnext\"\ncreated: '2026-06-01'\nn: 3\nf: 0.3\nz: 1.0\nneg: -2\ntags:\n- 'on'\n- x\nlinks:\n- rel: part-of\n  target: a/_index\n  confidence: 0.3\nempty: []\nemap: {}\nq: \"it's\"\nu: São Paulo\nhash: '0123456789'\nnil: null\nb: true\nnested:\n  k: v\n  l:\n  - 1\n";
        let m = parse_mapping(src).unwrap();
        round(&m);
    }

    #[test]
    fn emits_pyyaml_style() {
        let m = parse_mapping("id: x\ntags:\n- a\n- b\ncreated: '2026-01-02'\n").unwrap();
        assert_eq!(emit_mapping(&m), "id: x\ntags:\n- a\n- b\ncreated: '2026-01-02'");
        assert_eq!(float_repr(1.0), "1.0");
        assert_eq!(float_repr(0.00001), "1.0e-05");
        assert_eq!(float_repr(1732912345.123), "1732912345.123");
    }

    #[test]
    fn rejects_non_mapping() {
        assert!(parse_mapping("- a\n- b").is_err());
        assert!(parse_mapping("a: [b").is_err());
    }
}
