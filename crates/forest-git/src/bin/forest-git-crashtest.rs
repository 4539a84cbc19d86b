//! Test helper for the kill test (not a user tool).
//!
//! `forest-git-crashtest <root> <paths-out> <crash-at> <count>` commits one
//! batch into the forest at `<root>`: `count` writes `d<i%40>/n<i>.md` plus
//! deletes of `gone/g<j>.md` (j < 50). Before starting it writes the batch's
//! path list (one per line) to `<paths-out>`. `<crash-at>` is `objects`,
//! `ref`, `worktree:<n>` (SIGKILL itself at that stage; `worktree:<n>` at
//! the first progress report with at least n paths done) or `none` (finish;
//! the caller may SIGKILL it at any time instead).

use std::path::Path;
use std::process::ExitCode;

use forest_git::{Change, CommitStage, GitForest};

/// Number of files the parent's initial commit put under `gone/`.
const GONE: usize = 50;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: forest-git-crashtest <root> <paths-out> <crash-at> <count>");
        return ExitCode::from(2);
    }
    let (root, paths_out, crash_at) = (Path::new(&args[1]), Path::new(&args[2]), &args[3]);
    let Ok(count) = args[4].parse::<usize>() else {
        eprintln!("bad count {}", args[4]);
        return ExitCode::from(2);
    };
    let mut changes: Vec<Change> = (0..count)
        .map(|i| Change::Write {
            path: format!("d{}/n{i}.md", i % 40),
            bytes: format!("---\nid: n{i}\n---\n\n# new version {i}\n").into_bytes(),
        })
        .collect();
    changes.extend((0..GONE).map(|j| Change::Delete { path: format!("gone/g{j}.md") }));
    let list: String = changes
        .iter()
        .map(|c| match c {
            Change::Write { path, .. } | Change::Stored { path, .. } | Change::Delete { path } => format!("{path}\n"),
        })
        .collect();
    if let Err(e) = forest_fs::atomic_write(paths_out, list.as_bytes()) {
        eprintln!("write {}: {e}", paths_out.display());
        return ExitCode::from(1);
    }
    let forest = match GitForest::open(root) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{}", forest_model::error_chain(&e));
            return ExitCode::from(1);
        }
    };
    let worktree_n: Option<usize> = crash_at.strip_prefix("worktree:").and_then(|n| n.parse().ok());
    let mut observer = |stage: CommitStage| {
        let die = match stage {
            CommitStage::ObjectsWritten { .. } => crash_at == "objects",
            CommitStage::RefUpdated { .. } => crash_at == "ref",
            CommitStage::WorkTree { done, .. } => worktree_n.is_some_and(|n| done >= n),
        };
        if die {
            // SAFETY: kill our own pid; SIGKILL is exactly the crash we test.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
    };
    match forest.commit_batch_observed(&changes, "crash batch", &mut observer) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", forest_model::error_chain(&e));
            ExitCode::from(1)
        }
    }
}
