//! Vector search at scale (issue 31), for `bench/canopy-scale.sh` and
//! bench/README.md.
//!
//! usage:
//!   canopy_scan grow BASE_CANOPY_DIR OUT_DIR ROWS
//!   canopy_scan time OUT_DIR [QUERIES]
//!   canopy_scan load                      (model load + one query embedding)
//!   canopy_scan embed [QUERIES]           (warm query embedding, distinct queries)
//!   canopy_scan vectors < TEXTS > ROWS    (the full model's vectors, for offline studies)
//!
//! `grow` reads a canopy built with the real model (for example by `forest
//! canopy build` on a few thousand nodes) and writes one of ROWS rows to
//! OUT_DIR: the real rows first, every other row DERIVED from real ones (a
//! normalised mix of two real vectors plus a little noise). The search cost
//! does not depend on the values, only on the row count and width.
//!
//! `time` maps the canopy as a `locate` process does and times QUERIES
//! searches 25 deep (queries: real rows with noise): the int8 scan, the
//! binary pass (both with exact rescoring), and the recall@25 of each
//! against an exact float scan of every row. `load` times what a fresh
//! process pays before its first search: loading `FOREST_EMBED_MODEL` and
//! embedding one query. `embed` times QUERIES distinct short queries
//! (default 50) on a warm model, one at a time as `locate` embeds them.
//! `vectors` reads one JSON string per line on stdin and writes each one's
//! unit vector from the full model as little-endian float32 on stdout, in
//! order (bench/findability/fast_lifts.py).

use std::path::Path;
use std::time::Instant;

use forest_canopy::{Canopy, Embedder, LocalEmbedder, Searcher};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// splitmix64 noise in [-0.5, 0.5).
fn noise(x: &mut u64) -> f32 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
}

fn pcts(v: &mut [f64]) -> String {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    format!("p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms", at(0.5), at(0.95), at(1.0))
}

fn grow(base: &Path, out: &Path, rows: usize) -> Res<()> {
    let b = Canopy::load(base)?.ok_or("no canopy in BASE_CANOPY_DIR")?;
    let (n, dim) = (b.len(), b.dim);
    if n == 0 {
        return Err("the base canopy is empty".into());
    }
    let mut c = Canopy::new(&b.model, dim);
    c.vectors.reserve(rows * dim);
    let mut seed = 7u64;
    for r in 0..rows {
        if r < n {
            c.vectors.extend_from_slice(b.vector(r));
        } else {
            let (x, y) = (b.vector(r % n), b.vector((r * 7 + 3) % n));
            let mut v: Vec<f32> = x.iter().zip(y).map(|(a, b)| a + 0.5 * b + 0.05 * noise(&mut seed)).collect();
            forest_canopy::normalize(&mut v);
            c.vectors.extend_from_slice(&v);
        }
        c.ids.push(format!("n/{r:08}"));
        c.hashes.push([0; 16]);
    }
    let t = Instant::now();
    c.save(out)?;
    println!("{rows} rows of dim {dim} ({n} real), written in {:.1} s", t.elapsed().as_secs_f64());
    Ok(())
}

fn exact(c: &Canopy, q: &[f32], k: usize) -> Vec<String> {
    let mut s: Vec<(f64, usize)> = (0..c.len())
        .map(|r| (c.vector(r).iter().zip(q).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum(), r))
        .collect();
    s.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0));
    s.truncate(k);
    s.into_iter().map(|(_, r)| c.ids[r].clone()).collect()
}

fn time(dir: &Path, queries: usize) -> Res<()> {
    let t = Instant::now();
    let s = Searcher::open(dir)?.ok_or("no canopy")?;
    println!("open (mmap): {:.2} ms, {} rows", t.elapsed().as_secs_f64() * 1e3, s.len());
    let c = Canopy::load(dir)?.ok_or("no canopy")?;
    let mut seed = 11u64;
    let qs: Vec<Vec<f32>> = (0..queries)
        .map(|i| {
            let mut v: Vec<f32> = c.vector((i * 7919) % c.len()).iter().map(|x| x + 0.1 * noise(&mut seed)).collect();
            forest_canopy::normalize(&mut v);
            v
        })
        .collect();
    let (mut t8, mut tb, mut r8, mut rb) = (vec![], vec![], 0usize, 0usize);
    for q in &qs {
        let t = Instant::now();
        let a = s.search_int8(q, 25);
        t8.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let b = s.search_binary(q, 25);
        tb.push(t.elapsed().as_secs_f64() * 1e3);
        let truth = exact(&c, q, 25);
        r8 += a.iter().filter(|(id, _)| truth.contains(id)).count();
        rb += b.iter().filter(|(id, _)| truth.contains(id)).count();
    }
    let total = (25 * qs.len()) as f64;
    println!("int8 scan + rescoring, 25 deep: {}; recall@25 {:.3}", pcts(&mut t8), r8 as f64 / total);
    println!("binary pass + rescoring, 25 deep: {}; recall@25 {:.3}", pcts(&mut tb), rb as f64 / total);
    Ok(())
}

fn load() -> Res<()> {
    let dir = std::env::var_os("FOREST_EMBED_MODEL").ok_or("FOREST_EMBED_MODEL is unset")?;
    let t = Instant::now();
    forest_canopy::identity_from_env()?;
    let ident = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    tokenizers::Tokenizer::from_file(Path::new(&dir).join("tokenizer.json")).map_err(|e| e.to_string())?;
    let tok = t.elapsed().as_secs_f64() * 1e3;
    println!("of which: identity {ident:.1} ms, tokenizer.json {tok:.1} ms");
    let t = Instant::now();
    let e = LocalEmbedder::load(Path::new(&dir))?;
    let loaded = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    e.embed(&["how are internationalized texts laid out".to_string()])?;
    println!("model load {loaded:.1} ms, first query embedding {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let mut v = vec![];
    for _ in 0..20 {
        let t = Instant::now();
        e.embed(&["where are the tape archives kept".to_string()])?;
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("query embedding (warm): {}", pcts(&mut v));
    Ok(())
}

/// Distinct short queries, as agents type them.
const QUERIES: [&str; 10] = [
    "where are the tape archives kept",
    "quarterly returns by region",
    "how to rotate the signing keys",
    "onboarding checklist for new staff",
    "invoice disputes with suppliers",
    "backup schedule of the mail server",
    "meeting notes about the roadmap",
    "who approves travel expenses",
    "error budget of the payment service",
    "licence terms of the fonts",
];
const PREFIXES: [&str; 5] = ["", "latest ", "old ", "summary of ", "draft "];

fn embed(queries: usize) -> Res<()> {
    let dir = std::env::var_os("FOREST_EMBED_MODEL").ok_or("FOREST_EMBED_MODEL is unset")?;
    let e = LocalEmbedder::load(Path::new(&dir))?;
    e.embed(&["warm up".to_string()])?;
    let qs: Vec<String> = (0..queries)
        .map(|i| format!("{}{}", PREFIXES[(i / QUERIES.len()) % PREFIXES.len()], QUERIES[i % QUERIES.len()]))
        .collect();
    let mut v = vec![];
    for q in &qs {
        let t = Instant::now();
        e.embed(std::slice::from_ref(q))?;
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("query embedding, warm, {} distinct queries: {}", qs.len(), pcts(&mut v));
    Ok(())
}

fn vectors() -> Res<()> {
    use std::io::{BufRead, Write};
    let model = LocalEmbedder::from_env()?.ok_or("FOREST_EMBED_MODEL is unset")?;
    let mut texts = Vec::new();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let text: String = serde_json::from_str(&line?).map_err(|e| format!("line {}: {e}", n + 1))?;
        texts.push(text);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for chunk in texts.chunks(256) {
        for v in model.embed(chunk)? {
            v.iter().try_for_each(|x| out.write_all(&x.to_le_bytes()))?;
        }
    }
    Ok(out.flush()?)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let out = match a.get(1).map(String::as_str) {
        Some("grow") if a.len() == 5 => match a[4].parse() {
            Ok(rows) => grow(Path::new(&a[2]), Path::new(&a[3]), rows),
            Err(e) => Err(format!("ROWS: {e}").into()),
        },
        Some("time") if a.len() >= 3 => time(Path::new(&a[2]), a.get(3).and_then(|s| s.parse().ok()).unwrap_or(50)),
        Some("load") => load(),
        Some("embed") => embed(a.get(2).and_then(|s| s.parse().ok()).unwrap_or(50)),
        Some("vectors") => vectors(),
        _ => {
            Err("usage: canopy_scan grow BASE OUT ROWS | time OUT [QUERIES] | load | embed [QUERIES] | vectors".into())
        }
    };
    if let Err(e) = out {
        eprintln!("canopy_scan: {e}");
        std::process::exit(1);
    }
}
