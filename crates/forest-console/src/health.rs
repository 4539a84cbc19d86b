//! The health page: nodes per branch and the catalog's state (ranges of
//! the catalog's id index, read-only),
//! heat over the tree (the trails store, summed per branch the caller
//! sees), the last Gardener and Ranger runs and the nodes each source
//! planted over time (from the commit history: every batch's subject
//! carries its counts and source). The run history names sources across
//! the whole forest, so only an unscoped token sees it.
//!
//! What changes only with a commit is kept per (HEAD, scope) while HEAD
//! stays, and the heat per scope while the trails store's files are
//! unchanged (reading every heat row is dear at 10^6 rows).
//!
//! In: an access. Out: the page's context. Touches: reads the trails
//! store, `git log`, the engines' pool.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use forest_vine::access::Access;
use serde_json::{json, Value};

use crate::error::ConsoleError;
use crate::svg;

/// A changed trails store is re-read at most this often.
pub const CACHE_TTL: Duration = Duration::from_secs(30);

/// Commits read for the run history.
pub const RUN_COMMITS: usize = 500;

/// Runs listed.
pub const RUNS_SHOWN: usize = 20;

/// Bars per plot.
const TOP: usize = 15;

/// One run, parsed from a commit subject.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Run {
    /// Commit time (ISO 8601).
    pub at: String,
    /// `gardener(adopt)`, `gardener(sync)`, `ranger`, ...
    pub kind: String,
    /// The source a Gardener batch read.
    pub source: String,
    /// Counts of a Gardener batch.
    pub planted: u64,
    /// Updated nodes.
    pub updated: u64,
    /// Moved nodes.
    pub moved: u64,
    /// Stale nodes.
    pub stale: u64,
    /// The rest of the subject (a Ranger run's counts).
    pub other: String,
}

/// A run from one commit subject; `None` for commits no run made.
pub fn parse_run(at: &str, subject: &str) -> Option<Run> {
    if let Some(rest) = subject.strip_prefix("ranger:") {
        return Some(Run { at: at.into(), kind: "ranger".into(), other: rest.trim().into(), ..Run::default() });
    }
    let (kind, rest) = subject.split_once("): ")?;
    if !kind.starts_with("gardener(") {
        return None;
    }
    let count = |word: &str| -> u64 {
        rest.split(',').find_map(|p| p.trim().strip_suffix(word).and_then(|n| n.trim().parse().ok())).unwrap_or(0)
    };
    let source = rest.split("[source=").nth(1).and_then(|s| s.split(']').next()).unwrap_or_default();
    let rest_counts = rest.split(" [source=").next().unwrap_or(rest);
    let stale = rest_counts
        .split(',')
        .find_map(|p| p.trim().strip_suffix("stale").and_then(|n| n.trim().parse().ok()))
        .unwrap_or(0);
    Some(Run {
        at: at.into(),
        kind: format!("{kind})"),
        source: source.into(),
        planted: count("planted"),
        updated: count("updated"),
        moved: count("moved"),
        stale,
        other: String::new(),
    })
}

/// Runs newest first from `git log` records (`commit \x1f at \x1f subject`).
pub fn runs_of(log: &str) -> Vec<Run> {
    log.lines()
        .filter_map(|l| {
            let mut p = l.splitn(3, '\u{1f}');
            let (_, at, subject) = (p.next()?, p.next()?, p.next()?);
            parse_run(at, subject)
        })
        .collect()
}

/// Nodes planted per source over time (cumulative, by day), oldest first.
pub fn growth(runs: &[Run]) -> (Vec<String>, Vec<svg::Series>) {
    let mut per: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut days: Vec<String> = vec![];
    for r in runs.iter().rev().filter(|r| r.kind.starts_with("gardener")) {
        let day: String = r.at.chars().take(10).collect();
        let src = if r.source.is_empty() { "(none)".to_string() } else { r.source.clone() };
        let series = per.entry(src).or_default();
        let before = series.values().last().copied().unwrap_or(0.0);
        series.insert(day.clone(), before + r.planted as f64);
        if !days.contains(&day) {
            days.push(day);
        }
    }
    days.sort();
    let series = per.into_iter().map(|(k, m)| (k, m.into_iter().collect())).collect();
    (days, series)
}

/// The top branch an id lies in, as the caller sees the tree: its first
/// folder, or for a scoped caller the branch prefix that holds it.
fn branch_of(access: &Access, id: &str) -> String {
    if let Some(b) = access.branches.iter().find(|b| id.starts_with(b.as_str())) {
        return b.trim_end_matches('/').to_string();
    }
    id.split_once('/').map_or_else(|| "(master)".to_string(), |(b, _)| b.to_string())
}

/// Heat summed per branch over the trails rows `access` sees.
pub fn heat_per_branch(access: &Access, rows: &[(String, f64, f64)]) -> Vec<(String, f64)> {
    let mut m: HashMap<String, f64> = HashMap::new();
    for (id, heat, _) in rows.iter().filter(|r| access.visible(&r.0)) {
        *m.entry(branch_of(access, id)).or_default() += heat;
    }
    let mut v: Vec<(String, f64)> = m.into_iter().filter(|r| r.1 > 0.0).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(TOP);
    v
}

fn git(root: &Path, args: &[&str]) -> String {
    std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// The parts of the page that change only with a commit (read off the
/// async threads): HEAD, the run history, the catalog's and the canopy's state.
struct Disk {
    head: String,
    log: String,
    catalog_bytes: u64,
    canopy: String,
}

fn read_disk(root: &Path, with_log: bool) -> Disk {
    let head = git(root, &["rev-parse", "--short=12", "HEAD"]).trim().to_string();
    let log = if with_log {
        git(root, &["log", &format!("-n{RUN_COMMITS}"), "--format=%H%x1f%aI%x1f%s"])
    } else {
        String::new()
    };
    let catalog_bytes = std::fs::metadata(root.join(forest_derived::paths::CATALOG_PATH)).map(|m| m.len()).unwrap_or(0);
    let canopy_dir = root.join("_derived/canopy");
    let canopy = if !canopy_dir.is_dir() {
        "none (locate ranks by BM25 and heat)".to_string()
    } else if canopy_dir.join("stale.json").is_file() {
        "present, stale (the next writer or `forest canopy refresh` brings it up to date)".to_string()
    } else {
        "present and current".to_string()
    };
    Disk { head, log, catalog_bytes, canopy }
}

/// The persistent heat rows (the store is opened only when it exists:
/// the console never creates one).
fn read_heat(root: &Path) -> Vec<(String, f64, f64)> {
    let trails = root.join(forest_derived::paths::TRAILS_PATH);
    if !trails.is_file() {
        return vec![];
    }
    forest_catalog::Trails::open(&trails).and_then(|t| t.persistent_rows()).unwrap_or_default()
}

/// Gathered pages: the commit-bound part per (HEAD, scope), kept while
/// HEAD stays; the heat per scope, kept while the trails store is unchanged.
#[derive(Default)]
pub struct Cache {
    by_head: Mutex<HashMap<String, Value>>,
    heat: Mutex<HashMap<String, (Instant, String, Value)>>,
}

/// The trails store's files as they are now (sizes and modification
/// times): equal stamps, equal heat.
fn trails_stamp(root: &Path) -> String {
    let base = root.join(forest_derived::paths::TRAILS_PATH);
    let wal = base.with_extension("db-wal");
    [base, wal]
        .iter()
        .map(|p| match std::fs::metadata(p) {
            Ok(m) => format!("{}:{:?}", m.len(), m.modified().ok()),
            Err(_) => "-".to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn blocking_failed(e: tokio::task::JoinError) -> ConsoleError {
    ConsoleError::Vine(forest_vine::VineError::internal(e.to_string()))
}

/// Nodes and branches per root the caller sees: the master's folders for
/// an unscoped token, its branches for a scoped one. Each count is a range
/// of the catalog's id index (read-only handle), never a table scan.
/// Nodes per root (largest first), nodes and branches in all.
struct Sizes {
    roots: Vec<(String, f64)>,
    nodes: u64,
    branches: u64,
}

fn sizes(root: &Path, access: &Access) -> Result<Sizes, ConsoleError> {
    let path = root.join(forest_derived::paths::CATALOG_PATH);
    let cat = forest_catalog::Catalog::open_read_only(&path).map_err(catalog_failed)?;
    let prefixes: Vec<String> = if access.scoped() {
        access.branches.clone()
    } else {
        let top = cat.child_ids("_index").map_err(catalog_failed)?;
        let mut p: Vec<String> =
            top.iter().filter_map(|id| id.strip_suffix("_index").filter(|f| !f.is_empty())).map(String::from).collect();
        p.dedup();
        p
    };
    let mut roots: Vec<(String, f64)> = vec![];
    let (mut nodes, mut branches) = (0u64, 0u64);
    for prefix in &prefixes {
        let (n, b) = cat.count_under(prefix).map_err(catalog_failed)?;
        nodes += n as u64;
        branches += b as u64;
        roots.push((prefix.trim_end_matches('/').to_string(), n as f64));
    }
    if !access.scoped() {
        // The master itself and its direct leaves.
        let all = cat.count_nodes().map_err(catalog_failed)? as u64;
        nodes = all;
        branches += 1;
    }
    roots.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    roots.truncate(TOP);
    Ok(Sizes { roots, nodes, branches })
}

fn catalog_failed(e: forest_catalog::CatalogError) -> ConsoleError {
    ConsoleError::Vine(forest_vine::VineError::internal(format!("catalog: {}", forest_model::error_chain(&e))))
}

/// The commit-bound part of the page.
async fn by_commit(root: &Path, access: &Access) -> Result<Value, ConsoleError> {
    let unscoped = !access.scoped();
    let r = root.to_path_buf();
    let a = access.clone();
    let (disk, sized) =
        tokio::task::spawn_blocking(move || (read_disk(&r, unscoped), sizes(&r, &a))).await.map_err(blocking_failed)?;
    let Sizes { roots, nodes, branches } = sized?;
    let runs = runs_of(&disk.log);
    let (days, series) = growth(&runs);
    Ok(json!({
        "state": {
            "nodes": nodes, "branches": branches, "head": disk.head, "canopy": disk.canopy,
            "catalog": format!("{:.1} MiB", disk.catalog_bytes as f64 / 1048576.0),
        },
        "sizes": svg::bars("sizes", "Nodes per branch", &roots, |v| format!("{v}")),
        "growth": (!series.is_empty()).then(|| svg::lines(&days, &series)),
        "runs": runs.iter().take(RUNS_SHOWN).collect::<Vec<_>>(),
        "runs_note": if unscoped { "No Gardener or Ranger run in the recent history." }
                     else { "The run history names sources across the whole forest: an unscoped token sees it." },
    }))
}

/// The health page's context for `access`.
pub async fn health(root: &Path, access: &Access, cache: &Cache) -> Result<Value, ConsoleError> {
    let r = root.to_path_buf();
    let head = tokio::task::spawn_blocking(move || git(&r, &["rev-parse", "HEAD"])).await.map_err(blocking_failed)?;
    let scope = access.branches.join(",");
    let key = format!("{}|{scope}", head.trim());
    let cached = lock(&cache.by_head).get(&key).cloned();
    let mut page = match cached {
        Some(v) => v,
        None => {
            let v = by_commit(root, access).await?;
            let mut c = lock(&cache.by_head);
            // Pages of an older HEAD are never served again.
            c.retain(|k, _| k.starts_with(&format!("{}|", head.trim())));
            if c.len() >= 64 {
                c.clear();
            }
            c.insert(key, v.clone());
            v
        }
    };
    // The heat is re-read when the store changed (its files' sizes and
    // times), at most every CACHE_TTL.
    let stamp = trails_stamp(root);
    let heat = lock(&cache.heat)
        .get(&scope)
        .filter(|(t, st, _)| *st == stamp || t.elapsed() < CACHE_TTL)
        .map(|(_, _, v)| v.clone());
    let heat = match heat {
        Some(v) => v,
        None => {
            let r = root.to_path_buf();
            let rows = tokio::task::spawn_blocking(move || read_heat(&r)).await.map_err(blocking_failed)?;
            let v = json!(svg::bars("heat", "Heat per branch", &heat_per_branch(access, &rows), |v| format!("{v:.2}")));
            let mut c = lock(&cache.heat);
            if c.len() >= 64 {
                c.clear();
            }
            c.insert(scope, (Instant::now(), stamp, v.clone()));
            v
        }
    };
    page["heat"] = heat;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_parse_from_subjects() {
        let log = "c3\u{1f}2026-11-30T02:00:00Z\u{1f}ranger: 0 promoted, 2 pruned, landmarks refreshed\n\
                   c2\u{1f}2026-11-29T10:00:00Z\u{1f}gardener(sync): 2 planted, 1 updated, 0 moved, 3 stale [source=docs]\n\
                   c1\u{1f}2026-11-28T10:00:00Z\u{1f}gardener(adopt): 10 planted, 0 updated, 0 moved, 0 stale [source=docs]\n\
                   c0\u{1f}2026-11-28T09:00:00Z\u{1f}graft(x): hand edit\n";
        let r = runs_of(log);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].kind, "ranger");
        assert_eq!(r[0].other, "0 promoted, 2 pruned, landmarks refreshed");
        assert_eq!(
            r[1],
            Run {
                at: "2026-11-29T10:00:00Z".into(),
                kind: "gardener(sync)".into(),
                source: "docs".into(),
                planted: 2,
                updated: 1,
                moved: 0,
                stale: 3,
                other: String::new()
            }
        );
        let (days, series) = growth(&r);
        assert_eq!(days, vec!["2026-11-28", "2026-11-29"]);
        assert_eq!(series, vec![("docs".to_string(), vec![("2026-11-28".into(), 10.0), ("2026-11-29".into(), 12.0)])]);
    }

    #[test]
    fn heat_sums_per_visible_branch() {
        let rows = vec![
            ("engineering/a".to_string(), 2.0, 0.0),
            ("engineering/b".to_string(), 1.0, 0.0),
            ("hr/salaries".to_string(), 9.0, 0.0),
            ("_index".to_string(), 0.5, 0.0),
        ];
        let all = heat_per_branch(&Access::owner(), &rows);
        assert_eq!(all[0], ("hr".to_string(), 9.0));
        assert_eq!(all.len(), 3);
        let eng = heat_per_branch(&Access::new("e", false, &["engineering".into()]), &rows);
        assert_eq!(eng, vec![("engineering".to_string(), 3.0)], "hr/ never reaches an engineering token");
    }
}
