//! Sentence embeddings in process: a BERT sentence-transformer
//! (safetensors and `tokenizer.json`) run by candle on the CPU, pooled as
//! its `1_Pooling/config.json` says (mean of the token vectors under the
//! attention mask, or the CLS token) and L2-normalised.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::error::{CanopyError, Result};

/// Environment variable naming the model directory.
pub const MODEL_VAR: &str = "FOREST_EMBED_MODEL";

/// Texts per forward pass.
const BATCH: usize = 32;

/// Anything that turns texts into unit vectors under a recorded model name.
pub trait Embedder {
    /// The model's identity, recorded with the canopy (a different one
    /// means a rebuild).
    fn model(&self) -> &str;
    /// Unit vectors, one per text, in order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// A sentence-transformer loaded from a local directory.
pub struct LocalEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    name: String,
    cls_pooling: bool,
}

fn model_err(dir: &Path, what: impl Into<String>) -> CanopyError {
    CanopyError::Model { dir: dir.to_path_buf(), what: what.into() }
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>> {
    let p = dir.join(name);
    std::fs::read(&p).map_err(|e| model_err(dir, format!("cannot read {name}: {e}")))
}

/// The model's identity: the directory's name and a digest of what decides
/// its vectors (config, tokenizer, pooling, the safetensors header with
/// every tensor's name, shape and offsets, and its size).
fn identity(dir: &Path) -> Result<String> {
    let mut h = blake3::Hasher::new();
    for name in ["config.json", "tokenizer.json"] {
        h.update(&read(dir, name)?);
    }
    if let Ok(p) = std::fs::read(dir.join("1_Pooling/config.json")) {
        h.update(&p);
    }
    let st = dir.join("model.safetensors");
    let mut f = std::fs::File::open(&st).map_err(|e| model_err(dir, format!("cannot open model.safetensors: {e}")))?;
    let len = f.metadata().map_err(|e| CanopyError::io(&st, e))?.len();
    let mut head = [0u8; 8];
    std::io::Read::read_exact(&mut f, &mut head).map_err(|e| model_err(dir, format!("model.safetensors: {e}")))?;
    let n = u64::from_le_bytes(head).min(16 << 20) as usize;
    let mut header = vec![0u8; n];
    std::io::Read::read_exact(&mut f, &mut header).map_err(|e| model_err(dir, format!("model.safetensors: {e}")))?;
    h.update(&header);
    h.update(&len.to_le_bytes());
    let base = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let stem = base.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    Ok(format!("{stem}@{}", &h.finalize().to_hex()[..12]))
}

impl LocalEmbedder {
    /// The model named by `FOREST_EMBED_MODEL`, `None` when unset.
    pub fn from_env() -> Result<Option<LocalEmbedder>> {
        match std::env::var_os(MODEL_VAR) {
            Some(d) if !d.is_empty() => Ok(Some(LocalEmbedder::load(&PathBuf::from(d))?)),
            _ => Ok(None),
        }
    }

    /// Load `model.safetensors`, `config.json`, `tokenizer.json` (and the
    /// pooling config, mean pooling when absent) from `dir`.
    pub fn load(dir: &Path) -> Result<LocalEmbedder> {
        let name = identity(dir)?;
        let config: Config = serde_json::from_slice(&read(dir, "config.json")?)
            .map_err(|e| model_err(dir, format!("config.json: {e}")))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| model_err(dir, format!("tokenizer.json: {e}")))?;
        let max_len = std::fs::read(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["max_seq_length"].as_u64())
            .unwrap_or(256) as usize;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: max_len, ..Default::default() }))
            .map_err(|e| model_err(dir, format!("tokenizer truncation: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..Default::default() }));
        let cls_pooling = std::fs::read(dir.join("1_Pooling/config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["pooling_mode_cls_token"] == true && v["pooling_mode_mean_tokens"] != true);
        let st = dir.join("model.safetensors");
        // SAFETY: the file is mapped read-only; a concurrent rewrite of the
        // model directory is outside what we support (as for any mmap).
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[st], DType::F32, &Device::Cpu) }
            .map_err(|e| model_err(dir, format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| model_err(dir, format!("BERT weights: {e}")))?;
        Ok(LocalEmbedder { model, tokenizer, name, cls_pooling })
    }

    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let enc =
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| CanopyError::Tokenizer(e.to_string()))?;
        let rows = enc.len();
        let width = enc.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * width);
        let mut types = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for e in &enc {
            ids.extend(e.get_ids().iter().copied());
            types.extend(e.get_type_ids().iter().copied());
            mask.extend(e.get_attention_mask().iter().copied());
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let dev = &Device::Cpu;
            let ids = Tensor::from_vec(ids, (rows, width), dev)?;
            let types = Tensor::from_vec(types, (rows, width), dev)?;
            let mask = Tensor::from_vec(mask, (rows, width), dev)?;
            let out = self.model.forward(&ids, &types, Some(&mask))?; // (rows, width, hidden)
            let pooled = if self.cls_pooling {
                out.narrow(1, 0, 1)?.squeeze(1)?
            } else {
                let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (rows, width, 1)
                let sum = out.broadcast_mul(&m)?.sum(1)?;
                let count = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
                sum.broadcast_div(&count)?
            };
            pooled.to_vec2::<f32>()
        };
        let mut vecs = run().map_err(CanopyError::Inference)?;
        for v in &mut vecs {
            normalize(v);
        }
        Ok(vecs)
    }
}

impl Embedder for LocalEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }
}

/// L2-normalise in place (a zero vector stays zero), summing in f64.
pub(crate) fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    if n > 0.0 {
        for x in v.iter_mut() {
            *x = (f64::from(*x) / n) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn normalize_unit_and_zero() {
        let mut v = vec![3.0f32, 4.0];
        super::normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut z = vec![0.0f32; 3];
        super::normalize(&mut z);
        assert_eq!(z, vec![0.0; 3]);
    }
}
