//! Grounding rate of curated summaries, whichever engine wrote them
//! (issue 35): `grounding_rate PAIRS.tsv` reads lines `summary<TAB>source
//! path` and prints, per line, the tokens the source does not contain,
//! then the share of summaries whose numbers, versions and proper names all
//! occur in their source ([`forest_curator::grounding::ungrounded`], the
//! rule our Curator enforces).

use forest_curator::grounding::ungrounded;

fn main() {
    let path = std::env::args().nth(1).expect("usage: grounding_rate PAIRS.tsv");
    let pairs = std::fs::read_to_string(&path).expect("readable PAIRS.tsv");
    let (mut total, mut grounded) = (0usize, 0usize);
    for line in pairs.lines().filter(|l| !l.trim().is_empty()) {
        let Some((summary, source)) = line.split_once('\t') else { continue };
        let Ok(text) = std::fs::read_to_string(source) else {
            eprintln!("unreadable source: {source}");
            continue;
        };
        let missing = ungrounded(summary, &text);
        total += 1;
        if missing.is_empty() {
            grounded += 1;
        } else {
            println!("ungrounded {missing:?}\t{summary}");
        }
    }
    let rate = if total == 0 { 0.0 } else { grounded as f64 / total as f64 };
    println!("grounded {grounded} of {total} ({rate:.3})");
}
