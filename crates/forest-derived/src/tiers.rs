//! Reading through the storage tiers (DESIGN §8, dialect §3.11, §8):
//! FLESH (`inline` / `cached` / `reference` bodies) and BONE (payloads at
//! the source, fetched through the hash-validated cache in
//! `_derived/payloads/`). The map (passports + catalog) never needs either.

use crate::catalog::open_catalog;
use crate::config::{local_path, s3_options, GardenerConfig};
use crate::hash::hash_file;
use crate::paths::cached_body_path;
pub use crate::paths::PAYLOADS_DIR;
use crate::{DerivedError, Result};
use forest_model::ids;
use forest_model::lint::is_remote;
use forest_model::node::Node;
use forest_storage::{PayloadCache, S3Client};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Open the payload cache, with an S3 client configured like the forest's
/// first S3 source (endpoint, path style), else from the AWS environment.
pub fn open_cache(forest: &Path) -> Result<PayloadCache> {
    let config = GardenerConfig::load(forest)?;
    let opts = match config.sources.iter().find(|s| s.uri.starts_with("s3://")) {
        Some(s) => s3_options(s),
        None => forest_storage::S3Options::from_env(),
    };
    let client = S3Client::new(&opts).map_err(DerivedError::Storage)?;
    let cache =
        PayloadCache::open(&forest.join(PAYLOADS_DIR), Some(Arc::new(client))).map_err(DerivedError::Storage)?;
    // `rclone://` payloads: the config of the forest's first rclone source.
    Ok(match config.sources.iter().find(|s| s.uri.starts_with("rclone:")) {
        Some(s) => cache.with_rclone(crate::config::rclone_options(s)?),
        None => cache,
    })
}

fn load_node(forest: &Path, id: &str) -> Result<Node, TierError> {
    let id = id.trim_end_matches(".md");
    if id.is_empty() || id.starts_with('/') || id.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err(TierError::NotFound(format!("not a node id: {id}")));
    }
    let path = forest.join(ids::id_to_path(id));
    if !inside(forest, &path) {
        return Err(TierError::Forbidden(format!("{id}: the node file is a symlink that leaves the forest")));
    }
    let text = std::fs::read_to_string(path).map_err(|_| TierError::NotFound(format!("node not found: {id}")))?;
    Node::parse(&text).map_err(|e| TierError::Frontmatter(format!("{id}: {e}")))
}

/// Why a body or a node could not be read. Each message names the node;
/// [`TierError::code`] is the dialect's error code.
#[derive(Debug, thiserror::Error)]
pub enum TierError {
    /// The node, its payload, cached body or source is not there (or
    /// changed since the last sync).
    #[error("E_NOT_FOUND: {0}")]
    NotFound(String),
    /// The node's frontmatter does not parse.
    #[error("E_FRONTMATTER: {0}")]
    Frontmatter(String),
    /// The node names an unknown content policy.
    #[error("E_SCHEMA: {0}")]
    Schema(String),
    /// The node or its payload leads outside the forest and its sources.
    #[error("E_FORBIDDEN: {0}")]
    Forbidden(String),
}

impl TierError {
    /// The dialect's error code.
    pub fn code(&self) -> forest_model::ErrorCode {
        match self {
            TierError::NotFound(_) => forest_model::ErrorCode::NotFound,
            TierError::Frontmatter(_) => forest_model::ErrorCode::Frontmatter,
            TierError::Schema(_) => forest_model::ErrorCode::Schema,
            TierError::Forbidden(_) => forest_model::ErrorCode::Forbidden,
        }
    }
}

/// Result of fetching one node's payload.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FetchItem {
    /// Node id.
    pub id: String,
    /// The node's `payload` value.
    pub payload: Option<String>,
    /// Local file holding the verified bytes.
    pub path: Option<String>,
    /// True when the payload is a local file (nothing fetched).
    pub local: bool,
    /// Why the fetch failed.
    pub error: Option<String>,
}

/// `forest fetch` report.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct FetchReport {
    /// Report shape version.
    pub version: u32,
    /// One entry per requested id.
    pub items: Vec<FetchItem>,
}

/// Fetch one node's payload (BONE): local payloads are checked to exist,
/// remote ones go through the cache (sha256-verified against `payload_hash`).
pub fn fetch_payload(forest: &Path, cache: &PayloadCache, id: &str) -> FetchItem {
    let mut item = FetchItem { id: id.to_string(), payload: None, path: None, local: false, error: None };
    let node = match load_node(forest, id) {
        Ok(n) => n,
        Err(e) => {
            item.error = Some(e.to_string());
            return item;
        }
    };
    let Some(payload) = node.get_str("payload") else {
        item.error = Some(format!("E_NOT_FOUND: {id} has no payload"));
        return item;
    };
    item.payload = Some(payload.clone());
    if let Err(e) = check_payload(forest, id, &payload) {
        item.error = Some(e.to_string());
        return item;
    }
    if is_remote(&payload) {
        match cache.get(&payload, node.get_str("payload_hash").as_deref()) {
            Ok(p) => item.path = Some(p.to_string_lossy().into_owned()),
            Err(e) => item.error = Some(e.to_string()),
        }
    } else {
        item.local = true;
        let p = forest.join(ids::folder_of(id)).join(&payload);
        if p.is_file() {
            item.path = Some(p.to_string_lossy().into_owned());
        } else {
            item.error = Some(format!("E_NOT_FOUND: payload missing: {payload}"));
        }
    }
    item
}

/// Where a payload may come from (the rule of `fetch`, `plant`, `graft`):
/// a relative path stays inside the forest (no `..` out, no symlink out),
/// a `file://` URI lies inside a configured local source root, other
/// remote schemes (`s3://`) go through the cache. `E_FORBIDDEN` otherwise.
pub fn check_payload(forest: &Path, id: &str, payload: &str) -> Result<(), TierError> {
    let refuse = |why: &str| Err(TierError::Forbidden(format!("{id}: payload '{payload}' {why}")));
    let forest = std::fs::canonicalize(forest).unwrap_or_else(|_| forest.to_path_buf());
    if let Some(rest) = payload.strip_prefix("file://") {
        let raw = rest.strip_prefix("localhost").unwrap_or(rest);
        let bytes: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
        let path = PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
        let roots = GardenerConfig::load(&forest).map(|c| c.sources).unwrap_or_default();
        let ok = roots
            .iter()
            .filter_map(|s| s.resolved_uri().ok())
            .filter_map(|u| local_path(&u))
            .any(|r| r.is_absolute() && inside(&r, &path));
        return if ok { Ok(()) } else { refuse("is a file:// path outside every configured source") };
    }
    if is_remote(payload) {
        return Ok(());
    }
    if payload.starts_with('/') || payload.contains('\0') {
        return refuse("is an absolute path (payloads are relative to their node)");
    }
    if inside(&forest, &forest.join(ids::folder_of(id)).join(payload)) {
        Ok(())
    } else {
        refuse("leads outside the forest")
    }
}

/// True when `path` (written under `root`, raw or canonical) stays under
/// `root`: `..` is resolved lexically, then the deepest existing ancestor
/// through its symlinks.
pub fn inside(root: &Path, path: &Path) -> bool {
    use std::path::Component;
    let Ok(croot) = std::fs::canonicalize(root) else { return false };
    let Some(rel) = path.strip_prefix(root).or_else(|_| path.strip_prefix(&croot)).ok() else { return false };
    let mut full = croot.clone();
    for c in rel.components() {
        match c {
            Component::ParentDir if !full.pop() || !full.starts_with(&croot) => return false,
            Component::Normal(n) => full.push(n),
            _ => {}
        }
    }
    let mut probe = full.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(probe) {
            return c.starts_with(&croot);
        }
        match probe.parent() {
            Some(p) => probe = p,
            None => return false,
        }
    }
}

/// `forest prefetch` report (dialect §8).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct PrefetchReport {
    /// Report shape version.
    pub version: u32,
    /// Ids whose remote payload is now cached.
    pub fetched: Vec<String>,
    /// Payloads that are local files.
    pub already_local: usize,
    /// `"<id>: <message>"` per failure.
    pub errors: Vec<String>,
}

/// Fetch every remote payload under `scope` (`""`/`_index` = whole forest,
/// else a branch id or folder) into the cache, in parallel.
pub fn prefetch(forest: &Path, cache: &PayloadCache, scope: &str) -> Result<PrefetchReport> {
    use rayon::prelude::*;
    let folder = scope.trim_end_matches("/_index").trim_end_matches("_index").trim_matches('/');
    let prefix = if folder.is_empty() { String::new() } else { format!("{folder}/") };
    let cat = open_catalog(forest)?;
    let rows: Vec<(String, String, Option<String>)> = cat
        .payload_rows(&prefix)
        .map_err(DerivedError::Catalog)?
        .into_iter()
        .map(|r| (r.id, r.payload, r.hash))
        .collect();
    let mut report = PrefetchReport { version: 1, ..Default::default() };
    let (remote, local): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(_, p, _)| is_remote(p));
    report.already_local = local.len();
    let results: Vec<(String, Result<PathBuf, _>)> = remote
        .par_iter()
        .map(|(id, p, h)| (id.clone(), cache.get(p, h.as_deref().filter(|h| !h.is_empty()))))
        .collect();
    for (id, r) in results {
        match r {
            Ok(_) => report.fetched.push(id),
            Err(e) => report.errors.push(format!("{id}: {e}")),
        }
    }
    Ok(report)
}

/// The FLESH of a node: the inline body, the cached body, or the live
/// source text (`reference`, verified against `source_hash`).
pub fn read_body(forest: &Path, cache: Option<&PayloadCache>, id: &str) -> Result<String, TierError> {
    let node = load_node(forest, id)?;
    match node.get_str("content").as_deref() {
        None | Some("inline") => Ok(node.body),
        Some("cached") => {
            let p = cached_body_path(forest, id);
            if !inside(forest, &p) {
                return Err(TierError::Forbidden(format!("{id}: the cached body is a symlink that leaves the forest")));
            }
            std::fs::read_to_string(&p).map_err(|_| {
                TierError::NotFound(format!(
                    "cached body missing: _derived/bodies/{id}.md (run `forest sync` to regenerate it)"
                ))
            })
        }
        Some("reference") => read_reference(forest, cache, &node, id),
        Some(other) => Err(TierError::Schema(format!("unknown content policy '{other}' on {id}"))),
    }
}

fn read_reference(forest: &Path, cache: Option<&PayloadCache>, node: &Node, id: &str) -> Result<String, TierError> {
    let config = GardenerConfig::load(forest).map_err(|e| TierError::NotFound(e.to_string()))?;
    let rel = node.get_str("source_path").ok_or_else(|| TierError::NotFound(format!("{id} has no source_path")))?;
    let src = match node.get_str("source_name") {
        Some(n) => config.source(&n).cloned(),
        None => config.sources.first().cloned(),
    }
    .ok_or_else(|| TierError::NotFound(format!("the source of {id} is not configured")))?;
    if rel.starts_with('/') || rel.split('/').any(|c| c.is_empty() || c == "..") {
        return Err(TierError::NotFound(format!("source of {id} is outside its source root")));
    }
    let uri = src.resolved_uri().map_err(|e| TierError::NotFound(format!("{e}")))?;
    let path = if uri.starts_with("s3://") {
        let cache =
            cache.ok_or_else(|| TierError::NotFound("no payload cache to read an s3:// reference".to_string()))?;
        let loc = forest_storage::S3Location::parse(&uri).map_err(|e| TierError::NotFound(format!("{e}")))?;
        let uri = crate::paths::s3_uri(&loc.bucket, &format!("{}{rel}", loc.prefix));
        cache.get(&uri, None).map_err(|e| TierError::NotFound(format!("{e}")))?
    } else if uri.starts_with("rclone:") {
        let cache =
            cache.ok_or_else(|| TierError::NotFound("no payload cache to read an rclone reference".to_string()))?;
        let loc = forest_storage::RcloneLocation::parse(&uri).map_err(|e| TierError::NotFound(format!("{e}")))?;
        cache.get(&loc.object_uri(&rel), None).map_err(|e| TierError::NotFound(format!("{e}")))?
    } else {
        let root = local_path(&uri).ok_or_else(|| TierError::NotFound(format!("bad source uri for {id}")))?;
        let root =
            std::fs::canonicalize(&root).map_err(|_| TierError::NotFound(format!("source root of {id} is missing")))?;
        let p = std::fs::canonicalize(root.join(&rel))
            .map_err(|_| TierError::NotFound(format!("source of {id} is missing")))?;
        // Containment: never read outside the source root (no quoting what is there).
        if !p.starts_with(&root) {
            return Err(TierError::NotFound(format!("source of {id} is outside its source root")));
        }
        p
    };
    if let Some(expected) = node.get_str("source_hash").filter(|h| !h.is_empty()) {
        // blake3 (older passports of ours) or sha256 (the dialect's, and ours now).
        let h = hash_file(&path, !expected.starts_with("blake3:"))
            .map_err(|e| TierError::NotFound(format!("cannot read the source of {id}: {e}")))?;
        if !h.matches(&expected) {
            return Err(TierError::NotFound(format!(
                "the source of {id} changed since the last sync (run `forest sync`)"
            )));
        }
    }
    std::fs::read_to_string(&path).map_err(|e| TierError::NotFound(format!("cannot read the source of {id}: {e}")))
}
