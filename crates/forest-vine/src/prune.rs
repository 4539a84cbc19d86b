//! `prune` and `transplant` (vine spec §2.16–§2.17): a node leaves its
//! place in one commit — deleted (its payload to the graveyard, the links
//! to it removed on request) or moved to a new id (links to it rewritten,
//! `moved_from` and an alias kept, its heat rekeyed).
//!
//! In: ids. Out: the commit and what was rewritten. Touches the node's
//! file and payload, the files linking to it, the parent indexes, git, the
//! catalog and the trails.

use crate::answers::{Pruned, Transplanted};
use forest_model::ErrorCode;
use std::path::PathBuf;

use forest_model::ids::{self, is_branch_id, is_meta, parent_index};
use forest_model::index::{self, entry_line, upsert_entry, DIRECT_BANANAS};
use forest_model::node::{today, Node};
use serde_json::Value;

use crate::engine::{norm_id, Vine};
use crate::error::{VResult, VineError};
use crate::yamljson::{to_json, to_yaml};

/// A link that anchors a node against `prune` (named in the refusal).
#[derive(serde::Serialize)]
struct Anchor<'a> {
    source: &'a str,
    rel: &'a str,
}

impl Vine {
    /// `prune(id, force)`.
    pub fn prune(&mut self, id: &str, force: bool) -> VResult<Pruned> {
        self.writer()?;
        let row = self.row(id)?;
        let id = row.id.clone();
        if id == "_index" {
            return Err(VineError::schema("the forest root cannot be pruned"));
        }
        if is_meta(&id) {
            return Err(VineError::schema(format!("'{id}' is a system node")));
        }
        let kids = self.catalog.child_count(&id)?;
        if kids > 0 {
            return Err(VineError::new(ErrorCode::Anchored, format!("branch has {kids} children; prune them first")));
        }
        let anchors: Vec<_> = self.catalog.edges_in(&id)?.into_iter().filter(|e| e.src != id.as_str()).collect();
        if !anchors.is_empty() && !force {
            let list: Vec<Anchor> = anchors.iter().take(20).map(|e| Anchor { source: &e.src, rel: &e.rel }).collect();
            return Err(VineError::new(ErrorCode::Anchored, format!("{} node(s) point at {id}", anchors.len()))
                .hint("Pass force=true to remove those links with the node.")
                .with("anchors", list)
                .with("anchor_count", anchors.len()));
        }
        let mut writes = vec![];
        let mut removed = 0usize;
        let mut sources: Vec<String> = anchors.iter().map(|e| e.src.clone()).collect();
        sources.dedup();
        for s in sources {
            let Ok(mut n) = self.read_node(&s) else { continue };
            let mut links = n.front.get("links").map(to_json).and_then(|v| v.as_array().cloned()).unwrap_or_default();
            let before = links.len();
            links.retain(|l| l["target"].as_str() != Some(id.as_str()));
            removed += before - links.len();
            if links.is_empty() {
                n.remove("links");
            } else {
                n.set("links", to_yaml(&Value::Array(links)));
            }
            n.set_str("updated", &today());
            writes.push((s, n));
        }
        if let Some(p) = parent_index(&id) {
            if let Ok(mut pn) = self.read_node(&p) {
                pn.body = index::remove_entry(&pn.body, &id).0;
                pn.set_str("coverage", &index::coverage_of(&pn.body));
                pn.set_str("updated", &today());
                writes.push((p, pn));
            }
        }
        let mut payload_moved = None;
        let mut moved: Option<(PathBuf, PathBuf)> = None;
        if let Some(p) = row.payload.as_ref().filter(|p| !p.contains("://")) {
            let src = self.root.join(ids::folder_of(&id)).join(p);
            if src.is_file() {
                let rel = format!("_derived/graveyard/{id}/{p}");
                let dst = self.root.join(&rel);
                if let Some(d) = dst.parent() {
                    std::fs::create_dir_all(d)?;
                }
                std::fs::rename(&src, &dst)?;
                payload_moved = Some(rel);
                moved = Some((src, dst));
            }
        }
        let commit = self.commit_moving(&writes, &id, &format!("prune({id})"), moved)?;
        if is_branch_id(&id) {
            let _ = std::fs::remove_dir(self.root.join(ids::folder_of(&id)));
        }
        Ok(Pruned { id, pruned: true, backlinks_removed: removed, payload_moved, commit })
    }

    /// `transplant(id, new_id)`.
    pub fn transplant(&mut self, id: &str, new_id: &str) -> VResult<Transplanted> {
        self.writer()?;
        let row = self.row(id)?;
        let old = row.id.clone();
        let new = norm_id(new_id);
        self.check_transplant(&old, &new)?;
        let new_parent = parent_index(&new).unwrap_or_default();
        if !self.node_path(&new_parent)?.is_file() {
            return Err(VineError::not_found(format!("parent branch not found: {new_parent}")));
        }
        let mut node = self.read_node(&old)?;
        // A scoped writer may not move a reference away from its source's
        // folder, nor a payload out of its branches.
        self.check_storage_keys(&new, &node, false)?;
        let alias_clipped = moved_node(&mut node, &old, &new);
        let summary = node.get_str("summary").unwrap_or_default();
        let mut writes: Vec<(String, Node)> = vec![(new.clone(), node)];
        let rewritten = self.rewrite_backlinks(&old, &new, &mut writes)?;
        let old_parent = parent_index(&old).unwrap_or_default();
        self.edit_index(&old_parent, &|b| index::remove_entry(b, &old).0, &mut writes);
        let line = entry_line(&new, &summary, None);
        self.edit_index(&new_parent, &|b| upsert_entry(b, DIRECT_BANANAS, &new, &line), &mut writes);
        let mut moved = None;
        if let Some(p) = row.payload.as_ref().filter(|p| !p.contains("://")) {
            let src = self.root.join(ids::folder_of(&old)).join(p);
            let dst = self.root.join(ids::folder_of(&new)).join(p);
            if src.is_file() && src != dst {
                std::fs::rename(&src, &dst)?;
                moved = Some((src, dst));
            }
        }
        let commit = self.commit_moving(&writes, &old, &format!("transplant({old} -> {new})"), moved)?;
        let _ = self.trails.rekey(&old, &new);
        let trail = ids::trail(&new);
        Ok(Transplanted {
            id: new,
            moved_from: old.into_string(),
            backlinks_rewritten: rewritten,
            commit,
            trail,
            alias_clipped,
        })
    }

    /// The refusals of a move from `old` to `new` by their ids alone (and
    /// a taken `new`).
    fn check_transplant(&self, old: &str, new: &str) -> VResult<()> {
        if new.is_empty() {
            return Err(VineError::schema("new_id must not be empty"));
        }
        if new == old {
            return Err(VineError::schema("new_id equals the current id"));
        }
        if is_branch_id(old) {
            return Err(VineError::schema(format!("'{old}' is a branch: branches do not transplant")));
        }
        if is_meta(old) || is_meta(new) {
            return Err(VineError::schema("'_meta/' is the dialect, not content"));
        }
        if is_branch_id(new) {
            return Err(VineError::schema(format!("'{new}' is an index address")));
        }
        if self.node_path(new)?.is_file() {
            return Err(VineError::schema(format!("id already exists: {new}")));
        }
        Ok(())
    }

    /// Point every link at `old` to `new` in the nodes that hold one;
    /// returns how many links changed.
    fn rewrite_backlinks(&self, old: &str, new: &str, writes: &mut Vec<(String, Node)>) -> VResult<usize> {
        let mut rewritten = 0usize;
        let mut sources: Vec<String> =
            self.catalog.edges_in(old)?.into_iter().map(|e| e.src).filter(|s| *s != old).collect();
        sources.dedup();
        for s in sources {
            let Ok(mut n) = self.read_node(&s) else { continue };
            let mut links = n.front.get("links").map(to_json).and_then(|v| v.as_array().cloned()).unwrap_or_default();
            for l in links.iter_mut() {
                if l["target"].as_str() == Some(old) {
                    l["target"] = Value::String(new.to_string());
                    rewritten += 1;
                }
            }
            n.set("links", to_yaml(&Value::Array(links)));
            n.set_str("updated", &today());
            writes.push((s, n));
        }
        Ok(rewritten)
    }

    /// Apply `f` to the body of the index `p` (as already planned in
    /// `writes`, else as on disk) and plan the result.
    fn edit_index(&self, p: &str, f: &dyn Fn(&str) -> String, writes: &mut Vec<(String, Node)>) {
        let existing = writes.iter().position(|(i, _)| i == p);
        let base = match existing {
            Some(i) => Some(writes[i].1.clone()),
            None => self.read_node(p).ok(),
        };
        if let Some(mut pn) = base {
            pn.body = f(&pn.body);
            pn.set_str("coverage", &index::coverage_of(&pn.body));
            pn.set_str("updated", &today());
            match existing {
                Some(i) => writes[i].1 = pn,
                None => writes.push((p.to_string(), pn)),
            }
        }
    }

    /// Commit `writes` with `gone` deleted; a payload already moved
    /// (`moved`: from, to) goes back when the commit fails.
    fn commit_moving(
        &mut self,
        writes: &[(String, Node)],
        gone: &str,
        msg: &str,
        moved: Option<(PathBuf, PathBuf)>,
    ) -> VResult<Option<String>> {
        self.commit_nodes(writes, &[gone.to_string()], msg).inspect_err(|_| {
            if let Some((src, dst)) = moved {
                let _ = std::fs::rename(dst, src);
            }
        })
    }
}

/// The moved node: its new id, `moved_from` and (room allowing) an alias
/// for the old id. True when the aliases were full.
fn moved_node(node: &mut Node, old: &str, new: &str) -> bool {
    node.set_str("id", new);
    node.set_str("updated", &today());
    forest_model::aliases::record_move(node, old) > 0
}
