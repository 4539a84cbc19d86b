//! The writes (vine spec §2.13–§2.17): `plant`, `graft`, `prune`,
//! `transplant`. Each is ONE git commit through forest-git (which also
//! brings the work tree to the new HEAD) or nothing; the engine holds the
//! writer lock for its whole life. Catalog rows follow the commit.

use crate::answers::{PlantAnswer, PlantChecked, PlantCheckedBatch, Planted, PlantedBatch};
use forest_git::Change;
use forest_model::ids::{self, is_branch_id, parent_index};
use forest_model::index::{self, entry_line, upsert_entry, DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::{today, Node};
use forest_model::scent::validate_summary;
use forest_model::yaml::{Mapping, Value as Y};
use forest_model::ErrorCode;
use serde_json::Value;

use crate::args::NodeSpecs;
use crate::engine::{norm_id, Vine};
use crate::error::{VResult, VineError};
use crate::specs::NodeSpec;
use crate::yamljson::to_yaml;

/// Nodes per plant batch.
pub const PLANT_BATCH_CAP: usize = 20;
/// `E_FORBIDDEN` when a node's `payload` leads outside the forest and its
/// sources, or its `source_path` outside its source root (refused at
/// write time, so nothing unsafe is ever recorded).
pub(crate) fn confine_paths(root: &std::path::Path, id: &str, node: &Node) -> VResult<()> {
    if let Some(p) = node.get_str("payload").filter(|p| !p.is_empty()) {
        forest_derived::tiers::check_payload(root, id, &p).map_err(|e| {
            VineError::new(e.code(), forest_model::error_chain(&e).trim_start_matches("E_FORBIDDEN: ").to_string())
                .hint("Payloads are files beside the node, inside the forest, or URIs inside a configured source.")
        })?;
    }
    if let Some(sp) = node.get_str("source_path") {
        if sp.starts_with('/') || sp.contains('\0') || sp.split(['/', '\\']).any(|c| c == "..") {
            return Err(VineError::new(
                ErrorCode::Forbidden,
                format!("{id}: source_path '{sp}' leaves its source root"),
            ));
        }
    }
    Ok(())
}

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
                tracing::warn!(event = "canopy.stale", code = e.code(), error = %forest_model::error_chain(&e));
            }
        }
        Ok(oid.map(|o| o.to_string()))
    }

    pub(crate) fn check_summary(summary: &str) -> VResult<()> {
        validate_summary(summary).map_err(|e| {
            VineError::new(ErrorCode::Frontmatter, e.message()).hint(format!("{} (60 tokens at most)", e.hint()))
        })
    }

    /// `plant(node | [nodes], if_absent, dry_run)` from JSON (an object or
    /// a list of objects).
    pub fn plant(&mut self, node: &Value, if_absent: bool, dry_run: bool) -> VResult<PlantAnswer> {
        self.writer()?;
        let spec = |v: &Value| {
            if !v.is_object() {
                return Err(VineError::schema("plant: every node must be an object"));
            }
            serde_json::from_value::<NodeSpec>(v.clone()).map_err(|e| VineError::schema(format!("plant: {e}")))
        };
        let specs = match node {
            Value::Object(_) => NodeSpecs::One(Box::new(spec(node)?)),
            Value::Array(a) => NodeSpecs::Many(a.iter().map(spec).collect::<VResult<_>>()?),
            _ => return Err(VineError::schema("plant: node must be an object or a list of objects")),
        };
        self.plant_specs(&specs, if_absent, dry_run)
    }

    /// `plant` of typed node specs.
    pub fn plant_specs(&mut self, node: &NodeSpecs, if_absent: bool, dry_run: bool) -> VResult<PlantAnswer> {
        self.writer()?;
        let (specs, batch): (&[NodeSpec], bool) = match node {
            NodeSpecs::One(m) => (std::slice::from_ref(&**m), false),
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
        let plan = self.plan_batch(specs, batch, if_absent, dry_run)?;
        if dry_run {
            return plan.dry_run_answer(batch, specs.len());
        }
        if plan.created.is_empty() {
            let existing = plan.existing;
            return Ok(if batch {
                PlantAnswer::Batch(PlantedBatch { created: vec![], existing, count: 0, commit: None })
            } else {
                let trail = existing.first().map(|i| ids::trail(i));
                PlantAnswer::One(Planted { id: existing.into_iter().next(), created: false, commit: None, trail })
            });
        }
        let msg = if batch {
            format!("plant(batch): {} nodes", plan.created.len())
        } else {
            let s = &specs[0];
            format!(
                "plant({}): {} [source={}]",
                plan.created[0],
                s.title.as_deref().unwrap_or_default(),
                s.source.as_deref().unwrap_or("agent")
            )
        };
        let commit = self.commit_nodes(&plan.planned, &[], &msg)?;
        let (created, existing) = (plan.created, plan.existing);
        Ok(if batch {
            PlantAnswer::Batch(PlantedBatch { count: created.len(), created, existing, commit })
        } else {
            let trail = Some(ids::trail(&created[0]));
            PlantAnswer::One(Planted { id: created.into_iter().next(), created: true, commit, trail })
        })
    }

    /// Plan every node of a plant call in order (a later node may hang
    /// under an earlier one). A dry run collects the refusals; a real run
    /// stops at the first.
    fn plan_batch(&mut self, specs: &[NodeSpec], batch: bool, if_absent: bool, dry_run: bool) -> VResult<PlantPlan> {
        let mut plan = PlantPlan::default();
        let mut seen = std::collections::HashSet::new();
        for (i, spec) in specs.iter().enumerate() {
            let id = spec.id.as_deref().map(norm_id).unwrap_or_default();
            if batch && !seen.insert(id.clone()) {
                return Err(VineError::schema(format!("duplicate id in batch: {id}")));
            }
            let refusal = match self.plan_plant(spec, &plan.planned) {
                Ok(Some(writes)) => {
                    plan.created.push(id);
                    for (wid, n) in writes {
                        match plan.planned.iter_mut().find(|(p, _)| *p == wid) {
                            Some(slot) => slot.1 = n,
                            None => plan.planned.push((wid, n)),
                        }
                    }
                    continue;
                }
                Ok(None) if if_absent => {
                    plan.existing.push(id);
                    continue;
                }
                Ok(None) => VineError::schema(format!("id already exists: {id}")).hint("ids are immutable and unique."),
                Err(e) => e,
            };
            if !dry_run {
                return Err(prefix(refusal, batch, &id));
            }
            plan.errors.push(SpecRefusal { index: i, id, code: refusal.code, message: refusal.message });
        }
        Ok(plan)
    }

    /// The writes of one node: its file and its (updated) parent index.
    /// `Ok(None)` when the id is taken.
    fn plan_plant(&mut self, spec: &NodeSpec, planned: &[(String, Node)]) -> VResult<Option<Vec<(String, Node)>>> {
        let required = [
            ("id", &spec.id),
            ("type", &spec.node_type),
            ("title", &spec.title),
            ("summary", &spec.summary),
            ("parent", &spec.parent),
        ];
        for (k, v) in required {
            if v.as_deref().is_none_or(|v| v.trim().is_empty()) {
                return Err(VineError::schema(format!("plant: node.{k} is required (a non-empty string)")));
            }
        }
        let id = norm_id(spec.id.as_deref().unwrap_or_default());
        let parent = norm_id(spec.parent.as_deref().unwrap_or_default());
        let path = self.node_path(&id)?;
        if path.is_file() || planned.iter().any(|(p, _)| *p == id) {
            return Ok(None);
        }
        self.check_spec(spec)?;
        let parent_node = self.parent_of(&id, &parent, planned)?;
        if let Some(links) = spec.extra.get("links").and_then(Value::as_array) {
            for l in links {
                let rel = l.get("rel").and_then(Value::as_str).unwrap_or_default();
                if !self.dialect.has_rel(rel) {
                    return Err(VineError::schema(format!("unknown rel '{rel}'")));
                }
            }
        }
        let node = new_node(spec, &id);
        confine_paths(&self.root, &id, &node)?;
        self.check_storage_keys(&id, &node, true)?;
        forest_model::lint::validate_frontmatter(&node, &self.dialect)
            .map_err(|e| VineError::new(e.code(), e.message().to_string()))?;
        let mut pn = parent_node;
        let (heading, cov) =
            if is_branch_id(&id) { (SUB_BRANCHES, Some("0 bananas, 0 sub-branches")) } else { (DIRECT_BANANAS, None) };
        let summary = spec.summary.clone().unwrap_or_default();
        pn.body = upsert_entry(&pn.body, heading, &id, &entry_line(&id, &summary, cov));
        pn.set_str("coverage", &index::coverage_of(&pn.body));
        pn.set_str("updated", &node.get_str("created").unwrap_or_default());
        Ok(Some(vec![(id, node), (parent, pn)]))
    }

    /// The refusals a node spec meets before its parent is read: keys
    /// only transplant or adopt write, an unknown type, a long summary.
    fn check_spec(&self, spec: &NodeSpec) -> VResult<()> {
        if spec.extra.contains_key("moved_from") {
            return Err(
                VineError::schema("moved_from is written by transplant").hint("Use transplant() to move a node.")
            );
        }
        if spec.extra.contains_key("schema") || spec.extra.contains_key("rows") {
            return Err(VineError::schema("dataset birth (schema/rows) is not supported by forest's engine yet")
                .hint("Adopt the data with `forest adopt` instead."));
        }
        let ty = spec.node_type.as_deref().unwrap_or_default();
        if !self.dialect.has_type(ty) {
            return Err(VineError::schema(format!("unknown node type '{ty}'"))
                .hint("pick('_meta/schema') lists this forest's types."));
        }
        Self::check_summary(spec.summary.as_deref().unwrap_or_default())?;
        Ok(())
    }

    /// The parent index a new node goes under (planned earlier in the
    /// batch, or on disk), refused unless it is the branch the id names.
    fn parent_of(&self, id: &str, parent: &str, planned: &[(String, Node)]) -> VResult<Node> {
        let expected = parent_index(id).unwrap_or_default();
        let parent_node = match planned.iter().find(|(p, _)| *p == parent) {
            Some((_, n)) => n.clone(),
            None => {
                let pp = self.node_path(parent)?;
                if !pp.is_file() {
                    return Err(VineError::not_found(format!("parent branch not found: {parent}")));
                }
                self.read_node(parent)?
            }
        };
        if !is_branch_id(parent) {
            return Err(VineError::not_found(format!("parent branch not found: {parent}")));
        }
        if parent != expected {
            return Err(VineError::schema(format!(
                "id '{id}' does not live under parent '{parent}' (expected parent: {expected})"
            )));
        }
        Ok(parent_node)
    }
}

/// What a plant call plans: the writes, the ids it creates or finds, and
/// (a dry run) the refusals of each node.
#[derive(Default)]
struct PlantPlan {
    planned: Vec<(String, Node)>,
    created: Vec<String>,
    existing: Vec<String>,
    errors: Vec<SpecRefusal>,
}

/// One node a dry run refuses, as its `errors` list names it.
#[derive(serde::Serialize)]
struct SpecRefusal {
    index: usize,
    id: String,
    code: ErrorCode,
    message: String,
}

impl PlantPlan {
    /// A dry run's answer: valid, or the first refusal with all of them.
    fn dry_run_answer(&self, batch: bool, count: usize) -> VResult<PlantAnswer> {
        if let Some(first) = self.errors.first() {
            let code = match first.code {
                c @ (ErrorCode::Frontmatter | ErrorCode::NotFound) => c,
                _ => ErrorCode::Schema,
            };
            return Err(VineError::new(code, first.message.clone()).with("errors", &self.errors));
        }
        Ok(if batch {
            PlantAnswer::CheckedBatch(PlantCheckedBatch { valid: true, count, dry_run: true })
        } else {
            let id = self.created.first().or(self.existing.first()).cloned();
            PlantAnswer::Checked(PlantChecked { id, valid: true, dry_run: true })
        })
    }
}

/// The node a spec describes: the required keys first, dated today, the
/// other keys of the spec as frontmatter, its body (or a default one).
fn new_node(spec: &NodeSpec, id: &str) -> Node {
    let title = spec.title.clone().unwrap_or_default();
    let summary = spec.summary.clone().unwrap_or_default();
    let day = today();
    let mut front = Mapping::new();
    let mut put = |k: &str, v: Y| {
        front.insert(Y::String(k.into()), v);
    };
    put("id", Y::String(id.to_string()));
    put("type", Y::String(spec.node_type.clone().unwrap_or_default()));
    put("title", Y::String(title.clone()));
    put("summary", Y::String(summary.clone()));
    put("created", Y::String(day.clone()));
    put("updated", Y::String(day));
    put("source", Y::String(spec.source.clone().unwrap_or_else(|| "agent".into())));
    for (k, v) in &spec.extra {
        if ["created", "updated"].contains(&k.as_str()) || v.is_null() {
            continue;
        }
        put(k, to_yaml(v));
    }
    let body = match spec.body.clone().filter(|b| !b.trim().is_empty()) {
        Some(b) => b,
        None if is_branch_id(id) => index::branch_body(&title, &summary),
        None => format!("# {title}\n\n> {summary}\n"),
    };
    Node { front, body }
}

fn prefix(e: VineError, batch: bool, id: &str) -> VineError {
    if batch {
        VineError { message: format!("{id}: {}", e.message), ..e }
    } else {
        e
    }
}
