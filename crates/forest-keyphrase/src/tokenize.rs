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

/// Punctuation that splits a chunk of text even inside it ("a,b", "f(x)").
fn is_breaking(c: char) -> bool {
    matches!(
        c,
        ',' | ';'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '"'
            | '<'
            | '>'
            | '!'
            | '?'
            | '\u{201C}'
            | '\u{201D}'
            | '\u{2018}'
            | '\u{00AB}'
            | '\u{00BB}'
            | '\u{2026}'
            | '|'
    )
}

/// The sentences of `text`, trimmed, none empty. A sentence ends at `.`,
/// `!` or `?` (with closing quotes or brackets after it) that stands
/// before white space and then a capital letter, a digit, an opening
/// quote or bracket, or a line break; and at an empty line. A full stop
/// after an abbreviation or a single initial ends nothing.
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
            let opens = next.is_none_or(|n| {
                newline
                    || n.is_uppercase()
                    || n.is_ascii_digit()
                    || matches!(n, '"' | '\'' | '(' | '[' | '\u{201C}' | '\u{2018}')
            });
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

/// The word tokens of one sentence: white space separates, leading and
/// trailing punctuation and breaking punctuation inside (`,;()[]"!?`...)
/// are tokens of one character; hyphens, underscores, dots, slashes and
/// apostrophes inside a word stay (`high-tech`, `snake_case`, `v1.2`,
/// `a/b`); a contraction's clitic is split off and dropped (`it's` ->
/// `it`, `don't` -> `do`), as YAKE drops tokens that start with one.
pub fn words(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for chunk in sentence.split_whitespace() {
        let mut rest = chunk;
        loop {
            match rest.find(is_breaking) {
                Some(0) => {
                    let n = rest.chars().next().map_or(1, char::len_utf8);
                    out.push(&rest[..n]);
                    rest = &rest[n..];
                }
                Some(at) => {
                    piece(&rest[..at], &mut out);
                    rest = &rest[at..];
                }
                None => {
                    piece(rest, &mut out);
                    break;
                }
            }
        }
    }
    out
}

/// One piece between breaking punctuation: leading and trailing
/// punctuation as single tokens around the word, its clitic dropped.
fn piece<'t>(piece: &'t str, out: &mut Vec<&'t str>) {
    if piece.is_empty() {
        return;
    }
    let word_start = piece.find(|c: char| c.is_alphanumeric()).unwrap_or(piece.len());
    for (at, c) in piece[..word_start].char_indices() {
        out.push(&piece[at..at + c.len_utf8()]);
    }
    if word_start == piece.len() {
        return;
    }
    let word_end = piece
        .rfind(|c: char| c.is_alphanumeric())
        .map_or(piece.len(), |at| at + piece[at..].chars().next().map_or(1, char::len_utf8));
    let mut word = &piece[word_start..word_end];
    let mut tail = &piece[word_end..];
    // "e.g." and "U.S." keep their last full stop.
    if tail.starts_with('.') && word.contains('.') && word.len() <= 4 {
        word = &piece[word_start..word_end + 1];
        tail = &tail[1..];
    }
    out.push(strip_clitic(word));
    for (at, c) in tail.char_indices() {
        out.push(&tail[at..at + c.len_utf8()]);
    }
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
    fn sentences_split_at_terminals_before_capitals_and_lines() {
        assert_eq!(
            sentences("One smartwatch. One phone. Many phones."),
            ["One smartwatch.", "One phone.", "Many phones."]
        );
        assert_eq!(sentences("Heading.\nsome text follows here."), ["Heading.", "some text follows here."]);
        assert_eq!(sentences("first part\n\nsecond part"), ["first part", "second part"]);
        assert_eq!(sentences("Is it? Yes! \"Quoted\" too."), ["Is it?", "Yes!", "\"Quoted\" too."]);
    }

    #[test]
    fn sentences_keep_abbreviations_versions_and_initials() {
        assert_eq!(
            sentences("Use e.g. Python 3.11 here. J. Smith wrote it."),
            ["Use e.g. Python 3.11 here.", "J. Smith wrote it."]
        );
        assert_eq!(sentences("see file.txt for more. done"), ["see file.txt for more. done"]);
        assert_eq!(sentences("U.S. Army docs."), ["U.S. Army docs."]);
        assert!(sentences("").is_empty());
        assert!(sentences(" \n\n ").is_empty());
    }

    #[test]
    fn words_split_punctuation_and_keep_identifiers() {
        assert_eq!(words("Truly high-tech!"), ["Truly", "high-tech", "!"]);
        assert_eq!(
            words("(see snake_case, v1.2 and a/b)."),
            ["(", "see", "snake_case", ",", "v1.2", "and", "a/b", ")", "."]
        );
        assert_eq!(words("f(x);g"), ["f", "(", "x", ")", ";", "g"]);
        assert_eq!(words("e.g. this"), ["e.g.", "this"]);
        assert_eq!(words("\u{201C}Pango\u{201D} — text"), ["\u{201C}", "Pango", "\u{201D}", "—", "text"]);
        assert_eq!(words("--- ..."), ["-", "-", "-", ".", ".", "."]);
    }

    #[test]
    fn words_drop_clitics() {
        assert_eq!(words("it's the user's, we're here; don't"), ["it", "the", "user", ",", "we", "here", ";", "do"]);
        assert_eq!(words("rock'n'roll O'Neil"), ["rock'n'roll", "O'Neil"]);
        assert_eq!(words("'s n't"), ["'", "s", "n"]);
    }
}
