//! Binary codes (`bits.b1`): one sign bit per dimension, packed in u64
//! words, for a first pass over large canopies that reads 32x fewer bytes
//! than the float rows (48 bytes a row at dim 384): the rows nearest in
//! Hamming distance are kept and rescored exactly by the caller.

use std::io::Write;

/// `bits.b1`'s magic.
pub(crate) const BITS_MAGIC: &[u8; 8] = b"FCANB1\0\0";

/// u64 words per row.
pub(crate) fn words(dim: usize) -> usize {
    dim.div_ceil(64)
}

/// The sign bits of `v` (bit set when the value is > 0).
pub(crate) fn code(v: &[f32], out: &mut [u64]) {
    out.iter_mut().for_each(|w| *w = 0);
    for (i, x) in v.iter().enumerate() {
        if *x > 0.0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
}

/// `bits.b1`: 16-byte header (magic, dim u32, rows u32), then per row
/// `words(dim)` little-endian u64.
pub(crate) fn write_bits(w: &mut dyn Write, dim: usize, vectors: &[f32]) -> std::io::Result<()> {
    let rows = vectors.len().checked_div(dim).unwrap_or(0);
    w.write_all(BITS_MAGIC)?;
    w.write_all(&(dim as u32).to_le_bytes())?;
    w.write_all(&(rows as u32).to_le_bytes())?;
    let (mut c, mut row) = (vec![], vec![]);
    for v in vectors.chunks_exact(dim.max(1)).take(rows) {
        row.clear();
        bits_row(v, &mut c, &mut row);
        w.write_all(&row)?;
    }
    Ok(())
}

/// Append one row of `bits.b1` (the sign bits of `v`, little-endian u64
/// words) to `out`; `c` is scratch.
pub(crate) fn bits_row(v: &[f32], c: &mut Vec<u64>, out: &mut Vec<u8>) {
    c.resize(words(v.len()), 0);
    code(v, c);
    c.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
}

/// Hamming distances of every row of `body` to `qc`, with their histogram.
#[inline(always)]
fn distances(body: &[u8], nw: usize, rows: usize, qc: &[u64], dist: &mut Vec<u16>, hist: &mut [usize]) {
    for row in body.chunks_exact(8 * nw).take(rows) {
        let d: u32 = row
            .chunks_exact(8)
            .zip(qc)
            .map(|(b, q)| (u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) ^ q).count_ones())
            .sum();
        dist.push(d as u16);
        hist[d as usize] += 1;
    }
}

/// [`distances`] compiled with the POPCNT instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn distances_popcnt(body: &[u8], nw: usize, rows: usize, qc: &[u64], dist: &mut Vec<u16>, hist: &mut [usize]) {
    distances(body, nw, rows, qc, dist, hist);
}

/// The `keep` rows of `body` (rows of `words(dim)` u64, little-endian)
/// nearest to `q`'s code in Hamming distance, ties by row order; in row
/// order. Two passes: distances and their histogram, then the rows under
/// the cut-off.
pub(crate) fn nearest(body: &[u8], dim: usize, rows: usize, q: &[f32], keep: usize) -> Vec<usize> {
    nearest_split(body, dim, rows, q, keep, SPLIT_FROM)
}

/// From this many rows the distance pass runs on two threads (the second
/// half on a scoped thread): at 10^6 rows it is most of a query's search
/// time, and a query is latency-bound.
pub(crate) const SPLIT_FROM: usize = 200_000;

/// Hamming distances of `rows` rows and their histogram, on this thread.
fn distance_pass(body: &[u8], nw: usize, rows: usize, qc: &[u64]) -> (Vec<u16>, Vec<usize>) {
    let mut dist = Vec::with_capacity(rows);
    let mut hist = vec![0usize; 64 * nw + 1];
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT (checked just above).
        unsafe { distances_popcnt(body, nw, rows, qc, &mut dist, &mut hist) };
    }
    if dist.is_empty() {
        distances(body, nw, rows, qc, &mut dist, &mut hist);
    }
    (dist, hist)
}

/// [`nearest`], splitting the distance pass over two threads from
/// `split_from` rows; the same rows either way.
fn nearest_split(body: &[u8], dim: usize, rows: usize, q: &[f32], keep: usize, split_from: usize) -> Vec<usize> {
    let nw = words(dim);
    let mut qc = vec![0u64; nw];
    code(q, &mut qc);
    let (dist, hist) = if rows >= split_from && rows >= 2 {
        let half = rows / 2;
        let (front, back) = body.split_at((8 * nw * half).min(body.len()));
        let qc = &qc;
        std::thread::scope(|s| {
            let second = s.spawn(move || distance_pass(back, nw, rows - half, qc));
            let (mut dist, mut hist) = distance_pass(front, nw, half, qc);
            let (d2, h2) = second.join().unwrap_or_else(|_| distance_pass(back, nw, rows - half, qc));
            dist.extend(d2);
            hist.iter_mut().zip(h2).for_each(|(a, b)| *a += b);
            (dist, hist)
        })
    } else {
        distance_pass(body, nw, rows, &qc)
    };
    // the cut-off: every row nearer than `cut`, and rows at `cut` in row
    // order until `keep` are taken
    let (mut cut, mut below) = (0usize, 0usize);
    while cut < hist.len() && below + hist[cut] < keep {
        below += hist[cut];
        cut += 1;
    }
    let mut at_cut = keep.saturating_sub(below);
    let mut out = Vec::with_capacity(keep.min(rows));
    for (r, &d) in dist.iter().enumerate() {
        let d = usize::from(d);
        if d < cut {
            out.push(r);
        } else if d == cut && at_cut > 0 {
            at_cut -= 1;
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_sign_bits_and_nearest_cuts_by_distance_then_row() {
        let mut c = [0u64; 2];
        code(&[1.0, -1.0, 0.0, 0.5], &mut c);
        assert_eq!(c[0], 0b1001);
        let rows: Vec<f32> = [
            [1.0, 1.0, 1.0, 1.0],     // distance 0 from q
            [-1.0, 1.0, 1.0, 1.0],    // 1
            [-1.0, -1.0, -1.0, -1.0], // 4
            [1.0, -1.0, 1.0, 1.0],    // 1
        ]
        .concat();
        let mut body = vec![];
        write_bits(&mut body, 4, &rows).unwrap();
        assert_eq!(&body[..8], BITS_MAGIC);
        let q = [1.0f32, 1.0, 1.0, 1.0];
        assert_eq!(nearest(&body[16..], 4, 4, &q, 1), vec![0]);
        assert_eq!(nearest(&body[16..], 4, 4, &q, 2), vec![0, 1]);
        assert_eq!(nearest(&body[16..], 4, 4, &q, 3), vec![0, 1, 3]);
        assert_eq!(nearest(&body[16..], 4, 4, &q, 9), vec![0, 1, 2, 3]);
        // split over two threads: the same rows, in the same order
        for keep in 1..=4 {
            assert_eq!(nearest_split(&body[16..], 4, 4, &q, keep, 2), nearest(&body[16..], 4, 4, &q, keep));
        }
    }

    #[test]
    fn the_split_pass_keeps_what_one_pass_keeps() {
        let (dim, rows) = (384, 5_001);
        let mut x: u64 = 11;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        let vectors: Vec<f32> = (0..dim * rows).map(|_| next()).collect();
        let mut body = vec![];
        write_bits(&mut body, dim, &vectors).unwrap();
        for t in 0..5 {
            let q: Vec<f32> = vectors[t * 97 * dim..(t * 97 + 1) * dim].to_vec();
            for keep in [1, 25, 100, 4_999] {
                assert_eq!(
                    nearest_split(&body[16..], dim, rows, &q, keep, 1_000),
                    nearest(&body[16..], dim, rows, &q, keep)
                );
            }
        }
    }
}
