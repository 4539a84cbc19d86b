//! List stage: walk a local folder or list an S3 prefix, apply ignore
//! rules and a targeted sync's PATH, and report per-path problems.
//!
//! In: the source config and an optional PATH. Out: a [`Listing`] sorted
//! by source-relative path (files, problems, listing error). Walk problems
//! (a dangling symlink, a refused symlink, a bad name) are reported once and
//! remembered with their stat key ([`crate::outcomes`]): an unchanged one is
//! only counted as known. Touches the source (metadata only); never the forest.

use crate::entry::check_containment;
use crate::outcomes::{report_problem, walk_key};
use crate::pipeline::SourceRun;
use crate::source::Access;
use crate::walk::Listing;
use crate::GardenError;
use std::time::Instant;

impl SourceRun<'_> {
    /// List the source (see the module doc).
    pub(crate) fn list(&mut self, path: Option<&str>) -> Result<Listing, GardenError> {
        if let Access::Local { root, .. } = &self.access {
            if let Ok(canon) = std::fs::canonicalize(root) {
                check_containment(self.forest, &canon)?;
            }
        }
        let mut ignore = self.config.ignore.clone();
        ignore.extend(self.src.ignore.iter().cloned());
        let t = Instant::now();
        let mut listing = self.access.list(&ignore);
        tracing::info!(
            event = "gardener.stage",
            stage = "list",
            files = listing.files.len(),
            ms = t.elapsed().as_millis() as u64
        );
        if let Some(p) = path {
            let p = p.trim_start_matches("./");
            if p.starts_with('/') || p.split('/').any(|c| c == "..") {
                return Err(GardenError::Schema("sync path leaves the source root".into()));
            }
            listing.files.retain(|f| f.rel == p);
            listing.problems.retain(|q| q.rel == p);
        }
        let wk = walk_key();
        for q in &listing.problems {
            if !self.outcomes.skip_known(&q.rel, q.key.as_ref(), &wk) {
                report_problem(&mut self.report, q.kind, &q.rel, &q.message);
                self.outcomes.record(&q.rel, q.kind, &q.message, q.key.clone(), &wk);
            }
        }
        self.report.files_seen = listing.files.len();
        Ok(listing)
    }
}
