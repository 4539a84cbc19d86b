//! Grounding (issue 35): every number, date, version and proper name a
//! candidate summary or tag carries must occur in the source text. Pure.
//!
//! What is checked: any word with a digit (numbers, dates, versions,
//! `Q1`, `SmolLM2`), any word with a capital after its first letter
//! (`PDF`, `OpenSSL`), and any capitalised word that does not open a
//! sentence (`Lisbon`, `Debian`). Month and weekday names, format names
//! (`CSV`, `Markdown`...) and one-letter words are free: a summary may say
//! "January 2026" of a row dated `2026-01-15`, or "CSV export" of a file.
//!
//! Normalised on both sides: lower case, thousands separators dropped
//! (`14,302` = `14302`), every other non-alphanumeric character a word
//! break (`2022-07-22` = `2022 07 22`), the `v` of a version dropped,
//! a trailing possessive or plural `s` forgiven. A token occurs when its
//! normalised words occur in that order at word boundaries.

/// Words never checked: month and weekday names (dates are written many
/// ways), document formats (what a file is, not what it says), `I`.
const FREE: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "csv",
    "tsv",
    "json",
    "jsonl",
    "yaml",
    "xml",
    "html",
    "pdf",
    "markdown",
    "docx",
    "xlsx",
    "pptx",
    "excel",
    "word",
    "powerpoint",
    "sql",
    "sqlite",
    "txt",
    "readme",
    "faq",
    "i",
];

/// The words of `text` a source must ground, as written (trimmed of
/// surrounding punctuation), first occurrence only.
pub fn checked_tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let opens = sentence_start;
        sentence_start = raw.ends_with(['.', '!', '?', ':', ';']) || raw == "-" || raw == "•";
        let free = |w: &str| w.chars().count() < 2 || FREE.contains(&w.to_lowercase().as_str());
        // Jan-Mar, CSV/JSON: free when every part is.
        if word.is_empty() || word.split(['-', '/']).all(free) {
            continue;
        }
        let digit = word.chars().any(|c| c.is_ascii_digit());
        let inner_cap = word.chars().skip(1).any(char::is_uppercase);
        let capitalised = word.chars().next().is_some_and(char::is_uppercase);
        if (digit || inner_cap || (capitalised && !opens)) && !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    out
}

/// `text` normalised to space-separated lower-case words, padded with a
/// space on both sides.
pub fn normalise(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    for (i, &c) in chars.iter().enumerate() {
        let between_digits =
            |j: usize| j > 0 && chars[j - 1].is_ascii_digit() && chars.get(j + 1).is_some_and(|n| n.is_ascii_digit());
        let version_v =
            (c == 'v' || c == 'V') && out.ends_with(' ') && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if version_v {
            // v1.2 is written "1.2" as often as "v1.2".
        } else if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if (c == ',' || c == '_' || c == '\u{202F}' || c == '\'') && between_digits(i) {
            // 14,302 / 14_302 / 14'302: one number.
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

fn occurs(token: &str, haystack: &str) -> bool {
    let n = normalise(token);
    if n.trim().is_empty() || haystack.contains(&n) {
        return true;
    }
    // Lisbon's, PDFs: the stem will do.
    n.strip_suffix("s ")
        .map(str::trim_end)
        .is_some_and(|stem| stem.trim().len() >= 2 && haystack.contains(&format!("{stem} ")))
}

/// The checked tokens of `candidate` that `source` does not contain, in
/// order. Empty means grounded.
pub fn ungrounded(candidate: &str, source: &str) -> Vec<String> {
    let haystack = normalise(source);
    checked_tokens(candidate).into_iter().filter(|t| !occurs(t, &haystack)).collect()
}

/// [`ungrounded`] over a summary and its tags together.
pub fn ungrounded_scent(summary: &str, tags: &[String], source: &str) -> Vec<String> {
    let haystack = normalise(source);
    let mut out: Vec<String> = checked_tokens(summary).into_iter().filter(|t| !occurs(t, &haystack)).collect();
    for t in tags {
        // Tags are lower case: only their numbers and versions are checked.
        if t.chars().any(|c| c.is_ascii_digit()) && !occurs(t, &haystack) && !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "Quarterly sales ledger for the Lisbon store.\n\n| month | revenue |\n|---|---|\n\
                          | 2026-01-15 | 14,302 |\n\nPrepared with SmolLM2 v1.21.22 by Ana Costa (PDF export).";

    #[test]
    fn picks_numbers_versions_and_names_not_sentence_openers() {
        let t = checked_tokens("Sales ledger of the Lisbon store. Revenue 14,302 in Q1 2026; SmolLM2 and PDFs by Ana.");
        assert_eq!(t, vec!["Lisbon", "14,302", "Q1", "2026", "SmolLM2", "PDFs", "Ana"]);
        assert!(checked_tokens("Monthly revenue for January and March.").is_empty(), "months are free");
        assert!(checked_tokens("A CSV export. Markdown notes.").is_empty(), "formats and openers are free");
        assert!(checked_tokens("Revenue from Jan-Mar as CSV/JSON.").is_empty(), "free parts make a free word");
    }

    #[test]
    fn grounded_when_normalised_forms_occur() {
        let ok = "Sales ledger of the Lisbon store: 14302 in January 2026 (2026-01-15), by Ana Costa. \
                  Made with SmolLM2 1.21.22 and v1.21.22; Lisbon's PDFs.";
        assert_eq!(ungrounded(ok, SOURCE), Vec::<String>::new());
    }

    #[test]
    fn invented_numbers_dates_and_names_are_reported() {
        let bad = "Sales ledger of the Lisbon store, 2022-07-22 14:11:22, revenue 99,000 by John Smith \
                   with Deb-src-files 1.21.23.";
        assert_eq!(
            ungrounded(bad, SOURCE),
            vec!["2022-07-22", "14:11:22", "99,000", "John", "Smith", "Deb-src-files", "1.21.23"]
        );
        // A number is a whole number: 302 is not grounded by 14,302... but
        // 2026 is by 2026-01-15.
        assert_eq!(ungrounded("Rows 302 and 2026.", SOURCE), vec!["302"]);
    }

    #[test]
    fn tags_check_their_numbers_only() {
        let tags = vec!["sales".to_string(), "2026".into(), "q3".into(), "lisbon".into()];
        assert_eq!(ungrounded_scent("Sales ledger.", &tags, SOURCE), vec!["q3"]);
    }

    #[test]
    fn normalise_drops_thousands_separators_only_between_digits() {
        assert_eq!(normalise("14,302 a,b 1.5-x"), " 14302 a b 1 5 x ");
        assert_eq!(normalise("Ünïcode"), " ünïcode ");
        assert_eq!(normalise("v1.2 dev2"), " 1 2 dev2 ");
    }
}
