//! `harvest` (vine spec §2.8): one-shot evidence — locate and sniff fused
//! by reciprocal rank, superseded notes left out, bodies or matched
//! sections attached, all inside 4000 tokens. Composite: the inner
//! locate/sniff/pick calls do the work.

use std::collections::{BTreeSet, HashMap};

use crate::answers::{Content, HarvestItem, Harvested, Match, PickAnswer, SniffHit, Superseded};
use crate::args::{HarvestArgs, IdArg, LocateArgs, SectionArg, SniffArgs};
use crate::budget::{shrink_items, Dropped};
use crate::engine::Vine;
use crate::error::{VResult, VineError};
use crate::sniff::fold;

/// Budget of a harvest payload.
pub const HARVEST_BUDGET: usize = 4000;
const WHOLE_BODY: usize = 1200;
const NOTHING_MATCHED: &str = "Nothing matched the scent or the bodies. The terms were derived from the question: pass terms=[...] or narrow the question.";
const STOPWORDS: [&str; 28] = [
    "qual", "quais", "como", "para", "com", "das", "dos", "uma", "que", "quando", "onde", "quem", "sobre", "foram",
    "pela", "pelo", "what", "which", "where", "when", "who", "does", "with", "from", "this", "that", "have", "about",
];

/// Terms from a question: code-shaped tokens first, then words ≥4 chars,
/// stopwords dropped, at most 8, original spelling kept.
pub fn derive_terms(query: &str) -> Vec<String> {
    let mut code = vec![];
    let mut plain = vec![];
    let mut seen = BTreeSet::new();
    let tokens = query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '/'));
    for t in tokens {
        let t = t.trim_matches(['.', '/', '-']);
        if t.chars().count() < 2 {
            continue;
        }
        let f: String = fold(t).into_iter().collect();
        if STOPWORDS.contains(&f.as_str()) || !seen.insert(f) {
            continue;
        }
        let letters: Vec<char> = t.chars().filter(|c| c.is_alphabetic()).collect();
        let is_code = t.chars().any(|c| c.is_ascii_digit())
            || (!letters.is_empty() && letters.iter().all(|c| c.is_uppercase()))
            || t.contains(['-', '_', '.', '/']);
        if is_code {
            code.push(t.to_string());
        } else if t.chars().count() >= 4 {
            plain.push(t.to_string());
        }
    }
    code.into_iter().chain(plain).take(8).collect()
}

fn cap() -> VResult<i64> {
    match std::env::var("MONKEYLLM_HARVEST_MAX_K") {
        Err(_) => Ok(5),
        Ok(v) if v.trim().is_empty() => Ok(5),
        Ok(v) => match v.trim().parse::<i64>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(VineError::schema(format!("MONKEYLLM_HARVEST_MAX_K must be an integer >= 1, got '{v}'"))),
        },
    }
}

/// How one harvested node was found.
struct Found<'a> {
    by_locate: bool,
    sniffed: Option<&'a SniffHit>,
    score: f64,
    superseded_by: Option<&'a Vec<String>>,
}

impl Vine {
    /// `harvest(query, terms, k, ...)`.
    pub fn harvest(&mut self, a: &HarvestArgs) -> VResult<Harvested> {
        let k = a.k.unwrap_or(3).clamp(1, cap()?) as usize;
        let loc = self.locate(&LocateArgs {
            query: a.query.clone(),
            k: Some(2 * k as i64),
            since: a.since.clone(),
            until: a.until.clone(),
            date_field: a.date_field.clone(),
            lang: a.lang.clone(),
            ..Default::default()
        })?;
        let terms = a.terms.clone().filter(|t| !t.is_empty()).unwrap_or_else(|| derive_terms(&a.query));
        let sn = if terms.is_empty() {
            None
        } else {
            Some(self.sniff(&SniffArgs {
                terms: terms.clone(),
                k: Some(2 * k as i64),
                since: a.since.clone(),
                until: a.until.clone(),
                date_field: a.date_field.clone(),
                lang: a.lang.clone(),
                ..Default::default()
            })?)
        };
        let lres = &loc.results;
        let sres: &[SniffHit] = sn.as_ref().map_or(&[], |s| &s.results);
        let lids: Vec<&str> = lres.iter().map(|x| x.id.as_str()).collect();
        let sids: Vec<&str> = sres.iter().map(|x| x.id.as_str()).collect();
        let (ids, score) = self.fused(&lids, &sids);
        // Superseded targets (C.6c.4), by their live successors.
        let successors = self.successors(&ids)?;
        let mut taken = vec![];
        let mut excluded = vec![];
        for id in &ids {
            if taken.len() == k {
                break;
            }
            match successors.get(id) {
                Some(by) if !a.include_superseded => {
                    let mut by = by.clone();
                    by.sort();
                    excluded.push(Superseded { id: id.clone(), by });
                }
                _ => taken.push(id.clone()),
            }
        }
        let mut results = vec![];
        for id in &taken {
            self.check_deadline("harvest")?;
            let found = Found {
                by_locate: lids.contains(&id.as_str()),
                sniffed: sres.iter().find(|x| x.id == *id),
                score: score[id],
                superseded_by: successors.get(id),
            };
            if let Some(item) = self.harvest_item(id, &found, &terms)? {
                results.push(item);
            }
        }
        let sn_tail = sn.as_ref().map(|s| &s.tail);
        let mut out = Harvested {
            query: a.query.clone(),
            terms,
            results,
            truncated: false,
            superseded_excluded: (!excluded.is_empty()).then_some(excluded),
            window: loc.tail.window.clone().or_else(|| sn_tail.and_then(|t| t.window.clone())),
            undated_excluded: loc.tail.undated_excluded.or_else(|| sn_tail.and_then(|t| t.undated_excluded)),
            dropped: Dropped::default(),
            searched: None,
            hint: None,
        };
        shrink_items(
            &mut out,
            HARVEST_BUDGET,
            |o| (&mut o.results, &mut o.truncated, &mut o.dropped),
            |i| i.id.clone(),
        );
        if out.results.is_empty() {
            let scanned = sn.as_ref().map(|s| s.scanned_nodes as i64);
            out.searched = Some(loc.tail.searched.or(scanned).unwrap_or(0));
            out.hint = Some(loc.tail.hint.clone().unwrap_or_else(|| NOTHING_MATCHED.to_string()));
        }
        Ok(out)
    }

    /// Locate's and sniff's hits fused by reciprocal rank (k = 60), best
    /// first; ties to the newer `updated`, then `created`, then the id.
    fn fused(&self, lres: &[&str], sres: &[&str]) -> (Vec<String>, HashMap<String, f64>) {
        let mut score: HashMap<String, f64> = HashMap::new();
        for list in [lres, sres] {
            for (rank, id) in list.iter().enumerate() {
                *score.entry(id.to_string()).or_default() += 1.0 / (60.0 + rank as f64 + 1.0);
            }
        }
        let mut ids: Vec<String> = score.keys().cloned().collect();
        let date = |v: &Vine, id: &str| {
            v.catalog.get(id).ok().flatten().map(|r| (r.updated.unwrap_or_default(), r.created.unwrap_or_default()))
        };
        let mut dates: HashMap<String, (String, String)> = HashMap::new();
        for id in &ids {
            dates.insert(id.clone(), date(self, id).unwrap_or_default());
        }
        ids.sort_by(|x, y| {
            score[y]
                .total_cmp(&score[x])
                .then(dates[y].0.cmp(&dates[x].0))
                .then(dates[y].1.cmp(&dates[x].1))
                .then(x.cmp(y))
        });
        (ids, score)
    }

    /// The nodes that supersede each of `ids` (only those superseded).
    fn successors(&self, ids: &[String]) -> VResult<HashMap<String, Vec<String>>> {
        let mut successors: HashMap<String, Vec<String>> = HashMap::new();
        for id in ids {
            for e in self.catalog.edges_in(id)? {
                if e.rel == "supersedes" {
                    successors.entry(id.clone()).or_default().push(e.src);
                }
            }
        }
        Ok(successors)
    }

    /// One result: the catalog row, how it was found, its matches
    /// (refined per term) and its content. `None` when the row is gone.
    fn harvest_item(&mut self, id: &str, found: &Found<'_>, terms: &[String]) -> VResult<Option<HarvestItem>> {
        let Some(row) = self.catalog.get(id)? else { return Ok(None) };
        let s = found.sniffed;
        let mut found_by = vec![];
        if found.by_locate {
            found_by.push("locate");
        }
        if s.is_some() {
            found_by.push("sniff");
        }
        let mut matches: Vec<Match> = s.map(|x| x.matches.clone()).unwrap_or_default();
        if s.is_some() && !forest_model::ids::is_branch_id(id) && !terms.is_empty() {
            matches = self.refined_matches(id, terms);
        }
        let content = self.harvest_content(id, &matches);
        let superseded_by = found.superseded_by.map(|by| {
            let mut by = by.clone();
            by.sort();
            by
        });
        Ok(Some(HarvestItem {
            id: id.to_string(),
            title: row.title,
            node_type: row.node_type,
            trail: row.trail,
            summary: row.summary,
            score: forest_catalog::pyjson::round4(found.score),
            found_by,
            body_tokens: row.body_tokens,
            matches,
            content,
            created: row.created.filter(|c| !c.is_empty()),
            updated: row.updated.filter(|u| !u.is_empty()),
            superseded_by,
        }))
    }

    fn refined_matches(&mut self, id: &str, terms: &[String]) -> Vec<Match> {
        let mut groups: Vec<(usize, Vec<Match>)> = vec![];
        for t in terms {
            let Ok(r) = self.sniff(&SniffArgs {
                terms: vec![t.clone()],
                scope: Some(id.to_string()),
                k: Some(1),
                ..Default::default()
            }) else {
                continue;
            };
            if let Some(hit) = r.results.into_iter().next() {
                groups.push((hit.match_count, hit.matches));
            }
        }
        groups.sort_by_key(|g| g.0);
        let mut seen = BTreeSet::new();
        let mut out = vec![];
        for (_, ms) in groups {
            for m in ms {
                if seen.insert((m.section.clone(), m.line)) {
                    out.push(m);
                }
            }
        }
        out.truncate(5);
        out
    }

    fn harvest_content(&mut self, id: &str, matches: &[Match]) -> Vec<Content> {
        let Ok(whole) = self.pick(&IdArg::One(id.to_string()), None, None) else { return vec![] };
        match &whole {
            PickAnswer::Body(b) if b.body_tokens <= WHOLE_BODY => {
                return vec![Content::Whole { section: None, body: b.body.clone(), body_tokens: b.body_tokens }];
            }
            _ => {}
        }
        let mut secs: Vec<String> = vec![];
        for m in matches {
            if let Some(s) = &m.section {
                if !secs.iter().any(|x| x == s) {
                    secs.push(s.clone());
                }
            }
            if secs.len() == 2 {
                break;
            }
        }
        if secs.is_empty() {
            let (outline, body_tokens, hint) = match &whole {
                PickAnswer::Page(p) => (p.outline().cloned(), p.body_tokens, p.hint().cloned()),
                PickAnswer::Body(b) => (None, b.body_tokens, None),
                _ => (None, 0, None),
            };
            return vec![Content::Outline { section: None, outline, body_tokens, hint }];
        }
        let mut out = vec![];
        for s in secs {
            if let Ok(p) = self.pick(&IdArg::One(id.to_string()), Some(&SectionArg::One(s.clone())), None) {
                let (body, body_tokens) = match p {
                    PickAnswer::Section(x) => (Some(x.body), Some(x.body_tokens)),
                    PickAnswer::Body(x) => (Some(x.body), Some(x.body_tokens)),
                    PickAnswer::Page(x) => (Some(x.body), Some(x.body_tokens)),
                    _ => (None, None),
                };
                out.push(Content::Section { section: s, body, body_tokens });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_like_the_reference() {
        let t = derive_terms("what was seed 1045 discarded for?");
        assert!(t.contains(&"1045".to_string()) && t.contains(&"seed".to_string()));
        assert!(!t.iter().any(|x| x == "what"));
        let t = derive_terms("How does the 421 MCP fix RAG p95 x-api-key JWT SSO do for and");
        assert_eq!(&t[..2], &["421".to_string(), "MCP".to_string()]);
        assert!(!t.iter().any(|x| x == "fix" || x == "the" || x == "and"));
        assert!(t.len() <= 8);
    }
}
