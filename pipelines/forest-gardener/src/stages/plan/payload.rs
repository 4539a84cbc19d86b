//! Payload side of the plan stage: FLESH policy (`content: cached |
//! reference`), BONE originals (`archive: always` copies) and SQLite
//! dataset payloads, all staged beside their final name and renamed by the
//! commit stage only after the commit landed.

use super::Batch;
use super::Planner;
use crate::report::err;
use crate::stages::convert::Converted;
use crate::stages::text::{ext_of, stem_of, TEXT_EXTS};
use forest_model::ids;
use forest_model::node::Node;
use forest_model::slug::slugify;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Why a payload could not be staged (a report line of its file).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PayloadError {
    /// A file operation failed.
    #[error("{what}")]
    Io {
        /// What was being done (with the path where it helps).
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The dataset could not be written as SQLite.
    #[error("dataset payload")]
    Dataset(#[source] forest_convert::ConvertError),
    /// Asked to stage a conversion that is no dataset.
    #[error("not a dataset")]
    NotADataset,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> PayloadError {
    let what = what.into();
    move |source| PayloadError::Io { what, source }
}

impl Planner<'_> {
    /// FLESH policy (dialect §3.11): `cached` moves the body to
    /// `_derived/bodies/<id>.md`, `reference` leaves it at the source (text
    /// sources only; others fall back to `cached`). The passport keeps a
    /// `# <title>` stub either way.
    pub(crate) fn apply_content_policy(&mut self, id: &str, ext: &str, title: &str, n: &mut Node, rel: &str) {
        let policy = match self.src.content.as_str() {
            "reference" if TEXT_EXTS.contains(&ext) => "reference",
            "reference" | "cached" => "cached",
            _ => return,
        };
        if policy == "cached" && !self.opts.dry_run {
            if let Err(e) = write_cached_body(self.forest, id, &n.body) {
                self.report.errors.push(err(rel, format!("cannot cache the body: {e}")));
                return;
            }
        }
        n.body = format!("# {title}\n");
        n.set_str("content", policy);
    }

    /// The `payload` of a binary original: its source URI (BONE stays at the
    /// source), or an `_assets/` copy under `archive: always`.
    pub(crate) fn bone_payload(&mut self, id: &str, c: &Converted, batch: &mut Batch) -> Result<String, PayloadError> {
        if self.src.archive != "always" {
            return Ok(c.origin.clone());
        }
        let ext = ext_of(&c.rel);
        let name = format!("{}-{}{}", &c.hash.sha256.get(..8).unwrap_or("00000000"), slugify(&stem_of(&c.rel)), ext);
        let rel_asset = format!("_assets/{name}");
        if self.opts.dry_run {
            return Ok(rel_asset);
        }
        let fin = self.forest.join(ids::folder_of(id)).join(&rel_asset);
        let staged = staged_path_for(&fin);
        if let Some(p) = staged.parent() {
            std::fs::create_dir_all(p).map_err(io(format!("cannot create {}", p.display())))?;
        }
        std::fs::copy(&c.abs, &staged).map_err(io("cannot copy the original"))?;
        batch.renames.push((staged, fin));
        Ok(rel_asset)
    }

    /// Write a dataset payload under a temp name; renamed after the commit.
    pub(crate) fn stage_dataset(
        &mut self,
        id: &str,
        tables: &[forest_convert::Table],
        batch: &mut Batch,
    ) -> Result<(String, String), PayloadError> {
        let name = format!("{}.db", id.rsplit('/').next().unwrap_or(id));
        let fin = self.forest.join(ids::folder_of(id)).join(&name);
        if self.opts.dry_run {
            return Ok((name, String::new()));
        }
        let staged = staged_path_for(&fin);
        if let Some(p) = staged.parent() {
            std::fs::create_dir_all(p).map_err(io(format!("cannot create {}", p.display())))?;
        }
        let hash = forest_convert::write_dataset_db(tables, &staged).map_err(PayloadError::Dataset)?;
        batch.renames.push((staged, fin));
        Ok((name, hash))
    }

    /// Copy an adopted SQLite file under a temp name; renamed after the commit.
    pub(crate) fn stage_copy(
        &mut self,
        id: &str,
        src: &Path,
        batch: &mut Batch,
    ) -> Result<(String, String), PayloadError> {
        let name = format!("{}.db", id.rsplit('/').next().unwrap_or(id));
        let fin = self.forest.join(ids::folder_of(id)).join(&name);
        if self.opts.dry_run {
            return Ok((name, String::new()));
        }
        let staged = staged_path_for(&fin);
        if let Some(p) = staged.parent() {
            std::fs::create_dir_all(p).map_err(io(format!("cannot create {}", p.display())))?;
        }
        let bytes = std::fs::read(src).map_err(io("cannot read payload"))?;
        let hash = hex::encode(Sha256::digest(&bytes));
        // Made durable by the commit barrier (see stage_dataset).
        forest_fs::write_replace_unsynced(&staged, &bytes).map_err(io("cannot stage payload"))?;
        batch.renames.push((staged, fin));
        Ok((name, hash))
    }
}

/// Where a payload waits for its commit: `.<name>.<pid>.<n>.staged` beside
/// the final file. Deliberately NOT a forest_fs temp name: the git layer
/// sweeps those after a crash, and a staged payload must survive until
/// [`crate::stages::commit::recover_payloads`] decides.
pub(crate) fn staged_path_for(fin: &Path) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = fin.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "payload".into());
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    fin.with_file_name(format!(".{name}.{}.{n}.staged", std::process::id()))
}

pub(crate) use forest_derived::paths::cached_body_path;

/// Write a cached body (a regenerable cache: no fsync per file).
pub(crate) fn write_cached_body(forest: &Path, id: &str, body: &str) -> std::io::Result<()> {
    let p = cached_body_path(forest, id);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d)?;
    }
    forest_fs::write_replace_unsynced(&p, body.as_bytes())
}
