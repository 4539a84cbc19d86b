//! Who may do what: the caller's [`Access`] (token name, read or write,
//! the branch prefixes it may see) and the pure checks every call passes
//! before it reaches a primitive.
//!
//! Reads name ids; an id outside the token's branches answers
//! `E_NOT_FOUND` exactly as a missing node does (the reference host's rule:
//! out-of-scope = not found), decided from the id string alone, so a
//! scoped caller learns nothing about what exists elsewhere. Writes by a
//! read token, or naming any id outside the branches, answer
//! `E_FORBIDDEN`. Everything a primitive finds by itself (hits,
//! neighbours, children, counts) is filtered inside the engine by the
//! scoped catalog views of `forest_catalog::Catalog::narrow_to`.

use forest_model::ErrorCode;
use serde_json::{Map, Value};

pub use crate::caller::Access;
use crate::error::VineError;
use crate::ids::norm_id;

/// The primitives that write (git or datasets): a write token's.
pub use crate::prims::FOREST_WRITES as WRITES;

/// Why a call was refused before it ran (audited).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The envelope the caller gets.
    pub error: VineError,
    /// `read_only_token` or `out_of_scope`.
    pub reason: &'static str,
}

impl Access {
    /// Check one call before it runs: read tokens may not write; every id
    /// the arguments name must be visible.
    pub fn check(&self, prim: &str, args: &Map<String, Value>) -> Result<(), Refusal> {
        if WRITES.contains(&prim) && !self.write {
            return Err(Refusal {
                error: VineError::new(ErrorCode::Forbidden, format!("{prim}: token '{}' may only read", self.name))
                    .hint("Ask the operator for a token with --scope write."),
                reason: "read_only_token",
            });
        }
        let ids = named_ids(prim, args);
        if let Some(out) = ids.iter().find(|i| !self.visible(i)) {
            let error = if WRITES.contains(&prim) {
                VineError::new(
                    ErrorCode::Forbidden,
                    format!("{prim}: '{}' is outside this token's branches", norm_id(out)),
                )
                .hint(format!("This token may write under: {}.", self.branches.join(", ")))
            } else {
                VineError::not_found(format!("node not found: {}", norm_id(out)))
                    .hint(format!("This token sees: {}. Use locate() to find entry points.", self.branches.join(", ")))
            };
            return Err(Refusal { error, reason: "out_of_scope" });
        }
        Ok(())
    }
}

/// A commit subject for a scoped caller: one that names a path outside
/// its branches (a commit that touched several branches) is withheld.
pub fn redact_subject(a: &Access, subject: String, action: String) -> (String, String) {
    let outside = a.scoped()
        && subject
            .split(|c: char| c.is_whitespace() || "(),:;[]'\"".contains(c))
            .any(|w| w.contains('/') && !a.visible(w));
    if outside {
        let withheld = "(names nodes outside this token's branches)".to_string();
        (withheld.clone(), if action == subject { withheld } else { action })
    } else {
        (subject, action)
    }
}

fn strs(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(String::from).collect(),
        _ => vec![],
    }
}

/// Every node id a call's arguments name (ids, parents, scopes, targets,
/// links a write would add). Scope words of `locate` are not ids.
pub fn named_ids(prim: &str, args: &Map<String, Value>) -> Vec<String> {
    let mut ids = vec![];
    for key in ["id", "parent_id", "new_id", "toward", "answer_nodes"] {
        ids.extend(strs(args.get(key)));
    }
    if ["sniff", "coverage", "calendar"].contains(&prim) {
        // No scope = the whole forest, which the views narrow; a named
        // scope must be visible. `_index` (the root) is not.
        ids.extend(strs(args.get("scope")).into_iter().filter(|s| !norm_id(s).is_empty()));
    }
    if prim == "plant" {
        let nodes = match args.get("node") {
            Some(Value::Array(a)) => a.clone(),
            Some(v) => vec![v.clone()],
            None => vec![],
        };
        for n in nodes {
            for key in ["id", "parent"] {
                ids.extend(strs(n.get(key)));
            }
            ids.extend(link_targets(n.get("links")));
        }
    }
    if prim == "graft" {
        if let Some(p) = args.get("patch") {
            ids.extend(link_targets(p.get("add_links")));
            if let Some(fm) = p.get("set_frontmatter") {
                ids.extend(link_targets(fm.get("links")));
            }
        }
    }
    ids
}

/// Targets of a links value: `[{rel, target}]` or `{rel: [targets]}`.
fn link_targets(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .flat_map(|l| match l {
                Value::Object(o) => strs(o.get("target").or(o.get("to")).or(o.get("id"))),
                other => strs(Some(other)),
            })
            .collect(),
        Some(Value::Object(o)) => o.values().flat_map(|t| strs(Some(t))).collect(),
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn prefixes_match_whole_components() {
        let a = Access::new("eng", false, &["engineering".into(), "/ops/".into()]);
        assert_eq!(a.branches, vec!["engineering/".to_string(), "ops/".to_string()]);
        assert!(a.visible("engineering/_index"));
        assert!(a.visible("/engineering/x/"));
        assert!(!a.visible("engineering-secret/x"));
        assert!(!a.visible("hr/salaries"));
        assert!(!a.visible("_index"));
        assert!(Access::owner().visible("_index"));
    }

    #[test]
    fn reads_out_of_scope_are_not_found_writes_forbidden() {
        let a = Access::new("eng", true, &["engineering/".into()]);
        let e = a.check("look", &m(json!({"id": ["engineering/a", "hr/b"]}))).unwrap_err();
        assert_eq!((e.error.code.as_str(), e.reason), ("E_NOT_FOUND", "out_of_scope"));
        assert_eq!(e.error.message, "node not found: hr/b");
        assert!(a.check("sniff", &m(json!({"terms": "x"}))).is_ok());
        assert!(a.check("sniff", &m(json!({"terms": "x", "scope": "hr"}))).is_err());
        assert!(a.check("locate", &m(json!({"query": "x", "scope": "all"}))).is_ok());
        let e = a.check("plant", &m(json!({"node": {"id": "engineering/n", "parent": "hr/_index"}}))).unwrap_err();
        assert_eq!(e.error.code, "E_FORBIDDEN");
        let e = a
            .check(
                "graft",
                &m(json!({"id": "engineering/a", "patch": {"add_links": [{"rel": "see", "target": "hr/b"}]}})),
            )
            .unwrap_err();
        assert_eq!(e.error.code, "E_FORBIDDEN");
        assert!(a.check("transplant", &m(json!({"id": "engineering/a", "new_id": "hr/a"}))).is_err());
        assert!(a.check("close_session", &m(json!({"success": true, "answer_nodes": ["hr/b"]}))).is_err());
    }

    #[test]
    fn read_tokens_never_write() {
        let r = Access::new("r", false, &[]);
        for w in WRITES {
            let e = r.check(w, &m(json!({"id": "x"}))).unwrap_err();
            assert_eq!((e.error.code.as_str(), e.reason), ("E_FORBIDDEN", "read_only_token"));
        }
        assert!(r.check("look", &m(json!({"id": "x"}))).is_ok());
        assert!(!r.may_write_heat());
    }

    #[test]
    fn subjects_naming_other_branches_are_withheld() {
        let a = Access::new("eng", false, &["engineering/".into()]);
        let r = redact_subject(&a, "plant(hr/x): y".into(), "plant".into());
        assert_eq!(r.1, "plant");
        assert!(!r.0.contains("hr/"));
        let keep = redact_subject(&a, "graft(engineering/x): y".into(), "graft".into());
        assert_eq!(keep.0, "graft(engineering/x): y");
        assert_eq!(redact_subject(&Access::owner(), "plant(hr/x)".into(), "plant".into()).0, "plant(hr/x)");
    }
}
