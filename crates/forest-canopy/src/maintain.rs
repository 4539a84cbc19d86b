//! Building and maintaining a canopy: only rows whose embedded text changed
//! (or that are new) are embedded again, ids no longer in the forest are
//! dropped, rows stay sorted by id, so a maintained canopy equals a rebuild.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::embed::Embedder;
use crate::error::Result;
use crate::search::Searcher;
use crate::store::{mark_stale, stale_reason, Canopy, HASHES};

/// What a build or refresh did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefreshReport {
    /// Vectors in the canopy now.
    pub nodes: usize,
    /// Texts embedded by this run.
    pub embedded: usize,
    /// Rows dropped (nodes gone).
    pub removed: usize,
    /// The model's identity.
    pub model: String,
    /// Vector width.
    pub dim: usize,
}

/// Which rows to reuse and which to embed (pure).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Per wanted row: the old row whose vector is reused, or `None`.
    pub reuse: Vec<Option<usize>>,
    /// Indices of the wanted rows to embed.
    pub embed: Vec<usize>,
    /// Old rows not kept.
    pub removed: usize,
}

/// The text's hash as stored in `hashes.bin`.
pub(crate) fn text_hash(text: &str) -> [u8; 16] {
    let h = blake3::hash(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.as_bytes()[..16]);
    out
}

/// Plan an update of `old` (ids and hashes) to `wanted` (ids and text
/// hashes, sorted by id): a row is reused when its id and hash match.
pub fn plan_update(old_ids: &[String], old_hashes: &[[u8; 16]], wanted: &[(String, [u8; 16])]) -> Plan {
    let at: HashMap<&str, usize> = old_ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    let mut reuse = Vec::with_capacity(wanted.len());
    let mut embed = vec![];
    for (i, (id, h)) in wanted.iter().enumerate() {
        match at.get(id.as_str()) {
            Some(&o) if old_hashes.get(o) == Some(h) && *h != [0; 16] => {
                reuse.push(Some(o));
            }
            _ => {
                reuse.push(None);
                embed.push(i);
            }
        }
    }
    let still: usize = wanted.iter().filter(|(id, _)| at.contains_key(id.as_str())).count();
    Plan { reuse, embed, removed: old_ids.len() - still }
}

/// Bring the canopy in `dir` to `rows` (`(id, text)`, any order): a full
/// build when `full`, when there is none or when it was made by another
/// model; else only changed and new texts are embedded.
pub fn refresh(dir: &Path, rows: Vec<(String, String)>, embedder: &dyn Embedder, full: bool) -> Result<RefreshReport> {
    let mut rows = rows;
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.dedup_by(|a, b| a.0 == b.0);
    let old = if full { None } else { Canopy::load(dir).ok().flatten().filter(|c| c.model == embedder.model()) };
    let old = old.unwrap_or_else(|| Canopy::new(embedder.model(), 0));
    let wanted: Vec<(String, [u8; 16])> = rows.iter().map(|(id, t)| (id.clone(), text_hash(t))).collect();
    let plan = plan_update(&old.ids, &old.hashes, &wanted);
    let texts: Vec<String> = plan.embed.iter().map(|&i| rows[i].1.clone()).collect();
    let fresh = embedder.embed(&texts)?;
    let dim = fresh.first().map_or(old.dim, Vec::len);
    let mut new = Canopy::new(embedder.model(), dim);
    let mut fresh_at: HashMap<usize, &Vec<f32>> = HashMap::new();
    for (k, &i) in plan.embed.iter().enumerate() {
        fresh_at.insert(i, &fresh[k]);
    }
    for (i, (id, h)) in wanted.into_iter().enumerate() {
        let v: &[f32] = match plan.reuse[i] {
            Some(o) => old.vector(o),
            None => fresh_at[&i],
        };
        new.ids.push(id);
        new.hashes.push(h);
        new.vectors.extend_from_slice(v);
    }
    tracing::info!(
        event = "canopy.refresh",
        nodes = new.len(),
        embedded = plan.embed.len(),
        removed = plan.removed,
        model = new.model.as_str()
    );
    new.save(dir)?;
    Ok(RefreshReport { nodes: new.len(), embedded: plan.embed.len(), removed: plan.removed, model: new.model, dim })
}

/// Whether the canopy in `dir` holds exactly `wanted` (same ids in order,
/// same known text hashes); `false` when anything differs or cannot be told
/// (no sidecars).
fn holds(dir: &Path, wanted: &[(String, [u8; 16])]) -> bool {
    let Ok(Some(s)) = Searcher::open(dir) else { return false };
    let Ok(hashes) = std::fs::read(dir.join(HASHES)) else { return false };
    s.len() == wanted.len()
        && hashes.len() == 16 * wanted.len()
        && wanted
            .iter()
            .zip(hashes.chunks_exact(16))
            .enumerate()
            .all(|(r, ((id, h), old))| *h != [0; 16] && old == h && s.id(r) == *id)
}

/// A model to embed with, loaded only when needed (`None`: unset).
pub type Loader<'a> = &'a dyn Fn() -> Result<Option<Arc<dyn Embedder>>>;

/// What a writer calls after its commit: nothing without a canopy, nor when
/// no embedded text changed (links, bodies and landmarks are not scent) and
/// the canopy is not stale; else the model is loaded and the changed texts
/// embedded, or, without a model, the canopy is marked stale. A model that
/// fails to load marks it stale too, and the error is returned.
pub fn maintain(
    dir: &Path,
    rows: impl FnOnce() -> Result<Vec<(String, String)>>,
    load: Loader<'_>,
) -> Result<Option<RefreshReport>> {
    if !Canopy::exists(dir) {
        return Ok(None);
    }
    let stale = stale_reason(dir).is_some();
    let mut rows = rows()?;
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.dedup_by(|a, b| a.0 == b.0);
    let wanted: Vec<(String, [u8; 16])> = rows.iter().map(|(id, t)| (id.clone(), text_hash(t))).collect();
    let unchanged = holds(dir, &wanted);
    drop(wanted);
    if unchanged && !stale {
        return Ok(None);
    }
    match load() {
        Ok(Some(e)) => Ok(Some(refresh(dir, rows, e.as_ref(), false)?)),
        Ok(None) if unchanged => Ok(None),
        Ok(None) => {
            mark_stale(dir, &format!("scents changed while {} was unset", crate::embed::MODEL_VAR))?;
            Ok(None)
        }
        Err(e) => {
            mark_stale(dir, &format!("the embedding model did not load: {e}"))?;
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_reuses_same_text_embeds_changed_and_new_drops_gone() {
        let old_ids: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let old_h = vec![text_hash("A"), text_hash("B"), text_hash("C")];
        let wanted =
            vec![("a".to_string(), text_hash("A")), ("b".into(), text_hash("B2")), ("d".into(), text_hash("D"))];
        let p = plan_update(&old_ids, &old_h, &wanted);
        assert_eq!(p.reuse, vec![Some(0), None, None]);
        assert_eq!(p.embed, vec![1, 2]);
        assert_eq!(p.removed, 1);
    }

    #[test]
    fn unknown_hashes_are_embedded_again() {
        let p = plan_update(&["a".to_string()], &[[0; 16]], &[("a".to_string(), [0; 16])]);
        assert_eq!(p.embed, vec![0]);
    }
}
