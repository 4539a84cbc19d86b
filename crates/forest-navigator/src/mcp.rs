//! A forest served elsewhere: [`McpForest`] answers the Vine primitives by
//! calling the tools of a `forest serve --transport http` over MCP
//! streamable HTTP (the official Rust SDK's client, `rmcp`, on reqwest).
//!
//! The [`Forest`] trait is synchronous; the client runs on a small tokio
//! runtime of its own and every call blocks on it. One MCP session serves
//! every hunt of a process ([`McpForest::handle`] shares it), so a bench
//! does not open a session per question against the server's session cap.
//!
//! What the server answers is judged, not trusted: a tool result is its
//! first text block parsed as JSON; `isError` results are the Vine's error
//! envelope; anything else (no text, not JSON, a JSON-RPC error) becomes an
//! `E_REMOTE` envelope the model sees like any other error. A transport
//! failure (server gone, connection refused, timeout) marks the forest
//! lost: every later call fails at once with the same envelope and
//! [`Forest::lost`] says why, so a hunt or a bench stops with one error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};

use crate::forest::Forest;
use crate::NavError;

/// Deadline of one tool call seen from the client (the server's own is
/// 5 s by default; this only catches a server that stops answering).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Deadline of the MCP handshake.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// Largest tool result accepted (JSON body or SSE event).
pub const MAX_RESULT_BYTES: usize = 32 << 20;

struct Remote {
    rt: tokio::runtime::Runtime,
    client: Mutex<Option<RunningService<RoleClient, ()>>>,
    url: String,
    lost: Mutex<Option<String>>,
}

impl Drop for Remote {
    fn drop(&mut self) {
        // Close the MCP session (the server counts them) before the
        // runtime goes; a server already gone changes nothing.
        let client = self.client.lock().ok().and_then(|mut c| c.take());
        if let Some(c) = client {
            let _ = self.rt.block_on(async { tokio::time::timeout(Duration::from_secs(2), c.cancel()).await });
        }
    }
}

/// A forest behind an MCP server (`forest serve --transport http`).
pub struct McpForest {
    remote: Arc<Remote>,
    /// Whether `close` calls `close_session` (`--learn`; the server must be
    /// writable and the token a write token).
    pub learn: bool,
}

impl McpForest {
    /// Connect to `url` (`http://host:port/mcp`), with a bearer `token`
    /// when the server wants one. Fails with one clear error when the
    /// server cannot be reached or refuses the handshake.
    pub fn connect(url: &str, token: Option<&str>, learn: bool) -> Result<McpForest, NavError> {
        let remote = |m: String| NavError::Remote { url: url.to_string(), message: m };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("forest-mcp")
            .enable_all()
            .build()
            .map_err(|e| remote(format!("runtime: {e}")))?;
        // https:// needs a TLS provider; the Curator installs the same one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| remote(format!("http client: {e}")))?;
        let mut cfg = StreamableHttpClientTransportConfig::with_uri(url)
            .max_json_response_size(MAX_RESULT_BYTES)
            .max_sse_event_size(MAX_RESULT_BYTES);
        if let Some(t) = token {
            cfg = cfg.auth_header(t);
        }
        let client = rt.block_on(async {
            let transport = StreamableHttpClientTransport::with_client(http, cfg);
            match tokio::time::timeout(CONNECT_TIMEOUT, ().serve(transport)).await {
                Err(_) => Err(format!("no MCP handshake within {} s", CONNECT_TIMEOUT.as_secs())),
                Ok(Err(e)) => Err(handshake_error(&e)),
                Ok(Ok(c)) => Ok(c),
            }
        });
        let client = client.map_err(remote)?;
        let remote = Remote { rt, client: Mutex::new(Some(client)), url: url.to_string(), lost: Mutex::new(None) };
        Ok(McpForest { remote: Arc::new(remote), learn })
    }

    /// Another handle on the same MCP session (for the next hunt).
    pub fn handle(&self) -> McpForest {
        McpForest { remote: self.remote.clone(), learn: self.learn }
    }

    /// A handle for the next hunt of a bench, in a fresh Vine session: the
    /// server keeps one session (and its session heat, which orders `scan`
    /// and ranks `locate`) for all its callers, so the previous question's
    /// session is closed unsuccessfully first (no heat is deposited), as a
    /// fresh in-process Vine would start. A server that refuses changes
    /// nothing; a lost one is seen by the next call.
    pub fn fresh_handle(&self) -> McpForest {
        let args = json!({"success": false, "answer_nodes": []});
        let _ = self.tool("close_session", args.as_object().unwrap_or(&Map::new()));
        self.handle()
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.remote.url
    }

    fn tool(&self, name: &str, args: &Map<String, Value>) -> Result<Value, Value> {
        if let Some(why) = self.lost() {
            return Err(lost_envelope(&why));
        }
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args.clone());
        let guard = self.remote.client.lock().map_err(|_| lost_envelope("client poisoned"))?;
        let Some(client) = guard.as_ref() else { return Err(lost_envelope("client closed")) };
        let out = self.remote.rt.block_on(async { tokio::time::timeout(CALL_TIMEOUT, client.call_tool(params)).await });
        drop(guard);
        match out {
            Ok(Ok(result)) => tool_result(name, &result),
            Ok(Err(ServiceError::McpError(e))) => Err(remote_envelope(&format!("{name}: {}", e.message))),
            Ok(Err(ServiceError::UnexpectedResponse)) => {
                Err(remote_envelope(&format!("{name}: the server answered with something other than a tool result")))
            }
            Ok(Err(e)) => Err(self.mark_lost(format!("{name}: {e}"))),
            Err(_) => Err(self.mark_lost(format!("{name}: no answer within {} s", CALL_TIMEOUT.as_secs()))),
        }
    }

    fn mark_lost(&self, why: String) -> Value {
        tracing::warn!(event = "navigator.mcp_lost", url = %self.remote.url, error = %why);
        if let Ok(mut l) = self.remote.lost.lock() {
            l.get_or_insert(why.clone());
        }
        lost_envelope(&why)
    }
}

impl Forest for McpForest {
    fn call(&mut self, prim: &str, args: &Map<String, Value>) -> Result<Value, Value> {
        self.tool(prim, args)
    }

    fn close(&mut self, success: bool, answer_nodes: &[String]) -> Option<Value> {
        if !self.learn {
            return None;
        }
        let args = json!({"success": success, "answer_nodes": answer_nodes});
        Some(self.tool("close_session", args.as_object().unwrap_or(&Map::new())).unwrap_or_else(|e| e))
    }

    fn session(&self) -> String {
        format!("mcp:{}", self.remote.url)
    }

    fn lost(&self) -> Option<String> {
        self.remote.lost.lock().ok().and_then(|l| l.clone())
    }
}

/// The Vine's answer inside a tool result: the first text block as JSON.
pub fn tool_result(name: &str, r: &CallToolResult) -> Result<Value, Value> {
    let text = r.content.iter().find_map(|c| c.as_text()).map(|t| t.text.as_str());
    let Some(text) = text else {
        return Err(remote_envelope(&format!("{name}: the result has no text block")));
    };
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    match (r.is_error.unwrap_or(false), parsed) {
        (false, Some(v)) if v.is_object() => Ok(v),
        (true, Some(v)) if v.pointer("/error/code").is_some_and(Value::is_string) => Err(v),
        (true, _) => Err(remote_envelope(&format!("{name}: {}", clip(text, 200)))),
        (false, _) => Err(remote_envelope(&format!("{name}: the result is not a JSON object: {}", clip(text, 120)))),
    }
}

fn remote_envelope(message: &str) -> Value {
    json!({"error": {"code": "E_REMOTE", "message": message}})
}

fn lost_envelope(why: &str) -> Value {
    json!({"error": {"code": "E_UNAVAILABLE", "message": format!("the forest server is gone: {why}")}})
}

fn handshake_error(e: &rmcp::service::ClientInitializeError) -> String {
    if e.is_authorization_required() || e.auth_challenge().is_some() {
        return "the server wants a valid bearer token (pass --token or set FOREST_MCP_TOKEN)".into();
    }
    clip(&e.to_string(), 300)
}

fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn result(text: &str, is_error: bool) -> CallToolResult {
        let c = vec![ContentBlock::text(text)];
        if is_error {
            CallToolResult::error(c)
        } else {
            CallToolResult::success(c)
        }
    }

    #[test]
    fn results_are_judged_not_trusted() {
        assert_eq!(tool_result("look", &result(r#"{"id":"_index"}"#, false)), Ok(json!({"id": "_index"})));
        let env = r#"{"error":{"code":"E_NOT_FOUND","message":"x"}}"#;
        assert_eq!(tool_result("look", &result(env, true)).unwrap_err()["error"]["code"], "E_NOT_FOUND");
        for (text, is_error) in [("not json", false), ("[1,2]", false), ("boom", true), (r#"{"error":1}"#, true)] {
            let e = tool_result("look", &result(text, is_error)).unwrap_err();
            assert_eq!(e["error"]["code"], "E_REMOTE", "{text}");
        }
        let empty = CallToolResult::success(vec![]);
        assert_eq!(tool_result("pick", &empty).unwrap_err()["error"]["code"], "E_REMOTE");
    }

    #[test]
    fn a_server_that_is_not_there_is_one_error() {
        // A port nothing listens on: bind, read the port, close.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let e = McpForest::connect(&url, None, false).err().expect("no server, no forest");
        assert_eq!(e.code(), "E_UNAVAILABLE");
        assert!(e.to_string().contains(&url), "{e}");
    }
}
