//! Query expansion for `locate`: the words a user types are widened with
//! the surface forms the scent may carry, so the dialect's catalog (FTS5
//! with the plain unicode61 tokenizer, readable by the reference engine)
//! needs no second, stemmed index.
//!
//! - Inflections, for a word the scent (almost) never carries as typed:
//!   `closures` also asks for `closure`, `closure` for `closures`,
//!   `libraries` for `library`, `matches` for `match`,
//!   `compressed`/`compressing` for `compress` (and `configured` for
//!   `configure`). A word many nodes carry as typed is not widened: BM25
//!   scores each variant as a term of its own, so widening common words
//!   counted one concept two or three times and outweighed the rest of the
//!   question (findability `usd` R@5 0.634 without the variants against
//!   0.576 with them; bench/README.md, session 15).
//! - Identifiers: `ffi_type`, `ffi-type`, `ffi.type` are already an FTS5
//!   phrase (`ffi type`) that matches every spelling with a separator; the
//!   joined form `ffitype` is added for text that lost its separators. Two
//!   adjacent words typed split (`ffi type`) add their joined form too.
//!
//! A variant that no node carries matches nothing, so it changes no score;
//! one that does adds that node as a candidate, ranked by the same BM25.

/// Words shorter than this are not inflected (`is`, `as`, `bus`...).
const MIN_INFLECT: usize = 4;

/// A typed word found in fewer nodes than this is widened by its inflections.
pub const RARE_BELOW: usize = 3;

/// At most this many words are expanded; the rest are kept as typed
/// (an agent's pasted paragraph needs no variants).
const MAX_EXPANDED: usize = 32;

fn is_word(w: &str) -> bool {
    !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Inflectional variants of one lower-case ASCII word (never the word).
fn inflections(w: &str) -> Vec<String> {
    let mut out = Vec::new();
    if w.len() < MIN_INFLECT || !is_word(w) {
        return out;
    }
    let consonant_before = |stem: &str| stem.bytes().last().is_some_and(|b| !b"aeiou".contains(&b));
    if let Some(stem) = w.strip_suffix("ies").filter(|s| s.len() >= 2) {
        out.push(format!("{stem}y"));
    } else if ["sses", "shes", "ches", "xes", "zes"].iter().any(|s| w.ends_with(s)) {
        out.push(w[..w.len() - 2].to_string());
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        out.push(w[..w.len() - 1].to_string());
    } else if let Some(stem) = w.strip_suffix("ing").filter(|s| s.len() >= 3) {
        out.push(stem.to_string());
        out.push(format!("{stem}e"));
    } else if let Some(stem) = w.strip_suffix("ed").filter(|s| s.len() >= 3) {
        out.push(stem.to_string());
        out.push(format!("{stem}e"));
    } else if let Some(stem) = w.strip_suffix('y').filter(|s| consonant_before(s)) {
        out.push(format!("{stem}ies"));
    } else if ["s", "x", "z", "ch", "sh"].iter().any(|s| w.ends_with(s)) {
        out.push(format!("{w}es"));
    } else {
        out.push(format!("{w}s"));
    }
    out
}

/// The word with its identifier separators removed, when it has any
/// between alphanumerics (`ffi_type` -> `ffitype`).
fn joined(w: &str) -> Option<String> {
    let core = w.trim_matches(|c: char| !c.is_alphanumeric());
    let has_sep = core.contains(['_', '-', '.', '/', ':']);
    if !has_sep {
        return None;
    }
    let j: String = core.chars().filter(|c| c.is_alphanumeric()).collect();
    (!j.is_empty() && j != core).then_some(j)
}

/// `query` with variants appended (whitespace-separated words, as
/// `locate` reads them). `rare(word)` says whether the lower-case word is
/// found in fewer than [`RARE_BELOW`] nodes; only rare words get their
/// inflections. Pure given `rare`.
pub fn expand_query(query: &str, rare: &dyn Fn(&str) -> bool) -> String {
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut seen: std::collections::HashSet<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let mut extra: Vec<String> = Vec::new();
    let mut add = |v: String, extra: &mut Vec<String>| {
        if seen.insert(v.clone()) {
            extra.push(v);
        }
    };
    for (i, w) in words.iter().take(MAX_EXPANDED).enumerate() {
        let lower = w.to_lowercase();
        let core = lower.trim_matches(|c: char| !c.is_alphanumeric());
        if let Some(j) = joined(core) {
            add(j, &mut extra);
        }
        let variants = inflections(core);
        if !variants.is_empty() && rare(core) {
            for v in variants {
                add(v, &mut extra);
            }
        }
        if let Some(next) = words.get(i + 1) {
            let a = core;
            let next = next.to_lowercase();
            let b = next.trim_matches(|c: char| !c.is_alphanumeric());
            if a.len() >= 2 && b.len() >= 2 && a.chars().chain(b.chars()).all(char::is_alphanumeric) {
                add(format!("{a}{b}"), &mut extra);
            }
        }
    }
    if extra.is_empty() {
        return query.to_string();
    }
    let mut out = words.join(" ");
    for e in extra {
        out.push(' ');
        out.push_str(&e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: &str) -> bool {
        true
    }

    #[test]
    fn only_rare_words_are_widened() {
        let rare = |w: &str| w == "closures";
        assert_eq!(expand_query("closures", &rare), "closures closure");
        assert_eq!(expand_query("applications closures", &rare), "applications closures applicationsclosures closure");
        assert_eq!(expand_query("applications", &|_: &str| false), "applications");
    }

    #[test]
    fn plurals_and_singulars() {
        assert_eq!(inflections("closures"), ["closure"]);
        assert_eq!(inflections("closure"), ["closures"]);
        assert_eq!(inflections("libraries"), ["library"]);
        assert_eq!(inflections("library"), ["libraries"]);
        assert_eq!(inflections("matches"), ["match"]);
        assert_eq!(inflections("match"), ["matches"]);
        assert_eq!(inflections("classes"), ["class"]);
        assert_eq!(inflections("class"), ["classes"]);
        assert_eq!(inflections("compressed"), ["compress", "compresse"]);
        assert_eq!(inflections("configuring"), ["configur", "configure"]);
        assert!(inflections("bus").is_empty());
        assert!(inflections("status").is_empty() || inflections("status") == ["statuses"]);
        assert!(inflections("q1").is_empty());
    }

    #[test]
    fn identifiers_joined_and_split() {
        assert_eq!(expand_query("ffi_type", &all), "ffi_type ffitype");
        assert_eq!(expand_query("en_AU.UTF-8", &all), "en_AU.UTF-8 enauutf8");
        assert!(expand_query("ffi type", &all).split(' ').any(|w| w == "ffitype"));
        assert_eq!(expand_query("", &all), "");
        assert_eq!(expand_query("   ", &all), "   ");
    }

    #[test]
    fn nothing_repeats_and_the_typed_words_come_first() {
        let e = expand_query("closure closures", &all);
        assert!(e.starts_with("closure closures"));
        assert_eq!(e.split(' ').filter(|w| *w == "closure").count(), 1);
        assert_eq!(e.split(' ').filter(|w| *w == "closures").count(), 1);
    }
}
