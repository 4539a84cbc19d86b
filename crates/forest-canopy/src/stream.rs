//! A canopy streamed to and from disk, so that building or refreshing one
//! holds a window of rows, not the layer: at 10^6 rows of 384 floats the
//! vectors alone are 1.5 GB, the texts about as much again.
//!
//! - [`Rows`]: where `(id, text)` rows come from, sorted by id and unique
//!   (the catalog, `ORDER BY id`; or a vector sorted first);
//! - [`Writer`]: every file of a canopy written row by row into temporary
//!   files and renamed into place at [`Writer::finish`] in the order a
//!   reader checks them (`forest.json` last);
//! - [`OldRows`]: the canopy being replaced, read forwards: ids through a
//!   map of `ids.bin`, vectors through a buffered reader of `vectors.f32`
//!   (not a map: a refresh reads every reused row once, and mapped pages
//!   would stay resident for the whole run).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use serde::Serialize;

use crate::binary;
use crate::error::{CanopyError, Result};
use crate::store::{self, read_meta, Canopy, IDS_MAGIC, QUANT_MAGIC};

/// A source of `(id, text)` rows, visited in ascending id order (byte
/// order, as SQLite's `ORDER BY` on a text key), each id once.
pub trait Rows {
    /// Call `f` with every row, in order; stop at its first error.
    fn visit(&self, f: &mut dyn FnMut(String, String) -> Result<()>) -> Result<()>;
}

/// Rows held in memory, sorted by id and deduplicated on construction
/// (the first of equal ids is kept).
pub struct SortedRows(Vec<(String, String)>);

impl SortedRows {
    /// Sort and deduplicate `rows`.
    pub fn new(mut rows: Vec<(String, String)>) -> SortedRows {
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.dedup_by(|a, b| a.0 == b.0);
        SortedRows(rows)
    }
}

impl Rows for SortedRows {
    fn visit(&self, f: &mut dyn FnMut(String, String) -> Result<()>) -> Result<()> {
        self.0.iter().try_for_each(|(id, t)| f(id.clone(), t.clone()))
    }
}

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> CanopyError + '_ {
    move |e| CanopyError::io(p, e)
}

/// One file being written under a temporary name; dropped before
/// [`Part::close`], it removes its file.
struct Part {
    tmp: PathBuf,
    name: &'static str,
    w: Option<BufWriter<File>>,
}

impl Part {
    fn create(dir: &Path, name: &'static str) -> Result<Part> {
        let tmp = forest_fs::temp_path_for(&dir.join(name));
        let f = File::create(&tmp).map_err(io(&tmp))?;
        Ok(Part { tmp, name, w: Some(BufWriter::with_capacity(1 << 20, f)) })
    }

    fn writer(&mut self) -> &mut BufWriter<File> {
        self.w.as_mut().expect("a part is written only before it is closed")
    }

    fn put(&mut self, b: &[u8]) -> Result<()> {
        let Part { tmp, w, .. } = self;
        w.as_mut()
            .expect("a part is written only before it is closed")
            .write_all(b)
            .map_err(|e| CanopyError::io(tmp, e))
    }

    /// Flush, write `header` at offset 0 when given, fsync; the file is
    /// then the caller's to rename or remove.
    fn close(mut self, header: Option<&[u8]>) -> Result<(PathBuf, &'static str)> {
        let w = self.w.take().expect("closed once");
        let tmp = self.tmp.clone();
        let done = (|| {
            let mut f = w.into_inner().map_err(std::io::IntoInnerError::into_error)?;
            if let Some(h) = header {
                f.seek(SeekFrom::Start(0))?;
                f.write_all(h)?;
            }
            f.sync_all()
        })();
        match done {
            Ok(()) => Ok((tmp, self.name)),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(CanopyError::io(&tmp, e))
            }
        }
    }
}

impl Drop for Part {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The reference's `index.json`, serialised from borrowed ids.
#[derive(Serialize)]
struct IndexOut<'a> {
    model: &'a str,
    dim: usize,
    built_at: f64,
    ids: &'a [String],
}

/// A canopy written row by row. The vectors are written as they come (float32, int8 with its scale, sign
/// bits), ids and text hashes are kept for `ids.bin`, `hashes.bin` and
/// `index.json` (about 100 bytes a row). Dropped without
/// [`Writer::finish`] (or when it fails), its temporary files are removed
/// and the canopy on disk is untouched.
pub struct Writer {
    dir: PathBuf,
    model: String,
    dim: usize,
    ids: Vec<String>,
    hashes: Vec<[u8; 16]>,
    parts: [Part; 3],
    q: Vec<i8>,
    code: Vec<u64>,
    row: Vec<u8>,
}

const HEADER: [u8; 16] = [0; 16];

impl Writer {
    /// Start writing a canopy of `model` into `dir` (created if needed;
    /// temporary files of writers that were killed are removed). `dim` is
    /// the width when known, else 0: the first row sets it.
    pub fn create(dir: &Path, model: &str, dim: usize) -> Result<Writer> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        // a build killed mid-way left its temporary files (1.5 GB of
        // floats at 10^6 rows): they go now
        let swept = forest_fs::sweep_orphan_temps(dir);
        if swept > 0 {
            tracing::info!(event = "canopy.swept", files = swept);
        }
        let mut parts =
            [Part::create(dir, store::VECTORS)?, Part::create(dir, store::QUANT)?, Part::create(dir, store::BITS)?];
        // room for the int8 and bit headers, written once the rows are counted
        parts[1].put(&HEADER)?;
        parts[2].put(&HEADER)?;
        Ok(Writer {
            dir: dir.to_path_buf(),
            model: model.into(),
            dim,
            ids: vec![],
            hashes: vec![],
            parts,
            q: vec![],
            code: vec![],
            row: vec![],
        })
    }

    /// Rows written so far.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No row written yet.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Append one row: its id, the hash of its embedded text and its unit
    /// vector (rows are kept in the order they come).
    pub fn push(&mut self, id: String, hash: [u8; 16], v: &[f32]) -> Result<()> {
        if self.dim == 0 {
            self.dim = v.len();
        }
        if v.len() != self.dim {
            let what = format!("row '{id}' has width {}, the canopy's is {}", v.len(), self.dim);
            return Err(CanopyError::Damaged { dir: self.dir.clone(), what });
        }
        let parts = &mut self.parts;
        self.row.clear();
        v.iter().for_each(|x| self.row.extend_from_slice(&x.to_le_bytes()));
        parts[0].put(&self.row)?;
        self.row.clear();
        store::quant_row(v, &mut self.q, &mut self.row);
        parts[1].put(&self.row)?;
        self.row.clear();
        binary::bits_row(v, &mut self.code, &mut self.row);
        parts[2].put(&self.row)?;
        self.ids.push(id);
        self.hashes.push(hash);
        Ok(())
    }

    /// Write the rest (`ids.bin`, `hashes.bin`, `index.json`, `forest.json`),
    /// rename every file into place (the vectors first, `forest.json` last:
    /// a reader that finds `forest.json` not matching `vectors.f32` ignores
    /// the sidecars) and clear the stale marker.
    pub fn finish(self) -> Result<Written> {
        let Writer { dir, model, dim, ids, hashes, parts, .. } = self;
        let rest = Rest { dir, model, dim, ids, hashes };
        let mut temps = vec![];
        let out = rest.write(parts, &mut temps);
        if out.is_err() {
            temps.iter().for_each(|(t, _)| drop(std::fs::remove_file(t)));
        }
        out.map(|built_at| Written { dim, built_at })
    }
}

/// What [`Writer::finish`] wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Written {
    /// Vector width.
    pub dim: usize,
    /// Unix seconds recorded in `index.json` and `forest.json`.
    pub built_at: f64,
}

/// What a finished writer still has to write.
struct Rest {
    dir: PathBuf,
    model: String,
    dim: usize,
    ids: Vec<String>,
    hashes: Vec<[u8; 16]>,
}

impl Rest {
    fn write(&self, parts: [Part; 3], temps: &mut Vec<(PathBuf, &'static str)>) -> Result<f64> {
        let [vectors, quant, bits] = parts;
        let (dim, rows) = (self.dim as u32, self.ids.len() as u32);
        let header = |magic: &[u8; 8]| [&magic[..], &dim.to_le_bytes(), &rows.to_le_bytes()].concat();
        temps.push(vectors.close(None)?);
        temps.push(quant.close(Some(&header(QUANT_MAGIC)))?);
        temps.push(bits.close(Some(&header(binary::BITS_MAGIC)))?);
        let mut ids = Part::create(&self.dir, store::IDS)?;
        store::write_ids(ids.writer(), &self.ids).map_err(|e| CanopyError::io(&ids.tmp, e))?;
        temps.push(ids.close(None)?);
        let mut hashes = Part::create(&self.dir, store::HASHES)?;
        self.hashes.iter().try_for_each(|h| hashes.put(h))?;
        temps.push(hashes.close(None)?);
        let built_at = store::now();
        let json_err = |name: &str| {
            let path = self.dir.join(name);
            move |source| CanopyError::Json { path, source }
        };
        let mut index = Part::create(&self.dir, store::INDEX)?;
        let idx = IndexOut { model: &self.model, dim: self.dim, built_at, ids: &self.ids };
        serde_json::to_writer(index.writer(), &idx).map_err(json_err(store::INDEX))?;
        temps.push(index.close(None)?);
        let meta = store::Meta {
            format: 1,
            model: self.model.clone(),
            dim: self.dim,
            rows: self.ids.len(),
            f32_bytes: 4 * (self.dim * self.ids.len()) as u64,
            built_at,
        };
        let mut mp = Part::create(&self.dir, store::META)?;
        serde_json::to_writer(mp.writer(), &meta).map_err(json_err(store::META))?;
        temps.push(mp.close(None)?);
        // in a reader's order: forest.json last
        while !temps.is_empty() {
            let (tmp, name) = temps.remove(0);
            let p = self.dir.join(name);
            if let Err(e) = forest_fs::atomic_rename(&tmp, &p) {
                let _ = std::fs::remove_file(&tmp);
                return Err(CanopyError::io(&p, e));
            }
        }
        store::clear_stale(&self.dir)?;
        Ok(built_at)
    }
}

/// The canopy on disk, read forwards while its replacement is written:
/// only a canopy with our sidecars for its current vectors (so with the
/// text hash of every row) and of the wanted model can give rows back.
pub struct OldRows {
    rows: usize,
    dim: usize,
    ids: Mmap,
    hashes: Vec<[u8; 16]>,
    f32s: BufReader<File>,
    path: PathBuf,
    /// The next row `f32s` will read.
    at: usize,
    buf: Vec<u8>,
}

impl OldRows {
    /// Open `dir`'s canopy when it is ours and of `model`; `None` when
    /// there is none, it is another model's or the other engine's (no
    /// hashes: every row is embedded again), or its files do not agree.
    pub fn open(dir: &Path, model: Option<&str>) -> Option<OldRows> {
        let meta = read_meta(dir)?;
        if model.is_some_and(|m| m != meta.model) {
            return None;
        }
        let f = File::open(dir.join(store::IDS)).ok()?;
        // SAFETY: read-only map of a file writers only replace by rename.
        let ids = unsafe { Mmap::map(&f) }.ok()?;
        let hb = std::fs::read(dir.join(store::HASHES)).ok()?;
        let n = meta.rows;
        let count = ids.get(8..16).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize);
        if hb.len() != 16 * n || ids.len() < 16 + 8 * (n + 1) || &ids[..8] != IDS_MAGIC || count != Some(n) {
            return None;
        }
        let hashes = hb.chunks_exact(16).map(|c| c.try_into().unwrap_or([0; 16])).collect();
        let path = dir.join(store::VECTORS);
        let f32s = BufReader::with_capacity(1 << 16, File::open(&path).ok()?);
        Some(OldRows { rows: n, dim: meta.dim, ids, hashes, f32s, path, at: 0, buf: vec![] })
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Vector width.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The bytes of row `r`'s id.
    pub fn id(&self, r: usize) -> &[u8] {
        let off = |i: usize| {
            let at = 16 + 8 * i;
            u64::from_le_bytes(self.ids[at..at + 8].try_into().unwrap_or([0; 8])) as usize
        };
        let base = 16 + 8 * (self.rows + 1);
        self.ids.get(base + off(r)..base + off(r + 1)).unwrap_or_default()
    }

    /// Row `r`'s text hash.
    pub fn hash(&self, r: usize) -> [u8; 16] {
        self.hashes[r]
    }

    /// Row `r`'s vector; rows must be asked in ascending order.
    pub fn vector(&mut self, r: usize, out: &mut Vec<f32>) -> Result<()> {
        let width = 4 * self.dim;
        if r < self.at {
            self.f32s.seek(SeekFrom::Start((r * width) as u64)).map_err(io(&self.path))?;
        } else if r > self.at {
            self.f32s.seek_relative(((r - self.at) * width) as i64).map_err(io(&self.path))?;
        }
        self.buf.resize(width, 0);
        self.f32s.read_exact(&mut self.buf).map_err(io(&self.path))?;
        self.at = r + 1;
        out.clear();
        out.extend(self.buf.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
        Ok(())
    }
}

/// Saving a whole in-memory canopy is a stream of its rows.
impl Canopy {
    /// Write every file (sidecars first, `forest.json` last) and clear the
    /// stale marker, streamed as a build writes them.
    pub fn save(&mut self, dir: &Path) -> Result<()> {
        let mut w = Writer::create(dir, &self.model, self.dim)?;
        for r in 0..self.len() {
            w.push(self.ids[r].clone(), self.hashes[r], self.vector(r))?;
        }
        self.built_at = w.finish()?.built_at;
        Ok(())
    }
}
