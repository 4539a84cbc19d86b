//! The scent contract (dialect §2.2, §2.3, §3.7): validating, repairing and
//! deriving the <=60-token summary.

use crate::sentences::split_sentences;
use crate::tokens::estimate_tokens;

/// Hard ceiling on summary size.
pub const SUMMARY_MAX_TOKENS: usize = 60;
/// Target of LLM-free derivation.
pub const SUMMARY_TARGET_TOKENS: usize = 50;
/// Summaries that open with these waste tokens without scent.
pub const ANTI_PATTERNS: [&str; 2] = ["this document describes", "file containing"];

/// Why a summary failed the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryError {
    /// Empty or whitespace.
    Empty,
    /// Over 60 tokens (carries the estimate).
    TooLong(usize),
    /// Opens with a boilerplate pattern.
    AntiPattern(&'static str),
}

impl SummaryError {
    /// The dialect's message text (without the `E_FRONTMATTER` code).
    pub fn message(&self) -> String {
        match self {
            SummaryError::Empty => "summary: must not be empty".into(),
            SummaryError::TooLong(n) => format!("summary: exceeds 60 tokens (~{n})"),
            SummaryError::AntiPattern(p) => {
                format!("summary: anti-pattern \"{p}...\" wastes tokens without scent")
            }
        }
    }

    /// The dialect's hint.
    pub fn hint(&self) -> &'static str {
        match self {
            SummaryError::Empty | SummaryError::TooLong(_) => "Summaries are the scent. 1-3 sentences, <= 60 tokens.",
            SummaryError::AntiPattern(_) => "Start with WHAT it is (category + subject), not boilerplate.",
        }
    }
}

impl std::fmt::Display for SummaryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// `validate_summary` (A.4): non-empty, <=60 tokens, no anti-pattern opening.
pub fn validate_summary(summary: &str) -> Result<(), SummaryError> {
    let t = summary.trim();
    if t.is_empty() {
        return Err(SummaryError::Empty);
    }
    let n = estimate_tokens(summary);
    if n > SUMMARY_MAX_TOKENS {
        return Err(SummaryError::TooLong(n));
    }
    let low = t.to_lowercase();
    for p in ANTI_PATTERNS {
        if low.starts_with(p) {
            return Err(SummaryError::AntiPattern(p));
        }
    }
    Ok(())
}

fn is_anti_pattern(text: &str) -> bool {
    let low = text.trim().to_lowercase();
    ANTI_PATTERNS.iter().any(|p| low.starts_with(p))
}

/// Drop trailing words until `text` fits `max` tokens; strip trailing
/// `strip` chars and append `…`. None when no word is left.
fn cut_words(text: &str, max: usize, strip: &[char]) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    // Binary search the longest prefix that fits: linear in the text overall.
    let fits = |k: usize| {
        let s = words[..k].join(" ");
        let s = s.trim_end_matches(strip);
        estimate_tokens(&format!("{s}…")) <= max
    };
    let (mut lo, mut hi) = (0usize, words.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return None;
    }
    let s = words[..lo].join(" ");
    Some(format!("{}…", s.trim_end_matches(strip)))
}

/// `fit_summary` (§2.3): repair an over-long model summary by dropping
/// trailing sentences, then trailing words (+ `…`); None if it cannot be made valid.
pub fn fit_summary(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() || is_anti_pattern(t) {
        return None;
    }
    let mut sentences = split_sentences(t);
    while sentences.len() > 1 && estimate_tokens(&sentences.join(" ")) > SUMMARY_MAX_TOKENS {
        sentences.pop();
    }
    let mut out = sentences.join(" ");
    if estimate_tokens(&out) > SUMMARY_MAX_TOKENS {
        out = cut_words(&out, SUMMARY_MAX_TOKENS, &[',', ';', ':'])?;
    }
    validate_summary(&out).ok().map(|_| out)
}

/// Fallback summary when derivation yields nothing usable.
pub fn pending_summary(title: &str) -> String {
    format!("Adopted content '{title}'; pending curation.")
}

/// Weight a comment sentence needs to become a summary (a licence or
/// SPDX line weighs about 0.1).
const MIN_COMMENT_WEIGHT: f64 = 0.25;

/// The anti-patterns' openings rewritten to what they introduce: a body's
/// "This document describes the .lzma file format, ..." is its best
/// sentence, which the contract would refuse as it stands.
fn defuse(sentence: &str) -> String {
    let low = sentence.to_lowercase();
    for (pattern, verb) in [("this document describes ", "Describes "), ("file containing ", "Contains ")] {
        if low.starts_with(pattern) && sentence.is_char_boundary(pattern.len()) {
            return format!("{verb}{}", &sentence[pattern.len()..]);
        }
    }
    sentence.to_string()
}

/// Weight (before position) of the sentence the lead bias starts from:
/// a licence sentence weighs ~0.1, a bare name or date line ~0.3.
const SAYS_SOMETHING: f64 = 0.45;

/// Sentences of `markdown`'s prose as `(position, weight, text)`, lead-biased.
fn summary_candidates(markdown: &str, title: &str) -> Vec<(usize, f64, String)> {
    use crate::extract::{blocks, sentence_weight, BlockKind};
    const MAX_SENTENCES: usize = 200;
    let mut cands: Vec<(usize, f64, String)> = Vec::new();
    let title_low = title.trim().to_lowercase();
    let mut said = 0usize;
    'outer: for b in blocks(markdown).iter().filter(|b| b.kind != BlockKind::Heading) {
        for s in split_sentences(&b.text) {
            if cands.len() >= MAX_SENTENCES {
                break 'outer;
            }
            let s = defuse(&s);
            if s.to_lowercase() == title_low || cands.iter().any(|c| c.2 == s) {
                continue;
            }
            // Lead bias: the first sentence usually says what the document is
            // (a man page's NAME line, a README's opening). Position counts
            // from the first sentence that says something: a licence or a
            // copyright line before the introduction does not push it down.
            let lead = if said == 0 { 1.25 } else { 1.0 / (1.0 + 0.12 * said as f64) };
            let weight = sentence_weight(&s, b.kind);
            if said > 0 || weight >= SAYS_SOMETHING {
                said += 1;
            }
            cands.push((cands.len(), weight * lead, s));
        }
    }
    cands
}

/// `derive_summary(markdown, title)` (§3.7): LLM-free scent from the text,
/// a lead-biased extractive summary (issue 26). The body's prose without
/// its boilerplate ([`crate::extract::blocks`]) is split into sentences;
/// each is weighted by [`crate::extract::sentence_weight`] and its position;
/// the best one and any others scoring at least a third of it are kept, in
/// text order, within the 50-token target. A body without prose (code, a
/// configuration file) is summarised from its comments
/// ([`crate::comments`]); an opening the contract refuses ("This document
/// describes ...") is rewritten ("Describes ..."). Linear in the input:
/// only the first [`crate::extract::SCAN_BYTES`] are read.
pub fn derive_summary(markdown: &str, title: &str) -> String {
    if let Some(s) = crate::dep5::summary(markdown) {
        let fitted = if estimate_tokens(&s) <= SUMMARY_TARGET_TOKENS {
            Some(s)
        } else {
            cut_words(&s, SUMMARY_TARGET_TOKENS, &[',', ';', ':'])
        };
        if let Some(s) = fitted.filter(|s| validate_summary(s).is_ok()) {
            return s;
        }
    }
    let mut cands = summary_candidates(markdown, title);
    if cands.is_empty() {
        // A code or configuration body: what its comments say (issue 26),
        // and only sentences that say something (not a licence line).
        cands = summary_candidates(&crate::comments::comment_prose(markdown), title);
        cands.retain(|c| c.1 >= MIN_COMMENT_WEIGHT);
    }
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|&a, &b| cands[b].1.total_cmp(&cands[a].1).then(a.cmp(&b)));
    let Some(&best) = order.first() else {
        return pending_summary(title);
    };
    let mut keep = vec![best];
    if estimate_tokens(&cands[best].2) > SUMMARY_TARGET_TOKENS {
        let cut = cut_words(&cands[best].2, SUMMARY_TARGET_TOKENS, &[',', ';', ':']).unwrap_or_default();
        return if cut.is_empty() || validate_summary(&cut).is_err() { pending_summary(title) } else { cut };
    }
    let mut used = estimate_tokens(&cands[best].2);
    for &i in order.iter().skip(1).take(8) {
        if keep.len() >= 3 || cands[i].1 < cands[best].1 / 3.0 {
            break;
        }
        let t = estimate_tokens(&cands[i].2) + 1;
        if used + t <= SUMMARY_TARGET_TOKENS {
            keep.push(i);
            used += t;
        }
    }
    keep.sort_unstable();
    let out = keep.iter().map(|&i| cands[i].2.as_str()).collect::<Vec<_>>().join(" ");
    if out.is_empty() || validate_summary(&out).is_err() {
        pending_summary(title)
    } else {
        out
    }
}

/// Deterministic branch rollup (§3.16): `Region '<title>': A, B, C (+k more).`
pub fn derive_branch_summary(title: &str, child_titles: &[String]) -> String {
    let fallback = format!("Region '{title}' with {} entries.", child_titles.len());
    if child_titles.is_empty() {
        return fallback;
    }
    let mut taken = 0;
    for k in 1..=child_titles.len() {
        let rest = child_titles.len() - k;
        let tail = if rest > 0 { format!(" (+{rest} more).") } else { ".".into() };
        let cand = format!("Region '{title}': {}{tail}", child_titles[..k].join(", "));
        if k == 1 || estimate_tokens(&cand) <= SUMMARY_TARGET_TOKENS {
            taken = k;
        } else {
            break;
        }
    }
    let rest = child_titles.len() - taken;
    let tail = if rest > 0 { format!(" (+{rest} more).") } else { ".".into() };
    let s = format!("Region '{title}': {}{tail}", child_titles[..taken].join(", "));
    if validate_summary(&s).is_ok() {
        s
    } else {
        fallback
    }
}

/// Short hash of a summary text (first 12 hex of blake-free sha256), used to
/// detect a hand edit of a machine-written summary (DESIGN §5).
pub fn summary_fingerprint(summary: &str) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(summary.trim().as_bytes());
    hex::encode(&h[..6])
}

/// A node `forest curate --pending` would curate: ingested, its summary
/// still the derived one the Gardener wrote (`scent: derived` with a
/// matching `scent_hash`, so a hand edit is never re-curated). A curated
/// node (`scent: llm`) is never pending again.
pub fn is_pending_curation(node: &crate::node::Node) -> bool {
    let Some(summary) = node.get_str("summary") else { return false };
    node.get_str("source").as_deref() == Some("ingest")
        && node.get_str("scent").as_deref() == Some("derived")
        && node.get_str("scent_hash").as_deref() == Some(summary_fingerprint(&summary).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initials_and_abbreviations_do_not_end_a_sentence() {
        assert_eq!(
            split_sentences("Built by Steve M. Robbins for Debian. Use a codec, e.g. zlib (cf. RFC 1950). Done!"),
            ["Built by Steve M. Robbins for Debian.", "Use a codec, e.g. zlib (cf. RFC 1950).", "Done!"]
        );
        assert_eq!(split_sentences("It is version 2. Then A. It ends."), ["It is version 2.", "Then A. It ends."]);
    }

    #[test]
    fn pending_curation_is_ingested_derived_and_unedited() {
        let fp = summary_fingerprint("Derived words.");
        let text = format!(
            "---\nid: a\nsource: ingest\nsummary: Derived words.\nscent: derived\nscent_hash: {fp}\n---\n\n# A\n"
        );
        let parse = |t: &str| crate::node::Node::parse(t).unwrap();
        assert!(is_pending_curation(&parse(&text)));
        assert!(!is_pending_curation(&parse(&text.replace("scent: derived", "scent: llm"))), "curated");
        assert!(!is_pending_curation(&parse(&text.replace("Derived words.", "Edited by hand."))), "hand edit");
        assert!(!is_pending_curation(&parse(&text.replace("source: ingest", "source: manual"))), "not ingested");
    }

    #[test]
    fn validate_cases() {
        assert_eq!(validate_summary("  "), Err(SummaryError::Empty));
        assert!(matches!(validate_summary(&"word ".repeat(120)), Err(SummaryError::TooLong(150))));
        assert_eq!(
            validate_summary("This document describes the plan."),
            Err(SummaryError::AntiPattern("this document describes"))
        );
        assert_eq!(validate_summary("File containing numbers."), Err(SummaryError::AntiPattern("file containing")));
        assert!(validate_summary("Sales by region, Jan-Mar 2026.").is_ok());
        // 240 non-ASCII code points is exactly 60 tokens; 241 is over.
        assert!(validate_summary(&"é".repeat(240)).is_ok());
        assert!(validate_summary(&"é".repeat(241)).is_err());
        assert_eq!(SummaryError::TooLong(84).message(), "summary: exceeds 60 tokens (~84)");
    }

    #[test]
    fn fit_drops_sentences_without_ellipsis() {
        let long = format!("{} {} {}", "A".repeat(100) + ".", "B".repeat(100) + ".", "C".repeat(100) + ".");
        let fitted = fit_summary(&long).unwrap();
        assert!(!fitted.ends_with('…'));
        assert!(estimate_tokens(&fitted) <= 60);
        assert!(fitted.starts_with("AAAA"));
    }

    #[test]
    fn fit_cuts_words_with_ellipsis() {
        let fitted = fit_summary(&"word, ".repeat(100)).unwrap();
        assert!(fitted.ends_with('…'));
        assert!(!fitted.trim_end_matches('…').ends_with(','));
        assert!(estimate_tokens(&fitted) <= 60);
        assert!(fit_summary("This document describes x").is_none());
        assert!(fit_summary("").is_none());
        assert!(fit_summary(&"x".repeat(500)).is_none());
    }

    #[test]
    fn derive_is_valid_and_bounded() {
        let md = "# Title\n\n- bullet\n| a | b |\nFirst **sentence** with [link](http://x). Second one here!\n";
        let s = derive_summary(md, "Title");
        assert_eq!(s, "First sentence with link. Second one here!");
        let giant = "word ".repeat(100_000);
        let g = derive_summary(&giant, "T");
        assert!(g.ends_with('…'));
        assert!(estimate_tokens(&g) <= 50);
        assert_eq!(derive_summary("# Only heading\n", "X"), "Adopted content 'X'; pending curation.");
        let pt = derive_summary("Relatório de vendas do trimestre. Região Nordeste lidera.", "r");
        assert!(pt.starts_with("Relatório"));
    }

    #[test]
    fn branch_rollup_fallback() {
        let titles: Vec<String> = (0..40).map(|i| format!("Child title number {i}")).collect();
        let s = derive_branch_summary("Sales", &titles);
        assert!(s.starts_with("Region 'Sales': Child title number 0"));
        assert!(s.contains("more)."));
        assert!(validate_summary(&s).is_ok());
        assert_eq!(derive_branch_summary("E", &[]), "Region 'E' with 0 entries.");
        assert_eq!(derive_branch_summary("S", &["A".into()]), "Region 'S': A.");
    }

    #[test]
    fn an_opening_the_contract_refuses_is_rewritten_not_dropped() {
        // /usr/share/doc/liblzma-dev/lzma-file-format.txt.gz: its one
        // informative paragraph opens with an anti-pattern.
        let md = "# lzma file format\n\n0. Preface\n\n        This document describes the .lzma file format, which is\n        \
                  sometimes also called LZMA_Alone format.\n";
        let s = derive_summary(md, "lzma file format");
        assert!(s.starts_with("Describes the .lzma file format, which is sometimes also called LZMA_Alone"), "{s}");
        assert!(validate_summary(&s).is_ok());
        assert!(derive_summary("File containing the Lisbon sales of 2026.", "x").starts_with("Contains the Lisbon"));
    }
}
