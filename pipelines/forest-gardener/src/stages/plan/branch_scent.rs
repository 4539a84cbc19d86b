//! Branch scent as each batch lands ([`super::themes`] derives it): every
//! branch the batch touched gets a summary of what lives in it, deepest
//! first so a parent reads its children's fresh summaries, each change
//! propagated verbatim into the parent's entry line and the branch's own
//! blockquote. Only summaries a machine wrote are rewritten: `source:
//! ingest` branches whose summary is one of the Gardener's defaults or was
//! derived (`scent: derived` with a matching `scent_hash`); a hand-written
//! or curated (`scent: llm`) branch summary is never touched.
//!
//! In: the batch (parsed branch bodies, the nodes it holds). Out: the same
//! batch with branch summaries, entry lines and blockquotes updated.
//! Touches: reads the direct children a batch does not hold (one passport
//! each, O(children) per touched branch; never the subtree below them).

use super::split;
use super::themes::{self, Child, Kind};
use super::Batch;
use super::Planner;
use crate::stages::text::coverage_suffix;
use forest_model::ids;
use forest_model::index::{DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::Node;
use forest_model::scent::summary_fingerprint;
use std::cmp::Reverse;
use std::collections::{BTreeSet, HashSet};

/// Default summaries the Gardener wrote before branches were derived.
const DEFAULTS: [&str; 3] = ["Documents adopted from source folder", "Files and folders of ", "Region '"];

/// True when a machine wrote this branch's summary (so a batch may rewrite it).
/// The master (`_index`, written by `forest init`) counts as the
/// Gardener's too while it carries init's placeholder or a summary derived
/// here, so after an adopt it says what the forest holds.
pub(crate) fn machine_written(n: &Node) -> bool {
    let master = n.get_str("id").as_deref() == Some("_index");
    if !master && n.get_str("source").as_deref() != Some("ingest") {
        return false;
    }
    let summary = n.get_str("summary").unwrap_or_default();
    match n.get_str("scent").as_deref() {
        Some("derived") => n.get_str("scent_hash").as_deref() == Some(summary_fingerprint(&summary).as_str()),
        Some(_) => false,
        None if master => forest_derived::init::is_fresh_master_summary(&summary),
        None => DEFAULTS.iter().any(|d| summary.starts_with(d)),
    }
}

/// A node's frontmatter alone (the body of a passport may be megabytes):
/// lines up to the closing `---`, parsed with an empty body.
fn read_front(path: &std::path::Path) -> Option<Node> {
    use std::io::BufRead;
    let mut r = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let mut head = String::new();
    let mut line = String::new();
    let mut n = 0;
    loop {
        line.clear();
        if r.read_line(&mut line).ok()? == 0 || n > 4096 {
            return None;
        }
        head.push_str(&line);
        n += 1;
        if n > 1 && line.trim_end() == "---" {
            break;
        }
    }
    head.push('\n');
    Node::parse(&head).ok()
}

/// The summary part of an entry line (`- [[id]] — summary[ coverage.]`).
fn entry_summary(line: &str) -> String {
    let Some(i) = line.find("]] — ") else { return String::new() };
    let mut rest = line[i + "]] — ".len()..].trim();
    if let Some(c) = coverage_suffix(line) {
        if let Some(j) = rest.rfind(c.as_str()) {
            rest = rest[..j].trim_end();
        }
    }
    rest.to_string()
}

impl Planner<'_> {
    /// Derive the summary of every branch this batch touched.
    pub(crate) fn derive_branch_scents(&mut self, batch: &mut Batch) {
        let depth = |id: &str| id.matches('/').count();
        let mut work: BTreeSet<(Reverse<usize>, String)> =
            batch.dirty.iter().filter(|id| ids::is_branch_id(id)).map(|id| (Reverse(depth(id)), id.clone())).collect();
        let mut done: HashSet<String> = HashSet::new();
        while let Some((_, bid)) = work.pop_first() {
            if !done.insert(bid.clone()) {
                continue;
            }
            let Some(summary) = self.branch_summary_of(&bid, batch) else { continue };
            let Some(n) = batch.nodes.get_mut(&bid) else { continue };
            if n.get_str("summary").as_deref() == Some(summary.as_str()) {
                continue;
            }
            n.set_str("summary", &summary);
            n.set_str("scent", "derived");
            n.set_str("scent_hash", &summary_fingerprint(&summary));
            batch.dirty.insert(bid.clone());
            if let Some(b) = self.body_mut(&bid, batch) {
                b.set_blockquote(&summary);
            }
            self.propagate_summary(&bid, &summary, batch);
            if let Some(p) = ids::parent_index(&bid) {
                if !done.contains(&p) {
                    work.insert((Reverse(depth(&p)), p));
                }
            }
        }
    }

    /// The derived summary of branch `bid`, `None` when it is not the
    /// Gardener's to rewrite or has no children.
    fn branch_summary_of(&mut self, bid: &str, batch: &mut Batch) -> Option<String> {
        if !machine_written(batch.nodes.get(bid)?) {
            return None;
        }
        let body = self.body_mut(bid, batch)?;
        let mut entries = body.section_entries(SUB_BRANCHES);
        entries.extend(body.section_entries(DIRECT_BANANAS));
        let mut rows: Vec<Row> = Vec::with_capacity(entries.len());
        for (id, line) in &entries {
            let branch = ids::is_branch_id(id);
            let path = if branch { ids::folder_of(id) } else { id.as_str() };
            let name = path.rsplit('/').next().unwrap_or(path).to_string();
            // Direct children only (the batch's, else one read each), so a
            // summary does not depend on which children a batch touched.
            let row = |c: &Node| (c.title(), c.get_str("summary").unwrap_or_default(), c.get_list("tags"));
            let known = match batch.nodes.get(id) {
                Some(c) => Some(row(c)),
                None => read_front(&self.forest.join(ids::id_to_path(id))).map(|c| row(&c)),
            };
            rows.push(match known {
                Some((title, summary, tags)) => (name, branch, title, summary, tags),
                None => (name, branch, None, entry_summary(line), vec![]),
            });
        }
        derived_summary(bid, &rows)
    }
}

/// A child of a branch for [`derived_summary`]: (name, is a branch, title,
/// summary, tags).
pub(crate) type Row = (String, bool, Option<String>, String, Vec<String>);

/// The derived summary of branch `bid` from its children's scent (also
/// the deterministic fallback of `forest rollup`).
pub(crate) fn derived_summary(bid: &str, rows: &[Row]) -> Option<String> {
    let children: Vec<Child> = rows
        .iter()
        .map(|(name, branch, title, summary, tags)| Child {
            name,
            branch: *branch,
            title: title.as_deref(),
            summary,
            tags,
        })
        .collect();
    let folder = ids::folder_of(bid);
    let last = folder.rsplit('/').next().unwrap_or("");
    let source = split::source_folder_of(folder);
    let name = source.rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or("root");
    match super::ranges::parse(last) {
        Some(r) => themes::branch_summary(&Kind::Bucket(&r.lo, &r.hi), &children),
        None => match split::bucket_prefix(last) {
            Some(p) => themes::branch_summary(&Kind::Bucket(p, p), &children),
            None => themes::branch_summary(&Kind::Folder(name), &children),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_frontmatter_is_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("n.md");
        let body = "word ".repeat(100_000);
        std::fs::write(&p, format!("---\nid: n\ntitle: T\nsummary: S.\n---\n\n{body}\n")).unwrap();
        let n = read_front(&p).unwrap();
        assert_eq!((n.title().as_deref(), n.get_str("summary").as_deref()), (Some("T"), Some("S.")));
        assert!(n.body.len() < 10);
        std::fs::write(&p, "no frontmatter at all\n").unwrap();
        assert!(read_front(&p).is_none());
    }

    #[test]
    fn entry_summaries_drop_the_coverage_suffix() {
        assert_eq!(entry_summary("- [[a/_index]] — Holds: x, y. 2 bananas, 0 sub-branches."), "Holds: x, y.");
        assert_eq!(entry_summary("- [[a]] — Plain summary."), "Plain summary.");
        assert_eq!(entry_summary("- [[a]]"), "");
    }

    #[test]
    fn only_machine_written_branch_summaries_are_rewritten() {
        let node = |front: &str| Node::parse(&format!("---\n{front}\n---\n\nbody\n")).unwrap();
        assert!(machine_written(&node("summary: Documents adopted from source folder 'x'.\nsource: ingest")));
        assert!(!machine_written(&node("summary: Our finance team's shared drive.\nsource: ingest")));
        assert!(!machine_written(&node("summary: Documents adopted from source folder 'x'.")));
        let s = "Holds: a, b.";
        let fp = summary_fingerprint(s);
        assert!(machine_written(&node(&format!("summary: '{s}'\nsource: ingest\nscent: derived\nscent_hash: {fp}"))));
        assert!(!machine_written(&node(&format!(
            "summary: Edited.\nsource: ingest\nscent: derived\nscent_hash: {fp}"
        ))));
        assert!(!machine_written(&node(&format!("summary: '{s}'\nsource: ingest\nscent: llm\nscent_hash: {fp}"))));
    }
}
