//! `forest locate`: the catalog's one `locate` ([`forest_catalog::locate`]),
//! the same ranking the MCP tool serves. Hybrid whenever the forest has a
//! current canopy: the query embeds on another thread while this one runs
//! BM25.

use anyhow::Result;
use clap::{Args, ValueEnum};
use forest_canopy::{DenseQuery, MemoMode};
use forest_catalog::{fit_budget, locate, Admit, Fusion, LocateHooks, LocateQuery, Scope, Trails};
use forest_derived::catalog::{open_catalog, TRAILS_PATH};

use crate::cli::{forest_root, print_json, ForestArg};
use crate::render;

/// `--fusion`: how BM25 and the canopy combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FusionArg {
    /// CombSUM of BM25 and cosine (the default, chosen on real question sets).
    Blend,
    /// The reference engine's RRF (k = 60), for side-by-side runs.
    Rrf,
    /// BM25 alone: the canopy is not read.
    Bm25,
}

impl From<FusionArg> for Fusion {
    fn from(f: FusionArg) -> Fusion {
        match f {
            FusionArg::Blend => Fusion::Blend,
            FusionArg::Rrf => Fusion::Rrf,
            FusionArg::Bm25 => Fusion::Bm25,
        }
    }
}

/// `forest locate ...`.
#[derive(Args)]
pub struct LocateArgs {
    #[command(flatten)]
    f: ForestArg,
    /// Query words.
    query: Vec<String>,
    #[arg(short, long, default_value_t = 5)]
    k: usize,
    /// all | branches | notes
    #[arg(long, default_value = "all")]
    scope: String,
    /// Only this node type.
    #[arg(long = "type")]
    type_filter: Option<String>,
    /// Pheromone weight (0 disables heat).
    #[arg(long, default_value_t = 0.3)]
    alpha: f64,
    /// Session scope for session heat.
    #[arg(long)]
    session: Option<String>,
    /// How BM25 and the canopy's vector ranking combine. Unset: blend
    /// whenever the forest has a current canopy, BM25 alone (silently)
    /// when it has none. Named: a forest whose canopy cannot answer falls
    /// back to BM25 with a note.
    #[arg(long, value_enum)]
    fusion: Option<FusionArg>,
    /// The same as `--fusion blend` (kept for scripts written before
    /// hybrid became the default).
    #[arg(long, hide = true, conflicts_with = "fusion")]
    hybrid: bool,
    /// Token budget of the answer, as the MCP tool's (0: none, every one of
    /// the k results; for benches that compare whole rankings).
    #[arg(long, default_value_t = forest_catalog::LOCATE_BUDGET)]
    budget: usize,
    #[arg(long)]
    json: bool,
}

/// Run `forest locate`.
pub fn run(a: LocateArgs) -> Result<u8> {
    let root = forest_root(&a.f)?;
    let explicit = a.fusion.is_some() || a.hybrid;
    let q = LocateQuery {
        text: a.query.join(" "),
        k: a.k,
        scope: Scope::parse(&a.scope)?,
        type_filter: a.type_filter,
        alpha: a.alpha,
        fusion: a.fusion.map_or(Fusion::default(), Fusion::from),
        ..LocateQuery::default()
    };
    let res = std::thread::scope(|s| -> Result<_> {
        let (text, depth, at) = (q.text.as_str(), q.depth(), root.as_path());
        let dense = q
            .fusion
            .wants_vectors()
            .then(|| s.spawn(move || forest_canopy::begin_dense(at, text, depth, MemoMode::Persist)));
        let catalog = open_catalog(&root)?;
        let trails = Trails::open(&root.join(TRAILS_PATH))?;
        let heat = |ids: &[String]| trails.heat_map(ids, a.session.as_deref());
        let mut admit = |_: &str| Admit::Yes;
        let mut res = locate(&catalog, &q, LocateHooks { heat: &heat, admit: &mut admit }, || {
            let begun = dense?
                .join()
                .unwrap_or_else(|_| Err(forest_canopy::Fallback::Unusable("the vector search failed".into())));
            DenseQuery::answer(begun, explicit)
        })?;
        if a.budget > 0 {
            fit_budget(&mut res, a.budget)?;
        }
        Ok(res)
    })?;
    if let Some(note) = &res.note {
        eprintln!("note: {note}");
    }
    if a.json {
        print_json(&res)?;
        return Ok(0);
    }
    for r in &res.results {
        println!("{:.4}  {}  — {}", r.score, r.id, r.summary);
    }
    if res.results.is_empty() {
        println!("no match in {} node(s)", res.searched.unwrap_or(0));
        if let Some(h) = &res.hint {
            eprintln!("hint: {}", render::cli_hint(h));
        }
    }
    Ok(0)
}
