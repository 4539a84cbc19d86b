//! Sentences and words without regular expressions. YAKE needs sentence
//! indices (position, spread) and word tokens with punctuation as tokens of
//! their own (punctuation breaks candidates and co-occurrence windows).
//! `segtok`, which `yake-rust` uses, gets both from backtracking regexes at
//! ~1 ms per kilobyte; this is one pass over the characters.

/// Words that end in a full stop without ending a sentence.
const ABBREVIATIONS: [&str; 24] = [
    "e.g", "i.e", "etc", "vs", "cf", "al", "approx", "dr", "mr", "mrs", "ms", "prof", "st", "no", "nos", "fig", "figs",
    "vol", "ch", "sec", "resp", "inc", "ltd", "jr",
];

/// Characters that stand for an apostrophe in contractions.
fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{00B4}' | '\u{02BC}')
}

/// The sentences of `text`, trimmed, none empty. A sentence ends at `.`,
/// `!` or `?` (with closing quotes or brackets after it) that stands
/// before white space and a word (not `,;:)]`), and at an empty line. A
/// full stop after an abbreviation or a single initial ends nothing.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        if c == '\n' && chars.get(i + 1).is_some_and(|&(_, n)| n == '\n') {
            push_trimmed(&mut out, &text[start..at]);
            while i < chars.len() && chars[i].1.is_whitespace() {
                i += 1;
            }
            start = chars.get(i).map_or(text.len(), |&(a, _)| a);
            continue;
        }
        if matches!(c, '.' | '!' | '?') {
            let mut j = i + 1;
            while j < chars.len()
                && matches!(chars[j].1, '.' | '!' | '?' | '"' | '\'' | ')' | ']' | '\u{201D}' | '\u{2019}')
            {
                j += 1;
            }
            let end = chars.get(j).map_or(text.len(), |&(a, _)| a);
            let mut k = j;
            let mut newline = false;
            while k < chars.len() && chars[k].1.is_whitespace() {
                newline |= chars[k].1 == '\n';
                k += 1;
            }
            let next = chars.get(k).map(|&(_, n)| n);
            let opens = next.is_none_or(|n| newline || !matches!(n, ',' | ';' | ':' | ')' | ']'));
            if k > j && opens && !(c == '.' && abbreviated(&text[start..at])) {
                push_trimmed(&mut out, &text[start..end]);
                start = chars.get(k).map_or(text.len(), |&(a, _)| a);
                i = k;
                continue;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    push_trimmed(&mut out, &text[start..]);
    out
}

fn push_trimmed<'t>(out: &mut Vec<&'t str>, s: &'t str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s);
    }
}

/// True when the text before a full stop ends in an abbreviation or a
/// single letter (an initial: "J. Smith", "U.S.").
fn abbreviated(before: &str) -> bool {
    let word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    let lower = word.to_lowercase();
    let single = word.chars().count() == 1 && word.chars().all(char::is_alphabetic);
    single || ABBREVIATIONS.contains(&lower.as_str()) || (lower.len() <= 4 && lower.contains('.'))
}

/// The word tokens of one sentence, as `segtok` (the tokenizer of the
/// YAKE ports) cuts them: white space separates; a word is letters and
/// digits joined by single hyphens, apostrophes or full stops (`high-tech`,
/// `O'Neil`, `v1.2`, `e.g.`); every other run of symbols is one token
/// (`(`, `](`, `_`, `/`), so `snake_case` is `snake _ case`; a chunk with
/// `://` (a URL) stays whole; a contraction's clitic is dropped (`it's` ->
/// `it`, `don't` -> `do`), as YAKE drops tokens that start with one.
pub fn words(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for chunk in sentence.split_whitespace() {
        if chunk.contains("://") {
            out.push(chunk);
            continue;
        }
        let next = |p: usize| chunk[p..].chars().next();
        let mut p = 0;
        while let Some(c) = next(p) {
            let start = p;
            if c.is_alphanumeric() {
                while let Some(c) = next(p) {
                    let after = p + c.len_utf8();
                    let joins = matches!(c, '-' | '.') || is_apostrophe(c);
                    if c.is_alphanumeric() || (joins && next(after).is_some_and(char::is_alphanumeric)) {
                        p = after;
                    } else {
                        break;
                    }
                }
                let word = &chunk[start..p];
                // "e.g." and "U.S." keep their last full stop.
                if next(p) == Some('.') && word.contains('.') && word.len() <= 4 {
                    p += 1;
                    out.push(&chunk[start..p]);
                } else {
                    out.push(strip_clitic(word));
                }
            } else {
                while let Some(c) = next(p).filter(|c| !c.is_alphanumeric()) {
                    p += c.len_utf8();
                }
                out.push(&chunk[start..p]);
            }
        }
    }
    out
}

/// `it's` -> `it`, `we're` -> `we`, `don't` -> `do`; other words as they are.
fn strip_clitic(word: &str) -> &str {
    let Some((at, _)) = word.char_indices().rev().find(|&(_, c)| is_apostrophe(c)) else {
        return word;
    };
    let clitic = &word[at..];
    let after: String = clitic.chars().skip(1).collect::<String>().to_lowercase();
    if !matches!(after.as_str(), "s" | "re" | "ve" | "ll" | "d" | "m" | "t") || at == 0 {
        return word;
    }
    let stem = &word[..at];
    if after == "t" {
        return stem.strip_suffix(['n', 'N']).filter(|s| !s.is_empty()).unwrap_or(stem);
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_at_terminals_and_empty_lines() {
        assert_eq!(
            sentences("One smartwatch. One phone. Many phones."),
            ["One smartwatch.", "One phone.", "Many phones."]
        );
        assert_eq!(sentences("Heading.\nsome text follows here."), ["Heading.", "some text follows here."]);
        assert_eq!(sentences("Two three. four five."), ["Two three.", "four five."]);
        assert_eq!(sentences("first part\n\nsecond part"), ["first part", "second part"]);
        assert_eq!(sentences("Is it? Yes! \"Quoted\" too."), ["Is it?", "Yes!", "\"Quoted\" too."]);
    }

    #[test]
    fn sentences_keep_abbreviations_versions_and_initials() {
        assert_eq!(
            sentences("Use e.g. Python 3.11 here. J. Smith wrote it."),
            ["Use e.g. Python 3.11 here.", "J. Smith wrote it."]
        );
        assert_eq!(sentences("The U.S. Army. See Fig. 3 here."), ["The U.S. Army.", "See Fig. 3 here."]);
        assert_eq!(sentences("one line\nanother line"), ["one line\nanother line"]);
        assert!(sentences("").is_empty());
        assert!(sentences(" \n\n ").is_empty());
    }

    #[test]
    fn words_cut_as_segtok_does() {
        // Each expectation is segtok's (web_tokenizer + split_contractions) on the same text.
        assert_eq!(words("Truly high-tech!"), ["Truly", "high-tech", "!"]);
        assert_eq!(
            words("core_metadata and __init__ here"),
            ["core", "_", "metadata", "and", "__", "init", "__", "here"]
        );
        assert_eq!(words(":mod:`idna` package"), [":", "mod", ":`", "idna", "`", "package"]);
        assert_eq!(
            words("idna.idnadata a/b v1.2 e.g. snake_case"),
            ["idna.idnadata", "a", "/", "b", "v1.2", "e.g.", "snake", "_", "case"]
        );
        assert_eq!(words("see http://x.org/a_b now"), ["see", "http://x.org/a_b", "now"]);
        assert_eq!(words("foo(bar) x=y C++"), ["foo", "(", "bar", ")", "x", "=", "y", "C", "++"]);
        assert_eq!(
            words("\"quoted\" [link](url) --flag -x"),
            ["\"", "quoted", "\"", "[", "link", "](", "url", ")", "--", "flag", "-", "x"]
        );
    }

    #[test]
    fn words_drop_clitics() {
        assert_eq!(words("it's the user's, we're here; don't"), ["it", "the", "user", ",", "we", "here", ";", "do"]);
        assert_eq!(words("rock'n'roll O'Neil"), ["rock'n'roll", "O'Neil"]);
        assert_eq!(words("--- ..."), ["---", "..."]);
    }
}
