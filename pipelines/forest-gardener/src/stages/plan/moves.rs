//! Moves and stale marks of the plan stage: a transplant re-ids a passport
//! (aliases, `moved_from`, payload, cached body and backlinks follow); a
//! vanished source marks its passport `source_state: vanished`, never
//! deletes it.

use super::Batch;
use super::Planner;
use crate::reconcile::{self, ManifestEntry};
use crate::report::err;
use crate::report::MoveRecord;
use crate::stages::plan::payload::cached_body_path;
use forest_catalog::Catalog;
use forest_model::aliases::record_move;
use forest_model::ids;
use forest_model::index::DIRECT_BANANAS;
use forest_model::node::Node;
use forest_model::yaml::Value;

impl Planner<'_> {
    /// Re-id a moved file's passport at its new path.
    pub(crate) fn transplant(&mut self, m: &reconcile::Move, batch: &mut Batch, catalog: Option<&Catalog>) {
        let Some(mut n) = self.load(&m.from_id, batch) else {
            self.report
                .errors
                .push(err(&m.to_rel, format!("moved from {} but its passport {} is missing", m.from_rel, m.from_id)));
            return;
        };
        let dir = m.to_rel.rfind('/').map(|i| &m.to_rel[..i]).unwrap_or("");
        let folder = self.folder_for(dir, batch);
        self.ensure_branch(&folder, batch);
        let new_id = self.new_leaf_id(&m.to_rel, batch);
        let old_id = m.from_id.clone();
        n.set_str("id", &new_id);
        n.set_str("source_path", &m.to_rel);
        n.remove("source_state");
        n.set_str("updated", &self.today);
        self.report.aliases_clipped += record_move(&mut n, &old_id);
        // The payload travels with its passport.
        if let Some(p) = n.get_str("payload").filter(|p| !forest_model::lint::is_remote(p) && !p.contains('/')) {
            let new_name = format!("{}.db", new_id.rsplit('/').next().unwrap_or(&new_id));
            let from = self.forest.join(ids::folder_of(&old_id)).join(&p);
            let to = self.forest.join(ids::folder_of(&new_id)).join(&new_name);
            if from != to {
                batch.renames.push((from, to));
                n.set_str("payload", &new_name);
            }
        }
        // A machine-set origin (and a source-referenced payload) follow the file.
        let old_origin = self.access.origin_of_rel(&m.from_rel);
        let new_origin = self.access.origin_of_rel(&m.to_rel);
        if n.get_str("origin").as_deref() == Some(old_origin.as_str()) {
            n.set_str("origin", &new_origin);
        }
        if n.get_str("payload").as_deref() == Some(old_origin.as_str()) {
            n.set_str("payload", &new_origin);
        }
        if n.get_str("content").as_deref() == Some("cached") {
            let from = cached_body_path(self.forest, &old_id);
            if from.exists() {
                batch.renames.push((from, cached_body_path(self.forest, &new_id)));
            }
        }
        let summary = n.get_str("summary").unwrap_or_default();
        let old_parent = ids::parent_index(&old_id).unwrap_or_else(|| ids::MASTER.into());
        let new_parent = ids::parent_index(&new_id).unwrap_or_else(|| ids::MASTER.into());
        self.remove_entry(&old_parent, &old_id, batch);
        batch.nodes.remove(&old_id);
        batch.dirty.remove(&old_id);
        batch.deletes.insert(ids::id_to_path(&old_id));
        batch.removed_ids.push(old_id.clone());
        self.put(&new_id, n, batch);
        self.taken.insert(new_id.clone());
        self.add_entry(&new_parent, DIRECT_BANANAS, &new_id, &summary, batch);
        // Backlinks follow (frontmatter links from the catalog's edge table).
        if let Some(cat) = catalog {
            if let Ok(edges) = cat.edges_in(&old_id) {
                let mut srcs: Vec<String> = edges.into_iter().map(|e| e.src).collect();
                srcs.sort();
                srcs.dedup();
                for src in srcs {
                    let src = if src == old_id { new_id.clone() } else { src };
                    if let Some(mut sn) = self.load(&src, batch) {
                        if rewrite_link_targets(&mut sn, &old_id, &new_id) {
                            sn.set_str("updated", &self.today);
                            self.put(&src, sn, batch);
                        }
                    }
                }
            }
        }
        batch.manifest_del.push(m.from_rel.clone());
        if let Some(mut e) = batch_entry_from_node(&new_id, batch.nodes.get(&new_id)) {
            e.vanished = false;
            batch.manifest_up.push((m.to_rel.clone(), e));
        }
        batch.rekeys.push((old_id.clone(), new_id.clone()));
        self.report.moved.push(MoveRecord { from: old_id, to: new_id.clone() });
        batch.moved += 1;
        batch.ids.push(new_id);
    }

    /// Mark a vanished source's passport stale (never delete it).
    pub(crate) fn mark_stale(&mut self, rel: &str, e: &ManifestEntry, batch: &mut Batch) {
        if let Some(mut n) = self.load(&e.id, batch) {
            n.set_str("source_state", "vanished");
            self.put(&e.id, n, batch);
            batch.stale += 1;
            batch.ids.push(e.id.clone());
        }
        batch.manifest_up.push((rel.to_string(), ManifestEntry { vanished: true, ..e.clone() }));
    }
}

/// The manifest row of a node as the batch holds it.
pub(super) fn batch_entry_from_node(id: &str, n: Option<&Node>) -> Option<ManifestEntry> {
    let n = n?;
    Some(ManifestEntry {
        id: id.to_string(),
        size: n.get_f64("source_size").map(|s| s as u64).unwrap_or(u64::MAX),
        mtime_ms: (n.get_f64("source_mtime").unwrap_or(0.0) * 1000.0).round() as i64,
        hash: n.get_str("source_hash")?,
        vanished: false,
        etag: n.get_str("source_etag"),
    })
}

/// Point `links:` entries at `old` to `new`; true when any changed.
fn rewrite_link_targets(n: &mut Node, old: &str, new: &str) -> bool {
    let mut changed = false;
    if let Some(Value::Sequence(links)) = n.front.get_mut("links") {
        for l in links.iter_mut() {
            if let Some(m) = l.as_mapping_mut() {
                if m.get("target").and_then(|t| t.as_str()) == Some(old) {
                    m.insert("target".into(), new.into());
                    changed = true;
                }
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::env::testing::Fixture;
    use crate::reconcile::{ManifestEntry, Move};
    use crate::stages::plan::Batch;
    use forest_model::node::Node;

    #[test]
    fn stale_marks_and_moves_rewrite_the_batch_only() {
        let fx = Fixture::new();
        let passport = "---\nid: old/a\ntype: note\ntitle: A\nsummary: About a.\nsource_path: old/a.md\nsource_hash: blake3:x\nsource_size: 3\nsource_mtime: 1.0\n---\n# A\n";
        std::fs::create_dir_all(fx.forest.join("old")).expect("dir");
        std::fs::write(fx.forest.join("old/a.md"), passport).expect("passport");
        let e = ManifestEntry {
            id: "old/a".into(),
            size: 3,
            mtime_ms: 1000,
            hash: "blake3:x".into(),
            vanished: false,
            etag: None,
        };
        let env = fx.env();
        let mut st = crate::stages::plan::PlanState::default();
        let mut run = st.planner(&env);
        let mut batch = Batch::default();
        run.mark_stale("old/a.md", &e, &mut batch);
        assert_eq!(batch.nodes["old/a"].get_str("source_state").as_deref(), Some("vanished"));
        assert!(batch.manifest_up[0].1.vanished);
        let mut batch = Batch::default();
        let m = Move { from_rel: "old/a.md".into(), from_id: "old/a".into(), to_rel: "new/a.md".into() };
        run.transplant(&m, &mut batch, None);
        let n: &Node = &batch.nodes["new/a"];
        assert_eq!(n.get_list("moved_from"), vec!["old/a"]);
        assert!(n.get_list("aliases").contains(&"old/a".to_string()));
        assert!(batch.deletes.contains("old/a.md"));
        assert_eq!(batch.manifest_del, vec!["old/a.md"]);
        assert_eq!(batch.rekeys, vec![("old/a".to_string(), "new/a".to_string())]);
    }
}
