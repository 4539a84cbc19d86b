//! Ranger benchmark: `cargo run --release -p forest-ranger --example
//! bench_ranger -- N [MANAGED] [HEAT_ROWS]` (defaults 10^4 managed links,
//! 10^5 heat rows). Generates a forest of N nodes in a temp dir (one
//! forest-git commit), builds the catalog, then runs the Ranger twice in a
//! child process (so peak RSS is the run's, not the generator's) and prints
//! per-phase timings and VmHWM.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use forest_catalog::Trails;
use forest_derived::catalog::{reindex, TRAILS_PATH};
use forest_derived::init::init_forest;
use forest_git::{Change, GitForest, WriterLock};
use forest_ranger::{run, RangerConfig};

const T0: f64 = 1_767_225_600.0;
const PER_FOLDER: usize = 1000;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn vm_hwm_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn id_of(i: usize) -> String {
    format!("g{:03}/n{i}", i / PER_FOLDER)
}

fn generate(root: &Path, n: usize, managed: usize, heat_rows: usize) -> Res<()> {
    let t = Instant::now();
    let git = init_forest(root, "Bench")?;
    let mut changes = Vec::with_capacity(n + n / PER_FOLDER + 1);
    for i in 0..n {
        let id = id_of(i);
        let mut links = format!("- rel: related-to\n  target: {}\n", id_of((i + 1) % n));
        if i < managed {
            let c = if i % 2 == 0 { 0.3 } else { 0.5 };
            links.push_str(&format!(
                "- rel: discovered-shortcut\n  target: {}\n  confidence: {c}\n",
                id_of((i * 7 + 3) % n)
            ));
        }
        let text = format!(
            "---\nid: {id}\ntype: note\ntitle: Node {i}\nsummary: Synthetic node {i} of the \
             benchmark forest, linked to its neighbour.\ncreated: '2026-01-01'\n\
             updated: '2026-01-01'\nlinks:\n{links}---\n\n# Node {i}\n\nBody text of node {i}.\n"
        );
        changes.push(Change::Write { path: format!("{id}.md"), bytes: text.into_bytes() });
    }
    for f in 0..n.div_ceil(PER_FOLDER) {
        let mut body = format!(
            "---\nid: g{f:03}/_index\ntype: branch\ntitle: Folder {f}\nsummary: Folder {f}.\n---\n\n\
             # Folder {f}\n\n> Folder {f}.\n\n## Sub-branches\n\n## Direct bananas\n\n"
        );
        for i in f * PER_FOLDER..((f + 1) * PER_FOLDER).min(n) {
            body.push_str(&format!("- [[{}]] — Synthetic node {i}.\n", id_of(i)));
        }
        changes.push(Change::Write { path: format!("g{f:03}/_index.md"), bytes: body.into_bytes() });
    }
    git.commit_batch(&changes, "bench: generate")?;
    drop(changes);
    let commit_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    reindex(root)?;
    let reindex_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut trails = Trails::open(&root.join(TRAILS_PATH))?;
    // Heat on real ids first, then ids of deleted nodes; a spread of values
    // and ages so evaporation, promotion and pruning all have work.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..heat_rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let id = if i < n { id_of(i) } else { format!("gone/n{i}") };
        let h = (x % 600) as f64 / 1000.0;
        if h > 0.0 {
            trails.deposit_at(&[id], h, "", T0 - (x % 90) as f64 * 86_400.0)?;
        }
    }
    println!(
        "generate: n={n} managed={managed} heat_rows={heat_rows} commit={commit_s:.2}s \
         reindex={reindex_s:.2}s heat={:.2}s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run_child(root: &Path) -> Res<()> {
    let _lock = WriterLock::acquire(root)?;
    let git = GitForest::open(root)?;
    let cfg = RangerConfig::default();
    for label in ["first", "second"] {
        let r = run(root, &git, T0, &cfg)?;
        println!(
            "run {label}: promoted={} pruned={} landmarks={} commit={} timings_ms={}",
            r.links.promoted.len(),
            r.links.pruned.len(),
            r.landmarks.landmarks,
            r.commit.is_some(),
            serde_json::to_string(&r.timings_ms)?
        );
    }
    println!("peak_rss_kb(VmHWM)={}", vm_hwm_kb().unwrap_or(0));
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--run") {
        let dir = args.get(2).ok_or("--run DIR")?;
        return run_child(Path::new(dir));
    }
    let n: usize = args.get(1).map_or(Ok(10_000), |s| s.parse())?;
    let managed: usize = args.get(2).map_or(Ok(10_000), |s| s.parse())?;
    let heat: usize = args.get(3).map_or(Ok(100_000), |s| s.parse())?;
    let tmp = std::env::temp_dir().join(format!("bench-ranger-{}", std::process::id()));
    let root = tmp.join("forest");
    generate(&root, n, managed.min(n), heat)?;
    let status = Command::new(std::env::current_exe()?).arg("--run").arg(&root).status()?;
    std::fs::remove_dir_all(&tmp)?;
    if !status.success() {
        return Err("ranger run failed".into());
    }
    Ok(())
}
