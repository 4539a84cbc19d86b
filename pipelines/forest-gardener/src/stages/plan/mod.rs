//! Plan stage: turn one batch of reconciled [`Work`] plus its conversions
//! into pending writes ([`Batch`]): ids, the branch chain, `_index.md`
//! entries, FLESH/BONE policies, moves and stale marks.
//!
//! In: [`Work`] items, [`Converted`] files, the catalog (read-only, for
//! backlinks of moved nodes). Out: a [`Batch`] (nodes to write, deletes,
//! staged payloads, manifest rows, drafts for the curate stage). Touches:
//! reads passports; writes only staged payload files and cached bodies
//! (regenerable), never a tracked file: that is the commit stage's job.

mod branch;
pub(crate) mod branch_scent;
pub(crate) mod draft;
pub(crate) mod folders;
mod leaf;
mod limits;
mod moves;
pub(crate) mod payload;
pub(crate) mod ranges;
mod rebalance;
pub(crate) mod split;
mod themes;

use crate::env::RunEnv;
use crate::options::Draft;
use crate::outcomes::RunOutcomes;
use crate::reconcile::ManifestEntry;
use crate::report::SourceReport;
use crate::stages::convert::Converted;
use crate::stages::text::coverage_suffix;
use crate::stages::work::Work;
use branch::EntryBody;
use forest_catalog::Catalog;
use forest_model::ids;
use forest_model::index::{self, entry_line, DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::Node;
use forest_model::slug::{slugify, title_from_stem};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Deref;
use std::path::{Path, PathBuf};

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
    /// Branch bodies under entry edits, by id (authoritative over the
    /// body of the same id in `nodes` until rendered).
    pub(crate) bodies: HashMap<String, EntryBody>,
}

impl Batch {
    /// A copy of a node as this batch sees it (read from `forest` once).
    pub(crate) fn load(&mut self, forest: &Path, id: &str) -> Option<Node> {
        if let Some(n) = self.nodes.get(id) {
            let mut n = n.clone();
            if let Some(b) = self.bodies.get(id) {
                n.body = b.render();
            }
            return Some(n);
        }
        let text = std::fs::read_to_string(forest.join(ids::id_to_path(id))).ok()?;
        let node = Node::parse(&text).ok()?;
        self.nodes.insert(id.to_string(), node.clone());
        Some(node)
    }

    /// Record a node's new state (its body replaces a parsed branch body).
    pub(crate) fn put(&mut self, id: &str, node: Node) {
        if let Some(b) = self.bodies.get_mut(id) {
            *b = EntryBody::parse(&node.body);
        }
        self.nodes.insert(id.to_string(), node);
        self.dirty.insert(id.to_string());
    }

    /// A branch's body, parsed once per batch for entry edits (the node in
    /// `nodes` keeps a stale body until [`Batch::render_bodies`]).
    pub(crate) fn body_mut(&mut self, forest: &Path, branch: &str) -> Option<&mut EntryBody> {
        if !self.bodies.contains_key(branch) {
            if !self.nodes.contains_key(branch) {
                self.load(forest, branch)?;
            }
            let body = EntryBody::parse(&self.nodes.get(branch)?.body);
            self.bodies.insert(branch.to_string(), body);
        }
        self.bodies.get_mut(branch)
    }

    /// Replace a child's entry line text in its parent (summary propagation).
    pub(crate) fn propagate_summary(&mut self, forest: &Path, child: &str, summary: &str) {
        let Some(parent) = ids::parent_index(child) else {
            return;
        };
        let Some(b) = self.body_mut(forest, &parent) else {
            return;
        };
        let section = if ids::is_branch_id(child) { SUB_BRANCHES } else { DIRECT_BANANAS };
        // Keep a coverage suffix the line carried (dialect §1.6).
        let suffix = b.entry_in(section, child).and_then(coverage_suffix);
        let line = entry_line(child, summary, suffix.as_deref());
        if b.upsert(section, child, &line) {
            self.dirty.insert(parent);
        }
    }

    /// Write the parsed branch bodies back into their nodes (once per batch).
    pub(crate) fn render_bodies(&mut self) {
        for (id, b) in self.bodies.drain() {
            if let Some(n) = self.nodes.get_mut(&id) {
                n.body = b.render();
            }
        }
    }
}

/// A leaf's last id component for a source path: the slug of its stem
/// (`_`-led names get an `n`, they would read as `_meta`-like prefixes).
pub(crate) fn leaf_component(rel: &str) -> String {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    let stem = match file.rfind('.') {
        Some(i) if i > 0 => &file[..i],
        _ => file,
    };
    let leaf = slugify(stem);
    if leaf.starts_with('_') {
        format!("n{leaf}")
    } else {
        leaf
    }
}

/// Title and summary of a new branch: a source folder's, or a bucket's
/// (the name range it holds, so `look` can steer by name).
fn branch_scent(folder: &str) -> (String, String) {
    let source = split::source_folder_of(folder);
    let name = source.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or("root");
    let prefix = split::folder_prefix_of(folder);
    if prefix.is_empty() {
        return (title_from_stem(name), format!("Documents adopted from source folder '{name}'."));
    }
    // A bucket may hold sub-folders too ([`folders`]).
    let of = if source.is_empty() { "the source root".to_string() } else { format!("source folder '{name}'") };
    if let Some(r) = folder.rsplit('/').next().and_then(ranges::parse) {
        return (
            format!("{}: {} to {}", title_from_stem(name), r.lo, r.hi),
            format!("Files and folders of {of} from '{}' to '{}'.", r.lo, r.hi),
        );
    }
    (
        format!("{}: {prefix}…", title_from_stem(name)),
        format!("Files and folders of {of} whose names start with '{prefix}'."),
    )
}

/// The words a person would type for a folder whose name carries a
/// version or a `lib` prefix: `libboost-iostreams1.74.0` -> "boost
/// iostreams", `libavahi-common3` -> "avahi common", `python3-gi` ->
/// "python gi". `None` when that says nothing the name does not (`bash`,
/// `x11-common`: a word keeps its digits when fewer than 3 letters remain).
fn name_alias(name: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for (i, w) in name.split(['-', '_', '.', '+', ' ', '~']).filter(|w| !w.is_empty()).enumerate() {
        let w = w.to_lowercase();
        let w = match w.strip_prefix("lib") {
            Some(rest) if i == 0 && rest.len() >= 2 && rest.starts_with(|c: char| c.is_ascii_alphabetic()) => rest,
            _ => w.as_str(),
        };
        let bare = w.trim_end_matches(|c: char| c.is_ascii_digit());
        let w = if bare.chars().filter(char::is_ascii_alphabetic).count() >= 3 { bare } else { w };
        if w.chars().any(|c| c.is_alphabetic()) {
            words.push(w.to_string());
        }
    }
    let alias = words.join(" ");
    let plain: Vec<String> =
        name.split(['-', '_', '.', '+', ' ', '~']).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    (alias.chars().filter(|c| c.is_alphabetic()).count() >= 3 && alias != plain.join(" ")).then_some(alias)
}

/// Per-run memory of folder placements and sub-folder plans (kept by
/// [`folders`]; defined here so the [`Planner`] names it without
/// importing its child).
#[derive(Debug, Default)]
pub(crate) struct FolderPlacer {
    /// Source-relative folder -> id folder.
    placed: HashMap<String, String>,
    /// Source-relative parent folder -> sub-folder key -> bucket chain
    /// (`None`: its sub-folders stay flat).
    plans: HashMap<String, Option<HashMap<String, Vec<String>>>>,
}

/// The plan stage of one batch: reads the run's [`RunEnv`] (through
/// `Deref`, so `self.forest`, `self.config`, ... read the environment) and
/// updates exactly the pieces of run state planning changes.
pub(crate) struct Planner<'r> {
    pub(crate) env: &'r RunEnv<'r>,
    /// This stage's part of the source's report (a fresh one, folded by
    /// the pipeline after it follows [`Planned::renamed`]).
    pub(crate) report: SourceReport,
    /// Ids planted during this run and not committed yet.
    pub(crate) taken: &'r mut HashSet<String>,
    /// Remembered outcomes: a conversion problem is recorded, a fixed one
    /// forgotten.
    pub(crate) outcomes: &'r mut RunOutcomes,
    /// Where source folders' branches live (sub-folder buckets).
    pub(crate) folders: &'r mut FolderPlacer,
}

impl<'r> Deref for Planner<'r> {
    type Target = RunEnv<'r>;

    fn deref(&self) -> &RunEnv<'r> {
        self.env
    }
}

/// What the plan stage made of one batch.
pub(crate) struct Planned {
    /// The pending writes.
    pub(crate) batch: Batch,
    /// Ids the rebalance re-homed, old -> final: earlier batches' report
    /// lines name them too (the stage's own part already follows).
    pub(crate) renamed: HashMap<String, String>,
}

impl Planner<'_> {
    /// Plan one batch: `slice`'s work with its conversions (the first
    /// batch also carries the manifest rows of touched files), then branch
    /// scent and the rebalance of what the batch made overflow. Each
    /// conversion is dropped once planted: the next slice converts beside
    /// the plan, and the two together hold no more than two batches.
    pub(crate) fn plan(
        &mut self,
        slice: &[Work],
        mut converted: HashMap<String, Converted>,
        touched: Vec<(String, ManifestEntry)>,
        catalog: Option<&Catalog>,
    ) -> Planned {
        let mut batch = Batch { manifest_up: touched, ..Default::default() };
        for w in slice {
            self.apply(w, &converted, &mut batch, catalog);
            if let Work::Plant(f) | Work::Update(f, _) = w {
                converted.remove(&f.rel);
            }
        }
        // Branch scent first (a derived summary is longer than the
        // placeholder, and the split measures entry lines), then
        // navigable branches: split what this batch made overflow.
        self.derive_branch_scents(&mut batch);
        let renamed = self.rebalance(&mut batch, catalog);
        Planned { batch, renamed }
    }
}

impl Planner<'_> {
    pub(crate) fn exists(&self, id: &str, batch: &Batch) -> bool {
        if batch.nodes.contains_key(id) || self.taken.contains(id) {
            return !batch.removed_ids.iter().any(|r| r == id);
        }
        if batch.removed_ids.iter().any(|r| r == id) {
            return false;
        }
        self.forest.join(ids::id_to_path(id)).exists()
    }

    /// A copy of a node as this batch sees it (read from disk once).
    pub(crate) fn load(&self, id: &str, batch: &mut Batch) -> Option<Node> {
        batch.load(self.forest, id)
    }

    /// Record a node's new state (its body replaces a parsed branch body).
    pub(crate) fn put(&self, id: &str, node: Node, batch: &mut Batch) {
        batch.put(id, node)
    }

    /// A branch's body, parsed once per batch for entry edits.
    pub(super) fn body_mut<'b>(&self, branch: &str, batch: &'b mut Batch) -> Option<&'b mut EntryBody> {
        batch.body_mut(self.forest, branch)
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
        let (title, summary) = branch_scent(folder);
        let mut n = Node { front: Default::default(), body: index::branch_body(&title, &summary) };
        n.set_str("id", &bid);
        n.set_str("type", "branch");
        n.set_str("title", &title);
        n.set_str("summary", &summary);
        n.set_str("coverage", "0 bananas, 0 sub-branches");
        n.set_str("created", &self.today);
        n.set_str("updated", &self.today);
        n.set_str("source", "ingest");
        if split::folder_prefix_of(folder).is_empty() {
            let source = split::source_folder_of(folder);
            if let Some(a) = source.rsplit('/').next().and_then(name_alias) {
                n.set_list("aliases", &[a]);
            }
        }
        self.put(&bid, n, batch);
        self.taken.insert(bid.clone());
        if let Some(parent) = ids::parent_index(&bid) {
            self.add_entry(&parent, SUB_BRANCHES, &bid, &summary, batch);
        }
        self.report.branches.push(bid.clone());
        batch.ids.push(bid);
    }

    /// Upsert `child`'s entry line in a branch's section (O(1) for a new child).
    pub(crate) fn add_entry(&mut self, branch: &str, section: &str, child: &str, summary: &str, batch: &mut Batch) {
        let line = entry_line(child, summary, None);
        let Some(b) = self.body_mut(branch, batch) else {
            return;
        };
        if b.upsert(section, child, &line) {
            batch.dirty.insert(branch.to_string());
        }
    }

    /// Remove `child`'s entry lines from a branch.
    pub(crate) fn remove_entry(&mut self, branch: &str, child: &str, batch: &mut Batch) {
        let Some(b) = self.body_mut(branch, batch) else {
            return;
        };
        if b.remove(child) {
            batch.dirty.insert(branch.to_string());
        }
    }

    /// Replace a child's entry line text in its parent (summary propagation).
    pub(crate) fn propagate_summary(&mut self, child: &str, summary: &str, batch: &mut Batch) {
        batch.propagate_summary(self.forest, child, summary)
    }

    /// A fresh id for `rel`, in the bucket its name routes to when its
    /// folder is split ([`split`]); names that collide after slugify get a
    /// short hash suffix and a report line (never a silent overwrite).
    pub(crate) fn new_leaf_id(&mut self, rel: &str, batch: &mut Batch) -> String {
        let dir = rel.rfind('/').map(|i| &rel[..i]).unwrap_or("");
        let leaf = leaf_component(rel);
        let folder = self.folder_for(dir, batch);
        let home = self.route_leaf(&folder, &split::routing_key(&leaf), batch);
        self.free_leaf_id(&home, &leaf, rel, batch)
    }

    /// `<home>/<leaf>`, or with a short hash of `rel` when that id is taken.
    pub(crate) fn free_leaf_id(&mut self, home: &str, leaf: &str, rel: &str, batch: &Batch) -> String {
        let base = if home.is_empty() { leaf.to_string() } else { format!("{home}/{leaf}") };
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
            Work::Plant(f) => {
                if let Some(c) = converted.get(&f.rel) {
                    self.plant(c, batch);
                }
            }
            Work::Update(f, id) => {
                if let Some(c) = converted.get(&f.rel) {
                    self.update(c, id, batch);
                }
            }
            Work::Transplant(m, _) => self.transplant(m, batch, catalog),
            Work::MarkStale(rel, e) => self.mark_stale(rel, e, batch),
        }
    }
}

/// The run state a [`Planner`] updates, owned, for driving the plan
/// stage in tests (`report`: the run's, where parts are folded).
#[cfg(test)]
#[derive(Default)]
pub(crate) struct PlanState {
    pub(crate) report: SourceReport,
    pub(crate) taken: HashSet<String>,
    pub(crate) outcomes: RunOutcomes,
    pub(crate) folders: FolderPlacer,
}

#[cfg(test)]
impl PlanState {
    /// The plan stage over this state in `env` (with a fresh report part).
    pub(crate) fn planner<'r>(&'r mut self, env: &'r RunEnv<'r>) -> Planner<'r> {
        Planner {
            env,
            report: SourceReport::default(),
            taken: &mut self.taken,
            outcomes: &mut self.outcomes,
            folders: &mut self.folders,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::testing::Fixture;

    #[test]
    fn versioned_and_lib_folder_names_get_the_words_people_type() {
        assert_eq!(name_alias("libboost-iostreams1.74.0").as_deref(), Some("boost iostreams"));
        assert_eq!(name_alias("libavahi-common3").as_deref(), Some("avahi common"));
        assert_eq!(name_alias("python3-gi").as_deref(), Some("python gi"));
        assert_eq!(name_alias("libgtk2.0-0").as_deref(), Some("gtk"));
        assert_eq!(name_alias("Project-Atlas-v2"), None, "a short versioned word stays");
        assert_eq!(name_alias("Quarterly Reports 2024").as_deref(), Some("quarterly reports"));
        assert_eq!(name_alias("bash"), None);
        assert_eq!(name_alias("x11-common"), None);
        assert_eq!(name_alias("libc6"), None, "too few letters left: {:?}", name_alias("libc6"));
    }

    #[test]
    fn plants_leaves_under_a_new_branch_chain_with_entries() {
        let fx = Fixture::new();
        let a = fx.write("ops/team/a.md", "# Alpha\n\nAlpha text.\n");
        let b = fx.write("ops/team/b.md", "# Beta\n\nBeta text.\n");
        let env = fx.env();
        let mut state = PlanState::default();
        let work = vec![Work::Plant(a), Work::Plant(b)];
        let converted = crate::stages::convert::convert_all(&env, &work, &HashMap::new());
        let mut batch = Batch::default();
        let mut run = state.planner(&env);
        for w in &work {
            run.apply(w, &converted, &mut batch, None);
        }
        assert_eq!(batch.planted, 2);
        assert_eq!(run.report.planted.to_vec(), vec!["ops/team/a", "ops/team/b"]);
        assert_eq!(run.report.branches.to_vec(), vec!["ops/_index", "ops/team/_index"]);
        assert_eq!(
            batch.manifest_up.iter().map(|(p, e)| (p.as_str(), e.id.as_str())).collect::<Vec<_>>(),
            vec![("ops/team/a.md", "ops/team/a"), ("ops/team/b.md", "ops/team/b")]
        );
        batch.render_bodies();
        let team = &batch.nodes["ops/team/_index"].body;
        let entries = index::section_entries(team, DIRECT_BANANAS);
        assert_eq!(entries.len(), 2);
        assert!(entries[0].starts_with("- [[ops/team/a]]") && entries[1].starts_with("- [[ops/team/b]]"));
        let ops = &batch.nodes["ops/_index"].body;
        assert!(index::section_entries(ops, SUB_BRANCHES)[0].starts_with("- [[ops/team/_index]]"));
        // The root index gained the top branch.
        assert!(batch.dirty.contains("_index") && batch.dirty.contains("ops/team/_index"));
    }

    #[test]
    fn a_first_batch_carries_the_touched_rows_then_its_plan() {
        let fx = Fixture::new();
        let a = fx.write("notes/a.md", "# Alpha\n\nAlpha text.\n");
        let env = fx.env();
        let mut state = PlanState::default();
        let work = vec![Work::Plant(a)];
        let converted = crate::stages::convert::convert_all(&env, &work, &HashMap::new());
        let touched = ManifestEntry {
            id: "old/t".into(),
            size: 1,
            mtime_ms: 2,
            hash: "blake3:t".into(),
            vanished: false,
            etag: None,
        };
        let mut run = state.planner(&env);
        let Planned { batch, renamed } = run.plan(&work, converted, vec![("old/t.md".into(), touched)], None);
        assert!(renamed.is_empty(), "one leaf overflows nothing");
        let rows: Vec<(&str, &str)> = batch.manifest_up.iter().map(|(p, e)| (p.as_str(), e.id.as_str())).collect();
        assert_eq!(rows, [("old/t.md", "old/t"), ("notes/a.md", "notes/a")]);
        assert_eq!(run.report.planted.to_vec(), ["notes/a"], "the stage's part of the report");
        drop(run);
        assert!(state.taken.contains("notes/a") && state.taken.contains("notes/_index"));
        // Branch scent ran: the new folder branch says what it holds.
        let summary = batch.nodes["notes/_index"].get_str("summary").unwrap_or_default();
        assert!(summary.contains("Alpha") || summary.contains("alpha"), "{summary}");
    }
}
