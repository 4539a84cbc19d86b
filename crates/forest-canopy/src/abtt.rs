//! "All but the top" (Mu & Viswanath, ICLR 2018) for the fast encoder's
//! token table: static token vectors share a few dominant directions
//! (word frequency, position, the `[CLS]`/`[SEP]` context) that make every
//! pair of texts look alike. Centring the table and projecting out its top
//! principal directions leaves what tells tokens apart.
//!
//! Measured on the real question sets (bench/findability, tuning halves,
//! scent alone): the fast encoder's vectors alone went from R@5 0.559 to
//! 0.628 on `usd` and 0.600 to 0.680 on `py` with 8 directions removed; 16
//! did as well on those sets but cost the reference's bench set v2 two
//! first places (docs/decisions/locate-one-engine.md).
//!
//! Only the span of the top directions is needed, so an orthogonal
//! (subspace) iteration on the `dim × dim` covariance finds it: a few
//! dozen lines for a 384 × 384 matrix, once per model at distillation,
//! where an eigen-decomposition crate would be a dependency for one call.

use rayon::prelude::*;

use crate::embed::normalize;

/// How many principal directions the fast encoder's table loses.
pub(crate) const TOP_DIRECTIONS: usize = 8;

/// Extra vectors iterated beside the `k` kept, so the kept ones converge
/// at the rate of the gap to the `k + OVERSAMPLE`-th direction.
const OVERSAMPLE: usize = 8;

/// Subspace iterations (each `O((k + OVERSAMPLE) · dim²)`).
const ITERATIONS: usize = 200;

/// Centre the rows of `table` (row-major, `dim` wide), remove their top
/// `k` principal directions and renormalise each row. Pure.
pub(crate) fn drop_top_directions(table: &mut [f32], dim: usize, k: usize) {
    let rows = table.len().checked_div(dim).unwrap_or(0);
    if rows == 0 || k == 0 || k + OVERSAMPLE > dim {
        return;
    }
    let mut mean = vec![0f64; dim];
    for row in table.chunks_exact(dim) {
        mean.iter_mut().zip(row).for_each(|(m, x)| *m += f64::from(*x));
    }
    mean.iter_mut().for_each(|m| *m /= rows as f64);
    table.par_chunks_exact_mut(dim).for_each(|row| {
        row.iter_mut().zip(&mean).for_each(|(x, m)| *x = (f64::from(*x) - m) as f32);
    });
    let basis = top_subspace(&covariance(table, dim), dim, k);
    table.par_chunks_exact_mut(dim).for_each(|row| {
        for b in basis.chunks_exact(dim) {
            let p: f64 = row.iter().zip(b).map(|(x, y)| f64::from(*x) * y).sum();
            row.iter_mut().zip(b).for_each(|(x, y)| *x = (f64::from(*x) - p * y) as f32);
        }
        normalize(row);
    });
}

/// `XᵀX` of the rows (row-major `dim × dim`), summed in parallel chunks.
fn covariance(table: &[f32], dim: usize) -> Vec<f64> {
    let chunk = dim * 1024;
    let add = |mut acc: Vec<f64>, part: Vec<f64>| {
        acc.iter_mut().zip(part).for_each(|(a, b)| *a += b);
        acc
    };
    let upper = table
        .par_chunks(chunk)
        .map(|block| {
            let mut c = vec![0f64; dim * dim];
            for row in block.chunks_exact(dim) {
                for (i, xi) in row.iter().enumerate() {
                    let xi = f64::from(*xi);
                    let line = &mut c[i * dim..(i + 1) * dim];
                    line[i..].iter_mut().zip(&row[i..]).for_each(|(c, xj)| *c += xi * f64::from(*xj));
                }
            }
            c
        })
        .reduce(|| vec![0f64; dim * dim], add);
    let mut c = upper;
    for i in 0..dim {
        for j in 0..i {
            c[i * dim + j] = c[j * dim + i];
        }
    }
    c
}

/// An orthonormal basis (`k` rows of `dim`) of the top-`k` eigenspace of
/// the symmetric `cov`: orthogonal iteration from a fixed start, so the
/// table is the same on every machine.
fn top_subspace(cov: &[f64], dim: usize, k: usize) -> Vec<f64> {
    let m = k + OVERSAMPLE;
    let mut q: Vec<f64> = (0..m * dim)
        .map(|i| {
            let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
            h as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    orthonormalise(&mut q, dim);
    let mut z = vec![0f64; m * dim];
    for _ in 0..ITERATIONS {
        for (zv, qv) in z.chunks_exact_mut(dim).zip(q.chunks_exact(dim)) {
            for (i, out) in zv.iter_mut().enumerate() {
                *out = cov[i * dim..(i + 1) * dim].iter().zip(qv).map(|(a, b)| a * b).sum();
            }
        }
        std::mem::swap(&mut q, &mut z);
        orthonormalise(&mut q, dim);
    }
    q.truncate(k * dim);
    q
}

/// Modified Gram-Schmidt over the rows of `v`, in order.
fn orthonormalise(v: &mut [f64], dim: usize) {
    let n = v.len() / dim;
    for i in 0..n {
        let (done, rest) = v.split_at_mut(i * dim);
        let row = &mut rest[..dim];
        for b in done.chunks_exact(dim) {
            let p: f64 = row.iter().zip(b).map(|(x, y)| x * y).sum();
            row.iter_mut().zip(b).for_each(|(x, y)| *x -= p * y);
        }
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 0.0 {
            row.iter_mut().for_each(|x| *x /= norm);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise in [-0.5, 0.5).
    fn noise(i: usize) -> f32 {
        let h = (i as u64 + 7).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        h as f32 / (1u64 << 24) as f32 - 0.5
    }

    #[test]
    fn a_dominant_shared_direction_is_removed_and_the_rest_kept() {
        // 400 rows of width 32: small noise plus a large component along
        // e0 whose size varies by row (the "frequency" direction).
        let dim = 32;
        let mut t: Vec<f32> = (0..400 * dim).map(|i| 0.1 * noise(i)).collect();
        for (r, row) in t.chunks_exact_mut(dim).enumerate() {
            row[0] += 5.0 * ((r % 7) as f32 - 3.0);
        }
        drop_top_directions(&mut t, dim, 1);
        for row in t.chunks_exact(dim) {
            let len: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((len - 1.0).abs() < 1e-4, "rows come out unit length");
            assert!(row[0].abs() < 0.05, "the dominant direction is gone: {}", row[0]);
        }
    }

    #[test]
    fn the_basis_spans_the_top_eigenvectors() {
        // diagonal covariance: the top 2 directions are e3 and e5
        let dim = 12;
        let mut cov = vec![0f64; dim * dim];
        for i in 0..dim {
            cov[i * dim + i] = 1.0 + i as f64 * 0.01;
        }
        cov[3 * dim + 3] = 50.0;
        cov[5 * dim + 5] = 40.0;
        let b = top_subspace(&cov, dim, 2);
        let weight_on = |axis: usize| b.chunks_exact(dim).map(|v| v[axis] * v[axis]).sum::<f64>();
        assert!((weight_on(3) - 1.0).abs() < 1e-9 && (weight_on(5) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn too_few_rows_or_directions_leave_the_table_alone() {
        let mut t = vec![0.5f32; 8];
        drop_top_directions(&mut t, 8, 16);
        assert_eq!(t, vec![0.5f32; 8]);
        drop_top_directions(&mut [], 8, 2);
    }
}
