//! Sentence embeddings in process: a BERT sentence-transformer
//! (safetensors and `tokenizer.json`) run by candle on the CPU, pooled as
//! its `1_Pooling/config.json` says (mean of the token vectors under the
//! attention mask, or the CLS token) and L2-normalised.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use candle_core::{DType, Device, Tensor};
use candle_transformers::models::bert::Config;
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::bert::Bert;
use crate::error::{CanopyError, Result};

/// Environment variable naming the model directory.
pub const MODEL_VAR: &str = "FOREST_EMBED_MODEL";

/// Rows per forward pass at most.
const MAX_ROWS: usize = 64;
/// Padded tokens per forward pass at most (rows × the longest row): bounds
/// the activations, whose attention scores grow as rows × heads × width².
const TOKEN_BUDGET: usize = 2048;
/// Texts tokenised at a time (their encodings are held until embedded).
const WINDOW: usize = 1024;

/// Forward passes of at most this many tokens (rows × width) run on one
/// thread (a query); larger ones use candle's threads.
const SMALL_PASS: usize = 64;

thread_local! {
    /// The one-thread pool of this thread's small passes (`None` when it
    /// cannot be built: they run on candle's threads then). One per
    /// calling thread, so a server's workers embed their queries side by
    /// side rather than queueing on a single thread.
    static ONE_THREAD: Option<rayon::ThreadPool> =
        rayon::ThreadPoolBuilder::new().num_threads(1).thread_name(|_| "canopy-query".into()).build().ok();
}

/// True on a worker of a one-thread rayon pool (this thread's
/// [`ONE_THREAD`] of some caller).
fn on_one_thread_pool() -> bool {
    rayon::current_thread_index().is_some() && rayon::current_num_threads() == 1
}

/// A query being embedded on the calling thread's one-thread pool while
/// the caller does other work (BM25); [`PendingVector::wait`] joins it.
pub struct PendingVector {
    rx: std::sync::mpsc::Receiver<Result<Vec<f32>>>,
}

impl PendingVector {
    /// The query's unit vector, once embedded.
    pub fn wait(self) -> Result<Vec<f32>> {
        self.rx.recv().unwrap_or(Err(CanopyError::Lost))
    }
}

/// Embed one text without waiting: the job runs on this thread's
/// long-lived one-thread pool (the one a query's pass runs on anyway), so
/// nothing is spawned per query. Without a pool it runs here and now.
/// `then` runs on the same worker once the vector is sent (the memo's
/// write, off the caller's path).
pub fn embed_spawned(
    embedder: SharedEmbedder,
    text: String,
    then: impl FnOnce(&[f32]) + Send + 'static,
) -> PendingVector {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let job = move || {
        // A panic in a spawned job would abort the process (rayon's
        // default): it becomes the caller's error instead.
        let run = std::panic::AssertUnwindSafe(|| embedder.embed(std::slice::from_ref(&text)));
        let v = match std::panic::catch_unwind(run) {
            Ok(v) => v.map(|mut v| v.pop().unwrap_or_default()),
            Err(_) => Err(CanopyError::Lost),
        };
        let kept = v.as_ref().ok().cloned();
        let _ = tx.send(v);
        if let Some(v) = kept {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| then(&v)));
        }
    };
    ONE_THREAD.with(|pool| match pool {
        Some(pool) => pool.spawn(job),
        None => job(),
    });
    PendingVector { rx }
}

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
    model: Bert,
    tokenizer: Tokenizer,
    name: String,
    cls_pooling: bool,
    pad_id: u32,
}

/// The model loaded once per process, with the directory it came from.
static SHARED: Mutex<Option<(PathBuf, Arc<LocalEmbedder>)>> = Mutex::new(None);

pub(crate) fn env_dir() -> Option<PathBuf> {
    std::env::var_os(MODEL_VAR).filter(|d| !d.is_empty()).map(PathBuf::from)
}

/// The model `FOREST_EMBED_MODEL` names, loaded once per process and shared
/// (a served forest embeds every hybrid `locate` and every write with the
/// same weights); `None` when unset. Loaded again only when the variable
/// names another directory; a load that fails is not kept, so the next
/// call tries again.
pub fn shared_from_env() -> Result<Option<Arc<LocalEmbedder>>> {
    let Some(dir) = env_dir() else { return Ok(None) };
    let mut slot = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((d, e)) = slot.as_ref() {
        if *d == dir {
            return Ok(Some(Arc::clone(e)));
        }
    }
    let e = Arc::new(LocalEmbedder::load(&dir)?);
    *slot = Some((dir, Arc::clone(&e)));
    Ok(Some(e))
}

/// An embedder shared between threads (the full model or the fast one).
pub type SharedEmbedder = Arc<dyn Embedder + Send + Sync>;

/// Model identities computed in this process, by directory.
static IDENTITY: Mutex<Option<(PathBuf, String)>> = Mutex::new(None);

/// The identity of the model `FOREST_EMBED_MODEL` names (what a canopy
/// records), without loading the weights: a few small reads and a digest,
/// once per process and directory. `None` when unset.
pub fn identity_from_env() -> Result<Option<String>> {
    let Some(dir) = env_dir() else { return Ok(None) };
    let mut slot = IDENTITY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((d, id)) = slot.as_ref() {
        if *d == dir {
            return Ok(Some(id.clone()));
        }
    }
    let id = identity(&dir)?;
    *slot = Some((dir, id.clone()));
    Ok(Some(id))
}

/// Split rows sorted by token length (ascending) into consecutive batches
/// of at most [`MAX_ROWS`] rows and [`TOKEN_BUDGET`] padded tokens (a row
/// longer than the budget goes alone). Returns the batches' ends.
pub(crate) fn plan_batches(sorted_lens: &[usize]) -> Vec<usize> {
    let mut ends = vec![];
    let mut start = 0;
    for (i, &len) in sorted_lens.iter().enumerate() {
        let rows = i - start + 1;
        if rows > 1 && (rows > MAX_ROWS || rows * len.max(1) > TOKEN_BUDGET) {
            ends.push(i);
            start = i;
        }
    }
    if start < sorted_lens.len() {
        ends.push(sorted_lens.len());
    }
    ends
}

pub(crate) fn model_err(dir: &Path, what: impl Into<String>) -> CanopyError {
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
        env_dir().map(|d| LocalEmbedder::load(&d)).transpose()
    }

    /// Load `model.safetensors`, `config.json`, `tokenizer.json` (and the
    /// pooling config, mean pooling when absent) from `dir`.
    pub fn load(dir: &Path) -> Result<LocalEmbedder> {
        let name = identity(dir)?;
        let config: Config = serde_json::from_slice(&read(dir, "config.json")?)
            .map_err(|e| model_err(dir, format!("config.json: {e}")))?;
        // parsing tokenizer.json and copying the encoder's weights (~20 ms)
        // overlap: a fresh `locate` process pays the longer one
        let (tokenizer, model) = std::thread::scope(|s| {
            let weights = s.spawn(|| Bert::load(&dir.join("model.safetensors"), &config));
            let tokenizer = crate::tokfile::load(&dir.join("tokenizer.json"));
            (tokenizer, weights.join())
        });
        let model = match model {
            Ok(m) => m.map_err(|e| model_err(dir, format!("BERT weights: {e}")))?,
            Err(_) => return Err(model_err(dir, "loading the BERT weights panicked")),
        };
        let mut tokenizer = tokenizer.map_err(|e| model_err(dir, format!("tokenizer.json: {e}")))?;
        let max_len = std::fs::read(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["max_seq_length"].as_u64())
            .unwrap_or(256) as usize;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: max_len, ..Default::default() }))
            .map_err(|e| model_err(dir, format!("tokenizer truncation: {e}")))?;
        // Rows are padded by `forward` (batches of similar lengths).
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        tokenizer.with_padding(None);
        let cls_pooling = std::fs::read(dir.join("1_Pooling/config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["pooling_mode_cls_token"] == true && v["pooling_mode_mean_tokens"] != true);
        Ok(LocalEmbedder { model, tokenizer, name, cls_pooling, pad_id })
    }

    /// The encoder (for the fast encoder's distillation).
    pub(crate) fn bert(&self) -> &Bert {
        &self.model
    }

    /// Whether the model pools its CLS token rather than the mean.
    pub(crate) fn cls_pooled(&self) -> bool {
        self.cls_pooling
    }

    /// One forward pass over `enc` (rows padded to the longest).
    fn forward(&self, enc: &[&Encoding]) -> Result<Vec<Vec<f32>>> {
        let rows = enc.len();
        let width = enc.iter().map(|e| e.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(rows * width);
        let mut types = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for e in enc {
            let pad = width - e.len();
            ids.extend(e.get_ids().iter().copied().chain(std::iter::repeat_n(self.pad_id, pad)));
            types.extend(e.get_type_ids().iter().copied().chain(std::iter::repeat_n(0, pad)));
            mask.extend(e.get_attention_mask().iter().copied().chain(std::iter::repeat_n(0, pad)));
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let dev = &Device::Cpu;
            let types = Tensor::from_vec(types, (rows, width), dev)?;
            let mask = Tensor::from_vec(mask, (rows, width), dev)?;
            let out = self.model.forward(&ids, types, &mask, rows, width)?; // (rows, width, hidden)
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
        // A query (a few tokens) runs on one thread: its matmuls are too
        // small to gain from a second one, and on a loaded machine every
        // hand-off between threads waits for a scheduler slot.
        // (A pass already on a one-thread pool, a spawned query, runs there.)
        let out = if rows * width <= SMALL_PASS && on_one_thread_pool() {
            run()
        } else if rows * width <= SMALL_PASS {
            ONE_THREAD.with(|pool| match pool {
                Some(pool) => pool.install(run),
                None => run(),
            })
        } else {
            run()
        };
        let mut vecs = out.map_err(CanopyError::Inference)?;
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

    /// Texts are tokenised [`WINDOW`] at a time and embedded in batches of
    /// similar lengths (less padding, bounded activations); the vectors come
    /// back in the texts' order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for window in texts.chunks(WINDOW) {
            let inputs: Vec<&str> = window.iter().map(String::as_str).collect();
            let enc = self.tokenizer.encode_batch(inputs, true).map_err(|e| CanopyError::Tokenizer(e.to_string()))?;
            let mut order: Vec<usize> = (0..enc.len()).collect();
            order.sort_by_key(|&i| (enc[i].len(), i));
            let lens: Vec<usize> = order.iter().map(|&i| enc[i].len()).collect();
            let mut got: Vec<Vec<f32>> = vec![vec![]; enc.len()];
            let mut start = 0;
            for end in plan_batches(&lens) {
                let batch: Vec<&Encoding> = order[start..end].iter().map(|&i| &enc[i]).collect();
                for (&i, v) in order[start..end].iter().zip(self.forward(&batch)?) {
                    got[i] = v;
                }
                start = end;
            }
            out.extend(got);
        }
        Ok(out)
    }
}

/// L2-normalise in place (a zero vector stays zero), summing in f64.
/// (Public for the bench examples, which derive vectors at scale.)
pub fn normalize(v: &mut [f32]) {
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

    #[test]
    fn batches_respect_the_row_and_token_caps() {
        use super::{plan_batches, MAX_ROWS, TOKEN_BUDGET};
        assert_eq!(plan_batches(&[]), Vec::<usize>::new());
        assert_eq!(plan_batches(&[5; 200]), vec![MAX_ROWS, 2 * MAX_ROWS, 3 * MAX_ROWS, 200]);
        // 2048 / 256 = 8 rows of the longest width; a row over the budget goes alone
        let lens: Vec<usize> = std::iter::repeat_n(256, 10).chain([TOKEN_BUDGET + 1]).collect();
        assert_eq!(plan_batches(&lens), vec![8, 10, 11]);
        // growing widths: a batch closes when rows × the newest width passes the budget
        assert_eq!(plan_batches(&[100, 200, 300, 400, 500, 600]), vec![4, 6]);
    }
}
