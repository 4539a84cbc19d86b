//! The read-only health report (dialect §5.3) plus our `summary_stale`
//! (DESIGN §5) and per-source passport counts.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use forest_catalog::{Catalog, HeatStats, Trails};
use forest_derived::config::{local_path, GardenerConfig};
use forest_derived::outcomes::{known_problems, KnownProblem};
use forest_model::health_facts::{facts, NodeFacts, FACTS_VERSION, LEGACY_HEALTH_CACHE_PATH};
pub use forest_model::health_facts::{HEALTH_CACHE_PATH, MEDIA_STUB_SENTENCE};
use forest_model::ids;
use schemars::JsonSchema;
use serde::Serialize;

use crate::Result;

/// A node with a higher catalog degree is fat.
const FAT_DEGREE: i64 = 50;

/// `{errors, warnings}` of the lint engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LintCounts {
    /// Lint errors.
    pub errors: usize,
    /// Lint warnings.
    pub warnings: usize,
}

/// A passport whose body failed the fidelity check.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SuspectNode {
    /// Node id.
    pub id: String,
    /// `<reason code>: <what tripped it>`.
    pub reason: String,
}

/// Leaves by machine scent (issue 35): how much of the forest the Curator
/// has reached, and what `forest curate --pending` would work on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ScentCounts {
    /// Leaves with a curated summary (`scent: llm`).
    pub curated: usize,
    /// Leaves with a derived summary (`scent: derived`).
    pub derived: usize,
    /// Derived leaves a curation run would take (ingested, summary not
    /// edited by hand since).
    pub pending: usize,
}

/// Health of a forest (read-only).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HealthReport {
    /// Branch ids with > 150 `- [[` lines or > 3000 body tokens.
    pub needs_split: Vec<String>,
    /// Ids with catalog degree > 50.
    pub fat_nodes: Vec<String>,
    /// Lint counts.
    pub lint: LintCounts,
    /// Passports whose source file is gone (missing under the source's
    /// local uri, or marked `source_state: vanished`).
    pub stale_passports: Vec<String>,
    /// `type: media` ids still carrying the stub description.
    pub needs_description: Vec<String>,
    /// Managed links per confidence (`"%.1f"` buckets).
    pub uncertain_links: BTreeMap<String, usize>,
    /// Persistent heat `{rows, max, mean}`.
    pub heat: HeatStats,
    /// Machine-written summaries (`scent: derived|llm`) edited since
    /// (`scent_hash` no longer matches).
    pub summary_stale: Vec<String>,
    /// Passports per source name (`source_name`, else `default`).
    pub sources: BTreeMap<String, usize>,
    /// Passports planted with a body that failed the converter's fidelity
    /// check (`conversion_suspect`): id and reason.
    pub suspect_conversions: Vec<SuspectNode>,
    /// Source files the Gardener could not plant and remembers (unsupported,
    /// skipped, failed), with their reason: not re-read until their bytes
    /// or the converter change.
    pub known_problems: Vec<KnownProblem>,
    /// Curated vs derived leaves, and how many are pending curation.
    pub scent: ScentCounts,
    /// Why `_meta/gardener.yaml` could not be used for the stale check, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources_error: Option<String>,
}

/// A passport is stale when marked vanished or, for a configured local
/// source, when its file is gone (remote sources: unknown, not stale).
fn is_stale(f: &NodeFacts, roots: &HashMap<String, PathBuf>) -> bool {
    f.vanished
        || f.passport.as_ref().is_some_and(|(source, path)| roots.get(source).is_some_and(|r| !r.join(path).exists()))
}

/// Per-node facts summed over the forest (one accumulator per thread).
#[derive(Default)]
struct Agg {
    needs_split: Vec<String>,
    stale_passports: Vec<String>,
    needs_description: Vec<String>,
    summary_stale: Vec<String>,
    sources: BTreeMap<String, usize>,
    uncertain_links: BTreeMap<String, usize>,
    suspect: Vec<SuspectNode>,
    scent: ScentCounts,
}

impl Agg {
    fn add(mut self, id: &str, f: &NodeFacts, roots: &HashMap<String, PathBuf>) -> Agg {
        for (flag, list) in [
            (f.needs_split, &mut self.needs_split),
            (is_stale(f, roots), &mut self.stale_passports),
            (f.needs_description, &mut self.needs_description),
            (f.summary_stale, &mut self.summary_stale),
        ] {
            if flag {
                list.push(id.to_string());
            }
        }
        if let Some((s, _)) = &f.passport {
            *self.sources.entry(s.clone()).or_default() += 1;
        }
        for b in &f.buckets {
            *self.uncertain_links.entry(b.clone()).or_default() += 1;
        }
        if let Some(reason) = &f.suspect {
            self.suspect.push(SuspectNode { id: id.to_string(), reason: reason.clone() });
        }
        match f.leaf_scent.as_deref() {
            Some("llm") => self.scent.curated += 1,
            Some("derived") => self.scent.derived += 1,
            _ => {}
        }
        self.scent.pending += usize::from(f.curation_pending);
        self
    }

    fn merge(mut self, o: Agg) -> Agg {
        self.needs_split.extend(o.needs_split);
        self.stale_passports.extend(o.stale_passports);
        self.needs_description.extend(o.needs_description);
        self.summary_stale.extend(o.summary_stale);
        self.suspect.extend(o.suspect);
        self.scent.curated += o.scent.curated;
        self.scent.derived += o.scent.derived;
        self.scent.pending += o.scent.pending;
        for (k, v) in o.sources {
            *self.sources.entry(k).or_default() += v;
        }
        for (k, v) in o.uncertain_links {
            *self.uncertain_links.entry(k).or_default() += v;
        }
        self
    }
}

/// Health report of `forest` (dialect §5.3). One parallel pass reads each
/// node once for both the lint counts and the per-node facts (`_meta/*`
/// excluded from the facts); degrees and heat come from the catalog and
/// the heat store.
pub fn health(forest: &Path, catalog: &Catalog, trails: &Trails) -> Result<HealthReport> {
    let (roots, sources_error) = match GardenerConfig::load(forest) {
        Ok(cfg) => (
            cfg.sources
                .iter()
                .filter_map(|s| Some((s.name.clone(), local_path(&s.resolved_uri().ok()?)?)))
                .collect::<HashMap<_, _>>(),
            None,
        ),
        Err(e) => (HashMap::new(), Some(e.to_string())),
    };
    // Unparseable files are lint's business, not health's. Unchanged
    // nodes come from the cache: a run reads what changed since the last
    // (and nothing the Gardener wrote since).
    let _ = std::fs::remove_file(forest.join(LEGACY_HEALTH_CACHE_PATH));
    let (lint, mut agg, cache) = forest_model::lint_cache::lint_forest_cached(
        forest,
        &forest.join(HEALTH_CACHE_PATH),
        FACTS_VERSION,
        facts,
        Agg::default,
        |acc, id, f| acc.add(id, f, &roots),
        Agg::merge,
    );
    tracing::info!(event = "ranger.health_cache", hits = cache.hits, misses = cache.misses);
    for list in [&mut agg.needs_split, &mut agg.stale_passports, &mut agg.needs_description, &mut agg.summary_stale] {
        list.sort();
    }
    agg.suspect.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(HealthReport {
        needs_split: agg.needs_split,
        fat_nodes: fat_nodes(catalog)?,
        lint: LintCounts { errors: lint.errors, warnings: lint.warnings },
        stale_passports: agg.stale_passports,
        needs_description: agg.needs_description,
        uncertain_links: agg.uncertain_links,
        heat: trails.stats()?,
        summary_stale: agg.summary_stale,
        sources: agg.sources,
        suspect_conversions: agg.suspect,
        known_problems: known_problems(forest)?,
        scent: agg.scent,
        sources_error,
    })
}

fn fat_nodes(catalog: &Catalog) -> Result<Vec<String>> {
    let mut out = vec![];
    catalog.scan_degrees(|id, degree| {
        if degree > FAT_DEGREE && !ids::is_meta(id) && catalog.kind_and_summary(id)?.is_some() {
            out.push(id.to_string());
        }
        Ok::<(), crate::RangerError>(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passport_is_stale_when_vanished_or_its_local_file_is_gone() {
        let roots: HashMap<String, PathBuf> = [("default".to_string(), PathBuf::from("/nonexistent-src"))].into();
        let passport = |vanished| NodeFacts {
            vanished,
            passport: Some(("default".to_string(), "a.png".to_string())),
            ..NodeFacts::default()
        };
        assert!(is_stale(&passport(false), &roots));
        assert!(!is_stale(&passport(false), &HashMap::new()), "no configured root: unknown, not stale");
        assert!(is_stale(&passport(true), &HashMap::new()));
        assert!(!is_stale(&NodeFacts::default(), &roots));
    }
}
