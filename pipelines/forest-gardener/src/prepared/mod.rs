//! Distributed ingest (issue 16): the gardener's side of the prepared store.
//!
//! Workers (`forest sync --shard I/N --store URI`, [`worker`]) list the
//! sources, take the new or changed files whose stable key falls in their
//! shard ([`Shard::owns`]), convert and curate them (summary and tags only)
//! and write one [`PreparedObject`] per file into a
//! [`forest_prepared::PreparedStore`]; they never write the forest's git
//! repository nor take its writer lock. The committer is a normal sync
//! with [`PreparedRun`] in its [`crate::RunOptions`]: the convert stage
//! looks every file up by [`PreparedRun::key`] after hashing it and only
//! converts what it does not find; the curate hook takes the stored
//! summary when the draft it would send is the one the worker sent
//! ([`draft_key`]). Closed-catalog link proposals and branch rollups stay
//! with the committer, the only place the whole catalog is known.
//!
//! Proposals are kept at the committer (chosen split). The split leaves
//! room for a second worker pass: once the committer has landed the run's
//! nodes, workers in fresh clones would propose for the new ids of their
//! shard against the clone's catalog and store the links keyed by (node
//! id, summary, catalog HEAD), which the hook would take as it takes
//! summaries; not built.
//!
//! In: listed files, conversions, curated drafts. Out: store objects
//! (worker) or conversions and summaries served from them (committer).
//! Touches the store only; the worker also reads the clone's passports.

mod tables;
pub mod worker;

pub use tables::{PreparedCell, PreparedTable, PreparedTables};

use crate::error::GardenError;
use forest_convert::{Conversion, SourceMeta};
use forest_prepared::{Lookup, PreparedStore, Put};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Version of the [`PreparedObject`] shape (part of every key). 2: datasets
/// and SQLite payloads are stored too (a version-1 committer would read
/// their objects as empty Markdown).
pub const OBJECT_VERSION: u32 = 2;

/// Which slice of the files a worker takes: index `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based index.
    pub index: u32,
    /// Number of shards (>= 1).
    pub count: u32,
}

impl Shard {
    /// Parse `I/N`, or `N` / `/N` with `I` from `index_env` (a Kubernetes
    /// Indexed Job's `JOB_COMPLETION_INDEX`).
    pub fn parse(spec: &str, index_env: Option<&str>) -> Result<Shard, GardenError> {
        let bad = |why: &str| GardenError::Schema(format!("--shard {spec:?}: {why}"));
        let (i, n) = match spec.split_once('/') {
            Some((i, n)) if !i.trim().is_empty() => (i.trim().to_string(), n),
            Some((_, n)) => {
                (index_env.ok_or_else(|| bad("no index given and JOB_COMPLETION_INDEX is unset"))?.into(), n)
            }
            None => (index_env.ok_or_else(|| bad("no index given and JOB_COMPLETION_INDEX is unset"))?.into(), spec),
        };
        let index: u32 = i.trim().parse().map_err(|_| bad("the index is not a number"))?;
        let count: u32 = n.trim().parse().map_err(|_| bad("the shard count is not a number"))?;
        if count == 0 || index >= count {
            return Err(bad("expected 0 <= I < N"));
        }
        Ok(Shard { index, count })
    }

    /// Whether `(source, rel)` belongs to this shard: blake3 of the pair,
    /// so the split is stable across runs, listings and hosts.
    pub fn owns(&self, source: &str, rel: &str) -> bool {
        shard_of(source, rel, self.count) == self.index
    }
}

/// The shard of `(source, rel)` among `count`.
pub fn shard_of(source: &str, rel: &str, count: u32) -> u32 {
    let k = forest_prepared::key_of(&["shard", source, rel]);
    let n = u64::from_str_radix(&k[..16], 16).unwrap_or(0);
    (n % u64::from(count.max(1))) as u32
}

/// A conversion as stored (forest-convert's types are not serde): a
/// Markdown body, or the tables of a dataset or SQLite payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedConversion {
    /// Node title from the converter.
    pub title: String,
    /// Markdown body.
    pub body: String,
    /// `title:` of a source `.md` frontmatter.
    pub meta_title: Option<String>,
    /// Source tags.
    pub tags: Vec<String>,
    /// Source aliases.
    pub aliases: Vec<String>,
    /// Detected language.
    pub lang: Option<String>,
    /// Why the body holds no text of the file.
    pub stub: Option<String>,
    /// The language of a source file converted as code.
    #[serde(default)]
    pub code: Option<String>,
    /// Its top-level definitions.
    #[serde(default)]
    pub defines: Vec<String>,
    /// A dataset's or payload's tables (the body and meta are then empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<PreparedTables>,
}

impl PreparedConversion {
    /// The stored form of a conversion, of any kind.
    fn of(c: &Conversion) -> PreparedConversion {
        let tabular = |title: &str, tables: PreparedTables| PreparedConversion {
            title: title.to_string(),
            body: String::new(),
            meta_title: None,
            tags: vec![],
            aliases: vec![],
            lang: None,
            stub: None,
            code: None,
            defines: vec![],
            tables: Some(tables),
        };
        match c {
            Conversion::Markdown { title, body, meta } => PreparedConversion {
                title: title.clone(),
                body: body.clone(),
                meta_title: meta.title.clone(),
                tags: meta.tags.clone(),
                aliases: meta.aliases.clone(),
                lang: meta.lang.clone(),
                stub: meta.stub.clone(),
                code: meta.code.clone(),
                defines: meta.defines.clone(),
                tables: None,
            },
            Conversion::Dataset { title, tables } => tabular(title, PreparedTables::dataset(tables)),
            Conversion::Payload { title, tables } => tabular(title, PreparedTables::payload(tables)),
        }
    }

    fn conversion(&self) -> Conversion {
        let title = self.title.clone();
        match &self.tables {
            Some(PreparedTables::Dataset(t)) => {
                Conversion::Dataset { title, tables: PreparedTables::dataset_tables(t) }
            }
            Some(PreparedTables::Payload(t)) => {
                Conversion::Payload { title, tables: PreparedTables::payload_tables(t) }
            }
            None => Conversion::Markdown {
                title,
                body: self.body.clone(),
                meta: SourceMeta {
                    title: self.meta_title.clone(),
                    tags: self.tags.clone(),
                    aliases: self.aliases.clone(),
                    lang: self.lang.clone(),
                    stub: self.stub.clone(),
                    code: self.code.clone(),
                    defines: self.defines.clone(),
                },
            },
        }
    }
}

/// A curated summary as the worker got it, for the draft it was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedCuration {
    /// [`draft_key`] of the draft sent to the model.
    pub input: String,
    /// Summary (passes `validate_summary`).
    pub summary: String,
    /// Tags after the model's were appended.
    pub tags: Vec<String>,
    /// `llm` (fallbacks are not stored: the committer retries them).
    pub scent: String,
}

/// Where an object came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Source name.
    pub source: String,
    /// Source-relative path.
    pub path: String,
    /// sha256 of the source bytes.
    pub sha256: String,
    /// blake3 of the source bytes (`blake3:` tagged).
    pub blake3: String,
    /// Size in bytes.
    pub size: u64,
    /// Converter id and version ([`crate::outcomes::converter_key`]).
    pub converter: String,
    /// Curator prompt version.
    pub prompt_version: String,
    /// Model id (empty when the worker did not curate).
    pub model: String,
    /// `I/N` of the worker.
    pub shard: String,
}

/// One store object: the prepared result of one source file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedObject {
    /// [`OBJECT_VERSION`].
    pub version: u32,
    /// Inputs and versions.
    pub provenance: Provenance,
    /// The conversion (a Markdown body, or a dataset's or payload's
    /// tables); None when the worker leaves the file to the committer
    /// (unsupported, empty or failing files): the committer converts and
    /// reports those itself, also under `--prepared-only` (the file was
    /// seen, nothing is waiting for it).
    pub conversion: Option<PreparedConversion>,
    /// Converter warnings.
    pub warnings: Vec<String>,
    /// Draft passport fields the worker derived (title, derived summary,
    /// tags): what the plan stage will draft from this conversion.
    pub draft_title: String,
    /// Derived summary of the draft.
    pub draft_summary: String,
    /// The curation outcome, when the model wrote the summary.
    pub curation: Option<PreparedCuration>,
}

/// Key of the draft a summary request is made from: title, body, tags
/// before curation and the operator directives (what the request says).
pub fn draft_key(title: &str, body: &str, tags: &[String], directives: &str) -> String {
    let tags = tags.join("\n");
    forest_prepared::key_of(&["draft", title, body, &tags, directives.trim()])
}

/// Why a store object could not be written (a report line of its file).
#[derive(Debug, thiserror::Error)]
pub enum StoreWriteError {
    /// The object did not encode as JSON.
    #[error("encode")]
    Encode(#[source] serde_json::Error),
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] forest_prepared::PreparedError),
}

/// Per-run counters of store use (atomic: the convert stage is parallel).
#[derive(Debug, Default)]
pub struct StoreCounters {
    /// Conversions served from the store.
    pub hits: AtomicUsize,
    /// Objects that failed verification (redone).
    pub corrupt: AtomicUsize,
    /// Summaries served from the store.
    pub curations: AtomicUsize,
}

/// The prepared store as one run (worker or committer) uses it.
#[derive(Debug)]
pub struct PreparedRun {
    /// The store.
    pub store: PreparedStore,
    /// Committer: leave files the store lacks for the next run (workers
    /// still running) instead of converting them here.
    pub prepared_only: bool,
    model: OnceLock<String>,
    curations: Mutex<HashMap<String, PreparedCuration>>,
    /// Counters since the last [`PreparedRun::take_counts`].
    pub counters: StoreCounters,
    /// Set by the worker: an object of any kind means "done" (a marker
    /// left to the committer included).
    pub(crate) worker: std::sync::atomic::AtomicBool,
}

impl PreparedRun {
    /// Open the store at `uri` (`s3://bucket/prefix`, a directory).
    pub fn open(uri: &str, prepared_only: bool) -> Result<PreparedRun, GardenError> {
        let store = PreparedStore::open(uri)
            .map_err(|e| GardenError::Schema(format!("--store: {}", crate::error::chain(&e))))?;
        Ok(PreparedRun {
            store,
            prepared_only,
            model: OnceLock::new(),
            curations: Mutex::new(HashMap::new()),
            counters: StoreCounters::default(),
            worker: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Record the curating model (part of every key); unset = no curation.
    pub fn set_model(&self, model: &str) {
        let _ = self.model.set(model.to_string());
    }

    /// The model id of the keys (empty without curation).
    pub fn model(&self) -> &str {
        self.model.get().map(String::as_str).unwrap_or("")
    }

    /// Store key of a file: its bytes' sha256, its path (titles and
    /// converter routing follow the name), converter id@version, prompt
    /// version, model and the object version.
    pub fn key(&self, source: &str, rel: &str, sha256: &str, converter: &str) -> String {
        let v = OBJECT_VERSION.to_string();
        forest_prepared::key_of(&[
            "forest-prepared",
            &v,
            source,
            rel,
            sha256,
            converter,
            forest_curator::PROMPT_VERSION,
            self.model(),
        ])
    }

    /// Look a file up; a corrupt or undecodable object counts and misses.
    pub(crate) fn lookup(&self, key: &str) -> Option<PreparedObject> {
        match self.store.get(key) {
            Ok(Lookup::Hit(bytes)) => match serde_json::from_slice::<PreparedObject>(&bytes) {
                Ok(o) if o.version == OBJECT_VERSION => Some(o),
                _ => {
                    self.counters.corrupt.fetch_add(1, Ordering::Relaxed);
                    None
                }
            },
            Ok(Lookup::Miss) => None,
            Ok(Lookup::Corrupt(why)) => {
                tracing::warn!(event = "prepared.corrupt", key, why, "store object failed verification: redone");
                self.counters.corrupt.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(e) => {
                tracing::warn!(event = "prepared.error", key, error = %crate::error::chain(&e), "store lookup failed: converting here");
                None
            }
        }
    }

    /// The conversion and warnings the store object `o` serves (the
    /// committer's convert stage), None when it holds no conversion.
    pub(crate) fn fill(&self, o: PreparedObject) -> Option<(Conversion, Vec<String>)> {
        let conv = o.conversion?;
        self.counters.hits.fetch_add(1, Ordering::Relaxed);
        if let Some(cur) = o.curation {
            let mut m = self.curations.lock().unwrap_or_else(|p| p.into_inner());
            m.insert(cur.input.clone(), cur);
        }
        Some((conv.conversion(), o.warnings))
    }

    /// The stored curation of a draft with this [`draft_key`], if any.
    pub fn curation_for(&self, key: &str) -> Option<PreparedCuration> {
        let m = self.curations.lock().unwrap_or_else(|p| p.into_inner());
        let hit = m.get(key).cloned();
        if hit.is_some() {
            self.counters.curations.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    /// Write an object once; an object already under the key that fails
    /// verification (truncated, tampered) is replaced, a good one kept.
    pub(crate) fn write(&self, key: &str, o: &PreparedObject) -> Result<Put, StoreWriteError> {
        let bytes = serde_json::to_vec(o).map_err(StoreWriteError::Encode)?;
        match self.store.put(key, &bytes)? {
            Put::Written => Ok(Put::Written),
            Put::Exists => match self.store.get(key)? {
                Lookup::Corrupt(_) => Ok(self.store.replace(key, &bytes)?),
                _ => Ok(Put::Exists),
            },
        }
    }

    /// Counters since the last call, reset: (hits, corrupt, curations).
    pub(crate) fn take_counts(&self) -> (usize, usize, usize) {
        (
            self.counters.hits.swap(0, Ordering::Relaxed),
            self.counters.corrupt.swap(0, Ordering::Relaxed),
            self.counters.curations.swap(0, Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_split_stably() {
        assert_eq!(Shard::parse("2/4", None).unwrap(), Shard { index: 2, count: 4 });
        assert_eq!(Shard::parse("4", Some("3")).unwrap(), Shard { index: 3, count: 4 });
        assert_eq!(Shard::parse("/4", Some("0")).unwrap(), Shard { index: 0, count: 4 });
        for bad in ["4/4", "x/2", "1/0"] {
            assert!(Shard::parse(bad, None).is_err(), "{bad}");
        }
        assert!(Shard::parse("4", None).unwrap_err().to_string().contains("JOB_COMPLETION_INDEX"));
        // Every file lands in exactly one shard, and the split is not degenerate.
        let shards: Vec<Shard> = (0..4).map(|i| Shard { index: i, count: 4 }).collect();
        let mut sizes = [0usize; 4];
        for i in 0..400 {
            let rel = format!("dir/file-{i}.md");
            let owners: Vec<usize> = (0..4).filter(|&s| shards[s].owns("drive", &rel)).collect();
            assert_eq!(owners.len(), 1);
            sizes[owners[0]] += 1;
            assert_eq!(shard_of("drive", &rel, 4) as usize, owners[0]);
        }
        assert!(sizes.iter().all(|&n| n > 60), "{sizes:?}");
    }

    #[test]
    fn keys_follow_every_input_and_objects_roundtrip() {
        let d = tempfile::tempdir().unwrap();
        let run = PreparedRun::open(d.path().to_str().unwrap(), false).unwrap();
        let k = run.key("drive", "a.md", "abc", "forest 0.1.0: markdown");
        assert_ne!(k, run.key("drive", "b.md", "abc", "forest 0.1.0: markdown"));
        assert_ne!(k, run.key("drive", "a.md", "abd", "forest 0.1.0: markdown"));
        assert_ne!(k, run.key("drive", "a.md", "abc", "forest 0.2.0: markdown"));
        run.set_model("m1");
        assert_ne!(k, run.key("drive", "a.md", "abc", "forest 0.1.0: markdown"), "the model is part of the key");
        let conv = Conversion::Markdown {
            title: "A".into(),
            body: "# A\n\nText.\n".into(),
            meta: SourceMeta { tags: vec!["t".into()], ..Default::default() },
        };
        let o = PreparedObject {
            version: OBJECT_VERSION,
            provenance: Provenance {
                source: "drive".into(),
                path: "a.md".into(),
                sha256: "abc".into(),
                blake3: "blake3:x".into(),
                size: 3,
                converter: "c".into(),
                prompt_version: forest_curator::PROMPT_VERSION.into(),
                model: "m1".into(),
                shard: "0/1".into(),
            },
            conversion: Some(PreparedConversion::of(&conv)),
            warnings: vec![],
            draft_title: "A".into(),
            draft_summary: "Text.".into(),
            curation: Some(PreparedCuration {
                input: draft_key("A", "Text.", &[], ""),
                summary: "Curated.".into(),
                tags: vec![],
                scent: "llm".into(),
            }),
        };
        assert_eq!(run.write(&k, &o).unwrap(), Put::Written);
        let back = run.lookup(&k).unwrap();
        assert_eq!(back, o);
        assert_eq!(back.conversion.as_ref().map(|c| c.conversion()), Some(conv));
        assert!(run.lookup(&run.key("drive", "zzz.md", "abc", "c")).is_none());
        assert_eq!(draft_key("A", "b", &["x".into()], " d "), draft_key("A", "b", &["x".into()], "d"));
        assert_ne!(draft_key("A", "b", &["x".into()], ""), draft_key("A", "b", &[], ""));
    }
}
