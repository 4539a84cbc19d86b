//! `sniff` (vine spec §2.7): literal search over node bodies only — the
//! complement of `locate`, which never reads a body.

use forest_catalog::pyjson::round4;
use unicode_normalization::UnicodeNormalization;

use crate::answers::{Match, SniffHit, Sniffed, WindowTail};
use crate::args::SniffArgs;
use crate::budget::{shrink_items, Dropped};
use crate::engine::{py_repr, Vine, ALPHA};
use crate::error::{VResult, VineError};
use crate::read::check_lang;
use crate::window;

/// Budget of a sniff payload.
pub const SNIFF_BUDGET: usize = 800;
/// Terms per call.
pub const MAX_TERMS: usize = 8;

/// Per character: first code point of its NFD form, lowercased (one char
/// per char, so positions in the folded text map back to the original).
pub fn fold(s: &str) -> Vec<char> {
    s.chars()
        .map(|c| {
            let base = c.nfd().next().unwrap_or(c);
            base.to_lowercase().next().unwrap_or(base)
        })
        .collect()
}

/// Python `str.splitlines()` (no keepends).
pub fn splitlines(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let brk = matches!(
            c,
            '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        );
        if brk {
            out.push(&s[start..i]);
            let mut next = i + c.len_utf8();
            if c == '\r' {
                if let Some((j, '\n')) = it.peek().copied() {
                    it.next();
                    next = j + 1;
                }
            }
            start = next;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

fn find(hay: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

/// One matching line: `(line number, section, match position, text)`.
pub type MatchRecord = (usize, Option<String>, usize, String);

/// Records of matching lines, and the number of terms hit.
pub fn scan_body(body: &str, terms: &[Vec<char>]) -> (Vec<MatchRecord>, usize) {
    let mut section: Option<String> = None;
    let mut hit = vec![false; terms.len()];
    let mut out = vec![];
    for (i, line) in splitlines(body).into_iter().enumerate() {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(char::is_whitespace) && (2..=3).contains(&hashes) {
            section = Some(line[hashes..].trim().to_string());
        }
        let folded = fold(line);
        let mut pos: Option<usize> = None;
        for (t, term) in terms.iter().enumerate() {
            if let Some(p) = find(&folded, term) {
                hit[t] = true;
                pos = Some(pos.map_or(p, |q: usize| q.min(p)));
            }
        }
        if let Some(p) = pos {
            out.push((i + 1, section.clone(), p, line.to_string()));
        }
    }
    (out, hit.iter().filter(|h| **h).count())
}

/// A ≤100-char snippet around `pos`.
pub fn snippet(line: &str, pos: usize) -> String {
    let t: Vec<char> = line.trim_end().chars().collect();
    if t.len() <= 100 {
        return t.iter().collect();
    }
    let start = pos.saturating_sub(33);
    let end = (start + 100).min(t.len());
    let start = end.saturating_sub(100);
    let mut s: String = t[start..end].iter().collect::<String>().trim().to_string();
    if start > 0 {
        s.insert(0, '…');
    }
    if end < t.len() {
        s.push('…');
    }
    s
}

/// `(id, type, title, trail, body_tokens)` of a catalog row.
type Row = forest_catalog::BodyCandidate;

/// The terms folded for matching: 1..=8 of them, each of 2 characters
/// or more once folded.
fn fold_terms(terms: &[String]) -> VResult<Vec<Vec<char>>> {
    if terms.is_empty() || terms.len() > MAX_TERMS {
        return Err(VineError::schema("terms must be 1..8 literal strings"));
    }
    let mut folded = vec![];
    for t in terms {
        let f: Vec<char> = fold(t.trim());
        let f: Vec<char> = f.iter().collect::<String>().trim().chars().collect();
        if f.len() < 2 {
            return Err(VineError::schema(format!("term too short after normalization: {}", py_repr(t))));
        }
        folded.push(f);
    }
    Ok(folded)
}

impl Vine {
    /// `sniff(terms, ...)`: literal body search; index hits demoted.
    pub fn sniff(&mut self, a: &SniffArgs) -> VResult<Sniffed> {
        let folded = fold_terms(&a.terms)?;
        let k = a.k.unwrap_or(5).clamp(1, 20) as usize;
        let scope = self.scope(a.scope.as_deref())?;
        let win = window::parse(a.since.as_deref(), a.until.as_deref(), a.date_field.as_deref())?;
        let lang = check_lang(a.lang.as_deref())?;
        let rows = self.sniff_rows(win.as_ref(), a.type_filter.as_deref())?;
        let mut scanned = 0usize;
        let mut hits = vec![];
        for (id, ty, title, trail, bt) in rows {
            self.check_deadline("sniff")?;
            if !scope.admits(&id) {
                continue;
            }
            let Ok(node) = self.read_node(&id) else { continue };
            if let Some(l) = &lang {
                if node.get_str("lang").as_deref() != Some(l.as_str()) {
                    continue;
                }
            }
            let Ok(body) = self.resolve_body(&id, &node) else { continue };
            scanned += 1;
            let (recs, terms_hit) = scan_body(&body, &folded);
            if recs.is_empty() {
                continue;
            }
            // Keep the count, never the matched lines (a forest-wide sniff
            // for "the" would hold the corpus); the snippets of the nodes
            // returned are taken again below.
            hits.push((id, ty, title, trail, bt, recs.len(), terms_hit));
        }
        let ids: Vec<String> = hits.iter().map(|h| h.0.clone()).collect();
        let heat = self.heat_of(&ids)?;
        let n_terms = folded.len() as f64;
        let mut scored: Vec<(bool, f64, usize, String, SniffHit)> = vec![];
        for (id, ty, title, trail, bt, mc, terms_hit) in hits {
            let h = heat.get(&id).copied().unwrap_or(0.0);
            let score = round4((terms_hit as f64 / n_terms) * (1.0 + 0.15 * (mc as f64).log2()) * (1.0 + ALPHA * h));
            let is_index = forest_model::ids::is_branch_id(&id);
            let item = SniffHit {
                id: id.clone(),
                node_type: ty,
                title,
                trail: trail.as_deref().and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default(),
                score,
                heat: h,
                body_tokens: bt,
                match_count: mc,
                truncated_matches: mc > 3,
                matches: vec![], // filled for the nodes returned
                demoted: is_index,
            };
            scored.push((is_index, score, mc, id, item));
        }
        scored.sort_by(|x, y| x.0.cmp(&y.0).then(y.1.total_cmp(&x.1)).then(y.2.cmp(&x.2)).then(x.3.cmp(&y.3)));
        let truncated = scored.len() > k;
        let mut results = Vec::with_capacity(k.min(scored.len()));
        for (_, _, _, id, mut item) in scored.into_iter().take(k) {
            let body = self.read_node(&id).and_then(|node| self.resolve_body(&id, &node)).unwrap_or_default();
            item.matches = scan_body(&body, &folded)
                .0
                .iter()
                .take(3)
                .map(|(line, sec, pos, text)| Match { section: sec.clone(), line: *line, snippet: snippet(text, *pos) })
                .collect();
            results.push(item);
        }
        let mut out = Sniffed {
            results,
            scanned_nodes: scanned,
            truncated,
            dropped: Dropped::default(),
            tail: WindowTail::default(),
        };
        shrink_items(&mut out, SNIFF_BUDGET, |o| (&mut o.results, &mut o.truncated, &mut o.dropped), |h| h.id.clone());
        out.tail = self.window_tail(win, out.results.is_empty(), "No body matched")?;
        Ok(out)
    }

    /// The catalog rows a sniff reads, in id order: inside the window, of
    /// the type asked for.
    fn sniff_rows(&self, win: Option<&window::Window>, type_filter: Option<&str>) -> VResult<Vec<Row>> {
        Ok(self.catalog.body_candidates(win, type_filter)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_and_lines() {
        assert_eq!(fold("Ação"), "acao".chars().collect::<Vec<_>>());
        assert_eq!(splitlines("a\r\nb\rc\u{2028}d\n"), vec!["a", "b", "c", "d"]);
        let (recs, hit) = scan_body("# T\n## Mixer-lang\nuse @delega here\n", &[fold("@DELEGA"), fold("zz")]);
        assert_eq!(hit, 1);
        assert_eq!(recs[0].0, 3);
        assert_eq!(recs[0].1.as_deref(), Some("Mixer-lang"));
        let long = format!("{}needle{}", "a".repeat(200), "b".repeat(200));
        let s = snippet(&long, 200);
        assert!(s.contains("needle") && s.starts_with('…') && s.ends_with('…'));
    }
}
