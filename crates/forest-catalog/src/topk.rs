//! A derived top-k index beside the dialect tables of `catalog.db`, so
//! `locate` at 10^6 nodes does not pay FTS5's per-row `bm25()` call for
//! every row an OR query matches.
//!
//! In: the same four text columns the FTS row gets (title, aliases, tags,
//! summary), per node, from [`crate::Catalog`]'s writers, inside their
//! transaction. Out: for a query, the exact FTS5 top-`limit` list
//! `(nodes rowid, bm25 rank)` that `ORDER BY bm25(nodes_fts, 0.0, 4.0, 3.0,
//! 2.0, 1.0) LIMIT n` returns, or `None` when the index cannot answer
//! exactly (then `locate` runs the FTS5 query itself).
//!
//! Exactness: the score is FTS5's own bm25 (k1 1.2, b 0.75, IDF clamped to
//! 1e-6, weighted phrase frequency over the whole-row length) evaluated in
//! the same floating-point order; `nRow` and the total token count come
//! from FTS5's averages record; ties keep rowid order as SQLite's LIMIT
//! sorter does. Tokens are unicode61's: ASCII text is tokenized here
//! (alphanumerics, ASCII case folding, which is all unicode61 does below
//! 0x80), anything else by FTS5 itself through an in-memory table, query
//! words too. A query word that tokenizes to several tokens is an FTS5
//! phrase, answered from FTS5's phrase match (`phrase.rs`).
//!
//! Storage: `topk_terms` holds one delta-coded posting blob per term
//! (doc, weighted frequency, doc length); writes since the last
//! compaction go to `topk_delta` (postings of re-inserted docs) and
//! `topk_dead` (docs whose blob postings are void). A compaction rewrites
//! the blobs when the side tables grow. `topk_meta.fresh` is cleared by
//! triggers on `nodes`, so a catalog written by another engine (which does
//! not maintain these tables) falls back to FTS5 until the next rebuild.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

use rusqlite::{params, Connection, OptionalExtension};

use crate::{NodeRow, Result};

mod phrase;
mod search;
mod write;
pub(crate) use search::search;
#[cfg(test)]
use search::{search_with, Strategy};
pub(crate) use write::{compact, fts_row_node, Builder, Writer, FTS_ROWS_SQL};

/// Side tables (created with the catalog; harmless to dialect readers).
pub(crate) const TABLES_SQL: &str = r#"
CREATE TABLE IF NOT EXISTS topk_terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL, postings BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS topk_delta (
    term TEXT NOT NULL, doc INTEGER NOT NULL, wf INTEGER NOT NULL, dl INTEGER NOT NULL,
    PRIMARY KEY (term, doc)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_topk_delta_doc ON topk_delta(doc);
CREATE TABLE IF NOT EXISTS topk_dead (doc INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS topk_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"#;

/// Any change to `nodes` by a writer that does not maintain the index
/// marks it unusable; our writers set `fresh` back in the same transaction.
pub(crate) const TRIGGERS_SQL: &str = r#"
CREATE TRIGGER IF NOT EXISTS topk_nodes_ins AFTER INSERT ON nodes
    BEGIN UPDATE topk_meta SET value = 0 WHERE key = 'fresh'; END;
CREATE TRIGGER IF NOT EXISTS topk_nodes_del AFTER DELETE ON nodes
    BEGIN UPDATE topk_meta SET value = 0 WHERE key = 'fresh'; END;
CREATE TRIGGER IF NOT EXISTS topk_nodes_upd AFTER UPDATE OF id, title, summary, tags, aliases ON nodes
    BEGIN UPDATE topk_meta SET value = 0 WHERE key = 'fresh'; END;
"#;

/// bm25 weights of the indexed columns title, aliases, tags, summary
/// (dialect §7.2; the unindexed `id` column weighs 0).
const WEIGHTS: [u32; 4] = [4, 3, 2, 1];
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Compaction thresholds: void docs, and delta rows as a share of the
/// blob postings. The side tables are read on every query, but each
/// compaction rewrites every touched blob: letting the delta grow to 1/16
/// of the blobs bounds a growing forest's total rewrite at ~16x its final
/// index size (an adopt of 10^6 nodes from nothing).
const MAX_DEAD: i64 = 10_000;
const MIN_DELTA: i64 = 100_000;
const DELTA_SHARE: i64 = 16;

/// One node's terms: `(term, weighted frequency)` and its token count.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct DocTerms {
    terms: Vec<(String, u32)>,
    len: u32,
}

/// unicode61 over ASCII: runs of `[A-Za-z0-9]`, lower-cased.
fn ascii_tokens(s: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            buf.push(c.to_ascii_lowercase());
        } else if !buf.is_empty() {
            f(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        f(&buf);
    }
}

/// [`Tokenizer::doc_terms`] for columns unicode61 splits as ASCII: the
/// tokens lower-cased into one buffer, sorted and merged, so only distinct
/// terms are allocated (a rebuild calls this once per node).
fn ascii_doc_terms(cols: &[&str; 4]) -> DocTerms {
    let mut buf = String::new();
    let mut spans: Vec<(usize, usize, u32)> = vec![];
    for (c, text) in cols.iter().enumerate() {
        let mut start = buf.len();
        for ch in text.chars().chain(std::iter::once(' ')) {
            if ch.is_ascii_alphanumeric() {
                buf.push(ch.to_ascii_lowercase());
            } else if buf.len() > start {
                spans.push((start, buf.len(), WEIGHTS[c]));
                start = buf.len();
            }
        }
    }
    let len = spans.len() as u32;
    spans.sort_unstable_by(|a, b| buf[a.0..a.1].cmp(&buf[b.0..b.1]));
    let mut terms: Vec<(String, u32)> = vec![];
    for (a, b, w) in spans {
        match terms.last_mut() {
            Some((t, sum)) if t.as_str() == &buf[a..b] => *sum += w,
            _ => terms.push((buf[a..b].to_string(), w)),
        }
    }
    DocTerms { terms, len }
}

/// Tokenizes node text exactly as the catalog's FTS5 table does.
pub(crate) struct Tokenizer {
    /// In-memory FTS5 table with the catalog's tokenizer, for non-ASCII text.
    fts: Option<Connection>,
}

/// Non-ASCII characters found to be unicode61 separators (`true`) or token
/// characters (`false`), asked of FTS5 once per process and character.
static SEPARATORS: OnceLock<Mutex<HashMap<char, bool>>> = OnceLock::new();

impl Tokenizer {
    pub(crate) fn new() -> Tokenizer {
        Tokenizer { fts: None }
    }

    /// True when [`ascii_tokens`] gives FTS5's tokens for `cols`: every
    /// non-ASCII character in them is a separator to unicode61 (bucket
    /// titles end in `…`; re-tokenizing such rows through FTS5 cost ~60 µs
    /// each, most of a 10^6-node locate's tail). unicode61 classifies code
    /// points one by one, so FTS5's answer for `a<c>a` (the tokens `a`,
    /// `a`: a separator) holds in any context.
    pub(crate) fn ascii_exact(&mut self, cols: &[&str]) -> Result<bool> {
        let known = SEPARATORS.get_or_init(Default::default);
        for ch in cols.iter().flat_map(|c| c.chars()).filter(|c| !c.is_ascii()) {
            let cached = known.lock().unwrap_or_else(|e| e.into_inner()).get(&ch).copied();
            let sep = match cached {
                Some(s) => s,
                None => {
                    let probe = [format!("a{ch}a"), String::new(), String::new(), String::new()];
                    let [title, ..] = self.fts_row_tokens(&probe)?;
                    let s = title == ["a", "a"];
                    known.lock().unwrap_or_else(|e| e.into_inner()).insert(ch, s);
                    s
                }
            };
            if !sep {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Terms and length of one node's FTS row.
    pub(crate) fn doc_terms(&mut self, node: &NodeRow) -> Result<DocTerms> {
        let (aliases, tags) = (node.aliases.join(" "), node.tags.join(" "));
        let cols: [&str; 4] = [&node.title, &aliases, &tags, &node.summary];
        if cols.iter().all(|c| c.is_ascii()) || self.ascii_exact(&cols)? {
            return Ok(ascii_doc_terms(&cols));
        }
        let mut wf: BTreeMap<String, u32> = BTreeMap::new();
        let mut len = 0u32;
        let conn = self.fts_conn()?;
        conn.execute(
            "INSERT INTO tok (rowid, title, aliases, tags, summary) VALUES (1, ?1, ?2, ?3, ?4)",
            params![cols[0], cols[1], cols[2], cols[3]],
        )?;
        {
            let mut st = conn.prepare_cached("SELECT term, col FROM tokv")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let term: String = r.get(0)?;
                let col: String = r.get(1)?;
                let w = match col.as_str() {
                    "title" => WEIGHTS[0],
                    "aliases" => WEIGHTS[1],
                    "tags" => WEIGHTS[2],
                    _ => WEIGHTS[3],
                };
                len += 1;
                *wf.entry(term).or_default() += w;
            }
        }
        conn.execute("DELETE FROM tok", [])?;
        Ok(DocTerms { terms: wf.into_iter().collect(), len })
    }

    fn fts_conn(&mut self) -> Result<&Connection> {
        if self.fts.is_none() {
            let conn = Connection::open_in_memory()?;
            conn.execute_batch(
                "CREATE VIRTUAL TABLE tok USING fts5(title, aliases, tags, summary, \
                   tokenize = \"unicode61 remove_diacritics 2\"); \
                 CREATE VIRTUAL TABLE tokv USING fts5vocab(tok, instance);",
            )?;
            self.fts = Some(conn);
        }
        match &self.fts {
            Some(c) => Ok(c),
            None => unreachable!("set above"),
        }
    }
}

thread_local! {
    /// [`index_terms`]' tokenizer (its FTS5 table for non-ASCII text is
    /// opened once per thread, on first use).
    static TOKENIZER: std::cell::RefCell<Tokenizer> = std::cell::RefCell::new(Tokenizer::new());
}

/// A node's search-index terms, as [`Tokenizer::doc_terms`] gives them,
/// computed on the calling thread: a rebuild's readers compute them beside
/// their parsing, off the inserting thread ([`crate::RebuildRow`]).
pub fn index_terms(node: &NodeRow) -> Result<IndexTerms> {
    TOKENIZER.with(|t| t.borrow_mut().doc_terms(node)).map(IndexTerms)
}

/// A node's terms for the top-k index, from [`index_terms`].
#[derive(Debug, PartialEq)]
pub struct IndexTerms(pub(crate) DocTerms);

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// One varint at `pos`. Most varints of a posting are one byte (small
/// gaps, counts, lengths): that case is inlined into the decode loops, the
/// rest is out of line (a plain `#[inline]` left the whole function a call
/// per varint: 18% of a 10^6-node locate profile).
#[inline(always)]
fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    match buf.get(*pos) {
        Some(&b) if b < 0x80 => {
            *pos += 1;
            Some(u64::from(b))
        }
        _ => get_varint_long(buf, pos),
    }
}

#[cold]
#[inline(never)]
fn get_varint_long(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// One posting: document (nodes rowid), weighted frequency, doc length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Posting {
    doc: i64,
    wf: u32,
    dl: u32,
}

/// Append-only blob writer (docs must ascend).
#[derive(Default)]
struct BlobBuilder {
    bytes: Vec<u8>,
    last: i64,
    df: i64,
}

impl BlobBuilder {
    fn push(&mut self, p: Posting) {
        // Three varints take at most 30 bytes; coded aside first so a new
        // blob gets only its own few bytes (most terms of a large forest,
        // numbers and names, have one posting).
        let mut buf = [0u8; 30];
        let mut n = 0;
        for mut v in [(p.doc - self.last) as u64, u64::from(p.wf), u64::from(p.dl)] {
            while v >= 0x80 {
                buf[n] = (v as u8) | 0x80;
                v >>= 7;
                n += 1;
            }
            buf[n] = v as u8;
            n += 1;
        }
        // Grow by a quarter, not Vec's doubling: a rebuild holds many
        // blobs at once, and doubling left up to half of them as slack.
        if self.bytes.capacity() - self.bytes.len() < n {
            self.bytes.reserve_exact(n.max(self.bytes.len() / 4));
        }
        self.bytes.extend_from_slice(&buf[..n]);
        self.last = p.doc;
        self.df += 1;
    }
}

/// The live postings of a blob in doc order: the `dead` docs (ascending,
/// like the blob's) are left out by one merge pass, not a set probe per
/// posting. A corrupt blob yields one error and ends.
struct LivePostings<'a> {
    blob: &'a [u8],
    pos: usize,
    doc: i64,
    dead: &'a [i64],
    dead_at: usize,
}

fn live_postings<'a>(blob: &'a [u8], dead: &'a [i64]) -> LivePostings<'a> {
    LivePostings { blob, pos: 0, doc: 0, dead, dead_at: 0 }
}

impl Iterator for LivePostings<'_> {
    type Item = Result<Posting>;

    // Inlined into the dense scorer's loop (a call per posting otherwise).
    #[inline(always)]
    fn next(&mut self) -> Option<Result<Posting>> {
        while self.pos < self.blob.len() {
            let b = self.blob;
            let (Some(d), Some(wf), Some(dl)) =
                (get_varint(b, &mut self.pos), get_varint(b, &mut self.pos), get_varint(b, &mut self.pos))
            else {
                self.pos = b.len();
                return Some(Err(crate::CatalogError::Schema("topk: corrupt posting blob".into())));
            };
            self.doc += d as i64;
            while self.dead.get(self.dead_at).is_some_and(|&x| x < self.doc) {
                self.dead_at += 1;
            }
            if self.dead.get(self.dead_at) != Some(&self.doc) {
                return Some(Ok(Posting { doc: self.doc, wf: wf as u32, dl: dl as u32 }));
            }
        }
        None
    }
}

/// Decode a blob into `out`, leaving out the `dead` docs.
fn decode(blob: &[u8], dead: &[i64], out: &mut Vec<Posting>) -> Result<()> {
    for p in live_postings(blob, dead) {
        out.push(p?);
    }
    Ok(())
}

fn meta(conn: &Connection, key: &str) -> Result<Option<i64>> {
    Ok(conn.query_row("SELECT value FROM topk_meta WHERE key = ?1", [key], |r| r.get(0)).optional()?)
}

fn set_meta(conn: &Connection, key: &str, value: i64) -> Result<()> {
    conn.prepare_cached("INSERT OR REPLACE INTO topk_meta (key, value) VALUES (?1, ?2)")?
        .execute(params![key, value])?;
    Ok(())
}

fn add_meta(conn: &Connection, key: &str, by: i64) -> Result<()> {
    if by != 0 {
        conn.prepare_cached("UPDATE topk_meta SET value = value + ?2 WHERE key = ?1")?.execute(params![key, by])?;
    }
    Ok(())
}

/// The void docs, ascending (the table's primary key order).
fn dead_set(conn: &Connection) -> Result<Vec<i64>> {
    let mut st = conn.prepare_cached("SELECT doc FROM topk_dead ORDER BY doc")?;
    let docs = st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<Vec<i64>>>()?;
    Ok(docs)
}

/// `(nRow, total tokens)` from FTS5's averages record (`%_data` id 1:
/// varint row count, then one varint total per column).
fn fts_totals(conn: &Connection) -> Result<Option<(i64, i64)>> {
    let blob: Option<Vec<u8>> =
        conn.query_row("SELECT block FROM nodes_fts_data WHERE id = 1", [], |r| r.get(0)).optional()?;
    let Some(blob) = blob else {
        return Ok(None);
    };
    // FTS5 varints are SQLite's big-endian 1-9 byte form.
    let mut pos = 0;
    let Some(rows) = sqlite_varint(&blob, &mut pos) else {
        return Ok(None);
    };
    let mut tokens = 0i64;
    while pos < blob.len() {
        let Some(v) = sqlite_varint(&blob, &mut pos) else {
            return Ok(None);
        };
        tokens += v as i64;
    }
    Ok(Some((rows as i64, tokens)))
}

fn sqlite_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..9 {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if i == 8 {
            return Some((v << 8) | u64::from(b));
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b < 0x80 {
            return Some(v);
        }
    }
    Some(v)
}

/// Postings of `term` (blob minus void docs, plus delta), by doc.
/// The blob is decoded where SQLite holds it, not copied out.
fn postings(conn: &Connection, term: &str, dead: &[i64]) -> Result<Vec<Posting>> {
    let mut out = vec![];
    let mut st = conn.prepare_cached("SELECT df, postings FROM topk_terms WHERE term = ?1")?;
    let mut rows = st.query([term])?;
    if let Some(r) = rows.next()? {
        let df: i64 = r.get(0)?;
        out.reserve(df.max(0) as usize);
        let blob = r.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
        decode(blob, dead, &mut out)?;
    }
    drop(rows);
    merge_into(&mut out, &delta_postings(conn, term)?);
    Ok(out)
}

/// A term's delta postings (re-inserted docs), by doc.
fn delta_postings(conn: &Connection, term: &str) -> Result<Vec<Posting>> {
    let mut st = conn.prepare_cached("SELECT doc, wf, dl FROM topk_delta WHERE term = ?1 ORDER BY doc")?;
    let rows = st.query_map([term], |r| Ok(Posting { doc: r.get(0)?, wf: r.get(1)?, dl: r.get(2)? }))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Merge the doc-ordered `extra` into the doc-ordered `out` in place, from
/// the back (a doc is in at most one of them: a re-inserted doc's blob
/// postings are dead).
fn merge_into(out: &mut Vec<Posting>, extra: &[Posting]) {
    if extra.is_empty() {
        return;
    }
    let n = out.len();
    out.resize(n + extra.len(), Posting { doc: 0, wf: 0, dl: 0 });
    let (mut i, mut j, mut k) = (n, extra.len(), n + extra.len());
    while j > 0 {
        if i > 0 && out[i - 1].doc > extra[j - 1].doc {
            out[k - 1] = out[i - 1];
            i -= 1;
        } else {
            out[k - 1] = extra[j - 1];
            j -= 1;
        }
        k -= 1;
    }
}

/// term -> `(doc, wf, dl)` by doc.
pub(crate) type Logical = BTreeMap<String, Vec<(i64, u32, u32)>>;

/// Logical content of the index: term -> `(doc, wf, dl)` by doc, blobs
/// and side tables merged (what a fresh rebuild would write).
pub(crate) fn logical(conn: &Connection) -> Result<Logical> {
    let dead = dead_set(conn)?;
    let mut terms: Vec<String> = {
        let mut st = conn.prepare("SELECT term FROM topk_terms UNION SELECT term FROM topk_delta")?;
        let t = st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>()?;
        t
    };
    terms.sort();
    let mut out = BTreeMap::new();
    for t in terms {
        let p = postings(conn, &t, &dead)?;
        if !p.is_empty() {
            out.insert(t, p.into_iter().map(|p| (p.doc, p.wf, p.dl)).collect());
        }
    }
    Ok(out)
}

/// Whether the index can answer (fresh and in step with FTS5's row count).
pub(crate) fn usable(conn: &Connection) -> Result<bool> {
    if meta(conn, "fresh")? != Some(1) {
        return Ok(false);
    }
    Ok(fts_totals(conn)?.map(|(rows, _)| rows) == meta(conn, "docs")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_tokens_fold_and_split() {
        let mut v = vec![];
        ascii_tokens("BE-291 a_b Foo's  x", |t| v.push(t.to_string()));
        assert_eq!(v, ["be", "291", "a", "b", "foo", "s", "x"]);
    }

    #[test]
    fn varints_round_trip() {
        let mut b = vec![];
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX >> 1] {
            put_varint(&mut b, v);
        }
        let mut pos = 0;
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX >> 1] {
            assert_eq!(get_varint(&b, &mut pos), Some(v));
        }
        assert_eq!(get_varint(&[0x80], &mut 0), None);
    }

    #[test]
    fn ascii_path_matches_fts5_tokenizer() {
        let mut tok = Tokenizer::new();
        let mut node = NodeRow::new("a", "note", "Sales BY Region: Q1-2026 (draft)", "A_b c's  d.e 42x");
        node.tags = vec!["tag-one".into(), "TWO".into()];
        node.aliases = vec!["alias 3".into()];
        let ascii = tok.doc_terms(&node).unwrap();
        // Force the FTS5 path with a trailing non-ASCII token-less char.
        node.summary.push('\u{2014}');
        let fts = tok.doc_terms(&node).unwrap();
        assert_eq!(ascii, fts);
        assert!(ascii.len > 10);
    }

    #[test]
    fn search_answers_itself_and_matches_fts5() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut cat = crate::Catalog::open(&dir.path().join("c.db")).unwrap();
        let texts = ["alpha beta", "beta gamma gamma", "Gamma delta, alpha", "the beta of alpha", "x"];
        let nodes: Vec<NodeRow> =
            texts.iter().enumerate().map(|(i, t)| NodeRow::new(format!("n{i}"), "note", *t, *t)).collect();
        cat.rebuild(nodes).unwrap();
        for q in ["alpha", "beta gamma", "alpha alpha delta", "zzz", "the, beta"] {
            let ours = search(cat.connection(), q, 25).unwrap().expect("ASCII query on a fresh index");
            let fts = cat.ranked_fts(q, 25).unwrap();
            let ours: Vec<(String, f64)> = ours
                .iter()
                .map(|(doc, rank)| {
                    let id: String = cat
                        .connection()
                        .query_row("SELECT id FROM nodes WHERE rowid = ?1", [doc], |r| r.get(0))
                        .unwrap();
                    (id, *rank)
                })
                .collect();
            assert_eq!(ours, fts, "{q}");
        }
    }

    /// Ids and ranks of a top-k answer, for comparison with FTS5's.
    fn named(cat: &crate::Catalog, top: Vec<(i64, f64)>) -> Vec<(String, f64)> {
        top.into_iter()
            .map(|(doc, rank)| {
                let id: String =
                    cat.connection().query_row("SELECT id FROM nodes WHERE rowid = ?1", [doc], |r| r.get(0)).unwrap();
                (id, rank)
            })
            .collect()
    }

    #[test]
    fn phrases_and_unicode_words_are_answered_and_equal_fts5() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut cat = crate::Catalog::open(&dir.path().join("c.db")).unwrap();
        let texts = [
            ("BE-291 pump", "Spare parts of BE-291 and be 291; BE-291 again"),
            ("Q1-2026 sales", "sales by region, q1 2026 draft"),
            ("a-a-a", "a a a a b"),
            ("Café menu", "cafe prices; café 2026"),
            ("doc-29919", "Files whose names start with 'doc-29919…'"),
            ("Source folder 'eng-0090'", "Files of source folder 'eng-0090' whose names start with 'doc-04'"),
            ("eng 0090 0090 eng", "eng-0091 then 0090"),
            ("plain", "nothing here"),
        ];
        let mut nodes: Vec<NodeRow> = texts
            .iter()
            .enumerate()
            .map(|(i, (t, sm))| {
                let mut n = NodeRow::new(format!("n{i}"), "note", *t, *sm);
                if i % 2 == 0 {
                    n.tags = vec![format!("tag-{i}"), "be-291".into()];
                    n.aliases = vec![format!("Alias a-a {i}")];
                }
                n
            })
            .collect();
        cat.rebuild(nodes.clone()).unwrap();
        // Edits leave dead docs and delta rows in play.
        nodes[1].summary = "q1-2026 q1-2026 sales".into();
        cat.upsert(&nodes[1..2]).unwrap();
        let queries = [
            "BE-291",
            "be-291 pump",
            "q1-2026 sales",
            "a-a",
            "a-a-a b",
            "café",
            "doc-29919…",
            "source folder 'eng-0090' whose names",
            "'eng-0090' 0090",
            "x-y-z",
            "eng-0090 eng-0090",
        ];
        for q in queries {
            for limit in [1, 3, 25] {
                let fts = cat.ranked_fts(q, limit).unwrap();
                for strategy in [Strategy::MaxScore, Strategy::Dense] {
                    let ours = search_with(cat.connection(), q, limit, Some(strategy)).unwrap();
                    let ours = ours.unwrap_or_else(|| panic!("answered by the index: {q}"));
                    assert_eq!(named(&cat, ours), fts, "{q} limit {limit} {strategy:?}");
                }
            }
        }
    }

    #[test]
    fn both_strategies_equal_fts5_on_common_words_with_side_tables() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut cat = crate::Catalog::open(&dir.path().join("c.db")).unwrap();
        // Few words, so every one is common (the case Dense is for), and
        // repeated words, so weighted frequencies and lengths vary.
        let words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"];
        let mut seed = 0x2545_F491_u64;
        let mut text = |n: usize| {
            (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    words[((seed >> 33) % words.len() as u64) as usize]
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut nodes: Vec<NodeRow> = (0..400)
            .map(|i| {
                let (t, sm) = (text(1 + i % 4), text(3 + i % 9));
                let mut n = NodeRow::new(format!("d{}/n{i}", i / 50), "note", t, sm);
                if i % 3 == 0 {
                    n.tags = vec![text(1)];
                }
                n
            })
            .collect();
        cat.rebuild(nodes.clone()).unwrap();
        // Edits, additions and removals leave dead docs and delta rows.
        for n in nodes.iter_mut().step_by(7) {
            n.summary = text(6);
        }
        let edited: Vec<NodeRow> = nodes.iter().step_by(7).cloned().collect();
        let added: Vec<NodeRow> =
            (0..30).map(|i| NodeRow::new(format!("new/n{i}"), "note", text(2), text(5))).collect();
        cat.upsert(&edited.into_iter().chain(added).collect::<Vec<_>>()).unwrap();
        cat.remove(&["d1/n51".to_string(), "d3/n160".to_string()]).unwrap();
        assert!(meta(cat.connection(), "dead").unwrap().unwrap_or(0) > 0, "the side tables are in play");
        for q in ["alpha", "beta gamma", "alpha alpha delta", "eta theta zeta eps", "nothing", "gamma, beta alpha"] {
            for limit in [1, 10, 25, 500] {
                let fts = cat.ranked_fts(q, limit).unwrap();
                for strategy in [Strategy::MaxScore, Strategy::Dense] {
                    let ours = search_with(cat.connection(), q, limit, Some(strategy)).unwrap().unwrap();
                    assert_eq!(named(&cat, ours), fts, "{q} limit {limit} {strategy:?}");
                }
            }
        }
    }
}
