//! The canopy at scale (issue 31), for `bench/canopy-scale.sh`.
//!
//! usage:
//!   canopy_scale fill FOREST SAMPLE [--hashed]  embed SAMPLE real scents, derive the rest
//!   canopy_scale touch FOREST [K]     change K scents, time the maintained refresh
//!   canopy_scale query FOREST [N]     in-process hybrid `locate`, N queries
//!
//! `fill` embeds SAMPLE nodes spread evenly over the catalog with the real
//! model (`FOREST_EMBED_MODEL`) and gives every other node a vector DERIVED
//! from real ones (a normalised mix of two real vectors plus a little
//! noise), because embedding 10^6 scents on 2 cores takes ~17 h. The
//! search cost (an int8 scan of every row, then an exact rescoring of the
//! best candidates) does not depend on the values, only on the row count
//! and width; the derived rows carry no text hash, so the next maintained
//! write embeds them for real, unless `--hashed` records each row's text
//! hash as if it had been embedded (for `touch`, which then measures the
//! streamed refresh of a maintained write at full size: K texts embedded,
//! every other row copied). The result is an ordinary canopy on disk,
//! written row by row (`forest_canopy::Writer`).
//!
//! `query` opens the forest read-only with hybrid `locate` on (as `forest
//! serve` with `FOREST_HYBRID_LOCATE=1`), warms up once (model load, first
//! page faults), then times N `locate` calls (queries are titles of nodes
//! spread over the catalog) and, for the breakdown, the query embedding and
//! the vector search alone, then the same `locate` calls again (answered
//! from the query memo, K.6). Prints p50/p95/max in ms.

use std::path::Path;
use std::time::Instant;

use forest_canopy::{canopy_dir, text_hash, CatalogRows, Embedder, Rows, Searcher, Writer};
use forest_vine::{LocateArgs, Vine, VineOptions};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[((s.len() as f64 - 1.0) * p).round() as usize]
}

fn line(what: &str, v: &[f64]) {
    println!("{what}: n {} p50 {:.2} ms p95 {:.2} ms max {:.2} ms", v.len(), pct(v, 0.5), pct(v, 0.95), pct(v, 1.0));
}

/// splitmix64, for reproducible noise.
fn next(x: &mut u64) -> f32 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
}

fn fill(root: &Path, sample: usize, hashed: bool) -> Res<()> {
    let embedder = forest_canopy::shared_from_env()?.ok_or("FOREST_EMBED_MODEL is unset")?;
    let vine = Vine::open(root, VineOptions::default())?;
    let rows = CatalogRows(vine.catalog(), forest_canopy::Encoder::of_model(embedder.model()));
    let n = forest_canopy::catalog_len(vine.catalog())?;
    let sample = sample.clamp(1, n.max(1));
    let step = (n / sample).max(1);
    // the sampled scents, in one pass (the rows themselves are streamed)
    let mut texts = Vec::with_capacity(sample);
    let mut i = 0;
    rows.visit(&mut |_, t| {
        if i % step == 0 && texts.len() < sample {
            texts.push(t);
        }
        i += 1;
        Ok(())
    })?;
    let t = Instant::now();
    let real = embedder.embed(&texts)?;
    let secs = t.elapsed().as_secs_f64();
    println!("embedded {} real scents in {secs:.1} s ({:.1} nodes/s)", real.len(), real.len() as f64 / secs);
    let dim = real.first().map_or(0, Vec::len);
    let t = Instant::now();
    let mut w = Writer::create(&canopy_dir(root), embedder.model(), dim)?;
    let (mut seed, mut i) = (0x5eed_u64, 0);
    rows.visit(&mut |id, text| {
        let v = if i % step == 0 && i / step < real.len() {
            real[i / step].clone()
        } else {
            let (a, b) = (&real[i % real.len()], &real[(i * 7 + 3) % real.len()]);
            let mut v: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + 0.5 * y + 0.05 * next(&mut seed)).collect();
            forest_canopy::normalize(&mut v);
            v
        };
        // no known text: a maintained write embeds these rows for real;
        // `--hashed` records the text's hash as if it had been embedded
        let h = if hashed { text_hash(&text) } else { [0; 16] };
        i += 1;
        w.push(id, h, &v)
    })?;
    w.finish()?;
    println!("canopy: {n} rows of dim {dim} ({} real), written in {:.1} s", real.len(), t.elapsed().as_secs_f64());
    Ok(())
}

/// Change the summary of `k` nodes spread over the catalog (in the catalog
/// only: a scratch forest) and run the writers' canopy maintenance: the
/// streamed refresh at the forest's size.
fn touch(root: &Path, k: usize) -> Res<()> {
    let vine = Vine::open(root, VineOptions::default())?;
    let cat = vine.catalog();
    let n = forest_canopy::catalog_len(cat)?;
    let step = (n / k.max(1)).max(1);
    let ids: Vec<String> = {
        let mut st = cat.connection().prepare("SELECT id FROM nodes ORDER BY id")?;
        let all = st.query_map([], |r| r.get::<_, String>(0))?;
        all.step_by(step).take(k).collect::<rusqlite::Result<_>>()?
    };
    let stamp = forest_canopy::canopy_dir(root).join("index.json").metadata()?.len();
    for id in &ids {
        cat.connection().execute(
            "UPDATE nodes SET summary = summary || ?1 WHERE id = ?2",
            rusqlite::params![format!(" (touched {stamp})"), id],
        )?;
    }
    let t = Instant::now();
    let rep = forest_canopy::maintain_forest(root, cat)?.ok_or("nothing to refresh")?;
    println!(
        "maintained: {} nodes, {} embedded, {} removed in {:.1} s",
        rep.nodes,
        rep.embedded,
        rep.removed,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn query(root: &Path, count: usize) -> Res<()> {
    // the default fusion (blend, rankings max(5k, 50) deep), as a served forest ranks
    let mut vine = Vine::open(root, VineOptions::default())?;
    let titles: Vec<String> = {
        let n = vine.catalog().count_nodes()?.max(1) as usize;
        let step = (n / count.max(1)).max(1);
        let mut st = vine.catalog().connection().prepare("SELECT title FROM nodes ORDER BY id")?;
        let all = st.query_map([], |r| r.get::<_, String>(0))?;
        all.step_by(step).take(count).collect::<rusqlite::Result<_>>()?
    };
    // every query a memo miss first (K.6: the file a previous run left)
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", forest_canopy::memo_path(root).display()));
    }
    let args = |q: &str| LocateArgs { query: q.to_string(), k: Some(5), ..Default::default() };
    let t = Instant::now();
    let warm = vine.locate(&args("warm up the model"))?;
    println!("first hybrid locate (model load, cold pages): {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    if let Some(note) = &warm.note {
        return Err(format!("hybrid locate fell back: {note}").into());
    }
    let searcher = Searcher::open(&canopy_dir(root))?.ok_or("no canopy")?;
    // the encoder that built the canopy (fast or full), as `locate` embeds the query
    let kind = forest_canopy::Encoder::of_model(searcher.model());
    let embedder = forest_canopy::shared_encoder(kind)?.ok_or("FOREST_EMBED_MODEL is unset")?;
    let (mut whole, mut embed, mut scan) = (vec![], vec![], vec![]);
    for q in &titles {
        let t = Instant::now();
        let out = vine.locate(&args(q))?;
        whole.push(t.elapsed().as_secs_f64() * 1e3);
        if let Some(note) = &out.note {
            return Err(format!("hybrid locate fell back: {note}").into());
        }
        let t = Instant::now();
        let v = embedder.embed(std::slice::from_ref(q))?;
        embed.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let hits = searcher.search(&v[0], 50);
        scan.push(t.elapsed().as_secs_f64() * 1e3);
        if hits.is_empty() {
            return Err("the vector search found nothing".into());
        }
    }
    let mut hit = vec![];
    for q in &titles {
        let t = Instant::now();
        vine.locate(&args(q))?;
        hit.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("canopy: {} rows", searcher.len());
    line("hybrid locate, in process (query memo miss)", &whole);
    line("hybrid locate, in process, the same queries again (memo hit)", &hit);
    line("  query embedding", &embed);
    line("  vector search alone, 50 deep (as the blend asks at k = 5)", &scan);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("fill"), Some(root)) => fill(
            Path::new(root),
            args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2000),
            args.iter().any(|a| a == "--hashed"),
        ),
        (Some("touch"), Some(root)) => touch(Path::new(root), args.get(3).and_then(|s| s.parse().ok()).unwrap_or(100)),
        (Some("query"), Some(root)) => query(Path::new(root), args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200)),
        _ => Err("usage: canopy_scale fill FOREST SAMPLE [--hashed] | canopy_scale touch FOREST [K] | canopy_scale query FOREST [N]".into()),
    };
    if let Err(e) = out {
        eprintln!("canopy_scale: {e}");
        std::process::exit(1);
    }
}
