//! Token sizing and the list shrink of the typed answers (vine spec §1.3).
//!
//! Sizes are estimated over the text Python's `json.dumps(x,
//! ensure_ascii=False)` would produce (`forest_catalog::pyjson`), so the
//! budgets agree with the reference engine's. Every cut is explicit: the
//! payload's `truncated` flag is set and the dropped items are named.

use forest_catalog::pyjson::dumps;
use forest_model::tokens::estimate_tokens;
use serde_json::Value;

/// Budget of scan, coverage, history and calendar answers.
pub const LIST_BUDGET: usize = 800;

/// Estimated tokens of a JSON value in its Python textual form.
pub fn estimate(v: &Value) -> usize {
    estimate_tokens(&dumps(v))
}

/// What a typed list answer dropped to fit its budget: the names, or only
/// their count when the names do not fit either (both absent when nothing
/// was dropped).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Dropped {
    /// Names of the dropped items, request order kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<Vec<String>>,
    /// How many were dropped, when their names did not fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_count: Option<usize>,
}

/// The parts of a typed list answer the shrink edits: its list, its
/// `truncated` flag and its [`Dropped`].
pub(crate) type Parts<'a, T> = (&'a mut Vec<T>, &'a mut bool, &'a mut Dropped);

/// Estimated tokens of a typed answer.
pub(crate) fn estimate_of(p: &impl serde::Serialize) -> usize {
    serde_json::to_value(p).map_or(0, |v| estimate(&v))
}

/// [`shrink_list`] over a typed answer: drop items from the tail of its
/// list while the answer is over `budget`, naming each (by `name_of`).
pub(crate) fn shrink_items<P: serde::Serialize, T>(
    p: &mut P,
    budget: usize,
    parts: impl Fn(&mut P) -> Parts<'_, T>,
    name_of: impl Fn(&T) -> String,
) -> usize {
    if estimate_of(p) <= budget {
        return 0;
    }
    let mut names: Vec<String> = Vec::new();
    while estimate_of(p) > budget {
        let (items, truncated, dropped) = parts(p);
        let Some(item) = items.pop() else { break };
        names.insert(0, name_of(&item));
        *truncated = true;
        dropped.dropped = Some(names.clone());
    }
    let n = names.len();
    if n > 0 && estimate_of(p) > budget {
        let (_, _, dropped) = parts(p);
        *dropped = Dropped { dropped: None, dropped_count: Some(n) };
    }
    n
}

/// First `max_tokens*4` chars, right-trimmed, plus `…` when cut.
pub fn clip(text: &str, max_tokens: usize) -> String {
    forest_model::tokens::truncate_tokens(text, max_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Serialize)]
    struct Item {
        id: String,
        summary: String,
    }

    #[derive(serde::Serialize)]
    struct Listing {
        results: Vec<Item>,
        truncated: bool,
        #[serde(flatten)]
        dropped: Dropped,
    }

    fn listing(n: usize) -> Listing {
        let results = (0..n).map(|i| Item { id: format!("n/{i}"), summary: "x".repeat(80) }).collect();
        Listing { results, truncated: false, dropped: Dropped::default() }
    }

    fn shrink(p: &mut Listing, budget: usize) -> usize {
        shrink_items(p, budget, |l| (&mut l.results, &mut l.truncated, &mut l.dropped), |i| i.id.clone())
    }

    #[test]
    fn shrink_names_what_it_drops() {
        let mut p = listing(40);
        let n = shrink(&mut p, 300);
        assert!(n > 0);
        assert!(estimate_of(&p) <= 300);
        let p = serde_json::to_value(&p).unwrap();
        assert_eq!(p["truncated"], json!(true));
        let kept = p["results"].as_array().map(|a| a.len()).unwrap_or(0);
        assert_eq!(kept + n, 40);
        let names = p["dropped"].as_array().cloned().unwrap_or_default();
        assert_eq!(names.first(), Some(&json!(format!("n/{kept}"))));
        assert_eq!(names.last(), Some(&json!("n/39")));
    }

    #[test]
    fn fits_untouched() {
        let mut p = listing(1);
        assert_eq!(shrink(&mut p, 800), 0);
        assert!(serde_json::to_value(&p).unwrap().get("dropped").is_none());
    }
}
