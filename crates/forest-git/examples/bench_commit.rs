//! Commit benchmark: forest-git batch commits against the git CLI.
//!
//! `cargo run --release -p forest-git --example bench_commit [-- N_NEW N_BIG]`
//! (defaults 10000 and 100000). Cases:
//! 1. N_NEW new files committed into an empty forest (one batch);
//! 2. 1 changed file in an N_BIG-file forest;
//!
//! each also with `git add -A && git commit` through the CLI as a reference.
//! Work directories live under the system temp dir and are removed afterwards.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use forest_git::{Change, CommitStage, GitForest};

fn leaf(i: usize, version: &str) -> Vec<u8> {
    format!(
        "---\nid: b{}/leaf-{i}\ntype: note\ntitle: Leaf {i}\nsummary: Bench leaf {i} ({version}).\n---\n\n# Leaf {i}\n\nBody {version}.\n",
        i % 100
    )
    .into_bytes()
}

fn path(i: usize) -> String {
    format!("b{}/leaf-{i}.md", i % 100)
}

fn git(root: &Path, args: &[&str]) {
    let st = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@localhost")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@localhost")
        .status()
        .expect("git runs");
    assert!(st.success(), "git {args:?} failed");
}

/// Commit `changes` and report total plus per-stage times.
fn timed_commit(f: &GitForest, changes: &[Change], label: &str) -> Duration {
    let t0 = Instant::now();
    let mut objects = Duration::ZERO;
    let mut reffed = Duration::ZERO;
    f.commit_batch_observed(changes, label, &mut |s| match s {
        CommitStage::ObjectsWritten { .. } => objects = t0.elapsed(),
        CommitStage::RefUpdated { .. } => reffed = t0.elapsed(),
        CommitStage::WorkTree { .. } => {}
    })
    .expect("commit")
    .expect("a commit was made");
    let total = t0.elapsed();
    println!(
        "forest-git  {label:<34} total {:>8.3}s  (objects+commit {:.3}s, ref CAS {:.3}s, work tree+index {:.3}s)",
        total.as_secs_f64(),
        objects.as_secs_f64(),
        (reffed - objects).as_secs_f64(),
        (total - reffed).as_secs_f64()
    );
    total
}

fn cli_commit(root: &Path, label: &str) {
    let t0 = Instant::now();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", label]);
    println!("git CLI     {label:<34} total {:>8.3}s  (git add -A && git commit)", t0.elapsed().as_secs_f64());
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let n_new = args.first().copied().unwrap_or(10_000);
    let n_big = args.get(1).copied().unwrap_or(100_000);
    let base = std::env::temp_dir().join(format!("forest-git-bench-{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    let skeleton = vec![("_index.md".to_string(), b"# bench\n".to_vec())];

    // Case 1: N new files into an empty forest.
    let root = base.join("new");
    let f = GitForest::init(&root, "init", &skeleton).expect("init");
    let changes: Vec<Change> = (0..n_new).map(|i| Change::Write { path: path(i), bytes: leaf(i, "v1") }).collect();
    timed_commit(&f, &changes, &format!("{n_new} new files"));

    let cli = base.join("new-cli");
    fs::create_dir_all(&cli).expect("mkdir");
    git(&cli, &["init", "-q"]);
    fs::write(cli.join("_index.md"), b"# bench\n").expect("write");
    git(&cli, &["add", "-A"]);
    git(&cli, &["commit", "-q", "-m", "init"]);
    for i in 0..n_new {
        let p = cli.join(path(i));
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(&p, leaf(i, "v1")).expect("write");
    }
    cli_commit(&cli, &format!("{n_new} new files"));

    // Case 2: one changed file in a big forest (built by one batch, untimed).
    let root = base.join("big");
    let f = GitForest::init(&root, "init", &skeleton).expect("init");
    let changes: Vec<Change> = (0..n_big).map(|i| Change::Write { path: path(i), bytes: leaf(i, "v1") }).collect();
    let t0 = Instant::now();
    f.commit_batch(&changes, "big").expect("big commit");
    println!("(setup: forest-git first commit of {n_big} files took {:.1}s)", t0.elapsed().as_secs_f64());
    for round in 1..=3 {
        let one = [Change::Write { path: path(4242 % n_big.max(1)), bytes: leaf(4242, &format!("r{round}")) }];
        timed_commit(&f, &one, &format!("1 changed of {n_big} (run {round})"));
    }

    // CLI reference on a copy of the same big work tree + repo.
    let cli = base.join("big-cli");
    let st = Command::new("cp").arg("-a").arg(&root).arg(&cli).status().expect("cp");
    assert!(st.success());
    git(&cli, &["status", "-s"]); // warm the index stat cache as a user would
    for round in 1..=3 {
        let p = cli.join(path(4242 % n_big.max(1)));
        fs::write(&p, leaf(4242, &format!("cli{round}"))).expect("write");
        cli_commit(&cli, &format!("1 changed of {n_big} (run {round})"));
    }
    let _ = fs::remove_dir_all(&base);
}
