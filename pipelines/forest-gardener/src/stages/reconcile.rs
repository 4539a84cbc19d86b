//! Reconcile stage (DESIGN §3): the listing against the manifest. The
//! decisions are the pure functions of [`crate::reconcile`]; this stage
//! does the I/O around them: a stat pass, hashing suspects and move
//! candidates ([`crate::stages::fetch`]), classification, the stale guard.
//!
//! In: the [`Listing`] and the source's manifest entries. Out: the run's
//! [`Work`] in path order, the hashes already computed, and the manifest
//! rows of touched files (stat changed, bytes did not). Known problems
//! (same stat key and converter as when they failed, [`crate::outcomes`])
//! are dropped from the new and suspect files before anything is read.
//! Touches the source (reads for hashing) and S3 download slots; never the
//! forest.

use crate::outcomes::{converter_key, OutcomeKind, StatKey};
use crate::pipeline::{err, SourceRun};
use crate::reconcile::{self, HashPair, ManifestEntry, Plan, StatFile};
use crate::stages::plan::Work;
use crate::walk::{Listed, Listing};
use std::collections::{HashMap, HashSet};

/// What the reconcile stage hands to the batch loop.
pub(crate) struct Reconciled {
    /// Plant/update/move/stale items, sorted by source path.
    pub(crate) work: Vec<Work>,
    /// Hashes computed while reconciling (reused by conversion).
    pub(crate) hashes: HashMap<String, HashPair>,
    /// Manifest rows of touched files, written with the first batch.
    pub(crate) touched_up: Vec<(String, ManifestEntry)>,
}

impl SourceRun<'_> {
    /// Reconcile the listing with the manifest (see the module doc).
    pub(crate) fn reconcile(
        &mut self,
        listing: &Listing,
        entries: &HashMap<String, ManifestEntry>,
        by_rel: &HashMap<&str, &Listed>,
        path: Option<&str>,
    ) -> Reconciled {
        let stat_files: Vec<StatFile> = listing
            .files
            .iter()
            .map(|f| StatFile {
                rel: f.rel.clone(),
                size: f.size,
                mtime_ms: f.mtime_ms,
                etag: f.object.as_ref().map(|o| o.etag.clone()),
            })
            .collect();
        let mut stat = reconcile::stat_pass(&stat_files, entries, path);
        if listing.listing_error.is_some() {
            stat.vanished.clear();
        } else if path.is_none() {
            let mut listed: HashSet<&str> = listing.files.iter().map(|f| f.rel.as_str()).collect();
            listed.extend(listing.problems.iter().map(|q| q.rel.as_str()));
            self.outcomes.forget_unlisted(&listed);
        }
        // Known problems whose bytes and converter did not change are not
        // read again (DESIGN §9): neither hashed nor converted. A targeted
        // sync of one PATH is an operator asking: it always retries.
        if path.is_none() {
            let (hooks, registry, outcomes) = (&self.config.converters, self.registry, &mut self.outcomes);
            let mut known = |rel: &String| {
                let Some(f) = by_rel.get(rel.as_str()) else { return false };
                let key =
                    StatKey { size: f.size, mtime_ms: f.mtime_ms, etag: f.object.as_ref().map(|o| o.etag.clone()) };
                outcomes.skip_known(rel, Some(&key), &converter_key(registry, hooks, rel))
            };
            stat.new.retain(|r| !known(r));
            stat.suspect.retain(|r| !known(r));
        }
        // Hash suspects and possible move targets before deciding.
        let sizes: HashMap<String, u64> = listing.files.iter().map(|f| (f.rel.clone(), f.size)).collect();
        let mut to_hash: Vec<String> = stat.suspect.clone();
        to_hash.extend(reconcile::move_candidates(&stat, &sizes));
        let want_sha_moves = stat.vanished.iter().any(|(_, e)| !e.hash.starts_with("blake3:"));
        let hashed = self.hash_paths(&to_hash, entries, by_rel, want_sha_moves);
        let mut hashes = HashMap::new();
        for (rel, r) in hashed {
            match r {
                Ok(h) => {
                    self.report.bytes_read += sizes.get(&rel).copied().unwrap_or(0);
                    hashes.insert(rel, h);
                }
                Err(e) => {
                    let key = by_rel.get(rel.as_str()).map(|f| self.stat_key(f));
                    let ck = self.converter_key(&rel);
                    self.outcomes.record(&rel, OutcomeKind::Failed, &e, key, &ck);
                    self.report.errors.push(err(&rel, e));
                }
            }
        }
        let plan: Plan = reconcile::classify(stat, entries, &hashes);
        self.report.unchanged = plan.unchanged.len();
        self.report.touched = plan.touched.len();
        // Stale guard (DESIGN §3).
        let newly_stale = plan.vanished.iter().filter(|(_, e)| !e.vanished).count();
        let mut vanished = plan.vanished.clone();
        if reconcile::exceeds_stale_guard(newly_stale, entries.len(), self.config.max_stale_fraction)
            && !self.opts.allow_mass_stale
        {
            self.report.errors.push(err(
                &self.src.uri,
                format!(
                    "refusing to mark {newly_stale} of {} files stale (max_stale_fraction {}); rerun with --allow-mass-stale if the source really lost them",
                    entries.len(),
                    self.config.max_stale_fraction
                ),
            ));
            vanished.retain(|(_, e)| e.vanished);
        }
        for (_, e) in &vanished {
            self.report.stale.push(e.id.clone());
        }
        // Touched files only refresh the manifest.
        let mut touched_up = vec![];
        for rel in &plan.touched {
            if let (Some(f), Some(e)) = (by_rel.get(rel.as_str()), entries.get(rel)) {
                // Our own hash from now on: the next suspect needs blake3 only.
                let hash = hashes.get(rel).map(|h| h.blake3.clone()).unwrap_or_else(|| e.hash.clone());
                touched_up.push((
                    rel.clone(),
                    ManifestEntry {
                        size: f.size,
                        mtime_ms: f.mtime_ms,
                        etag: f.object.as_ref().map(|o| o.etag.clone()),
                        hash,
                        ..e.clone()
                    },
                ));
                // Hashed (downloaded) but unchanged: its slot is not needed.
                self.access.release(f);
            }
        }
        let mut work: Vec<Work> = vec![];
        work.extend(plan.new.iter().map(|r| Work::Plant(r.clone())));
        work.extend(plan.changed.iter().map(|(r, id)| Work::Update(r.clone(), id.clone())));
        work.extend(plan.moves.iter().cloned().map(Work::Transplant));
        work.extend(vanished.into_iter().filter(|(_, e)| !e.vanished).map(|(r, e)| Work::MarkStale(r, e)));
        work.sort_by(|a, b| a.rel().cmp(b.rel()));
        Reconciled { work, hashes, touched_up }
    }
}
