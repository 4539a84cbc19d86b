//! Branch scent without an LLM (pure): what lives in a branch, from its
//! children's scent. No I/O; `branch_scent.rs` applies it to each branch a
//! batch touched, from the entry lines the branch already holds and the
//! nodes the batch has in memory (O(children), no subtree reading).
//!
//! A folder's summary: a README-like child's summary first (its first
//! sentence), then the dominant themes of the children (words of their
//! tags, titles and summaries, counted once per child, tags weighing most;
//! stopwords, numbers and generic file names left out), then the names of
//! the children that are not generic (`copyright`, `changelog`, ...). A
//! bucket's: its name range, the names it holds, then the themes. Within
//! [`BRANCH_TOKENS`] tokens (an entry line must stay short: a branch lists
//! up to 150 of them within 3,000 tokens), deterministic (ties by word).

use forest_model::tokens::estimate_tokens;
use std::collections::{BTreeMap, BTreeSet};

/// Token budget of a derived branch summary (the contract allows 60).
pub(crate) const BRANCH_TOKENS: usize = 40;
/// Themes named at most.
const THEMES: usize = 5;

/// One child of a branch, as the branch's entry line and the batch know it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Child<'a> {
    /// The child's name: its id's last component (a folder's name for a
    /// sub-branch, `~lo..hi` for a bucket).
    pub(crate) name: &'a str,
    pub(crate) branch: bool,
    pub(crate) title: Option<&'a str>,
    pub(crate) summary: &'a str,
    pub(crate) tags: &'a [String],
}

/// What the branch is.
#[derive(Debug, Clone)]
pub(crate) enum Kind<'a> {
    /// A source folder's branch, by its name.
    Folder(&'a str),
    /// A range bucket (`lo`, `hi`) or a name-prefix bucket (`lo` == `hi`).
    Bucket(&'a str, &'a str),
}

/// Names that say what kind of file a child is, not what it is about.
const GENERIC: [&str; 24] = [
    "readme",
    "index",
    "changelog",
    "changes",
    "news",
    "copyright",
    "copying",
    "license",
    "licence",
    "authors",
    "notes",
    "todo",
    "thanks",
    "install",
    "history",
    "credits",
    "contributors",
    "maintainers",
    "version",
    "about",
    "overview",
    "intro",
    "introduction",
    "faq",
];

const STOP: [&str; 122] = [
    "the",
    "and",
    "for",
    "with",
    "that",
    "this",
    "from",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "not",
    "but",
    "you",
    "your",
    "its",
    "it's",
    "all",
    "any",
    "can",
    "will",
    "may",
    "one",
    "two",
    "our",
    "their",
    "they",
    "them",
    "there",
    "here",
    "which",
    "who",
    "what",
    "when",
    "where",
    "how",
    "why",
    "also",
    "into",
    "onto",
    "than",
    "then",
    "these",
    "those",
    "such",
    "each",
    "other",
    "more",
    "most",
    "some",
    "only",
    "over",
    "under",
    "about",
    "after",
    "before",
    "between",
    "both",
    "being",
    "been",
    "does",
    "did",
    "done",
    "use",
    "used",
    "using",
    "see",
    "via",
    "per",
    "should",
    "would",
    "could",
    "must",
    "shall",
    "out",
    "off",
    "own",
    "same",
    "very",
    "just",
    "like",
    "new",
    "now",
    "etc",
    "file",
    "files",
    "folder",
    "folders",
    "document",
    "documents",
    "source",
    "adopted",
    "holds",
    "themes",
    "region",
    "entries",
    "bananas",
    "sub-branches",
    "names",
    "start",
    "whose",
    "pending",
    "summary",
    "text",
    "page",
    "pages",
    "section",
    "sections",
    "line",
    "lines",
    "part",
    "list",
    "lists",
    "contains",
    "containing",
    "describes",
    "following",
    "include",
    "includes",
    // A source file's summary says "Python source; defines ..." (code.rs).
    "defines",
];

fn is_generic(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let head = n.split(['-', '.', '_']).next().unwrap_or("");
    GENERIC.contains(&n.as_str()) || GENERIC.contains(&head)
}

fn is_readme(c: &Child) -> bool {
    let n = c.name.to_ascii_lowercase();
    // A Python package's `__init__.py` (slug `n__init__`) describes the package.
    let init = n.trim_start_matches('n').starts_with("__init__");
    !c.branch
        && (n.starts_with("readme")
            || init
            || ["index", "about", "overview", "intro", "introduction"].contains(&n.as_str()))
}

/// The child whose summary says what the folder is, in this order: a
/// README-like child whose first sentence defines something ("Nettle is a
/// cryptographic library..."); a README that is not a distribution's note
/// (`README.Debian`, `README.source`); another leaf (in the given order)
/// whose first sentence defines something and whose name is not a
/// changelog, copyright or other generic file; any README.
fn describing_child<'a, 'b>(children: &'b [Child<'a>]) -> Option<&'b Child<'a>> {
    let defines = |c: &Child| lead(c.summary, 20).is_some_and(|l| forest_model::extract::is_definition(&l));
    let note = |c: &Child| {
        let n = c.name.to_ascii_lowercase();
        n.contains("debian") || n.contains("source")
    };
    let readmes = || children.iter().filter(|c| is_readme(c));
    readmes()
        .find(|c| defines(c))
        .or_else(|| readmes().find(|c| !note(c)))
        .or_else(|| children.iter().find(|c| !c.branch && !is_generic(c.name) && defines(c)))
        .or_else(|| readmes().next())
}

/// Words of a text worth counting (lowercase, 3+ characters, not a
/// stopword, not only digits and punctuation).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '+' || c == '#' || c == '_' || c == '-'))
        .map(|w| w.trim_matches(['-', '_']).to_lowercase())
        .filter(|w| w.chars().count() >= 3 && w.chars().any(char::is_alphabetic))
        .filter(|w| !STOP.contains(&w.as_str()) && !GENERIC.contains(&w.as_str()))
}

/// A changelog or copyright leaf: its tags and summary tell what changed
/// (packaging chores, maintainers' names, "bump standards version") or
/// under which licence, not what the folder holds; its title may name
/// what it is of ("libfoo1: changelog.Debian of foo", "copyright of GNU
/// Foo"), and only that is read.
fn title_only(c: &Child) -> bool {
    let n = c.name.to_ascii_lowercase();
    !c.branch && (n.starts_with("changelog") || n.starts_with("copyright"))
}

/// The dominant themes of the children: words by weighted child count
/// (tag 3, title 2, summary 1, each child counted once per field), ties by
/// word; words of `exclude` (the branch's own name) left out, changelogs
/// and copyright files read only for what their titles say they are of.
pub(crate) fn themes(children: &[Child], exclude: &str) -> Vec<String> {
    let own: BTreeSet<String> = words(exclude).collect();
    let mut score: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for c in children {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        let read_title_only = title_only(c);
        let (tags, summary) = if read_title_only { (&[][..], "") } else { (c.tags, c.summary) };
        for t in tags {
            for w in words(t) {
                let e = seen.entry(w).or_default();
                *e = (*e).max(3);
            }
        }
        let mut title = c.title.unwrap_or(if c.branch { c.name } else { "" });
        if read_title_only {
            // what it is of, not its kind ("changelog.Debian")
            title = title.split_once(" of ").map_or("", |(_, of)| of);
        }
        for w in words(title) {
            let e = seen.entry(w).or_default();
            *e = (*e).max(2);
        }
        for w in words(summary) {
            let e = seen.entry(w).or_default();
            *e = (*e).max(1);
        }
        for (w, s) in seen {
            let e = score.entry(w).or_default();
            e.0 += s;
            e.1 += 1;
        }
    }
    let min_children = if children.len() >= 4 { 2 } else { 1 };
    let mut ranked: Vec<(String, usize)> = score
        .into_iter()
        .filter(|(w, (_, n))| *n >= min_children && !own.contains(w))
        .map(|(w, (s, _))| (w, s))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(THEMES).map(|(w, _)| w).collect()
}

/// A child's display name: its title when it has one and the name is not
/// a bucket, else its name.
fn display<'a>(c: &'a Child) -> &'a str {
    match c.title {
        Some(t) if !t.trim().is_empty() && !c.branch => t.trim(),
        _ => c.name,
    }
}

/// The first sentence of a summary, within `max` tokens.
fn lead(summary: &str, max: usize) -> Option<String> {
    let s = summary.trim();
    // A placeholder ("Adopted content 'x'; pending curation.") says nothing.
    if s.is_empty()
        || s.starts_with("Pending summary")
        || (s.starts_with("Adopted content '") && s.ends_with("pending curation."))
    {
        return None;
    }
    // The first sentence that states something: not a question or a lead-in.
    let sentences = forest_model::sentences::split_sentences(s);
    let first = sentences
        .iter()
        .find(|x| !x.trim_end().ends_with(['?', ':']))
        .or(sentences.first())
        .cloned()
        .unwrap_or_else(|| s.to_string());
    let first = forest_model::tokens::truncate_tokens(first.trim(), max);
    let end = if first.ends_with(['.', '!', '?', '…']) { "" } else { "." };
    Some(format!("{first}{end}"))
}

/// Append `items` as "`head`a, b, c (+n more)." while the whole stays
/// within the budget; nothing when not even one item fits.
fn push_list(out: &mut String, head: &str, items: &[String], budget: usize) {
    let mut taken = 0;
    for k in 1..=items.len() {
        let rest = items.len() - k;
        let tail = if rest > 0 { format!(" (+{rest} more).") } else { ".".into() };
        let cand = format!("{out}{}{head}{}{tail}", sep(out), items[..k].join(", "));
        if estimate_tokens(&cand) > budget {
            break;
        }
        taken = k;
    }
    if taken == 0 {
        return;
    }
    let rest = items.len() - taken;
    let tail = if rest > 0 { format!(" (+{rest} more).") } else { ".".into() };
    *out = format!("{out}{}{head}{}{tail}", sep(out), items[..taken].join(", "));
}

/// Append "Themes: a, b, c." with as many themes as fit the budget.
fn push_themes(out: &mut String, topics: &[String], budget: usize) {
    let mut k = topics.len();
    while k > 0 {
        let cand = format!("{out}{}Themes: {}.", sep(out), topics[..k].join(", "));
        if estimate_tokens(&cand) <= budget {
            *out = cand;
            return;
        }
        k -= 1;
    }
}

fn sep(out: &str) -> &'static str {
    if out.is_empty() {
        ""
    } else {
        " "
    }
}

/// The derived summary of a branch with `children`; `None` when it has no
/// children (the branch keeps what it says).
pub(crate) fn branch_summary(kind: &Kind, children: &[Child]) -> Option<String> {
    if children.is_empty() {
        return None;
    }
    let own = match kind {
        Kind::Folder(name) => name.to_string(),
        Kind::Bucket(..) => String::new(),
    };
    let topics = themes(children, &own);
    let mut names: Vec<String> = children
        .iter()
        .filter(|c| !c.name.starts_with('~') && !is_generic(c.name))
        .map(|c| display(c).to_string())
        .collect();
    let kinds: Vec<String> = {
        let mut k: Vec<String> = children
            .iter()
            .filter(|c| !c.name.starts_with('~') && is_generic(c.name))
            .map(|c| c.name.split(['-', '.', '_']).next().unwrap_or(c.name).to_ascii_lowercase())
            .collect();
        k.sort();
        k.dedup();
        k
    };
    let mut out = String::new();
    match kind {
        Kind::Folder(_) => {
            if let Some(l) = describing_child(children).and_then(|c| lead(c.summary, 20)) {
                out.push_str(&l);
            }
            push_themes(&mut out, &topics, BRANCH_TOKENS);
            if names.is_empty() {
                names = kinds;
            }
            push_list(&mut out, "Holds: ", &names, BRANCH_TOKENS);
        }
        Kind::Bucket(lo, hi) => {
            out = if lo == hi { format!("Names starting {lo}.") } else { format!("Names {lo} to {hi}.") };
            push_themes(&mut out, &topics, BRANCH_TOKENS);
            if names.is_empty() {
                names = kinds;
            }
            push_list(&mut out, "Holds: ", &names, BRANCH_TOKENS);
        }
    }
    if out.is_empty() {
        // Only buckets below, without themes: say how many.
        out = format!("{} sub-branches by name.", children.len());
    }
    forest_model::scent::validate_summary(&out).is_ok().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf<'a>(name: &'a str, title: &'a str, summary: &'a str, tags: &'a [String]) -> Child<'a> {
        Child { name, branch: false, title: Some(title), summary, tags }
    }

    #[test]
    fn without_a_readme_a_defining_child_speaks_for_the_folder() {
        let kids = vec![
            leaf("changelog", "bzip2: changelog", "bzip2 is a program that was fixed again.", &[]),
            leaf("manual", "bzip2 manual", "Version 1.0.8 of 13 July 2019.", &[]),
            leaf("manual-pdf", "bzip2 and libbzip2", "bzip2 is a freely available, patent free data compressor.", &[]),
        ];
        let s = branch_summary(&Kind::Folder("bzip2"), &kids).unwrap();
        assert!(s.starts_with("bzip2 is a freely available, patent free data compressor."), "{s}");
        let pending = vec![leaf(
            "n__init__",
            "blinker/__init__.py",
            "Adopted content 'blinker/__init__.py'; pending curation.",
            &[],
        )];
        assert!(!branch_summary(&Kind::Folder("blinker"), &pending).unwrap_or_default().starts_with("Adopted"));
        let none = vec![leaf("manual", "bzip2 manual", "Version 1.0.8 of 13 July 2019.", &[])];
        assert!(!branch_summary(&Kind::Folder("bzip2"), &none).unwrap().starts_with("Version"));
    }

    #[test]
    fn a_folder_says_what_its_readme_says_then_themes_and_names() {
        let tags = vec!["shell".to_string(), "readline".to_string()];
        let kids = vec![
            leaf(
                "readme",
                "bash: README",
                "Bash is the GNU Project's shell, the Bourne Again SHell. It is sh-compatible.",
                &[],
            ),
            leaf("copyright", "bash: copyright", "Copyright of the GNU Bourne Again SHell, GPL-3.", &[]),
            leaf("inputrc", "inputrc", "Sample readline init file for the shell.", &tags),
            leaf(
                "bashref",
                "Bash Reference Manual",
                "Reference manual of the shell: builtins, readline, job control.",
                &tags,
            ),
            leaf("changelog-debian", "changelog.Debian", "bash (5.2) unstable; urgency=medium", &[]),
        ];
        let s = branch_summary(&Kind::Folder("bash"), &kids).unwrap();
        assert!(s.starts_with("Bash is the GNU Project's shell, the Bourne Again SHell."), "{s}");
        assert!(s.contains("Themes: shell, readline"), "{s}");
        assert!(s.contains("Holds: inputrc, Bash Reference Manual."), "{s}");
        assert!(estimate_tokens(&s) <= BRANCH_TOKENS, "{s}");
        assert!(!s.contains("adopted from source folder"));
        // Deterministic.
        assert_eq!(branch_summary(&Kind::Folder("bash"), &kids).unwrap(), s);
    }

    #[test]
    fn a_bucket_names_its_range_its_members_and_their_themes() {
        let kids: Vec<Child> = ["bash", "bc", "binutils", "bison", "bsdutils"]
            .iter()
            .map(|n| Child {
                name: n,
                branch: true,
                title: None,
                summary: "GNU tools: compiler and shell utilities.",
                tags: &[],
            })
            .collect();
        let s = branch_summary(&Kind::Bucket("b", "bs"), &kids).unwrap();
        assert!(s.starts_with("Names b to bs. Themes: compiler, gnu, shell"), "{s}");
        assert!(s.ends_with("Holds: bash, bc, binutils, bison, bsdutils."), "{s}");
    }

    #[test]
    fn only_generic_files_still_name_content_not_the_folder() {
        let kids = vec![leaf("copyright", "copyright", "", &[]), leaf("changelog-debian", "changelog.Debian", "", &[])];
        let s = branch_summary(&Kind::Folder("libfoo1"), &kids).unwrap();
        assert_eq!(s, "Holds: changelog, copyright.");
        // changelogs' chores and licences' words are no themes; what a
        // copyright file covers is
        let chores = ["bump-standards-version".to_string(), "debian-janitor".to_string()];
        let licence = ["general-public".to_string(), "permission-notice".to_string()];
        let kids = vec![
            leaf(
                "copyright",
                "libfoo1: copyright of GNU Foo",
                "GNU Foo: copyright holders and licence terms.",
                &licence,
            ),
            leaf("changelog-debian", "libfoo1: changelog.Debian of foo", "Bump Standards-Version.", &chores),
            leaf("news", "libfoo1: NEWS", "GNU Foo now parses bar files.", &[]),
        ];
        let s = branch_summary(&Kind::Folder("libfoo1"), &kids).unwrap();
        assert!(s.starts_with("Themes: foo, gnu"), "{s}");
        assert!(!s.contains("bump") && !s.contains("general-public") && !s.contains("janitor"), "{s}");
        assert_eq!(branch_summary(&Kind::Folder("x"), &[]), None);
    }

    #[test]
    fn long_lists_are_cut_within_the_budget() {
        let names: Vec<String> = (0..200).map(|i| format!("package-name-{i:03}")).collect();
        let kids: Vec<Child> =
            names.iter().map(|n| Child { name: n, branch: true, summary: "Holds: x.", ..Default::default() }).collect();
        let s = branch_summary(&Kind::Bucket("package-name-000", "package-name-199"), &kids).unwrap();
        assert!(estimate_tokens(&s) <= BRANCH_TOKENS, "{s}");
        assert!(s.contains("more)"), "{s}");
    }
}
