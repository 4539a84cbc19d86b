//! Curation never costs findability: a curated summary replaces a derived
//! one, but every word that made the derived scent findable (its summary's
//! content words and its tags) stays in the node's tags when the curated
//! summary and tags do not already say it.

use std::collections::HashSet;

/// Words too common to make a node findable.
const STOPWORDS: [&str; 48] = [
    "the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "has", "have", "had", "its", "not",
    "but", "all", "any", "can", "may", "will", "into", "over", "under", "about", "than", "then", "also", "such",
    "each", "other", "which", "when", "where", "who", "what", "how", "why", "there", "their", "these", "those", "more",
    "most", "some", "one", "two", "you",
];

/// Tags a node carries at most after curation (the derived ones kept).
pub const MAX_KEPT_TAGS: usize = 24;

/// Lowercase alphanumeric words of `text` (3+ characters, not stopwords).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// The tags a curated node keeps: the curated `tags` first, then each
/// derived tag and each content word of the derived summary that neither
/// the curated summary nor a curated tag contains, in their order, up to
/// [`MAX_KEPT_TAGS`] (the curated tags are never dropped).
/// A derived summary that is only the pending placeholder keeps nothing.
pub fn kept_tags(derived_summary: &str, derived_tags: &[String], summary: &str, tags: &[String]) -> Vec<String> {
    let placeholder =
        derived_summary.starts_with("Adopted content '") && derived_summary.ends_with("; pending curation.");
    let derived_summary = if placeholder { "" } else { derived_summary };
    let mut said: HashSet<String> = words(summary).into_iter().collect();
    for t in tags {
        said.insert(t.to_lowercase());
        said.extend(words(t));
    }
    let mut out: Vec<String> = tags.to_vec();
    let derived = derived_tags.iter().map(|t| t.to_lowercase()).chain(words(derived_summary));
    for term in derived {
        if out.len() >= MAX_KEPT_TAGS.max(tags.len()) {
            break;
        }
        let covered = said.contains(&term) || (!term.is_empty() && words(&term).iter().all(|w| said.contains(w)));
        if !covered && !out.contains(&term) && is_tag(&term) {
            said.insert(term.clone());
            out.push(term);
        }
    }
    out
}

/// The dialect's tag shape: lowercase letters and digits, `-` and `_`.
fn is_tag(t: &str) -> bool {
    let mut cs = t.chars();
    cs.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && cs.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn derived_terms_the_curated_scent_lost_become_tags() {
        let got = kept_tags(
            "fakeroot: run a command in an environment faking root privileges for file manipulation.",
            &v(&["fakeroot", "debian"]),
            "A tool that lets builds pretend to be the superuser.",
            &v(&["build"]),
        );
        assert_eq!(got[0], "build", "curated tags first");
        for t in [
            "fakeroot",
            "debian",
            "run",
            "command",
            "environment",
            "faking",
            "root",
            "privileges",
            "file",
            "manipulation",
        ] {
            assert!(got.contains(&t.to_string()), "{t} kept: {got:?}");
        }
        for t in ["the", "for", "a"] {
            assert!(!got.contains(&t.to_string()), "{t} is not findable weight: {got:?}");
        }
    }

    #[test]
    fn nothing_is_added_that_the_curated_scent_already_says() {
        let got = kept_tags("PAM login modules.", &v(&["pam"]), "Configuring PAM login modules.", &v(&["security"]));
        assert_eq!(got, v(&["security"]));
        // multi-word derived tags count as said when their words are
        let got = kept_tags("", &v(&["data-compression"]), "Data compression library.", &[]);
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn the_pending_placeholder_keeps_nothing() {
        let pending = crate::scent::pending_summary("Quarterly report");
        assert_eq!(kept_tags(&pending, &[], "Sales by region, Q1 2026.", &v(&["sales"])), v(&["sales"]));
    }

    #[test]
    fn bounded_and_never_drops_curated_tags() {
        let long: String = (0..100).map(|i| format!("word{i} ")).collect();
        let curated: Vec<String> = (0..30).map(|i| format!("c{i}")).collect();
        assert_eq!(kept_tags(&long, &[], "x", &curated), curated, "30 curated tags, nothing added past them");
        assert_eq!(kept_tags(&long, &[], "x", &[]).len(), MAX_KEPT_TAGS);
        // non-ASCII words are not tags (the dialect's shape) and are skipped
        assert_eq!(kept_tags("Título de relatório", &[], "x", &[]), Vec::<String>::new());
    }
}
