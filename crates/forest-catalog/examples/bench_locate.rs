//! Benchmark: rebuild a catalog of N synthetic nodes, then time 1000
//! `locate` queries of 1–3 vocabulary words and 1000 drawn from node titles
//! and summaries, each against the FTS5 reference ranking (and checked to
//! give the same candidates).
//!
//! Usage: `cargo run --release -p forest-catalog --example bench_locate -- N [DIR]`
//! or `... -- --catalog PATH/_derived/catalog.db [N] [FTS_EVERY]` for an
//! existing forest (N drawn queries, FTS5 compared on every FTS_EVERY-th);
//! `--queries PATH N` prints N drawn queries and `--once PATH QUERY` runs
//! one query as its own process (bench/locate-process.sh times those).

use std::time::Instant;

use forest_catalog::{locate_simple, Catalog, CatalogLink, LocateQuery, NodeRow, Trails};

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
fn synthetic(i: usize, vocab: &[String], rng: &mut Rng) -> NodeRow {
    let ty = if i.is_multiple_of(PER_BRANCH) { "branch" } else { "note" };
    let mut node = NodeRow::new(id_of(i), ty, words(vocab, rng, 3), words(vocab, rng, 28));
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

/// CPU time of this thread in ms (`/proc/thread-self/schedstat`): under a
/// loaded machine it is the better estimate of unloaded latency.
fn cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse::<f64>().ok()))
        .map_or(0.0, |ns| ns / 1e6)
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

/// Queries drawn from the catalog: a whole title, or 3-6 consecutive
/// words of a summary, of random nodes.
fn drawn_queries(cat: &Catalog, rng: &mut Rng, n: usize) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let max: i64 = cat.connection().query_row("SELECT MAX(rowid) FROM nodes", [], |r| r.get(0))?;
    let mut st = cat.connection().prepare("SELECT title, summary FROM nodes WHERE rowid = ?1")?;
    let mut out = vec![];
    while out.len() < n {
        let rowid = 1 + rng.below(max as usize) as i64;
        let Ok((title, summary)) = st.query_row([rowid], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        else {
            continue;
        };
        if out.len() % 2 == 0 {
            out.push(title);
        } else {
            let w: Vec<&str> = summary.split_whitespace().collect();
            if w.is_empty() {
                continue;
            }
            let len = (3 + rng.below(4)).min(w.len());
            let at = rng.below(w.len() - len + 1);
            out.push(w[at..at + len].join(" "));
        }
    }
    Ok(out)
}

/// Time `locate` (top-k index when usable) against the FTS5 reference
/// ranking on every `fts_every`-th query, and check both rank the same
/// candidates there (FTS5 costs seconds per query when every word is
/// common, so a 10^6-node run compares a sample).
fn measure(
    cat: &Catalog,
    trails: &Trails,
    label: &str,
    queries: &[String],
    fts_every: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let (mut ours, mut fts) = (Vec::new(), Vec::new());
    let (mut ours_cpu, mut fts_cpu) = (Vec::new(), Vec::new());
    let (mut same, mut hits, mut compared) = (0usize, 0usize, 0usize);
    for (i, q) in queries.iter().enumerate() {
        let (t, c) = (Instant::now(), cpu_ms());
        let r =
            locate_simple(cat, trails, None, &LocateQuery { text: q.to_string(), ..LocateQuery::default() }, || None)?;
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        ours_cpu.push(cpu_ms() - c);
        hits += r.results.len();
        if i % fts_every != 0 {
            continue;
        }
        compared += 1;
        let (t, c) = (Instant::now(), cpu_ms());
        let reference = cat.ranked_fts(q, 25)?;
        fts.push(t.elapsed().as_secs_f64() * 1000.0);
        fts_cpu.push(cpu_ms() - c);
        same += usize::from(cat.ranked(q, 25)? == reference);
    }
    let n = queries.len();
    // The tail, to see which queries make it.
    let mut slow: Vec<(f64, &String)> = ours.iter().copied().zip(queries).collect();
    slow.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, q) in slow.iter().take(5) {
        println!("  slow: {ms:.1} ms  {q:?}");
    }
    println!(
        "{label} x{n}: locate wall p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms; cpu p50 {:.2} ms, p95 {:.2} ms | \
         FTS5 bm25 top-25 wall p50 {:.2} ms, p95 {:.2} ms; cpu p50 {:.2} ms, p95 {:.2} ms | \
         identical candidates {same}/{compared}, mean hits {:.1}",
        pct(&mut ours, 0.5),
        pct(&mut ours, 0.95),
        pct(&mut ours, 1.0),
        pct(&mut ours_cpu, 0.5),
        pct(&mut ours_cpu, 0.95),
        pct(&mut fts, 0.5),
        pct(&mut fts, 0.95),
        pct(&mut fts_cpu, 0.5),
        pct(&mut fts_cpu, 0.95),
        hits as f64 / n as f64
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let tmp = tempfile::TempDir::new()?;
    if first.as_deref() == Some("--once") {
        // One query as its own process, the library half of `forest locate
        // --json` (open catalog + heat store, locate, serialize).
        let path = std::path::PathBuf::from(args.next().ok_or("--once PATH QUERY")?);
        let query: Vec<String> = args.collect();
        let cat = Catalog::open(&path)?;
        let trails = Trails::open(&path.with_file_name("trails.db"))?;
        let q = LocateQuery { text: query.join(" "), ..LocateQuery::default() };
        let res = locate_simple(&cat, &trails, None, &q, || None)?;
        println!("{}", serde_json::to_string(&res)?);
        return Ok(());
    }
    if first.as_deref() == Some("--queries") {
        // Print N queries drawn from the catalog, one per line.
        let path = std::path::PathBuf::from(args.next().ok_or("--queries PATH N")?);
        let n: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(300);
        for q in drawn_queries(&Catalog::open(&path)?, &mut rng, n)? {
            println!("{q}");
        }
        return Ok(());
    }
    if first.as_deref() == Some("--catalog") {
        // An existing forest's catalog (e.g. one built by `forest reindex`).
        let path = std::path::PathBuf::from(args.next().ok_or("--catalog PATH [N] [FTS_EVERY]")?);
        let n: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1000);
        let fts_every: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1);
        let cat = Catalog::open(&path)?;
        println!("nodes: {}, top-k index usable: {}", cat.count_nodes()?, cat.topk_usable()?);
        let trails = Trails::open(&path.with_file_name("trails.db"))?;
        let qs = drawn_queries(&cat, &mut rng, n)?;
        measure(&cat, &trails, "titles+summaries", &qs, fts_every.max(1))?;
        println!("peak RSS: {} MiB", peak_rss_kb() / 1024);
        return Ok(());
    }
    let n: usize = first.map(|a| a.parse()).transpose()?.unwrap_or(10_000);
    let dir = args.next().map(std::path::PathBuf::from).unwrap_or_else(|| tmp.path().into());
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

    let words_q: Vec<String> = (0..1000)
        .map(|_| {
            let len = 1 + rng.below(3);
            words(&vocab, &mut rng, len)
        })
        .collect();
    measure(&cat, &trails, "vocabulary words", &words_q, 1)?;
    let drawn = drawn_queries(&cat, &mut rng, 1000)?;
    measure(&cat, &trails, "titles+summaries", &drawn, 1)?;
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
