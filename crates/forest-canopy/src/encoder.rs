//! Which encoder embeds a canopy ([`Encoder`]: the full
//! sentence-transformer of `embed.rs` or its static distillation in
//! `fast.rs`), and the encoders shared by a process. Sits above both, so
//! neither imports the other's caller.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::embed::{env_dir, identity_from_env, model_err, shared_from_env, SharedEmbedder};
use crate::error::{CanopyError, Result};
use crate::fast::{StaticEmbedder, STATIC_MARK, STATIC_SUFFIX};

/// Environment variable choosing the encoder of a new canopy.
pub const ENCODER_VAR: &str = "FOREST_EMBED_ENCODER";

/// Which encoder embeds a canopy's texts and its queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoder {
    /// The static distillation ([`crate::StaticEmbedder`]): drive speed.
    Fast,
    /// The sentence-transformer itself.
    Full,
}

impl Encoder {
    /// Parse `fast` | `full`.
    pub fn parse(s: &str) -> Option<Encoder> {
        match s {
            "fast" => Some(Encoder::Fast),
            "full" => Some(Encoder::Full),
            _ => None,
        }
    }

    /// The encoder of a canopy recorded under `model` (an identity): fast
    /// for every recipe of the static table, the current one or older.
    pub fn of_model(model: &str) -> Encoder {
        if model.contains(STATIC_MARK) {
            Encoder::Fast
        } else {
            Encoder::Full
        }
    }

    /// BM25's share when `locate` blends this encoder's ranking with it
    /// (`a` of `a·bm25 + (1 − a)·cos`): the weaker the vectors, the more
    /// BM25 counts. Chosen on the tuning halves of the real question sets
    /// (docs/decisions/locate-one-engine.md).
    pub fn blend_bm25_weight(self) -> f64 {
        match self {
            Encoder::Fast => 0.6,
            Encoder::Full => 0.4,
        }
    }

    /// The encoder a new canopy gets: `FOREST_EMBED_ENCODER`, else fast.
    pub fn from_env() -> Result<Encoder> {
        match std::env::var(ENCODER_VAR) {
            Err(_) => Ok(Encoder::Fast),
            Ok(v) => Encoder::parse(v.trim()).ok_or_else(|| CanopyError::Model {
                dir: PathBuf::new(),
                what: format!("{ENCODER_VAR} expects fast or full, got '{}'", v.chars().take(40).collect::<String>()),
            }),
        }
    }
}

/// The fast encoder loaded once per process, with the directory it came from.
static SHARED_FAST: Mutex<Option<(PathBuf, SharedEmbedder)>> = Mutex::new(None);

/// The `kind` encoder of the model `FOREST_EMBED_MODEL` names, loaded (and,
/// for the fast one, distilled on first use) once per process; `None`
/// when the variable is unset.
pub fn shared_encoder(kind: Encoder) -> Result<Option<SharedEmbedder>> {
    if kind == Encoder::Full {
        return Ok(shared_from_env()?.map(|e| e as SharedEmbedder));
    }
    let (Some(dir), Some(identity)) = (env_dir(), identity_from_env()?) else { return Ok(None) };
    let mut slot = SHARED_FAST.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((d, e)) = slot.as_ref() {
        if *d == dir && e.model().starts_with(&identity) {
            return Ok(Some(Arc::clone(e)));
        }
    }
    // the transformer is loaded only when the table must be distilled
    let full = || shared_from_env()?.ok_or_else(|| model_err(&dir, "the model directory is unset"));
    let e: SharedEmbedder = Arc::new(StaticEmbedder::load(&dir, &identity, full)?);
    *slot = Some((dir, Arc::clone(&e)));
    Ok(Some(e))
}

/// Whether a canopy recorded under `model` was built by an older recipe
/// of the fast encoder (its vectors do not compare with today's queries:
/// the next writer builds it again).
pub fn outdated_encoder(model: &str) -> bool {
    model.contains(STATIC_MARK) && !model.ends_with(STATIC_SUFFIX)
}

/// The identity a `kind` canopy of the model `FOREST_EMBED_MODEL` names
/// records (without loading the model); `None` when the variable is unset.
pub fn identity_for(kind: Encoder) -> Result<Option<String>> {
    Ok(identity_from_env()?.map(|id| match kind {
        Encoder::Full => id,
        Encoder::Fast => format!("{id}{}", STATIC_SUFFIX),
    }))
}
