//! The web console of `forest serve --transport http`: server-rendered,
//! read-only pages under `/ui/` (search, browse, node, health, login) for
//! the people of a team, behind the same tokens and scopes as the agents'
//! MCP tools.
//!
//! - Mounted as the HTTP server's [`Extra`] handler, so the Origin and
//!   Host checks, the body deadline and cap are the MCP ones.
//! - A browser signs in once with a token; the session lives server-side
//!   ([`session`]) and the browser holds only an `HttpOnly;
//!   SameSite=Strict` cookie. A POST must carry this server's Origin.
//! - Every page calls the Vine's read primitives with the token's
//!   [`Access`] ([`pages`]): the same `locate`, the same scope checks.
//! - HTML is escaped by minijinja; the Content-Security-Policy allows
//!   scripts and styles from the console's own static files only.
//!
//! In: HTTP requests. Out: HTML, one JSON route, static files. Touches:
//! the engines' pool (reads), `git log`, the trails store (read).

pub mod error;
pub mod health;
pub mod pages;
pub mod route;
pub mod session;
pub mod svg;
mod web;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use forest_model::ErrorCode;
use forest_vine::access::Access;
use forest_vine::http::{Body, Extra, ExtraFuture};
use forest_vine::mcp::VineServer;
use forest_vine::ratelimit::{AuthFailures, Verdict};
use forest_vine::tokens::TokenSet;
use http::{Method, Request, Response};
use serde_json::{json, Value};

pub use error::ConsoleError;
use route::Route;

/// How the console is set up.
pub struct ConsoleOptions {
    /// The engines (the same pool MCP uses).
    pub server: VineServer,
    /// The forest directory (for `git log` and the trails store).
    pub root: PathBuf,
    /// The server's tokens; `None` or empty = the tokenless loopback
    /// server, where the console, like MCP, needs no sign-in.
    pub tokens: Option<Arc<TokenSet>>,
    /// Mark the cookie `Secure` (behind TLS).
    pub secure_cookie: bool,
}

/// The console: an [`Extra`] handler for `/ui/`.
pub struct Console {
    server: VineServer,
    root: PathBuf,
    tokens: Option<Arc<TokenSet>>,
    secure_cookie: bool,
    sessions: session::Sessions,
    failures: AuthFailures,
    health: health::Cache,
    env: minijinja::Environment<'static>,
}

impl Console {
    /// A console over `opts.server`.
    pub fn new(opts: ConsoleOptions) -> Result<Console, ConsoleError> {
        Ok(Console {
            server: opts.server,
            root: opts.root,
            tokens: opts.tokens.filter(|t| !t.is_empty()),
            secure_cookie: opts.secure_cookie,
            sessions: session::Sessions::default(),
            failures: AuthFailures::new(Duration::from_secs(10), 20, 4096),
            health: health::Cache::default(),
            env: web::templates()?,
        })
    }

    fn render(&self, name: &str, page: &str, access: Option<&Access>, ctx: Value) -> Result<String, ConsoleError> {
        let mut ctx = ctx;
        if let (Some(a), Some(m)) = (access, ctx.as_object_mut()) {
            m.insert("who".into(), json!(a.name));
            m.insert("scope".into(), json!(a.branches.join(", ")));
            m.insert("can_logout".into(), json!(self.tokens.is_some()));
        }
        ctx["page"] = json!(page);
        ctx["max_query"] = json!(route::MAX_QUERY);
        Ok(self.env.get_template(name)?.render(ctx)?)
    }

    fn error_page(&self, e: &ConsoleError, access: Option<&Access>) -> Response<Body> {
        if !matches!(e, ConsoleError::NotFound | ConsoleError::Vine(_) | ConsoleError::TooLong(_)) {
            tracing::info!(event = "console.refused", code = e.code().as_str(), error = %e);
        }
        let heading = match e.code() {
            ErrorCode::NotFound => "Not found",
            ErrorCode::Schema | ErrorCode::Forbidden | ErrorCode::Unauthorized => "Refused",
            ErrorCode::Busy => "Busy",
            ErrorCode::Timeout => "Too slow",
            _ => "Error",
        };
        // Not found names nothing: not even the id asked for (an id
        // outside the token's branches reads exactly like a missing one).
        let message = match e.code() {
            ErrorCode::NotFound => "no such node or page for this token".to_string(),
            _ => e.to_string(),
        };
        let ctx = json!({"code": e.code().as_str(), "heading": heading, "message": message});
        let html = self.render("error.html", "", access, ctx).unwrap_or_else(|_| e.to_string());
        web::html(e.status(), html)
    }

    /// The caller's access: its session's, or the owner's on a tokenless server.
    fn access_of(&self, req: &Request<Bytes>) -> Option<(Access, Option<String>)> {
        if self.tokens.is_none() {
            return Some((Access::owner(), None));
        }
        let cookies = req.headers().get_all(http::header::COOKIE);
        let sid = cookies.iter().filter_map(|v| v.to_str().ok()).find_map(session::cookie_value)?;
        Some((self.sessions.get(sid, Instant::now())?, Some(sid.to_string())))
    }

    async fn login(&self, req: &Request<Bytes>, peer: SocketAddr) -> Result<Response<Body>, ConsoleError> {
        web::same_origin_post(req)?;
        let Some(tokens) = &self.tokens else { return Ok(web::redirect("/ui/search", None)) };
        let body = String::from_utf8_lossy(req.body());
        let presented = route::param(&body, "token").unwrap_or_default();
        match tokens.authenticate(presented.trim()) {
            Some(access) => {
                let sid = self
                    .sessions
                    .open(access.clone(), Instant::now())
                    .ok_or_else(|| ConsoleError::Vine(forest_vine::VineError::internal("no randomness")))?;
                tracing::info!(event = "console.login", who = %access.name);
                Ok(web::redirect("/ui/search", Some(session::set_cookie(&sid, self.secure_cookie))))
            }
            None => {
                let (verdict, _) = self.failures.fail(peer.ip(), Instant::now());
                let e = match verdict {
                    Verdict::Unauthorized => ConsoleError::BadToken,
                    Verdict::Limited(w) => ConsoleError::Limited(w.as_secs().max(1)),
                };
                let ctx = json!({"error": e.to_string()});
                Ok(web::html(e.status(), self.render("login.html", "login", None, ctx)?))
            }
        }
    }

    async fn page(&self, r: Route, access: &Access) -> Result<Response<Body>, ConsoleError> {
        let ok = |html: String| web::html(http::StatusCode::OK, html);
        Ok(match r {
            Route::Home => web::redirect("/ui/search", None),
            Route::Search { q } => {
                let results = pages::search(&self.server, access, &q).await?;
                ok(self.render("search.html", "search", Some(access), json!({"q": q, "results": results}))?)
            }
            Route::SearchJson { q } => {
                let results = pages::search(&self.server, access, &q).await?;
                web::json(http::StatusCode::OK, &json!({"query": q, "results": results}))
            }
            Route::Browse { id, after } => {
                let ctx = pages::browse(&self.server, access, id.as_deref(), after.as_deref()).await?;
                ok(self.render("browse.html", "browse", Some(access), ctx)?)
            }
            Route::Node { id } => {
                let ctx = pages::node(&self.server, access, &id).await?;
                ok(self.render("node.html", "search", Some(access), ctx)?)
            }
            Route::History { id } => {
                let ctx = pages::history(&self.server, access, &id).await?;
                ok(self.render("history.html", "search", Some(access), ctx)?)
            }
            Route::Health => {
                let ctx = health::health(&self.root, access, &self.health).await?;
                ok(self.render("health.html", "health", Some(access), ctx)?)
            }
            Route::LoginForm | Route::Login | Route::Logout | Route::Static { .. } => {
                return Err(ConsoleError::NotFound)
            }
        })
    }

    async fn respond(&self, req: Request<Bytes>, peer: SocketAddr) -> Response<Body> {
        let r = match route::route(req.method(), req.uri().path(), req.uri().query()) {
            Ok(r) => r,
            Err(e) => return self.error_page(&e, None),
        };
        match r {
            Route::Static { name } => return web::static_file(&name),
            Route::LoginForm if self.tokens.is_none() => return web::redirect("/ui/search", None),
            Route::LoginForm => {
                return match self.render("login.html", "login", None, json!({})) {
                    Ok(h) => web::html(http::StatusCode::OK, h),
                    Err(e) => self.error_page(&e, None),
                }
            }
            Route::Login => return self.login(&req, peer).await.unwrap_or_else(|e| self.error_page(&e, None)),
            _ => {}
        }
        let Some((access, sid)) = self.access_of(&req) else {
            return match r {
                Route::SearchJson { .. } => {
                    let e = ConsoleError::Unauthenticated;
                    web::json(e.status(), &json!({"error": {"code": e.code().as_str(), "message": e.to_string()}}))
                }
                _ if req.method() == Method::GET || req.method() == Method::HEAD => web::redirect("/ui/login", None),
                _ => self.error_page(&ConsoleError::Unauthenticated, None),
            };
        };
        if r == Route::Logout {
            if let Err(e) = web::same_origin_post(&req) {
                return self.error_page(&e, Some(&access));
            }
            if let Some(s) = sid {
                self.sessions.close(&s);
            }
            return web::redirect("/ui/login", Some(session::clear_cookie()));
        }
        let json_route = matches!(r, Route::SearchJson { .. });
        match self.page(r, &access).await {
            Ok(resp) => resp,
            Err(e) if json_route => {
                web::json(e.status(), &json!({"error": {"code": e.code().as_str(), "message": e.to_string()}}))
            }
            Err(e) => self.error_page(&e, Some(&access)),
        }
    }
}

impl Extra for Console {
    fn claims(&self, path: &str) -> bool {
        path == route::PREFIX || path.starts_with("/ui/")
    }

    fn handle(&self, req: Request<Bytes>, peer: SocketAddr) -> ExtraFuture<'_> {
        Box::pin(self.respond(req, peer))
    }
}
