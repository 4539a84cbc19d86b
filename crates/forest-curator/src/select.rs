//! Structure-aware input selection (issue 35): what of a document the
//! model reads for its leaf summary.
//!
//! The first N tokens of a converted manual are its title pages, licence
//! and table of contents; the model learns nothing from them. Instead the
//! model reads the document's outline (headings H1-H3), the first real
//! paragraph of each main section and its tables (caption, header row
//! and first rows), in document order, within a content budget. Front matter, tables of contents, licence and acknowledgement
//! sections, page furniture and code-like text are skipped (the line
//! classes of [`forest_model::extract::blocks`] and the boilerplate weight
//! of [`forest_model::extract::sentence_weight`]). A body with no such
//! structure (code, raw data) falls back to its lead, clipped by lines.
//!
//! Pure: no I/O; linear in the body.

use forest_model::extract::{blocks, sentence_weight, BlockKind};
use forest_model::sentences::split_sentences;
use forest_model::tokens::estimate_tokens;
use once_cell::sync::Lazy;
use regex::Regex;

/// Deepest heading level of the outline the model sees.
pub const OUTLINE_DEPTH: usize = 3;
/// Share of the budget the outline may take before paragraphs (2/5).
const OUTLINE_SHARE: (usize, usize) = (2, 5);
/// A paragraph below this weight says nothing (licence, furniture, lists of numbers).
const MIN_WEIGHT: f64 = 0.3;
/// Words of a real paragraph at least.
const MIN_WORDS: usize = 5;
/// Tokens of one paragraph per round at most (the next round adds the next paragraph).
const PARA_MAX: usize = 120;
/// Tokens of a paragraph worth adding at all.
const PARA_MIN: usize = 16;
/// Tokens of a table (caption, header row, first rows) at most.
const TABLE_MAX: usize = 60;
/// Rows of a table shown at most, header included.
const TABLE_ROWS: usize = 4;
/// Table captions per section at most.
const CAPTIONS_PER_SECTION: usize = 2;
/// A block of this many words that is not a real paragraph is searched for real sentences.
const SALVAGE_WORDS: usize = 60;
/// Real sentences salvaged from one such block at most.
const SALVAGE_SENTENCES: usize = 6;
/// Below this many tokens the selection found no structure: the lead is used instead.
const MIN_SELECTED: usize = 8;

/// Words of a heading whose section is never the subject of a document.
const SKIP_HEADINGS: [&str; 17] = [
    "contents",
    "table of contents",
    "licen",
    "copyright",
    "acknowledg",
    "bibliograph",
    "trademark",
    "colophon",
    "disclaimer",
    "legal notice",
    "list of figures",
    "list of tables",
    "revision history",
    "document history",
    "about this document",
    "permissions",
    "gnu free documentation",
];

/// One section of the body: its heading (None for the lead before the
/// first heading) and its text.
struct Section {
    level: usize,
    heading: Option<String>,
    text: String,
}

/// What the model reads of a section.
#[derive(Default)]
struct Picked {
    heading: Option<(usize, String)>,
    paras: Vec<String>,
    captions: Vec<String>,
}

/// The input of a leaf summary: `body`'s outline, first real paragraphs
/// and table captions within `budget` tokens (see the module doc).
/// `title` is given to the model apart: a first heading repeating it is
/// not repeated.
pub fn select_content(title: &str, body: &str, budget: usize) -> String {
    let sections = sections(strip_front_matter(body));
    let picked: Vec<Picked> = sections.iter().map(|s| pick(s, title)).collect();
    let text = fill(picked, budget);
    if estimate_tokens(&text) >= MIN_SELECTED.min(budget) {
        return text;
    }
    clip_to(strip_front_matter(body), budget)
}

/// Skip a leading YAML block (`---` ... `---`).
fn strip_front_matter(body: &str) -> &str {
    let Some(rest) = body.strip_prefix("---\n") else { return body };
    match rest.find("\n---\n") {
        Some(end) => &rest[end + 5..],
        None => body,
    }
}

/// ATX heading `(level, text)` of a line.
fn atx(line: &str) -> Option<(usize, &str)> {
    let l = line.trim_start();
    let level = l.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &l[level..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim()))
}

/// Split the body at its ATX headings (outside code fences). Sections
/// below [`OUTLINE_DEPTH`] stay part of their parent; a section whose
/// heading is boilerplate is dropped with everything below it.
fn sections(body: &str) -> Vec<Section> {
    let mut out = vec![Section { level: 0, heading: None, text: String::new() }];
    let prompts = shell_prompts(body);
    let mut fence = false;
    let mut skipping: Option<usize> = None;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
        }
        // A converted manual's shell prompt is text, not a heading.
        let prompt = |level: usize, text: &str| prompts && level == 1 && is_lower_start(text);
        let heading = atx(line).filter(|&(level, text)| !fence && !prompt(level, text));
        if let Some((level, text)) = heading {
            if skipping.is_some_and(|l| level > l) {
                continue;
            }
            skipping = None;
            if is_skipped_heading(text) {
                skipping = Some(level);
                continue;
            }
            if level <= OUTLINE_DEPTH {
                let heading = forest_model::extract::clean_inline(text);
                out.push(Section { level, heading: Some(heading), text: String::new() });
                continue;
            }
        }
        if skipping.is_none() {
            let cur = out.last_mut().expect("one section at least");
            cur.text.push_str(line);
            cur.text.push('\n');
        }
    }
    out
}

fn is_lower_start(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_lowercase() || "./~$".contains(c))
}

/// Whether the body's lowercase "H1s" are shell prompts (`# apt-get
/// update` in a converted manual): at least 5 of them, and at least half
/// of its H1s.
fn shell_prompts(body: &str) -> bool {
    let (mut h1, mut lower, mut fence) = (0usize, 0usize, false);
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
        }
        if let Some((1, text)) = atx(line).filter(|_| !fence) {
            h1 += 1;
            lower += usize::from(is_lower_start(text));
        }
    }
    lower >= 5 && lower * 2 >= h1
}

fn is_skipped_heading(h: &str) -> bool {
    let low = h.to_lowercase();
    let bare = low.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ').trim();
    bare == "index" || bare == "toc" || SKIP_HEADINGS.iter().any(|k| bare.contains(k))
}

/// Code, markup and scripts: many of `{}();=<>$\` among the characters.
fn looks_like_code(s: &str) -> bool {
    let n = s.chars().count().max(1);
    let marks = s.chars().filter(|c| "{}();=<>$\\".contains(*c)).count();
    marks * 100 / n >= 4
}

/// A paragraph that says something: prose or a list item of enough words,
/// not boilerplate, not code.
fn is_real(text: &str, kind: BlockKind) -> bool {
    kind != BlockKind::Heading
        && text.split_whitespace().count() >= MIN_WORDS
        && !looks_like_code(text)
        && sentence_weight(text, kind) >= MIN_WEIGHT
}

/// What of a block is a real paragraph: the block itself, or, in a long
/// block that is not (a web page flattened into one line of scripts,
/// syntax diagrams and prose), its real sentences.
fn real_part(text: &str, kind: BlockKind) -> Option<String> {
    if is_real(text, kind) {
        return Some(text.to_string());
    }
    if text.split_whitespace().count() < SALVAGE_WORDS {
        return None;
    }
    let kept: Vec<String> =
        split_sentences(text).into_iter().filter(|s| is_real(s, kind)).take(SALVAGE_SENTENCES).collect();
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// A table's caption line (`Table 3: ...`, `Tableau 2 - ...`).
fn caption_of(line: &str) -> Option<String> {
    let l = line.trim().trim_start_matches(['*', '_']);
    let low = l.to_lowercase();
    let word = ["table ", "tableau ", "tabla ", "tabelle ", "tabella "].iter().find(|w| low.starts_with(*w))?;
    let after = &l[word.len()..];
    let num = after.chars().next().is_some_and(|c| c.is_ascii_digit() || "IVX".contains(c));
    num.then(|| forest_model::extract::clean_inline(l))
}

/// A section's tables as the model sees them: the caption line when there
/// is one, the header row and the first rows, within [`TABLE_MAX`] tokens.
fn captions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_table = false;
    let mut open_caption = false;
    let mut rows = 0;
    for line in text.lines() {
        let l = line.trim();
        if let Some(c) = caption_of(l) {
            out.push(c);
            (open_caption, in_table) = (true, false);
            continue;
        }
        let row = l.starts_with('|');
        if !row {
            in_table = false;
            open_caption &= l.is_empty();
            continue;
        }
        if l.chars().all(|c| "|-: ".contains(c)) {
            continue;
        }
        let row_text = l.split_whitespace().collect::<Vec<_>>().join(" ");
        if !in_table && !open_caption {
            out.push(String::new());
            rows = 0;
        }
        (in_table, open_caption) = (true, false);
        let Some(item) = out.last_mut() else { continue };
        let cand = if item.is_empty() { row_text } else { format!("{item}\n{row_text}") };
        if rows < TABLE_ROWS && estimate_tokens(&cand) <= TABLE_MAX {
            *item = cand;
            rows += 1;
        }
    }
    out.retain(|t| t.chars().any(char::is_alphabetic));
    out.truncate(CAPTIONS_PER_SECTION);
    out
}

fn same_words(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    norm(a) == norm(b)
}

/// The heading, real paragraphs and captions of one section.
fn pick(s: &Section, title: &str) -> Picked {
    let heading = s.heading.as_ref().filter(|h| !h.is_empty() && !same_words(h, title)).map(|h| (s.level, h.clone()));
    let paras = blocks(&s.text).into_iter().filter_map(|b| real_part(&b.text, b.kind)).collect();
    Picked { heading, paras, captions: captions(&s.text) }
}

/// The first sentences of `text` within `max` tokens (words cut with `…`
/// when the first sentence alone is longer).
fn clip_para(text: &str, max: usize) -> Option<String> {
    if max < PARA_MIN.min(estimate_tokens(text)) {
        return None;
    }
    if estimate_tokens(text) <= max {
        return Some(text.to_string());
    }
    let mut out = String::new();
    for s in split_sentences(text) {
        let cand = if out.is_empty() { s.clone() } else { format!("{out} {s}") };
        if estimate_tokens(&cand) > max {
            break;
        }
        out = cand;
    }
    if out.is_empty() {
        let mut words: Vec<&str> = Vec::new();
        for w in text.split_whitespace() {
            words.push(w);
            if estimate_tokens(&words.join(" ")) + 1 > max {
                words.pop();
                break;
            }
        }
        if words.is_empty() {
            return None;
        }
        out = format!("{}…", words.join(" "));
    }
    Some(out)
}

static HSPACE: Lazy<Regex> = Lazy::new(|| Regex::new(r"[ \t\x0B\x0C\r\u{A0}]+").expect("static regex"));

/// Clip a body to `budget` tokens by lines (§4.2): collapse horizontal
/// whitespace per line, keep the first ¾ of the lines while over budget,
/// then the first ¾ of the words of a lone line, then hard-slice. The
/// input of a body without structure ([`select_content`]).
pub fn clip_to(body: &str, budget: usize) -> String {
    let mut lines: Vec<String> = body.split('\n').map(|l| HSPACE.replace_all(l, " ").trim().to_string()).collect();
    let mut text = lines.join("\n");
    while estimate_tokens(&text) > budget && lines.len() > 1 {
        lines.truncate((lines.len() * 3 / 4).max(1));
        text = lines.join("\n");
    }
    if estimate_tokens(&text) > budget {
        let line = std::mem::take(&mut text);
        let mut words: Vec<&str> = line.split(' ').collect();
        text = line.clone();
        while estimate_tokens(&text) > budget && words.len() > 1 {
            words.truncate((words.len() * 3 / 4).max(1));
            text = words.join(" ");
        }
    }
    if text.chars().count() > budget * 4 {
        text = text.chars().take(budget * 4).collect();
    }
    text
}

/// `text` cut to at most `max` characters at a word boundary, `…` appended
/// when cut.
pub fn clip_chars(text: &str, max: usize) -> String {
    let t = text.trim();
    if t.chars().count() <= max {
        return t.to_string();
    }
    let cut: String = t.chars().take(max.saturating_sub(1)).collect();
    let head = match cut.rfind(' ') {
        Some(i) if i > 0 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", head.trim_end_matches([',', ';', ':', ' ']))
}

/// Deepest outline level whose headings fit `share` tokens, as `(level,
/// true)`; when none does, or the one that does shows a single heading
/// headings while a deeper level exists, `(level, false)`: the leading
/// headings of that level are taken up to the share.
fn outline_level(picked: &[Picked], share: usize) -> (usize, bool) {
    let levels: Vec<usize> = picked.iter().filter_map(|p| p.heading.as_ref().map(|h| h.0)).collect();
    let shallowest = levels.iter().copied().min().unwrap_or(1);
    let deepest = levels.iter().copied().max().unwrap_or(1);
    let fits = (shallowest..=OUTLINE_DEPTH).rev().find(|&lvl| {
        let cost: usize = picked
            .iter()
            .filter_map(|p| p.heading.as_ref())
            .filter(|(l, _)| *l <= lvl)
            .map(|(l, h)| estimate_tokens(h) + l + 2)
            .sum();
        cost <= share
    });
    match fits {
        Some(l) if levels.iter().filter(|&&x| x <= l).count() < 2 && l < deepest => (l + 1, false),
        Some(l) => (l, true),
        None => (shallowest, false),
    }
}

/// The sections that take part, with the tokens their headings cost: the
/// lead, and those whose heading is in the outline; a section left out
/// lends its paragraphs and captions to the one above it.
fn outline(picked: Vec<Picked>, share: usize) -> (Vec<Picked>, usize) {
    let (level, all_fit) = outline_level(&picked, share);
    let mut used = 0;
    let mut keep: Vec<Picked> = Vec::new();
    for p in picked {
        let take = match &p.heading {
            None => true,
            Some((l, h)) if *l <= level => {
                let cost = estimate_tokens(h) + l + 2;
                let fits = all_fit || used + cost <= share;
                if fits {
                    used += cost;
                }
                fits
            }
            Some(_) => false,
        };
        match keep.last_mut() {
            Some(last) if !take => {
                last.paras.extend(p.paras);
                last.captions.extend(p.captions);
            }
            _ => keep.push(p),
        }
    }
    (keep, used)
}

/// Spend `budget`: the outline first (the deepest level that fits its
/// share, else the leading headings that do), then round by round the
/// n-th real paragraph of each section (captions with the first), each
/// cut to its fair share; rendered in document order.
fn fill(picked: Vec<Picked>, budget: usize) -> String {
    let (keep, mut used) = outline(picked, budget * OUTLINE_SHARE.0 / OUTLINE_SHARE.1);
    let mut chosen: Vec<Vec<String>> = vec![Vec::new(); keep.len()];
    let mut round = 0;
    'rounds: loop {
        let takers: Vec<usize> = (0..keep.len())
            .filter(|&i| keep[i].paras.len() > round || (round == 0 && !keep[i].captions.is_empty()))
            .collect();
        if takers.is_empty() || used >= budget {
            break;
        }
        let fair = ((budget - used) / takers.len()).clamp(PARA_MIN, PARA_MAX);
        for i in takers {
            let mut items: Vec<(String, usize)> =
                keep[i].paras.get(round).map(|p| (p.clone(), fair)).into_iter().collect();
            if round == 0 {
                items.extend(keep[i].captions.iter().take(CAPTIONS_PER_SECTION).map(|c| (c.clone(), TABLE_MAX)));
            }
            for (text, max) in items {
                let room = budget.saturating_sub(used + 1);
                let Some(t) = clip_para(&text, max.min(room)) else {
                    if room < PARA_MIN {
                        break 'rounds;
                    }
                    continue;
                };
                used += estimate_tokens(&t) + 1;
                chosen[i].push(t);
            }
        }
        round += 1;
    }
    render(&keep, &chosen, budget)
}

fn render(keep: &[Picked], chosen: &[Vec<String>], budget: usize) -> String {
    let mut out = String::new();
    for (p, paras) in keep.iter().zip(chosen) {
        if let Some((l, h)) = &p.heading {
            out.push_str(&format!("{} {h}\n", "#".repeat(*l)));
        }
        for p in paras {
            out.push_str(p);
            out.push('\n');
        }
    }
    let out = out.trim_end().to_string();
    if estimate_tokens(&out) <= budget {
        return out;
    }
    // Newlines and heading marks are estimated above; never exceed the budget.
    out.chars().take(budget * 4).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANUAL: &str = "# The Frobnicator Manual\n\nThe Frobnicator Manual\nVersion 3.2\n\n\
        Copyright 2020 Acme Inc. All rights reserved. Permission is granted to copy and distribute this manual.\n\n\
        ## Table of Contents\n\n- [1 Introduction](#intro)\n- [2 Installing](#install)\n\n\
        1 Introduction .......... 3\n\n\
        ## 1 Introduction\n\nThe Frobnicator turns raw widgets into polished gadgets at 40 units per hour. \
        It runs on any Linux host with a spare serial port.\n\nA second paragraph about history.\n\n\
        ### 1.1 Who should read this\n\nOperators who feed widgets into the machine every shift.\n\n\
        #### 1.1.1 Very deep detail\n\nSomething nobody needs in a summary at all.\n\n\
        ## 2 Installing\n\n```sh\nsudo make install && frob --init\n```\n\n\
        Install the package, then calibrate the serial port with the frob tool.\n\n\
        Table 2: Supported serial adapters by vendor\n\n| Vendor | Model | Speed |\n|---|---|---|\n| Acme | S1 | 9600 |\n\n\
        ## License\n\nThis program is free software; you can redistribute it under the GNU General Public License.\n";

    #[test]
    fn outline_and_first_paragraphs_without_front_matter_toc_or_licence() {
        let s = select_content("The Frobnicator Manual", MANUAL, 512);
        assert!(s.contains("## 1 Introduction\nThe Frobnicator turns raw widgets"), "{s}");
        assert!(s.contains("### 1.1 Who should read this\nOperators who feed"), "{s}");
        assert!(s.contains("## 2 Installing\nInstall the package"), "{s}");
        assert!(
            s.contains(
                "Table 2: Supported serial adapters by vendor\n| Vendor | Model | Speed |\n| Acme | S1 | 9600 |"
            ),
            "{s}"
        );
        for gone in [
            "Copyright",
            "Table of Contents",
            "[1 Introduction]",
            "......",
            "free software",
            "sudo make",
            "Version 3.2",
        ] {
            assert!(!s.contains(gone), "{gone} in {s}");
        }
        // The title is the prompt's own line: not repeated as a heading.
        assert!(!s.contains("# The Frobnicator Manual"), "{s}");
        // H4 is not in the outline.
        assert!(!s.contains("Very deep detail"), "{s}");
        assert!(estimate_tokens(&s) <= 512);
    }

    #[test]
    fn second_paragraphs_come_after_every_first_one() {
        let s = select_content("The Frobnicator Manual", MANUAL, 512);
        assert!(s.contains("A second paragraph about history."), "budget left: {s}");
        let tight = select_content("The Frobnicator Manual", MANUAL, 60);
        assert!(estimate_tokens(&tight) <= 60, "{tight}");
        assert!(tight.contains("## 1 Introduction") && tight.contains("## 2 Installing"), "{tight}");
        assert!(!tight.contains("second paragraph"), "{tight}");
    }

    #[test]
    fn a_table_shows_its_header_and_first_rows() {
        let rows: String = (0..20).map(|i| format!("| Region{i} | {i}0 | {i} |\n")).collect();
        let body = format!("# Sales\n\n## Q1 figures\n\n| Region | Revenue | Units |\n|---|---|---|\n{rows}");
        let s = select_content("Sales", &body, 512);
        assert!(s.contains("## Q1 figures\n| Region | Revenue | Units |\n| Region0 | 00 | 0 |\n"), "{s}");
        assert!(!s.contains("|---") && !s.contains("Region5"), "the first rows only: {s}");
    }

    #[test]
    fn a_huge_outline_keeps_its_top_levels_within_the_budget() {
        let mut body = String::from("# Big\n\nBig is a reference manual for the big command line tool.\n\n");
        for c in 0..40 {
            body.push_str(&format!(
                "## Chapter {c} on topic {c}\n\nChapter {c} explains topic {c} in plain words for readers.\n\n"
            ));
            for s in 0..10 {
                body.push_str(&format!(
                    "### Section {c}.{s}\n\nSection text {c}.{s} with enough words to count here.\n\n"
                ));
            }
        }
        let s = select_content("Big", &body, 512);
        assert!(estimate_tokens(&s) <= 512, "{}", estimate_tokens(&s));
        assert!(s.contains("Big is a reference manual"), "the lead first: {s}");
        assert!(s.contains("## Chapter 0 on topic 0") && s.contains("## Chapter 1 on topic 1"), "{s}");
        assert!(!s.contains("### Section"), "H3 does not fit the outline's share: {s}");
    }

    #[test]
    fn code_and_unstructured_bodies_fall_back_to_the_lead() {
        let code = "```python\ndef f(x):\n    return x + 1\n```\n";
        assert_eq!(select_content("f.py", code, 512), clip_to(code, 512));
        let script = "# Page\n\nfunction toggle(nm) { var w = document.getElementById(nm); if (w.style.display==\"block\") { w.style.display = \"none\"; } }\n\n\
                      The page explains how window functions compute running totals over partitions.\n";
        let s = select_content("Page", script, 512);
        assert!(!s.contains("getElementById"), "{s}");
        assert!(s.contains("window functions"), "{s}");
    }

    #[test]
    fn real_sentences_are_salvaged_from_a_flattened_page() {
        let junk = "function f(nm) { var w = x(nm); if (w) { w.y = \"none\"; } } ".repeat(8);
        let body =
            format!("# Page\n\n{junk} The SELECT statement queries the database. It returns zero or more rows of data. Each row has a fixed number of columns.\n");
        let s = select_content("Page", &body, 512);
        assert!(s.contains("It returns zero or more rows of data. Each row has a fixed number of columns."), "{s}");
        assert!(!s.contains("var w"), "{s}");
    }

    #[test]
    fn shell_prompts_are_not_headings() {
        let mut body = String::from("# Debian Reference\n\n");
        for cmd in ["apt-get update", "chvt 3", "adduser fish", "cd", "shutdown -h now"] {
            body.push_str(&format!("Run this command as root to change the system state.\n# {cmd}\n\n"));
        }
        let s = select_content("Debian Reference", &body, 512);
        assert!(!s.contains("# apt-get") && !s.contains("# chvt"), "{s}");
        assert!(s.contains("Run this command as root"), "{s}");
        let one = "# pdfminer.six\n\nPdfminer.six extracts text and layout from PDF documents in Python.\n";
        assert!(select_content("PDF miner", one, 512).starts_with("# pdfminer.six\n"), "a lone lowercase H1 stays");
    }

    #[test]
    fn clip_chars_cuts_at_a_word() {
        assert_eq!(clip_chars("short", 10), "short");
        assert_eq!(clip_chars("alpha beta gamma delta", 12), "alpha beta…");
        assert!(clip_chars(&"x".repeat(50), 10).chars().count() <= 10);
    }

    #[test]
    fn front_matter_is_skipped() {
        let body =
            "---\ntitle: x\nauthor: y\n---\n# Notes\n\nGarden notes about tomatoes ripening late every summer.\n";
        let s = select_content("Notes", body, 512);
        assert!(s.contains("Garden notes about tomatoes ripening late every summer."), "{s}");
        assert!(!s.contains("author"), "{s}");
        let long = format!(
            "---\ntitle: x\n---\n# Notes\n\n{}",
            "Garden notes about tomatoes ripening late every summer.\n\n".repeat(5)
        );
        assert!(!select_content("Notes", &long, 512).contains("title: x"));
    }
}
