//! How `locate` combines its two rankings: BM25 over the scent (always)
//! and, when the forest has a current canopy, the vector ranking of the
//! query (ids best first, each with its cosine similarity).
//!
//! - [`Fusion::Blend`], our default: CombSUM of the max-normalised BM25
//!   score and the min-max-normalised cosine, `a·bm25 + (1 − a)·cos`. The
//!   weight `a` comes with the vector ranking ([`Dense::bm25_weight`]): the
//!   canopy knows how good its vectors are (0.4 for the full model, 0.6 for
//!   the fast encoder, chosen on half of the real question sets and
//!   reported on the other half and a held-out set:
//!   docs/decisions/locate-one-engine.md).
//! - [`Fusion::Rrf`], the reference's arithmetic (navigator spec §4,
//!   `Σ 1/(60 + rank + 1)` divided by the best), kept for side-by-side runs.
//! - [`Fusion::Bm25`]: BM25 alone, as a forest without a canopy ranks.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// RRF constant (navigator §4: `1 / (60 + rank + 1)`, rank 0-based).
pub const RRF_K: f64 = 60.0;

/// A vector ranking for `locate`: ids best first with their cosine
/// similarity, and BM25's share when [`Fusion::Blend`] fuses them.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    /// `(id, cosine)`, best first.
    pub ranked: Vec<(String, f64)>,
    /// `a` of `a·bm25 + (1 − a)·cos`.
    pub bm25_weight: f64,
}

/// How `locate` ranks: see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// CombSUM of BM25 and cosine when a current canopy exists, else BM25.
    #[default]
    Blend,
    /// The reference's RRF (k = 60) when a current canopy exists, else BM25.
    Rrf,
    /// BM25 alone: the canopy is not read.
    Bm25,
}

impl Fusion {
    /// The wire and CLI spellings, in order.
    pub const NAMES: [&'static str; 3] = ["blend", "rrf", "bm25"];

    /// Parse a wire spelling; `None` for anything else.
    pub fn parse(s: &str) -> Option<Fusion> {
        match s {
            "blend" => Some(Fusion::Blend),
            "rrf" => Some(Fusion::Rrf),
            "bm25" => Some(Fusion::Bm25),
            _ => None,
        }
    }

    /// Whether this fusion reads the canopy at all.
    pub fn wants_vectors(self) -> bool {
        self != Fusion::Bm25
    }
}

/// Reciprocal rank fusion of rankings (ids best first): `Σ 1/(k + rank + 1)`,
/// divided by the best fused score (strength in (0, 1]).
pub fn rrf_fuse(rankings: &[&[String]]) -> HashMap<String, f64> {
    let mut fused: HashMap<String, f64> = HashMap::new();
    for ranked in rankings {
        for (rank, id) in ranked.iter().enumerate() {
            *fused.entry(id.clone()).or_insert(0.0) += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let top = fused.values().copied().fold(0.0f64, f64::max);
    if top > 0.0 {
        fused.values_mut().for_each(|s| *s /= top);
    }
    fused
}

/// CombSUM: `a·bm25 + (1 − a)·cos'` where `bm25` is each id's BM25
/// strength (already in [0, 1], the best hit 1) and `cos'` its cosine
/// min-max normalised over the vector list; an id missing from a list
/// scores 0 there. Divided by the best, so the top strength is 1.
pub fn blend_fuse(bm25: &[(String, f64)], dense: &[(String, f64)], a: f64) -> HashMap<String, f64> {
    let lo = dense.iter().map(|d| d.1).fold(f64::INFINITY, f64::min);
    let hi = dense.iter().map(|d| d.1).fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut fused: HashMap<String, f64> = HashMap::new();
    for (id, s) in bm25 {
        *fused.entry(id.clone()).or_insert(0.0) += a * s;
    }
    for (id, cos) in dense {
        *fused.entry(id.clone()).or_insert(0.0) += (1.0 - a) * (cos - lo) / span;
    }
    let top = fused.values().copied().fold(0.0f64, f64::max);
    if top > 0.0 {
        fused.values_mut().for_each(|s| *s /= top);
    }
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rrf_k60_max_normalised() {
        let (a, b) = (ids(&["x", "y"]), ids(&["y", "z"]));
        let f = rrf_fuse(&[&a, &b]);
        // y: 1/62 + 1/61 is the best; x: 1/61; z: 1/62
        assert_eq!(f["y"], 1.0);
        let y = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((f["x"] - (1.0 / 61.0) / y).abs() < 1e-12);
        assert!((f["z"] - (1.0 / 62.0) / y).abs() < 1e-12);
        assert!(rrf_fuse(&[]).is_empty());
    }

    #[test]
    fn blend_weights_and_normalises() {
        let bm25 = vec![("x".to_string(), 1.0), ("y".to_string(), 0.5)];
        let dense = vec![("z".to_string(), 0.9), ("y".to_string(), 0.7), ("w".to_string(), 0.4)];
        let f = blend_fuse(&bm25, &dense, 0.4);
        // raw: x 0.4, y 0.2 + 0.6·0.6 = 0.56, z 0.6, w 0 -> z is the best
        assert_eq!(f["z"], 1.0);
        assert!((f["y"] - 0.56 / 0.6).abs() < 1e-12);
        assert!((f["x"] - 0.4 / 0.6).abs() < 1e-12);
        assert_eq!(f["w"], 0.0);
        // one vector hit: the span is 1, not 0 (no NaN)
        let f = blend_fuse(&[], &[("a".to_string(), 0.3)], 0.4);
        assert_eq!(f["a"], 0.0);
        assert!(blend_fuse(&[], &[], 0.4).is_empty());
    }

    #[test]
    fn names_round_trip() {
        for n in Fusion::NAMES {
            let f = Fusion::parse(n).unwrap();
            assert_eq!(serde_json::to_value(f).unwrap(), serde_json::json!(n));
        }
        assert_eq!(Fusion::parse("hybrid"), None);
        assert!(!Fusion::Bm25.wants_vectors());
        assert_eq!(Fusion::default(), Fusion::Blend);
    }
}
