//! Plan stage: turn one batch of reconciled [`Work`] plus its conversions
//! into pending writes ([`Batch`]): ids, the branch chain, `_index.md`
//! entries, FLESH/BONE policies, moves and stale marks.
//!
//! In: [`Work`] items, [`Converted`] files, the catalog (read-only, for
//! backlinks of moved nodes). Out: a [`Batch`] (nodes to write, deletes,
//! staged payloads, manifest rows, drafts for the curate stage). Touches:
//! reads passports; writes only staged payload files and cached bodies
//! (regenerable), never a tracked file: that is the commit stage's job.

mod leaf;
mod moves;
pub(crate) mod payload;

use crate::entry::Draft;
use crate::pipeline::SourceRun;
use crate::reconcile::{self, ManifestEntry};
use crate::stages::convert::Converted;
use crate::stages::text::coverage_suffix;
use forest_catalog::Catalog;
use forest_model::ids;
use forest_model::index::{self, entry_line, DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::Node;
use forest_model::slug::{slugify, title_from_stem};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// A unit of work inside a source run, in path order.
pub(crate) enum Work {
    /// A new file to plant.
    Plant(String),
    /// A changed file (rel, id).
    Update(String, String),
    /// A move (vanished path paired with a new one).
    Transplant(reconcile::Move),
    /// A vanished path to mark stale.
    MarkStale(String, ManifestEntry),
}

impl Work {
    /// The source path this work is ordered by.
    pub(crate) fn rel(&self) -> &str {
        match self {
            Work::Plant(r) | Work::Update(r, _) => r,
            Work::Transplant(m) => &m.to_rel,
            Work::MarkStale(r, _) => r,
        }
    }
}

/// Pending writes of one batch (one commit).
#[derive(Default)]
pub(crate) struct Batch {
    pub(crate) deletes: BTreeSet<String>,
    /// Parsed nodes touched in this batch (branches and leaves), by id.
    pub(crate) nodes: HashMap<String, Node>,
    pub(crate) dirty: BTreeSet<String>,
    pub(crate) removed_ids: Vec<String>,
    /// Staged payload files: (staged, final).
    pub(crate) renames: Vec<(PathBuf, PathBuf)>,
    /// Archived copies replaced by this batch, deleted after the commit.
    pub(crate) retired: Vec<PathBuf>,
    pub(crate) manifest_up: Vec<(String, ManifestEntry)>,
    pub(crate) manifest_del: Vec<String>,
    pub(crate) rekeys: Vec<(String, String)>,
    /// Drafts waiting for the curate stage (new nodes, and changed nodes
    /// whose scent was machine-written).
    pub(crate) curation: Vec<Draft>,
    /// Links a re-curated draft already had (kept as written; only links
    /// after them are proposals), by id.
    pub(crate) curation_existing: HashMap<String, usize>,
    pub(crate) planted: usize,
    pub(crate) updated: usize,
    pub(crate) moved: usize,
    pub(crate) stale: usize,
    pub(crate) ids: Vec<String>,
}

impl SourceRun<'_> {
    /// Id prefix for a source-relative folder path.
    pub(crate) fn folder_prefix(&self, rel_dir: &str) -> String {
        let mut parts: Vec<String> = vec![];
        if let Some(d) = &self.src.dest {
            parts.push(d.clone());
        }
        for comp in rel_dir.split('/').filter(|c| !c.is_empty()) {
            parts.push(slugify(comp));
        }
        parts.join("/")
    }

    pub(crate) fn exists(&self, id: &str, batch: &Batch) -> bool {
        if batch.nodes.contains_key(id) || self.taken.contains(id) {
            return !batch.removed_ids.iter().any(|r| r == id);
        }
        if batch.removed_ids.iter().any(|r| r == id) {
            return false;
        }
        self.forest.join(ids::id_to_path(id)).exists()
    }

    pub(crate) fn load(&self, id: &str, batch: &mut Batch) -> Option<Node> {
        if let Some(n) = batch.nodes.get(id) {
            return Some(n.clone());
        }
        let text = std::fs::read_to_string(self.forest.join(ids::id_to_path(id))).ok()?;
        let node = Node::parse(&text).ok()?;
        batch.nodes.insert(id.to_string(), node.clone());
        Some(node)
    }

    pub(crate) fn put(&self, id: &str, node: Node, batch: &mut Batch) {
        batch.nodes.insert(id.to_string(), node);
        batch.dirty.insert(id.to_string());
    }

    /// Make sure the branch for `folder` (id prefix) exists, creating ancestors.
    pub(crate) fn ensure_branch(&mut self, folder: &str, batch: &mut Batch) {
        let bid = ids::branch_id_for_folder(folder);
        if self.exists(&bid, batch) {
            return;
        }
        if let Some(parent) = ids::parent_index(&bid) {
            self.ensure_branch(ids::folder_of(&parent), batch);
        }
        let name = folder.rsplit('/').next().unwrap_or(folder);
        let title = title_from_stem(name);
        let summary = format!("Documents adopted from source folder '{name}'.");
        let mut n = Node { front: Default::default(), body: index::branch_body(&title, &summary) };
        n.set_str("id", &bid);
        n.set_str("type", "branch");
        n.set_str("title", &title);
        n.set_str("summary", &summary);
        n.set_str("coverage", "0 bananas, 0 sub-branches");
        n.set_str("created", &self.today);
        n.set_str("updated", &self.today);
        n.set_str("source", "ingest");
        self.put(&bid, n, batch);
        self.taken.insert(bid.clone());
        if let Some(parent) = ids::parent_index(&bid) {
            self.add_entry(&parent, SUB_BRANCHES, &bid, &summary, batch);
        }
        self.report.branches.push(bid.clone());
        batch.ids.push(bid);
    }

    pub(crate) fn add_entry(&mut self, branch: &str, section: &str, child: &str, summary: &str, batch: &mut Batch) {
        let Some(mut b) = self.load(branch, batch) else {
            return;
        };
        let line = entry_line(child, summary, None);
        let body = index::upsert_entry(&b.body, section, child, &line);
        if body != b.body {
            b.body = body;
            self.put(branch, b, batch);
        }
    }

    pub(crate) fn remove_entry(&mut self, branch: &str, child: &str, batch: &mut Batch) {
        let Some(mut b) = self.load(branch, batch) else {
            return;
        };
        let (body, removed) = index::remove_entry(&b.body, child);
        if removed {
            b.body = body;
            self.put(branch, b, batch);
        }
    }

    /// Replace a child's entry line text in its parent (summary propagation).
    pub(crate) fn propagate_summary(&mut self, child: &str, summary: &str, batch: &mut Batch) {
        let Some(parent) = ids::parent_index(child) else {
            return;
        };
        let Some(mut b) = self.load(&parent, batch) else {
            return;
        };
        let section = if ids::is_branch_id(child) { SUB_BRANCHES } else { DIRECT_BANANAS };
        let existing = index::section_entries(&b.body, section).into_iter().find(|l| index::entry_id(l) == Some(child));
        // Keep a coverage suffix the line carried (dialect §1.6).
        let suffix = existing.as_deref().and_then(coverage_suffix);
        let line = entry_line(child, summary, suffix.as_deref());
        let body = index::upsert_entry(&b.body, section, child, &line);
        if body != b.body {
            b.body = body;
            self.put(&parent, b, batch);
        }
    }

    /// A fresh id for `rel`; names that collide after slugify get a short
    /// hash suffix and a report line (never a silent overwrite).
    pub(crate) fn new_leaf_id(&mut self, rel: &str, batch: &Batch) -> String {
        let (dir, file) = match rel.rfind('/') {
            Some(i) => (&rel[..i], &rel[i + 1..]),
            None => ("", rel),
        };
        let stem = match file.rfind('.') {
            Some(i) if i > 0 => &file[..i],
            _ => file,
        };
        let prefix = self.folder_prefix(dir);
        let leaf = slugify(stem);
        let leaf = if leaf == "_index" || leaf.starts_with('_') { format!("n{leaf}") } else { leaf };
        let base = if prefix.is_empty() { leaf } else { format!("{prefix}/{leaf}") };
        if !self.exists(&base, batch) {
            return base;
        }
        let h = hex::encode(Sha256::digest(rel.as_bytes()));
        let mut cand = format!("{base}-{}", &h[..6]);
        let mut n = 2;
        while self.exists(&cand, batch) {
            cand = format!("{base}-{}-{n}", &h[..6]);
            n += 1;
        }
        self.report
            .warnings
            .push(format!("{rel}: id '{base}' is already taken (names collide after slugify): planted as '{cand}'"));
        cand
    }

    pub(crate) fn apply(
        &mut self,
        w: &Work,
        converted: &HashMap<String, Converted>,
        batch: &mut Batch,
        catalog: Option<&Catalog>,
    ) {
        match w {
            Work::Plant(rel) => {
                if let Some(c) = converted.get(rel) {
                    self.plant(c, batch);
                }
            }
            Work::Update(rel, id) => {
                if let Some(c) = converted.get(rel) {
                    self.update(c, id, batch);
                }
            }
            Work::Transplant(m) => self.transplant(m, batch, catalog),
            Work::MarkStale(rel, e) => self.mark_stale(rel, e, batch),
        }
    }
}
