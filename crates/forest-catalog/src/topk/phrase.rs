//! Query words the posting blobs cannot answer alone: a word that
//! tokenizes to several tokens (`BE-291`, `'eng-0090'`, `doc-29919…`) is an
//! FTS5 *phrase*, scored by how often the tokens stand next to each other.
//! Its rows come from FTS5's own phrase match (so which rows match is
//! FTS5's answer), and each row's per-column phrase count is taken from the
//! row's tokens here; the result is a posting list like a term's, so the
//! query's score keeps FTS5's arithmetic. Non-ASCII words are tokenized by
//! FTS5's tokenizer itself.
//!
//! In: a sanitized query word and the FTS rows it matches. Out: phrases
//! ([`QueryPhrase`]) and their postings, or `None` when FTS5 must answer
//! (a phrase in too many rows to count quickly, or a row whose count here
//! disagrees with FTS5's match). Reads `nodes_fts`; writes nothing.

use rusqlite::Connection;

use super::{ascii_tokens, Posting, Tokenizer, WEIGHTS};
use crate::Result;

/// One phrase of a query, as FTS5 reads a double-quoted whitespace word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QueryPhrase {
    /// One token: answered from its posting blob.
    Term(String),
    /// Several tokens that must stand next to each other in one column.
    Tokens(Vec<String>),
}

impl QueryPhrase {
    /// The key under which equal phrases share one posting list.
    pub(crate) fn key(&self) -> String {
        match self {
            QueryPhrase::Term(t) => t.clone(),
            // A space never occurs inside a token.
            QueryPhrase::Tokens(ts) => ts.join(" "),
        }
    }
}

/// Rows past which a phrase is left to FTS5: counting a row here costs a
/// re-tokenization (~1 µs), so a phrase in 100,000 rows would cost more
/// than FTS5's own evaluation of the whole query.
pub(crate) const PHRASE_MAX_ROWS: usize = 20_000;

/// The phrases of a query: one per whitespace word that has tokens (a word
/// without any matches nothing and adds nothing to bm25, so it drops).
pub(crate) fn query_phrases(tok: &mut Tokenizer, query: &str) -> Result<Vec<QueryPhrase>> {
    let mut out = vec![];
    for word in query.split_whitespace() {
        let mut toks = tok.word_tokens(word)?;
        match toks.len() {
            0 => {}
            1 => out.extend(toks.pop().map(QueryPhrase::Term)),
            _ => out.push(QueryPhrase::Tokens(toks)),
        }
    }
    Ok(out)
}

/// Postings of a multi-token phrase: `(rowid, weighted phrase count, row
/// length)` of every FTS row FTS5 says holds it, by rowid; `None` when
/// FTS5 must answer (more than [`PHRASE_MAX_ROWS`] rows, or a row where
/// no adjacent run is found here although FTS5 matched it).
pub(crate) fn phrase_postings(
    conn: &Connection,
    tok: &mut Tokenizer,
    tokens: &[String],
) -> Result<Option<Vec<Posting>>> {
    // The same quoting `locate` gives FTS5: one double-quoted string.
    let expr = format!("\"{}\"", tokens.join(" "));
    let mut st = conn.prepare_cached(
        "SELECT rowid, title, aliases, tags, summary FROM nodes_fts WHERE nodes_fts MATCH ?1 ORDER BY rowid LIMIT ?2",
    )?;
    let mut rows = st.query(rusqlite::params![expr, (PHRASE_MAX_ROWS + 1) as i64])?;
    let mut out = vec![];
    while let Some(r) = rows.next()? {
        if out.len() == PHRASE_MAX_ROWS {
            return Ok(None);
        }
        let doc: i64 = r.get(0)?;
        let cols: [String; 4] = [
            r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            r.get::<_, Option<String>>(3)?.unwrap_or_default(),
            r.get::<_, Option<String>>(4)?.unwrap_or_default(),
        ];
        let col_tokens = tok.row_tokens(&cols)?;
        let mut wf = 0u32;
        let mut len = 0u32;
        for (c, toks) in col_tokens.iter().enumerate() {
            len += toks.len() as u32;
            wf += WEIGHTS[c] * count_runs(toks, tokens);
        }
        if wf == 0 {
            return Ok(None);
        }
        out.push(Posting { doc, wf, dl: len });
    }
    Ok(Some(out))
}

/// Start positions where `phrase` stands in `toks` (overlapping runs
/// count, as FTS5 counts phrase instances).
fn count_runs(toks: &[String], phrase: &[String]) -> u32 {
    if phrase.is_empty() || toks.len() < phrase.len() {
        return 0;
    }
    toks.windows(phrase.len()).filter(|w| w.iter().zip(phrase).all(|(a, b)| a == b)).count() as u32
}

impl Tokenizer {
    /// The tokens of one query word, as FTS5 tokenizes a quoted string.
    pub(crate) fn word_tokens(&mut self, word: &str) -> Result<Vec<String>> {
        let mut out = vec![];
        if word.is_ascii() || self.ascii_exact(&[word])? {
            ascii_tokens(word, |t| out.push(t.to_string()));
            return Ok(out);
        }
        let [title, ..] = self.fts_row_tokens(&[word.to_string(), String::new(), String::new(), String::new()])?;
        Ok(title)
    }

    /// Each column's tokens in order.
    pub(crate) fn row_tokens(&mut self, cols: &[String; 4]) -> Result<[Vec<String>; 4]> {
        if cols.iter().all(|c| c.is_ascii()) || self.ascii_exact(&cols.each_ref().map(String::as_str))? {
            let mut out: [Vec<String>; 4] = Default::default();
            for (c, text) in cols.iter().enumerate() {
                ascii_tokens(text, |t| out[c].push(t.to_string()));
            }
            return Ok(out);
        }
        self.fts_row_tokens(cols)
    }

    /// Each column's tokens in order, from FTS5's tokenizer.
    pub(super) fn fts_row_tokens(&mut self, cols: &[String; 4]) -> Result<[Vec<String>; 4]> {
        let conn = self.fts_conn()?;
        conn.execute(
            "INSERT INTO tok (rowid, title, aliases, tags, summary) VALUES (1, ?1, ?2, ?3, ?4)",
            rusqlite::params![cols[0], cols[1], cols[2], cols[3]],
        )?;
        let mut out: [Vec<(i64, String)>; 4] = Default::default();
        {
            let mut st = conn.prepare_cached("SELECT term, col, offset FROM tokv")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let term: String = r.get(0)?;
                let col: String = r.get(1)?;
                let at: i64 = r.get(2)?;
                let c = match col.as_str() {
                    "title" => 0,
                    "aliases" => 1,
                    "tags" => 2,
                    _ => 3,
                };
                out[c].push((at, term));
            }
        }
        conn.execute("DELETE FROM tok", [])?;
        Ok(out.map(|mut v| {
            v.sort();
            v.into_iter().map(|(_, t)| t).collect()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn words_become_terms_and_phrases_like_fts5_reads_them() {
        let mut tok = Tokenizer::new();
        let q = query_phrases(&mut tok, "Sales, BE-291 'eng-0090' café doc-29919… - …").unwrap();
        assert_eq!(
            q,
            vec![
                QueryPhrase::Term("sales".into()),
                QueryPhrase::Tokens(s(&["be", "291"])),
                QueryPhrase::Tokens(s(&["eng", "0090"])),
                QueryPhrase::Term("cafe".into()),
                QueryPhrase::Tokens(s(&["doc", "29919"])),
            ]
        );
    }

    #[test]
    fn runs_are_counted_at_every_start() {
        assert_eq!(count_runs(&s(&["a", "a", "a"]), &s(&["a", "a"])), 2);
        assert_eq!(count_runs(&s(&["a", "b", "x", "a", "b"]), &s(&["a", "b"])), 2);
        assert_eq!(count_runs(&s(&["a"]), &s(&["a", "b"])), 0);
    }

    #[test]
    fn ascii_and_fts5_row_tokens_agree() {
        let mut tok = Tokenizer::new();
        let cols = [
            "Q1-2026 report".to_string(),
            "alias x".to_string(),
            "tag-one".to_string(),
            "Sales by region.".to_string(),
        ];
        assert_eq!(tok.row_tokens(&cols).unwrap(), tok.fts_row_tokens(&cols).unwrap());
    }

    /// Every character of the first planes, between letters and at a
    /// column's ends: the ASCII path (when taken) gives FTS5's own tokens,
    /// so rows with `…`, dashes or quotes keep FTS5's exact arithmetic.
    #[test]
    fn non_ascii_separators_take_the_ascii_path_exactly() {
        let mut tok = Tokenizer::new();
        let (mut ascii, mut fts) = (0, 0);
        for ch in (0x80u32..0x3000).chain(0xFE00..0xFFFE).filter_map(char::from_u32) {
            let cols = [format!("eng 0082{ch} d{ch}x"), format!("{ch}"), String::new(), format!("A{ch}b c")];
            let want = tok.fts_row_tokens(&cols).unwrap();
            if tok.ascii_exact(&cols.each_ref().map(String::as_str)).unwrap() {
                ascii += 1;
            } else {
                fts += 1;
            }
            assert_eq!(tok.row_tokens(&cols).unwrap(), want, "U+{:04X}", ch as u32);
            let [title, ..] = &want;
            assert_eq!(tok.word_tokens(&cols[0]).unwrap(), *title, "U+{:04X}", ch as u32);
        }
        // Both paths were taken: punctuation splits, letters do not.
        assert!(ascii > 500 && fts > 5000, "{ascii} {fts}");
        assert!(tok.ascii_exact(&["eng 0082: d…"]).unwrap());
        assert!(!tok.ascii_exact(&["café"]).unwrap());
    }
}
