//! Where what a node serves really lies, as a forest folder (pure): the
//! folder a reference's source file maps to, and the folder a relative
//! payload names. A node may only serve what maps at or below its own
//! folder, so whoever may read the node (a token scoped to any branch
//! prefix that covers it) may read what it serves; `forest validate`
//! reports the others, and the read side refuses them to scoped callers.

use crate::ids::folder_of;
use crate::slug::slugify;

/// The forest folder the Gardener plants the file `source_path` of a
/// source with `dest` in: `dest`, then the slug of each directory of the
/// path (split buckets `~x` may sit below it; see [`source_folder`]).
/// `None` when the path is absolute or climbs (`..`, empty components).
pub fn source_home(dest: Option<&str>, source_path: &str) -> Option<String> {
    if source_path.starts_with('/') || source_path.contains('\0') {
        return None;
    }
    let parts: Vec<&str> = source_path.split(['/', '\\']).collect();
    if parts.iter().any(|c| c.is_empty() || *c == "." || *c == "..") {
        return None;
    }
    let mut home: Vec<String> = dest
        .map(|d| d.trim_matches('/'))
        .filter(|d| !d.is_empty())
        .map(|d| d.split('/').map(String::from).collect())
        .unwrap_or_default();
    home.extend(parts[..parts.len() - 1].iter().map(|c| slugify(c)));
    Some(home.join("/"))
}

/// The source folder of a node: its folder without split-bucket
/// components (`a/~x/~xy/leaf` -> `a`, `a/~x/b/leaf` -> `a/b`).
pub fn source_folder(id: &str) -> String {
    folder_of(id).split('/').filter(|c| !c.is_empty() && !c.starts_with('~')).collect::<Vec<_>>().join("/")
}

/// True when `folder` is `base` or lies below it (`""` holds everything).
pub fn within(folder: &str, base: &str) -> bool {
    base.is_empty() || folder == base || folder.strip_prefix(base).is_some_and(|r| r.starts_with('/'))
}

/// True when the reference of node `id` to a file whose home is `home`
/// ([`source_home`]) stays in the node's scope: at or below its folder.
pub fn reference_in_scope(id: &str, home: &str) -> bool {
    within(home, &source_folder(id))
}

/// The forest-relative path a relative `payload` of node `id` names,
/// resolved lexically (`..` climbs); `None` for a URI, an absolute path or
/// one that climbs out of the forest.
pub fn payload_path(id: &str, payload: &str) -> Option<String> {
    if payload.contains("://") || payload.starts_with('/') || payload.contains('\0') {
        return None;
    }
    let mut out: Vec<&str> = folder_of(id).split('/').filter(|c| !c.is_empty()).collect();
    for c in payload.split(['/', '\\']) {
        match c {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            c => out.push(c),
        }
    }
    Some(out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_follow_the_gardener_placement() {
        assert_eq!(source_home(None, "hr/salary1.md").as_deref(), Some("hr"));
        assert_eq!(source_home(Some("drive/"), "HR Files/Pay 2026/s.xlsx").as_deref(), Some("drive/hr-files/pay-2026"));
        assert_eq!(source_home(None, "top.md").as_deref(), Some(""));
        for bad in ["/etc/passwd", "a/../b.md", "a//b.md", "./a.md"] {
            assert_eq!(source_home(None, bad), None, "{bad}");
        }
    }

    #[test]
    fn references_stay_at_or_below_their_node() {
        assert!(reference_in_scope("hr/salary1", "hr"));
        assert!(reference_in_scope("hr/~s/salary1", "hr"));
        assert!(reference_in_scope("engineering/x", "engineering/deep"));
        assert!(!reference_in_scope("engineering/ref-leak", "hr"));
        assert!(!reference_in_scope("engineering/ref-leak", "engineering-private"));
        assert!(!reference_in_scope("engineering/deep/x", "engineering"));
        assert!(!reference_in_scope("engineering/x", ""));
        assert!(reference_in_scope("top", "anything"));
        assert_eq!(source_folder("a/~x/b/~y/leaf"), "a/b");
    }

    #[test]
    fn payloads_resolve_lexically() {
        assert_eq!(payload_path("eng/a", "a.png").as_deref(), Some("eng/a.png"));
        assert_eq!(payload_path("eng/a", "../hr/s.db").as_deref(), Some("hr/s.db"));
        assert_eq!(payload_path("eng/a", "../../x"), None);
        assert_eq!(payload_path("eng/a", "s3://b/k"), None);
        assert_eq!(payload_path("eng/a", "/etc/passwd"), None);
    }
}
