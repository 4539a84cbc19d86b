//! `forest canopy build|status|search` and the vector half of `forest locate
//! --hybrid`, over `forest-canopy`.

use std::path::Path;

use crate::cli::{forest_root, print_json, ForestArg};
use anyhow::{Context, Result};
use clap::Subcommand;
pub use forest_canopy::MemoMode;
use forest_canopy::{canopy_dir, stale_reason, Embedder, Encoder, LocalEmbedder, Searcher};
use forest_derived::catalog::open_catalog;
use serde::Serialize;

/// `forest canopy ...`.
#[derive(Subcommand)]
pub enum CanopyCmd {
    /// Embed every node's scent anew into `_derived/canopy/` (FOREST_EMBED_MODEL).
    Build {
        #[command(flatten)]
        f: ForestArg,
        /// fast: the model's static distillation (thousands of nodes/s, what
        /// adopt and sync build); full: the sentence-transformer itself.
        /// Default: FOREST_EMBED_ENCODER, else fast.
        #[arg(long, value_parser = ["fast", "full"])]
        encoder: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Whether the canopy is usable: no-embedder | no-index | model-mismatch | stale | active.
    Status {
        #[command(flatten)]
        f: ForestArg,
        #[arg(long)]
        json: bool,
    },
    /// The vector ranking alone (what `locate --hybrid` fuses with BM25),
    /// with each node's cosine similarity to the query.
    Search {
        #[command(flatten)]
        f: ForestArg,
        /// Query words.
        #[arg(required = true)]
        query: Vec<String>,
        #[arg(short, long, default_value_t = 10)]
        k: usize,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Serialize)]
struct SearchHit {
    id: String,
    similarity: f64,
}

fn embedder(encoder: Option<&str>) -> Result<forest_canopy::SharedEmbedder> {
    let kind = match encoder.and_then(Encoder::parse) {
        Some(k) => k,
        None => Encoder::from_env()?,
    };
    forest_canopy::shared_encoder(kind)?.with_context(|| {
        format!(
            "{} is unset: name a sentence-transformer directory (bash ops/embed/install.sh)",
            forest_canopy::MODEL_VAR
        )
    })
}

#[derive(Serialize)]
struct BuildOut {
    #[serde(flatten)]
    report: forest_canopy::RefreshReport,
    elapsed_ms: u128,
    nodes_per_s: f64,
}

/// A nodes bar on stderr for a build, only on a terminal.
fn build_bar(catalog: &forest_catalog::Catalog) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let total = forest_canopy::catalog_len(catalog).ok()?;
    let pb = indicatif::ProgressBar::new(total as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("canopy [{bar:30}] {pos}/{len} nodes {per_sec} eta {eta}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    Some(pb)
}

/// Run one canopy subcommand; the exit code.
pub fn run(cmd: CanopyCmd) -> Result<u8> {
    match cmd {
        CanopyCmd::Build { f, encoder, json } => {
            let root = forest_root(&f)?;
            let catalog = open_catalog(&root)?;
            let e = embedder(encoder.as_deref())?;
            let t0 = std::time::Instant::now();
            let bar = build_bar(&catalog);
            let report = forest_canopy::build_forest(&root, &catalog, e.as_ref(), &|done| {
                if let Some(b) = &bar {
                    b.set_position(done as u64);
                }
            });
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let report = report?;
            let ms = t0.elapsed().as_millis();
            let out =
                BuildOut { nodes_per_s: report.embedded as f64 / (ms.max(1) as f64 / 1000.0), elapsed_ms: ms, report };
            if json {
                print_json(&out)?;
            } else {
                println!(
                    "canopy: {} vectors, model {}, dim {} ({} ms, {:.1} nodes/s)",
                    out.report.nodes, out.report.model, out.report.dim, out.elapsed_ms, out.nodes_per_s
                );
            }
            Ok(0)
        }
        CanopyCmd::Search { f, query, k, json } => {
            let root = forest_root(&f)?;
            let hits = forest_canopy::dense_scored(&root, &query.join(" "), k, MemoMode::Persist)
                .map_err(|e| anyhow::anyhow!("canopy search: {}", forest_model::error_chain(&e)))?;
            let hits: Vec<SearchHit> = hits.into_iter().map(|(id, similarity)| SearchHit { id, similarity }).collect();
            if json {
                print_json(&hits)?;
            } else {
                for h in &hits {
                    println!("{:.4}  {}", h.similarity, h.id);
                }
            }
            Ok(0)
        }
        CanopyCmd::Status { f, json } => {
            let root = forest_root(&f)?;
            let st = status(&root);
            if json {
                print_json(&st)?;
            } else {
                let model = st.index_model.as_deref().unwrap_or("none");
                println!("canopy: {} ({} vectors, model {model})", st.state, st.vectors);
                if let Some(r) = &st.stale {
                    println!("stale: {r}");
                }
            }
            Ok(0)
        }
    }
}

/// The canopy's state, as the reference's `canopy_status` names it (plus
/// `stale` and `damaged`).
#[derive(Serialize)]
pub struct Status {
    state: String,
    active: bool,
    index_model: Option<String>,
    query_model: Option<String>,
    vectors: usize,
    stale: Option<String>,
}

fn status(root: &Path) -> Status {
    let dir = canopy_dir(root);
    let (searcher, damaged) = match Searcher::open(&dir) {
        Ok(s) => (s, None),
        Err(e) => (None, Some(forest_model::error_chain(&e))),
    };
    let index_model = searcher.as_ref().map(|s| s.model().to_string());
    let kind = index_model.as_deref().map_or(Encoder::Fast, Encoder::of_model);
    let (query_model, load_err) = match LocalEmbedder::from_env() {
        Ok(e) => (
            e.map(|e| {
                format!("{}{}", e.model(), if kind == Encoder::Fast { forest_canopy::STATIC_SUFFIX } else { "" })
            }),
            None,
        ),
        Err(e) => (None, Some(forest_model::error_chain(&e))),
    };
    let stale = stale_reason(&dir);
    let state = if damaged.is_some() {
        "damaged"
    } else if query_model.is_none() {
        "no-embedder"
    } else if searcher.as_ref().is_none_or(|s| s.is_empty()) {
        "no-index"
    } else if index_model != query_model {
        "model-mismatch"
    } else if stale.is_some() {
        "stale"
    } else {
        "active"
    };
    let _ = load_err;
    Status {
        state: state.into(),
        active: state == "active",
        index_model,
        query_model,
        vectors: searcher.as_ref().map_or(0, Searcher::len),
        stale: stale.or(damaged),
    }
}
