//! Benchmark: rebuild a catalog of N synthetic nodes, then time 1000
//! `locate` queries of 1–3 words.
//!
//! Usage: `cargo run --release -p forest-catalog --example bench_locate -- N [DIR]`

use std::time::Instant;

use forest_catalog::{locate, Catalog, CatalogLink, CatalogNode, LocateOptions, Trails};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SYLLABLES: [&str; 32] = [
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "pa", "qu", "ri", "do", "fe", "gu", "ha", "ji", "ko", "lu",
    "ma", "no", "pe", "si", "ta", "ul", "ve", "wo", "xa", "yo", "zu", "be", "ci",
];

fn vocabulary(n: usize, rng: &mut Rng) -> Vec<String> {
    (0..n)
        .map(|_| {
            let len = 2 + rng.below(3);
            (0..len).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect()
        })
        .collect()
}

fn words(vocab: &[String], rng: &mut Rng, n: usize) -> String {
    // Squared draw: a Zipf-like skew, so some words are common.
    (0..n)
        .map(|_| {
            let r = rng.below(vocab.len());
            vocab[r * r / vocab.len()].as_str()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

const PER_BRANCH: usize = 50;

fn folder_of(i: usize) -> String {
    format!("area{:03}/topic{:05}", i / (PER_BRANCH * 100) % 1000, i / PER_BRANCH)
}

fn id_of(i: usize) -> String {
    if i.is_multiple_of(PER_BRANCH) {
        format!("{}/_index", folder_of(i))
    } else {
        format!("{}/node{i}", folder_of(i))
    }
}

/// Node `i`, generated on demand so the rebuild streams (bounded memory).
fn synthetic(i: usize, vocab: &[String], rng: &mut Rng) -> CatalogNode {
    let ty = if i.is_multiple_of(PER_BRANCH) { "branch" } else { "note" };
    let mut node = CatalogNode::new(id_of(i), ty, words(vocab, rng, 3), words(vocab, rng, 28));
    node.tags = (0..3).map(|_| words(vocab, rng, 1)).collect();
    node.body_tokens = 100 + rng.below(3000) as i64;
    node.links = vec![CatalogLink::new("part-of", format!("{}/_index", folder_of(i)))];
    node
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(10_000);
    let tmp = tempfile::TempDir::new()?;
    let dir = args.next().map(std::path::PathBuf::from).unwrap_or_else(|| tmp.path().into());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let vocab = vocabulary(5000, &mut rng);

    let warm: Vec<String> = (0..n).step_by(7).take(2000).map(id_of).collect();
    let mut cat = Catalog::recreate(&dir.join("catalog.db"))?;
    let t = Instant::now();
    let nodes = (0..n).map(|i| synthetic(i, &vocab, &mut rng));
    let written = cat.rebuild(nodes)?;
    let secs = t.elapsed().as_secs_f64();
    println!("rebuild: {written} nodes in {secs:.2}s = {:.0} nodes/s", written as f64 / secs);

    let mut trails = Trails::open(&dir.join("trails.db"))?;
    trails.deposit(&warm, 0.3, "")?;

    let opts = LocateOptions::default();
    let mut lat = Vec::with_capacity(1000);
    let mut hits = 0usize;
    for _ in 0..1000 {
        let len = 1 + rng.below(3);
        let q = words(&vocab, &mut rng, len);
        let t = Instant::now();
        let r = locate(&cat, &trails, &q, &opts)?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        hits += r.results.len();
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "locate x1000: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms, mean hits {:.1}",
        lat[499],
        lat[949],
        lat[999],
        hits as f64 / 1000.0
    );
    let t = Instant::now();
    let state = Catalog::open_checked(&dir.join("catalog.db"))?;
    println!(
        "open_checked: {} in {:.2}s",
        matches!(state, forest_catalog::CatalogState::Ready(_)),
        t.elapsed().as_secs_f64()
    );
    println!("peak RSS: {} MiB", peak_rss_kb() / 1024);
    Ok(())
}
