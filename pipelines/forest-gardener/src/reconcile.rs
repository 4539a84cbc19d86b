//! Pure reconcile planning (DESIGN §3): manifest + listing -> plan.
//! No I/O here: the caller stats, hashes and applies. [`MergeJoin`] joins a
//! sorted listing with the sorted manifest in O(1) memory; [`decide`]
//! classifies what the join kept (suspects, vanished, move candidates).

use std::collections::{HashMap, HashSet};

/// What the manifest knows about one source path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Node id of the passport.
    pub id: String,
    /// Size at the last sync.
    pub size: u64,
    /// mtime (ms) at the last sync.
    pub mtime_ms: i64,
    /// Content hash (`blake3:…` or bare sha256 hex from another engine).
    pub hash: String,
    /// Already reported vanished (passport marked stale).
    pub vanished: bool,
    /// Object-store ETag at the last sync (S3 sources; None for local files).
    pub etag: Option<String>,
}

/// A listed file as reconcile sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatFile {
    /// Source-relative path.
    pub rel: String,
    /// Size in bytes.
    pub size: u64,
    /// mtime in ms.
    pub mtime_ms: i64,
    /// Object-store ETag (S3 sources).
    pub etag: Option<String>,
}

/// First pass: stat comparison only.
#[derive(Debug, Default, PartialEq)]
pub struct StatPlan {
    /// No manifest entry.
    pub new: Vec<String>,
    /// Size or mtime differ: must be hashed.
    pub suspect: Vec<String>,
    /// Size and mtime equal: fast path.
    pub unchanged: Vec<String>,
    /// Manifest entries whose path was not listed (path, entry).
    pub vanished: Vec<(String, ManifestEntry)>,
    /// Entries that were vanished but are listed again.
    pub reappeared: Vec<String>,
}

/// Compare a listing with the manifest. `scope` limits vanished detection
/// to one path (targeted sync).
pub fn stat_pass(files: &[StatFile], manifest: &HashMap<String, ManifestEntry>, scope: Option<&str>) -> StatPlan {
    let mut plan = StatPlan::default();
    let mut seen: HashSet<&str> = HashSet::with_capacity(files.len());
    for f in files {
        seen.insert(&f.rel);
        match manifest.get(&f.rel) {
            None => plan.new.push(f.rel.clone()),
            Some(e) => {
                if e.vanished {
                    plan.reappeared.push(f.rel.clone());
                }
                if stat_equal(f, e) {
                    plan.unchanged.push(f.rel.clone());
                } else {
                    plan.suspect.push(f.rel.clone());
                }
            }
        }
    }
    let mut vanished: Vec<(String, ManifestEntry)> = manifest
        .iter()
        .filter(|(p, _)| !seen.contains(p.as_str()) && scope.is_none_or(|s| s == p.as_str()))
        .map(|(p, e)| (p.clone(), e.clone()))
        .collect();
    vanished.sort_by(|a, b| a.0.cmp(&b.0));
    plan.vanished = vanished;
    plan
}

/// New files worth hashing before conversion: only those whose size equals
/// a vanished entry's size can be moves.
pub fn move_candidates(plan: &StatPlan, sizes: &HashMap<String, u64>) -> Vec<String> {
    let vanished_sizes: HashSet<u64> = plan.vanished.iter().map(|(_, e)| e.size).collect();
    plan.new.iter().filter(|r| sizes.get(*r).is_some_and(|s| vanished_sizes.contains(s))).cloned().collect()
}

/// A move: vanished path and new path with the same content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// Old source path.
    pub from_rel: String,
    /// Old node id.
    pub from_id: String,
    /// New source path.
    pub to_rel: String,
}

/// Final plan.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Files to plant.
    pub new: Vec<String>,
    /// Files whose content changed (path, id).
    pub changed: Vec<(String, String)>,
    /// Files unchanged by stat.
    pub unchanged: Vec<String>,
    /// Stat changed, bytes did not: refresh the manifest only.
    pub touched: Vec<String>,
    /// Transplants.
    pub moves: Vec<Move>,
    /// Vanished (path, entry), excluding moved ones.
    pub vanished: Vec<(String, ManifestEntry)>,
}

/// Second pass: with hashes of suspects and of move candidates, classify.
pub fn classify(stat: StatPlan, manifest: &HashMap<String, ManifestEntry>, hashes: &HashMap<String, HashPair>) -> Plan {
    let suspects: Vec<(String, ManifestEntry)> =
        stat.suspect.into_iter().filter_map(|r| manifest.get(&r).cloned().map(|e| (r, e))).collect();
    let d = decide(suspects, stat.vanished, &stat.new, hashes);
    let moved: HashSet<&str> = d.moves.iter().map(|m| m.to_rel.as_str()).collect();
    let new = stat.new.iter().filter(|r| !moved.contains(r.as_str())).cloned().collect();
    Plan {
        new,
        changed: d.changed,
        unchanged: stat.unchanged,
        touched: d.touched,
        moves: d.moves,
        vanished: d.vanished,
    }
}

/// What the second pass decides from the change-proportional sets the
/// join kept.
#[derive(Debug, Default, PartialEq)]
pub struct Decision {
    /// Files whose content changed (path, id).
    pub changed: Vec<(String, String)>,
    /// Stat changed, bytes did not: refresh the manifest only.
    pub touched: Vec<String>,
    /// Transplants, by new path.
    pub moves: Vec<Move>,
    /// Vanished (path, entry), excluding moved ones.
    pub vanished: Vec<(String, ManifestEntry)>,
}

/// Second pass: suspects (path, entry) are changed or touched by their
/// fresh hash; vanished entries pair with new files of equal content
/// (`candidates`, hashed) into moves, in path order on both sides.
pub fn decide(
    suspects: Vec<(String, ManifestEntry)>,
    vanished: Vec<(String, ManifestEntry)>,
    candidates: &[String],
    hashes: &HashMap<String, HashPair>,
) -> Decision {
    let mut d = Decision::default();
    for (rel, e) in suspects {
        match hashes.get(&rel) {
            Some(h) if h.matches(&e.hash) && !e.vanished => d.touched.push(rel),
            _ => d.changed.push((rel, e.id.clone())),
        }
    }
    // Indexed by hash so a renamed folder of 10^4 files stays linear.
    let mut by_hash: HashMap<String, std::collections::BTreeSet<&str>> = HashMap::new();
    for rel in candidates {
        if let Some(h) = hashes.get(rel) {
            by_hash.entry(h.blake3.clone()).or_default().insert(rel);
            if !h.sha256.is_empty() {
                by_hash.entry(h.sha256.to_lowercase()).or_default().insert(rel);
            }
        }
    }
    let mut moved_new: HashSet<&str> = HashSet::new();
    for (from_rel, e) in vanished {
        let key = if e.hash.starts_with("blake3:") { e.hash.clone() } else { e.hash.to_lowercase() };
        let target = by_hash.get(&key).and_then(|set| set.iter().find(|r| !moved_new.contains(*r)).copied());
        match target {
            Some(to_rel) => {
                moved_new.insert(to_rel);
                d.moves.push(Move { from_rel, from_id: e.id.clone(), to_rel: to_rel.to_string() });
            }
            None => d.vanished.push((from_rel, e)),
        }
    }
    d.moves.sort_by(|a, b| a.to_rel.cmp(&b.to_rel));
    d
}

/// The stat key of a listed file, as the merge join reads it.
pub trait StatKey {
    /// Source-relative path (the join key).
    fn rel(&self) -> &str;
    /// Size in bytes.
    fn size(&self) -> u64;
    /// mtime in ms.
    fn mtime_ms(&self) -> i64;
    /// Object-store ETag (S3 sources).
    fn etag(&self) -> Option<&str>;
}

impl StatKey for StatFile {
    fn rel(&self) -> &str {
        &self.rel
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn mtime_ms(&self) -> i64 {
        self.mtime_ms
    }
    fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }
}

/// One step of the merge join of a sorted listing with the sorted manifest.
#[derive(Debug, PartialEq)]
pub enum Joined<L> {
    /// Listed, no manifest entry.
    New(L),
    /// Listed with an equal stat key and not vanished: the fast path.
    Unchanged(L),
    /// Listed, but size, mtime or ETag differ, or the entry was vanished:
    /// must be hashed.
    Suspect(L, ManifestEntry),
    /// A manifest entry whose path was not listed.
    Vanished(String, ManifestEntry),
    /// The listing was not in strictly increasing path order at this path:
    /// the join stops (nothing after it may be trusted).
    OutOfOrder(String),
}

/// Is the manifest entry's stat key the listed file's? An ETag is part of
/// the key when both sides know one.
pub fn stat_equal<L: StatKey>(f: &L, e: &ManifestEntry) -> bool {
    let etag_ok = match (&e.etag, f.etag()) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    e.size == f.size() && e.mtime_ms == f.mtime_ms() && etag_ok && !e.vanished
}

/// Merge-join two iterators sorted by path (byte order, as SQLite's
/// `ORDER BY path` and Rust's `str` order agree). Holds one item of each
/// side: memory is O(1) whatever the corpus size.
pub struct MergeJoin<L, I: Iterator<Item = L>, M: Iterator<Item = (String, ManifestEntry)>> {
    listing: std::iter::Peekable<I>,
    manifest: std::iter::Peekable<M>,
    /// The previous listed path (reused buffer) and whether there is one.
    last: String,
    started: bool,
    stopped: bool,
}

impl<L: StatKey, I: Iterator<Item = L>, M: Iterator<Item = (String, ManifestEntry)>> MergeJoin<L, I, M> {
    /// Join `listing` with `manifest`, both sorted by path.
    pub fn new(listing: I, manifest: M) -> Self {
        MergeJoin {
            listing: listing.peekable(),
            manifest: manifest.peekable(),
            last: String::new(),
            started: false,
            stopped: false,
        }
    }
}

impl<L: StatKey, I: Iterator<Item = L>, M: Iterator<Item = (String, ManifestEntry)>> Iterator for MergeJoin<L, I, M> {
    type Item = Joined<L>;

    fn next(&mut self) -> Option<Joined<L>> {
        if self.stopped {
            return None;
        }
        let order = match (self.listing.peek(), self.manifest.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(f), Some((p, _))) => f.rel().cmp(p.as_str()),
        };
        if order != std::cmp::Ordering::Greater {
            // A listed path must come strictly after the previous one.
            let rel = self.listing.peek().map(|f| f.rel()).unwrap_or_default();
            if self.started && self.last.as_str() >= rel {
                self.stopped = true;
                return Some(Joined::OutOfOrder(rel.to_string()));
            }
            self.last.clear();
            self.last.push_str(rel);
            self.started = true;
        }
        Some(match order {
            std::cmp::Ordering::Less => Joined::New(self.listing.next()?),
            std::cmp::Ordering::Greater => {
                let (p, e) = self.manifest.next()?;
                Joined::Vanished(p, e)
            }
            std::cmp::Ordering::Equal => {
                let f = self.listing.next()?;
                let (_, e) = self.manifest.next()?;
                if stat_equal(&f, &e) {
                    Joined::Unchanged(f)
                } else {
                    Joined::Suspect(f, e)
                }
            }
        })
    }
}

pub use forest_derived::hash::HashPair;

/// True when marking `n_stale` of `total` as stale exceeds the guard.
pub fn exceeds_stale_guard(n_stale: usize, total: usize, max_fraction: f64) -> bool {
    total > 0 && n_stale > 0 && (n_stale as f64) > max_fraction * (total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: &str, size: u64, mtime: i64, hash: &str) -> ManifestEntry {
        ManifestEntry { id: id.into(), size, mtime_ms: mtime, hash: hash.into(), vanished: false, etag: None }
    }
    fn f(rel: &str, size: u64, mtime: i64) -> StatFile {
        StatFile { rel: rel.into(), size, mtime_ms: mtime, etag: None }
    }
    fn hp(b: &str) -> HashPair {
        HashPair { blake3: format!("blake3:{b}"), sha256: String::new() }
    }

    #[test]
    fn full_matrix() {
        let mut m = HashMap::new();
        m.insert("same.md".to_string(), e("same", 1, 1, "blake3:s"));
        m.insert("edit.md".to_string(), e("edit", 1, 1, "blake3:e"));
        m.insert("touch.md".to_string(), e("touch", 1, 1, "blake3:t"));
        m.insert("gone.md".to_string(), e("gone", 5, 1, "blake3:g"));
        m.insert("old/moved.md".to_string(), e("old/moved", 7, 1, "blake3:m"));
        let files = vec![
            f("same.md", 1, 1),
            f("edit.md", 2, 9),
            f("touch.md", 1, 9),
            f("new.md", 3, 1),
            f("new/moved.md", 7, 5),
        ];
        let stat = stat_pass(&files, &m, None);
        assert_eq!(stat.new, vec!["new.md", "new/moved.md"]);
        assert_eq!(stat.unchanged, vec!["same.md"]);
        let sizes: HashMap<String, u64> = files.iter().map(|f| (f.rel.clone(), f.size)).collect();
        assert_eq!(move_candidates(&stat, &sizes), vec!["new/moved.md"]);
        let mut hashes = HashMap::new();
        hashes.insert("edit.md".to_string(), hp("e2"));
        hashes.insert("touch.md".to_string(), hp("t"));
        hashes.insert("new/moved.md".to_string(), hp("m"));
        let plan = classify(stat, &m, &hashes);
        assert_eq!(plan.new, vec!["new.md"]);
        assert_eq!(plan.changed, vec![("edit.md".to_string(), "edit".to_string())]);
        assert_eq!(plan.touched, vec!["touch.md"]);
        assert_eq!(
            plan.moves,
            vec![Move { from_rel: "old/moved.md".into(), from_id: "old/moved".into(), to_rel: "new/moved.md".into() }]
        );
        assert_eq!(plan.vanished.len(), 1);
        assert_eq!(plan.vanished[0].0, "gone.md");
    }

    #[test]
    fn targeted_scope_and_guard() {
        let mut m = HashMap::new();
        m.insert("a.md".to_string(), e("a", 1, 1, "blake3:a"));
        m.insert("b.md".to_string(), e("b", 1, 1, "blake3:b"));
        let stat = stat_pass(&[], &m, Some("a.md"));
        assert_eq!(stat.vanished.len(), 1);
        assert!(exceeds_stale_guard(2, 3, 0.5));
        assert!(!exceeds_stale_guard(1, 3, 0.5));
        assert!(!exceeds_stale_guard(0, 0, 0.5));
    }

    #[test]
    fn sha256_from_other_engine() {
        let h = HashPair { blake3: "blake3:x".into(), sha256: "ABC".into() };
        assert!(h.matches("abc"));
        assert!(!HashPair { blake3: "blake3:x".into(), sha256: String::new() }.matches("abc"));
    }

    #[test]
    fn merge_join_streams_the_same_matrix() {
        let mut m = HashMap::new();
        m.insert("a.md".to_string(), e("a", 1, 1, "blake3:a"));
        m.insert("b.md".to_string(), e("b", 1, 1, "blake3:b"));
        m.insert("c.md".to_string(), e("c", 1, 1, "blake3:c"));
        let mut rows: Vec<(String, ManifestEntry)> = m.clone().into_iter().collect();
        rows.sort_by(|x, y| x.0.cmp(&y.0));
        let files = vec![f("a.md", 1, 1), f("b.md", 2, 1), f("bb.md", 3, 1)];
        let got: Vec<Joined<StatFile>> = MergeJoin::new(files.clone().into_iter(), rows.into_iter()).collect();
        assert_eq!(
            got,
            vec![
                Joined::Unchanged(f("a.md", 1, 1)),
                Joined::Suspect(f("b.md", 2, 1), e("b", 1, 1, "blake3:b")),
                Joined::New(f("bb.md", 3, 1)),
                Joined::Vanished("c.md".into(), e("c", 1, 1, "blake3:c")),
            ]
        );
        // Same classes as the in-memory stat pass.
        let stat = stat_pass(&files, &m, None);
        assert_eq!(
            (stat.unchanged, stat.suspect, stat.new),
            (vec!["a.md".into()], vec!["b.md".into()], vec!["bb.md".into()])
        );
        assert_eq!(stat.vanished[0].0, "c.md");
        // A listing out of order stops the join.
        let bad = vec![f("b.md", 1, 1), f("a.md", 1, 1)];
        let got: Vec<Joined<StatFile>> = MergeJoin::new(bad.into_iter(), std::iter::empty()).collect();
        assert_eq!(got.last(), Some(&Joined::OutOfOrder("a.md".into())));
    }

    #[test]
    fn decide_pairs_duplicates_in_path_order() {
        let vanished = vec![
            ("old/1.md".to_string(), e("old/1", 4, 1, "blake3:d")),
            ("old/2.md".to_string(), e("old/2", 4, 1, "blake3:d")),
        ];
        let cands = vec!["new/1.md".to_string(), "new/2.md".to_string(), "new/3.md".to_string()];
        let mut hashes = HashMap::new();
        for c in &cands {
            hashes.insert(c.clone(), hp("d"));
        }
        let d = decide(vec![], vanished, &cands, &hashes);
        let pairs: Vec<(&str, &str)> = d.moves.iter().map(|m| (m.from_rel.as_str(), m.to_rel.as_str())).collect();
        assert_eq!(pairs, vec![("old/1.md", "new/1.md"), ("old/2.md", "new/2.md")]);
        assert!(d.vanished.is_empty());
    }
}
