//! Navigable branches (pure): where a leaf of an overflowing source folder
//! goes. No I/O; `rebalance.rs` applies the decisions to a batch.
//!
//! The rule (docs/decisions/navigable-branches.md): a leaf's *key* is its
//! id's last component (the slug of its file stem) with `.` read as `-`.
//! A folder branch that outgrows [`SPLIT_ENTRIES`] entries or
//! [`SPLIT_TOKENS`] body tokens hands its source leaves to *name-prefix
//! buckets*: sub-branches `<folder>/~<prefix>/_index` holding the leaves
//! whose key starts with `<prefix>`. `~` never occurs in a slug, so a
//! bucket can never collide with a real sub-folder.
//!
//! - A leaf goes to the child bucket whose prefix is the longest prefix of
//!   its key (recursively); it depends only on the leaf's own key and on
//!   which buckets exist.
//! - A branch that has a one-character-longer child (a *full* split)
//!   creates such a child on demand for a key no child matches: a new file
//!   never lands in an overflowing place and never moves anyone.
//! - A split moves only the overflowing branch's own direct leaves, once:
//!   the first split of a branch skips the prefix all its leaves share (a
//!   camera dump `img_0001…` splits at `img_00`, `img_01`, not at `i`);
//!   any later split of the same branch is a full split by the next
//!   character. A new bucket that would itself be too big is split the same
//!   way before anything is written.
//!
//! So a branch lists at most two bucket generations of ≤ 38 children each
//! (38 = the key alphabet `[a-z0-9_-]`), and a new bucket is filled to at
//! most half the trigger, so it takes twice its size in new files before it
//! splits (again once, locally).

use std::collections::BTreeMap;

pub(crate) use super::limits::{BUCKET_BASE_TOKENS, BUCKET_MARK, SPLIT_ENTRIES, SPLIT_TOKENS};

/// A leaf's routing key: its id's last component with `.` read as `-`
/// (so bucket names never hold dots).
pub(crate) fn routing_key(leaf_component: &str) -> String {
    leaf_component.replace('.', "-")
}

/// The id component of the bucket for `prefix` (`~<prefix>`).
pub(crate) fn bucket_component(prefix: &str) -> String {
    format!("{BUCKET_MARK}{prefix}")
}

/// The prefix a bucket component stands for (`~abc` -> `abc`).
pub(crate) fn bucket_prefix(component: &str) -> Option<&str> {
    component.strip_prefix(BUCKET_MARK).filter(|p| !p.is_empty())
}

/// The prefix of the bucket a folder path ends in, `""` for a source folder.
pub(crate) fn folder_prefix_of(folder: &str) -> &str {
    folder.rsplit('/').next().and_then(bucket_prefix).unwrap_or("")
}

/// The source folder a (bucket) folder path belongs to: `a/~x/~xy` -> `a`.
pub(crate) fn source_folder_of(folder: &str) -> &str {
    let mut end = folder.len();
    for comp in folder.rsplit('/') {
        if bucket_prefix(comp).is_none() {
            break;
        }
        end = end.saturating_sub(comp.len() + 1);
    }
    &folder[..end.min(folder.len())]
}

/// Child bucket prefixes of branch `folder` among the entry ids of its body.
pub(crate) fn child_prefixes<'a>(folder: &str, entry_ids: impl Iterator<Item = &'a str>) -> Vec<String> {
    let head = if folder.is_empty() { String::new() } else { format!("{folder}/") };
    entry_ids
        .filter_map(|id| id.strip_prefix(head.as_str())?.strip_suffix("/_index"))
        .filter(|c| !c.contains('/'))
        .filter_map(bucket_prefix)
        .map(str::to_string)
        .collect()
}

/// The bucket children of a branch: none, name ranges (this build), or
/// name prefixes (earlier builds: such a branch keeps its prefix rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kids {
    None,
    Ranges(Vec<super::ranges::Range>),
    Prefixes(Vec<String>),
}

/// The bucket children of branch `folder` among the entry ids of its body.
pub(crate) fn kids<'a>(folder: &str, entry_ids: impl Iterator<Item = &'a str>) -> Kids {
    let all = child_prefixes(folder, entry_ids);
    if all.is_empty() {
        return Kids::None;
    }
    if all.iter().any(|p| super::ranges::parse(&bucket_component(p)).is_none()) {
        return Kids::Prefixes(all.into_iter().filter(|p| !p.contains('.')).collect());
    }
    let mut r: Vec<super::ranges::Range> =
        all.iter().filter_map(|p| super::ranges::parse(&bucket_component(p))).collect();
    r.sort_by(|a, b| a.lo.cmp(&b.lo));
    Kids::Ranges(r)
}

/// The child whose prefix is the longest prefix of `key`.
pub(crate) fn longest_match<'a>(key: &str, children: &'a [String]) -> Option<&'a str> {
    children.iter().filter(|c| key.starts_with(c.as_str())).max_by_key(|c| c.len()).map(String::as_str)
}

/// True when a branch of `prefix` is fully split (it has a child one
/// character longer, so every key finds or gets a child).
pub(crate) fn is_full(prefix: &str, children: &[String]) -> bool {
    children.iter().any(|c| c.len() == prefix.len() + 1)
}

/// Where a new leaf of key `key` goes inside a branch of `prefix`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Into the existing child bucket of this prefix.
    Child(String),
    /// Into a new child bucket of this prefix (created on demand).
    NewChild(String),
    /// Stays a direct leaf of this branch.
    Here,
}

/// Route a new key inside a branch of `prefix` with child buckets `children`.
pub(crate) fn route(key: &str, prefix: &str, children: &[String]) -> Route {
    if let Some(c) = longest_match(key, children) {
        return Route::Child(c.to_string());
    }
    if is_full(prefix, children)
        && key.len() > prefix.len()
        && key.starts_with(prefix)
        && key.is_char_boundary(prefix.len() + 1)
    {
        return Route::NewChild(key[..prefix.len() + 1].to_string());
    }
    Route::Here
}

/// One direct leaf of an overflowing branch, for [`plan_split`].
#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// Routing key ([`routing_key`]).
    pub(crate) key: String,
    /// Tokens of its entry line.
    pub(crate) tokens: usize,
}

/// Where a member of a split goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Dest {
    /// Stays where it is (its key is the branch's shared prefix itself, or
    /// it does not belong to the branch's prefix).
    Stay,
    /// Into an existing child bucket.
    Existing(String),
    /// Into new buckets, outermost first (`["img_0", "img_01"]`).
    New(Vec<String>),
}

/// True when a body of `entries` lines and `tokens` tokens must split.
pub(crate) fn overflows(entries: usize, tokens: usize) -> bool {
    entries > SPLIT_ENTRIES || tokens > SPLIT_TOKENS
}

/// A new bucket's target: at most half of the trigger.
fn too_big_for_new(entries: usize, tokens: usize) -> bool {
    entries > SPLIT_ENTRIES / 2 || tokens > SPLIT_TOKENS / 2
}

fn common_prefix_len(keys: &[&str]) -> usize {
    let Some(first) = keys.first() else { return 0 };
    let mut n = first.len();
    for k in &keys[1..] {
        n = n.min(first.bytes().zip(k.bytes()).take_while(|(a, b)| a == b).count());
    }
    while !first.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// Plan the split of an overflowing branch of `prefix` whose child buckets
/// are `children`: one [`Dest`] per member, in order. Members that match an
/// existing child go there; the rest are grouped by the next character
/// (after their shared prefix when the branch has no children yet), and
/// groups too big for a new bucket are split the same way, recursively.
pub(crate) fn plan_split(prefix: &str, children: &[String], members: &[Member]) -> Vec<Dest> {
    let mut out = vec![Dest::Stay; members.len()];
    let mut rest: Vec<usize> = vec![];
    for (i, m) in members.iter().enumerate() {
        if !m.key.starts_with(prefix) {
            continue;
        }
        match longest_match(&m.key, children) {
            Some(c) => out[i] = Dest::Existing(c.to_string()),
            None => rest.push(i),
        }
    }
    for (i, chain) in group(prefix, children.is_empty(), members, &rest) {
        out[i] = Dest::New(chain);
    }
    out
}

/// New bucket chains for members `idx` (all starting with `prefix`).
fn group(prefix: &str, skip_shared: bool, members: &[Member], idx: &[usize]) -> Vec<(usize, Vec<String>)> {
    let keys: Vec<&str> = idx.iter().map(|&i| members[i].key.as_str()).collect();
    let at = if skip_shared { common_prefix_len(&keys).max(prefix.len()) } else { prefix.len() };
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &i in idx {
        let k = &members[i].key;
        let Some(c) = k[at..].chars().next() else {
            continue; // the key is the shared prefix itself: stays
        };
        groups.entry(k[..at + c.len_utf8()].to_string()).or_default().push(i);
    }
    let mut out = vec![];
    for (p, g) in groups {
        let tokens = BUCKET_BASE_TOKENS + g.iter().map(|&i| members[i].tokens).sum::<usize>();
        if g.len() > 1 && too_big_for_new(g.len(), tokens) {
            let inner = group(&p, true, members, &g);
            let placed: std::collections::HashSet<usize> = inner.iter().map(|(i, _)| *i).collect();
            for (i, mut chain) in inner {
                chain.insert(0, p.clone());
                out.push((i, chain));
            }
            out.extend(g.into_iter().filter(|i| !placed.contains(i)).map(|i| (i, vec![p.clone()])));
        } else {
            out.extend(g.into_iter().map(|i| (i, vec![p.clone()])));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(keys: &[String], tokens: usize) -> Vec<Member> {
        keys.iter().map(|k| Member { key: k.clone(), tokens }).collect()
    }

    /// Bucket of every member after a plan (the innermost prefix; `""` = stays).
    fn homes(plan: &[Dest]) -> Vec<String> {
        plan.iter()
            .map(|d| match d {
                Dest::Stay => String::new(),
                Dest::Existing(c) => c.clone(),
                Dest::New(chain) => chain.last().cloned().unwrap_or_default(),
            })
            .collect()
    }

    #[test]
    fn names_and_folders() {
        assert_eq!(routing_key("report.v2"), "report-v2");
        assert_eq!(bucket_component("ab"), "~ab");
        assert_eq!(bucket_prefix("~ab"), Some("ab"));
        assert_eq!(bucket_prefix("ab"), None);
        assert_eq!(bucket_prefix("~"), None);
        assert_eq!(folder_prefix_of("docs/~a/~ab"), "ab");
        assert_eq!(folder_prefix_of("docs"), "");
        assert_eq!(source_folder_of("docs/x/~a/~ab"), "docs/x");
        assert_eq!(source_folder_of("~a"), "");
        assert_eq!(source_folder_of("docs"), "docs");
        let ids = ["d/~a/_index", "d/sub/_index", "d/~b/_index", "d/~a/~ab/_index", "d/leaf"];
        assert_eq!(child_prefixes("d", ids.into_iter()), vec!["a", "b"]);
        assert_eq!(child_prefixes("", ["~q/_index", "x/_index"].into_iter()), vec!["q"]);
        // A slug can never start with the mark: buckets never meet real folders.
        assert!(!forest_model::slug::slugify("~weird").starts_with(BUCKET_MARK));
    }

    #[test]
    fn routing_prefers_the_longest_bucket_and_fills_full_branches() {
        let chain = vec!["img_00".to_string(), "img_01".to_string()];
        assert_eq!(route("img_0042", "", &chain), Route::Child("img_00".into()));
        // Not full (only the skipped-prefix generation): a stranger stays.
        assert_eq!(route("iris", "", &chain), Route::Here);
        let full = vec!["img_00".to_string(), "i".to_string(), "z".to_string()];
        assert_eq!(route("img_0042", "", &full), Route::Child("img_00".into()));
        assert_eq!(route("iris", "", &full), Route::Child("i".into()));
        assert_eq!(route("apple", "", &full), Route::NewChild("a".into()));
        assert_eq!(route("ab", "a", &["ab".to_string()]), Route::Child("ab".into()));
        assert_eq!(route("a", "a", &["ab".to_string(), "ac".to_string()]), Route::Here);
    }

    #[test]
    fn first_split_skips_the_shared_prefix_and_keeps_buckets_at_half() {
        let keys: Vec<String> = (1..=151).map(|i| format!("img_{i:04}")).collect();
        let plan = plan_split("", &[], &members(&keys, 10));
        let h = homes(&plan);
        assert_eq!(h[0], "img_000"); // img_0001: img_00 (99 files) split once more
        assert_eq!(h[98], "img_009"); // img_0099
        assert_eq!(h[99], "img_01"); // img_0100 (52 files: one bucket)
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for b in &h {
            *count.entry(b.as_str()).or_default() += 1;
        }
        assert!(count.values().all(|&n| n <= SPLIT_ENTRIES / 2), "{count:?}");
        assert!(matches!(&plan[0], Dest::New(c) if c == &vec!["img_00".to_string(), "img_000".to_string()]));
    }

    #[test]
    fn later_splits_are_full_and_members_of_existing_buckets_join_them() {
        let children = vec!["note-0".to_string(), "note-1".to_string()];
        let mut keys: Vec<String> = (200..360).map(|i| format!("note-{i}")).collect();
        keys.push("note-0999".into());
        keys.push("apple".into());
        let plan = plan_split("", &children, &members(&keys, 10));
        let h = homes(&plan);
        assert_eq!(plan[keys.len() - 2], Dest::Existing("note-0".into()));
        assert_eq!(h[keys.len() - 1], "a");
        // The note-2xx/3xx crowd goes under `n`, then by its own shared
        // prefix (`note-2`: 100 files, once more by the next digit).
        assert!(matches!(&plan[0], Dest::New(c) if c == &vec!["n".to_string(), "note-2".into(), "note-20".into()]));
        assert!(matches!(&plan[150], Dest::New(c) if c == &vec!["n".to_string(), "note-3".into()]));
    }

    #[test]
    fn token_heavy_members_split_before_the_entry_cap() {
        let keys: Vec<String> = ["alpha", "beta", "gamma", "delta"]
            .iter()
            .flat_map(|w| (0..12).map(move |i| format!("{w}-{i:02}")))
            .collect();
        // 48 lines of 70 tokens: 3,360 > 2,400.
        assert!(overflows(48, 48 * 70));
        let plan = plan_split("", &[], &members(&keys, 70));
        let h = homes(&plan);
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for b in &h {
            *count.entry(b.as_str()).or_default() += 1;
        }
        assert_eq!(count.keys().copied().collect::<Vec<_>>(), vec!["a", "b", "d", "g"]);
        assert!(count.values().all(|&n| BUCKET_BASE_TOKENS + n * 70 <= SPLIT_TOKENS / 2));
    }

    #[test]
    fn keys_equal_to_the_shared_prefix_stay_and_strangers_stay() {
        let keys = vec!["ab".to_string(), "abc".to_string(), "abd".to_string(), "zz".to_string()];
        let plan = plan_split("ab", &[], &members(&keys, 10));
        assert_eq!(plan[0], Dest::Stay);
        assert_eq!(plan[1], Dest::New(vec!["abc".into()]));
        assert_eq!(plan[2], Dest::New(vec!["abd".into()]));
        assert_eq!(plan[3], Dest::Stay);
    }

    /// The growth property: grow a folder 10x in batches, applying each
    /// plan to an in-memory tree; no branch ever holds more than the cap,
    /// and a leaf moves at most once per level it descends.
    #[test]
    fn growth_never_overflows_and_moves_each_leaf_rarely() {
        #[derive(Default)]
        struct Tree {
            // bucket path (prefixes, "" = folder) -> direct keys
            leaves: BTreeMap<Vec<String>, Vec<String>>,
        }
        fn children(t: &Tree, at: &[String]) -> Vec<String> {
            t.leaves
                .keys()
                .filter(|p| p.len() == at.len() + 1 && p.starts_with(at))
                .map(|p| p[at.len()].clone())
                .collect()
        }
        fn entries(t: &Tree, at: &[String]) -> usize {
            t.leaves.get(at).map_or(0, Vec::len) + children(t, at).len()
        }
        let mut t = Tree::default();
        t.leaves.insert(vec![], vec![]);
        let mut moves: BTreeMap<String, usize> = BTreeMap::new();
        let words = ["report", "invoice", "img_", "scan-2024-", "memo", "zeta", "alpha"];
        let all: Vec<String> =
            (0..1500).map(|i| format!("{}{:05}", words[i % words.len()], (i * 7919) % 100_000)).collect();
        for chunk in all.chunks(100) {
            for k in chunk {
                // Route down.
                let mut at: Vec<String> = vec![];
                loop {
                    let kids = children(&t, &at);
                    let prefix = at.last().cloned().unwrap_or_default();
                    match route(k, &prefix, &kids) {
                        Route::Child(c) | Route::NewChild(c) => {
                            at.push(c);
                            t.leaves.entry(at.clone()).or_default();
                        }
                        Route::Here => break,
                    }
                }
                t.leaves.entry(at).or_default().push(k.clone());
            }
            // Rebalance every overflowing branch, deepest paths last.
            let mut work: Vec<Vec<String>> = t.leaves.keys().cloned().collect();
            while let Some(at) = work.pop() {
                if !overflows(entries(&t, &at), 0) {
                    continue;
                }
                let direct = t.leaves.get(&at).cloned().unwrap_or_default();
                let prefix = at.last().cloned().unwrap_or_default();
                let kids = children(&t, &at);
                let plan = plan_split(&prefix, &kids, &members(&direct, 1));
                let mut stay = vec![];
                for (k, d) in direct.into_iter().zip(plan) {
                    let mut to = at.clone();
                    match d {
                        Dest::Stay => {
                            stay.push(k);
                            continue;
                        }
                        Dest::Existing(c) => {
                            // The executor routes on down from the bucket.
                            to.push(c);
                            loop {
                                let kids = children(&t, &to);
                                let prefix = to.last().cloned().unwrap_or_default();
                                match route(&k, &prefix, &kids) {
                                    Route::Child(c) | Route::NewChild(c) => {
                                        to.push(c);
                                        t.leaves.entry(to.clone()).or_default();
                                    }
                                    Route::Here => break,
                                }
                            }
                        }
                        Dest::New(chain) => {
                            for c in chain {
                                to.push(c);
                                t.leaves.entry(to.clone()).or_default();
                            }
                        }
                    }
                    *moves.entry(k.clone()).or_default() += 1;
                    t.leaves.entry(to.clone()).or_default().push(k);
                    work.push(to);
                }
                t.leaves.insert(at, stay);
            }
        }
        for at in t.leaves.keys() {
            assert!(entries(&t, at) <= super::super::limits::MAX_ENTRIES, "{at:?} has {}", entries(&t, at));
        }
        let depth = t.leaves.keys().map(Vec::len).max().unwrap_or(0);
        assert!(moves.values().all(|&m| m <= depth), "depth {depth}, moves {:?}", moves.values().max());
        assert!(depth <= 4, "depth {depth}");
    }
}
