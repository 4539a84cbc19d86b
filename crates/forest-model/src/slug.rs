//! Slugs and SQL-safe names (dialect §3.4, §3.5).

use unicode_normalization::UnicodeNormalization;

/// `slugify(s)`: NFKD-normalise, drop non-ASCII, lowercase, replace runs of
/// chars outside `[a-z0-9._-]` with `-`, strip leading/trailing `-` and `.`;
/// empty -> `node`.
pub fn slugify(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_dash = false;
    for c in s.nfkd() {
        if !c.is_ascii() {
            continue;
        }
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '_' || c == '-' {
            if pending_dash {
                out.push('-');
                pending_dash = false;
            }
            out.push(c);
        } else {
            pending_dash = true;
        }
    }
    if pending_dash {
        out.push('-');
    }
    let trimmed = out.trim_matches(|c| c == '-' || c == '.');
    if trimmed.is_empty() {
        "node".to_string()
    } else {
        trimmed.to_string()
    }
}

/// `_sql_name(text)`: slugify, `.`/`-` -> `_`, cut to 48 chars, prefix `t_`
/// unless it starts with `[a-z_]`.
pub fn sql_name(text: &str) -> String {
    sql_ident(text, "t_")
}

/// Column-name variant of [`sql_name`] (prefix `c_`).
pub fn sql_column(text: &str) -> String {
    sql_ident(text, "c_")
}

fn sql_ident(text: &str, prefix: &str) -> String {
    let s: String = slugify(text).chars().map(|c| if c == '.' || c == '-' { '_' } else { c }).take(48).collect();
    match s.chars().next() {
        Some(c) if c.is_ascii_lowercase() || c == '_' => s,
        _ => format!("{prefix}{s}"),
    }
}

/// Title from a file stem: `_` and `-` become spaces.
pub fn title_from_stem(stem: &str) -> String {
    stem.replace(['_', '-'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugify_cases() {
        assert_eq!(slugify("Relatório Q1 2026"), "relatorio-q1-2026");
        assert_eq!(slugify("  --Hello World!!  "), "hello-world");
        assert_eq!(slugify("a_b.c"), "a_b.c");
        assert_eq!(slugify("日本"), "node");
        assert_eq!(slugify(".hidden."), "hidden");
    }

    #[test]
    fn sql_names() {
        assert_eq!(sql_name("2026 Sales"), "t_2026_sales");
        assert_eq!(sql_name("orders-2026"), "orders_2026");
        assert_eq!(sql_column("Unit Price"), "unit-price".replace('-', "_"));
        assert_eq!(sql_column("1st"), "c_1st");
        assert_eq!(sql_name(&"x".repeat(100)).len(), 48);
    }
}
