//! `_derived/canopy/` on disk: the reference's `index.json` + `vectors.f32`
//! and our sidecars (`quant.i8`, `ids.bin`, `hashes.bin`, `forest.json`),
//! plus the `stale.json` marker.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{CanopyError, Result};

pub(crate) const INDEX: &str = "index.json";
pub(crate) const VECTORS: &str = "vectors.f32";
pub(crate) const QUANT: &str = "quant.i8";
pub(crate) const IDS: &str = "ids.bin";
pub(crate) const HASHES: &str = "hashes.bin";
pub(crate) const BITS: &str = "bits.b1";
pub(crate) const META: &str = "forest.json";
const STALE: &str = "stale.json";

pub(crate) const QUANT_MAGIC: &[u8; 8] = b"FCANI8\0\0";
pub(crate) const IDS_MAGIC: &[u8; 8] = b"FCANID\0\0";

/// `<forest>/_derived/canopy`.
pub fn canopy_dir(forest: &Path) -> PathBuf {
    forest.join("_derived").join("canopy")
}

/// The reference's `index.json`.
#[derive(Debug, Serialize, Deserialize)]
struct IndexJson {
    model: String,
    dim: usize,
    built_at: f64,
    ids: Vec<String>,
}

/// Our `forest.json`: what the sidecars were written for. A canopy whose
/// `vectors.f32` no longer has `f32_bytes` (the other engine rewrote it)
/// has sidecars that no longer describe it.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Meta {
    pub format: u32,
    pub model: String,
    pub dim: usize,
    pub rows: usize,
    pub f32_bytes: u64,
    pub built_at: f64,
}

/// A whole canopy in memory: ids sorted, one vector and one text hash each.
#[derive(Debug, Clone, PartialEq)]
pub struct Canopy {
    /// The model's identity.
    pub model: String,
    /// Vector width.
    pub dim: usize,
    /// Unix seconds of the last write.
    pub built_at: f64,
    /// Node ids in row order.
    pub ids: Vec<String>,
    /// Row-major unit vectors, `dim` per id.
    pub vectors: Vec<f32>,
    /// blake3 (first 16 bytes) of each row's embedded text; all zero when
    /// unknown (a canopy the other engine wrote).
    pub hashes: Vec<[u8; 16]>,
}

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> CanopyError + '_ {
    move |e| CanopyError::io(p, e)
}

fn damaged(dir: &Path, what: impl Into<String>) -> CanopyError {
    CanopyError::Damaged { dir: dir.to_path_buf(), what: what.into() }
}

pub(crate) fn read_meta(dir: &Path) -> Option<Meta> {
    let b = std::fs::read(dir.join(META)).ok()?;
    let m: Meta = serde_json::from_slice(&b).ok()?;
    let len = std::fs::metadata(dir.join(VECTORS)).ok()?.len();
    (m.format == 1 && len == m.f32_bytes).then_some(m)
}

pub(crate) fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

impl Canopy {
    /// An empty canopy of `model`.
    pub fn new(model: &str, dim: usize) -> Canopy {
        Canopy { model: model.into(), dim, built_at: 0.0, ids: vec![], vectors: vec![], hashes: vec![] }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// One row's vector.
    pub fn vector(&self, row: usize) -> &[f32] {
        &self.vectors[row * self.dim..(row + 1) * self.dim]
    }

    /// Whether `<forest>/_derived/canopy/` holds a canopy (both reference
    /// files).
    pub fn exists(dir: &Path) -> bool {
        dir.join(INDEX).is_file() && dir.join(VECTORS).is_file()
    }

    /// Read a canopy; `None` when there is none.
    pub fn load(dir: &Path) -> Result<Option<Canopy>> {
        if !Canopy::exists(dir) {
            return Ok(None);
        }
        let ip = dir.join(INDEX);
        let idx: IndexJson = serde_json::from_slice(&std::fs::read(&ip).map_err(io(&ip))?)
            .map_err(|source| CanopyError::Json { path: ip.clone(), source })?;
        let vp = dir.join(VECTORS);
        let raw = std::fs::read(&vp).map_err(io(&vp))?;
        if raw.len() != 4 * idx.dim * idx.ids.len() {
            return Err(damaged(
                dir,
                format!(
                    "vectors.f32 has {} bytes, {} ids of dim {} need {}",
                    raw.len(),
                    idx.ids.len(),
                    idx.dim,
                    4 * idx.dim * idx.ids.len()
                ),
            ));
        }
        let vectors: Vec<f32> = raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let n = idx.ids.len();
        let hashes = match read_meta(dir) {
            Some(m) if m.rows == n && m.model == idx.model => {
                let hp = dir.join(HASHES);
                let b = std::fs::read(&hp).unwrap_or_default();
                if b.len() == 16 * n {
                    b.chunks_exact(16).map(|c| c.try_into().unwrap_or([0; 16])).collect()
                } else {
                    vec![[0u8; 16]; n]
                }
            }
            _ => vec![[0u8; 16]; n],
        };
        Ok(Some(Canopy { model: idx.model, dim: idx.dim, built_at: idx.built_at, ids: idx.ids, vectors, hashes }))
    }

    /// `quant.i8`: 16-byte header (magic, dim u32, rows u32), then per row
    /// an f32 scale and `dim` int8 values (row ≈ scale × int8).
    pub(crate) fn quant_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.ids.len() * (4 + self.dim));
        // writing into a Vec cannot fail
        let _ = self.write_quant(&mut out);
        out
    }

    fn write_quant(&self, w: &mut dyn Write) -> std::io::Result<()> {
        w.write_all(QUANT_MAGIC)?;
        w.write_all(&(self.dim as u32).to_le_bytes())?;
        w.write_all(&(self.ids.len() as u32).to_le_bytes())?;
        let (mut q, mut row) = (vec![], Vec::with_capacity(4 + self.dim));
        for r in 0..self.ids.len() {
            row.clear();
            quant_row(self.vector(r), &mut q, &mut row);
            w.write_all(&row)?;
        }
        Ok(())
    }
}

/// Quantise a unit vector to int8: returns `scale` with `v ≈ scale × q`.
pub fn quantize(v: &[f32], q: &mut [i8]) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        q.iter_mut().for_each(|x| *x = 0);
        return 0.0;
    }
    let s = 127.0 / max;
    for (o, x) in q.iter_mut().zip(v) {
        *o = (x * s).round().clamp(-127.0, 127.0) as i8;
    }
    max / 127.0
}

/// Append one row of `quant.i8` (f32 scale, then `v` as int8) to `out`;
/// `q` is scratch.
pub(crate) fn quant_row(v: &[f32], q: &mut Vec<i8>, out: &mut Vec<u8>) {
    q.resize(v.len(), 0);
    let scale = quantize(v, q);
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(q.iter().map(|&x| x as u8));
}

/// `ids.bin`: magic, u64 count, count+1 u64 offsets into the UTF-8 bytes
/// that follow.
pub(crate) fn write_ids(w: &mut dyn Write, ids: &[String]) -> std::io::Result<()> {
    w.write_all(IDS_MAGIC)?;
    w.write_all(&(ids.len() as u64).to_le_bytes())?;
    let mut off = 0u64;
    w.write_all(&off.to_le_bytes())?;
    for id in ids {
        off += id.len() as u64;
        w.write_all(&off.to_le_bytes())?;
    }
    ids.iter().try_for_each(|id| w.write_all(id.as_bytes()))
}

/// [`write_ids`] into memory.
pub(crate) fn ids_bytes(ids: &[String]) -> Vec<u8> {
    let total: usize = ids.iter().map(String::len).sum();
    let mut out = Vec::with_capacity(16 + 8 * (ids.len() + 1) + total);
    // writing into a Vec cannot fail
    let _ = write_ids(&mut out, ids);
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let p = dir.join(name);
    forest_fs::atomic_write(&p, bytes).map_err(|e| CanopyError::io(&p, e))
}

#[derive(Serialize, Deserialize)]
struct Stale {
    reason: String,
    at: f64,
}

/// Record that a writer changed scents it could not embed: the canopy is
/// behind until the next `forest canopy build` (or a maintained write with
/// the model). Does nothing when there is no canopy.
pub fn mark_stale(dir: &Path, reason: &str) -> Result<()> {
    if !Canopy::exists(dir) || dir.join(STALE).is_file() {
        return Ok(());
    }
    let b = serde_json::to_vec(&Stale { reason: reason.into(), at: now() })
        .map_err(|source| CanopyError::Json { path: dir.join(STALE), source })?;
    write(dir, STALE, &b)
}

/// Remove the stale marker (a canopy written anew is current).
pub(crate) fn clear_stale(dir: &Path) -> Result<()> {
    match std::fs::remove_file(dir.join(STALE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(CanopyError::io(&dir.join(STALE), e)),
        _ => Ok(()),
    }
}

/// Beside the canopy (`_derived/canopy-full`): the full model's canopy a
/// writer set aside when its budget had it rebuild with the fast encoder,
/// so that the Ranger's upgrade embeds only what changed since.
pub fn kept_full_dir(dir: &Path) -> PathBuf {
    dir.with_file_name("canopy-full")
}

/// Hard-link the files a refresh reuses rows from (`forest.json`, ids,
/// hashes, vectors) from `dir` into `keep`, emptied first. Writers replace
/// canopy files by rename, so the links keep these rows as they are.
/// `false`, and no `keep`, when a link cannot be made.
pub(crate) fn keep_canopy(dir: &Path, keep: &Path) -> bool {
    drop_kept(keep);
    let ok = std::fs::create_dir_all(keep).is_ok()
        && [META, IDS, HASHES, VECTORS].iter().all(|n| std::fs::hard_link(dir.join(n), keep.join(n)).is_ok());
    if !ok {
        drop_kept(keep);
    }
    ok
}

/// Remove a set-aside canopy (nothing when there is none).
pub(crate) fn drop_kept(keep: &Path) {
    if let Err(e) = std::fs::remove_dir_all(keep) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(event = "canopy.keep_failed", path = %keep.display(), error = %e);
        }
    }
}

/// Why the canopy is stale, when it is.
pub fn stale_reason(dir: &Path) -> Option<String> {
    let b = std::fs::read(dir.join(STALE)).ok()?;
    Some(serde_json::from_slice::<Stale>(&b).map_or_else(|_| "stale.json is present".into(), |s| s.reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Canopy {
        let mut c = Canopy::new("m@1", 2);
        c.ids = vec!["a".into(), "b/c".into()];
        c.vectors = vec![1.0, 0.0, 0.6, 0.8];
        c.hashes = vec![[1; 16], [2; 16]];
        c
    }

    #[test]
    fn save_load_round_trip_and_reference_layout() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("canopy");
        let mut c = sample();
        c.save(&d).unwrap();
        let mut back = Canopy::load(&d).unwrap().unwrap();
        // `built_at` (epoch seconds, f64) may come back one ulp off: JSON
        // parsing is not exact without serde_json's float_roundtrip.
        assert!((back.built_at - c.built_at).abs() < 1e-3, "{} vs {}", back.built_at, c.built_at);
        back.built_at = c.built_at;
        assert_eq!(back, c);
        let idx: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join(INDEX)).unwrap()).unwrap();
        assert_eq!(idx["model"], "m@1");
        assert_eq!(idx["dim"], 2);
        assert_eq!(idx["ids"], serde_json::json!(["a", "b/c"]));
        assert_eq!(std::fs::read(d.join(VECTORS)).unwrap().len(), 16);
    }

    #[test]
    fn foreign_rewrite_drops_hashes_and_partial_write_is_damage() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("canopy");
        sample().save(&d).unwrap();
        // the other engine appended a row: forest.json no longer matches
        let mut v = std::fs::read(d.join(VECTORS)).unwrap();
        v.extend_from_slice(&[0; 8]);
        std::fs::write(d.join(VECTORS), &v).unwrap();
        let e = Canopy::load(&d).unwrap_err();
        assert_eq!(e.code(), "E_CANOPY_DAMAGED");
        std::fs::write(d.join(INDEX), br#"{"model":"m@1","dim":2,"built_at":0,"ids":["a","b/c","d"]}"#).unwrap();
        let c = Canopy::load(&d).unwrap().unwrap();
        assert_eq!(c.hashes, vec![[0; 16]; 3]);
    }

    #[test]
    fn stale_marker_only_with_a_canopy_and_cleared_by_save() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("canopy");
        mark_stale(&d, "no model").unwrap();
        assert_eq!(stale_reason(&d), None);
        let mut c = sample();
        c.save(&d).unwrap();
        mark_stale(&d, "no model").unwrap();
        assert_eq!(stale_reason(&d).as_deref(), Some("no model"));
        c.save(&d).unwrap();
        assert_eq!(stale_reason(&d), None);
    }
}
