//! Listing the node files of a forest (dialect §1.1).

use std::path::Path;

/// Directories never walked for nodes.
pub const SKIP_DIRS: [&str; 3] = ["_derived", "_assets", ".git"];

/// Forest-relative POSIX paths of every `*.md` node file, sorted.
/// Unreadable directories are skipped (lint reports the files it can see).
pub fn node_paths(root: &Path) -> Vec<String> {
    walk(root).0
}

/// [`node_paths`] and, apart, the forest-relative paths of the symlinks
/// among the entries (files and directories: never followed, never nodes).
pub fn node_paths_and_links(root: &Path) -> (Vec<String>, Vec<String>) {
    walk(root)
}

fn walk(root: &Path) -> (Vec<String>, Vec<String>) {
    let mut out = vec![];
    let mut links = vec![];
    let walker = walkdir::WalkDir::new(root).follow_links(false).into_iter();
    for entry in walker.filter_entry(|e| {
        if e.depth() == 0 {
            return true;
        }
        let name = e.file_name().to_string_lossy();
        !(e.file_type().is_dir() && (SKIP_DIRS.contains(&name.as_ref()) || name.starts_with('.')))
    }) {
        let Ok(entry) = entry else { continue };
        if entry.path_is_symlink() {
            if let Some(rel) = entry.path().strip_prefix(root).ok().and_then(|r| r.to_str()) {
                links.push(rel.replace('\\', "/"));
            }
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        if !name.ends_with(".md") || forest_fs::is_temp_name(&name) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str() else { continue };
        out.push(rel.replace('\\', "/"));
    }
    out.sort();
    links.sort();
    (out, links)
}
