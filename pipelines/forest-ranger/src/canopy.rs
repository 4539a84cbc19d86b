//! The canopy's second tier in a Ranger run: the full model over a fast
//! canopy, within `canopy_full_max_nodes`. Its long part (every row through
//! the transformer, about 20 minutes at 10^5 nodes on 2 cores) runs before
//! the run takes the writer lock, so syncs and writes go on meanwhile; the
//! run itself, under the lock, embeds only what changed since
//! ([`forest_canopy::stage_upgrade`], [`forest_canopy::upgrade_forest`]).
//! A canopy problem never fails a run (the canopy is disposable).

use std::path::Path;

use forest_catalog::Catalog;
use forest_git::{GitError, WriterLock};

use crate::RangerConfig;

/// The writer lock for a run, taken after the second tier's long part: a
/// forest another writer holds fails at once, as before (the long part is
/// not spent on a run that could not follow it); else the full model
/// stages its rows without the lock and the lock is taken again. Returns
/// the lock and the rows the staging embedded (for the run's report).
pub fn lock_after_staging(forest: &Path, cfg: &RangerConfig) -> std::result::Result<(WriterLock, usize), GitError> {
    drop(WriterLock::acquire(forest)?);
    let staged = stage(forest, cfg);
    Ok((WriterLock::acquire(forest)?, staged))
}

/// Stage the full model's rows (see [`forest_canopy::stage_upgrade`]) from
/// a read-only view of the catalog; 0 when there was nothing to stage.
fn stage(forest: &Path, cfg: &RangerConfig) -> usize {
    let path = forest.join(forest_derived::catalog::CATALOG_PATH);
    if !path.is_file() {
        return 0;
    }
    let staged = Catalog::open_read_only(&path).map_err(|e| forest_model::error_chain(&e)).and_then(|c| {
        forest_canopy::stage_upgrade(forest, &c, cfg.canopy_full_max_nodes as usize)
            .map_err(|e| forest_model::error_chain(&e))
    });
    match staged {
        Ok(r) => r.map_or(0, |r| r.embedded),
        Err(error) => {
            tracing::warn!(event = "canopy.stage_failed", %error);
            0
        }
    }
}

/// The second tier under the lock, after the run's commit: the nodes it
/// embedded, when it rebuilt the canopy.
pub(crate) fn second_tier(forest: &Path, catalog: &Catalog, cfg: &RangerConfig) -> Option<usize> {
    match forest_canopy::upgrade_forest(forest, catalog, cfg.canopy_full_max_nodes as usize) {
        Ok(r) => r.map(|r| r.embedded),
        Err(e) => {
            tracing::warn!(event = "canopy.upgrade_failed", code = e.code(), error = %forest_model::error_chain(&e));
            None
        }
    }
}
