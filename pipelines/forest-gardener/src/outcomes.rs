//! Remembered outcomes of files that were NOT planted (DESIGN §9): the
//! `outcomes` table of `_derived/manifest.db`, keyed by (source, path), with
//! the stat key the file had and the converter version that judged it.
//!
//! In: the run's unsupported / skipped / failed files (and walk problems such
//! as a dangling symlink). Out: during the stat pass, [`Known::check`] says
//! whether a file is a known problem (same stat key, same converter version):
//! it is then not read, not converted and not re-reported, only counted.
//! A changed stat key or a converter version that differs (a newer engine,
//! a new command hook for its extension) retries the file.
//!
//! Planted files are remembered by the manifest's `files` table; a file that
//! gets planted drops its outcome row. Like the manifest this is a cache: a
//! lost table only costs one re-read of each problem file (and reports them
//! as new once). It survives a manifest rebuild from passports, which only
//! replaces the `files` rows.

use crate::error::GardenError;
use crate::manifest::Manifest;
pub use forest_derived::outcomes::OutcomeKind;
use rusqlite::params;
use std::collections::{BTreeMap, HashMap};

/// The stat key a file had when its outcome was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatKey {
    /// Size in bytes.
    pub size: u64,
    /// mtime in ms (the walk's rounding).
    pub mtime_ms: i64,
    /// Object-store ETag (S3 sources).
    pub etag: Option<String>,
}

/// One remembered outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Kind.
    pub kind: OutcomeKind,
    /// The report line's message.
    pub reason: String,
    /// Stat key at the time.
    pub key: StatKey,
    /// [`converter_key`] at the time.
    pub converter: String,
    /// Day (`YYYY-MM-DD`) the problem was first met with this stat key.
    pub since: String,
}

fn sq(e: rusqlite::Error) -> GardenError {
    GardenError::Manifest { table: "outcomes", source: e }
}

/// Version tag of everything that decides a file's outcome for `rel`: the
/// engine version, the converters claiming its extension in order, and the
/// command-hook template when one is configured. Any change retries the
/// file. (forest-convert has no per-converter versions yet: the engine
/// version stands in for all of them.)
pub fn converter_key(registry: &forest_convert::Registry, hooks: &BTreeMap<String, String>, rel: &str) -> String {
    let ext = ext_of(rel);
    let names: Vec<String> =
        if ext.is_empty() { vec![] } else { registry.claimants(&ext).iter().map(|c| c.name().to_string()).collect() };
    let mut key = format!(
        "forest {}: {}",
        env!("CARGO_PKG_VERSION"),
        if names.is_empty() { "none".into() } else { names.join(",") }
    );
    if let Some(t) = hooks.get(&ext) {
        key.push_str(&format!(" hook={t}"));
    }
    key
}

/// Lowercase extension with its dot (`""` when none).
fn ext_of(rel: &str) -> String {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    match file.rfind('.') {
        Some(i) if i > 0 => file[i..].to_lowercase(),
        _ => String::new(),
    }
}

/// Kind of a file that has no conversion, from the registry's
/// classification ([`forest_convert::Status`]).
pub fn kind_of_conversion(status: &forest_convert::Status) -> OutcomeKind {
    match status {
        forest_convert::Status::Skipped(_) => OutcomeKind::Skipped,
        forest_convert::Status::Unsupported => OutcomeKind::Unsupported,
        _ => OutcomeKind::Failed,
    }
}

/// The outcomes of one source, loaded once per run.
#[derive(Debug, Default)]
pub struct Known {
    rows: HashMap<String, Outcome>,
}

impl Known {
    /// The remembered outcome of `rel` when it still applies: same stat key
    /// (ETag included when both sides know one) and same converter version.
    pub fn check(&self, rel: &str, key: &StatKey, converter: &str) -> Option<&Outcome> {
        let o = self.rows.get(rel)?;
        let etag_ok = match (&o.key.etag, &key.etag) {
            (Some(a), Some(b)) => a == b,
            (None, None) => true,
            _ => false,
        };
        (o.key.size == key.size && o.key.mtime_ms == key.mtime_ms && etag_ok && o.converter == converter).then_some(o)
    }

    /// A row exists for `rel` (applicable or not).
    pub fn contains(&self, rel: &str) -> bool {
        self.rows.contains_key(rel)
    }

    /// Paths with a row.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.rows.keys().map(|s| s.as_str())
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Version tag of walk problems (symlink policy, names): a newer engine
/// re-judges them.
pub fn walk_key() -> String {
    format!("forest {}: walk", env!("CARGO_PKG_VERSION"))
}

/// One source run's outcome bookkeeping: what is known, what this run
/// learned (written once at the end of the source, never in a dry run).
#[derive(Debug, Default)]
pub struct RunOutcomes {
    known: Known,
    up: Vec<(String, Outcome)>,
    del: Vec<String>,
    today: String,
    /// Paths with a row that the listing showed (the rest are forgotten).
    seen: std::collections::HashSet<String>,
    /// Known problems met (and not re-read) in this run.
    pub known_count: usize,
}

impl RunOutcomes {
    /// Start from the source's remembered outcomes.
    pub fn new(known: Known, today: &str) -> RunOutcomes {
        RunOutcomes { known, today: today.to_string(), ..Default::default() }
    }

    /// True (and counted) when `rel`'s remembered outcome still applies.
    /// Every listed path with a row passes here, so the rows of paths no
    /// longer listed can be forgotten ([`Self::forget_unseen`]).
    pub fn skip_known(&mut self, rel: &str, key: Option<&StatKey>, converter: &str) -> bool {
        if !self.known.contains(rel) {
            return false;
        }
        self.seen.insert(rel.to_string());
        let hit = key.is_some_and(|k| self.known.check(rel, k, converter).is_some());
        if hit {
            self.known_count += 1;
        }
        hit
    }

    /// Remember a problem with the stat key it was met at (no key: nothing
    /// to compare with next time, so nothing is remembered).
    pub fn record(&mut self, rel: &str, kind: OutcomeKind, reason: &str, key: Option<StatKey>, converter: &str) {
        let Some(key) = key else { return };
        self.up.push((
            rel.to_string(),
            Outcome {
                kind,
                reason: reason.to_string(),
                key,
                converter: converter.to_string(),
                since: self.today.clone(),
            },
        ));
    }

    /// `rel` was planted or updated: forget its problem.
    pub fn resolved(&mut self, rel: &str) {
        if self.known.contains(rel) {
            self.del.push(rel.to_string());
        }
    }

    /// Forget problems of paths the listing did not show (call after a
    /// full, complete listing whose every path went through
    /// [`Self::skip_known`]).
    pub fn forget_unseen(&mut self) {
        let gone: Vec<String> = self.known.paths().filter(|p| !self.seen.contains(*p)).map(String::from).collect();
        self.del.extend(gone);
    }

    /// Write what the run learned.
    pub fn flush(&mut self, manifest: &mut Manifest, source: &str) -> Result<(), GardenError> {
        let up = std::mem::take(&mut self.up);
        let del = std::mem::take(&mut self.del);
        manifest.apply_outcomes(source, &up, &del)
    }
}

/// Put a new problem on the report line its kind belongs to.
pub fn report_problem(report: &mut crate::report::SourceReport, kind: OutcomeKind, rel: &str, message: &str) {
    let line = crate::report::FileError { path: rel.to_string(), message: message.to_string() };
    match kind {
        OutcomeKind::Unsupported => report.unsupported.push(rel.to_string()),
        OutcomeKind::Skipped => report.skipped.push(line),
        OutcomeKind::Failed => report.errors.push(line),
    }
}

impl Manifest {
    /// The remembered outcomes of one source.
    pub fn outcomes(&self, source: &str) -> Result<Known, GardenError> {
        let mut st = self
            .conn()
            .prepare_cached(
                "SELECT path, kind, reason, size, mtime_ms, etag, converter, since FROM outcomes WHERE source=?1",
            )
            .map_err(sq)?;
        let rows = st
            .query_map([source], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Outcome {
                        kind: OutcomeKind::parse(&r.get::<_, String>(1)?),
                        reason: r.get(2)?,
                        key: StatKey { size: r.get::<_, i64>(3)? as u64, mtime_ms: r.get(4)?, etag: r.get(5)? },
                        converter: r.get(6)?,
                        since: r.get(7)?,
                    },
                ))
            })
            .map_err(sq)?;
        Ok(Known { rows: rows.collect::<Result<HashMap<_, _>, _>>().map_err(sq)? })
    }

    /// Record outcomes and drop rows (planted or vanished files), in one
    /// transaction.
    pub fn apply_outcomes(
        &mut self,
        source: &str,
        upserts: &[(String, Outcome)],
        deletes: &[String],
    ) -> Result<(), GardenError> {
        if upserts.is_empty() && deletes.is_empty() {
            return Ok(());
        }
        let tx = self.conn_mut().transaction().map_err(sq)?;
        {
            let mut up = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO outcomes (source, path, kind, reason, size, mtime_ms, etag, converter, since)
                     VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
                )
                .map_err(sq)?;
            for (path, o) in upserts {
                up.execute(params![
                    source,
                    path,
                    o.kind.as_str(),
                    o.reason,
                    o.key.size as i64,
                    o.key.mtime_ms,
                    o.key.etag,
                    o.converter,
                    o.since
                ])
                .map_err(sq)?;
            }
            let mut del = tx.prepare_cached("DELETE FROM outcomes WHERE source=?1 AND path=?2").map_err(sq)?;
            for path in deletes {
                del.execute(params![source, path]).map_err(sq)?;
            }
        }
        tx.commit().map_err(sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(size: u64, mtime_ms: i64) -> StatKey {
        StatKey { size, mtime_ms, etag: None }
    }

    #[test]
    fn remembered_until_bytes_or_converter_change() {
        let d = tempfile::tempdir().unwrap();
        let forest = d.path();
        let mut m = Manifest::open(&forest.join(crate::manifest::MANIFEST_PATH)).unwrap();
        let o = Outcome {
            kind: OutcomeKind::Failed,
            reason: "corrupt".into(),
            key: key(10, 5),
            converter: "c1".into(),
            since: "2026-12-01".into(),
        };
        m.apply_outcomes("s", &[("a.pdf".into(), o.clone())], &[]).unwrap();
        let k = m.outcomes("s").unwrap();
        assert_eq!(k.check("a.pdf", &key(10, 5), "c1"), Some(&o));
        assert!(k.check("a.pdf", &key(11, 5), "c1").is_none(), "bytes changed");
        assert!(k.check("a.pdf", &key(10, 6), "c1").is_none(), "mtime changed");
        assert!(k.check("a.pdf", &key(10, 5), "c2").is_none(), "newer converter");
        assert!(m.outcomes("other").unwrap().is_empty());
        // A manifest rebuild from passports keeps the outcomes.
        m.replace_all(&[], None).unwrap();
        assert_eq!(m.outcomes("s").unwrap().len(), 1);
        let listed = forest_derived::outcomes::known_problems(forest).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].path.as_str(), listed[0].kind), ("a.pdf", OutcomeKind::Failed));
        m.apply_outcomes("s", &[], &["a.pdf".into()]).unwrap();
        assert!(m.outcomes("s").unwrap().is_empty());
    }

    #[test]
    fn etag_is_part_of_the_key() {
        let mut rows = HashMap::new();
        let k = StatKey { size: 1, mtime_ms: 1, etag: Some("e1".into()) };
        rows.insert(
            "x".to_string(),
            Outcome {
                kind: OutcomeKind::Unsupported,
                reason: String::new(),
                key: k.clone(),
                converter: "c".into(),
                since: String::new(),
            },
        );
        let known = Known { rows };
        assert!(known.check("x", &k, "c").is_some());
        assert!(known.check("x", &StatKey { etag: Some("e2".into()), ..k }, "c").is_none());
    }

    #[test]
    fn converter_key_follows_claimants_and_hooks() {
        let reg = forest_convert::Registry::builtin();
        let none = converter_key(&reg, &BTreeMap::new(), "a/b.xyz");
        assert!(none.ends_with(": none"), "{none}");
        let hooks: BTreeMap<String, String> = [(".xyz".to_string(), "conv {input} {output}".to_string())].into();
        let reg2 = forest_convert::Registry::builtin().with_command_hooks(&hooks, std::time::Duration::from_secs(1));
        let hooked = converter_key(&reg2, &hooks, "a/b.XYZ");
        assert_ne!(none, hooked);
        assert!(hooked.contains("conv {input}"), "{hooked}");
        assert!(!converter_key(&reg, &BTreeMap::new(), "x.pdf").ends_with(": none"));
    }
}
