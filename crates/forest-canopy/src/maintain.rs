//! Building and maintaining a canopy: only rows whose embedded text changed
//! (or that are new) are embedded again, ids no longer in the forest are
//! dropped, rows stay sorted by id, so a maintained canopy equals a rebuild.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::embed::Embedder;
use crate::error::Result;
use crate::store::{mark_stale, Canopy};

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

/// What a writer calls after it changed scents: nothing without a canopy;
/// without a model, the canopy is marked stale (`reason`); else refreshed.
pub fn maintain(
    dir: &Path,
    rows: impl FnOnce() -> Result<Vec<(String, String)>>,
    embedder: Option<&dyn Embedder>,
) -> Result<Option<RefreshReport>> {
    if !Canopy::exists(dir) {
        return Ok(None);
    }
    match embedder {
        None => {
            mark_stale(dir, &format!("scents changed while {} was unset", crate::embed::MODEL_VAR))?;
            Ok(None)
        }
        Some(e) => Ok(Some(refresh(dir, rows()?, e, false)?)),
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
