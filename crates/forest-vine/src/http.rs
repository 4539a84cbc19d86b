//! The HTTP face of `forest serve`: rmcp's streamable HTTP service behind
//! one guard per request that
//!
//! - authenticates the bearer token (401 with `WWW-Authenticate: Bearer`
//!   when missing or unknown) and hands the caller's [`Access`] to the
//!   MCP handler through the request extensions;
//! - limits failed authentication per peer address (429 past the limit,
//!   one aggregated line per peer per interval in the access log; see
//!   [`crate::ratelimit`]);
//! - binds each MCP session to the token that opened it (another token
//!   presenting its id gets 404, as for an unknown session);
//! - caps the sessions per token (429 `E_BUSY`) and on the whole server
//!   (503 `E_BUSY`; never below the sum of the per-token caps, so one
//!   token cannot lock the others out), and each client's in-flight POSTs
//!   (429 `E_BUSY`; a client is its token, or its address without tokens);
//! - reads the body within a deadline (408) and a size cap (413).
//!
//! Origin is matched exactly here ([`crate::origin`]) and Host by rmcp,
//! against the lists [`plan_bind`] builds (loopback by default;
//! DNS-rebinding protection); hyper closes a connection whose headers do
//! not arrive in time; idle sessions close after `session_idle`.
//! Without tokens the server binds loopback only.
//!
//! Paths an [`Extra`] handler claims (the web console under `/ui/`) pass
//! the same Origin check, a Host check against the same list and the same
//! body deadline and cap, then go to that handler instead of rmcp; it
//! authenticates its own callers with the same [`TokenSet`].

use forest_model::ErrorCode;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use serde_json::json;

use crate::access::Access;
use crate::audit::{AuditLog, Entry};
use crate::error::VineError;
use crate::origin::origin_allowed;
use crate::ratelimit::{Aggregate, AuthFailures, Verdict};
use crate::tokens::TokenSet;

/// Limits and lists of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Accepted tokens; `None` or empty = no authentication (loopback only).
    pub tokens: Option<Arc<TokenSet>>,
    /// Browser origins allowed besides loopback ones (`https://app.example:443`).
    pub allow_origins: Vec<String>,
    /// Host names clients use besides loopback (required for `0.0.0.0`).
    pub allow_hosts: Vec<String>,
    /// Open MCP sessions at most (raised to the sum of the per-token caps
    /// when lower; see [`effective_max_sessions`]).
    pub max_sessions: usize,
    /// Open MCP sessions per token (per client without tokens) at most.
    pub max_sessions_per_token: usize,
    /// A session without a request for this long is closed.
    pub session_idle: Duration,
    /// Failed authentications a peer address may have per
    /// `auth_interval` before it is answered 429.
    pub max_auth_failures: u64,
    /// The window of failed-authentication counting and aggregation.
    pub auth_interval: Duration,
    /// In-flight POSTs per client at most.
    pub max_inflight: usize,
    /// Request headers must arrive within this.
    pub header_timeout: Duration,
    /// A request body must arrive within this.
    pub body_timeout: Duration,
    /// Request body bytes at most.
    pub max_body_bytes: usize,
    /// Where writes and refused tool calls are audited.
    pub audit: Option<Arc<AuditLog>>,
    /// Where the guard's refusals go (failed logins aggregated, caps):
    /// apart from `audit`, so a flood never rotates the writes away.
    pub access_log: Option<Arc<AuditLog>>,
    /// A handler for the paths it claims (not MCP), e.g. the web console.
    pub extra: Option<ExtraHandler>,
}

/// The body of every response of the server.
pub type Body = BoxBody<Bytes, Infallible>;

/// A response being made by an [`Extra`] handler.
pub type ExtraFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Response<Body>> + Send + 'a>>;

/// What the HTTP server hands a request it does not serve as MCP: the
/// caller composes it (the CLI mounts the web console), so the Vine never
/// depends on what is mounted.
pub trait Extra: Send + Sync + 'static {
    /// Whether this handler serves `path` (checked before MCP).
    fn claims(&self, path: &str) -> bool;
    /// Answer one request whose Origin and Host passed and whose body was
    /// read within the server's deadline and cap.
    fn handle(&self, req: Request<Bytes>, peer: SocketAddr) -> ExtraFuture<'_>;
}

/// A shared [`Extra`] handler (for [`HttpOptions`]).
#[derive(Clone)]
pub struct ExtraHandler(pub Arc<dyn Extra>);

impl std::fmt::Debug for ExtraHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExtraHandler")
    }
}

/// Peer addresses whose failed-authentication windows are kept at most.
pub const MAX_AUTH_PEERS: usize = 4096;

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            tokens: None,
            allow_origins: vec![],
            allow_hosts: vec![],
            max_sessions: 256,
            max_sessions_per_token: 16,
            session_idle: Duration::from_secs(300),
            max_auth_failures: 20,
            auth_interval: Duration::from_secs(10),
            max_inflight: 8,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: 4 << 20,
            audit: None,
            access_log: None,
            extra: None,
        }
    }
}

impl HttpOptions {
    fn auth(&self) -> bool {
        self.tokens.as_ref().is_some_and(|t| !t.is_empty())
    }
}

/// The depth of the engines' queues for these options: above the sum of
/// the per-client in-flight caps (every token plus tokenless clients), so
/// one client at its cap never fills the server.
pub fn effective_queue_depth(o: &HttpOptions) -> usize {
    let tokens = o.tokens.as_ref().map_or(0, |t| t.len());
    crate::pool::QUEUE_DEPTH.max(o.max_inflight.max(1).saturating_mul(tokens + 1) + 1)
}

/// The server-wide session cap: `max_sessions`, raised to the sum of the
/// per-token caps plus one token's worth (tokenless clients) when lower,
/// so one token at its cap never leaves the others without a session.
pub fn effective_max_sessions(o: &HttpOptions) -> usize {
    let tokens = o.tokens.as_ref().map_or(0, |t| t.len());
    let per = o.max_sessions_per_token.max(1);
    o.max_sessions.max(1).max(per.saturating_mul(tokens + 1))
}

/// The caller of one HTTP request, as the MCP handler sees it.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Its rights.
    pub access: Access,
    /// Its address.
    pub peer: String,
}

/// Hosts and origins rmcp checks, from the bind address: loopback names
/// always; the bound address when it is a specific one; `--allow-host`
/// names. A non-loopback bind needs tokens, and `0.0.0.0`/`::` needs the
/// names clients use (else any client passes by sending `Host: localhost`
/// ... and any rebinding name would too).
pub fn plan_bind(addr: SocketAddr, o: &HttpOptions) -> Result<(Vec<String>, Vec<String>), VineError> {
    let ip = addr.ip();
    if !ip.is_loopback() && !o.auth() {
        return Err(VineError::new(
            ErrorCode::Forbidden,
            format!("refusing to serve {ip} without tokens: anyone who reaches it could read and write the forest"),
        )
        .hint("Create tokens (forest token create NAME --scope read) or pass --token-file, or bind 127.0.0.1."));
    }
    if ip.is_unspecified() && o.allow_hosts.is_empty() {
        return Err(VineError::schema(format!(
            "binding {ip} needs --allow-host NAME for each host name clients use (Host is validated)"
        )));
    }
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if !ip.is_unspecified() {
        hosts.push(ip.to_string());
    }
    hosts.extend(o.allow_hosts.iter().cloned());
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
        .collect();
    origins.extend(o.allow_origins.iter().cloned());
    Ok((hosts, origins))
}

fn refusal(status: StatusCode, code: ErrorCode, message: &str, extra: &[(&'static str, String)]) -> Response<Body> {
    let body = json!({"error": {"code": code.as_str(), "message": message}}).to_string();
    let mut r = Response::builder().status(status).header("content-type", "application/json");
    for (k, v) in extra {
        r = r.header(*k, v.as_str());
    }
    r.body(Full::new(Bytes::from(body)).boxed()).unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed()))
}

/// Per-client in-flight counters; a slot is freed when its response
/// body ends (or is dropped with the connection).
#[derive(Debug, Default)]
struct Inflight(Mutex<HashMap<String, usize>>);

struct Slot(Arc<Inflight>, String);

impl Drop for Slot {
    fn drop(&mut self) {
        let mut m = self.0 .0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

impl Inflight {
    fn take(self: &Arc<Self>, key: &str, cap: usize) -> Option<Slot> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(key.to_string()).or_insert(0);
        if *n >= cap {
            return None;
        }
        *n += 1;
        Some(Slot(self.clone(), key.to_string()))
    }
}

type Sessions = rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// Which token opened each live MCP session, and the new sessions each
/// token has on the way (counted against its cap until rmcp answers, so
/// concurrent initializations cannot overshoot it).
#[derive(Debug, Default)]
struct Owners(Mutex<OwnersState>);

#[derive(Debug, Default)]
struct OwnersState {
    /// Session id -> token name.
    owned: HashMap<String, String>,
    /// Token name -> sessions being opened.
    pending: HashMap<String, usize>,
}

/// A new session on its way; dropping it frees the reservation.
struct Pending(Arc<Owners>, String);

impl Drop for Pending {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        if let Some(n) = st.pending.get_mut(&self.1) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                st.pending.remove(&self.1);
            }
        }
    }
}

/// Why a new session was refused.
enum Capped {
    Token(usize),
    Server(usize),
}

impl Owners {
    fn lock(&self) -> std::sync::MutexGuard<'_, OwnersState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forget the sessions rmcp no longer holds (closed, idle); then
    /// reserve one for `who` when it and the server are under their caps.
    fn reserve<V>(
        self: &Arc<Self>,
        who: &str,
        live: &HashMap<Arc<str>, V>,
        per: usize,
        max: usize,
    ) -> Result<Pending, Capped> {
        let mut st = self.lock();
        st.owned.retain(|sid, _| live.contains_key(sid.as_str()));
        let mine = st.owned.values().filter(|w| *w == who).count() + st.pending.get(who).copied().unwrap_or(0);
        if mine >= per {
            return Err(Capped::Token(per));
        }
        if live.len() + st.pending.values().sum::<usize>() >= max {
            return Err(Capped::Server(max));
        }
        *st.pending.entry(who.to_string()).or_insert(0) += 1;
        Ok(Pending(self.clone(), who.to_string()))
    }
}

/// Shared state of the guard.
pub(crate) struct Guard {
    opts: HttpOptions,
    inflight: Arc<Inflight>,
    sessions: Arc<Sessions>,
    owners: Arc<Owners>,
    failures: AuthFailures,
    origins: Vec<String>,
    hosts: Vec<String>,
    max_sessions: usize,
}

fn busy(status: StatusCode, message: &str, retry: &str) -> Response<Body> {
    refusal(status, ErrorCode::Busy, message, &[("retry-after", retry.to_string())])
}

impl Guard {
    fn audit_refusal(&self, who: &str, code: &str, peer: &str) {
        if let Some(a) = &self.opts.access_log {
            let e = Entry { who, tool: "http", ids: vec![], outcome: "refused", code, peer: Some(peer.to_string()) };
            a.record(&e);
        }
    }

    /// One aggregated access-log line per ended failed-login window.
    fn audit_failures(&self, ended: Vec<Aggregate>) {
        let Some(a) = &self.opts.access_log else { return };
        for g in ended {
            a.record_json(json!({
                "who": "-", "tool": "http", "ids": [], "outcome": "refused", "code": "unauthenticated",
                "peer": g.peer.to_string(), "count": g.failures, "limited": g.limited,
                "interval_s": self.opts.auth_interval.as_secs_f64(),
            }));
        }
    }

    /// Write the aggregates of ended windows (all of them when `all`).
    pub(crate) fn sweep(&self, all: bool) {
        self.audit_failures(self.failures.sweep(std::time::Instant::now(), all));
    }

    fn authenticate(
        &self,
        req: &Request<hyper::body::Incoming>,
        peer: SocketAddr,
    ) -> Result<Access, Box<Response<Body>>> {
        let Some(tokens) = self.opts.tokens.as_ref().filter(|t| !t.is_empty()) else {
            return Ok(Access::owner());
        };
        let header = req.headers().get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        let presented = header.and_then(|h| {
            let (scheme, rest) = h.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim().to_string())
        });
        let challenge = match presented {
            None => "Bearer realm=\"forest\"".to_string(),
            Some(t) => match tokens.authenticate(&t) {
                Some(a) => return Ok(a),
                None => "Bearer realm=\"forest\", error=\"invalid_token\"".to_string(),
            },
        };
        let (verdict, ended) = self.failures.fail(peer.ip(), std::time::Instant::now());
        self.audit_failures(ended);
        let r = match verdict {
            Verdict::Unauthorized => refusal(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthorized,
                "a valid bearer token is required (Authorization: Bearer <token>)",
                &[("www-authenticate", challenge)],
            ),
            Verdict::Limited(wait) => refusal(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::Busy,
                "too many failed authentications from this address; retry later",
                &[("retry-after", wait.as_secs().max(1).to_string()), ("www-authenticate", challenge)],
            ),
        };
        Err(Box::new(r))
    }

    /// Session checks before rmcp: an existing session must be the
    /// caller's own; a new one must fit the caller's and the server's cap
    /// (its reservation is held until rmcp answers).
    async fn check_session(
        &self,
        access: &Access,
        sid: Option<&str>,
        is_post: bool,
        peer: &str,
    ) -> Result<Option<Pending>, Response<Body>> {
        if let Some(sid) = sid {
            let owner = self.owners.lock().owned.get(sid).cloned();
            if owner.is_some_and(|o| o != access.name) {
                self.audit_refusal(&access.name, "session_not_owned", peer);
                return Err(refusal(StatusCode::NOT_FOUND, ErrorCode::NotFound, "session not found", &[]));
            }
            return Ok(None);
        }
        if !is_post {
            return Ok(None);
        }
        let live = self.sessions.sessions.read().await;
        let per = self.opts.max_sessions_per_token.max(1);
        match self.owners.reserve(&access.name, &live, per, self.max_sessions) {
            Ok(p) => Ok(Some(p)),
            Err(full) => {
                self.audit_refusal(&access.name, ErrorCode::Busy.as_str(), peer);
                Err(match full {
                    Capped::Token(n) => {
                        let m = format!(
                            "this token holds its maximum of {n} sessions; close one (DELETE) or let it idle out"
                        );
                        busy(StatusCode::TOO_MANY_REQUESTS, &m, "5")
                    }
                    Capped::Server(n) => busy(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &format!("the server holds its maximum of {n} sessions"),
                        "5",
                    ),
                })
            }
        }
    }

    /// A request for the [`Extra`] handler: Host checked (DNS rebinding),
    /// body read within the deadline and cap.
    async fn handle_extra(
        &self,
        extra: Arc<dyn Extra>,
        peer: SocketAddr,
        req: Request<hyper::body::Incoming>,
    ) -> Response<Body> {
        let host = req.headers().get(http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
        if !host_allowed(host, &self.hosts) {
            self.audit_refusal("-", "host", &peer.to_string());
            return refusal(StatusCode::FORBIDDEN, ErrorCode::Forbidden, "Host not allowed", &[]);
        }
        let (parts, body) = req.into_parts();
        let read = tokio::time::timeout(self.opts.body_timeout, Limited::new(body, self.opts.max_body_bytes).collect());
        let bytes = match read.await {
            Err(_) => return refusal(StatusCode::REQUEST_TIMEOUT, ErrorCode::Timeout, "request body too slow", &[]),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
                let m = format!("request body over {} bytes", self.opts.max_body_bytes);
                return refusal(StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::Schema, &m, &[]);
            }
            Ok(Err(_)) => return refusal(StatusCode::BAD_REQUEST, ErrorCode::Schema, "unreadable request body", &[]),
            Ok(Ok(c)) => c.to_bytes(),
        };
        extra.handle(Request::from_parts(parts, bytes), peer).await
    }

    /// One request: origin, authenticate, session, cap, read the body,
    /// hand it to rmcp.
    pub(crate) async fn handle<S>(
        self: Arc<Self>,
        mcp: rmcp::transport::streamable_http_server::StreamableHttpService<S, Sessions>,
        peer: SocketAddr,
        req: Request<hyper::body::Incoming>,
    ) -> Result<Response<Body>, Infallible>
    where
        S: rmcp::ServerHandler + Send + 'static,
    {
        let peer_s = peer.to_string();
        if let Some(o) = req.headers().get(http::header::ORIGIN) {
            if !o.to_str().is_ok_and(|o| origin_allowed(o, &self.origins)) {
                self.audit_refusal("-", "origin", &peer_s);
                return Ok(refusal(StatusCode::FORBIDDEN, ErrorCode::Forbidden, "Origin not allowed", &[]));
            }
        }
        if let Some(extra) = self.opts.extra.as_ref().filter(|x| x.0.claims(req.uri().path())) {
            return Ok(self.handle_extra(extra.0.clone(), peer, req).await);
        }
        let access = match self.authenticate(&req, peer) {
            Ok(a) => a,
            Err(r) => return Ok(*r),
        };
        let is_post = req.method() == http::Method::POST;
        let sid = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
        let pending = match self.check_session(&access, sid.as_deref(), is_post, &peer_s).await {
            Ok(p) => p,
            Err(r) => return Ok(r),
        };
        let key = if self.opts.auth() { format!("token:{}", access.name) } else { format!("peer:{}", peer.ip()) };
        let slot = if is_post {
            match self.inflight.take(&key, self.opts.max_inflight) {
                Some(s) => Some(s),
                None => {
                    self.audit_refusal(&access.name, ErrorCode::Busy.as_str(), &peer_s);
                    let m = format!("at most {} requests in flight per client", self.opts.max_inflight);
                    return Ok(busy(StatusCode::TOO_MANY_REQUESTS, &m, "1"));
                }
            }
        } else {
            None
        };
        let (mut parts, body) = req.into_parts();
        let read = tokio::time::timeout(self.opts.body_timeout, Limited::new(body, self.opts.max_body_bytes).collect());
        let bytes = match read.await {
            Err(_) => {
                return Ok(refusal(StatusCode::REQUEST_TIMEOUT, ErrorCode::Timeout, "request body too slow", &[]))
            }
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
                let m = format!("request body over {} bytes", self.opts.max_body_bytes);
                return Ok(refusal(StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::Schema, &m, &[]));
            }
            Ok(Err(_)) => {
                return Ok(refusal(StatusCode::BAD_REQUEST, ErrorCode::Schema, "unreadable request body", &[]))
            }
            Ok(Ok(c)) => c.to_bytes(),
        };
        let who = access.name.clone();
        parts.extensions.insert(Caller { access, peer: peer_s });
        let is_delete = parts.method == http::Method::DELETE;
        let mut resp = mcp.handle(Request::from_parts(parts, Full::new(bytes))).await;
        if sid.is_none() {
            if let Some(new) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
                self.owners.lock().owned.insert(new.to_string(), who);
            }
        }
        drop(pending);
        if is_delete && resp.status() == StatusCode::ACCEPTED {
            // A closed session is done, not pending: rmcp answers 202, which
            // clients (the official Python SDK) log as a failed termination.
            *resp.status_mut() = StatusCode::OK;
            if let Some(sid) = &sid {
                self.owners.lock().owned.remove(sid);
            }
        }
        Ok(match slot {
            // The slot lives as long as the response body (an SSE stream).
            Some(slot) => resp.map(|b| {
                b.map_frame(move |f| {
                    let _ = &slot;
                    f
                })
                .boxed()
            }),
            None => resp,
        })
    }
}

/// Whether a Host header names one of `hosts` (any port; `[::1]` for `::1`).
pub fn host_allowed(host: &str, hosts: &[String]) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => {
            host.rsplit_once(':').map_or(host, |(h, p)| if p.bytes().all(|b| b.is_ascii_digit()) { h } else { host })
        }
    };
    !name.is_empty() && hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// Serve MCP streamable HTTP at `http://{addr}/mcp` until `shutdown` fires;
/// the failed-login aggregates still open are written on the way out.
pub async fn serve<S>(
    server: S,
    addr: SocketAddr,
    opts: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    on_bound: impl FnOnce(SocketAddr),
) -> Result<(), VineError>
where
    S: rmcp::ServerHandler + Clone + Send + Sync + 'static,
{
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let (hosts, origins) = plan_bind(addr, &opts)?;
    let cfg = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins.clone())
        .with_max_request_body_bytes(opts.max_body_bytes);
    let mut manager = Sessions::default();
    manager.session_config.keep_alive = Some(opts.session_idle.max(Duration::from_secs(1)));
    let sessions = Arc::new(manager);
    let mcp = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), cfg);
    let guard = Arc::new(Guard {
        max_sessions: effective_max_sessions(&opts),
        failures: AuthFailures::new(opts.auth_interval, opts.max_auth_failures, MAX_AUTH_PEERS),
        opts: opts.clone(),
        inflight: Arc::default(),
        sessions,
        owners: Arc::default(),
        origins,
        hosts: hosts.clone(),
    });
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| VineError::internal(format!("bind {addr}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| VineError::internal(e.to_string()))?;
    on_bound(bound);
    tokio::pin!(shutdown);
    let mut sweep = tokio::time::interval(opts.auth_interval.max(Duration::from_millis(100)));
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = sweep.tick() => guard.sweep(false),
            acc = listener.accept() => {
                let Ok((stream, peer)) = acc else { continue };
                let (g, m) = (guard.clone(), mcp.clone());
                let header_timeout = opts.header_timeout;
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let svc = hyper::service::service_fn(move |req| g.clone().handle(m.clone(), peer, req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(header_timeout)
                        .serve_connection(io, svc)
                        .await;
                });
            }
        }
    }
    guard.sweep(true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn non_loopback_needs_tokens_and_names() {
        let open = HttpOptions::default();
        let e = plan_bind(a("0.0.0.0:80"), &open).unwrap_err();
        assert_eq!(e.code, "E_FORBIDDEN");
        assert!(plan_bind(a("10.1.2.3:80"), &open).is_err());
        let (hosts, origins) = plan_bind(a("127.0.0.1:80"), &open).unwrap();
        assert!(hosts.contains(&"localhost".to_string()));
        assert!(origins.contains(&"http://localhost:*".to_string()));
        let h = crate::tokens::hash_secret("s");
        let rec = crate::tokens::TokenRecord {
            name: "a".into(),
            hash: h,
            scope: "read".into(),
            branches: vec![],
            created: String::new(),
        };
        let with = HttpOptions { tokens: Some(Arc::new(TokenSet::new(vec![rec]))), ..HttpOptions::default() };
        assert_eq!(plan_bind(a("0.0.0.0:80"), &with).unwrap_err().code, "E_SCHEMA");
        let named = HttpOptions { allow_hosts: vec!["forest.internal".into()], ..with.clone() };
        let (hosts, _) = plan_bind(a("0.0.0.0:80"), &named).unwrap();
        assert!(hosts.contains(&"forest.internal".to_string()) && !hosts.contains(&"0.0.0.0".to_string()));
        assert!(plan_bind(a("10.1.2.3:80"), &with).unwrap().0.contains(&"10.1.2.3".to_string()));
    }

    #[test]
    fn server_caps_sit_above_the_sum_of_the_client_caps() {
        let rec = |n: &str| crate::tokens::TokenRecord {
            name: n.into(),
            hash: crate::tokens::hash_secret(n),
            scope: "read".into(),
            branches: vec![],
            created: String::new(),
        };
        let recs: Vec<_> = (0..40).map(|i| rec(&format!("t{i}"))).collect();
        let o = HttpOptions { tokens: Some(Arc::new(TokenSet::new(recs))), ..HttpOptions::default() };
        assert_eq!(effective_max_sessions(&o), 16 * 41, "40 tokens x 16 + one token's worth");
        assert!(effective_queue_depth(&o) > 8 * 41);
        let small = HttpOptions::default();
        assert_eq!(effective_max_sessions(&small), 256);
        assert_eq!(effective_queue_depth(&small), crate::pool::QUEUE_DEPTH);
    }

    #[test]
    fn session_reservations_count_against_the_caps() {
        let o = Arc::new(Owners::default());
        let live: HashMap<Arc<str>, ()> = [(Arc::from("s1"), ())].into_iter().collect();
        o.lock().owned.insert("s1".into(), "eng".into());
        o.lock().owned.insert("gone".into(), "eng".into());
        let p1 = o.reserve("eng", &live, 2, 10).ok().unwrap();
        assert!(matches!(o.reserve("eng", &live, 2, 10), Err(Capped::Token(2))), "one live + one pending");
        let _ops = o.reserve("ops", &live, 2, 10).ok().unwrap();
        assert!(!o.lock().owned.contains_key("gone"), "closed sessions are forgotten");
        assert!(matches!(o.reserve("x", &live, 2, 3), Err(Capped::Server(3))), "one live + two pending");
        drop(p1);
        assert!(o.reserve("eng", &live, 2, 10).is_ok());
    }

    #[test]
    fn hosts_match_by_name_with_any_port() {
        let hosts: Vec<String> = vec!["localhost".into(), "::1".into(), "forest.internal".into()];
        assert!(host_allowed("localhost:8000", &hosts));
        assert!(host_allowed("LOCALHOST", &hosts));
        assert!(host_allowed("[::1]:80", &hosts));
        assert!(host_allowed("forest.internal", &hosts));
        assert!(!host_allowed("evil.example:8000", &hosts));
        assert!(!host_allowed("localhost.evil.example", &hosts));
        assert!(!host_allowed("", &hosts));
    }

    #[test]
    fn inflight_slots_are_freed() {
        let f = Arc::new(Inflight::default());
        let s1 = f.take("k", 2).unwrap();
        let _s2 = f.take("k", 2).unwrap();
        assert!(f.take("k", 2).is_none());
        assert!(f.take("other", 2).is_some());
        drop(s1);
        assert!(f.take("k", 2).is_some());
    }
}
