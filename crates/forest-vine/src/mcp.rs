//! `forest serve`: the primitives as MCP tools over stdio or streamable
//! HTTP (loopback by default), on the official Rust SDK (`rmcp`).
//!
//! SQLite handles are thread-bound, so one worker thread owns the engine
//! and serves every call in order (as the reference does); the MCP tasks
//! talk to it over a channel. Success is one compact JSON text block;
//! an envelope is the same with `isError: true` (spec J.1.2).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

use crate::engine::{Vine, VineOptions};
use crate::error::VineError;

type Reply = tokio::sync::oneshot::Sender<Result<Value, VineError>>;
type Job = (String, Map<String, Value>, Reply);

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The forest directory.
    pub forest: PathBuf,
    /// Refuse writes; take no lock.
    pub readonly: bool,
}

/// Handle on the engine's worker thread.
#[derive(Clone)]
pub struct VineServer {
    tx: mpsc::Sender<Job>,
    name: Arc<String>,
    tools: Arc<Vec<Tool>>,
}

impl VineServer {
    /// Open the forest (taking the writer lock unless read-only) on a
    /// dedicated thread. Fails like [`Vine::open`] (`E_LOCKED`, ...).
    pub fn start(opts: &ServeOptions) -> Result<VineServer, VineError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<String, VineError>>();
        let root = opts.forest.clone();
        let writable = !opts.readonly;
        std::thread::Builder::new()
            .name("vine-engine".into())
            .spawn(move || worker(root, writable, rx, ready_tx))
            .map_err(|e| VineError::internal(format!("spawn engine thread: {e}")))?;
        let name = ready_rx.recv().map_err(|_| VineError::internal("engine thread died at start-up"))??;
        let tools = crate::tools::listing()
            .into_iter()
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| VineError::internal(format!("tool table: {e}")))?;
        Ok(VineServer { tx, name: Arc::new(name), tools: Arc::new(tools) })
    }

    /// Run one primitive on the engine thread.
    pub async fn call(&self, prim: &str, args: Map<String, Value>) -> Result<Value, VineError> {
        let (rtx, rrx) = tokio::sync::oneshot::channel();
        self.tx.send((prim.to_string(), args, rtx)).map_err(|_| VineError::internal("engine thread is gone"))?;
        rrx.await.map_err(|_| VineError::internal("engine thread dropped the call"))?
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

    async fn dispatch(&self, name: &str, args: Map<String, Value>) -> CallToolResult {
        if let Err(e) = self.forest_check(&args) {
            return envelope(&e);
        }
        if name == "forests" {
            if !args.is_empty() {
                return envelope(&VineError::schema("forests: takes no parameters"));
            }
            return text(&json!({"forests": [{"id": self.name.as_str(), "active": true}], "mode": "single"}), false);
        }
        match self.call(name, args).await {
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

fn worker(root: PathBuf, writable: bool, rx: mpsc::Receiver<Job>, ready: mpsc::Sender<Result<String, VineError>>) {
    let mut vine = match Vine::open(&root, VineOptions { writable, session: None }).map(|mut v| {
        // FOREST_HYBRID_LOCATE=1: the reference's `hybrid_locate` (off by default).
        v.set_hybrid(std::env::var("FOREST_HYBRID_LOCATE").is_ok_and(|x| x == "1"));
        v
    }) {
        Ok(v) => v,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let name = vine.root().file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let _ = ready.send(Ok(name));
    while let Ok((prim, args, reply)) = rx.recv() {
        // A panic inside one call must not take the server down.
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| vine.call(&prim, &args)))
            .unwrap_or_else(|_| Err(VineError::internal(format!("{prim}: internal error (panic)"))));
        let _ = reply.send(out);
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(McpError::invalid_params(format!("unknown tool: {}", request.name), None));
        }
        let args = request.arguments.unwrap_or_default();
        Ok(self.dispatch(&request.name, args).await.into())
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

/// Serve MCP streamable HTTP at `http://{addr}/mcp` until `shutdown` fires.
pub async fn serve_http(
    server: VineServer,
    addr: std::net::SocketAddr,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    on_bound: impl FnOnce(std::net::SocketAddr),
) -> Result<(), VineError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let host = addr.ip().to_string();
    let cfg = StreamableHttpServerConfig::default().with_allowed_hosts([
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        host,
    ]);
    let factory = server.clone();
    let service =
        StreamableHttpService::new(move || Ok(factory.clone()), Arc::new(LocalSessionManager::default()), cfg);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| VineError::internal(format!("bind {addr}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| VineError::internal(e.to_string()))?;
    on_bound(bound);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            acc = listener.accept() => {
                let Ok((stream, _)) = acc else { continue };
                let svc = service.clone();
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let hsvc = hyper_util::service::TowerToHyperService::new(svc);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, hsvc).await;
                });
            }
        }
    }
    Ok(())
}

/// The served forest's id (its directory name).
pub fn forest_id(root: &Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()
}
