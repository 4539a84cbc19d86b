//! Speed and agreement against `yake-rust` on real texts (bench/README.md,
//! session 17): `cargo run --release -p forest-keyphrase --example
//! agreement DIR` reads every file under DIR (first 6,000 characters),
//! takes the top 5 keyphrases (1-2 words) with ours and with `yake-rust`,
//! and prints the share of `yake-rust`'s top 5 ours also has, and each
//! extractor's time.

use std::path::{Path, PathBuf};
use std::time::Instant;

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: agreement DIR");
    let mut files = Vec::new();
    walk(Path::new(&dir), &mut files);
    let texts: Vec<String> =
        files.iter().filter_map(|p| std::fs::read_to_string(p).ok()).map(|t| t.chars().take(6000).collect()).collect();
    let stop = forest_keyphrase::stopwords("en").expect("english list");
    let cfg = forest_keyphrase::Config { ngrams: 2, ..Default::default() };
    let ys = yake_rust::StopWords::predefined("en").expect("english list");
    let yc = yake_rust::Config { ngrams: 2, minimum_chars: 3, ..Default::default() };
    let t0 = Instant::now();
    let ours: Vec<Vec<String>> = texts
        .iter()
        .map(|t| forest_keyphrase::keyphrases(t, stop, &cfg, 5).into_iter().map(|k| k.keyword).collect())
        .collect();
    let ours_time = t0.elapsed();
    let t0 = Instant::now();
    let theirs: Vec<Vec<String>> =
        texts.iter().map(|t| yake_rust::get_n_best(5, t, &ys, &yc).into_iter().map(|k| k.keyword).collect()).collect();
    let theirs_time = t0.elapsed();
    let share: f64 = ours
        .iter()
        .zip(&theirs)
        .map(|(o, t)| t.iter().filter(|k| o.contains(k)).count() as f64 / t.len().max(1) as f64)
        .sum::<f64>()
        / texts.len().max(1) as f64;
    println!("{} texts, top-5 agreement {share:.3}; ours {ours_time:?}, yake-rust {theirs_time:?}", texts.len());
}
