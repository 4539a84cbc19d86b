//! Shallow buckets (pure): name *ranges* cut from a folder's sorted names.
//! No I/O; `rebalance.rs` and `folders.rs` apply the decisions.
//!
//! A range bucket is a sub-branch `<folder>/~<lo>..<hi>/_index`. Keys (the
//! routing keys of [`super::split::routing_key`]: `[a-z0-9_-]`, never a
//! `.`) are routed by `lo` alone: a key goes to the sibling with the
//! greatest `lo` that is `<=` the key, or to the first sibling when it sorts
//! before every `lo`; so a branch's range buckets tile the whole key space
//! and every new name has exactly one home. `hi` only tells a reader where
//! the range ended when it was cut (the shortest prefix of its last name
//! that tells it from the next range's first name).
//!
//! - Cutting: sorted names are grouped (equal keys never split) and cut
//!   greedily into buckets of at most half the split trigger (75 entries,
//!   1,200 tokens), balanced so the last bucket is not a stub. When the
//!   parent cannot list all of them, the buckets are grouped the same way,
//!   level by level, until the top level fits: depth is the least that
//!   fits the dialect's limits, ceil(log_F(n)) with F the entries a branch
//!   can list (150, fewer when its entry lines are long).
//! - A group never holds a single bucket (it would be a bucket whose only
//!   child is one bucket): the level above is not built then.
//! - `lo` of any range but the first is exact (it must sort after the
//!   previous range's last key): a cut is only made where that prefix is at
//!   most [`MAX_LO`] characters long. Labels are otherwise cut to
//!   [`MAX_LABEL`] characters, so a component stays far below 255 bytes.

use std::cmp::Ordering;

/// The separator between a range's `lo` and `hi` (keys never hold a `.`).
pub(crate) const SEP: &str = "..";
/// Longest exact `lo` a cut may need.
pub(crate) const MAX_LO: usize = 100;
/// Longest label otherwise (a first `lo`, any `hi`).
const MAX_LABEL: usize = 60;
/// Entries of a newly planned bucket: half of the split trigger.
pub(crate) const NEW_ENTRIES: usize = super::limits::SPLIT_ENTRIES / 2;
/// Tokens of a newly planned bucket's entry lines: half of the split
/// trigger, less an empty bucket body.
pub(crate) const NEW_TOKENS: usize = super::limits::SPLIT_TOKENS / 2 - super::limits::BUCKET_BASE_TOKENS;
/// Tokens of a bucket's entry line in its parent (id, name range and a
/// derived summary with themes).
pub(crate) const BUCKET_ENTRY_TOKENS: usize = 48;

/// A range bucket's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Range {
    pub(crate) lo: String,
    pub(crate) hi: String,
}

impl Range {
    /// The id component (`~lo..hi`).
    pub(crate) fn component(&self) -> String {
        format!("{}{}{SEP}{}", super::limits::BUCKET_MARK, self.lo, self.hi)
    }
}

/// The range a bucket component names (`~lib..libg`), `None` for anything
/// else (a folder, a name-prefix bucket of earlier builds: `~li`).
pub(crate) fn parse(component: &str) -> Option<Range> {
    let rest = component.strip_prefix(super::limits::BUCKET_MARK)?;
    let (lo, hi) = rest.split_once(SEP)?;
    let ok = |s: &str| !s.is_empty() && !s.contains('.') && !s.contains('/');
    (ok(lo) && ok(hi)).then(|| Range { lo: lo.to_string(), hi: hi.to_string() })
}

/// The range of siblings `children` that covers `key`: the greatest `lo`
/// at or below it, else the smallest `lo`.
pub(crate) fn route<'a>(key: &str, children: &'a [Range]) -> Option<&'a Range> {
    let below = children.iter().filter(|r| r.lo.as_str() <= key).max_by(|a, b| a.lo.cmp(&b.lo));
    below.or_else(|| children.iter().min_by(|a, b| a.lo.cmp(&b.lo)))
}

/// One name to place, with the tokens of its entry line.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub(crate) key: String,
    pub(crate) tokens: usize,
}

/// Neighbours of the names being planned, and how many top-level buckets
/// their parent can list.
#[derive(Debug, Clone, Default)]
pub(crate) struct Frame<'a> {
    /// The greatest key that stays before the planned ranges (the first
    /// range's `lo` must sort after it).
    pub(crate) before: Option<&'a str>,
    /// Top-level buckets the parent can take (at least 1).
    pub(crate) top: usize,
}

fn common_len(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// The shortest prefix of `key` that sorts after `other` (`key > other`).
fn prefix_after(key: &str, other: &str) -> String {
    let n = (common_len(key, other) + 1).min(key.len());
    key[..n].to_string()
}

/// `s` cut to `n` bytes (keys are ASCII slugs).
fn clip(s: &str, n: usize) -> String {
    let mut end = s.len().min(n);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// A run of consecutive units (by index) at some level, with its key span.
#[derive(Debug, Clone)]
struct Piece {
    first: String,
    last: String,
    /// Indices into the level below (or into the sorted items).
    members: Vec<usize>,
}

/// Cut `units` (key span, entries, tokens) into consecutive pieces of at
/// most `max_entries` / `max_tokens`, balanced over the count a greedy cut
/// needs. A cut is made only where the next `lo` fits [`MAX_LO`].
fn cut(units: &[(String, String, usize, usize)], max_entries: usize, max_tokens: usize) -> Vec<Vec<usize>> {
    let greedy = |cap_e: usize, cap_t: usize| {
        let mut out: Vec<Vec<usize>> = vec![];
        let (mut e, mut t) = (0usize, 0usize);
        for (i, u) in units.iter().enumerate() {
            let fits = e + u.2 <= cap_e && t + u.3 <= cap_t;
            let can_cut = i > 0 && common_len(&units[i - 1].1, &u.0) < MAX_LO;
            if out.is_empty() || (!fits && can_cut && e > 0) {
                out.push(vec![]);
                (e, t) = (0, 0);
            }
            out.last_mut().expect("a piece").push(i);
            e += u.2;
            t += u.3;
        }
        out
    };
    let first = greedy(max_entries, max_tokens);
    let m = first.len().max(1);
    if m == 1 {
        return first;
    }
    let total_e: usize = units.iter().map(|u| u.2).sum();
    let total_t: usize = units.iter().map(|u| u.3).sum();
    let max_t = units.iter().map(|u| u.3).max().unwrap_or(0);
    let even = greedy(total_e.div_ceil(m).min(max_entries), (total_t.div_ceil(m) + max_t).min(max_tokens));
    if even.len() <= m {
        even
    } else {
        first
    }
}

/// Label the pieces of one level (in key order).
fn labels(pieces: &[Piece], before: Option<&str>) -> Vec<Range> {
    let mut out = vec![];
    for (i, p) in pieces.iter().enumerate() {
        let prev = if i == 0 { before } else { Some(pieces[i - 1].last.as_str()) };
        let lo = match prev {
            Some(prev) => prefix_after(&p.first, prev),
            None => clip(&prefix_after(&p.first, &p.last), MAX_LABEL),
        };
        let hi = match pieces.get(i + 1) {
            Some(next) => prefix_after(&p.last, &next.first),
            None => prefix_after(&p.last, &p.first),
        };
        out.push(Range { lo, hi: clip(&hi, MAX_LABEL) });
    }
    out
}

/// Plan range buckets for `items` (any order): per item, the chain of
/// bucket components it goes into, outermost first. Items with equal keys
/// share a bucket. Every chain has the same length (the depth).
pub(crate) fn plan(items: &[Item], frame: &Frame) -> Vec<Vec<String>> {
    if items.is_empty() {
        return vec![];
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| items[a].key.cmp(&items[b].key).then(a.cmp(&b)));
    // Units: runs of equal keys.
    let mut units: Vec<(String, String, usize, usize)> = vec![];
    let mut unit_items: Vec<Vec<usize>> = vec![];
    for &i in &order {
        let k = &items[i].key;
        if units.last().is_some_and(|u| u.0.cmp(k) == Ordering::Equal) {
            let u = units.last_mut().expect("unit");
            u.2 += 1;
            u.3 += items[i].tokens;
            unit_items.last_mut().expect("unit").push(i);
        } else {
            units.push((k.clone(), k.clone(), 1, items[i].tokens));
            unit_items.push(vec![i]);
        }
    }
    let top = frame.top.max(1);
    // Level 0: buckets of items; then groups of buckets until the top fits.
    let mut levels: Vec<Vec<Piece>> = vec![];
    let mut level_units = units;
    loop {
        let mut cuts = cut(&level_units, NEW_ENTRIES, NEW_TOKENS);
        if !levels.is_empty() && cuts.len() > 1 && cuts.last().is_some_and(|c| c.len() < 2) {
            // No group of a single bucket: the last one joins its neighbour.
            let last = cuts.pop().expect("a group");
            cuts.last_mut().expect("a group").extend(last);
        }
        let pieces: Vec<Piece> = cuts
            .into_iter()
            .map(|m| Piece {
                first: level_units[m[0]].0.clone(),
                last: level_units[*m.last().expect("member")].1.clone(),
                members: m,
            })
            .collect();
        let n = pieces.len();
        if levels.last().is_some_and(|l| n >= l.len()) {
            break; // grouping no longer shrinks the level
        }
        level_units = pieces.iter().map(|p| (p.first.clone(), p.last.clone(), 1, BUCKET_ENTRY_TOKENS)).collect();
        levels.push(pieces);
        if n <= top {
            break;
        }
    }
    let named: Vec<Vec<Range>> = levels.iter().map(|l| labels(l, frame.before)).collect();
    // Walk down: chain per unit.
    let mut chains: Vec<Vec<String>> = vec![vec![]; unit_items.len()];
    fn descend(
        levels: &[Vec<Piece>],
        named: &[Vec<Range>],
        depth: usize,
        idx: usize,
        chain: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        chain.push(named[depth][idx].component());
        for &m in &levels[depth][idx].members {
            if depth == 0 {
                out[m] = chain.clone();
            } else {
                descend(levels, named, depth - 1, m, chain, out);
            }
        }
        chain.pop();
    }
    let top_level = levels.len() - 1;
    for idx in 0..levels[top_level].len() {
        descend(&levels, &named, top_level, idx, &mut vec![], &mut chains);
    }
    let mut out = vec![vec![]; items.len()];
    for (u, its) in unit_items.iter().enumerate() {
        for &i in its {
            out[i] = chains[u].clone();
        }
    }
    out
}

/// How an overflowing bucket without range children grows: which items
/// stay, which sort after everything that stays (they may open sibling
/// ranges), and which go into ranges inside it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Growth {
    /// Items that stay direct: the committed ones, or when there are none,
    /// the first new ones (in key order) that fill a new bucket.
    pub(crate) kept: Vec<usize>,
    /// The greatest kept key.
    pub(crate) last_kept: Option<String>,
    /// New items sorting after `last_kept`.
    pub(crate) tail: Vec<usize>,
    /// Other new items.
    pub(crate) inside: Vec<usize>,
}

/// Plan the growth of a bucket whose items are `items`, `fresh[i]` telling
/// the new ones from the committed ones.
pub(crate) fn keep_and_grow(items: &[Item], fresh: &[bool]) -> Growth {
    let mut g = Growth::default();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| items[a].key.cmp(&items[b].key).then(a.cmp(&b)));
    if fresh.iter().any(|f| !f) {
        g.kept = order.iter().copied().filter(|&i| !fresh[i]).collect();
    } else {
        let (mut e, mut t) = (0, 0);
        for &i in &order {
            let same = g.kept.last().is_some_and(|&l| items[l].key == items[i].key);
            if !same && (e + 1 > NEW_ENTRIES || t + items[i].tokens > NEW_TOKENS) && e > 0 {
                break;
            }
            g.kept.push(i);
            e += 1;
            t += items[i].tokens;
        }
    }
    g.last_kept = g.kept.iter().map(|&i| items[i].key.clone()).max();
    for &i in &order {
        if g.kept.contains(&i) {
            continue;
        }
        if g.last_kept.as_deref().is_none_or(|l| items[i].key.as_str() > l) {
            g.tail.push(i);
        } else {
            g.inside.push(i);
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn items(keys: &[String], tokens: usize) -> Vec<Item> {
        keys.iter().map(|k| Item { key: k.clone(), tokens }).collect()
    }

    /// 721 package-like names (as in a Debian `/usr/share/doc`).
    fn packages() -> Vec<String> {
        let stems = ["lib", "libg", "libgtk", "python3-", "x11-", "fonts-", "gir1-2-", "perl-", "a", "b", "c", "z"];
        (0..721).map(|i| format!("{}{}{:03}", stems[i % stems.len()], ["core", "util", "dev"][i % 3], i)).collect()
    }

    fn sizes(chains: &[Vec<String>]) -> BTreeMap<Vec<String>, usize> {
        let mut m = BTreeMap::new();
        for c in chains {
            *m.entry(c.clone()).or_default() += 1;
        }
        m
    }

    #[test]
    fn names_parse_and_route_by_lo() {
        let r = Range { lo: "lib".into(), hi: "libg".into() };
        assert_eq!(r.component(), "~lib..libg");
        assert_eq!(parse("~lib..libg"), Some(r));
        assert_eq!(parse("~li"), None, "a name-prefix bucket of earlier builds");
        assert_eq!(parse("~..x"), None);
        assert_eq!(parse("lib..x"), None);
        let kids = vec![
            Range { lo: "a".into(), hi: "c".into() },
            Range { lo: "d".into(), hi: "k".into() },
            Range { lo: "lib".into(), hi: "z".into() },
        ];
        assert_eq!(route("cz", &kids).map(|r| r.lo.as_str()), Some("a"));
        assert_eq!(route("d", &kids).map(|r| r.lo.as_str()), Some("d"));
        assert_eq!(route("li", &kids).map(|r| r.lo.as_str()), Some("d"));
        assert_eq!(route("libz", &kids).map(|r| r.lo.as_str()), Some("lib"));
        assert_eq!(route("0", &kids).map(|r| r.lo.as_str()), Some("a"), "before every lo: the first");
        assert_eq!(route("x", &[]), None);
    }

    #[test]
    fn seven_hundred_twenty_one_folders_need_one_level() {
        let keys = packages();
        let chains = plan(&items(&keys, 40), &Frame { before: None, top: 150 });
        assert!(chains.iter().all(|c| c.len() == 1), "one bucket level");
        let s = sizes(&chains);
        assert!(s.len() <= 40, "{} buckets", s.len());
        assert!(s.values().all(|&n| n <= NEW_ENTRIES && n * 40 <= NEW_TOKENS), "{s:?}");
        assert!(s.values().all(|&n| n >= 10), "balanced, no stub bucket: {s:?}");
        // Ranges are in key order and route every planted key home.
        let kids: Vec<Range> = s.keys().map(|c| parse(&c[0]).expect("range")).collect();
        for (k, c) in keys.iter().zip(&chains) {
            assert_eq!(route(k, &kids).map(Range::component).as_ref(), Some(&c[0]), "{k}");
        }
    }

    #[test]
    fn depth_is_bounded_by_the_log_of_the_fan_out() {
        for n in [10usize, 151, 721, 5_000, 40_000] {
            let keys: Vec<String> = (0..n).map(|i| format!("doc-{:07}", i * 13)).collect();
            let chains = plan(&items(&keys, 20), &Frame { before: None, top: 50 });
            let depth = chains[0].len();
            assert!(chains.iter().all(|c| c.len() == depth));
            // A branch lists up to 75 new buckets (or 50 at the top here).
            let bound = if n <= 75 { 1 } else { 1 + ((n as f64 / 75.0).ln() / 50f64.ln()).ceil() as usize };
            assert!(depth <= bound.max(1), "{n}: depth {depth} > {bound}");
            let kids = sizes(&chains);
            assert!(kids.values().all(|&k| k <= NEW_ENTRIES));
            // No group holds a single bucket.
            if depth > 1 {
                let mut per_group: BTreeMap<String, usize> = BTreeMap::new();
                for c in kids.keys() {
                    *per_group.entry(c[0].clone()).or_default() += 1;
                }
                assert!(per_group.values().all(|&g| g >= 2), "{n}: {per_group:?}");
            }
        }
    }

    #[test]
    fn equal_keys_share_a_bucket_and_long_shared_prefixes_are_not_cut() {
        let mut keys: Vec<String> = (0..200).map(|i| format!("k{:03}", i / 2)).collect();
        let long = "x".repeat(120);
        keys.extend((0..100).map(|i| format!("{long}{i:03}")));
        let chains = plan(&items(&keys, 10), &Frame { before: None, top: 150 });
        for pair in keys.chunks(2).take(100) {
            let a = keys.iter().position(|k| k == &pair[0]).unwrap();
            assert_eq!(chains[a], chains[a + 1]);
        }
        let tail: std::collections::BTreeSet<&Vec<String>> = chains[200..].iter().collect();
        assert_eq!(tail.len(), 1, "120 shared characters: no cut inside that run");
        assert!(chains.iter().all(|c| c.iter().all(|comp| comp.len() < 255)));
    }

    #[test]
    fn siblings_after_a_kept_key_sort_after_it() {
        let keys: Vec<String> = (500..700).map(|i| format!("scan-2024-{i:04}")).collect();
        let chains = plan(&items(&keys, 30), &Frame { before: Some("scan-2024-0499"), top: 10 });
        let first = parse(&chains[0][0]).unwrap();
        assert!(first.lo.as_str() > "scan-2024-0499" && first.lo.as_str() <= "scan-2024-0500", "{first:?}");
        assert_eq!(first.lo, "scan-2024-05");
    }

    /// Growth by batches, applied to an in-memory tree the way the
    /// rebalance applies it: every planted key routes home, nobody placed
    /// moves, no branch passes the trigger, and time-ordered names (all new
    /// names after all old ones) add siblings instead of levels.
    #[test]
    fn time_ordered_growth_adds_siblings_not_levels() {
        let mut kids: Vec<Range> = vec![];
        let mut placed: BTreeMap<String, String> = BTreeMap::new(); // key -> bucket
        for batch in 0..12 {
            let keys: Vec<String> = (batch * 200..batch * 200 + 200).map(|i| format!("img-{i:06}")).collect();
            // New keys route; those after the last bucket's last key form siblings.
            let before = placed.keys().next_back().cloned();
            let chains = plan(
                &items(&keys, 20),
                &Frame {
                    before: before.as_deref(),
                    top: (150 - kids.len()).min(2400 / BUCKET_ENTRY_TOKENS - kids.len()),
                },
            );
            assert!(chains.iter().all(|c| c.len() == 1), "batch {batch}: one level");
            for (k, c) in keys.iter().zip(&chains) {
                let r = parse(&c[0]).unwrap();
                if !kids.contains(&r) {
                    kids.push(r);
                }
                placed.insert(k.clone(), c[0].clone());
            }
            for (k, home) in &placed {
                assert_eq!(route(k, &kids).map(Range::component).as_ref(), Some(home), "{k} stays routed home");
            }
        }
        assert!(kids.len() <= 50, "{}", kids.len());
    }

    #[test]
    fn a_bucket_keeps_its_committed_names_and_grows_after_them() {
        let its = items(&["b".into(), "d".into(), "a".into(), "c".into(), "e".into(), "f".into()], 10);
        let g = keep_and_grow(&its, &[false, false, true, true, true, true]);
        assert_eq!(g.kept, vec![0, 1]);
        assert_eq!(g.last_kept.as_deref(), Some("d"));
        assert_eq!(g.inside, vec![2, 3], "a and c sort among the kept names");
        assert_eq!(g.tail, vec![4, 5]);
        // All new: the first bucketful stays, the rest is the tail.
        let keys: Vec<String> = (0..200).map(|i| format!("n{i:03}")).collect();
        let g = keep_and_grow(&items(&keys, 10), &[true; 200]);
        assert_eq!(g.kept.len(), NEW_ENTRIES);
        assert_eq!(g.tail.len(), 200 - NEW_ENTRIES);
        assert!(g.inside.is_empty());
    }
}
