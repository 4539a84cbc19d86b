//! `forest token create|list|revoke`: the bearer tokens `forest serve
//! --transport http` accepts (forest_vine::tokens does the work).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, Subcommand};
use forest_vine::tokens;
use serde_json::json;

/// Where the tokens live.
#[derive(Args, Clone)]
pub struct Store {
    /// Forest directory (default: $FOREST_DIR, else the current directory).
    #[arg(long, env = "FOREST_DIR", default_value = ".")]
    forest: PathBuf,
    /// A token file instead of the forest's `.forest/tokens` (e.g. the file
    /// a Kubernetes Secret is made from).
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Store {
    fn path(&self) -> PathBuf {
        store_path(&self.forest, self.token_file.as_deref())
    }
}

/// `--token-file` if given, else `<forest>/.forest/tokens`.
pub fn store_path(forest: &Path, token_file: Option<&Path>) -> PathBuf {
    token_file.map(Path::to_path_buf).unwrap_or_else(|| tokens::default_store(forest))
}

#[derive(Subcommand)]
pub enum TokenCmd {
    /// Create a token; prints its secret once (only a hash is stored).
    Create {
        /// Token name (who, in the audit log).
        name: String,
        /// read | write (write also deposits shared heat).
        #[arg(long, value_parser = ["read", "write"])]
        scope: String,
        /// Branch prefix the token may see (repeat; default: the whole forest).
        #[arg(long = "branch")]
        branches: Vec<String>,
        #[command(flatten)]
        store: Store,
    },
    /// List tokens (names, scopes, branches; never secrets).
    List {
        #[command(flatten)]
        store: Store,
    },
    /// Revoke a token by name (a running server keeps it until restarted).
    Revoke {
        /// Token name.
        name: String,
        #[command(flatten)]
        store: Store,
    },
}

fn fail(e: tokens::TokenError) -> anyhow::Error {
    anyhow::anyhow!("{}: {}", e.code(), forest_model::error_chain(&e))
}

/// Run a token command; returns the exit code.
pub fn run(cmd: TokenCmd) -> Result<u8> {
    match cmd {
        TokenCmd::Create { name, scope, branches, store } => {
            let secret = tokens::create(&store.path(), &name, scope == "write", &branches).map_err(fail)?;
            if store.json {
                println!("{}", json!({"name": name, "scope": scope, "branches": branches, "token": secret}));
            } else {
                println!("{secret}");
                eprintln!("token '{name}' created in {}; the secret above is shown once", store.path().display());
            }
        }
        TokenCmd::List { store } => {
            let all = tokens::load(&store.path()).map_err(fail)?;
            if store.json {
                let v: Vec<_> = all
                    .iter()
                    .map(|r| json!({"name": r.name, "scope": r.scope, "branches": r.branches, "created": r.created}))
                    .collect();
                println!("{}", json!({"tokens": v}));
            } else {
                for r in &all {
                    let b = if r.branches.is_empty() { "*".to_string() } else { r.branches.join(",") };
                    println!("{}\t{}\t{}\t{}", r.name, r.scope, b, r.created);
                }
            }
        }
        TokenCmd::Revoke { name, store } => {
            tokens::revoke(&store.path(), &name).map_err(fail)?;
            if store.json {
                println!("{}", json!({"revoked": name}));
            }
        }
    }
    Ok(0)
}
