//! Leaf writes of the plan stage: plant a new passport, update a changed
//! one (hand-edited scent and `## Notes` kept), source fields.

use super::draft::{changed_leaf_draft, new_leaf_draft, LeafDraft};
use super::payload::PayloadError;
use super::Batch;

/// A new leaf's node type, body, summary and staged dataset payload.
type LeafContent = (&'static str, String, String, Option<(String, String)>);
use super::Planner;
use crate::error::chain;
use crate::options::{Draft, DraftLink};
use crate::outcomes::{kind_of_conversion, report_problem, StatKey};
use crate::reconcile::ManifestEntry;
use crate::report::err;
use crate::stages::convert::Converted;
use crate::stages::plan::payload::write_cached_body;
use crate::stages::text::links_value;
use crate::stages::text::{ext_of, keep_notes, payload_type_of, replace_map_sections, MEDIA_EXTS, TEXT_EXTS};
use forest_convert::Conversion;
use forest_model::aliases::{derive_aliases, union_aliases};
use forest_model::ids;
use forest_model::index::DIRECT_BANANAS;
use forest_model::node::Node;
use forest_model::scent::summary_fingerprint;
use forest_model::yaml::Value;

/// Passport key of a body that failed the fidelity check: `<code>: <why>`.
pub(crate) use forest_model::health_facts::SUSPECT_KEY;
/// Node confidence of a suspect passport (the Gardener's own is 0.7).
pub(crate) const SUSPECT_CONFIDENCE: f64 = 0.3;

impl Planner<'_> {
    /// The problem is reported once: it is remembered with the file's stat
    /// key ([`crate::outcomes`]), and a converted file forgets its old one.
    pub(crate) fn conversion_or_report(&mut self, c: &Converted) -> Option<Conversion> {
        let out = &c.outcome;
        if !out.is_skipped() && !out.is_unsupported() {
            self.report.bytes_read += c.size;
        }
        self.report.warnings.extend(out.warnings.iter().cloned());
        let msg = match &out.result {
            Ok(conv) => {
                self.outcomes.resolved(&c.rel);
                return Some(conv.clone());
            }
            Err(e) => forest_model::error_chain(e),
        };
        let kind = kind_of_conversion(&out.status);
        report_problem(&mut self.report, kind, &c.rel, &msg);
        let key = StatKey { size: c.size, mtime_ms: c.mtime_ms, etag: c.etag.clone() };
        let ck = self.converter_key(&c.rel);
        self.outcomes.record(&c.rel, kind, &msg, Some(key), &ck);
        None
    }

    /// The passport's fidelity mark: a suspect body (see
    /// `forest_convert::fidelity`) sets `conversion_suspect` (the reason) and
    /// lowers the machine confidence 0.7 to [`SUSPECT_CONFIDENCE`], and is
    /// reported; a clean re-conversion removes both. Hand-set confidences
    /// are left alone.
    pub(crate) fn mark_fidelity(&mut self, n: &mut Node, c: &Converted, id: &str) {
        let machine = |n: &Node, v: f64| n.get_f64("confidence").is_some_and(|x| (x - v).abs() < 1e-9);
        let converter = c.outcome.converter.as_ref().map(|c| c.name.clone()).unwrap_or_default();
        match &c.outcome.suspect {
            Some(s) => {
                n.set_str(SUSPECT_KEY, &s.to_string());
                if machine(n, 0.7) {
                    n.set("confidence", Value::from(SUSPECT_CONFIDENCE));
                }
                self.report.suspect.push(crate::report::SuspectFile {
                    path: c.rel.clone(),
                    id: id.to_string(),
                    converter,
                    reason: s.reason.code().to_string(),
                    message: s.message.clone(),
                });
            }
            None if n.get_str(SUSPECT_KEY).is_some() => {
                n.remove(SUSPECT_KEY);
                if machine(n, SUSPECT_CONFIDENCE) {
                    n.set("confidence", Value::from(0.7));
                }
            }
            None => {}
        }
    }

    /// Plant a new passport for a converted file.
    pub(crate) fn plant(&mut self, c: &Converted, batch: &mut Batch) {
        let Some(conv) = self.conversion_or_report(c) else {
            return;
        };
        let dir = c.rel.rfind('/').map(|i| &c.rel[..i]).unwrap_or("");
        let folder = self.folder_for(dir, batch);
        self.ensure_branch(&folder, batch);
        let id = self.new_leaf_id(&c.rel, batch);
        let parent = ids::parent_index(&id).unwrap_or_else(|| ids::MASTER.to_string());
        let ext = ext_of(&c.rel);
        // Leaf scent from the content (issue 26), derived on the convert threads.
        let scent = c.scent.clone().or_else(|| crate::stages::scent::of_conversion(&c.rel, &conv));
        let mut leaf = new_leaf_draft(&c.rel, &conv, scent, &self.config.default_tags);
        let Some((node_type, body, summary, payload)) = self.leaf_content(c, &conv, &id, &mut leaf, batch) else {
            return;
        };
        let LeafDraft { title, tags, aliases, .. } = leaf;
        let derived = derive_aliases(&c.rel, &self.config.aliases, &title);
        let (aliases, clipped) = union_aliases(&aliases, &derived);
        self.report.aliases_clipped += clipped;
        let draft = Draft {
            id: id.clone(),
            parent: parent.clone(),
            title: title.clone(),
            body: body.clone(),
            summary,
            tags,
            links: vec![],
            scent: "derived".into(),
        };
        let mut n = Node { front: Default::default(), body };
        n.set_str("id", &id);
        n.set_str("type", node_type);
        n.set_str("title", &title);
        n.set_str("summary", &draft.summary);
        n.set_str("created", &self.today);
        n.set_str("updated", &self.today);
        if !draft.tags.is_empty() {
            n.set_list("tags", &draft.tags);
        }
        // Optional `lang` (BCP-47): only when the converter's detector was confident.
        if let Conversion::Markdown { meta: forest_convert::SourceMeta { lang: Some(l), .. }, .. } = &conv {
            n.set_str("lang", l);
        }
        if !draft.links.is_empty() {
            n.set("links", links_value(&draft.links));
        }
        n.set("confidence", Value::from(0.7));
        n.set_str("source", "ingest");
        self.mark_fidelity(&mut n, c, &id);
        if let Some((name, hash)) = &payload {
            n.set_str("payload", name);
            n.set_str("payload_type", "sqlite");
            n.set_str("payload_hash", hash);
        } else if let Some(pt) = payload_type_of(&ext).filter(|_| c.lfs.is_none()) {
            // BONE: the original stays at its source unless archived (an
            // LFS pointer's reference is set with the git fields).
            match self.bone_payload(&id, c, batch) {
                Ok(p) => {
                    n.set_str("payload", &p);
                    n.set_str("payload_type", pt);
                    n.set_str("payload_hash", &c.hash.sha256);
                }
                Err(e) => self.report.warnings.push(format!("{}: original not archived: {}", c.rel, chain(&e))),
            }
        }
        if !aliases.is_empty() {
            n.set_list("aliases", &aliases);
        }
        n.set_str("origin", &c.origin);
        self.set_source_fields(&mut n, c);
        n.set_str("scent", &draft.scent);
        n.set_str("scent_hash", &summary_fingerprint(&draft.summary));
        if matches!(conv, Conversion::Markdown { .. }) {
            self.apply_content_policy(&id, &ext, &title, &mut n, &c.rel);
        }
        self.put(&id, n, batch);
        self.taken.insert(id.clone());
        self.add_entry(&parent, DIRECT_BANANAS, &id, &draft.summary, batch);
        if self.curate.is_some() {
            batch.curation.push(draft);
        }
        batch.manifest_up.push((c.rel.clone(), self.entry_for(&id, c)));
        self.report.planted.push(id.clone());
        batch.planted += 1;
        batch.ids.push(id);
    }

    /// A new leaf's type, body and summary, and the staged SQLite payload
    /// of a dataset (`(name, hash)`); None when that payload could not be
    /// staged (reported).
    fn leaf_content(
        &mut self,
        c: &Converted,
        conv: &Conversion,
        id: &str,
        leaf: &mut LeafDraft,
        batch: &mut Batch,
    ) -> Option<LeafContent> {
        let ext = ext_of(&c.rel);
        let (counts, staged) = match conv {
            Conversion::Markdown { .. } => {
                let ty = if TEXT_EXTS.contains(&ext.as_str()) {
                    "note"
                } else if MEDIA_EXTS.contains(&ext.as_str()) {
                    "media"
                } else {
                    "document"
                };
                return Some((ty, std::mem::take(&mut leaf.body), std::mem::take(&mut leaf.summary), None));
            }
            Conversion::Dataset { tables, .. } => (
                tables.iter().map(|t| (t.name.clone(), Some(t.rows.len() as i64))).collect::<Vec<_>>(),
                self.stage_dataset(id, tables, batch),
            ),
            Conversion::Payload { tables, .. } => (
                tables.iter().map(|t| (t.name.clone(), t.count)).collect::<Vec<_>>(),
                self.stage_copy(id, &c.abs, batch),
            ),
        };
        let summary = forest_convert::dataset_summary(&leaf.title, &counts);
        match staged {
            Ok(p) => Some(("dataset", conv.render(), summary, Some(p))),
            Err(e) => {
                self.report.errors.push(err(&c.rel, chain(&e)));
                None
            }
        }
    }

    /// The passport's `source_*` fields for a freshly read file.
    pub(crate) fn set_source_fields(&self, n: &mut Node, c: &Converted) {
        n.set_str("source_path", &c.rel);
        // sha256: what the dialect (and the reference's sync) compares.
        let hash = if c.hash.sha256.is_empty() { &c.hash.blake3 } else { &c.hash.sha256 };
        n.set_str("source_hash", hash);
        n.set("source_size", Value::from(c.size));
        n.set("source_mtime", Value::from(c.mtime_ms as f64 / 1000.0));
        match &c.etag {
            Some(e) => n.set_str("source_etag", e),
            None => {
                n.remove("source_etag");
            }
        }
        if self.multi || self.src.name != "default" && self.config.sources.len() > 1 {
            n.set_str("source_name", &self.src.name);
        }
        if let Some(git) = self.access.git() {
            set_git_fields(n, git, c);
        }
    }

    pub(crate) fn entry_for(&self, id: &str, c: &Converted) -> ManifestEntry {
        ManifestEntry {
            id: id.to_string(),
            size: c.size,
            mtime_ms: c.mtime_ms,
            hash: c.hash.blake3.clone(),
            vanished: false,
            etag: c.etag.clone(),
        }
    }

    /// Update a changed source file's passport.
    pub(crate) fn update(&mut self, c: &Converted, id: &str, batch: &mut Batch) {
        let Some(mut n) = self.load(id, batch) else {
            // The passport is gone (deleted by hand): plant it again.
            self.plant(c, batch);
            return;
        };
        let Some(conv) = self.conversion_or_report(c) else {
            return;
        };
        let mut draft = changed_leaf_draft(&n, &conv);
        let title = draft.title.clone();
        let (new_body, derived) = match &conv {
            Conversion::Markdown { .. } => {
                let fresh = &draft.body;
                let body = match n.get_str("content").as_deref() {
                    Some("cached") => {
                        if !self.opts.dry_run {
                            if let Err(e) = write_cached_body(self.forest, id, fresh) {
                                self.report.errors.push(err(&c.rel, format!("cannot cache the body: {e}")));
                            }
                        }
                        n.body.clone()
                    }
                    Some(c) if c != "inline" => n.body.clone(),
                    _ => keep_notes(&n.body, fresh),
                };
                self.follow_original(&mut n, c, id, batch);
                (body, draft.summary.clone())
            }
            Conversion::Dataset { .. } | Conversion::Payload { .. } => {
                let (counts, staged) = match &conv {
                    Conversion::Dataset { tables, .. } => (
                        tables.iter().map(|t| (t.name.clone(), Some(t.rows.len() as i64))).collect::<Vec<_>>(),
                        self.stage_dataset(id, tables, batch),
                    ),
                    Conversion::Payload { tables, .. } => (
                        tables.iter().map(|t| (t.name.clone(), t.count)).collect::<Vec<_>>(),
                        self.stage_copy(id, &c.abs, batch),
                    ),
                    Conversion::Markdown { .. } => (vec![], Err(PayloadError::NotADataset)),
                };
                match staged {
                    Ok((name, hash)) => {
                        n.set_str("payload", &name);
                        n.set_str("payload_hash", &hash);
                    }
                    Err(e) => {
                        self.report.errors.push(err(&c.rel, chain(&e)));
                        return;
                    }
                }
                (replace_map_sections(&n.body, &conv.render()), forest_convert::dataset_summary(&title, &counts))
            }
        };
        n.body = new_body;
        self.set_source_fields(&mut n, c);
        self.mark_fidelity(&mut n, c, id);
        n.remove("source_state");
        n.set_str("updated", &self.today);
        let (aliases, clipped) =
            union_aliases(&n.get_list("aliases"), &derive_aliases(&c.rel, &self.config.aliases, &title));
        self.report.aliases_clipped += clipped;
        if !aliases.is_empty() {
            n.set_list("aliases", &aliases);
        }
        if n.get_str("origin").is_none() {
            n.set_str("origin", &c.origin);
        }
        let markdown = matches!(conv, Conversion::Markdown { .. });
        draft.summary = derived;
        self.follow_scent(&mut n, id, draft, markdown, batch);
        self.put(id, n, batch);
        batch.manifest_up.push((c.rel.clone(), self.entry_for(id, c)));
        self.report.updated.push(id.to_string());
        batch.updated += 1;
        batch.ids.push(id.to_string());
    }

    /// A BONE original of a changed file: a source-referenced payload
    /// follows the new bytes; under `archive: always` it is archived again
    /// (the old copy goes once the commit landed).
    fn follow_original(&mut self, n: &mut Node, c: &Converted, id: &str, batch: &mut Batch) {
        if let Some(pt) = payload_type_of(&ext_of(&c.rel)).filter(|_| c.lfs.is_none()) {
            // A source-referenced original: follow the new bytes.
            let at_source = n.get_str("payload").is_none_or(|p| forest_model::lint::is_remote(&p));
            if at_source && !c.hash.sha256.is_empty() && self.src.archive != "always" {
                n.set_str("payload", &c.origin);
                n.set_str("payload_type", pt);
                n.set_str("payload_hash", &c.hash.sha256);
            } else if self.src.archive == "always" && !c.hash.sha256.is_empty() {
                // Re-archive; the old copy goes once the commit landed.
                let old = n.get_str("payload").filter(|p| p.starts_with("_assets/"));
                match self.bone_payload(id, c, batch) {
                    Ok(p) => {
                        if let Some(o) = old.filter(|o| *o != p) {
                            batch.retired.push(self.forest.join(ids::folder_of(id)).join(o));
                        }
                        n.set_str("payload", &p);
                        n.set_str("payload_type", pt);
                        n.set_str("payload_hash", &c.hash.sha256);
                    }
                    Err(e) => self.report.warnings.push(format!("{}: original not archived: {}", c.rel, chain(&e))),
                }
            }
        }
    }

    /// Scent freshness (DESIGN §5): a machine-written summary follows the
    /// source (`d.summary`, re-derived; with a hook, a changed document is
    /// re-curated, and only it); a hand-written one that no longer matches
    /// is reported as stale.
    fn follow_scent(&mut self, n: &mut Node, id: &str, d: LeafDraft, fresh: bool, batch: &mut Batch) {
        let derived = d.summary;
        let current = n.get_str("summary").unwrap_or_default();
        let machine = matches!(n.get_str("scent").as_deref(), Some("derived") | Some("llm"))
            && n.get_str("scent_hash").as_deref() == Some(summary_fingerprint(&current).as_str());
        if machine {
            if derived != current {
                n.set_str("summary", &derived);
                n.set_str("scent", "derived");
                n.set_str("scent_hash", &summary_fingerprint(&derived));
                self.propagate_summary(id, &derived, batch);
            }
            if self.curate.is_some() && fresh {
                let links = DraftLink::existing(n);
                batch.curation_existing.insert(id.to_string(), links.len());
                batch.curation.push(Draft {
                    id: id.to_string(),
                    parent: ids::parent_index(id).unwrap_or_else(|| ids::MASTER.to_string()),
                    title: d.title,
                    body: d.body,
                    summary: derived.clone(),
                    tags: d.tags,
                    links,
                    scent: "derived".into(),
                });
            }
        } else if derived != current {
            self.report.summary_stale.push(id.to_string());
        }
    }
}

/// A git source's passport fields: the blob and commit the node was read
/// from, the file's last author and date (`unknown` beyond the history
/// walk's bound) and its page on the forge when the remote has one. An LFS
/// pointer's node is a BONE reference: `payload` is the file at the source,
/// `payload_hash` the LFS object's sha256, `git_lfs_size` its size.
fn set_git_fields(n: &mut Node, git: &crate::gitsrc::GitSource, c: &Converted) {
    let facts = git.facts(&c.rel);
    if let Some(b) = c.etag.as_deref() {
        n.set_str("git_blob", b);
    }
    n.set_str("git_commit", &git.commit.to_string());
    n.set_str("git_author", facts.author.as_deref().unwrap_or("unknown"));
    let optional = [("git_date", facts.date), ("git_url", facts.url)];
    for (key, value) in optional {
        match value {
            Some(v) => n.set_str(key, &v),
            None => {
                n.remove(key);
            }
        }
    }
    match &c.lfs {
        Some(p) => {
            n.set_str("payload", &c.origin);
            n.set_str("payload_hash", &p.sha256);
            n.set("git_lfs_size", Value::from(p.size));
            match payload_type_of(&ext_of(&c.rel)) {
                Some(t) => n.set_str("payload_type", t),
                None => {
                    n.remove("payload_type");
                }
            }
        }
        None if n.remove("git_lfs_size").is_some() => {
            // No longer in LFS: the pointer's reference goes with it (a
            // BONE format keeps the reference `follow_original` set).
            let bone = payload_type_of(&ext_of(&c.rel)).is_some();
            if !bone && n.get_str("payload").is_some_and(|p| crate::gitsrc::is_git(&p)) {
                n.remove("payload");
                n.remove("payload_hash");
                n.remove("payload_type");
            }
        }
        None => {}
    }
}
