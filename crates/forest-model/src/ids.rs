//! Canonical ids, trails and parent indexes (dialect §1.2).

/// Id of the master branch.
pub const MASTER: &str = "_index";

/// True when `id` names a branch (`_index` or `…/_index`).
pub fn is_branch_id(id: &str) -> bool {
    id == MASTER || id.ends_with("/_index")
}

/// Folder of a node: `a/b/c` -> `a/b`; `a/b/_index` -> `a/b`; `x` and `_index` -> ``.
pub fn folder_of(id: &str) -> &str {
    if id == MASTER {
        return "";
    }
    match id.rfind('/') {
        Some(i) => &id[..i],
        None => "",
    }
}

/// Parent index id: `a/b/c` -> `a/b/_index`; `a/b/_index` -> `a/_index`;
/// `a/_index` -> `_index`; `x` -> `_index`; `_index` -> None.
pub fn parent_index(id: &str) -> Option<String> {
    if id == MASTER {
        return None;
    }
    let folder = if is_branch_id(id) {
        let f = folder_of(id);
        folder_of_folder(f)
    } else {
        folder_of(id)
    };
    Some(branch_id_for_folder(folder))
}

fn folder_of_folder(folder: &str) -> &str {
    match folder.rfind('/') {
        Some(i) => &folder[..i],
        None => "",
    }
}

/// Branch id for a folder path (`""` -> `_index`).
pub fn branch_id_for_folder(folder: &str) -> String {
    if folder.is_empty() {
        MASTER.to_string()
    } else {
        format!("{folder}/_index")
    }
}

/// Trail: index ids from the root down to (excluding) the node. Folder
/// prefixes whose component starts with `_` (e.g. `_meta`) are not added.
pub fn trail(id: &str) -> Vec<String> {
    if id == MASTER {
        return vec![];
    }
    let folder = if is_branch_id(id) { folder_of_folder(folder_of(id)) } else { folder_of(id) };
    let mut out = vec![MASTER.to_string()];
    if folder.is_empty() {
        return out;
    }
    let mut acc = String::new();
    for comp in folder.split('/') {
        if !acc.is_empty() {
            acc.push('/');
        }
        acc.push_str(comp);
        if comp.starts_with('_') {
            continue;
        }
        out.push(format!("{acc}/_index"));
    }
    out
}

/// Relative file path of a node id (`a/b` -> `a/b.md`).
pub fn id_to_path(id: &str) -> String {
    format!("{id}.md")
}

/// Node id of a forest-relative path if it is a node file (`*.md`).
pub fn path_to_id(rel: &str) -> Option<String> {
    rel.strip_suffix(".md").map(|s| s.to_string())
}

/// True for ids under `_meta/`.
pub fn is_meta(id: &str) -> bool {
    id.starts_with("_meta/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trails() {
        assert!(trail("_index").is_empty());
        assert_eq!(trail("a/_index"), vec!["_index"]);
        assert_eq!(trail("a/b/c"), vec!["_index", "a/_index", "a/b/_index"]);
        assert_eq!(trail("x"), vec!["_index"]);
        assert_eq!(trail("_meta/schema"), vec!["_index"]);
    }

    #[test]
    fn parents() {
        assert_eq!(parent_index("a/b/c").unwrap(), "a/b/_index");
        assert_eq!(parent_index("a/b/_index").unwrap(), "a/_index");
        assert_eq!(parent_index("a/_index").unwrap(), "_index");
        assert_eq!(parent_index("x").unwrap(), "_index");
        assert!(parent_index("_index").is_none());
    }
}
