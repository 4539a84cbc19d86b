//! The `forest adopt|sync --json` report (schema in `schemas/`).

use serde::Serialize;

mod ids;
pub use ids::IdList;

/// Version of the report shape.
pub const REPORT_VERSION: u32 = 1;

/// One per-file problem.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FileError {
    /// Source-relative path (or node id).
    pub path: String,
    /// What went wrong.
    pub message: String,
}

/// One transplant.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MoveRecord {
    /// Old node id.
    pub from: String,
    /// New node id.
    pub to: String,
}

/// What happened to one source.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct SourceReport {
    /// Source name.
    pub source: String,
    /// Planted node ids.
    #[schemars(with = "Vec<String>")]
    pub planted: IdList,
    /// Branch ids created.
    #[schemars(with = "Vec<String>")]
    pub branches: IdList,
    /// Updated node ids (content changed).
    #[schemars(with = "Vec<String>")]
    pub updated: IdList,
    /// Count of unchanged files (ids omitted: at 10^6 files a list would dominate the report).
    pub unchanged: usize,
    /// Files whose stat changed but bytes did not (hashed once, fast path restored).
    pub touched: usize,
    /// Transplants.
    pub moved: Vec<MoveRecord>,
    /// Node ids whose source vanished (never deleted).
    pub stale: Vec<String>,
    /// Nodes whose hand-edited summary was kept although the source changed.
    pub summary_stale: Vec<String>,
    /// Source paths no converter claims (first met, or changed, in this run).
    pub unsupported: Vec<String>,
    /// Files left out with a reason (empty, over the size limit, symlink
    /// policy, unusable name), first met in this run; never partial.
    pub skipped: Vec<FileError>,
    /// Per-file errors new in this run; non-empty means exit 3.
    pub errors: Vec<FileError>,
    /// Problems remembered from earlier runs whose file has not changed:
    /// not read, not listed again (`forest health` lists them).
    pub known_problems: usize,
    /// Files planted with a body that failed the converter's fidelity check
    /// (raw markup, mojibake, far too little text) when no fallback did
    /// better: their passports carry `conversion_suspect` and confidence 0.3.
    pub suspect: Vec<SuspectFile>,
    /// Converter fallback warnings.
    pub warnings: Vec<String>,
    /// New nodes planted with the derived summary because curation failed
    /// (`forest curate --pending` retries them).
    pub curation_fallbacks: Vec<String>,
    /// Derived aliases dropped by the 16 cap.
    pub aliases_clipped: usize,
    /// Files listed in the source.
    pub files_seen: usize,
    /// Bytes read for hashing and conversion.
    pub bytes_read: u64,
    /// Git blobs read (`git:` sources: new, changed and moved files only;
    /// a sync with no change reads none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blobs_read: u64,
    /// Conversions run by this process (distributed ingest: the files the
    /// prepared store did not hold).
    pub local_conversions: usize,
    /// Conversions served from the prepared store (`--store`).
    pub store_hits: usize,
    /// Summaries served from the prepared store (no model call).
    pub store_curations: usize,
    /// Store objects that failed verification (truncated, tampered) and
    /// were redone here.
    pub store_corrupt: usize,
    /// Files the store did not hold, left for the next run (`--prepared-only`).
    pub deferred: usize,
    /// The source could not be listed at all (missing folder, unreachable
    /// remote): nothing of it was read, planted or marked stale.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unreachable: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A file planted with a suspect body.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SuspectFile {
    /// Source-relative path.
    pub path: String,
    /// Node id.
    pub id: String,
    /// Converter that produced the kept body.
    pub converter: String,
    /// Stable reason code (`raw_roff`, `raw_markup`, `replacement_chars`, ...).
    pub reason: String,
    /// What tripped the check.
    pub message: String,
}

/// The whole run.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct GardenReport {
    /// Report shape version.
    pub version: u32,
    /// `adopt` or `sync`.
    pub command: String,
    /// Nothing was written.
    pub dry_run: bool,
    /// One entry per source processed.
    pub sources: Vec<SourceReport>,
    /// Commits made, oldest first.
    pub commits: Vec<String>,
    /// Curator counters (dialect §4.3 keys) when `--curate` ran.
    pub curation: Option<serde_json::Value>,
    /// Branch rollups run after a curated adopt/sync.
    pub rollup: Option<RollupReport>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

impl SourceReport {
    /// Add a stage's part of the report: counters add up, lists append
    /// (every field is named, so a new one must say how it folds).
    pub(crate) fn absorb(&mut self, part: SourceReport) {
        let SourceReport {
            source: _,
            planted,
            branches,
            updated,
            unchanged,
            touched,
            moved,
            stale,
            summary_stale,
            unsupported,
            skipped,
            errors,
            known_problems,
            suspect,
            warnings,
            curation_fallbacks,
            aliases_clipped,
            files_seen,
            bytes_read,
            blobs_read,
            local_conversions,
            store_hits,
            store_curations,
            store_corrupt,
            deferred,
            unreachable,
        } = part;
        for (to, from) in [(&mut self.planted, planted), (&mut self.branches, branches), (&mut self.updated, updated)] {
            from.iter().for_each(|id| to.push(id));
        }
        self.moved.extend(moved);
        self.stale.extend(stale);
        self.summary_stale.extend(summary_stale);
        self.unsupported.extend(unsupported);
        self.skipped.extend(skipped);
        self.errors.extend(errors);
        self.suspect.extend(suspect);
        self.warnings.extend(warnings);
        self.curation_fallbacks.extend(curation_fallbacks);
        self.unchanged += unchanged;
        self.touched += touched;
        self.known_problems += known_problems;
        self.aliases_clipped += aliases_clipped;
        self.files_seen += files_seen;
        self.bytes_read += bytes_read;
        self.blobs_read += blobs_read;
        self.local_conversions += local_conversions;
        self.store_hits += store_hits;
        self.store_curations += store_curations;
        self.store_corrupt += store_corrupt;
        self.deferred += deferred;
        self.unreachable |= unreachable;
    }
}

impl SourceReport {
    /// Follow ids a rebalance re-homed (old -> final): moves' targets and
    /// the planted and updated lists name the new ids.
    pub(crate) fn rename_ids(&mut self, renamed: &std::collections::HashMap<String, String>) {
        if renamed.is_empty() {
            return;
        }
        for m in &mut self.moved {
            if let Some(to) = renamed.get(&m.to) {
                m.to = to.clone();
            }
        }
        for list in [&mut self.planted, &mut self.updated] {
            if let Err(e) = list.rename(renamed) {
                self.warnings.push(format!("report: re-homed ids not renamed in the id list: {e}"));
            }
        }
    }
}

/// A per-file report line.
pub(crate) fn err(path: &str, message: impl Into<String>) -> FileError {
    FileError { path: path.to_string(), message: message.into() }
}

impl GardenReport {
    /// True when any source reported a per-file error (exit 3).
    pub fn partial(&self) -> bool {
        self.sources.iter().any(|s| !s.errors.is_empty())
    }

    /// Every source of the run was unreachable: nothing was synced, which
    /// is a failure, not a partial run.
    pub fn failed(&self) -> bool {
        !self.sources.is_empty() && self.sources.iter().all(|s| s.unreachable)
    }
}

/// `forest rollup --json`.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct RollupReport {
    /// Report shape version.
    pub version: u32,
    /// Branches whose summary was rewritten.
    pub rolled: Vec<String>,
    /// Branches that got the deterministic summary (no curator or it failed).
    pub fallbacks: Vec<String>,
    /// Branches out of scope or without entries.
    pub skipped: usize,
    /// The commit, when anything changed.
    pub commit: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_parts_fold_and_rehomed_ids_are_followed() {
        let mut run = SourceReport { source: "drive".into(), files_seen: 3, ..Default::default() };
        run.planted.push("big/a".into());
        run.moved.push(MoveRecord { from: "old/b".into(), to: "big/b".into() });
        let mut part = SourceReport { source: "ignored".into(), bytes_read: 10, ..Default::default() };
        part.planted.push("big/c".into());
        part.errors.push(err("c.md", "bad"));
        let renamed: std::collections::HashMap<String, String> =
            [("big/a", "big/~a..b/a"), ("big/b", "big/~a..b/b")].map(|(o, n)| (o.into(), n.into())).into();
        run.rename_ids(&renamed);
        run.absorb(part);
        assert_eq!(run.source, "drive");
        assert_eq!(run.planted.to_vec(), ["big/~a..b/a", "big/c"]);
        assert_eq!(run.moved[0].to, "big/~a..b/b");
        assert_eq!((run.files_seen, run.bytes_read, run.errors.len()), (3, 10, 1));
        assert!(run.warnings.is_empty());
    }
}
