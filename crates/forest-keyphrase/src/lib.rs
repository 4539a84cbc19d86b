//! Keyphrases of one document without a corpus: YAKE (`yake.rs`) over a
//! tokenizer that costs microseconds ([`words`], [`sentences`]). The Gardener's leaf
//! tags come from here (issue 26); `yake-rust`'s own extractor gave the
//! same kind of phrases but its `segtok` tokenizer took ~54% of the CPU
//! of a 10^4-file adopt (docs/decisions/keyphrase-port.md).
//!
//! Pure functions over a string: no I/O, no global state besides the
//! stopword lists, loaded once.

mod tokenize;
mod yake;

pub use tokenize::{sentences, words};

use once_cell::sync::Lazy;
use std::collections::{HashMap, HashSet};

/// A lowercased set of words that never start or end a keyphrase
/// (`hashbrown`'s set: its hasher is several times faster than std's
/// SipHash on the short words YAKE looks up for every token).
pub type StopWords = hashbrown::HashSet<String>;

/// Languages with a stopword list (ISO 639-1), the YAKE reference's lists.
pub const LANGUAGES: [&str; 7] = ["en", "pt", "es", "fr", "de", "it", "nl"];

static STOPWORDS: Lazy<HashMap<&'static str, StopWords>> = Lazy::new(|| {
    LANGUAGES
        .into_iter()
        .filter_map(|l| yake_rust::StopWords::predefined(l).map(|s| (l, s.iter().cloned().collect())))
        .collect()
});

/// The stopword list for an ISO 639-1 language code, if there is one.
pub fn stopwords(lang: &str) -> Option<&'static StopWords> {
    STOPWORDS.get(lang)
}

/// How keyphrases are chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Words a keyphrase holds at most.
    pub ngrams: usize,
    /// Characters that count as punctuation.
    pub punctuation: HashSet<char>,
    /// Words on each side that count as a term's context.
    pub window_size: usize,
    /// Characters a keyphrase holds at least.
    pub minimum_chars: usize,
    /// Two keyphrases this similar (Levenshtein ratio, 0..1) are one.
    pub deduplication_threshold: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ngrams: 3,
            punctuation: r##"!"#$%&'()*+,-./:,<=>?@[\]^_`{|}~"##.chars().collect(),
            window_size: 1,
            minimum_chars: 3,
            deduplication_threshold: 0.9,
        }
    }
}

/// One keyphrase: lowercased, as first written, and its score (lower is better).
#[derive(Debug, Clone, PartialEq)]
pub struct Keyphrase {
    /// The words, lower case, joined by one space.
    pub keyword: String,
    /// The words as first written.
    pub raw: String,
    /// YAKE's score: lower is more telling.
    pub score: f64,
}

/// The best `n` keyphrases of `text`, best first.
pub fn keyphrases(text: &str, stop: &StopWords, config: &Config, n: usize) -> Vec<Keyphrase> {
    yake::Yake { stop, config, punct: yake::Punct::new(&config.punctuation) }.best(text, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOGLE: &str = "Google is acquiring data science community Kaggle. Sources tell us that Google is \
        acquiring Kaggle, a platform that hosts data science and machine learning competitions. Details about \
        the transaction remain somewhat vague, but given that Google is hosting its Cloud Next conference in \
        San Francisco this week, the official announcement could come as early as tomorrow. Reached by phone, \
        Kaggle co-founder CEO Anthony Goldbloom declined to deny that the acquisition is happening. Google \
        itself declined 'to comment on rumors'. Kaggle, which has about half a million data scientists on its \
        platform, was founded by Goldbloom and Ben Hamner in 2010.";

    #[test]
    fn finds_what_the_reference_finds() {
        let stop = stopwords("en").expect("english list");
        let got: Vec<String> = keyphrases(GOOGLE, stop, &Config::default(), 5).into_iter().map(|k| k.keyword).collect();
        // `yake-rust` (whose results agree with the YAKE reference) on the same text.
        let ys = yake_rust::StopWords::predefined("en").expect("list");
        let want: Vec<String> = yake_rust::get_n_best(5, GOOGLE, &ys, &yake_rust::Config::default())
            .into_iter()
            .map(|k| k.keyword)
            .collect();
        assert_eq!(got, want);
        assert_eq!(got[0], "science community kaggle");
    }

    #[test]
    fn hostile_text_gives_nothing_and_no_panic() {
        let stop = stopwords("en").expect("english list");
        let cfg = Config::default();
        for text in ["", " ", "...", "1 2 3", "a", "the of and", "\u{0}\u{1}", "ñ", "«»"] {
            assert!(keyphrases(text, stop, &cfg, 5).is_empty(), "{text:?}");
        }
        let long = "word ".repeat(20_000);
        assert!(keyphrases(&long, stop, &cfg, 5).iter().all(|k| k.keyword.starts_with("word")));
    }

    #[test]
    fn results_are_ordered_and_deduplicated() {
        let stop = stopwords("en").expect("english list");
        let got = keyphrases(GOOGLE, stop, &Config { ngrams: 2, ..Config::default() }, 20);
        assert!(got.windows(2).all(|w| w[0].score <= w[1].score));
        assert!(got.iter().all(|k| k.keyword.split(' ').count() <= 2));
        let mut seen = HashSet::new();
        assert!(got.iter().all(|k| seen.insert(k.keyword.clone())));
    }

    #[test]
    fn every_language_has_a_list() {
        for l in LANGUAGES {
            assert!(stopwords(l).is_some_and(|s| s.len() > 100), "{l}");
        }
        assert!(stopwords("xx").is_none());
    }
}
#[cfg(test)]
mod agreement {
    //! Agreement with `yake-rust`'s extractor (segtok tokenizer) on files
    //! people wrote: the fixture forest's pages.
    use std::path::Path;

    /// Mean share of `yake-rust`'s top 5 that ours also has in its top 5.
    fn agreement(texts: &[String]) -> f64 {
        let stop = super::stopwords("en").expect("list");
        let cfg = super::Config { ngrams: 2, ..Default::default() };
        let ys = yake_rust::StopWords::predefined("en").expect("list");
        let yc = yake_rust::Config { ngrams: 2, minimum_chars: 3, ..Default::default() };
        let mut sum = 0.0;
        for t in texts {
            let ours: Vec<String> = super::keyphrases(t, stop, &cfg, 5).into_iter().map(|k| k.keyword).collect();
            let theirs: Vec<String> = yake_rust::get_n_best(5, t, &ys, &yc).into_iter().map(|k| k.keyword).collect();
            let shared = theirs.iter().filter(|k| ours.contains(k)).count();
            sum += shared as f64 / theirs.len().max(1) as f64;
        }
        sum / texts.len().max(1) as f64
    }

    /// The pages people wrote: checked-in `.md` files, not what a run
    /// derives beside them (`_derived/`, hidden folders), which another
    /// test's process may be writing or removing at the same moment.
    fn bodies(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).expect("fixture dir").flatten() {
            let p = e.path();
            let name = e.file_name();
            let derived = name == "_derived" || name.to_string_lossy().starts_with('.');
            if p.is_dir() && !derived {
                bodies(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                let text = std::fs::read_to_string(&p).expect("utf-8 page");
                let body = text.splitn(3, "---\n").nth(2).unwrap_or(&text).to_string();
                out.push(body);
            }
        }
    }

    #[test]
    fn agrees_with_yake_rust_on_the_fixture_pages() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures/fixture-forest");
        let mut texts = Vec::new();
        bodies(&root, &mut texts);
        assert!(texts.len() >= 20, "{} pages", texts.len());
        let a = agreement(&texts);
        assert!(a >= 0.85, "top-5 agreement {a:.3}");
    }
}
