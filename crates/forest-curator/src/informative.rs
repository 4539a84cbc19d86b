//! Curated scent must earn its place (issue 35): a candidate replaces the
//! derived summary only when it says more. Pure.
//!
//! "Says more" is counted in content words (three letters or more, not a
//! stop word, not scent boilerplate such as "summary" or "contains") that
//! are not already in the names an agent sees anyway: the title, the file
//! name, the folder names (a branch: its children's names). A candidate
//! needs [`MIN_NOVEL`] of them, or one more than the derived summary has
//! when that has fewer. A candidate that repeats a phrase is never better.

use std::collections::HashSet;

/// Content words beyond the names that make a candidate informative.
pub const MIN_NOVEL: usize = 3;

/// Why a candidate is not worth its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uninformative {
    /// A phrase (or a content word) comes back: a looping model.
    RepeatedPhrase(String),
    /// Too few content words beyond the names (`found`, `needed`).
    NothingBeyondNames {
        /// Novel content words of the candidate.
        found: usize,
        /// What it needed.
        needed: usize,
    },
}

impl Uninformative {
    /// The reason, as fed back to the model or reported.
    pub fn message(&self) -> String {
        match self {
            Uninformative::RepeatedPhrase(p) => format!("it repeats \"{p}\""),
            Uninformative::NothingBeyondNames { found, needed } => format!(
                "it says little beyond the title and names ({found} new content word(s), {needed} needed): \
                 say what the content is about"
            ),
        }
    }
}

const STOP: &[&str] = &[
    "the", "and", "for", "with", "from", "that", "this", "these", "those", "are", "was", "were", "has", "have", "had",
    "its", "into", "onto", "over", "under", "about", "also", "but", "not", "all", "any", "each", "one", "two", "can",
    "may", "will", "which", "who", "what", "when", "where", "how", "why", "their", "there", "them", "they", "than",
    "then", "been", "being", "such", "other", "more", "most", "some", "very", "only", "here", "per", "via", "our",
    "your", "his", "her", "you", "out", "use", "used", "using", "les", "des", "une", "der", "die", "das", "und", "von",
];

/// Words every scent could carry: they tell an agent nothing.
const BOILERPLATE: &[&str] = &[
    "summary",
    "document",
    "documents",
    "file",
    "files",
    "contains",
    "containing",
    "content",
    "contents",
    "describes",
    "description",
    "information",
    "page",
    "pages",
    "node",
    "nodes",
    "branch",
    "branches",
    "region",
    "folder",
    "folders",
    "section",
    "sections",
    "text",
    "short",
    "above",
    "below",
    "following",
    "list",
    "lists",
    "includes",
    "including",
    "various",
    "related",
    "entries",
    "entry",
    "children",
    "child",
];

/// Lower-case alphanumeric words of `text`.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

fn is_content(w: &str) -> bool {
    w.chars().count() >= 3 && !STOP.contains(&w) && !BOILERPLATE.contains(&w)
}

/// A word and its plural share a stem here.
fn stem(w: &str) -> &str {
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        &w[..w.len() - 1]
    } else {
        w
    }
}

/// Content words of `text` not among the words of `names` (by stem),
/// first occurrence only.
pub fn novel_words(text: &str, names: &[&str]) -> Vec<String> {
    let known: HashSet<String> = names.iter().flat_map(|n| words(n)).map(|w| stem(&w).to_string()).collect();
    let mut out: Vec<String> = Vec::new();
    for w in words(text) {
        if is_content(&w) && !known.contains(stem(&w)) && !out.iter().any(|o| stem(o) == stem(&w)) {
            out.push(w);
        }
    }
    out
}

/// The first phrase `text` repeats: a content word three times, the
/// same two words (one of them a content word) twice, or the same four
/// words, not all stopwords, twice ("which is a branch of c, which is a
/// branch of c": structural words loop too).
pub fn repeated_phrase(text: &str) -> Option<String> {
    let ws = words(text);
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for w in ws.iter().filter(|w| is_content(w)) {
        let c = counts.entry(stem(w)).or_default();
        *c += 1;
        if *c == 3 {
            return Some(w.clone());
        }
    }
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for pair in ws.windows(2) {
        let (a, b) = (pair[0].as_str(), pair[1].as_str());
        if a == b || !(is_content(a) || is_content(b)) {
            continue;
        }
        if !seen.insert((stem(a), stem(b))) {
            return Some(format!("{a} {b}"));
        }
    }
    if let Some(p) = ws.windows(2).find(|p| p[0] == p[1] && is_content(&p[0])) {
        return Some(format!("{} {}", p[0], p[1]));
    }
    let mut grams: HashSet<&[String]> = HashSet::new();
    ws.windows(4)
        .filter(|g| g.iter().any(|w| w.chars().count() >= 3 && !STOP.contains(&w.as_str())))
        .find(|g| !grams.insert(g))
        .map(|g| g.join(" "))
}

/// Whether `candidate` may replace `derived`, given the `names` an agent
/// already sees (title, file name, folder names).
pub fn judge(candidate: &str, derived: &str, names: &[&str]) -> Result<(), Uninformative> {
    if let Some(p) = repeated_phrase(candidate) {
        return Err(Uninformative::RepeatedPhrase(p));
    }
    let found = novel_words(candidate, names).len();
    let needed = MIN_NOVEL.min(novel_words(derived, names).len() + 1);
    if found < needed {
        return Err(Uninformative::NothingBeyondNames { found, needed });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DERIVED: &str = "Remove empty directories; fails when a directory is not empty unless told to ignore it.";

    #[test]
    fn the_pages_own_name_says_nothing() {
        let names = ["rmdir(1)", "rmdir.1", "man1"];
        for c in ["rmdir", "rmdir(1)", "This is the rmdir man page.", "A summary of the rmdir file."] {
            assert!(matches!(judge(c, DERIVED, &names), Err(Uninformative::NothingBeyondNames { .. })), "{c}");
        }
        assert_eq!(judge("rmdir removes empty directories, with --parents for whole paths.", DERIVED, &names), Ok(()));
    }

    #[test]
    fn a_poor_derived_summary_is_easier_to_beat() {
        let names = ["notes"];
        assert_eq!(judge("Kitchen renovation plans.", "Notes.", &names), Ok(()));
        assert!(judge("Notes.", "Notes.", &names).is_err());
    }

    #[test]
    fn repeated_phrases_are_caught() {
        let looped = "This branch contains a pthread_spinlock, pthread_spinlock, pthread_spinlock, ...";
        assert_eq!(repeated_phrase(looped), Some("pthread".into()));
        let twice = "Very short summary of sales code. Very short summary of sales code.";
        assert_eq!(repeated_phrase(twice), Some("of sales".into()));
        assert_eq!(repeated_phrase("Sales of the north and sales of the south."), Some("sales of".into()));
        assert_eq!(repeated_phrase("Lisbon store ledger; Porto store budget."), None);
        let chain = "This branch is a branch of cpp, which is a branch of c, which is a branch of c.";
        assert_eq!(repeated_phrase(chain), Some("is a branch of".into()));
        assert_eq!(repeated_phrase("Notes on what is in the plan and what is in the budget."), None);
        assert!(matches!(judge(looped, DERIVED, &[]), Err(Uninformative::RepeatedPhrase(_))));
    }

    #[test]
    fn novel_words_skip_names_stop_words_and_boilerplate() {
        assert_eq!(
            novel_words(
                "The sales ledger file contains revenues of the Lisbon stores.",
                &["Lisbon store", "ledger.csv"]
            ),
            vec!["sales", "revenues"]
        );
    }
}
