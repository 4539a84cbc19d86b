//! Leaf scent from the content, without an LLM (issue 26): title, summary,
//! tags and acronym aliases of a converted document. Pure functions over
//! the converter's title and body and the file's path; computed on the
//! convert stage's threads ([`crate::stages::convert`]) so the serial plan
//! stage only copies the result.
//!
//! - title: the converter's (document metadata, first heading); when it or
//!   the file name is generic (`README`, `copyright`, `changelog`, `NEWS`,
//!   `index`...) the first real heading, else the stem, prefixed by the
//!   folder it belongs to ("cpio: README");
//! - summary: [`forest_model::scent::derive_summary`] (lead-biased,
//!   extractive, boilerplate skipped, identifiers verbatim);
//! - tags: up to [`MAX_TAGS`] YAKE keyphrases of the body's prose
//!   ([`forest_keyphrase`]; why YAKE: docs/decisions/leaf-scent.md), in the dialect's tag format;
//! - aliases: acronyms the text defines ("Pluggable Authentication Modules
//!   (PAM)" gives `PAM`).

use crate::stages::text::{clean_tag, normalize_body, stem_of};
use forest_convert::Conversion;
use forest_model::extract::{blocks, changelog_source, title_line, BlockKind};
use forest_model::scent::derive_summary;
use forest_model::sentences::split_sentences;
use forest_model::slug::title_from_stem;
use once_cell::sync::Lazy;
use regex::Regex;
use std::collections::HashMap;

/// Tags a leaf carries at most (the dialect's curation limit).
pub(crate) const MAX_TAGS: usize = 5;
/// Tags a source file gets at least from the names it defines.
const MIN_CODE_TAGS: usize = 2;
/// Tags every leaf with some text carries at least ([`fill_tags`]).
const MIN_TAGS: usize = 2;
/// Bytes of a body the frequent-word fallback reads.
const FREQUENT_BYTES: usize = 16 * 1024;
/// Times a word must occur to stand for a body without prose.
const FREQUENT_AT_LEAST: usize = 2;
/// Bytes of prose YAKE reads: its cost grows with the text, the lead
/// carries the keyphrases.
const KEYPHRASE_BYTES: usize = 6 * 1024;
/// Acronym aliases at most per leaf.
const MAX_ACRONYMS: usize = 3;

/// File-name and title words that say nothing about what a file holds.
const GENERIC: [&str; 45] = [
    "readme",
    "index",
    "copyright",
    "changelog",
    "changes",
    "news",
    "notes",
    "install",
    "todo",
    "authors",
    "thanks",
    "debian",
    "bugs",
    "history",
    "faq",
    "license",
    "licence",
    "copying",
    "contributing",
    "init",
    "md",
    "txt",
    "gz",
    "rst",
    "html",
    "htm",
    "release",
    "releases",
    "credits",
    "maintainers",
    "upstream",
    "about",
    "main",
    "amd64",
    "source",
    "older",
    "entries",
    "notice",
    "intro",
    "introduction",
    "usage",
    "example",
    "examples",
    "py",
    "typed",
];
/// Words that make poor tags on their own: every document has them, or
/// they are the verbs of changelogs ("closes", "fix", "bump").
const WEAK_TAGS: [&str; 30] = [
    "file", "files", "software", "program", "programs", "data", "version", "versions", "package", "packages", "closes",
    "fix", "fixes", "fixed", "add", "adds", "added", "update", "updated", "updates", "remove", "removed", "drop",
    "bump", "upload", "new", "bug", "bugs", "import", "return",
];
/// Keywords and the structural words of code and data formats: frequent in
/// every file of their kind, so they tell nothing apart.
const CODE_WORDS: [&str; 52] = [
    "self",
    "none",
    "true",
    "false",
    "null",
    "return",
    "import",
    "from",
    "class",
    "function",
    "const",
    "string",
    "type",
    "types",
    "value",
    "values",
    "name",
    "names",
    "description",
    "default",
    "object",
    "list",
    "dict",
    "with",
    "elif",
    "else",
    "pass",
    "raise",
    "lambda",
    "yield",
    "async",
    "await",
    "print",
    "args",
    "kwargs",
    "http",
    "https",
    "integer",
    "boolean",
    "number",
    "array",
    "required",
    "properties",
    "items",
    "struct",
    "public",
    "private",
    "static",
    "void",
    "this",
    "shape",
    "documentation",
];
/// Folder names that do not say what a file belongs to.
const GENERIC_FOLDERS: [&str; 9] = ["doc", "docs", "html", "examples", "example", "src", "lib", "share", "usr"];

/// A leaf's derived scent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LeafScent {
    pub(crate) title: String,
    pub(crate) summary: String,
    pub(crate) tags: Vec<String>,
    pub(crate) aliases: Vec<String>,
}

fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase())
}

/// True when every word of `s` is generic (a bare `README`, `changelog.Debian`).
pub(crate) fn is_generic(s: &str) -> bool {
    let mut any = false;
    for w in words(s) {
        any = true;
        if !GENERIC.contains(&w.as_str()) && !w.chars().all(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    any
}

/// The folder a file belongs to: its nearest ancestor with a telling name.
fn owner_of(rel: &str) -> Option<&str> {
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    parts.into_iter().rev().find(|p| !GENERIC_FOLDERS.contains(&p.to_lowercase().as_str()) && !is_generic(p))
}

/// The first heading of a body that names something: not generic, not a
/// sentence or a changelog line (starts with a letter, no mail address, at
/// most 12 words and 80 characters).
fn first_real_heading(body: &str) -> Option<String> {
    blocks(body).into_iter().filter(|b| b.kind == BlockKind::Heading).take(5).map(|b| b.text).find(|t| {
        t.chars().count() <= 80
            && t.split_whitespace().count() <= 12
            && t.starts_with(char::is_alphabetic)
            && !t.ends_with(['.', ',', ';'])
            && !t.contains(['@', '<', '>'])
            && !is_generic(t)
    })
}

/// The leaf's title: the converter's unless it or the file name is
/// generic; then the first real heading or the stem, prefixed by the owning
/// folder when the heading does not name it.
pub(crate) fn leaf_title(converter_title: &str, rel: &str, body: &str) -> String {
    let stem = stem_of(rel);
    let t = converter_title.trim();
    let t = if t.is_empty() { title_from_stem(&stem) } else { t.to_string() };
    if !is_generic(&t) && !is_generic(&stem) {
        // a plain text's title line, when the converter found no title
        // but the file's (or a compressed file's inner) stem
        // ("damageproto: The DAMAGE Extension")
        let stem_titled = t == title_from_stem(&stem) || t == title_from_stem(&stem_of(&stem));
        return match title_line(body).filter(|l| stem_titled && !is_generic(l)) {
            Some(line) if line.to_lowercase().contains(&t.to_lowercase()) => line,
            Some(line) => format!("{t}: {line}"),
            None => t,
        };
    }
    let base = title_line(body).filter(|l| !is_generic(l)).or_else(|| first_real_heading(body)).unwrap_or_else(|| {
        if is_generic(&t) {
            t.clone()
        } else {
            title_from_stem(&stem)
        }
    });
    // a Debian copyright file names what it covers, a Debian changelog the
    // source package it is of, when that is not the folder's name
    // ("gpg-agent: copyright of GnuPG - The GNU Privacy Guard")
    let owner = owner_of(rel);
    let covered = forest_model::dep5::name(body).or_else(|| changelog_source(body).map(str::to_string));
    let base = match covered {
        Some(n)
            if !base.to_lowercase().contains(&n.to_lowercase())
                && owner.is_none_or(|o| !o.eq_ignore_ascii_case(&n))
                && n.chars().count() <= 60 =>
        {
            format!("{base} of {n}")
        }
        _ => base,
    };
    match owner {
        Some(o) if !base.to_lowercase().contains(&o.to_lowercase()) => format!("{o}: {base}"),
        _ => base,
    }
}

/// A source file's title: its path within the two folders above it
/// (`pydantic/version.py`, `cpio/examples/copy.sh`), which names both the
/// file and what it belongs to; leading folders dropped past 80 characters.
pub(crate) fn code_title(rel: &str) -> String {
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let mut from = parts.len().saturating_sub(3);
    while from + 1 < parts.len() && parts[from..].join("/").chars().count() > 80 {
        from += 1;
    }
    parts[from..].join("/")
}

static YAKE: Lazy<forest_keyphrase::Config> =
    Lazy::new(|| forest_keyphrase::Config { ngrams: 2, minimum_chars: 3, ..forest_keyphrase::Config::default() });

/// The prose YAKE reads: headings and paragraphs without boilerplate, cut
/// at [`KEYPHRASE_BYTES`]; with `licences` false, without the sentences
/// of licence text too (their "implied-warranties" and "general-public"
/// would be the tags of every file that carries a licence header). The
/// flag says whether a sentence was left out.
fn keyphrase_text(body: &str, licences: bool) -> (String, bool) {
    let mut text = String::new();
    let mut dropped = false;
    for b in blocks(body) {
        if text.len() >= KEYPHRASE_BYTES {
            break;
        }
        let kept: String = if licences {
            b.text
        } else {
            let all = split_sentences(&b.text);
            let n = all.len();
            let said: Vec<String> = all.into_iter().filter(|s| !forest_model::extract::is_licence_terms(s)).collect();
            dropped |= said.len() < n;
            said.join(" ")
        };
        if kept.is_empty() {
            continue;
        }
        text.push_str(&kept);
        text.push_str(if kept.ends_with(['.', '!', '?']) { "\n" } else { ".\n" });
    }
    let cut = forest_model::extract::lead(&text, KEYPHRASE_BYTES).len();
    text.truncate(cut);
    (text, dropped)
}

/// Up to `max` tags from the body's keyphrases (YAKE, 1-2 words), in the
/// dialect's format (lowercase, `[a-z0-9][a-z0-9_-]*`); numbers, generic
/// words and duplicates left out. `lang` picks the stopword list (else English).
pub(crate) fn keyphrase_tags(body: &str, lang: Option<&str>, max: usize) -> Vec<String> {
    let (text, dropped) = keyphrase_text(body, false);
    let mut out = tags_of(&text, lang, max, vec![]);
    if out.len() < 2 && dropped {
        // A body that is mostly licence text (a copyright file) still
        // gets its tags, from all of it.
        out = tags_of(&keyphrase_text(body, true).0, lang, max, out);
    }
    out
}

/// [`keyphrase_tags`] of one text, after the tags already in `out`.
fn tags_of(text: &str, lang: Option<&str>, max: usize, mut out: Vec<String>) -> Vec<String> {
    if text.split_whitespace().count() < 3 {
        return out;
    }
    let Some(stop) = forest_keyphrase::stopwords(lang_key(lang)) else {
        return out;
    };
    for k in forest_keyphrase::keyphrases(text, stop, &YAKE, max * 3) {
        let tag = clean_tag(&k.keyword.replace('.', "-"));
        let ok = tag.len() >= 3
            && tag.len() <= 40
            && tag.starts_with(|c: char| c.is_ascii_alphanumeric())
            && tag.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
            && tag.chars().any(|c| c.is_ascii_lowercase())
            && !is_generic(&tag)
            && !WEAK_TAGS.contains(&tag.as_str())
            && !out.iter().any(|t| same_tag(t, &tag) || t.split('-').any(|p| same_tag(p, &tag)));
        if ok {
            out.push(tag);
            if out.len() >= max {
                break;
            }
        }
    }
    out
}

/// One tag is the other, or its plural (`file`/`files`, `library`/`libraries`).
fn same_tag(a: &str, b: &str) -> bool {
    let plural = |x: &str, y: &str| {
        y.strip_suffix('s').is_some_and(|s| s == x)
            || y.strip_suffix("ies").is_some_and(|s| x.strip_suffix('y') == Some(s))
    };
    a == b || plural(a, b) || plural(b, a)
}

static ACRONYM_AFTER: Lazy<Regex> = Lazy::new(|| Regex::new(r"\(([A-Z][A-Za-z0-9]{1,9})s?\)").expect("static regex"));
static ACRONYM_BEFORE: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"\b([A-Z][A-Z0-9]{1,9})s? \(([A-Za-z][A-Za-z -]{3,80})\)").expect("static regex"));

/// Words that may stand between an expansion's initials ("Bureau *of* Labor").
const GLUE: [&str; 8] = ["of", "and", "for", "the", "to", "in", "on", "&"];

/// True when `expansion`'s initials (glue words optional) spell `acronym`.
fn spells(acronym: &str, expansion: &[&str]) -> bool {
    let letters: Vec<char> = acronym.chars().filter(|c| c.is_alphabetic()).map(|c| c.to_ascii_lowercase()).collect();
    let initials: Vec<(char, bool)> = expansion
        .iter()
        .filter_map(|w| w.chars().next().map(|c| (c.to_ascii_lowercase(), GLUE.contains(&w.to_lowercase().as_str()))))
        .collect();
    // Match the letters to the initials, glue words skippable.
    fn go(l: &[char], i: &[(char, bool)]) -> bool {
        match (l.first(), i.first()) {
            (None, None) => true,
            (None, Some(_)) => i.iter().all(|x| x.1),
            (Some(_), None) => false,
            (Some(a), Some((b, glue))) => (a == b && go(&l[1..], &i[1..])) || (*glue && go(l, &i[1..])),
        }
    }
    letters.len() >= 2 && go(&letters, &initials)
}

/// Acronyms the text defines: "Pluggable Authentication Modules (PAM)" or
/// "PAM (Pluggable Authentication Modules)".
pub(crate) fn defined_acronyms(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let body = forest_model::extract::lead(body, forest_model::extract::SCAN_BYTES);
    for m in ACRONYM_AFTER.captures_iter(body) {
        let (Some(whole), Some(acr)) = (m.get(0), m.get(1)) else { continue };
        let acr = acr.as_str();
        if acr.chars().filter(|c| c.is_ascii_uppercase()).count() < 2 {
            continue;
        }
        let before: Vec<&str> = body[..whole.start()].split_whitespace().rev().take(acr.len() + 3).collect();
        let found = (acr.len().min(before.len())..=before.len()).any(|k| {
            let mut span: Vec<&str> = before[..k].to_vec();
            span.reverse();
            spells(acr, &span)
        });
        if found && !out.iter().any(|a| a == acr) {
            out.push(acr.to_string());
        }
    }
    for m in ACRONYM_BEFORE.captures_iter(body) {
        let acr = &m[1];
        let exp: Vec<&str> = m[2].split_whitespace().collect();
        if spells(acr, &exp) && !out.iter().any(|a| a == acr) {
            out.push(acr.to_string());
        }
    }
    out.truncate(MAX_ACRONYMS);
    out
}

/// The whole derived scent of a Markdown conversion (None for datasets).
/// The document's own tags (cleaned) come first and keyphrase tags fill up
/// to [`MAX_TAGS`]; a `title:` in the document's metadata is kept as it is;
/// a stub body (no text of the file) gives no tags or aliases.
pub(crate) fn of_conversion(rel: &str, conv: &Conversion) -> Option<LeafScent> {
    let Conversion::Markdown { title, body, meta } = conv else {
        return None;
    };
    let source_tags: Vec<String> = meta.tags.iter().map(|t| clean_tag(t)).filter(|t| !t.is_empty()).collect();
    let has_meta_title = meta.title.as_deref().is_some_and(|t| !t.trim().is_empty());
    let title = if has_meta_title {
        title.trim().to_string()
    } else if meta.code.is_some() {
        code_title(rel)
    } else {
        leaf_title(title, rel, body)
    };
    // One line of plain spaces: a log's `# of expected passes\t\t96989`
    // heading kept its tabs.
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let stub = meta.stub.is_some();
    let lang = if stub { None } else { Some(meta.lang.as_deref()) };
    let mut scent = derive_leaf_scent(title, body, lang, &source_tags);
    if meta.code.is_some() {
        // Keyphrases of the converter's own "Python source; defines ..." line.
        scent.tags.retain(|t| !t.ends_with("-source") && !t.starts_with("defines") && !t.ends_with("-defines"));
    }
    // Code whose description gave fewer than two tags: the names it defines.
    // (Definitions first cost findability: identifiers are common words,
    // `validation`, `domain`, `signal`; bench/README.md, session 15.)
    for name in &meta.defines {
        if scent.tags.len() >= MIN_CODE_TAGS {
            break;
        }
        let tag = clean_tag(name);
        let ok = tag.len() >= 3 && !WEAK_TAGS.contains(&tag.as_str()) && !is_generic(&tag);
        if ok && !scent.tags.iter().any(|t| same_tag(t, &tag)) {
            scent.tags.push(tag);
        }
    }
    if !stub {
        fill_tags(&mut scent.tags, body, rel, &scent.title, meta.lang.as_deref());
    }
    Some(scent)
}

/// Fill `tags` up to [`MIN_TAGS`] where keyphrases gave fewer (code, data,
/// lists: bodies without prose for YAKE): the body's most frequent content
/// words (at least [`FREQUENT_AT_LEAST`] times, the most frequent first; not a stopword, generic,
/// weak, a code keyword or a title word), then the folder the file belongs
/// to, then its own name.
fn fill_tags(tags: &mut Vec<String>, body: &str, rel: &str, title: &str, lang: Option<&str>) {
    if tags.len() >= MIN_TAGS || body.split_whitespace().nth(20).is_none() {
        return;
    }
    let stop = forest_keyphrase::stopwords(lang_key(lang));
    let in_title: Vec<String> = words(title).collect();
    let mut end = body.len().min(FREQUENT_BYTES);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    for (i, w) in body[..end].split(|c: char| !(c.is_alphanumeric() || c == '_')).enumerate() {
        let w = w.trim_matches('_').to_lowercase();
        let shaped = (4..=30).contains(&w.len())
            && w.starts_with(|c: char| c.is_ascii_lowercase())
            && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if shaped {
            counts.entry(w).or_insert((0, i)).0 += 1;
        }
    }
    let telling = |w: &str| {
        !stop.is_some_and(|s| s.contains(w))
            && !is_generic(w)
            && !WEAK_TAGS.contains(&w)
            && !CODE_WORDS.contains(&w)
            && !in_title.iter().any(|t| same_tag(t, w))
    };
    let mut ranked: Vec<(String, (usize, usize))> =
        counts.into_iter().filter(|(w, (n, _))| *n >= FREQUENT_AT_LEAST && telling(w)).collect();
    ranked.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    let named = |t: &String| t.len() >= 3 && t.chars().any(|c| c.is_ascii_lowercase()) && !is_generic(t);
    let owner = owner_of(rel).map(clean_tag).filter(named);
    let stem = Some(clean_tag(&stem_of(rel))).filter(named);
    for tag in ranked.into_iter().map(|(w, _)| w).chain(owner).chain(stem) {
        if tags.len() >= MIN_TAGS {
            break;
        }
        if !tags.iter().any(|t| same_tag(t, &tag) || t.split('-').any(|p| same_tag(p, &tag))) {
            tags.push(tag);
        }
    }
}

/// Tags of a table or a database (no prose to read): the column names
/// that say something (not `id`, `name`, `value`...), then the folder the
/// file belongs to; at most [`MIN_TAGS`] + 1.
pub(crate) fn dataset_tags(rel: &str, columns: &[&str]) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for c in columns {
        if tags.len() >= MIN_TAGS {
            break;
        }
        let tag = clean_tag(c);
        let shaped = (3..=40).contains(&tag.len()) && tag.starts_with(|c: char| c.is_ascii_lowercase());
        let telling = !is_generic(&tag) && !WEAK_TAGS.contains(&tag.as_str()) && !CODE_WORDS.contains(&tag.as_str());
        if shaped && telling && !tags.iter().any(|t| same_tag(t, &tag)) {
            tags.push(tag);
        }
    }
    if let Some(owner) = owner_of(rel).map(clean_tag).filter(|t| t.len() >= 3) {
        if !tags.contains(&owner) {
            tags.push(owner);
        }
    }
    tags
}

/// The stopword list's key for a document language (else English).
fn lang_key(lang: Option<&str>) -> &str {
    lang.map(|l| l.split('-').next().unwrap_or(l)).filter(|l| forest_keyphrase::stopwords(l).is_some()).unwrap_or("en")
}

/// Summary, tags and aliases under a chosen title; `lang` None: no keyphrases.
fn derive_leaf_scent(title: String, body: &str, lang: Option<Option<&str>>, source_tags: &[String]) -> LeafScent {
    let norm = normalize_body(body, &title);
    let summary = derive_summary(&norm, &title);
    let mut tags: Vec<String> = source_tags.to_vec();
    let Some(lang) = lang else {
        return LeafScent { title, summary, tags, aliases: vec![] };
    };
    if tags.len() < MAX_TAGS {
        for t in keyphrase_tags(body, lang, MAX_TAGS - tags.len()) {
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
    }
    LeafScent { title, summary, tags, aliases: defined_acronyms(body) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_files_are_titled_by_their_path_and_summarised_by_their_description() {
        assert_eq!(code_title("site/pydantic/version.py"), "site/pydantic/version.py");
        assert_eq!(code_title("a/b/pydantic/_internal/_x.py"), "pydantic/_internal/_x.py");
        assert_eq!(code_title("setup.py"), "setup.py");
        let long = format!("{}/{}/x.py", "a".repeat(50), "b".repeat(50));
        assert_eq!(code_title(&long), format!("{}/x.py", "b".repeat(50)));
        let body = "The version module holds the version information for Pydantic.\n\n\
                    Python source; defines `version_info`, `version_short`.\n\n```python\n# Keep this in sync\nimport sys\n```\n";
        let meta = forest_convert::SourceMeta {
            code: Some("Python".into()),
            defines: vec!["version_info".into(), "version_short".into(), "main".into(), "x".into()],
            ..Default::default()
        };
        let conv = Conversion::Markdown { title: "version.py".into(), body: body.into(), meta };
        let s = of_conversion("pydantic/version.py", &conv).unwrap();
        assert_eq!(s.title, "pydantic/version.py");
        assert!(
            s.summary.starts_with("The version module holds the version information for Pydantic."),
            "{}",
            s.summary
        );
        assert!(s.summary.contains("version_info"), "{}", s.summary);
        assert!(!s.summary.contains("import") && !s.summary.contains("Keep this"), "{}", s.summary);
        assert!(s.tags.len() >= 2, "{:?}", s.tags);
        let bare = Conversion::Markdown {
            title: "lookup.c".into(),
            body: "C source; defines `lookup`, `main`.\n\n```c\nint lookup(void)\n{\n}\n```\n".into(),
            meta: forest_convert::SourceMeta {
                code: Some("C".into()),
                defines: vec!["lookup".into(), "idn2_lookup_u8".into()],
                ..Default::default()
            },
        };
        let t = of_conversion("libidn2-dev/examples/lookup.c", &bare).unwrap().tags;
        assert!(t.contains(&"lookup".to_string()) || t.contains(&"idn2_lookup_u8".to_string()), "{t:?}");
        assert!(t.len() >= 2 && !t.iter().any(|x| x.ends_with("-source")), "{t:?}");
        assert!(!s.tags.contains(&"x".to_string()), "{:?}", s.tags);
    }

    #[test]
    fn generic_titles_name_what_they_belong_to() {
        assert!(is_generic("README") && is_generic("changelog.Debian") && is_generic("NEWS"));
        assert!(!is_generic("GNU cpio package") && !is_generic(""));
        assert_eq!(leaf_title("README", "cpio/README", "Some text without heading."), "cpio: README");
        let setext = "This is the GNU cpio package\n============================\n\nText.\n";
        assert_eq!(leaf_title("README", "cpio/README", setext), "This is the GNU cpio package");
        assert_eq!(leaf_title("copyright", "libgtk2.0-0/copyright", ""), "libgtk2.0-0: copyright");
        // a Debian copyright file (DEP-5) names what it covers, unless that is the folder
        let dep5 = |name: &str| {
            format!(
                "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
                 Upstream-Name: {name}\n\nFiles: *\nLicense: GPL-3+\n"
            )
        };
        assert_eq!(
            leaf_title("copyright", "gpg-agent/copyright", &dep5("GnuPG - The GNU Privacy Guard")),
            "gpg-agent: copyright of GnuPG - The GNU Privacy Guard"
        );
        assert_eq!(leaf_title("copyright", "bzip2/copyright", &dep5("bzip2")), "bzip2: copyright");
        assert_eq!(
            leaf_title("Older entries have been removed from this changelog.", "bash/changelog.Debian.gz", "x"),
            "bash: changelog.Debian"
        );
        assert_eq!(leaf_title("index", "pkg/doc/html/index.html", "# Pkg Manual\n\ntext"), "Pkg Manual");
        assert_eq!(leaf_title("index", "gtk/html/index.html", "# Reference Manual\n\ntext"), "gtk: Reference Manual");
        assert_eq!(leaf_title("The Closure API", "libffi8/html/closures.html", ""), "The Closure API");
        assert_eq!(leaf_title("", "notes/budget-2026.md", ""), "budget 2026");
        assert_eq!(leaf_title("README", "README", ""), "README");
        let cl = "294663). Patches by Joshua Kwan <joshk@example.org> and\n---\n\ntext\n";
        assert_eq!(leaf_title("changelog", "bzip2/changelog.gz", cl), "bzip2: changelog");
        // a plain text's title line; a Debian changelog's source package
        let vim = "Patches for Vim - Vi IMproved 9.0\n\nThe files in this directory contain patches.\n";
        assert_eq!(leaf_title("changelog", "vim/changelog.gz", vim), "Patches for Vim - Vi IMproved 9.0");
        assert_eq!(
            leaf_title("changelog", "vim-common/changelog.gz", vim),
            "vim-common: Patches for Vim - Vi IMproved 9.0"
        );
        let proto = "The DAMAGE Extension\n\nVersion 1.1\n";
        assert_eq!(
            leaf_title("damageproto", "x11proto-dev/damageproto.txt.gz", proto),
            "damageproto: The DAMAGE Extension"
        );
        assert_eq!(leaf_title("Damage", "x11proto-dev/damageproto.txt", proto), "Damage");
        let deb = "xz-utils (5.4.1-1) bookworm-security; urgency=medium\n\n  * Fix.\n";
        assert_eq!(
            leaf_title("changelog.Debian", "liblzma5/changelog.Debian.gz", deb),
            "liblzma5: changelog.Debian of xz-utils"
        );
        assert_eq!(leaf_title("changelog.Debian", "xz-utils/changelog.Debian.gz", deb), "xz-utils: changelog.Debian");
    }

    #[test]
    fn tags_are_keyphrases_in_the_dialect_format() {
        let body = "# GNU cpio\n\nGNU cpio copies files into or out of a cpio or tar archive. \
                    The archive can be another file on the disk, a magnetic tape, or a pipe. \
                    GNU cpio supports the following archive formats: binary, old ASCII, new ASCII, crc, HPUX binary, \
                    HPUX old ASCII, old tar, and POSIX.1 tar. The tar format is provided for compatibility with the \
                    tar program. By default, cpio creates binary format archives.\n";
        let tags = keyphrase_tags(body, Some("en"), 5);
        assert!(tags.len() >= 2 && tags.len() <= 5, "{tags:?}");
        let re = Regex::new(r"^[a-z0-9][a-z0-9_-]*$").unwrap();
        assert!(tags.iter().all(|t| re.is_match(t)), "{tags:?}");
        assert!(tags.iter().any(|t| t.contains("cpio") || t.contains("archive")), "{tags:?}");
        assert!(keyphrase_tags("", None, 5).is_empty());
        assert!(keyphrase_tags("Hi.", Some("xx"), 5).is_empty());
        assert!(same_tag("file", "files") && same_tag("libraries", "library") && !same_tag("cat", "cats-eye"));
        let weak = keyphrase_tags(
            "Files and more files. The software reads files; the program writes data files. Closes: bug. Fixed files.",
            Some("en"),
            5,
        );
        assert!(weak.iter().all(|t| !WEAK_TAGS.contains(&t.as_str())), "{weak:?}");
    }

    #[test]
    fn licence_text_gives_no_tags_unless_it_is_all_there_is() {
        // libedit's README shape: what it is, then its BSD licence clauses.
        let body = "# libedit\n\nlibedit is the BSD editline library: line editing, history and \
                    tokenization for interactive programs. Editline reads a line with emacs or vi key bindings.\n\n\
                    Redistribution and use in source and binary forms, with or without modification, are permitted \
                    provided that the following conditions are met. THIS SOFTWARE IS PROVIDED AS IS AND ANY EXPRESS \
                    OR IMPLIED WARRANTIES, INCLUDING THE IMPLIED WARRANTIES OF MERCHANTABILITY, ARE DISCLAIMED.\n";
        let t = keyphrase_tags(body, Some("en"), 5);
        assert!(t.len() >= 2, "{t:?}");
        let licence_words = ["warrant", "redistribution", "merchantability", "binary-forms", "permitted", "implied"];
        assert!(t.iter().all(|t| !licence_words.iter().any(|w| t.contains(w))), "{t:?}");
        assert!(t.iter().any(|t| t.contains("editline")), "{t:?}");
        // a body that is only licence text still gets two tags
        let only = "Redistribution and use in source and binary forms, with or without modification, are \
                    permitted provided that the following conditions are met. THE SOFTWARE IS PROVIDED AS IS AND \
                    ANY EXPRESS OR IMPLIED WARRANTIES OF MERCHANTABILITY ARE DISCLAIMED BY THE REGENTS.\n";
        assert!(keyphrase_tags(only, Some("en"), 5).len() >= 2);
    }

    #[test]
    fn bodies_without_prose_still_carry_two_tags() {
        // A service definition: no sentence for YAKE, structural words
        // everywhere; its frequent names and its folder speak for it.
        let body = r#"```json
{"metadata": {"serviceId": "Kinesis Video Signaling"}, "operations": {"GetIceServerConfig":
{"name": "GetIceServerConfig", "http": {"method": "POST"}, "input": {"shape": "GetIceServerConfigRequest"}},
"SendAlexaOfferToMaster": {"name": "SendAlexaOfferToMaster", "input": {"shape": "SendAlexaOfferToMasterRequest"}}},
"shapes": {"ChannelARN": {"type": "string"}, "ClientId": {"type": "string"}, "channel": {"type": "string"},
"channelarn": {"type": "string"}, "channel_arn": {"type": "string"}, "signaling": {"type": "string"},
"signaling_channel": {"type": "string"}, "signaling": {"documentation": "the signaling channel"}}}
```"#;
        let conv = Conversion::Markdown { title: "service-2".into(), body: body.into(), meta: Default::default() };
        let t = of_conversion("botocore/data/kinesis-video-signaling/2019-12-04/service-2.json", &conv).unwrap().tags;
        assert_eq!(t.len(), MIN_TAGS, "{t:?}");
        assert!(t.iter().all(|t| !CODE_WORDS.contains(&t.as_str()) && !WEAK_TAGS.contains(&t.as_str())), "{t:?}");
        assert!(t.contains(&"signaling".to_string()), "{t:?}");
        // Nothing frequent enough: the folder the file belongs to.
        let short = "```\na = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = a + b\n```\n";
        let conv = Conversion::Markdown { title: "run".into(), body: short.into(), meta: Default::default() };
        let t = of_conversion("tools/frobnicate/run.py", &conv).unwrap().tags;
        assert!(t.contains(&"frobnicate".to_string()), "{t:?}");
        // A stub says nothing of the file: no tags made up for it.
        let meta = forest_convert::SourceMeta { stub: Some("x".into()), ..Default::default() };
        let conv = Conversion::Markdown { title: "run".into(), body: short.into(), meta };
        assert!(of_conversion("tools/frobnicate/run.py", &conv).unwrap().tags.is_empty());
    }

    #[test]
    fn tables_are_tagged_by_their_columns_and_folder() {
        let cols = ["id", "arn", "datatype", "lastmodifieddate", "name", "value"];
        assert_eq!(
            dataset_tags("moto/ssm/resources/ami-amazon-linux-latest/eu-west-1.json.gz", &cols),
            vec!["arn", "datatype", "ami-amazon-linux-latest"]
        );
        assert_eq!(dataset_tags("t.csv", &["name", "value"]), Vec::<String>::new());
    }

    #[test]
    fn acronyms_the_text_defines() {
        let t = "Linux-PAM (Pluggable Authentication Modules for Linux) is a suite. \
                 It uses Pluggable Authentication Modules (PAM) and the Bureau of Labor Statistics (BLS). \
                 Random (XYZ) is not defined. NSS (Name Service Switch) resolves names.";
        assert_eq!(defined_acronyms(t), vec!["PAM", "BLS", "NSS"]);
        assert!(defined_acronyms("nothing (here)").is_empty());
    }

    #[test]
    fn leaf_scent_keeps_source_tags_first() {
        let body = "Pluggable Authentication Modules (PAM) let administrators choose how applications \
                    authenticate users. PAM modules stack: each module checks one credential and the stack decides.";
        let meta = forest_convert::SourceMeta { tags: vec!["Security".into()], ..Default::default() };
        let conv = Conversion::Markdown { title: "README".into(), body: body.into(), meta };
        let s = of_conversion("pam/README", &conv).unwrap();
        assert_eq!(s.title, "pam: README");
        assert_eq!(s.tags[0], "security");
        assert!(s.tags.len() >= 3 && s.tags.len() <= MAX_TAGS, "{:?}", s.tags);
        assert_eq!(s.aliases, vec!["PAM"]);
        assert!(s.summary.starts_with("Pluggable Authentication Modules (PAM) let"), "{}", s.summary);
        let meta =
            forest_convert::SourceMeta { title: Some("README".into()), stub: Some("x".into()), ..Default::default() };
        let conv = Conversion::Markdown { title: "README".into(), body: body.into(), meta };
        let s = of_conversion("pam/README", &conv).unwrap();
        assert_eq!((s.title.as_str(), s.tags.len(), s.aliases.len()), ("README", 0, 0));
        assert!(of_conversion("t.csv", &Conversion::Dataset { title: "t".into(), tables: vec![] }).is_none());
    }

    #[test]
    fn titles_are_one_line_of_plain_spaces() {
        // /usr/share/doc/gdb/check.log.gz: a test log whose first line the
        // converter took for its title.
        let conv = Conversion::Markdown {
            title: "of expected passes\t\t96989\n".into(),
            body: "# of expected passes\t\t96989\n\nTest run by buildd.\n".into(),
            meta: Default::default(),
        };
        assert_eq!(of_conversion("gdb/check.log", &conv).unwrap().title, "of expected passes 96989");
    }
}
