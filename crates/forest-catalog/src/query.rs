//! The FTS5 query text both the catalog and `locate` send: a leaf module.

/// FTS5 MATCH expression: whitespace tokens, each double-quoted (inner `"`
/// doubled), joined with ` OR `. `None` for a blank query.
pub fn sanitize_query(query: &str) -> Option<String> {
    let terms: Vec<String> = query.split_whitespace().map(|t| format!("\"{}\"", t.replace('"', "\"\""))).collect();
    if terms.is_empty() {
        None
    } else {
        Some(terms.join(" OR "))
    }
}
