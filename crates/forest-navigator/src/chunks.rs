//! The chunk store of the RAG baselines (navigator spec §3, bench
//! `chunks.py`): per node, summary + blank line + body, split on blank
//! lines, packed while `len(buf) + len(p) + 2 ≤ 1000` chars, over-long
//! buffers hard-cut at 1000; id `<node>#<i>`, text `[<node>] <title>` +
//! newline + piece. Retrieval: the reference embeds chunks (bge-m3); with no
//! embedder here chunks are ranked by SQLite FTS5 bm25 in memory (stated
//! in the report as `retrieval: "bm25"`).

use rusqlite::{params, Connection};

use crate::protocol::tokens;

/// Characters per chunk (250 tokens × 4).
pub const CHUNK_CHARS: usize = 1000;

/// One chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// `<node>#<i>`.
    pub id: String,
    /// Node id.
    pub node: String,
    /// `[<node>] <title>\n<piece>`.
    pub text: String,
}

fn hard_cut(buf: &str, out: &mut Vec<String>) {
    let chars: Vec<char> = buf.chars().collect();
    for c in chars.chunks(CHUNK_CHARS) {
        out.push(c.iter().collect());
    }
}

/// Pack `summary\n\nbody` into pieces of ≤ 1000 chars (code points).
pub fn pack(summary: &str, body: &str) -> Vec<String> {
    let text = format!("{summary}\n\n{body}");
    let mut out = vec![];
    let mut buf = String::new();
    let len = |s: &str| s.chars().count();
    for p in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        if buf.is_empty() {
            buf = p.to_string();
        } else if len(&buf) + len(p) + 2 <= CHUNK_CHARS {
            buf.push_str("\n\n");
            buf.push_str(p);
        } else {
            hard_cut(&buf, &mut out);
            buf = p.to_string();
        }
    }
    if !buf.is_empty() {
        hard_cut(&buf, &mut out);
    }
    out
}

/// The chunks of one node.
pub fn node_chunks(node: &str, title: &str, summary: &str, body: &str) -> Vec<Chunk> {
    pack(summary, body)
        .into_iter()
        .enumerate()
        .map(|(i, p)| Chunk {
            id: format!("{node}#{i}"),
            node: node.to_string(),
            text: format!("[{node}] {title}\n{p}"),
        })
        .collect()
}

/// An in-memory FTS5 index over chunks.
pub struct ChunkIndex {
    db: Connection,
    chunks: Vec<Chunk>,
}

impl ChunkIndex {
    /// Index `chunks`.
    pub fn build(chunks: Vec<Chunk>) -> rusqlite::Result<Self> {
        let db = Connection::open_in_memory()?;
        db.execute_batch("CREATE VIRTUAL TABLE c USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');")?;
        {
            let mut st = db.prepare("INSERT INTO c(rowid, text) VALUES (?1, ?2)")?;
            for (i, c) in chunks.iter().enumerate() {
                st.execute(params![i as i64, c.text])?;
            }
        }
        Ok(ChunkIndex { db, chunks })
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// True without chunks.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The top `k` chunks for `query` (its tokens quoted and OR-ed).
    pub fn search(&self, query: &str, k: usize) -> Vec<Chunk> {
        let terms: Vec<String> = tokens(query).into_iter().map(|t| format!("\"{t}\"")).collect();
        if terms.is_empty() {
            return vec![];
        }
        let q = terms.join(" OR ");
        let run = || -> rusqlite::Result<Vec<i64>> {
            let mut st = self.db.prepare("SELECT rowid FROM c WHERE c MATCH ?1 ORDER BY bm25(c), rowid LIMIT ?2")?;
            let rows = st.query_map(params![q, k as i64], |r| r.get::<_, i64>(0))?;
            rows.collect()
        };
        run().unwrap_or_default().into_iter().filter_map(|i| self.chunks.get(i as usize).cloned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_paragraphs_and_cuts_long_ones() {
        assert_eq!(pack("S", "a\n\nb"), vec!["S\n\na\n\nb"]);
        let p = "x".repeat(600);
        let got = pack("S", &format!("{p}\n\n{p}"));
        assert_eq!(got.len(), 2, "600 + 600 + 2 > 1000 starts a new chunk");
        let long = "y".repeat(2500);
        let got = pack("", &long);
        assert_eq!(got.iter().map(|g| g.chars().count()).collect::<Vec<_>>(), vec![1000, 1000, 500]);
        let c = node_chunks("a/b", "T", "S", "body");
        assert_eq!((c[0].id.as_str(), c[0].text.as_str()), ("a/b#0", "[a/b] T\nS\n\nbody"));
    }

    #[test]
    fn fts_ranks_chunks() {
        let idx = ChunkIndex::build(vec![
            Chunk { id: "a#0".into(), node: "a".into(), text: "[a] Sensor\nThe sensor code is A-101.".into() },
            Chunk { id: "b#0".into(), node: "b".into(), text: "[b] Sales\nRevenue by region.".into() },
        ])
        .unwrap();
        assert_eq!(idx.search("what is the sensor code", 1)[0].id, "a#0");
        assert!(idx.search("???", 3).is_empty());
        assert_eq!(idx.len(), 2);
    }
}
