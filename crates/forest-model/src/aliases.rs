//! Derived aliases (dialect §3.8): ticket-style handles from folder names,
//! leading numbers and codes in the title.

use indexmap::IndexMap;
use once_cell::sync::Lazy;
use regex::Regex;

/// Most aliases a node may carry.
pub const MAX_ALIASES: usize = 16;

static TITLE_CODE: Lazy<Regex> = Lazy::new(|| Regex::new(r"\b([A-Z]{2,6})-(\d{1,6})\b").expect("static regex"));

/// `derive_aliases(rel_path, alias_map, title)`.
pub fn derive_aliases(rel_path: &str, alias_map: &IndexMap<String, String>, title: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let parts: Vec<&str> = rel_path.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    let folder = if parts.len() >= 2 { parts[parts.len() - 2] } else { "" };
    let stem = match file.rfind('.') {
        Some(i) if i > 0 => &file[..i],
        _ => file,
    };
    let n: String = stem.chars().take_while(|c| c.is_ascii_digit()).collect();
    if !n.is_empty() {
        match alias_map.get(folder).filter(|p| !p.is_empty()) {
            Some(prefix) => out.push(format!("{prefix}-{n}")),
            None => {
                let words: Vec<&str> = folder.split(['-', '_']).filter(|w| !w.is_empty()).collect();
                if words.len() >= 2 {
                    let initials: String =
                        words.iter().filter_map(|w| w.chars().next()).flat_map(|c| c.to_uppercase()).collect();
                    out.push(format!("{initials}-{n}"));
                }
            }
        }
        if !folder.is_empty() {
            out.push(format!("{folder}/{n}"));
        }
        out.push(n.clone());
    }
    for c in TITLE_CODE.captures_iter(title) {
        out.push(format!("{}-{}", &c[1], &c[2]));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|a| seen.insert(a.clone()));
    out.truncate(MAX_ALIASES);
    out
}

/// Union `derived` after `existing` (never removing, never displacing);
/// returns the new list and how many derived forms the cap dropped.
pub fn union_aliases(existing: &[String], derived: &[String]) -> (Vec<String>, usize) {
    let mut out = existing.to_vec();
    let mut clipped = 0;
    for d in derived {
        if out.contains(d) {
            continue;
        }
        if out.len() >= MAX_ALIASES {
            clipped += 1;
            continue;
        }
        out.push(d.clone());
    }
    (out, clipped)
}

/// Record on `node` that it moved from `old` (every writer that moves a
/// node: a Gardener move, a rebalance, the Vine's `transplant`): `old`
/// joins `moved_from` once and `aliases` when the cap leaves room; an
/// unchanged alias list is left as it is. Returns how many aliases the
/// cap dropped (0 or 1). The caller sets `id` and `updated`.
pub fn record_move(node: &mut crate::node::Node, old: &str) -> usize {
    let mut moved_from = node.get_list("moved_from");
    if !moved_from.iter().any(|m| m == old) {
        moved_from.push(old.to_string());
    }
    node.set_list("moved_from", &moved_from);
    let existing = node.get_list("aliases");
    let (aliases, clipped) = union_aliases(&existing, &[old.to_string()]);
    if aliases != existing {
        node.set_list("aliases", &aliases);
    }
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_is_recorded_once_and_the_alias_cap_holds() {
        let mut n = crate::node::Node::parse("---\nid: new/a\n---\nBody.\n").unwrap();
        assert_eq!(record_move(&mut n, "old/a"), 0);
        assert_eq!(record_move(&mut n, "old/a"), 0);
        assert_eq!(n.get_list("moved_from"), vec!["old/a"]);
        assert_eq!(n.get_list("aliases"), vec!["old/a"]);
        let full: Vec<String> = (0..MAX_ALIASES).map(|i| format!("a{i}")).collect();
        n.set_list("aliases", &full);
        assert_eq!(record_move(&mut n, "older/a"), 1);
        assert_eq!(n.get_list("moved_from"), vec!["old/a", "older/a"]);
        assert_eq!(n.get_list("aliases"), full);
    }

    #[test]
    fn dialect_examples() {
        let none = IndexMap::new();
        assert_eq!(
            derive_aliases("tasks/back-end/291-budget.md", &none, "Budget"),
            vec!["BE-291", "back-end/291", "291"]
        );
        let mut m = IndexMap::new();
        m.insert("back-end".to_string(), "TASK".to_string());
        assert_eq!(
            derive_aliases("tasks/back-end/291-budget.md", &m, "Budget"),
            vec!["TASK-291", "back-end/291", "291"]
        );
        assert_eq!(derive_aliases("notes/7-thing.md", &none, "x"), vec!["notes/7", "7"]);
        assert!(derive_aliases("notes/free-form.md", &none, "Just prose").is_empty());
        assert_eq!(derive_aliases("d/adr.md", &none, "ADR-0002 decision, see XY-1"), vec!["ADR-0002", "XY-1"]);
    }

    #[test]
    fn union_never_removes() {
        let existing: Vec<String> = (0..16).map(|i| format!("h{i}")).collect();
        let (u, clipped) = union_aliases(&existing, &["x".into(), "h1".into()]);
        assert_eq!(u, existing);
        assert_eq!(clipped, 1);
    }
}
