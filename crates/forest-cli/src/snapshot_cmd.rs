//! `forest snapshot create|restore`: argument mapping and rendering over
//! `forest-snapshot`. Create holds the writer lock (a sync renaming payloads
//! mid-snapshot would tear it); restore rebuilds the derived layer after.

use crate::cli::{forest_root, print_json, ForestArg};
use anyhow::Result;
use clap::Subcommand;
use std::path::PathBuf;

/// `forest snapshot ...`.
#[derive(Subcommand)]
pub enum SnapshotCmd {
    /// Pack the forest into one `.forest` file: git bundle + payloads + README
    /// (the reference engine's container; `vine snapshot restore` reads it).
    Create {
        #[command(flatten)]
        f: ForestArg,
        /// Output file (default: `<forest>-<date>.forest` beside the forest).
        file: Option<PathBuf>,
        /// Leave the `.db`/`.sqlite` and `_assets/` payloads out (their nodes restore dead).
        #[arg(long)]
        no_payloads: bool,
        #[arg(long)]
        json: bool,
    },
    /// Restore a `.forest` container (or a bare git bundle) into a new directory.
    Restore {
        /// Snapshot file.
        file: PathBuf,
        /// Target directory (absent or empty).
        dir: PathBuf,
        /// Ceiling on the payloads' declared uncompressed total (the reference's 2 GiB by default).
        #[arg(long, default_value_t = forest_snapshot::MAX_UNCOMPRESSED)]
        max_payload_bytes: u64,
        #[arg(long)]
        json: bool,
    },
}

/// Run one snapshot subcommand; the exit code.
pub fn run(cmd: SnapshotCmd) -> Result<u8> {
    match cmd {
        SnapshotCmd::Create { f, file, no_payloads, json } => {
            let root = forest_root(&f)?;
            let _lock = forest_git::WriterLock::acquire(&root)?;
            let opts = forest_snapshot::CreateOptions { with_payloads: !no_payloads };
            let r = forest_snapshot::create_snapshot(&root, file.as_deref(), &opts)?;
            if json {
                print_json(&r)?;
            } else {
                println!("snapshot: {} ({} bytes, {} payload(s))", r.snapshot, r.bytes, r.payloads);
                if r.payloads_omitted > 0 {
                    println!(
                        "left out: {} payload file(s) (--no-payloads); the nodes naming them will restore dead",
                        r.payloads_omitted
                    );
                }
            }
            for s in &r.skipped {
                eprintln!("skipped: {s}");
            }
            if r.payload_bytes > forest_snapshot::MAX_UNCOMPRESSED {
                eprintln!(
                    "warning: the payloads ({} bytes) exceed the 2 GiB restore ceiling: the reference engine refuses this snapshot; `forest snapshot restore --max-payload-bytes {}` accepts it",
                    r.payload_bytes, r.payload_bytes
                );
            }
            Ok(0)
        }
        SnapshotCmd::Restore { file, dir, max_payload_bytes, json } => {
            let opts = forest_snapshot::RestoreOptions { max_uncompressed: max_payload_bytes };
            let r = forest_snapshot::restore_snapshot(&file, &dir, &opts)?;
            let root = PathBuf::from(&r.forest);
            // The derived layer is disposable and never travels: rebuild it.
            if root.join("_index.md").is_file() {
                forest_derived::catalog::reindex(&root)?;
            } else {
                eprintln!("warning: {} has no _index.md; restored as a plain git repository", root.display());
            }
            if json {
                print_json(&r)?;
            } else {
                let extra = if r.restored_payloads > 0 {
                    format!(" (+{} payload(s))", r.restored_payloads)
                } else {
                    String::new()
                };
                println!("restored {} nodes -> {}{extra}", r.nodes, r.forest);
            }
            if r.payloads_missing > 0 {
                eprintln!("warning: {} node(s) name a payload this snapshot did not carry", r.payloads_missing);
            }
            Ok(0)
        }
    }
}
