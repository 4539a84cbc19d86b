//! `harvest` (vine spec §2.8): one-shot evidence — locate and sniff fused
//! by reciprocal rank, superseded notes left out, bodies or matched
//! sections attached, all inside 4000 tokens. Composite: the inner
//! locate/sniff/pick calls do the work.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Map, Value};

use crate::args::{HarvestArgs, IdArg, LocateArgs, SectionArg, SniffArgs};
use crate::budget::{id_of, shrink_list};
use crate::engine::Vine;
use crate::error::{VResult, VineError};
use crate::sniff::fold;

/// Budget of a harvest payload.
pub const HARVEST_BUDGET: usize = 4000;
const WHOLE_BODY: usize = 1200;
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
    sniffed: Option<&'a Value>,
    score: f64,
    superseded_by: Option<&'a Vec<String>>,
}

impl Vine {
    /// `harvest(query, terms, k, ...)`.
    pub fn harvest(&mut self, a: &HarvestArgs) -> VResult<Value> {
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
            json!({"results": []})
        } else {
            self.sniff(&SniffArgs {
                terms: terms.clone(),
                k: Some(2 * k as i64),
                since: a.since.clone(),
                until: a.until.clone(),
                date_field: a.date_field.clone(),
                lang: a.lang.clone(),
                ..Default::default()
            })?
        };
        let empty = vec![];
        let lres = loc["results"].as_array().unwrap_or(&empty);
        let sres = sn["results"].as_array().unwrap_or(&empty);
        let (ids, score) = self.fused(lres, sres);
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
                    excluded.push(json!({"id": id, "by": by}));
                }
                _ => taken.push(id.clone()),
            }
        }
        let mut results = vec![];
        for id in &taken {
            self.check_deadline("harvest")?;
            let found = Found {
                by_locate: lres.iter().any(|x| x["id"].as_str() == Some(id)),
                sniffed: sres.iter().find(|x| x["id"].as_str() == Some(id)),
                score: score[id],
                superseded_by: successors.get(id),
            };
            if let Some(item) = self.harvest_item(id, &found, &terms)? {
                results.push(item);
            }
        }
        let mut out = Map::new();
        out.insert("query".into(), json!(a.query));
        out.insert("terms".into(), json!(terms));
        out.insert("results".into(), Value::Array(results));
        out.insert("truncated".into(), json!(false));
        if !excluded.is_empty() {
            out.insert("superseded_excluded".into(), Value::Array(excluded));
        }
        for key in ["window", "undated_excluded"] {
            if let Some(v) = loc.get(key).or_else(|| sn.get(key)) {
                out.insert(key.into(), v.clone());
            }
        }
        shrink_list(&mut out, "results", HARVEST_BUDGET, id_of);
        if out["results"].as_array().is_some_and(|r| r.is_empty()) {
            let searched =
                loc.get("searched").cloned().or_else(|| sn.get("scanned_nodes").cloned()).unwrap_or(json!(0));
            out.insert("searched".into(), searched);
            let hint = loc.get("hint").cloned().unwrap_or_else(|| json!("Nothing matched the scent or the bodies. The terms were derived from the question: pass terms=[...] or narrow the question."));
            out.insert("hint".into(), hint);
        }
        Ok(Value::Object(out))
    }

    /// Locate's and sniff's hits fused by reciprocal rank (k = 60), best
    /// first; ties to the newer `updated`, then `created`, then the id.
    fn fused(&self, lres: &[Value], sres: &[Value]) -> (Vec<String>, HashMap<String, f64>) {
        let mut score: HashMap<String, f64> = HashMap::new();
        for list in [lres, sres] {
            for (rank, item) in list.iter().enumerate() {
                if let Some(id) = item["id"].as_str() {
                    *score.entry(id.to_string()).or_default() += 1.0 / (60.0 + rank as f64 + 1.0);
                }
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
    fn harvest_item(&mut self, id: &str, found: &Found<'_>, terms: &[String]) -> VResult<Option<Value>> {
        let Some(row) = self.catalog.get(id)? else { return Ok(None) };
        let s = found.sniffed;
        let mut found_by = vec![];
        if found.by_locate {
            found_by.push("locate");
        }
        if s.is_some() {
            found_by.push("sniff");
        }
        let mut matches: Vec<Value> = s.and_then(|x| x["matches"].as_array().cloned()).unwrap_or_default();
        if s.is_some() && !forest_model::ids::is_branch_id(id) && !terms.is_empty() {
            matches = self.refined_matches(id, terms).unwrap_or(matches);
        }
        let content = self.harvest_content(id, &matches);
        let mut item = Map::new();
        item.insert("id".into(), json!(id));
        item.insert("title".into(), json!(row.title));
        item.insert("type".into(), json!(row.node_type));
        item.insert("trail".into(), json!(row.trail));
        item.insert("summary".into(), json!(row.summary));
        item.insert("score".into(), json!(forest_catalog::pyjson::round4(found.score)));
        item.insert("found_by".into(), json!(found_by));
        item.insert("body_tokens".into(), json!(row.body_tokens));
        item.insert("matches".into(), Value::Array(matches));
        item.insert("content".into(), content);
        if let Some(c) = row.created.filter(|c| !c.is_empty()) {
            item.insert("created".into(), json!(c));
        }
        if let Some(u) = row.updated.filter(|u| !u.is_empty()) {
            item.insert("updated".into(), json!(u));
        }
        if let Some(by) = found.superseded_by {
            let mut by = by.clone();
            by.sort();
            item.insert("superseded_by".into(), json!(by));
        }
        Ok(Some(Value::Object(item)))
    }

    fn refined_matches(&mut self, id: &str, terms: &[String]) -> VResult<Vec<Value>> {
        let mut groups: Vec<(i64, Vec<Value>)> = vec![];
        for t in terms {
            let Ok(r) = self.sniff(&SniffArgs {
                terms: vec![t.clone()],
                scope: Some(id.to_string()),
                k: Some(1),
                ..Default::default()
            }) else {
                continue;
            };
            if let Some(hit) = r["results"].as_array().and_then(|a| a.first()) {
                groups.push((
                    hit["match_count"].as_i64().unwrap_or(0),
                    hit["matches"].as_array().cloned().unwrap_or_default(),
                ));
            }
        }
        groups.sort_by_key(|g| g.0);
        let mut seen = BTreeSet::new();
        let mut out = vec![];
        for (_, ms) in groups {
            for m in ms {
                let key = (m["section"].to_string(), m["line"].to_string());
                if seen.insert(key) {
                    out.push(m);
                }
            }
        }
        out.truncate(5);
        Ok(out)
    }

    fn harvest_content(&mut self, id: &str, matches: &[Value]) -> Value {
        let Ok(whole) = self.pick(&IdArg::One(id.to_string()), None, None) else { return json!([]) };
        let bt = whole["body_tokens"].as_u64().unwrap_or(0) as usize;
        if whole["truncated"] == json!(false)
            && bt <= WHOLE_BODY
            && whole.get("body").is_some()
            && whole.get("total").is_none()
        {
            return json!([{"section": null, "body": whole["body"], "body_tokens": bt}]);
        }
        let mut secs: Vec<String> = vec![];
        for m in matches {
            if let Some(s) = m["section"].as_str() {
                if !secs.iter().any(|x| x == s) {
                    secs.push(s.to_string());
                }
            }
            if secs.len() == 2 {
                break;
            }
        }
        if secs.is_empty() {
            return json!([{"section": null, "outline": whole.get("outline"), "body_tokens": bt, "hint": whole.get("hint")}]);
        }
        let mut out = vec![];
        for s in secs {
            if let Ok(p) = self.pick(&IdArg::One(id.to_string()), Some(&SectionArg::One(s.clone())), None) {
                out.push(json!({"section": s, "body": p["body"], "body_tokens": p["body_tokens"]}));
            }
        }
        Value::Array(out)
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
