//! `graft` (vine spec §2.14): a patch of one node in one commit —
//! frontmatter, links (a link already there gains heat instead), and the
//! body (a section appended or replaced, or the whole body).
//!
//! In: a node id and a patch object. Out: the commit (or none when nothing
//! changed), the links fortified. Touches the node's file, its parent
//! index when the summary changes, git, the catalog and the trails.

use crate::answers::{Grafted, LinkRef};
use forest_model::ids::{self, is_branch_id, parent_index};
use forest_model::index::{entry_line, upsert_entry, DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::{today, Node};
use forest_model::ErrorCode;
use indexmap::IndexMap;
use serde_json::Value;

use crate::engine::{norm_id, Vine};
use crate::error::{VResult, VineError};
use crate::specs::{FieldName, FrontmatterSet, GraftPatch, LinkSpec, SectionPatch, Shaped};
use crate::write::confine_paths;
use crate::yamljson::{to_json, to_yaml};

const PATCH_KEYS: [&str; 6] =
    ["set_frontmatter", "add_links", "remove_links", "append_section", "replace_section", "replace_body"];

/// What a patch changed so far, and the commit message parts.
#[derive(Default)]
struct Graft {
    parts: Vec<String>,
    changed: bool,
    summary_changed: bool,
    body_changed: bool,
    fortified: Vec<LinkRef>,
}

impl Vine {
    /// `graft(id, patch)`.
    pub fn graft(&mut self, id: &str, patch: &GraftPatch) -> VResult<Grafted> {
        self.writer()?;
        if let Some(k) = patch.unknown.keys().next() {
            return Err(VineError::schema(format!("unknown patch key '{k}'"))
                .hint(format!("A patch takes {}.", PATCH_KEYS.join(", "))));
        }
        let id = norm_id(id);
        let mut node = self.read_node(&id)?;
        check_patch(&id, patch)?;
        let mut g = Graft::default();
        let mut summary_set = false;
        if let Some(sf) = &patch.set_frontmatter {
            let Shaped::Ok(sf) = sf else { return Err(VineError::schema("set_frontmatter must be an object")) };
            set_frontmatter(&mut node, sf, &mut g)?;
            summary_set = sf.get(&FieldName::Summary).is_some();
        }
        self.graft_links(&id, &mut node, patch, &mut g)?;
        graft_body(&id, &mut node, patch, &mut g)?;
        let trail = ids::trail(&id);
        if !g.changed && !g.body_changed {
            return Ok(Grafted { id, commit: None, fortified: g.fortified, trail, summary_stale: false });
        }
        node.set_str("updated", &today());
        confine_paths(&self.root, &id, &node)?;
        forest_model::lint::validate_frontmatter(&node, &self.dialect)
            .map_err(|e| VineError::new(ErrorCode::Frontmatter, e.message().to_string()))?;
        let mut writes = vec![(id.clone(), node.clone())];
        if g.summary_changed {
            writes.extend(self.reindexed_parent(&id, &node));
        }
        let commit = self.commit_nodes(&writes, &[], &format!("graft({id}): {}", g.parts.join(", ")))?;
        Ok(Grafted { id, commit, fortified: g.fortified, trail, summary_stale: g.body_changed && !summary_set })
    }

    /// `add_links` (a known link gains heat instead of a twin) and
    /// `remove_links`; the node keeps at most `MAX_LINKS`.
    fn graft_links(&mut self, id: &str, node: &mut Node, patch: &GraftPatch, g: &mut Graft) -> VResult<()> {
        let mut links: Vec<Value> =
            node.front.get("links").map(to_json).and_then(|v| v.as_array().cloned()).unwrap_or_default();
        if let Some(add) = &patch.add_links {
            let Shaped::Ok(add) = add else { return Err(VineError::schema("add_links must be a list")) };
            for l in add {
                self.add_link(id, &mut links, l, g)?;
            }
        }
        if let Some(Shaped::Ok(remove)) = &patch.remove_links {
            for l in remove {
                let before = links.len();
                links.retain(|x| {
                    !(x["rel"].as_str() == l.rel.as_deref() && x["target"].as_str() == l.target.as_deref())
                });
                if links.len() != before {
                    g.changed = true;
                    let (rel, target) = (l.rel.as_deref().unwrap_or(""), l.target.as_deref().unwrap_or(""));
                    g.parts.push(format!("unlink {rel} {target}"));
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
        Ok(())
    }

    /// One link of `add_links`: refused for an unknown rel, fortified when
    /// the node has it already, else appended (a discovered shortcut with
    /// its default confidence and author).
    fn add_link(&mut self, id: &str, links: &mut Vec<Value>, l: &LinkSpec, g: &mut Graft) -> VResult<()> {
        let rel = l.rel.clone().unwrap_or_default();
        let target = l.target.as_deref().map(norm_id).unwrap_or_default();
        if !self.dialect.has_rel(&rel) {
            return Err(VineError::schema(format!("unknown rel '{rel}'")));
        }
        let dup = links
            .iter()
            .any(|x| x["rel"].as_str() == Some(rel.as_str()) && x["target"].as_str() == Some(target.as_str()));
        if dup {
            // Reinforce before create: a known trail gains heat, not a second edge.
            self.trails.deposit(&[id.to_string(), target.clone()], 0.1, forest_catalog::PERSISTENT_SCOPE)?;
            g.fortified.push(LinkRef { rel, target });
            return Ok(());
        }
        let mut m: IndexMap<String, Value> =
            [("rel".to_string(), Value::String(rel.clone())), ("target".to_string(), Value::String(target.clone()))]
                .into_iter()
                .chain(l.extra.iter().map(|(k, v)| (k.clone(), v.clone())))
                .collect();
        if rel == "discovered-shortcut" {
            m.entry("confidence".into()).or_insert(Value::from(0.5));
            m.entry("discovered_by".into()).or_insert(Value::from("agent"));
        }
        links.push(Value::Object(m.into_iter().collect()));
        g.changed = true;
        g.parts.push(format!("link {rel} {target}"));
        Ok(())
    }

    /// The parent index with this node's entry carrying its new summary
    /// (none when the node has no readable parent).
    fn reindexed_parent(&self, id: &str, node: &Node) -> Option<(String, Node)> {
        let p = parent_index(id)?;
        let mut pn = self.read_node(&p).ok()?;
        let heading = if is_branch_id(id) { SUB_BRANCHES } else { DIRECT_BANANAS };
        let cov = node.get_str("coverage");
        let line = entry_line(id, &node.get_str("summary").unwrap_or_default(), cov.as_deref());
        pn.body = upsert_entry(&pn.body, heading, id, &line);
        Some((p, pn))
    }
}

/// Refusals of the patch as a whole: empty, or `replace_body` where it
/// cannot go.
fn check_patch(id: &str, patch: &GraftPatch) -> VResult<()> {
    if patch.is_empty() {
        return Err(VineError::schema("empty graft patch"));
    }
    let has_body_op = patch.append_section.is_some() || patch.replace_section.is_some();
    if patch.replace_body.is_some() {
        if has_body_op {
            return Err(VineError::schema("replace_body cannot be combined with append_section/replace_section"));
        }
        if is_branch_id(id) {
            return Err(VineError::schema(format!("'{id}' is an index: its body is the indexer's render")));
        }
    }
    Ok(())
}

/// `set_frontmatter`: only the mutable fields, each checked; null removes.
fn set_frontmatter(node: &mut Node, sf: &FrontmatterSet, g: &mut Graft) -> VResult<()> {
    for (field, v) in &sf.0 {
        if let FieldName::Immutable(k) = field {
            let mutable: Vec<&str> = FieldName::MUTABLE.iter().map(FieldName::as_str).collect();
            return Err(VineError::new(ErrorCode::Readonly, format!("frontmatter field '{k}' is immutable"))
                .hint(format!("Mutable fields: {}.", mutable.join(", "))));
        }
        check_field(field, v)?;
        let k = field.as_str();
        if *field == FieldName::Summary {
            g.summary_changed = node.get_str("summary").as_deref() != v.as_str();
        }
        let before = node.front.get(k).map(to_json);
        if v.is_null() {
            node.remove(k);
        } else {
            node.set(k, to_yaml(v));
        }
        if before.as_ref() != Some(v) {
            g.changed = true;
            g.parts.push(format!("set {k}"));
        }
    }
    Ok(())
}

/// The checks of one mutable field's new value.
fn check_field(k: &FieldName, v: &Value) -> VResult<()> {
    match k {
        FieldName::Summary => Vine::check_summary(v.as_str().unwrap_or_default())?,
        FieldName::Aliases => {
            let ok = v.as_array().is_some_and(|a| {
                a.len() <= 16
                    && a.iter().all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty() && s.chars().count() <= 80))
            });
            if !ok {
                return Err(VineError::schema("aliases must be a list of at most 16 non-blank strings of <= 80 chars"));
            }
        }
        FieldName::Origin if !v.is_null() => {
            let o = v.as_str().unwrap_or_default();
            if o.trim().is_empty() || o.chars().any(char::is_whitespace) || o.len() > 2048 {
                return Err(VineError::schema("origin must be a URI without whitespace (<= 2048 chars)"));
            }
        }
        _ => {}
    }
    Ok(())
}

/// `replace_body`, `replace_section`, `append_section`, in that order.
fn graft_body(id: &str, node: &mut Node, patch: &GraftPatch, g: &mut Graft) -> VResult<()> {
    if let Some(b) = &patch.replace_body {
        let Shaped::Ok(b) = b else { return Err(VineError::schema("replace_body must be a string")) };
        node.body = b.clone();
        g.body_changed = true;
        g.parts.push("replace body".into());
    }
    if let Some(SectionPatch { header, content }) = &patch.replace_section {
        node.body = replace_md_section(&node.body, header, content).ok_or_else(|| {
            VineError::not_found(format!("section '{header}' not found in {id}")).hint("Use append_section to add it.")
        })?;
        g.body_changed = true;
        g.parts.push(format!("replace section {header}"));
    }
    if let Some(SectionPatch { header, content }) = &patch.append_section {
        node.body = format!("{}\n\n## {header}\n\n{}\n", node.body.trim_end(), content.trim());
        g.body_changed = true;
        g.parts.push(format!("append section {header}"));
    }
    Ok(())
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
