//! The writes (vine spec §2.13–§2.17): `plant`, `graft`, `prune`,
//! `transplant`. Each is ONE git commit through forest-git (which also
//! brings the work tree to the new HEAD) or nothing; the engine holds the
//! writer lock for its whole life. Catalog rows follow the commit.

use forest_git::Change;
use forest_model::ids::{self, is_branch_id, is_meta, parent_index};
use forest_model::index::{self, entry_line, upsert_entry, DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::{today, Node};
use forest_model::scent::validate_summary;
use forest_model::yaml::{Mapping, Value as Y};
use serde_json::{json, Map, Value};

use crate::args::NodeSpecs;
use crate::engine::{norm_id, Vine};
use crate::error::{VResult, VineError};
use crate::yamljson::{to_json, to_yaml};

/// Nodes per plant batch.
pub const PLANT_BATCH_CAP: usize = 20;
/// `E_FORBIDDEN` when a node's `payload` leads outside the forest and its
/// sources, or its `source_path` outside its source root (refused at
/// write time, so nothing unsafe is ever recorded).
fn confine_paths(root: &std::path::Path, id: &str, node: &Node) -> VResult<()> {
    if let Some(p) = node.get_str("payload").filter(|p| !p.is_empty()) {
        forest_derived::tiers::check_payload(root, id, &p).map_err(|e| {
            VineError::new(e.code(), e.to_string().trim_start_matches("E_FORBIDDEN: ").to_string())
                .hint("Payloads are files beside the node, inside the forest, or URIs inside a configured source.")
        })?;
    }
    if let Some(sp) = node.get_str("source_path") {
        if sp.starts_with('/') || sp.contains('\0') || sp.split(['/', '\\']).any(|c| c == "..") {
            return Err(VineError::new("E_FORBIDDEN", format!("{id}: source_path '{sp}' leaves its source root")));
        }
    }
    Ok(())
}

const MUTABLE: [&str; 6] = ["title", "summary", "tags", "confidence", "aliases", "origin"];
const PATCH_KEYS: [&str; 6] =
    ["set_frontmatter", "add_links", "remove_links", "append_section", "replace_section", "replace_body"];

impl Vine {
    /// Commit `writes` and `deletes` as one commit; upsert/remove the
    /// catalog rows afterwards. `None` when nothing changed.
    pub(crate) fn commit_nodes(
        &mut self,
        writes: &[(String, Node)],
        deletes: &[String],
        msg: &str,
    ) -> VResult<Option<String>> {
        let w = self.writer()?;
        let mut changes: Vec<Change> = writes
            .iter()
            .map(|(id, n)| Change::Write { path: format!("{id}.md"), bytes: n.to_text().into_bytes() })
            .collect();
        changes.extend(deletes.iter().map(|id| Change::Delete { path: format!("{id}.md") }));
        let oid = w.git.commit_batch(&changes, msg)?;
        let rows: Vec<_> = writes.iter().map(|(id, n)| forest_derived::catalog::catalog_row(id, n)).collect();
        if !deletes.is_empty() {
            self.catalog_unscoped(|c| c.remove(deletes))?;
        }
        self.catalog_unscoped(|c| c.upsert(&rows))?;
        if oid.is_some() {
            // The canopy follows the scents, read from the whole catalog (the
            // views lifted); a refresh that cannot run marks it stale (locate
            // then answers BM25 alone), never fails the write.
            let root = self.root.clone();
            let refreshed = self.catalog_unscoped(|c| Ok(forest_canopy::maintain_forest(&root, c)))?;
            if let Err(e) = refreshed {
                tracing::warn!(event = "canopy.stale", code = e.code(), error = %e);
            }
        }
        Ok(oid.map(|o| o.to_string()))
    }

    fn check_summary(summary: &str) -> VResult<()> {
        validate_summary(summary)
            .map_err(|e| VineError::new("E_FRONTMATTER", e.message()).hint(format!("{} (60 tokens at most)", e.hint())))
    }

    /// `plant(node | [nodes], if_absent, dry_run)`.
    pub fn plant(&mut self, node: &NodeSpecs, if_absent: bool, dry_run: bool) -> VResult<Value> {
        self.writer()?;
        let (specs, batch): (&[Map<String, Value>], bool) = match node {
            NodeSpecs::One(m) => (std::slice::from_ref(m), false),
            NodeSpecs::Many(a) => {
                if a.is_empty() {
                    return Err(VineError::schema("plant batch must not be empty"));
                }
                if a.len() > PLANT_BATCH_CAP {
                    return Err(VineError::schema(format!(
                        "plant accepts at most 20 nodes per batch, got {}",
                        a.len()
                    )));
                }
                (a, true)
            }
        };
        let mut planned: Vec<(String, Node)> = vec![];
        let mut created_ids = vec![];
        let mut existing = vec![];
        let mut errors = vec![];
        let mut seen = std::collections::HashSet::new();
        for (i, spec) in specs.iter().enumerate() {
            let id = spec.get("id").and_then(Value::as_str).map(norm_id).unwrap_or_default();
            if batch && !seen.insert(id.clone()) {
                return Err(VineError::schema(format!("duplicate id in batch: {id}")));
            }
            match self.plan_plant(spec, &planned) {
                Ok(Some(writes)) => {
                    created_ids.push(id);
                    for (wid, n) in writes {
                        match planned.iter_mut().find(|(p, _)| *p == wid) {
                            Some(slot) => slot.1 = n,
                            None => planned.push((wid, n)),
                        }
                    }
                }
                Ok(None) if if_absent => existing.push(id),
                Ok(None) => {
                    let e = VineError::schema(format!("id already exists: {id}")).hint("ids are immutable and unique.");
                    if dry_run {
                        errors.push(json!({"index": i, "id": id, "code": e.code, "message": e.message}));
                        continue;
                    }
                    return Err(prefix(e, batch, &id));
                }
                Err(e) => {
                    if dry_run {
                        errors.push(json!({"index": i, "id": id, "code": e.code, "message": e.message}));
                        continue;
                    }
                    return Err(prefix(e, batch, &id));
                }
            }
        }
        if dry_run {
            if let Some(first) = errors.first().cloned() {
                let code = match first["code"].as_str() {
                    Some("E_FRONTMATTER") => "E_FRONTMATTER",
                    Some("E_NOT_FOUND") => "E_NOT_FOUND",
                    _ => "E_SCHEMA",
                };
                return Err(
                    VineError::new(code, first["message"].as_str().unwrap_or_default()).with("errors", json!(errors))
                );
            }
            return Ok(if batch {
                json!({"valid": true, "count": specs.len(), "dry_run": true})
            } else {
                json!({"id": created_ids.first().or(existing.first()), "valid": true, "dry_run": true})
            });
        }
        if created_ids.is_empty() {
            return Ok(if batch {
                json!({"created": [], "existing": existing, "count": 0, "commit": null})
            } else {
                json!({"id": existing.first(), "created": false, "commit": null, "trail": existing.first().map(|i| ids::trail(i))})
            });
        }
        let msg = if batch {
            format!("plant(batch): {} nodes", created_ids.len())
        } else {
            let s = &specs[0];
            format!(
                "plant({}): {} [source={}]",
                created_ids[0],
                s.get("title").and_then(Value::as_str).unwrap_or_default(),
                s.get("source").and_then(Value::as_str).unwrap_or("agent")
            )
        };
        let commit = self.commit_nodes(&planned, &[], &msg)?;
        Ok(if batch {
            json!({"created": created_ids, "existing": existing, "count": created_ids.len(), "commit": commit})
        } else {
            json!({"id": created_ids[0], "created": true, "commit": commit, "trail": ids::trail(&created_ids[0])})
        })
    }

    /// The writes of one node: its file and its (updated) parent index.
    /// `Ok(None)` when the id is taken.
    fn plan_plant(
        &mut self,
        spec: &Map<String, Value>,
        planned: &[(String, Node)],
    ) -> VResult<Option<Vec<(String, Node)>>> {
        let s = |k: &str| spec.get(k).and_then(Value::as_str).map(|v| v.to_string());
        for k in ["id", "type", "title", "summary", "parent"] {
            if s(k).is_none_or(|v| v.trim().is_empty()) {
                return Err(VineError::schema(format!("plant: node.{k} is required (a non-empty string)")));
            }
        }
        let id = norm_id(&s("id").unwrap_or_default());
        let parent = norm_id(&s("parent").unwrap_or_default());
        let ty = s("type").unwrap_or_default();
        let path = self.node_path(&id)?;
        if path.is_file() || planned.iter().any(|(p, _)| *p == id) {
            return Ok(None);
        }
        if spec.contains_key("moved_from") {
            return Err(
                VineError::schema("moved_from is written by transplant").hint("Use transplant() to move a node.")
            );
        }
        if spec.contains_key("schema") || spec.contains_key("rows") {
            return Err(VineError::schema("dataset birth (schema/rows) is not supported by forest's engine yet")
                .hint("Adopt the data with `forest adopt` instead."));
        }
        if !self.dialect.has_type(&ty) {
            return Err(VineError::schema(format!("unknown node type '{ty}'"))
                .hint("pick('_meta/schema') lists this forest's types."));
        }
        Self::check_summary(&s("summary").unwrap_or_default())?;
        let expected = parent_index(&id).unwrap_or_default();
        let parent_node = match planned.iter().find(|(p, _)| *p == parent) {
            Some((_, n)) => n.clone(),
            None => {
                let pp = self.node_path(&parent)?;
                if !pp.is_file() {
                    return Err(VineError::not_found(format!("parent branch not found: {parent}")));
                }
                self.read_node(&parent)?
            }
        };
        if !is_branch_id(&parent) {
            return Err(VineError::not_found(format!("parent branch not found: {parent}")));
        }
        if parent != expected {
            return Err(VineError::schema(format!(
                "id '{id}' does not live under parent '{parent}' (expected parent: {expected})"
            )));
        }
        if let Some(links) = spec.get("links").and_then(Value::as_array) {
            for l in links {
                let rel = l.get("rel").and_then(Value::as_str).unwrap_or_default();
                if !self.dialect.has_rel(rel) {
                    return Err(VineError::schema(format!("unknown rel '{rel}'")));
                }
            }
        }
        let title = s("title").unwrap_or_default();
        let summary = s("summary").unwrap_or_default();
        let day = today();
        let mut front = Mapping::new();
        let mut put = |k: &str, v: Y| {
            front.insert(Y::String(k.into()), v);
        };
        put("id", Y::String(id.clone()));
        put("type", Y::String(ty.clone()));
        put("title", Y::String(title.clone()));
        put("summary", Y::String(summary.clone()));
        put("created", Y::String(day.clone()));
        put("updated", Y::String(day.clone()));
        put("source", Y::String(s("source").unwrap_or_else(|| "agent".into())));
        for (k, v) in spec {
            if ["id", "type", "title", "summary", "parent", "body", "created", "updated", "source"]
                .contains(&k.as_str())
                || v.is_null()
            {
                continue;
            }
            put(k, to_yaml(v));
        }
        let body = match s("body").filter(|b| !b.trim().is_empty()) {
            Some(b) => b,
            None if is_branch_id(&id) => index::branch_body(&title, &summary),
            None => format!("# {title}\n\n> {summary}\n"),
        };
        let node = Node { front, body };
        confine_paths(&self.root, &id, &node)?;
        self.check_storage_keys(&id, &node, true)?;
        forest_model::lint::validate_frontmatter(&node, &self.dialect).map_err(|e| {
            let (code, msg) = e.split_once(": ").unwrap_or(("E_FRONTMATTER", &e));
            VineError::new(if code == "E_SCHEMA" { "E_SCHEMA" } else { "E_FRONTMATTER" }, msg.to_string())
        })?;
        let mut pn = parent_node;
        let (heading, cov) =
            if is_branch_id(&id) { (SUB_BRANCHES, Some("0 bananas, 0 sub-branches")) } else { (DIRECT_BANANAS, None) };
        pn.body = upsert_entry(&pn.body, heading, &id, &entry_line(&id, &summary, cov));
        pn.set_str("coverage", &index::coverage_of(&pn.body));
        pn.set_str("updated", &day);
        Ok(Some(vec![(id, node), (parent, pn)]))
    }

    /// `graft(id, patch)`.
    pub fn graft(&mut self, id: &str, patch: &Map<String, Value>) -> VResult<Value> {
        self.writer()?;
        if let Some(k) = patch.keys().find(|k| !PATCH_KEYS.contains(&k.as_str())) {
            return Err(VineError::schema(format!("unknown patch key '{k}'"))
                .hint(format!("A patch takes {}.", PATCH_KEYS.join(", "))));
        }
        let id = norm_id(id);
        let mut node = self.read_node(&id)?;
        if patch.is_empty() {
            return Err(VineError::schema("empty graft patch"));
        }
        let has_body_op = patch.contains_key("append_section") || patch.contains_key("replace_section");
        if patch.contains_key("replace_body") {
            if has_body_op {
                return Err(VineError::schema("replace_body cannot be combined with append_section/replace_section"));
            }
            if is_branch_id(&id) {
                return Err(VineError::schema(format!("'{id}' is an index: its body is the indexer's render")));
            }
        }
        let mut parts: Vec<String> = vec![];
        let mut changed = false;
        let mut summary_changed = false;
        if let Some(sf) = patch.get("set_frontmatter") {
            let sf = sf.as_object().ok_or_else(|| VineError::schema("set_frontmatter must be an object"))?;
            for (k, v) in sf {
                if !MUTABLE.contains(&k.as_str()) {
                    return Err(VineError::new("E_READONLY", format!("frontmatter field '{k}' is immutable"))
                        .hint(format!("Mutable fields: {}.", MUTABLE.join(", "))));
                }
                match k.as_str() {
                    "summary" => {
                        Self::check_summary(v.as_str().unwrap_or_default())?;
                        summary_changed = node.get_str("summary").as_deref() != v.as_str();
                    }
                    "aliases" => {
                        let ok = v.as_array().is_some_and(|a| {
                            a.len() <= 16
                                && a.iter().all(|x| {
                                    x.as_str().is_some_and(|s| !s.trim().is_empty() && s.chars().count() <= 80)
                                })
                        });
                        if !ok {
                            return Err(VineError::schema(
                                "aliases must be a list of at most 16 non-blank strings of <= 80 chars",
                            ));
                        }
                    }
                    "origin" if !v.is_null() => {
                        let o = v.as_str().unwrap_or_default();
                        if o.trim().is_empty() || o.chars().any(char::is_whitespace) || o.len() > 2048 {
                            return Err(VineError::schema("origin must be a URI without whitespace (<= 2048 chars)"));
                        }
                    }
                    _ => {}
                }
                let before = node.front.get(k.as_str()).map(to_json);
                if v.is_null() {
                    node.remove(k);
                } else {
                    node.set(k, to_yaml(v));
                }
                if before.as_ref() != Some(v) {
                    changed = true;
                    parts.push(format!("set {k}"));
                }
            }
        }
        let mut links: Vec<Value> =
            node.front.get("links").map(to_json).and_then(|v| v.as_array().cloned()).unwrap_or_default();
        let mut fortified = vec![];
        if let Some(add) = patch.get("add_links") {
            let add = add.as_array().ok_or_else(|| VineError::schema("add_links must be a list"))?;
            for l in add {
                let rel = l.get("rel").and_then(Value::as_str).unwrap_or_default().to_string();
                let target = l.get("target").and_then(Value::as_str).map(norm_id).unwrap_or_default();
                if !self.dialect.has_rel(&rel) {
                    return Err(VineError::schema(format!("unknown rel '{rel}'")));
                }
                let dup = links
                    .iter()
                    .any(|x| x["rel"].as_str() == Some(rel.as_str()) && x["target"].as_str() == Some(target.as_str()));
                if dup {
                    // Reinforce before create: a known trail gains heat, not a second edge.
                    self.trails.deposit(&[id.clone(), target.clone()], 0.1, forest_catalog::PERSISTENT_SCOPE)?;
                    fortified.push(json!({"rel": rel, "target": target}));
                    continue;
                }
                let mut m = l.as_object().cloned().unwrap_or_default();
                m.insert("target".into(), json!(target));
                if rel == "discovered-shortcut" {
                    m.entry("confidence").or_insert(json!(0.5));
                    m.entry("discovered_by").or_insert(json!("agent"));
                }
                links.push(Value::Object(m));
                changed = true;
                parts.push(format!("link {rel} {target}"));
            }
        }
        if let Some(rm) = patch.get("remove_links").and_then(Value::as_array) {
            for l in rm {
                let before = links.len();
                links.retain(|x| !(x["rel"] == l["rel"] && x["target"] == l["target"]));
                if links.len() != before {
                    changed = true;
                    parts.push(format!(
                        "unlink {} {}",
                        l["rel"].as_str().unwrap_or(""),
                        l["target"].as_str().unwrap_or("")
                    ));
                }
            }
        }
        if links.len() > forest_model::schema::MAX_LINKS {
            return Err(VineError::schema(format!("node would have {} links (max 50)", links.len())));
        }
        if links.is_empty() {
            node.remove("links");
        } else {
            node.set("links", to_yaml(&Value::Array(links)));
        }
        let mut body_changed = false;
        if let Some(b) = patch.get("replace_body") {
            node.body = b.as_str().ok_or_else(|| VineError::schema("replace_body must be a string"))?.to_string();
            body_changed = true;
            parts.push("replace body".into());
        }
        if let Some(rs) = patch.get("replace_section") {
            let header = rs.get("header").and_then(Value::as_str).unwrap_or_default();
            let content = rs.get("content").and_then(Value::as_str).unwrap_or_default();
            node.body = replace_md_section(&node.body, header, content).ok_or_else(|| {
                VineError::not_found(format!("section '{header}' not found in {id}"))
                    .hint("Use append_section to add it.")
            })?;
            body_changed = true;
            parts.push(format!("replace section {header}"));
        }
        if let Some(asx) = patch.get("append_section") {
            let header = asx.get("header").and_then(Value::as_str).unwrap_or_default();
            let content = asx.get("content").and_then(Value::as_str).unwrap_or_default();
            node.body = format!("{}\n\n## {header}\n\n{}\n", node.body.trim_end(), content.trim());
            body_changed = true;
            parts.push(format!("append section {header}"));
        }
        let trail = ids::trail(&id);
        if !changed && !body_changed {
            return Ok(json!({"id": id, "commit": null, "fortified": fortified, "trail": trail}));
        }
        node.set_str("updated", &today());
        confine_paths(&self.root, &id, &node)?;
        forest_model::lint::validate_frontmatter(&node, &self.dialect)
            .map_err(|e| VineError::new("E_FRONTMATTER", e.trim_start_matches("E_FRONTMATTER: ").to_string()))?;
        let mut writes = vec![(id.clone(), node.clone())];
        if summary_changed {
            if let Some(p) = parent_index(&id) {
                if let Ok(mut pn) = self.read_node(&p) {
                    let heading = if is_branch_id(&id) { SUB_BRANCHES } else { DIRECT_BANANAS };
                    let cov = node.get_str("coverage");
                    pn.body = upsert_entry(
                        &pn.body,
                        heading,
                        &id,
                        &entry_line(&id, &node.get_str("summary").unwrap_or_default(), cov.as_deref()),
                    );
                    writes.push((p, pn));
                }
            }
        }
        let commit = self.commit_nodes(&writes, &[], &format!("graft({id}): {}", parts.join(", ")))?;
        let mut out = json!({"id": id, "commit": commit, "fortified": fortified, "trail": trail});
        let summary_set = patch.get("set_frontmatter").and_then(|s| s.get("summary")).is_some();
        if body_changed && !summary_set {
            out["summary_stale"] = json!(true);
        }
        Ok(out)
    }

    /// `prune(id, force)`.
    pub fn prune(&mut self, id: &str, force: bool) -> VResult<Value> {
        self.writer()?;
        let row = self.row(id)?;
        let id = row.id.clone();
        if id == "_index" {
            return Err(VineError::schema("the forest root cannot be pruned"));
        }
        if is_meta(&id) {
            return Err(VineError::schema(format!("'{id}' is a system node")));
        }
        let kids: i64 =
            self.catalog.connection().query_row("SELECT COUNT(*) FROM nodes WHERE parent = ?1", [&id], |r| r.get(0))?;
        if kids > 0 {
            return Err(VineError::new("E_ANCHORED", format!("branch has {kids} children; prune them first")));
        }
        let anchors: Vec<_> = self.catalog.edges_in(&id)?.into_iter().filter(|e| e.src != id).collect();
        if !anchors.is_empty() && !force {
            let list: Vec<Value> = anchors.iter().take(20).map(|e| json!({"source": e.src, "rel": e.rel})).collect();
            return Err(VineError::new("E_ANCHORED", format!("{} node(s) point at {id}", anchors.len()))
                .hint("Pass force=true to remove those links with the node.")
                .with("anchors", json!(list))
                .with("anchor_count", json!(anchors.len())));
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
        let mut payload_moved = Value::Null;
        let mut moved: Option<(std::path::PathBuf, std::path::PathBuf)> = None;
        if let Some(p) = row.payload.as_ref().filter(|p| !p.contains("://")) {
            let src = self.root.join(ids::folder_of(&id)).join(p);
            if src.is_file() {
                let rel = format!("_derived/graveyard/{id}/{p}");
                let dst = self.root.join(&rel);
                if let Some(d) = dst.parent() {
                    std::fs::create_dir_all(d)?;
                }
                std::fs::rename(&src, &dst)?;
                payload_moved = json!(rel);
                moved = Some((src, dst));
            }
        }
        let commit = match self.commit_nodes(&writes, std::slice::from_ref(&id), &format!("prune({id})")) {
            Ok(c) => c,
            Err(e) => {
                if let Some((src, dst)) = moved {
                    let _ = std::fs::rename(dst, src);
                }
                return Err(e);
            }
        };
        if is_branch_id(&id) {
            let _ = std::fs::remove_dir(self.root.join(ids::folder_of(&id)));
        }
        Ok(
            json!({"id": id, "pruned": true, "backlinks_removed": removed, "payload_moved": payload_moved, "commit": commit}),
        )
    }

    /// `transplant(id, new_id)`.
    pub fn transplant(&mut self, id: &str, new_id: &str) -> VResult<Value> {
        self.writer()?;
        let row = self.row(id)?;
        let old = row.id.clone();
        let new = norm_id(new_id);
        if new.is_empty() {
            return Err(VineError::schema("new_id must not be empty"));
        }
        if new == old {
            return Err(VineError::schema("new_id equals the current id"));
        }
        if is_branch_id(&old) {
            return Err(VineError::schema(format!("'{old}' is a branch: branches do not transplant")));
        }
        if is_meta(&old) || is_meta(&new) {
            return Err(VineError::schema("'_meta/' is the dialect, not content"));
        }
        if is_branch_id(&new) {
            return Err(VineError::schema(format!("'{new}' is an index address")));
        }
        if self.node_path(&new)?.is_file() {
            return Err(VineError::schema(format!("id already exists: {new}")));
        }
        let new_parent = parent_index(&new).unwrap_or_default();
        if !self.node_path(&new_parent)?.is_file() {
            return Err(VineError::not_found(format!("parent branch not found: {new_parent}")));
        }
        let mut node = self.read_node(&old)?;
        // A scoped writer may not move a reference away from its source's
        // folder, nor a payload out of its branches.
        self.check_storage_keys(&new, &node, false)?;
        node.set_str("id", &new);
        node.set_str("updated", &today());
        let mut mf = node.get_list("moved_from");
        if !mf.contains(&old) {
            mf.push(old.clone());
        }
        node.set_list("moved_from", &mf);
        let mut aliases = node.get_list("aliases");
        let mut alias_clipped = false;
        if !aliases.contains(&old) {
            if aliases.len() < 16 {
                aliases.push(old.clone());
                node.set_list("aliases", &aliases);
            } else {
                alias_clipped = true;
            }
        }
        let summary = node.get_str("summary").unwrap_or_default();
        let mut writes: Vec<(String, Node)> = vec![(new.clone(), node)];
        let mut rewritten = 0usize;
        let mut sources: Vec<String> =
            self.catalog.edges_in(&old)?.into_iter().map(|e| e.src).filter(|s| *s != old).collect();
        sources.dedup();
        for s in sources {
            let Ok(mut n) = self.read_node(&s) else { continue };
            let mut links = n.front.get("links").map(to_json).and_then(|v| v.as_array().cloned()).unwrap_or_default();
            for l in links.iter_mut() {
                if l["target"].as_str() == Some(old.as_str()) {
                    l["target"] = json!(new);
                    rewritten += 1;
                }
            }
            n.set("links", to_yaml(&Value::Array(links)));
            n.set_str("updated", &today());
            writes.push((s, n));
        }
        let old_parent = parent_index(&old).unwrap_or_default();
        let edit_index = |vine: &Vine, p: &str, f: &dyn Fn(&str) -> String, writes: &mut Vec<(String, Node)>| {
            let existing = writes.iter().position(|(i, _)| i == p);
            let base = match existing {
                Some(i) => Some(writes[i].1.clone()),
                None => vine.read_node(p).ok(),
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
        };
        let o = old.clone();
        edit_index(self, &old_parent, &|b| index::remove_entry(b, &o).0, &mut writes);
        let (n2, s2) = (new.clone(), summary.clone());
        edit_index(
            self,
            &new_parent,
            &|b| upsert_entry(b, DIRECT_BANANAS, &n2, &entry_line(&n2, &s2, None)),
            &mut writes,
        );
        let mut moved = None;
        if let Some(p) = row.payload.as_ref().filter(|p| !p.contains("://")) {
            let src = self.root.join(ids::folder_of(&old)).join(p);
            let dst = self.root.join(ids::folder_of(&new)).join(p);
            if src.is_file() && src != dst {
                std::fs::rename(&src, &dst)?;
                moved = Some((src, dst));
            }
        }
        let commit =
            match self.commit_nodes(&writes, std::slice::from_ref(&old), &format!("transplant({old} -> {new})")) {
                Ok(c) => c,
                Err(e) => {
                    if let Some((s, d)) = moved {
                        let _ = std::fs::rename(d, s);
                    }
                    return Err(e);
                }
            };
        let _ = self.trails.rekey(&old, &new);
        let mut out = json!({"id": new, "moved_from": old, "backlinks_rewritten": rewritten, "commit": commit, "trail": ids::trail(&new)});
        if alias_clipped {
            out["alias_clipped"] = json!(true);
        }
        Ok(out)
    }
}

fn prefix(e: VineError, batch: bool, id: &str) -> VineError {
    if batch {
        VineError { message: format!("{id}: {}", e.message), ..e }
    } else {
        e
    }
}

/// Replace the content under a `#…` header (kept), up to the next header
/// of the same or higher level. `None` when the header is absent.
fn replace_md_section(body: &str, header: &str, content: &str) -> Option<String> {
    let lines: Vec<&str> = body.split('\n').collect();
    let want = header.trim().trim_start_matches('#').trim().to_lowercase();
    let (start, level) = lines.iter().enumerate().find_map(|(i, l)| {
        let h = l.chars().take_while(|c| *c == '#').count();
        ((1..=6).contains(&h) && l[h..].trim().to_lowercase() == want).then_some((i, h))
    })?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| {
            let h = l.chars().take_while(|c| *c == '#').count();
            (1..=level).contains(&h) && l[h..].starts_with(' ')
        })
        .map(|p| start + 1 + p)
        .unwrap_or(lines.len());
    let mut out: Vec<String> = lines[..=start].iter().map(|s| s.to_string()).collect();
    out.push(String::new());
    out.push(content.trim().to_string());
    if end < lines.len() {
        out.push(String::new());
        out.extend(lines[end..].iter().map(|s| s.to_string()));
    }
    Some(out.join("\n"))
}
