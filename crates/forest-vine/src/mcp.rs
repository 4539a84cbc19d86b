//! `forest serve`: the primitives as MCP tools over stdio or streamable
//! HTTP (loopback by default), on the official Rust SDK (`rmcp`).
//!
//! SQLite handles are thread-bound, so the engines live on the threads of
//! a [`Pool`] (bounded read workers, one writer); the MCP tasks hand each
//! call over with a [`CallCtx`] (deadline). Success is one compact JSON text block;
//! an envelope is the same with `isError: true` (spec J.1.2).

use forest_model::ErrorCode;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

use crate::access::Access;
use crate::audit::{AuditLog, Entry};
use crate::error::VineError;
pub use crate::pool::forest_id;
use crate::pool::{CallCtx, Pool};

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The forest directory.
    pub forest: PathBuf,
    /// Refuse writes; take no lock.
    pub readonly: bool,
    /// Audit writes and refused calls here (`None`: no audit log).
    pub audit: Option<Arc<AuditLog>>,
    /// Calls waiting per worker queue before `E_BUSY` (raised to
    /// [`crate::pool::QUEUE_DEPTH`]; see [`crate::http::effective_queue_depth`]).
    pub queue_depth: usize,
}

/// Handle on the engines' worker pool.
#[derive(Clone)]
pub struct VineServer {
    pool: Arc<Pool>,
    root: Arc<PathBuf>,
    writable: bool,
    name: Arc<String>,
    tools: Arc<Vec<Tool>>,
    audit: Option<Arc<AuditLog>>,
}

impl VineServer {
    /// Open the forest (taking the writer lock unless read-only) on the
    /// worker pool, with SQLite's heap capped for the process. Fails like
    /// [`crate::Vine::open`] (`E_LOCKED`, ...).
    pub fn start(opts: &ServeOptions) -> Result<VineServer, VineError> {
        crate::sqlcap::cap_heap();
        let pool = Pool::start_with(&opts.forest, !opts.readonly, opts.queue_depth)?;
        let name = pool.name().to_string();
        let tools = crate::tools::listing()
            .into_iter()
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| VineError::internal(format!("tool table: {e}")))?;
        let root = std::fs::canonicalize(&opts.forest).unwrap_or_else(|_| opts.forest.clone());
        Ok(VineServer {
            pool: Arc::new(pool),
            root: Arc::new(root),
            writable: !opts.readonly,
            name: Arc::new(name),
            tools: Arc::new(tools),
            audit: opts.audit.clone(),
        })
    }

    /// On a clean stop of a writable server: checkpoint the write-ahead
    /// logs of the catalog and the trails into their main files
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`), so a copy of `_derived/` taken
    /// after the stop is whole. A read-only server writes nothing.
    pub fn checkpoint(&self) {
        if !self.writable {
            return;
        }
        for rel in [forest_derived::catalog::CATALOG_PATH, forest_derived::catalog::TRAILS_PATH] {
            let path = self.root.join(rel);
            if !path.is_file() {
                continue;
            }
            let done = rusqlite::Connection::open(&path).and_then(|c| {
                c.busy_timeout(std::time::Duration::from_secs(2))?;
                c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0))
            });
            match done {
                Ok(0) => tracing::info!(event = "vine.checkpoint", path = %path.display()),
                Ok(_) => tracing::warn!(event = "vine.checkpoint_busy", path = %path.display()),
                Err(e) => tracing::warn!(event = "vine.checkpoint_failed", path = %path.display(), error = %e),
            }
        }
    }

    /// Run one primitive on the pool with `access`'s rights, under the
    /// default deadline.
    pub async fn call(&self, prim: &str, args: Map<String, Value>, access: &Access) -> Result<Value, VineError> {
        self.call_ctx(prim, args, CallCtx { access: access.clone(), ..CallCtx::default() }).await
    }

    /// Run one primitive on the pool with a per-call context.
    pub async fn call_ctx(&self, prim: &str, args: Map<String, Value>, ctx: CallCtx) -> Result<Value, VineError> {
        self.pool.call(prim, args, ctx).await
    }

    fn forest_check(&self, args: &Map<String, Value>) -> Result<(), VineError> {
        match args.get("forest") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(f)) if f == self.name.as_str() => Ok(()),
            Some(other) => {
                Err(VineError::not_found(format!("unknown forest: {}", other.as_str().unwrap_or(&other.to_string())))
                    .hint(format!("This server serves one forest: '{}'. Omit forest= or pass that id.", self.name)))
            }
        }
    }

    /// Audit a write (any outcome) or a refused call.
    fn audit(&self, caller: &Caller, prim: &str, args: &Map<String, Value>, outcome: &str, code: &str) {
        let Some(log) = &self.audit else { return };
        if outcome == "refused" || crate::access::WRITES.contains(&prim) {
            let ids = crate::access::named_ids(prim, args);
            let peer = caller.peer.clone();
            log.record(&Entry { who: &caller.access.name, tool: prim, ids, outcome, code, peer });
        }
    }

    async fn dispatch(&self, name: &str, args: Map<String, Value>, caller: &Caller) -> CallToolResult {
        if let Err(e) = self.forest_check(&args) {
            return envelope(&e);
        }
        // Refused before the engine (read token writing, ids outside the
        // branches): audited with the reason, answered with the envelope.
        if let Err(r) = caller.access.check(name, &args) {
            self.audit(caller, name, &args, "refused", r.reason);
            return envelope(&r.error);
        }
        if name == "forests" {
            if !args.is_empty() {
                return envelope(&VineError::schema("forests: takes no parameters"));
            }
            return text(&json!({"forests": [{"id": self.name.as_str(), "active": true}], "mode": "single"}), false);
        }
        let ctx = CallCtx { access: caller.access.clone(), session: caller.session.clone(), ..CallCtx::default() };
        let out = self.call_ctx(name, args.clone(), ctx).await;
        match &out {
            Ok(_) => self.audit(caller, name, &args, "ok", ""),
            Err(e) if e.code == ErrorCode::Forbidden => self.audit(caller, name, &args, "refused", e.code.as_str()),
            Err(e) => self.audit(caller, name, &args, "error", e.code.as_str()),
        }
        match out {
            Err(e) => envelope(&e),
            Ok(v) if name == "view" => {
                let path = v.get("path").and_then(Value::as_str).unwrap_or_default().to_string();
                let mime = v.get("media_type").and_then(Value::as_str).unwrap_or_default().to_string();
                let mut head = v.clone();
                if let Some(m) = head.as_object_mut() {
                    m.remove("path");
                }
                match std::fs::read(&path) {
                    Ok(bytes) => CallToolResult::success(vec![
                        ContentBlock::text(compact(&head)),
                        ContentBlock::image(base64_encode(&bytes), mime),
                    ]),
                    Err(_) => envelope(&VineError::not_found("payload missing")),
                }
            }
            Ok(v) => text(&v, false),
        }
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "{}".into())
}

fn text(v: &Value, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(compact(v))];
    if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

fn envelope(e: &VineError) -> CallToolResult {
    text(&e.envelope(), true)
}

fn base64_encode(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if c.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}

impl ServerHandler for VineServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(crate::tools::INSTRUCTIONS);
        info.server_info = Implementation::new("vine", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(McpError::invalid_params(format!("unknown tool: {}", request.name), None));
        }
        let args = request.arguments.unwrap_or_default();
        Ok(self.dispatch(&request.name, args, &caller(&context)).await.into())
    }
}

/// Serve over stdin/stdout until the client closes the stream.
pub async fn serve_stdio(server: VineServer) -> Result<(), VineError> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| VineError::internal(format!("mcp stdio start: {e}")))?;
    running.waiting().await.map_err(|e| VineError::internal(format!("mcp stdio: {e}")))?;
    Ok(())
}

/// The caller of an MCP request: the HTTP guard's [`Caller`]; over stdio
/// (no HTTP parts) the process owner. HTTP parts without a caller (never
/// made by the guard) get no rights beyond reading nothing.
fn caller(ctx: &RequestContext<RoleServer>) -> Caller {
    match ctx.extensions.get::<http::request::Parts>() {
        None => Caller { access: Access::owner(), peer: None, session: String::new() },
        Some(p) => {
            let sid = p.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).unwrap_or_default();
            match p.extensions.get::<crate::http::Caller>() {
                Some(c) => Caller {
                    session: format!("{}#{sid}", c.access.name),
                    access: c.access.clone(),
                    peer: Some(c.peer.clone()),
                },
                None => Caller {
                    access: Access::new("-", false, &["\u{0}/".to_string()]),
                    peer: None,
                    session: format!("-#{sid}"),
                },
            }
        }
    }
}

/// Who is calling, for access, audit and the session's trace.
#[derive(Debug, Clone)]
struct Caller {
    access: Access,
    peer: Option<String>,
    /// Token name and MCP session id: the key of this caller's trace.
    session: String,
}

/// Serve MCP streamable HTTP at `http://{addr}/mcp` until `shutdown` fires
/// (tokens, limits and origins in `opts`; see [`crate::http`]).
pub async fn serve_http(
    server: VineServer,
    addr: std::net::SocketAddr,
    opts: crate::http::HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    on_bound: impl FnOnce(std::net::SocketAddr),
) -> Result<(), VineError> {
    crate::http::serve(server, addr, opts, shutdown, on_bound).await
}
