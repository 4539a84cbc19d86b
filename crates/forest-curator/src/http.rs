//! The OpenAI-compatible transport (dialect §4.7) with DESIGN §6 pacing:
//! semaphore, rate limit, per-request timeout, transport retries with
//! `Retry-After` / jittered backoff, and the `json_schema` → plain-JSON
//! downgrade for servers that refuse `response_format`.
//!
//! Fail fast: once every endpoint has refused `offline_after` connections
//! in a row, the transport goes offline for the rest of the Curator's life
//! (one log line): every later request fails at once, without touching the
//! network, and retries sleeping in a backoff wake up and give up.

use crate::config::CuratorConfig;
use crate::endpoints::EndpointPool;
use crate::error::CuratorError;
use crate::pacing::{backoff_delay, parse_retry_after, Jitter, RateLimiter};
use crate::stats::{bump, clip_chars, CuratorStats};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Delay before retrying a request whose connection was refused.
const CONNECT_RETRY: Duration = Duration::from_millis(50);

/// A request that could not produce a reply (after transport retries).
#[derive(Debug, Clone)]
pub(crate) struct TransportError {
    pub(crate) message: String,
    pub(crate) hint: String,
    /// Not sent: the transport is offline for the rest of the run.
    pub(crate) offline: bool,
}

impl TransportError {
    /// `message (hint: ...)`, as recorded in `last_error`.
    pub(crate) fn full(&self) -> String {
        format!("{} (hint: {})", self.message, self.hint)
    }
}

enum Attempt {
    Reply(String),
    Status {
        code: u16,
        body: String,
        retry_after: Option<Duration>,
    },
    /// `connect`: no connection could be made (nothing listening, DNS...).
    Failed {
        message: String,
        retryable: bool,
        connect: bool,
    },
}

/// Shared HTTP state of one Curator.
pub(crate) struct Http {
    client: reqwest::blocking::Client,
    pub(crate) config: CuratorConfig,
    pool: EndpointPool,
    rate: RateLimiter,
    jitter: Jitter,
    schema_ok: AtomicBool,
    offline: AtomicBool,
    /// The connection error that took the transport offline.
    offline_cause: Mutex<String>,
    /// Backoff sleeps wait here; going offline wakes them.
    wake: (Mutex<()>, Condvar),
}

/// Parallel slots a llama.cpp server at `endpoint` reports at
/// `GET {root}/props` (`total_slots`); None for other servers or on any
/// failure (3 s budget).
pub(crate) fn server_slots(config: &CuratorConfig, endpoint: &str) -> Option<usize> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let root = endpoint.trim_end_matches('/');
    let root = root.strip_suffix("/v1").unwrap_or(root);
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(3)).build().ok()?;
    let resp = client.get(format!("{root}/props")).bearer_auth(config.api_key()).send().ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let v: Value = resp.json().ok()?;
    v.get("total_slots")?.as_u64().filter(|n| *n >= 1).map(|n| n as usize)
}

impl Http {
    /// `slots[i]`: concurrent requests of `config.endpoints[i]`.
    pub(crate) fn new(config: CuratorConfig, slots: &[usize]) -> Result<Self, CuratorError> {
        // reqwest is built without a bundled provider (no aws-lc): use ring.
        // Err only means a provider is already installed, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| CuratorError::Client(forest_model::error_chain(&e)))?;
        Ok(Http {
            client,
            pool: EndpointPool::new(config.endpoints.clone(), slots, config.endpoint_backoff),
            rate: RateLimiter::new(config.requests_per_minute),
            jitter: Jitter::new(),
            schema_ok: AtomicBool::new(true),
            offline: AtomicBool::new(false),
            offline_cause: Mutex::new(String::new()),
            wake: (Mutex::new(()), Condvar::new()),
            config,
        })
    }

    /// Whether `response_format: json_schema` is still being sent.
    pub(crate) fn schema_enabled(&self) -> bool {
        self.schema_ok.load(Ordering::Relaxed)
    }

    /// Whether the transport gave up on every endpoint for this run.
    pub(crate) fn offline(&self) -> bool {
        self.offline.load(Ordering::SeqCst)
    }

    /// Go offline (once: the one line a dead endpoint costs the log).
    fn go_offline(&self, cause: &str) {
        *self.offline_cause.lock().unwrap_or_else(|p| p.into_inner()) = clip_chars(&self.redact(cause), 120);
        if self.offline.swap(true, Ordering::SeqCst) {
            return;
        }
        tracing::warn!(
            event = "curator.offline",
            "no LLM endpoint answers ({} connection failures in a row on {}): the rest of this run keeps \
             derived scent, marked pending; `forest curate --pending` retries",
            self.config.offline_after,
            self.pool.urls().join(", ")
        );
        let _guard = self.wake.0.lock().unwrap_or_else(|p| p.into_inner());
        self.wake.1.notify_all();
    }

    /// Sleep `delay`, or less when the transport goes offline meanwhile.
    fn pause(&self, delay: Duration) {
        let guard = self.wake.0.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.wake.1.wait_timeout_while(guard, delay, |_| !self.offline());
    }

    fn offline_error(&self) -> TransportError {
        let cause = self.offline_cause.lock().unwrap_or_else(|p| p.into_inner()).clone();
        TransportError {
            message: format!("not sent: no LLM endpoint answers in this run ({cause})"),
            hint: self.hint(),
            offline: true,
        }
    }

    fn hint(&self) -> String {
        format!(
            "is the LLM server at {} running and reachable? (ops/llm/start.sh starts a local one)",
            self.config.endpoints.join(", ")
        )
    }

    /// Never let the key reach a message, whatever a server echoes.
    fn redact(&self, s: &str) -> String {
        let key = self.config.api_key();
        if self.config.has_api_key() && key.len() >= 4 {
            s.replace(key, "<redacted>")
        } else {
            s.to_string()
        }
    }

    /// Run one request on a leased endpoint slot (rate limit first).
    fn timed<T>(&self, stats: &CuratorStats, f: impl FnOnce(&crate::endpoints::Lease<'_>) -> T) -> T {
        self.rate.wait();
        let lease = self.pool.acquire();
        bump(&stats.requests);
        let t = Instant::now();
        let out = f(&lease);
        let ms = u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
        stats.request_ms.fetch_add(ms, Ordering::Relaxed);
        out
    }

    /// `GET {endpoint}/models` → first id; any failure → None (dialect §4.7).
    pub(crate) fn first_model(&self, stats: &CuratorStats) -> Option<String> {
        self.timed(stats, |lease| {
            let url = format!("{}/models", lease.url());
            let resp = self.client.get(&url).bearer_auth(self.config.api_key()).send().ok()?;
            if !resp.status().is_success() {
                return None;
            }
            let v: Value = resp.json().ok()?;
            v.get("data")?.get(0)?.get("id")?.as_str().map(str::to_string)
        })
    }

    fn send_once(&self, body: &Value, stats: &CuratorStats) -> Attempt {
        self.timed(stats, |lease| {
            let attempt = self.post_chat(lease.url(), body);
            // Transport faults take the endpoint out of rotation for a while;
            // any other answer shows it is up.
            match &attempt {
                Attempt::Failed { retryable: true, connect, .. } => lease.failed(*connect),
                Attempt::Status { code, .. } if *code == 429 || *code >= 500 => lease.failed(false),
                _ => lease.succeeded(),
            }
            if let Attempt::Failed { connect: true, message, .. } = &attempt {
                if self.pool.all_unreachable(self.config.offline_after) {
                    self.go_offline(message);
                }
            }
            attempt
        })
    }

    fn post_chat(&self, endpoint: &str, body: &Value) -> Attempt {
        let url = format!("{endpoint}/chat/completions");
        {
            let resp = match self.client.post(&url).bearer_auth(self.config.api_key()).json(body).send() {
                Ok(r) => r,
                Err(e) => {
                    return Attempt::Failed {
                        retryable: !e.is_builder(),
                        connect: e.is_connect(),
                        message: forest_model::error_chain(&e),
                    }
                }
            };
            let code = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let text = match resp.text() {
                Ok(t) => t,
                // Reset or timeout while reading the body: a transport fault.
                Err(e) => {
                    return Attempt::Failed { retryable: true, connect: false, message: forest_model::error_chain(&e) }
                }
            };
            if code >= 400 {
                return Attempt::Status { code, body: text, retry_after };
            }
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => Attempt::Reply(
                    v.pointer("/choices/0/message/content").and_then(Value::as_str).unwrap_or("").to_string(),
                ),
                Err(e) => Attempt::Failed {
                    retryable: false,
                    connect: false,
                    message: format!("LLM endpoint returned a non-JSON body ({e}): {}", clip_chars(&text, 200)),
                },
            }
        }
    }

    /// POST a chat completion and return `choices[0].message.content` (or "").
    /// `schema` is sent as `response_format` until the server refuses it.
    pub(crate) fn chat(
        &self,
        model: &str,
        messages: &[Value],
        schema: Option<&Value>,
        stats: &CuratorStats,
    ) -> Result<String, TransportError> {
        let mut retry = 0u32;
        loop {
            if self.offline() {
                return Err(self.offline_error());
            }
            let use_schema = schema.is_some() && self.schema_enabled();
            let mut body = json!({
                "model": model,
                "messages": messages,
                "max_tokens": self.config.effective_max_tokens(),
                "temperature": 0.1,
            });
            if let (true, Some(s)) = (use_schema, schema) {
                body["response_format"] = s.clone();
            }
            if self.config.disable_reasoning_field() {
                body["reasoning"] = json!({"enabled": false});
            }
            let (message, retryable, wait) = match self.send_once(&body, stats) {
                Attempt::Reply(text) => return Ok(text),
                Attempt::Status { code, body: text, retry_after } => {
                    let low = text.to_lowercase();
                    if use_schema && code != 429 && (low.contains("response_format") || low.contains("json_schema")) {
                        // The server cannot do structured output: ask for
                        // plain JSON (the prompts say so) for the whole session.
                        self.schema_ok.store(false, Ordering::Relaxed);
                        tracing::warn!(code, "LLM endpoint refused response_format; using plain JSON");
                        continue;
                    }
                    let retryable = code == 429 || code == 408 || code >= 500;
                    let wait = if code == 429 { retry_after.map(|d| d.min(self.config.retry_after_max)) } else { None };
                    (format!("LLM endpoint {code}: {}", clip_chars(&text, 300)), retryable, wait)
                }
                // Nothing listening: retry soon, so that a dead endpoint is
                // known within `offline_after` quick attempts, not after
                // the backoff a busy server deserves.
                Attempt::Failed { message, retryable, connect } => {
                    let quick = connect && self.config.offline_after > 0;
                    (message, retryable, quick.then_some(CONNECT_RETRY))
                }
            };
            let message = self.redact(&message);
            if !retryable || retry >= self.config.max_transport_retries {
                return Err(TransportError { message, hint: self.hint(), offline: false });
            }
            let delay = wait.unwrap_or_else(|| {
                backoff_delay(retry, self.config.backoff_base, self.config.backoff_max, self.jitter.unit())
            });
            tracing::debug!(retry, ?delay, %message, "LLM transport retry");
            bump(&stats.transport_retries);
            retry += 1;
            self.pause(delay);
        }
    }
}
