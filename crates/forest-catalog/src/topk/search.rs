//! The query side of the top-k index: exact FTS5 bm25 top-`limit` over
//! the posting lists of a query's terms, either document at a time with
//! MaxScore pruning seeded by the rarest terms' exact scores, or term at a
//! time into a dense accumulator when every list is long ([`Strategy`]).
//!
//! In: a fresh index (see the parent module) and a query. Out: `(nodes
//! rowid, bm25 rank)` best first, or `None` when FTS5 must answer. Reads
//! the `topk_*` tables, FTS5's averages record and content keys, and the
//! FTS rows of multi-token words (`phrase.rs`); writes nothing.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use rusqlite::{Connection, OptionalExtension};

use super::phrase::{phrase_postings, query_phrases, QueryPhrase};
use super::{dead_set, delta_postings, fts_totals, live_postings, meta, postings, Posting, Tokenizer, B, K1};
use crate::Result;

/// A scored doc; `Ord` puts the better (higher score, then lower rowid) first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scored {
    score: f64,
    doc: i64,
}

impl Eq for Scored {}

impl Ord for Scored {
    fn cmp(&self, o: &Self) -> Ordering {
        o.score.total_cmp(&self.score).then(self.doc.cmp(&o.doc))
    }
}

impl PartialOrd for Scored {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// How a query's posting lists are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Document at a time with MaxScore pruning: cheap when some query
    /// term is selective (its short list seeds a high threshold).
    MaxScore,
    /// Term at a time into a dense per-rowid accumulator, then one scan:
    /// no pruning, but a few ns per posting, so it wins when every term is
    /// common (at 10^6 nodes a query of six words in 30% of the docs each
    /// walks ~2M postings; MaxScore's cursor loop paid ~100 ns per doc).
    Dense,
}

/// Postings (all lists together) from which [`Strategy::Dense`] is used.
const DENSE_MIN_POSTINGS: usize = 50_000;
/// Largest rowid span the dense accumulator may cover, as a multiple of
/// the live rows (rowids left sparse by churn make the scan too long).
const DENSE_SPAN: i64 = 4;

/// Exact FTS5 top-`limit` for `query` as `(nodes rowid, bm25 rank)`,
/// best first; `None` when FTS5 must answer (see the module doc).
pub(crate) fn search(conn: &Connection, query: &str, limit: usize) -> Result<Option<Vec<(i64, f64)>>> {
    search_with(conn, query, limit, None)
}

/// [`search`] with the scoring strategy forced (tests) or chosen by the
/// posting counts (`None`). Both give the same, exact answer.
pub(crate) fn search_with(
    conn: &Connection,
    query: &str,
    limit: usize,
    strategy: Option<Strategy>,
) -> Result<Option<Vec<(i64, f64)>>> {
    if meta(conn, "fresh")? != Some(1) {
        return Ok(None);
    }
    let Some((n_row, n_token)) = fts_totals(conn)? else {
        return Ok(None);
    };
    if meta(conn, "docs")? != Some(n_row) || n_row <= 0 {
        return Ok(None);
    }
    let mut tok = Tokenizer::new();
    let phrases = query_phrases(&mut tok, query)?;
    if phrases.is_empty() || limit == 0 {
        return Ok(Some(vec![]));
    }
    let dead = if meta(conn, "dead")?.unwrap_or(0) > 0 { dead_set(conn)? } else { Vec::new() };
    let Some((sources, phrase_list)) = sources_of(conn, &mut tok, &phrases)? else { return Ok(None) };
    let nrow = n_row as f64;
    let avgdl = n_token as f64 / nrow;
    let total: usize = sources.iter().map(Source::estimate).sum();
    let strategy = strategy.unwrap_or(if total >= DENSE_MIN_POSTINGS { Strategy::Dense } else { Strategy::MaxScore });
    if strategy == Strategy::Dense {
        let max_doc = max_rowid(conn)?;
        if max_doc >= 0 && max_doc <= n_row.saturating_mul(DENSE_SPAN).max(1 << 16) {
            if let Some(top) = dense_top(conn, &sources, &phrase_list, &dead, nrow, avgdl, limit, max_doc)? {
                return Ok(Some(top));
            }
        }
    }
    let mut lists: Vec<Vec<Posting>> = Vec::with_capacity(sources.len());
    for src in sources {
        lists.push(match src {
            Source::Term { term, .. } => postings(conn, &term, &dead)?,
            Source::List(l) => l,
        });
    }
    let idf: Vec<f64> = phrase_list.iter().map(|&i| idf_of(nrow, lists[i].len())).collect();
    Ok(Some(max_score(&lists, &phrase_list, &idf, avgdl, limit)))
}

/// One source per distinct phrase, and the source of each phrase (in
/// query order). Phrase lists come from FTS5 now; a term's blob is decoded
/// into a list (MaxScore) or straight into the accumulator (Dense).
/// `None` when FTS5 must answer a phrase.
fn sources_of(
    conn: &Connection,
    tok: &mut Tokenizer,
    phrases: &[QueryPhrase],
) -> Result<Option<(Vec<Source>, Vec<usize>)>> {
    let mut sources: Vec<Source> = vec![];
    let mut slot: HashMap<String, usize> = HashMap::new();
    let mut phrase_list = Vec::with_capacity(phrases.len());
    for p in phrases {
        let key = p.key();
        let i = match slot.get(&key) {
            Some(&i) => i,
            None => {
                let src = match p {
                    QueryPhrase::Term(t) => Source::Term { term: t.clone(), df: term_df(conn, t)? },
                    QueryPhrase::Tokens(ts) => match phrase_postings(conn, tok, ts)? {
                        Some(l) => Source::List(l),
                        None => return Ok(None),
                    },
                };
                sources.push(src);
                slot.insert(key, sources.len() - 1);
                sources.len() - 1
            }
        };
        phrase_list.push(i);
    }
    Ok(Some((sources, phrase_list)))
}

/// The exact BM25 top-`limit` over decoded posting lists, by MaxScore:
/// `(rowid, rank)` best first.
fn max_score(lists: &[Vec<Posting>], phrase_list: &[usize], idf: &[f64], avgdl: f64, limit: usize) -> Vec<(i64, f64)> {
    // Upper bound of each list's contribution (bm25's saturation: a
    // phrase adds less than idf * (k1 + 1)), with a margin for rounding.
    let mut ub = vec![0.0f64; lists.len()];
    for (ph, &li) in phrase_list.iter().enumerate() {
        ub[li] += idf[ph] * (K1 + 1.0) * (1.0 + 1e-9);
    }
    // MaxScore: lists by bound ascending; once the `limit`-th best score
    // exceeds the summed bounds of the first `ne` lists, a doc found only
    // in those cannot enter, so candidates come from the others and the
    // first `ne` are only probed (binary search) for those candidates.
    let mut order: Vec<usize> = (0..lists.len()).collect();
    order.sort_by(|&a, &b| ub[a].total_cmp(&ub[b]));
    let mut prefix = vec![0.0f64; order.len() + 1];
    for (k, &li) in order.iter().enumerate() {
        prefix[k + 1] = prefix[k] + ub[li];
    }
    // Seed: exact scores of real docs (those of the rarest terms) bound
    // the final `limit`-th best from below, so lists whose bounds sum
    // under it are only probed from the start, never walked doc by doc.
    let theta = seed_threshold(lists, phrase_list, idf, avgdl, limit);
    let mut ne = 0usize;
    while ne < order.len() && prefix[ne + 1] < theta {
        ne += 1;
    }
    let mut cursor = vec![0usize; lists.len()];
    let mut freq = vec![0.0f64; lists.len()];
    // A bounded max-heap keeps the `limit` best (its top is the worst kept).
    let mut heap: BinaryHeap<Scored> = BinaryHeap::with_capacity(limit + 1);
    loop {
        let mut doc = i64::MAX;
        for &li in &order[ne..] {
            if let Some(p) = lists[li].get(cursor[li]) {
                doc = doc.min(p.doc);
            }
        }
        if doc == i64::MAX {
            break;
        }
        let mut dl = 0u32;
        for (k, &li) in order.iter().enumerate() {
            freq[li] = 0.0;
            let l = &lists[li];
            if k < ne {
                cursor[li] += l[cursor[li]..].partition_point(|p| p.doc < doc);
            }
            if let Some(p) = l.get(cursor[li]) {
                if p.doc == doc {
                    freq[li] = f64::from(p.wf);
                    dl = p.dl;
                    cursor[li] += 1;
                }
            }
        }
        let d = f64::from(dl);
        let mut score = 0.0f64;
        for (ph, &li) in phrase_list.iter().enumerate() {
            let f = freq[li];
            score += idf[ph] * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)));
        }
        let s = Scored { score, doc };
        if heap.len() < limit {
            heap.push(s);
        } else if heap.peek().is_some_and(|worst| s < *worst) {
            heap.pop();
            heap.push(s);
        }
        if heap.len() == limit {
            if let Some(worst) = heap.peek() {
                let bound = worst.score.max(theta);
                while ne < order.len() && prefix[ne + 1] < bound {
                    ne += 1;
                }
            }
        }
    }
    let mut top = heap.into_vec();
    top.sort();
    top.into_iter().map(|s| (s.doc, -s.score)).collect()
}

/// A phrase's postings before scoring: a term's blob (decoded when used)
/// or a list made already (multi-token phrases).
enum Source {
    Term { term: String, df: usize },
    List(Vec<Posting>),
}

impl Source {
    /// Postings, for choosing the strategy (a blob's count before void
    /// docs and delta rows).
    fn estimate(&self) -> usize {
        match self {
            Source::Term { df, .. } => *df,
            Source::List(l) => l.len(),
        }
    }
}

/// FTS5's IDF: `ln((N - n + 0.5) / (n + 0.5))`, clamped to 1e-6.
fn idf_of(nrow: f64, hits: usize) -> f64 {
    let n_hit = hits as f64;
    let idf = ((nrow - n_hit + 0.5) / (n_hit + 0.5)).ln();
    if idf <= 0.0 {
        1e-6
    } else {
        idf
    }
}

/// A term's blob posting count (0 when it has no blob).
fn term_df(conn: &Connection, term: &str) -> Result<usize> {
    let df: Option<i64> =
        conn.prepare_cached("SELECT df FROM topk_terms WHERE term = ?1")?.query_row([term], |r| r.get(0)).optional()?;
    Ok(df.unwrap_or(0).max(0) as usize)
}

/// The largest FTS rowid (the content table's key: a B-tree lookup).
fn max_rowid(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT COALESCE(MAX(id), 0) FROM nodes_fts_content", [], |r| r.get(0))?)
}

/// [`Strategy::Dense`]: add each phrase's contribution to a per-rowid
/// accumulator, phrase by phrase in query order, so every doc's sum takes
/// the same floating-point steps as FTS5's per-row loop (a missing phrase
/// adds exactly 0.0 there); then keep the `limit` best in rowid order.
///
/// A term's blob is decoded straight into the accumulator where SQLite
/// holds it (no posting list is built: at 10^6 nodes a common term's list
/// is ~5 MB of fresh pages); when void docs exist, one counting pass first
/// gives the term's live postings for its IDF. `None` for a negative
/// rowid (then MaxScore answers).
#[allow(clippy::too_many_arguments)]
fn dense_top(
    conn: &Connection,
    sources: &[Source],
    phrase_list: &[usize],
    dead: &[i64],
    nrow: f64,
    avgdl: f64,
    limit: usize,
    max_doc: i64,
) -> Result<Option<Vec<(i64, f64)>>> {
    let Ok(span) = usize::try_from(max_doc.max(0) + 1) else {
        return Ok(None);
    };
    let mut acc = vec![0.0f64; span];
    let tf = TfTable::new(avgdl);
    for &si in phrase_list {
        let ok = match &sources[si] {
            Source::List(l) => {
                let w = idf_of(nrow, l.len());
                add_postings(&mut acc, l, w, &tf)
            }
            Source::Term { term, df } => {
                let extra = delta_postings(conn, term)?;
                let mut st = conn.prepare_cached("SELECT postings FROM topk_terms WHERE term = ?1")?;
                let mut rows = st.query([term])?;
                let blob: &[u8] = match rows.next()? {
                    Some(r) => r.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?,
                    None => &[],
                };
                let live = if dead.is_empty() || blob.is_empty() { *df } else { count_live(blob, dead)? };
                let w = idf_of(nrow, live + extra.len());
                add_blob(&mut acc, blob, dead, w, &tf)? && add_postings(&mut acc, &extra, w, &tf)
            }
        };
        if !ok {
            return Ok(None);
        }
    }
    let mut top = top_of(&acc, 0, limit);
    top.truncate(limit);
    Ok(Some(top.into_iter().map(|s| (s.doc, -s.score)).collect()))
}

/// Add `w * tf` of each posting; false on a negative rowid.
fn add_postings(acc: &mut Vec<f64>, list: &[Posting], w: f64, tf: &TfTable) -> bool {
    for p in list {
        let Ok(i) = usize::try_from(p.doc) else {
            return false;
        };
        if i >= acc.len() {
            // Defensive: the content table's largest rowid bounds them.
            acc.resize(i + 1, 0.0);
        }
        acc[i] += w * tf.get(p.wf, p.dl);
    }
    true
}

/// [`add_postings`] straight from a blob, leaving out the `dead` docs.
fn add_blob(acc: &mut Vec<f64>, blob: &[u8], dead: &[i64], w: f64, tf: &TfTable) -> Result<bool> {
    for p in live_postings(blob, dead) {
        let p = p?;
        let Ok(i) = usize::try_from(p.doc) else {
            return Ok(false);
        };
        if i >= acc.len() {
            acc.resize(i + 1, 0.0);
        }
        acc[i] += w * tf.get(p.wf, p.dl);
    }
    Ok(true)
}

/// Postings of a blob whose doc is not `dead`.
fn count_live(blob: &[u8], dead: &[i64]) -> Result<usize> {
    live_postings(blob, dead).try_fold(0, |n, p| p.map(|_| n + 1))
}

/// The `limit` best of one accumulator range (rowids `lo..`), best first.
fn top_of(slice: &[f64], lo: i64, limit: usize) -> Vec<Scored> {
    // Every matching doc scores > 0 (idf >= 1e-6, frequency >= 1).
    let mut heap: BinaryHeap<Scored> = BinaryHeap::with_capacity(limit + 1);
    for (i, &score) in slice.iter().enumerate() {
        if score <= 0.0 {
            continue;
        }
        if heap.len() == limit && heap.peek().is_some_and(|worst| score < worst.score) {
            continue;
        }
        let s = Scored { score, doc: lo + i as i64 };
        if heap.len() < limit {
            heap.push(s);
        } else if heap.peek().is_some_and(|worst| s < *worst) {
            heap.pop();
            heap.push(s);
        }
    }
    let mut top = heap.into_vec();
    top.sort();
    top
}

/// bm25's frequency part `(f * (k1 + 1)) / (f + k1 * (1 - b + b * dl /
/// avgdl))` for small `(wf, dl)`, computed once per query by the same
/// expression (so a looked-up value is the value FTS5's loop computes);
/// larger pairs are computed on the spot.
struct TfTable {
    avgdl: f64,
    vals: Vec<f64>,
}

const TF_WF: u32 = 32;
const TF_DL: u32 = 256;

impl TfTable {
    fn new(avgdl: f64) -> TfTable {
        let mut vals = Vec::with_capacity((TF_WF * TF_DL) as usize);
        for wf in 0..TF_WF {
            for dl in 0..TF_DL {
                vals.push(tf_part(f64::from(wf), f64::from(dl), avgdl));
            }
        }
        TfTable { avgdl, vals }
    }

    #[inline]
    fn get(&self, wf: u32, dl: u32) -> f64 {
        if wf < TF_WF && dl < TF_DL {
            self.vals[(wf * TF_DL + dl) as usize]
        } else {
            tf_part(f64::from(wf), f64::from(dl), self.avgdl)
        }
    }
}

#[inline]
fn tf_part(f: f64, d: f64, avgdl: f64) -> f64 {
    (f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl))
}

/// Most docs scored for the seed threshold (beyond this the seed would
/// cost as much as the search it shortens).
const SEED_MAX: usize = 50_000;

/// A lower bound of the final `limit`-th best score: the `limit`-th best
/// exact score among the docs of the shortest lists (rarest terms first,
/// while they hold at most [`SEED_MAX`] docs together); `-inf` when they
/// hold fewer than `limit` docs.
fn seed_threshold(lists: &[Vec<Posting>], phrase_list: &[usize], idf: &[f64], avgdl: f64, limit: usize) -> f64 {
    if lists.len() < 2 || limit == 0 {
        return f64::NEG_INFINITY;
    }
    let mut by_len: Vec<&Vec<Posting>> = lists.iter().filter(|l| !l.is_empty()).collect();
    by_len.sort_by_key(|l| l.len());
    let mut docs: Vec<(i64, u32)> = vec![];
    for l in by_len {
        if docs.len() + l.len() > SEED_MAX {
            break;
        }
        docs.extend(l.iter().map(|p| (p.doc, p.dl)));
    }
    docs.sort_unstable();
    docs.dedup_by_key(|d| d.0);
    if docs.len() < limit {
        return f64::NEG_INFINITY;
    }
    let mut scores: Vec<f64> = docs
        .iter()
        .map(|&(doc, dl)| {
            let d = f64::from(dl);
            let mut score = 0.0f64;
            // Same terms, same order and same arithmetic as the main loop.
            for (ph, &li) in phrase_list.iter().enumerate() {
                let l = &lists[li];
                let f = match l.binary_search_by_key(&doc, |q| q.doc) {
                    Ok(i) => f64::from(l[i].wf),
                    Err(_) => 0.0,
                };
                score += idf[ph] * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)));
            }
            score
        })
        .collect();
    let k = limit - 1;
    scores.select_nth_unstable_by(k, |a, b| b.total_cmp(a));
    scores[k]
}
