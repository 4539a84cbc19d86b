//! Vector search: an exact scan over memory-mapped int8 rows, the best
//! candidates rescored with the float32 vectors (f64 sums, ties by row
//! order as the reference breaks them).

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

use crate::binary;
use crate::error::{CanopyError, Result};
use crate::store::{self, quantize, Canopy, IDS_MAGIC, QUANT_MAGIC};

/// Integer dot product, written so the compiler vectorises it (i8 -> i32
/// lanes, 32 at a time).
#[inline(always)]
fn dot_i8(a: &[i8], b: &[u8]) -> i32 {
    let mut acc = [0i32; 32];
    let (ca, cb) = (a.chunks_exact(32), b.chunks_exact(32));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..32 {
            acc[l] += i32::from(x[l]) * i32::from(y[l] as i8);
        }
    }
    let mut s: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += i32::from(*x) * i32::from(*y as i8);
    }
    s
}

enum Bytes {
    Map(Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

fn map(dir: &Path, name: &str) -> Result<Bytes> {
    let p = dir.join(name);
    let f = std::fs::File::open(&p).map_err(|e| CanopyError::io(&p, e))?;
    // SAFETY: read-only map of a file that writers only ever replace by
    // rename (forest_fs::atomic_write), never rewrite in place.
    let m = unsafe { Mmap::map(&f) }.map_err(|e| CanopyError::io(&p, e))?;
    Ok(Bytes::Map(m))
}

/// An open canopy for queries: int8 rows, ids and float32 rows mapped, so
/// a `locate` process reads only the pages it touches.
pub struct Searcher {
    model: String,
    dim: usize,
    rows: usize,
    quant: Bytes,
    ids: Bytes,
    f32s: Bytes,
    /// `bits.b1`, when present and matching (canopies written before it
    /// existed, or by the other engine, have none).
    bits: Option<Bytes>,
}

/// What identifies a canopy's files on disk: per file (inode, size,
/// mtime). Writers replace them by rename, so a rewrite changes it.
type Stamp = Vec<Option<(u64, u64, u128)>>;

fn stamp(dir: &Path) -> Stamp {
    [store::META, store::INDEX, store::VECTORS, store::QUANT, store::BITS, store::IDS]
        .iter()
        .map(|n| {
            let m = std::fs::metadata(dir.join(n)).ok()?;
            let t = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
            #[cfg(unix)]
            let ino = std::os::unix::fs::MetadataExt::ino(&m);
            #[cfg(not(unix))]
            let ino = 0;
            Some((ino, m.len(), t))
        })
        .collect()
}

/// The searcher last opened in this process, with its directory and stamp.
type Open = Option<(PathBuf, Stamp, Arc<Searcher>)>;
static OPEN: Mutex<Open> = Mutex::new(None);

/// [`Searcher::open`], kept open across calls while the files are the
/// same (a served forest's `locate` calls would otherwise map the files
/// and fault in the sign bits, 48 MB at 10^6 rows, on every query).
pub fn open_shared(dir: &Path) -> Result<Option<Arc<Searcher>>> {
    let before = stamp(dir);
    {
        let slot = OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((d, st, s)) = slot.as_ref() {
            if d == dir && *st == before {
                return Ok(Some(Arc::clone(s)));
            }
        }
    }
    let Some(s) = Searcher::open(dir)? else { return Ok(None) };
    let s = Arc::new(s);
    // a writer that replaced files meanwhile: answer, but keep nothing
    if stamp(dir) == before {
        let mut slot = OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *slot = Some((dir.to_path_buf(), before, Arc::clone(&s)));
    }
    Ok(Some(s))
}

/// Canopies of at least this many rows are searched through their binary
/// codes first (see [`Searcher::search`]).
pub const BINARY_FROM: usize = 200_000;
/// Rows the binary pass keeps for exact rescoring, per result asked (up to
/// [`BINARY_KEEP_K`] results: `locate`'s blend asks 50 deep, and rescoring
/// 4,000 rows scattered over a 10^6-row file cost a fresh process ~12 ms
/// of page faults for results 26-50, which only feed the fusion's tail).
const BINARY_KEEP_PER_K: usize = 80;
/// Results asked beyond which the binary pass keeps no more rows.
const BINARY_KEEP_K: usize = 25;
/// ... and at least.
const BINARY_KEEP_MIN: usize = 2000;

fn damaged(dir: &Path, what: &str) -> CanopyError {
    CanopyError::Damaged { dir: dir.to_path_buf(), what: what.into() }
}

impl Searcher {
    /// Open `dir`; `None` without a canopy. A canopy the other engine wrote
    /// (no sidecars, or sidecars for other vectors) is read whole and
    /// quantised in memory.
    pub fn open(dir: &Path) -> Result<Option<Searcher>> {
        if !Canopy::exists(dir) {
            return Ok(None);
        }
        let Some(meta) = store::read_meta(dir) else {
            let Some(c) = Canopy::load(dir)? else { return Ok(None) };
            return Ok(Some(Searcher::from_canopy(&c)));
        };
        let s = Searcher {
            quant: map(dir, store::QUANT)?,
            ids: map(dir, store::IDS)?,
            f32s: map(dir, store::VECTORS)?,
            bits: map(dir, store::BITS).ok(),
            model: meta.model,
            dim: meta.dim,
            rows: meta.rows,
        };
        if s.quant.len() != 16 + s.rows * (4 + s.dim) || &s.quant[..8] != QUANT_MAGIC {
            return Err(damaged(dir, "quant.i8 does not match forest.json"));
        }
        if s.ids.len() < 16 + 8 * (s.rows + 1) || &s.ids[..8] != IDS_MAGIC || s.id_count() != s.rows {
            return Err(damaged(dir, "ids.bin does not match forest.json"));
        }
        if s.f32s.len() != 4 * s.dim * s.rows {
            return Err(damaged(dir, "vectors.f32 does not match forest.json"));
        }
        let mut s = s;
        let bits_len = 16 + s.rows * 8 * binary::words(s.dim);
        if s.bits.as_ref().is_some_and(|b| b.len() != bits_len || &b[..8] != binary::BITS_MAGIC) {
            s.bits = None;
        }
        Ok(Some(s))
    }

    /// A searcher over an in-memory canopy.
    pub fn from_canopy(c: &Canopy) -> Searcher {
        let f32s: Vec<u8> = c.vectors.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut bits = vec![];
        // writing into a Vec cannot fail
        let _ = binary::write_bits(&mut bits, c.dim, &c.vectors);
        Searcher {
            model: c.model.clone(),
            dim: c.dim,
            rows: c.len(),
            quant: Bytes::Owned(c.quant_bytes()),
            ids: Bytes::Owned(store::ids_bytes(&c.ids)),
            f32s: Bytes::Owned(f32s),
            bits: Some(Bytes::Owned(bits)),
        }
    }

    /// The model the vectors were made with.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Vector width.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    fn id_count(&self) -> usize {
        u64::from_le_bytes(self.ids[8..16].try_into().unwrap_or([0; 8])) as usize
    }

    /// Node id of row `r` (lossy on bytes that are not UTF-8).
    pub fn id(&self, r: usize) -> String {
        let off = |i: usize| {
            let at = 16 + 8 * i;
            u64::from_le_bytes(self.ids[at..at + 8].try_into().unwrap_or([0; 8])) as usize
        };
        let base = 16 + 8 * (self.rows + 1);
        let (a, b) = (base + off(r), base + off(r + 1));
        self.ids.get(a..b).map(|s| String::from_utf8_lossy(s).into_owned()).unwrap_or_default()
    }

    fn exact(&self, r: usize, q: &[f32]) -> f64 {
        let row = &self.f32s[r * 4 * self.dim..(r + 1) * 4 * self.dim];
        row.chunks_exact(4)
            .zip(q)
            .map(|(c, y)| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])) * f64::from(*y))
            .sum()
    }

    /// The `k` nearest rows to `query` (a unit vector of this model):
    /// `(id, cosine)` best first. Below [`BINARY_FROM`] rows (or without
    /// binary codes) an int8 scan of every row keeps `max(4k, 100)`
    /// candidates; from it on, a Hamming pass over the sign bits keeps
    /// `max(80·min(k, 25), 2000)`, reading 8x fewer bytes than the int8 rows. Either
    /// way the candidates are rescored exactly with the float32 vectors.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<(String, f64)> {
        if self.rows >= BINARY_FROM && self.bits.is_some() {
            self.search_binary(query, k)
        } else {
            self.search_int8(query, k)
        }
    }

    /// The int8 scan with exact rescoring, whatever the size.
    pub fn search_int8(&self, query: &[f32], k: usize) -> Vec<(String, f64)> {
        if self.rows == 0 || k == 0 || query.len() != self.dim {
            return vec![];
        }
        let mut q = vec![0i8; self.dim];
        quantize(query, &mut q);
        let keep = (4 * k).max(100).min(self.rows);
        let mut rows = vec![];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            rows = unsafe { scan_int8_avx2(&self.quant[16..], self.dim, self.rows, &q, keep) };
        }
        if rows.is_empty() {
            rows = scan_int8(&self.quant[16..], self.dim, self.rows, &q, keep);
        }
        self.rescore(rows, query, k)
    }

    /// The binary pass with exact rescoring (int8 when there are no codes).
    pub fn search_binary(&self, query: &[f32], k: usize) -> Vec<(String, f64)> {
        let Some(bits) = &self.bits else { return self.search_int8(query, k) };
        if self.rows == 0 || k == 0 || query.len() != self.dim {
            return vec![];
        }
        let keep = (BINARY_KEEP_PER_K * k.min(BINARY_KEEP_K)).max(BINARY_KEEP_MIN).min(self.rows);
        let rows = binary::nearest(&bits[16..], self.dim, self.rows, query, keep);
        self.rescore(rows, query, k)
    }

    fn rescore(&self, rows: Vec<usize>, query: &[f32], k: usize) -> Vec<(String, f64)> {
        let mut scored: Vec<(f64, usize)> = rows.into_iter().map(|r| (self.exact(r, query), r)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(k);
        scored.into_iter().map(|(s, r)| (self.id(r), s)).collect()
    }
}

/// The `keep` rows of `body` (int8 rows with their scales) with the best
/// approximate scores, ties by row order.
#[inline(always)]
fn scan_int8(body: &[u8], dim: usize, rows: usize, q: &[i8], keep: usize) -> Vec<usize> {
    // min-heap of (approx score, row) keeping the best `keep`
    let mut heap: BinaryHeap<std::cmp::Reverse<(i64, usize)>> = BinaryHeap::with_capacity(keep + 1);
    let stride = 4 + dim;
    for r in 0..rows {
        let row = &body[r * stride..(r + 1) * stride];
        let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
        // scaled to an integer key: order-preserving, cheap to compare
        let approx = (f64::from(dot_i8(q, &row[4..])) * f64::from(scale) * 1e6) as i64;
        if heap.len() < keep {
            heap.push(std::cmp::Reverse((approx, usize::MAX - r)));
        } else if let Some(min) = heap.peek() {
            if (approx, usize::MAX - r) > min.0 {
                heap.pop();
                heap.push(std::cmp::Reverse((approx, usize::MAX - r)));
            }
        }
    }
    heap.into_iter().map(|std::cmp::Reverse((_, r))| usize::MAX - r).collect()
}

/// [`scan_int8`] compiled for AVX2 (the integer dot product in 256-bit
/// lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_int8_avx2(body: &[u8], dim: usize, rows: usize, q: &[i8], keep: usize) -> Vec<usize> {
    scan_int8(body, dim, rows, q, keep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::normalize;

    fn canopy(rows: usize, dim: usize) -> Canopy {
        let mut c = Canopy::new("m", dim);
        let mut x: u64 = 7;
        for r in 0..rows {
            let mut v: Vec<f32> = (0..dim)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                })
                .collect();
            normalize(&mut v);
            c.ids.push(format!("n{r:05}"));
            c.vectors.extend(v);
            c.hashes.push([0; 16]);
        }
        c
    }

    fn brute(c: &Canopy, q: &[f32], k: usize) -> Vec<String> {
        let mut s: Vec<(f64, usize)> = (0..c.len())
            .map(|r| (c.vector(r).iter().zip(q).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum(), r))
            .collect();
        s.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        s.into_iter().take(k).map(|(_, r)| c.ids[r].clone()).collect()
    }

    #[test]
    fn int8_scan_with_rescoring_equals_exact_search() {
        let c = canopy(3000, 48);
        let s = Searcher::from_canopy(&c);
        for probe in [0usize, 17, 2999] {
            let q = c.vector(probe).to_vec();
            let got: Vec<String> = s.search(&q, 10).into_iter().map(|(id, _)| id).collect();
            assert_eq!(got, brute(&c, &q, 10));
            assert_eq!(got[0], c.ids[probe]);
        }
    }

    #[test]
    fn binary_pass_with_rescoring_finds_the_exact_neighbours() {
        let c = canopy(3000, 48);
        let s = Searcher::from_canopy(&c);
        for probe in [0usize, 17, 2999] {
            let q = c.vector(probe).to_vec();
            let got: Vec<String> = s.search_binary(&q, 10).into_iter().map(|(id, _)| id).collect();
            assert_eq!(got, brute(&c, &q, 10));
        }
    }

    #[test]
    fn mapped_files_answer_like_memory() {
        let t = tempfile::tempdir().unwrap();
        let mut c = canopy(500, 40);
        c.save(t.path()).unwrap();
        let s = Searcher::open(t.path()).unwrap().unwrap();
        assert_eq!(s.len(), 500);
        assert_eq!(s.id(499), "n00499");
        let q = c.vector(3).to_vec();
        assert_eq!(s.search(&q, 5), Searcher::from_canopy(&c).search(&q, 5));
        assert_eq!(s.search_binary(&q, 5), s.search(&q, 5), "bits.b1 is mapped and answers alike");
        assert!(s.bits.is_some());
        assert!(s.search(&q[..3], 5).is_empty(), "a query of another width finds nothing");
    }

    #[test]
    fn the_shared_searcher_is_reopened_when_a_writer_replaced_the_files() {
        let t = tempfile::tempdir().unwrap();
        canopy(20, 8).save(t.path()).unwrap();
        let a = open_shared(t.path()).unwrap().unwrap();
        let b = open_shared(t.path()).unwrap().unwrap();
        assert!(Arc::ptr_eq(&a, &b), "same files: the same searcher");
        canopy(30, 8).save(t.path()).unwrap();
        let c = open_shared(t.path()).unwrap().unwrap();
        assert_eq!(c.len(), 30, "rewritten files are opened anew");
    }

    #[test]
    fn damaged_sidecar_is_one_clear_error() {
        let t = tempfile::tempdir().unwrap();
        canopy(10, 8).save(t.path()).unwrap();
        std::fs::write(t.path().join(store::QUANT), b"junk").unwrap();
        let e = Searcher::open(t.path()).err().unwrap();
        assert_eq!(e.code(), "E_CANOPY_DAMAGED");
    }
}
