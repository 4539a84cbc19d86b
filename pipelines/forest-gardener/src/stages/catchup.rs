//! Catch-up stage (before listing): bring `_derived/manifest.db` and the
//! catalog to HEAD after commits made by others (hand edits, the Ranger, a
//! crash between a commit and its derived upserts).
//!
//! In: the forest, HEAD, the recorded manifest head. Out: an open
//! [`Manifest`] at HEAD and a [`Refresh`] saying what the catalog must
//! re-read. Touches only `_derived/` (manifest, catalog); reads passports.

use crate::error::GardenError;
use crate::manifest::Manifest;
use crate::reconcile::ManifestEntry;
use crate::stages::MANIFEST_PATH;
use forest_catalog::Catalog;
use forest_derived::catalog::catalog_row;
use forest_derived::config::GardenerConfig;
use forest_git::GitForest;
use forest_model::node::Node;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// What changed in git since the derived layer was last brought up to date.
pub(crate) enum Refresh {
    /// Nothing: derived state matches HEAD.
    Nothing,
    /// These `.md` paths changed (hand edits, Ranger commits).
    Paths(Vec<String>),
    /// Unknown history: everything was re-read.
    Full,
}

/// Bring the catalog to HEAD after commits made by others.
pub(crate) fn refresh_catalog(forest: &Path, cat: &mut Catalog, refresh: &Refresh) -> Result<(), GardenError> {
    let d = GardenError::Catalog;
    match refresh {
        Refresh::Nothing => Ok(()),
        Refresh::Full => {
            let rows = forest_derived::catalog::read_all_rows(forest);
            cat.rebuild(rows).map(|_| ()).map_err(d)
        }
        Refresh::Paths(paths) => {
            let mut rows = vec![];
            let mut gone = vec![];
            for p in paths {
                let id = p.trim_end_matches(".md").to_string();
                match std::fs::read_to_string(forest.join(p)).ok().and_then(|t| Node::parse(&t).ok()) {
                    Some(n) => rows.push(catalog_row(&id, &n)),
                    None => gone.push(id),
                }
            }
            if !gone.is_empty() {
                cat.remove(&gone).map_err(d)?;
            }
            if !rows.is_empty() {
                cat.upsert(&rows).map_err(d)?;
            }
            Ok(())
        }
    }
}

/// Open the manifest, bringing it up to HEAD: rebuilt from passports when
/// missing or recorded at another commit (a crash between commit and
/// manifest update, a hand edit, a Ranger commit).
pub(crate) fn open_manifest(
    forest: &Path,
    git: &GitForest,
    config: &GardenerConfig,
    dry_run: bool,
) -> Result<(Manifest, Refresh), GardenError> {
    let path = forest.join(MANIFEST_PATH);
    let head = git.head_oid()?.map(|o| o.to_string());
    let mut m = if dry_run && !path.exists() { Manifest::open(Path::new(":memory:"))? } else { Manifest::open(&path)? };
    let recorded = m.head()?;
    if recorded.is_some() && recorded == head {
        return Ok((m, Refresh::Nothing));
    }
    let changed = match (&recorded, &head) {
        (Some(r), Some(h)) => changed_md_paths(forest, r, h),
        _ => None,
    };
    let default_source = config.sources.first().map(|s| s.name.clone()).unwrap_or_else(|| "default".into());
    let refresh = match changed {
        Some(paths) => {
            // Incremental: re-read only passports changed since the recorded commit.
            let mut by_source: BTreeMap<String, Vec<(String, ManifestEntry)>> = BTreeMap::new();
            let mut removed_ids: Vec<String> = vec![];
            for p in &paths {
                let id = p.trim_end_matches(".md").to_string();
                match std::fs::read_to_string(forest.join(p)).ok().and_then(|t| Node::parse(&t).ok()) {
                    Some(node) => {
                        if let Some((source, rel, e)) = passport_entry(&id, &node, &default_source) {
                            by_source.entry(source).or_default().push((rel, e));
                        }
                    }
                    None => removed_ids.push(id),
                }
            }
            for (source, ups) in &by_source {
                m.apply(source, ups, &[], None)?;
            }
            if !removed_ids.is_empty() {
                for s in &config.sources {
                    // By the id index: no read of the source's other rows.
                    let dels = m.paths_of_ids(&s.name, &removed_ids)?;
                    m.apply(&s.name, &[], &dels, None)?;
                }
            }
            if let Some(h) = &head {
                m.set_head(h)?;
            }
            Refresh::Paths(paths)
        }
        None => {
            tracing::info!(event = "manifest.rebuild", forest = %forest.display());
            let rows: Vec<(String, String, ManifestEntry)> = forest_model::walk::node_paths(forest)
                .par_iter()
                .filter_map(|rel| {
                    let id = rel.strip_suffix(".md")?;
                    let node = Node::parse(&std::fs::read_to_string(forest.join(rel)).ok()?).ok()?;
                    let (source, path, e) = passport_entry(id, &node, &default_source)?;
                    Some((source, path, e))
                })
                .collect();
            m.replace_all(&rows, head.as_deref())?;
            Refresh::Full
        }
    };
    Ok((m, refresh))
}

/// The manifest row a passport describes: (source, path, entry).
pub(crate) fn passport_entry(id: &str, node: &Node, default_source: &str) -> Option<(String, String, ManifestEntry)> {
    let path = node.get_str("source_path")?;
    let hash = node.get_str("source_hash")?;
    let source = node.get_str("source_name").unwrap_or_else(|| default_source.to_string());
    let size = node.get_f64("source_size").unwrap_or(-1.0);
    let mtime = node.get_f64("source_mtime").unwrap_or(0.0);
    Some((
        source,
        path,
        ManifestEntry {
            id: id.to_string(),
            size: if size < 0.0 { u64::MAX } else { size as u64 },
            mtime_ms: (mtime * 1000.0).round() as i64,
            hash,
            vanished: node.get_str("source_state").as_deref() == Some("vanished"),
            etag: node.get_str("source_etag"),
        },
    ))
}

/// `.md` paths that differ between two commits, or None when unknown.
pub(crate) fn changed_md_paths(forest: &Path, from: &str, to: &str) -> Option<Vec<String>> {
    let repo = git2::Repository::open(forest).ok()?;
    let a = repo.find_commit(git2::Oid::from_str(from).ok()?).ok()?.tree().ok()?;
    let b = repo.find_commit(git2::Oid::from_str(to).ok()?).ok()?.tree().ok()?;
    let diff = repo.diff_tree_to_tree(Some(&a), Some(&b), None).ok()?;
    let mut out = vec![];
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path().and_then(|p| p.to_str()) {
                if p.ends_with(".md") && !out.iter().any(|x: &String| x == p) {
                    out.push(p.to_string());
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passport_is_a_manifest_row() {
        let n = Node::parse(
            "---\nid: a/b\nsource_path: a/b.md\nsource_hash: blake3:h\nsource_size: 12\nsource_mtime: 1.5\nsource_state: vanished\nsource_etag: e\n---\n# B\n",
        )
        .expect("node");
        let (source, path, e) = passport_entry("a/b", &n, "default").expect("row");
        assert_eq!((source.as_str(), path.as_str()), ("default", "a/b.md"));
        assert_eq!(
            e,
            ManifestEntry {
                id: "a/b".into(),
                size: 12,
                mtime_ms: 1500,
                hash: "blake3:h".into(),
                vanished: true,
                etag: Some("e".into())
            }
        );
        let hand = Node::parse("---\nid: h\n---\n# H\n").expect("node");
        assert!(passport_entry("h", &hand, "default").is_none(), "hand-written nodes have no source row");
    }
}
