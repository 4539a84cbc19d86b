//! The read side on the command line: `forest serve` (MCP) and the verbs
//! `look`, `move`, `pick`, `sniff`, `scan`, `harvest`, `query`. Each verb
//! is one call of the same dispatcher the MCP tools use, on a read-only
//! engine; `--json` prints the payload (or the error envelope) as JSON.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use forest_vine::audit::{AuditLog, Rotation};
use forest_vine::http::HttpOptions;
use forest_vine::mcp::{serve_http, serve_stdio, ServeOptions, VineServer};
use forest_vine::tokens::{self, TokenSet};
use forest_vine::{Vine, VineOptions};
use serde_json::{json, Map, Value};

#[derive(Args, Clone)]
pub struct VineForest {
    /// Forest directory (default: $FOREST_DIR, else the current directory).
    #[arg(long, env = "FOREST_DIR", default_value = ".")]
    forest: PathBuf,
    /// Session id (session heat accumulates across calls that share it).
    #[arg(long)]
    session: Option<String>,
    /// Print the JSON payload (or the error envelope).
    #[arg(long)]
    json: bool,
}

/// Access and limits of `serve --transport http`.
#[derive(Args, Clone)]
pub struct ServeHttp {
    /// Accept the bearer tokens of this file (e.g. a mounted Kubernetes
    /// Secret made with `forest token create --token-file`) instead of the
    /// forest's `.forest/tokens`. With tokens, every HTTP request needs one.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Browser origin allowed besides loopback ones (repeat; `https://app.example:443`).
    #[arg(long = "allow-origin")]
    allow_origins: Vec<String>,
    /// Host name clients use besides loopback (repeat; needed for --host 0.0.0.0).
    #[arg(long = "allow-host")]
    allow_hosts: Vec<String>,
    /// Open MCP sessions at most (raised to the sum of the per-token caps
    /// plus one when lower, so one token never locks the others out).
    #[arg(long, default_value_t = 256)]
    max_sessions: usize,
    /// Open MCP sessions per token (tokenless: for all clients) at most.
    #[arg(long, default_value_t = 16)]
    max_sessions_per_token: usize,
    /// Close a session after this many seconds without a request.
    #[arg(long, default_value_t = 300)]
    session_idle_secs: u64,
    /// Failed authentications per peer address per 10 s before 429.
    #[arg(long, default_value_t = 20)]
    max_auth_failures: u64,
    /// Requests in flight per client (token, or address without tokens) at most.
    #[arg(long, default_value_t = 8)]
    max_inflight: usize,
    /// Audit log (writes and refused calls; default `<forest>/.forest/audit.log`, rotated).
    #[arg(long)]
    audit_log: Option<PathBuf>,
    /// Access log (failed logins aggregated per peer per 10 s, caps;
    /// default `<forest>/.forest/access.log`, rotated apart from the audit log).
    #[arg(long)]
    access_log: Option<PathBuf>,
    /// Serve no web console (by default a read-only console is served under
    /// `/ui/` on the same port, behind the same tokens).
    #[arg(long)]
    no_ui: bool,
    /// Mark the console's session cookie `Secure` (when a TLS proxy fronts the server).
    #[arg(long)]
    secure_cookie: bool,
}

#[derive(Subcommand)]
pub enum VineCmd {
    /// Serve the forest over MCP (stdio, or streamable HTTP on loopback).
    Serve {
        /// Forest directory (default: $FOREST_DIR, else the current directory).
        #[arg(long, env = "FOREST_DIR", default_value = ".")]
        forest: PathBuf,
        /// stdio | http
        #[arg(long, default_value = "stdio", value_parser = ["stdio", "http"])]
        transport: String,
        /// Refuse writes and take no writer lock (for a forest the Gardener writes).
        #[arg(long)]
        readonly: bool,
        /// Bind address for http.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Port for http (0 = any free port).
        #[arg(long, default_value_t = 8000)]
        port: u16,
        #[command(flatten)]
        http: ServeHttp,
    },
    /// Digest of one or more nodes (<=500 tokens each).
    Look {
        #[command(flatten)]
        f: VineForest,
        /// Node ids (several = one batch).
        #[arg(required = true)]
        ids: Vec<String>,
        /// Only these digest fields.
        #[arg(long)]
        fields: Vec<String>,
    },
    /// Typed neighbours of a node.
    Move {
        #[command(flatten)]
        f: VineForest,
        id: String,
        /// Only this rel (`children` lists a branch's children).
        #[arg(long)]
        rel: Option<String>,
        /// out | in | both
        #[arg(long, default_value = "out")]
        direction: String,
    },
    /// The body of a node, or sections of it, or a page.
    Pick {
        #[command(flatten)]
        f: VineForest,
        /// Node ids (several = one batch).
        #[arg(required = true)]
        ids: Vec<String>,
        /// Section header(s).
        #[arg(long)]
        section: Vec<String>,
        /// Page cursor (`next` of the previous page).
        #[arg(long)]
        after: Option<String>,
    },
    /// Literal search over node bodies.
    Sniff {
        #[command(flatten)]
        f: VineForest,
        /// Terms (quote a phrase).
        #[arg(required = true)]
        terms: Vec<String>,
        #[arg(long)]
        scope: Option<String>,
        #[arg(short, long)]
        k: Option<i64>,
        #[arg(long = "type")]
        type_filter: Option<String>,
    },
    /// Catalog listing of a branch's children.
    Scan {
        #[command(flatten)]
        f: VineForest,
        parent: String,
        /// Filter as KEY=VALUE (repeatable) or one JSON object.
        #[arg(long)]
        filter: Vec<String>,
        #[arg(long)]
        fields: Vec<String>,
        #[arg(long)]
        recursive: bool,
        #[arg(long)]
        limit: Option<i64>,
        /// Cursor: ids after this one, id order.
        #[arg(long)]
        after: Option<String>,
    },
    /// One-shot evidence for a question.
    Harvest {
        #[command(flatten)]
        f: VineForest,
        #[arg(required = true)]
        query: Vec<String>,
        #[arg(long)]
        terms: Vec<String>,
        #[arg(short, long)]
        k: Option<i64>,
    },
    /// Read-only SQL over a dataset node.
    Query {
        #[command(flatten)]
        f: VineForest,
        id: String,
        sql: String,
    },
}

fn one_or_many(v: &[String]) -> Value {
    if v.len() == 1 {
        json!(v[0])
    } else {
        json!(v)
    }
}

fn parse_filter(items: &[String]) -> Result<Option<Value>> {
    if items.is_empty() {
        return Ok(None);
    }
    if items.len() == 1 && items[0].trim_start().starts_with('{') {
        return Ok(Some(serde_json::from_str(&items[0]).context("--filter: not a JSON object")?));
    }
    let mut m = Map::new();
    for it in items {
        let (k, v) = it.split_once('=').with_context(|| format!("--filter expects KEY=VALUE, got '{it}'"))?;
        let val = match k {
            "tags_any" => json!(v.split(',').map(str::trim).collect::<Vec<_>>()),
            "min_confidence" => {
                json!(v.parse::<f64>().with_context(|| format!("min_confidence: '{v}' is not a number"))?)
            }
            _ => json!(v),
        };
        m.insert(k.to_string(), val);
    }
    Ok(Some(Value::Object(m)))
}

/// Run a verb; returns the exit code.
pub fn run(cmd: VineCmd) -> Result<u8> {
    let (f, prim, args) = match cmd {
        VineCmd::Serve { forest, transport, readonly, host, port, http } => {
            return serve(forest, &transport, readonly, &host, port, &http)
        }
        VineCmd::Look { f, ids, fields } => {
            let mut a = json!({"id": one_or_many(&ids)});
            if !fields.is_empty() {
                a["fields"] = json!(fields);
            }
            (f, "look", a)
        }
        VineCmd::Move { f, id, rel, direction } => (f, "move", json!({"id": id, "rel": rel, "direction": direction})),
        VineCmd::Pick { f, ids, section, after } => {
            let sec = match section.len() {
                0 => Value::Null,
                1 => json!(section[0]),
                _ => json!(section),
            };
            (f, "pick", json!({"id": one_or_many(&ids), "section": sec, "after": after}))
        }
        VineCmd::Sniff { f, terms, scope, k, type_filter } => {
            (f, "sniff", json!({"terms": terms, "scope": scope, "k": k, "type_filter": type_filter}))
        }
        VineCmd::Scan { f, parent, filter, fields, recursive, limit, after } => {
            let fields = if fields.is_empty() { Value::Null } else { json!(fields) };
            let a = json!({"parent_id": parent, "filter": parse_filter(&filter)?, "fields": fields, "recursive": recursive, "limit": limit, "after": after});
            (f, "scan", a)
        }
        VineCmd::Harvest { f, query, terms, k } => {
            let terms = if terms.is_empty() { Value::Null } else { json!(terms) };
            (f, "harvest", json!({"query": query.join(" "), "terms": terms, "k": k}))
        }
        VineCmd::Query { f, id, sql } => (f, "query", json!({"id": id, "sql": sql})),
    };
    let mut vine = Vine::open(&f.forest, VineOptions { writable: false, session: f.session.clone() })
        .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
    let args = args.as_object().cloned().unwrap_or_default();
    match vine.call(prim, &args) {
        Ok(v) => {
            if f.json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print_human(prim, &v);
            }
            Ok(0)
        }
        Err(e) => {
            if f.json {
                println!("{}", serde_json::to_string_pretty(&e.envelope())?);
            } else {
                eprintln!("forest: {}: {}", e.code, e.message);
                if !e.hint.is_empty() {
                    eprintln!("hint: {}", crate::render::cli_hint(&e.hint));
                }
            }
            Ok(1)
        }
    }
}

fn print_human(prim: &str, v: &Value) {
    let list = |key: &str| v.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    match prim {
        "look" => print!("{}", crate::render::look(v)),
        "pick" if v.get("body").is_none() => print!("{}", crate::render::pick(v)),
        "pick" if v.get("body").is_some() => {
            print!("{}", v["body"].as_str().unwrap_or_default());
            if let Some(n) = v.get("next") {
                eprintln!("\n-- more: --after {}", n.as_str().unwrap_or_default());
            }
        }
        "sniff" | "harvest" => {
            for r in list("results") {
                println!("{}  {}", r["score"], r["id"].as_str().unwrap_or_default());
                for m in r["matches"].as_array().cloned().unwrap_or_default() {
                    println!("    {}: {}", m["line"], m["snippet"].as_str().unwrap_or_default());
                }
            }
        }
        "move" => {
            for n in list("neighbors") {
                println!(
                    "{} {} {}  — {}",
                    n["direction"].as_str().unwrap_or(""),
                    n["rel"].as_str().unwrap_or(""),
                    n["id"].as_str().unwrap_or(""),
                    n["summary"].as_str().unwrap_or("")
                );
            }
        }
        "scan" => {
            for n in list("nodes") {
                println!(
                    "{}  {}",
                    n["id"].as_str().unwrap_or(""),
                    n.get("summary").and_then(Value::as_str).unwrap_or("")
                );
            }
            println!("{} of {}", v["returned"], v["total"]);
        }
        "query" => {
            println!(
                "{}",
                list("columns").iter().map(|c| c.as_str().unwrap_or("").to_string()).collect::<Vec<_>>().join("\t")
            );
            for r in list("rows") {
                let cells: Vec<String> = r
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|c| match c {
                        Value::String(s) => s.clone(),
                        o => o.to_string(),
                    })
                    .collect();
                println!("{}", cells.join("\t"));
            }
        }
        _ => println!("{}", serde_json::to_string_pretty(v).unwrap_or_default()),
    }
    if v.get("truncated") == Some(&json!(true)) {
        eprintln!(
            "(truncated: {})",
            v.get("dropped").or(v.get("truncated_fields")).map(|d| d.to_string()).unwrap_or_default()
        );
    }
}

/// Tokens (when any), origins, hosts, limits and the audit log of `serve`.
fn http_options(forest: &std::path::Path, h: &ServeHttp) -> Result<HttpOptions> {
    let store = crate::token_cmd::store_path(forest, h.token_file.as_deref());
    let records =
        tokens::load(&store).map_err(|e| anyhow::anyhow!("{}: {}", e.code(), forest_model::error_chain(&e)))?;
    if h.token_file.is_some() && records.is_empty() {
        anyhow::bail!("E_SCHEMA: --token-file {} holds no token", store.display());
    }
    let audit = h.audit_log.clone().unwrap_or_else(|| AuditLog::default_path(forest));
    let access = h.access_log.clone().unwrap_or_else(|| AuditLog::default_access_path(forest));
    Ok(HttpOptions {
        tokens: Some(std::sync::Arc::new(TokenSet::new(records))),
        allow_origins: h.allow_origins.clone(),
        allow_hosts: h.allow_hosts.clone(),
        max_sessions: h.max_sessions.max(1),
        max_sessions_per_token: h.max_sessions_per_token.max(1),
        session_idle: std::time::Duration::from_secs(h.session_idle_secs.max(1)),
        max_auth_failures: h.max_auth_failures.max(1),
        max_inflight: h.max_inflight.max(1),
        audit: Some(std::sync::Arc::new(AuditLog::new(&audit, Rotation::default()))),
        access_log: Some(std::sync::Arc::new(AuditLog::new(&access, Rotation::default()))),
        ..HttpOptions::default()
    })
}

fn serve(forest: PathBuf, transport: &str, readonly: bool, host: &str, port: u16, h: &ServeHttp) -> Result<u8> {
    let opts = if transport == "http" { Some(http_options(&forest, h)?) } else { None };
    let audit = opts.as_ref().and_then(|o| o.audit.clone());
    let queue_depth = opts.as_ref().map_or(0, forest_vine::http::effective_queue_depth);
    let server = VineServer::start(&ServeOptions { forest: forest.clone(), readonly, audit, queue_depth })
        .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async move {
        if transport == "http" {
            let addr: std::net::SocketAddr = format!("{host}:{port}").parse().context("--host/--port")?;
            // SIGINT/SIGTERM set a flag (the Ranger daemon's handlers); poll it.
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            forest_ranger::install_signal_handlers(stop.clone())?;
            let shutdown = async move {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                }
            };
            let mut opts = opts.unwrap_or_default();
            let auth = if opts.tokens.as_ref().is_some_and(|t| !t.is_empty()) { "bearer tokens" } else { "no tokens" };
            let ui = !h.no_ui;
            if ui {
                let console = forest_console::Console::new(forest_console::ConsoleOptions {
                    server: server.clone(),
                    root: forest.clone(),
                    tokens: opts.tokens.clone(),
                    secure_cookie: h.secure_cookie,
                })
                .map_err(|e| anyhow::anyhow!("{}: {}", e.code(), forest_model::error_chain(&e)))?;
                opts.extra = Some(forest_vine::http::ExtraHandler(std::sync::Arc::new(console)));
            }
            let on_bound = move |a| {
                let console = if ui { format!("; web console on http://{a}/ui/") } else { String::new() };
                eprintln!("forest serve: MCP streamable HTTP on http://{a}/mcp ({auth}){console}")
            };
            let cap = forest_vine::http::effective_max_sessions(&opts);
            if cap > opts.max_sessions {
                eprintln!("forest serve: --max-sessions raised to {cap} (the per-token caps' sum plus one)");
            }
            serve_http(server.clone(), addr, opts, shutdown, on_bound)
                .await
                .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
            // A clean stop leaves the catalog and trails whole in their
            // main files (write-ahead logs checkpointed).
            server.checkpoint();
        } else {
            serve_stdio(server.clone()).await.map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
            server.checkpoint();
        }
        Ok::<u8, anyhow::Error>(0)
    })
}
