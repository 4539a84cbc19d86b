//! YAKE (Campos et al., 2020): single-document keyphrase scoring by term
//! casing, position, frequency, relatedness to context and spread over
//! sentences. Ported from `yake-rust` 1.0.3 (MIT, its authors: ../NOTICE), which
//! follows the reference implementation; the differences are the
//! tokenizer ([`crate::tokenize`] instead of `segtok`), counting maps
//! instead of lists in the context, and a total order on scores (a NaN
//! cannot panic the sort).

use crate::tokenize::{sentences, words};
use crate::{Config, Keyphrase, StopWords};
use hashbrown::{DefaultHashBuilder, HashMap, HashSet};
use std::collections::VecDeque;

/// Insertion-ordered maps with hashbrown's hasher (foldhash): std's
/// SipHash cost a few percent of a 10^5-file adopt on these short keys.
type IndexMap<K, V> = indexmap::IndexMap<K, V, DefaultHashBuilder>;

/// What YAKE makes of one token.
#[derive(Debug, Copy, Clone, Eq, PartialEq)]
enum Tag {
    Digit,
    Punctuation,
    Unparsable,
    Acronym,
    Uppercase,
    Parsable,
}

impl Tag {
    fn of(word: &str, first_in_sentence: bool, punctuation: &Punct) -> Tag {
        if numeric(word) {
            Tag::Digit
        } else if word.chars().all(|c| punctuation.has(c)) {
            Tag::Punctuation
        } else if unparsable(word, punctuation) {
            Tag::Unparsable
        } else if word.chars().all(char::is_uppercase) {
            Tag::Acronym
        } else if !first_in_sentence && strict_capital(word) {
            Tag::Uppercase
        } else {
            Tag::Parsable
        }
    }
}

/// A number as Rust reads one (`3,141.5`, `1e5`, `inf`), commas ignored.
fn numeric(word: &str) -> bool {
    let maybe = word.bytes().any(|b| b.is_ascii_digit())
        || ["inf", "infinity", "nan"].iter().any(|w| word.trim_start_matches(['+', '-']).eq_ignore_ascii_case(w));
    maybe && word.replace(',', "").parse::<f64>().is_ok()
}

/// Two kinds of punctuation, or letters and digits both or neither.
fn unparsable(word: &str, punctuation: &Punct) -> bool {
    let mut first: Option<char> = None;
    let mut kinds = 0;
    for c in word.chars().filter(|&c| punctuation.has(c)) {
        match first {
            None => {
                first = Some(c);
                kinds = 1;
            }
            Some(f) if f != c => {
                kinds = 2;
                break;
            }
            Some(_) => {}
        }
    }
    let digits = word.chars().any(|c| c.is_ascii_digit());
    let alphas = word.chars().any(char::is_alphabetic);
    kinds > 1 || digits == alphas
}

/// Only the first character is a capital ("Paypal", not "PayPal").
fn strict_capital(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase) && !chars.any(char::is_uppercase)
}

/// The configured punctuation, ASCII by table.
pub(crate) struct Punct<'c> {
    ascii: [bool; 128],
    other: &'c std::collections::HashSet<char>,
}

impl<'c> Punct<'c> {
    pub(crate) fn new(set: &'c std::collections::HashSet<char>) -> Self {
        let mut ascii = [false; 128];
        for &c in set.iter().filter(|c| c.is_ascii()) {
            ascii[c as usize] = true;
        }
        Punct { ascii, other: set }
    }

    fn has(&self, c: char) -> bool {
        if c.is_ascii() {
            self.ascii[c as usize]
        } else {
            self.other.contains(&c)
        }
    }
}

/// A lowercased term without a plural `s` (words of 4+ characters).
fn single(term: &str) -> &str {
    if term.chars().take(4).count() > 3 && term.ends_with(['s', 'S']) {
        &term[..term.len() - 1]
    } else {
        term
    }
}

struct Sentence<'t> {
    words: Vec<&'t str>,
    /// The words lowercased; [`single`] of each is its term.
    lc: Vec<String>,
    tags: Vec<Tag>,
}

/// How often each term stands right before and right after others.
#[derive(Default)]
struct Neighbours<'s> {
    left: HashMap<&'s str, usize>,
    right: HashMap<&'s str, usize>,
}

#[derive(Default)]
struct Contexts<'s> {
    map: HashMap<&'s str, Neighbours<'s>>,
}

impl<'s> Contexts<'s> {
    fn track(&mut self, left: &'s str, right: &'s str) {
        *self.map.entry(right).or_default().left.entry(left).or_default() += 1;
        *self.map.entry(left).or_default().right.entry(right).or_default() += 1;
    }

    /// Times `term` stands right before `by`.
    fn followed(&self, term: &str, by: &str) -> usize {
        self.map.get(term).and_then(|n| n.right.get(by)).copied().unwrap_or(0)
    }

    /// Distinct neighbours over all neighbours, left and right (0 fixed, 1 dispersive).
    fn dispersion(&self, term: &str) -> (f64, f64) {
        let ratio = |m: &HashMap<&str, usize>| {
            let total: usize = m.values().sum();
            if total == 0 {
                0.0
            } else {
                m.len() as f64 / total as f64
            }
        };
        self.map.get(term).map_or((0.0, 0.0), |n| (ratio(&n.left), ratio(&n.right)))
    }
}

/// One term's occurrences: sentence index and tag.
type Occurrences = Vec<(usize, Tag)>;

/// Term scores (lower is better) and frequencies.
type Features<'s> = HashMap<&'s str, (f64, f64)>;

pub(crate) struct Yake<'c> {
    pub(crate) stop: &'c StopWords,
    pub(crate) config: &'c Config,
    pub(crate) punct: Punct<'c>,
}

impl Yake<'_> {
    fn is_stopword(&self, lc: &str) -> bool {
        let s = single(lc);
        self.stop.contains(lc) || self.stop.contains(s) || s.chars().filter(|&c| !self.punct.has(c)).count() < 3
    }

    pub(crate) fn best(&self, text: &str, n: usize) -> Vec<Keyphrase> {
        let sentences = self.preprocess(text);
        if sentences.is_empty() {
            return vec![];
        }
        let (ctx, vocabulary) = self.context_and_vocabulary(&sentences);
        let features = self.features(&ctx, &vocabulary, &sentences);
        let candidates = self.ngrams(&sentences);
        let mut scored: Vec<(f64, &[String], &Candidate)> =
            candidates.iter().map(|(&lc, c)| (self.weight(&features, &ctx, lc, c.occurrences), lc, c)).collect();
        // Stable: equal scores keep their order of first occurrence.
        scored.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Only the phrases dedupe looks at are spelled out.
        let spelled =
            scored.into_iter().map(|(score, lc, c)| Keyphrase { keyword: lc.join(" "), raw: c.raw.join(" "), score });
        dedupe(self.config.deduplication_threshold, spelled, n)
    }

    fn preprocess<'t>(&self, text: &'t str) -> Vec<Sentence<'t>> {
        sentences(text)
            .into_iter()
            .map(|s| {
                let words = words(s);
                let lc: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
                let tags = words.iter().enumerate().map(|(i, w)| Tag::of(w, i == 0, &self.punct)).collect();
                Sentence { words, lc, tags }
            })
            .filter(|s| !s.words.is_empty())
            .collect()
    }

    fn context_and_vocabulary<'s>(&self, sentences: &'s [Sentence]) -> (Contexts<'s>, HashMap<&'s str, Occurrences>) {
        let mut ctx = Contexts::default();
        let mut vocabulary: HashMap<&str, Occurrences> = HashMap::new();
        for (idx, s) in sentences.iter().enumerate() {
            let mut window: VecDeque<(&str, Tag)> = VecDeque::with_capacity(self.config.window_size + 1);
            for (term, &tag) in s.lc.iter().map(|w| single(w)).zip(&s.tags) {
                if tag == Tag::Punctuation {
                    window.clear();
                    continue;
                }
                vocabulary.entry(term).or_default().push((idx, tag));
                if tag != Tag::Digit && tag != Tag::Unparsable {
                    for &(left, left_tag) in &window {
                        if left_tag != Tag::Digit && left_tag != Tag::Unparsable {
                            ctx.track(left, term);
                        }
                    }
                }
                if window.len() == self.config.window_size {
                    window.pop_front();
                }
                window.push_back((term, tag));
            }
        }
        (ctx, vocabulary)
    }

    /// Each term's score (relatedness x position over casing, frequency
    /// and spread) and frequency.
    fn features<'s>(
        &self,
        ctx: &Contexts,
        vocabulary: &HashMap<&'s str, Occurrences>,
        sentences: &'s [Sentence],
    ) -> Features<'s> {
        let mut terms: IndexMap<&str, &str> = IndexMap::default();
        for s in sentences {
            for (lc, &tag) in s.lc.iter().zip(&s.tags) {
                if tag != Tag::Punctuation {
                    terms.insert(lc.as_str(), single(lc));
                }
            }
        }
        let tfs: Vec<f64> = {
            let mut seen: HashSet<&str> = HashSet::new();
            terms
                .iter()
                .filter(|(lc, _)| !self.is_stopword(lc))
                .filter(|(_, uq)| seen.insert(uq))
                .map(|(_, uq)| vocabulary.get(uq).map_or(0, Vec::len) as f64)
                .collect()
        };
        let mean = if tfs.is_empty() { 0.0 } else { tfs.iter().sum::<f64>() / tfs.len() as f64 };
        let std = if tfs.is_empty() {
            0.0
        } else {
            (tfs.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / tfs.len() as f64).sqrt()
        };
        let max_tf = vocabulary.values().map(Vec::len).max().unwrap_or(0) as f64;
        let mut features = Features::new();
        for (_, uq) in terms {
            let Some(occ) = vocabulary.get(uq) else { continue };
            let tf = occ.len() as f64;
            let acronyms = occ.iter().filter(|o| o.1 == Tag::Acronym).count() as f64;
            let capitals = occ.iter().filter(|o| o.1 == Tag::Uppercase).count() as f64;
            let casing = acronyms.max(capitals) / (1.0 + tf.ln());
            let mut ids: Vec<usize> = occ.iter().map(|o| o.0).collect();
            ids.dedup();
            let position = (3.0 + median(&ids)).ln().ln();
            let frequency = tf / (mean + std);
            let (dl, dr) = ctx.dispersion(uq);
            let relatedness = 1.0 + (dr + dl) * (tf / max_tf);
            let spread = ids.len() as f64 / sentences.len() as f64;
            let score = (relatedness * position) / (casing + frequency / relatedness + spread / relatedness);
            features.insert(uq, (score, tf));
        }
        features
    }

    /// A candidate's score: the product of its terms' scores over its
    /// frequency times (1 + their sum); a stopword inside counts by how
    /// often it binds its neighbours.
    fn weight(&self, features: &Features, ctx: &Contexts, lc: &[String], occurrences: usize) -> f64 {
        let (mut prod, mut sum) = (1.0, 0.0);
        // The j-th word's term (no copy: a prefix of the lowercased word).
        let uq = |j: usize| lc.get(j).map(|w| single(w));
        for (j, word) in lc.iter().enumerate() {
            let term = single(word);
            if self.is_stopword(word) {
                let tf = |t: &str| features.get(t).map_or(1.0, |f| f.1);
                let prev = j.checked_sub(1).and_then(uq).map_or(0.0, |p| ctx.followed(p, term) as f64 / tf(p));
                let next = uq(j + 1).map_or(0.0, |n| ctx.followed(term, n) as f64 / tf(n));
                let prob = prev * next;
                prod *= 1.0 + (1.0 - prob);
                sum -= 1.0 - prob;
            } else if let Some(f) = features.get(term) {
                prod *= f.0;
                sum += f.0;
            }
        }
        if sum == -1.0 {
            sum = 0.999999999;
        }
        prod / (occurrences as f64 * (1.0 + sum))
    }

    fn is_candidate(&self, lc: &[String], tags: &[Tag]) -> bool {
        let bad = tags.iter().any(|t| matches!(t, Tag::Digit | Tag::Punctuation | Tag::Unparsable))
            || lc.last().is_none_or(|l| self.is_stopword(l))
            || lc.iter().map(|w| w.chars().count()).sum::<usize>() < self.config.minimum_chars;
        !bad
    }

    /// Candidate n-grams (1..=ngrams words, not starting or ending in a
    /// stopword, no number or punctuation) in order of first occurrence.
    fn ngrams<'s>(&self, sentences: &'s [Sentence]) -> IndexMap<&'s [String], Candidate<'s>> {
        let mut candidates: IndexMap<&[String], Candidate> = IndexMap::default();
        let mut ignored: HashSet<&[String]> = HashSet::new();
        for s in sentences {
            for j in 0..s.words.len() {
                if self.is_stopword(&s.lc[j]) {
                    continue;
                }
                for k in (j + 1..=s.words.len()).take(self.config.ngrams) {
                    let lc = &s.lc[j..k];
                    if ignored.contains(lc) {
                        continue;
                    }
                    if !self.is_candidate(lc, &s.tags[j..k]) {
                        ignored.insert(lc);
                        continue;
                    }
                    candidates
                        .entry(lc)
                        .or_insert_with(|| Candidate { occurrences: 0, raw: &s.words[j..k] })
                        .occurrences += 1;
                }
            }
        }
        candidates
    }
}

struct Candidate<'s> {
    occurrences: usize,
    raw: &'s [&'s str],
}

/// The median of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[usize]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 0 => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
        n => sorted[n / 2] as f64,
    }
}

/// The best `n`, leaving out one too similar (Levenshtein ratio above
/// `threshold`) to one already taken. The distance is at least the
/// difference in characters, so a pair whose lengths alone keep the ratio
/// at or under `threshold` is never measured.
fn dedupe(threshold: f64, scored: impl Iterator<Item = Keyphrase>, n: usize) -> Vec<Keyphrase> {
    let mut out: Vec<(Keyphrase, usize)> = Vec::new();
    for k in scored {
        if out.len() >= n {
            break;
        }
        let chars = k.keyword.chars().count();
        let similar = out.iter().any(|(o, o_chars)| {
            let len = o.keyword.len().max(k.keyword.len()).max(1) as f64;
            let bound = 1.0 - o_chars.abs_diff(chars) as f64 / len;
            bound > threshold && 1.0 - strsim::levenshtein(&o.keyword, &k.keyword) as f64 / len > threshold
        });
        if !similar {
            out.push((k, chars));
        }
    }
    out.into_iter().map(|(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_yake() {
        let cfg = Config::default();
        let p = Punct::new(&cfg.punctuation);
        assert_eq!(Tag::of("3,141.5", false, &p), Tag::Digit);
        assert_eq!(Tag::of("--", false, &p), Tag::Punctuation);
        assert_eq!(Tag::of("B2C", false, &p), Tag::Unparsable);
        assert_eq!(Tag::of("a.b-c", false, &p), Tag::Unparsable);
        assert_eq!(Tag::of("NASA", false, &p), Tag::Acronym);
        assert_eq!(Tag::of("Paypal", false, &p), Tag::Uppercase);
        assert_eq!(Tag::of("Paypal", true, &p), Tag::Parsable);
        assert_eq!(Tag::of("PayPal", false, &p), Tag::Parsable);
        assert_eq!(Tag::of("high-tech", false, &p), Tag::Parsable);
    }

    #[test]
    fn dedupe_skips_only_pairs_whose_lengths_decide() {
        let k = |w: &str| Keyphrase { keyword: w.into(), raw: w.into(), score: 0.0 };
        let words = ["data science", "data sciences", "kaggle", "kagglé", "science", "data scientists"];
        let got: Vec<String> = dedupe(0.9, words.iter().map(|w| k(w)), 10).into_iter().map(|k| k.keyword).collect();
        // Without the length bound: every pair measured.
        let mut want: Vec<&str> = Vec::new();
        for w in words {
            let similar = want.iter().any(|o| {
                let len = o.len().max(w.len()) as f64;
                1.0 - strsim::levenshtein(o, w) as f64 / len > 0.9
            });
            if !similar {
                want.push(w);
            }
        }
        assert_eq!(got, want);
        assert_eq!(got, ["data science", "kaggle", "kagglé", "science", "data scientists"]);
    }

    #[test]
    fn median_and_single() {
        assert_eq!(median(&[0, 2, 5]), 2.0);
        assert_eq!(median(&[1, 2]), 1.5);
        assert_eq!(single("files"), "file");
        assert_eq!(single("bus"), "bus");
    }
}
