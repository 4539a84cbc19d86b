//! Endpoint and pacing configuration (dialect §4.7, DESIGN §6).

use crate::error::CuratorError;
use std::time::Duration;

/// Default `max_tokens` (dialect §4.7).
pub const DEFAULT_MAX_TOKENS: u32 = 300;
/// Default per-request timeout (dialect §4.7: 180 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);
/// Default in-flight request ceiling (DESIGN §6 `curation.concurrency`).
pub const DEFAULT_CONCURRENCY: usize = 4;
/// Default transport retries after the first attempt (beyond the dialect).
pub const DEFAULT_TRANSPORT_RETRIES: u32 = 4;
/// Default consecutive connection failures on every endpoint after which a
/// Curator stops asking for the rest of its run.
pub const DEFAULT_OFFLINE_AFTER: u32 = 3;
/// API key sent when none is configured (dialect §4.7).
pub const NO_KEY: &str = "no-key";

/// Everything a [`crate::Curator`] needs to reach an OpenAI-compatible API.
///
/// The API key is private and redacted from `Debug`: keys are never printed
/// or logged (DESIGN §6).
#[derive(Clone)]
pub struct CuratorConfig {
    /// Base URL of a `/v1` API, without trailing `/` (the first of
    /// [`CuratorConfig::endpoints`]).
    pub endpoint: String,
    /// Every endpoint requests are spread over (`MONKEYLLM_LLM_ENDPOINT`
    /// may list several, separated by commas or spaces).
    pub endpoints: Vec<String>,
    /// How long an endpoint whose request failed in transport stays out of
    /// rotation (`FOREST_LLM_ENDPOINT_BACKOFF_SECS`, default 30 s).
    pub endpoint_backoff: Duration,
    /// After this many consecutive connection failures on every endpoint
    /// the Curator goes offline for the rest of its run: no more requests,
    /// every later curation keeps the derived scent (pending). 0 = never
    /// (`FOREST_LLM_OFFLINE_AFTER`, default 3).
    pub offline_after: u32,
    /// Model id; `local` asks `GET {endpoint}/models` for the first id.
    pub model: String,
    api_key: String,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// Reasoning on: adds 1000 to `max_tokens`; off on OpenRouter sends
    /// `reasoning: {enabled: false}`.
    pub reasoning: bool,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Maximum requests in flight per endpoint; once a Curator is built,
    /// its config holds the total over all endpoints.
    pub concurrency: usize,
    /// Lower `concurrency` to the server's parallel slots when it reports
    /// them (llama.cpp `GET /props` -> `total_slots`): requests beyond the
    /// slots only queue and thrash the server's prompt cache. On by
    /// default from the environment unless `FOREST_LLM_CONCURRENCY` is set.
    pub auto_concurrency: bool,
    /// Requests per minute (0 = unlimited); retries count too.
    pub requests_per_minute: u32,
    /// Transport retries after the first attempt (429, 5xx, timeouts, resets).
    pub max_transport_retries: u32,
    /// First backoff delay; doubles per retry, jittered.
    pub backoff_base: Duration,
    /// Ceiling of one backoff delay.
    pub backoff_max: Duration,
    /// Ceiling applied to a server's `Retry-After`.
    pub retry_after_max: Duration,
    /// Tokens of a document a leaf prompt carries
    /// (`FOREST_LLM_CONTENT_TOKENS`, default
    /// [`crate::prompts::CONTENT_BUDGET_TOKENS`]).
    pub content_tokens: usize,
}

impl std::fmt::Debug for CuratorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CuratorConfig")
            .field("endpoint", &self.endpoint)
            .field("endpoints", &self.endpoints)
            .field("endpoint_backoff", &self.endpoint_backoff)
            .field("offline_after", &self.offline_after)
            .field("model", &self.model)
            .field("api_key", &"<redacted>")
            .field("max_tokens", &self.max_tokens)
            .field("reasoning", &self.reasoning)
            .field("timeout", &self.timeout)
            .field("concurrency", &self.concurrency)
            .field("auto_concurrency", &self.auto_concurrency)
            .field("requests_per_minute", &self.requests_per_minute)
            .field("max_transport_retries", &self.max_transport_retries)
            .field("backoff_base", &self.backoff_base)
            .field("backoff_max", &self.backoff_max)
            .field("retry_after_max", &self.retry_after_max)
            .field("content_tokens", &self.content_tokens)
            .finish()
    }
}

impl CuratorConfig {
    /// A config for `endpoint` (or a comma/space separated list of
    /// endpoints) with every default (model `local`, no key).
    pub fn new(endpoint: &str) -> Self {
        let mut endpoints: Vec<String> = endpoint
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(|e| e.trim().trim_end_matches('/').to_string())
            .filter(|e| !e.is_empty())
            .collect();
        if endpoints.is_empty() {
            endpoints.push(endpoint.trim().trim_end_matches('/').to_string());
        }
        CuratorConfig {
            endpoint: endpoints[0].clone(),
            endpoints,
            endpoint_backoff: Duration::from_secs(30),
            offline_after: DEFAULT_OFFLINE_AFTER,
            model: "local".into(),
            api_key: NO_KEY.into(),
            max_tokens: DEFAULT_MAX_TOKENS,
            reasoning: false,
            timeout: DEFAULT_TIMEOUT,
            concurrency: DEFAULT_CONCURRENCY,
            auto_concurrency: false,
            requests_per_minute: 0,
            max_transport_retries: DEFAULT_TRANSPORT_RETRIES,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            retry_after_max: Duration::from_secs(120),
            content_tokens: crate::prompts::CONTENT_BUDGET_TOKENS,
        }
    }

    /// Read the process environment; see [`CuratorConfig::from_lookup`].
    pub fn from_env() -> Result<Self, CuratorError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Build from a variable lookup (empty values count as unset):
    /// `MONKEYLLM_LLM_ENDPOINT` (else `OPENAI_BASE_URL`, else error),
    /// `MONKEYLLM_LLM_MODEL` (`local`), `MONKEYLLM_LLM_API_KEY` (else
    /// `OPENAI_API_KEY`, else `no-key`), `MONKEYLLM_LLM_MAX_TOKENS` (300),
    /// `MONKEYLLM_LLM_REASONING` (`off`), and the pacing knobs
    /// `FOREST_LLM_CONCURRENCY`, `FOREST_LLM_RPM`, `FOREST_LLM_TIMEOUT_SECS`,
    /// `FOREST_LLM_TRANSPORT_RETRIES`, `FOREST_LLM_ENDPOINT_BACKOFF_SECS`,
    /// `FOREST_LLM_OFFLINE_AFTER`, and `FOREST_LLM_CONTENT_TOKENS` (the
    /// leaf prompt's content budget, at least 64).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, CuratorError> {
        let get = |k: &str| lookup(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let endpoint =
            get("MONKEYLLM_LLM_ENDPOINT").or_else(|| get("OPENAI_BASE_URL")).ok_or(CuratorError::MissingEndpoint)?;
        let mut cfg = CuratorConfig::new(&endpoint);
        if let Some(m) = get("MONKEYLLM_LLM_MODEL") {
            cfg.model = m;
        }
        if let Some(k) = get("MONKEYLLM_LLM_API_KEY").or_else(|| get("OPENAI_API_KEY")) {
            cfg.api_key = k;
        }
        if let Some(v) = get("MONKEYLLM_LLM_MAX_TOKENS") {
            cfg.max_tokens = parse_num("MONKEYLLM_LLM_MAX_TOKENS", &v, 1)?;
        }
        if let Some(v) = get("MONKEYLLM_LLM_REASONING") {
            cfg.reasoning = match v.to_ascii_lowercase().as_str() {
                "on" | "true" | "1" | "yes" => true,
                "off" | "false" | "0" | "no" => false,
                _ => {
                    return Err(CuratorError::InvalidSetting {
                        var: "MONKEYLLM_LLM_REASONING".into(),
                        value: v,
                        reason: "expected on|off".into(),
                    })
                }
            };
        }
        match get("FOREST_LLM_CONCURRENCY") {
            Some(v) => cfg.concurrency = parse_num::<usize>("FOREST_LLM_CONCURRENCY", &v, 1)?,
            None => cfg.auto_concurrency = true,
        }
        if let Some(v) = get("FOREST_LLM_RPM") {
            cfg.requests_per_minute = parse_num("FOREST_LLM_RPM", &v, 0)?;
        }
        if let Some(v) = get("FOREST_LLM_TIMEOUT_SECS") {
            cfg.timeout = Duration::from_secs(parse_num("FOREST_LLM_TIMEOUT_SECS", &v, 1)?);
        }
        if let Some(v) = get("FOREST_LLM_ENDPOINT_BACKOFF_SECS") {
            cfg.endpoint_backoff = Duration::from_secs(parse_num("FOREST_LLM_ENDPOINT_BACKOFF_SECS", &v, 0)?);
        }
        if let Some(v) = get("FOREST_LLM_OFFLINE_AFTER") {
            cfg.offline_after = parse_num("FOREST_LLM_OFFLINE_AFTER", &v, 0)?;
        }
        if let Some(v) = get("FOREST_LLM_CONTENT_TOKENS") {
            cfg.content_tokens = parse_num("FOREST_LLM_CONTENT_TOKENS", &v, 64)?;
        }
        if let Some(v) = get("FOREST_LLM_TRANSPORT_RETRIES") {
            cfg.max_transport_retries = parse_num("FOREST_LLM_TRANSPORT_RETRIES", &v, 0)?;
        }
        Ok(cfg)
    }

    /// Set the API key (kept private, redacted from `Debug`).
    pub fn with_api_key(mut self, key: &str) -> Self {
        self.api_key = key.to_string();
        self
    }

    /// Whether a real key (not `no-key`) is configured.
    pub fn has_api_key(&self) -> bool {
        self.api_key != NO_KEY
    }

    /// The key, for the HTTP layer only.
    pub(crate) fn api_key(&self) -> &str {
        &self.api_key
    }

    /// `max_tokens` as sent: +1000 when reasoning is on (dialect §4.7).
    pub fn effective_max_tokens(&self) -> u32 {
        if self.reasoning {
            self.max_tokens.saturating_add(1000)
        } else {
            self.max_tokens
        }
    }

    /// Whether to send `reasoning: {enabled: false}` (OpenRouter, reasoning off).
    pub fn disable_reasoning_field(&self) -> bool {
        !self.reasoning && self.endpoint.contains("openrouter")
    }
}

fn parse_num<T>(var: &str, v: &str, min: T) -> Result<T, CuratorError>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    match v.parse::<T>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(CuratorError::InvalidSetting {
            var: var.into(),
            value: v.into(),
            reason: format!("expected an integer >= {min}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn missing_endpoint_is_schema_error() {
        let e = CuratorConfig::from_lookup(lookup(&[])).unwrap_err();
        assert_eq!(e.code(), "E_SCHEMA");
        assert!(e.to_string().contains("MONKEYLLM_LLM_ENDPOINT"));
    }

    #[test]
    fn openai_fallbacks_and_monkeyllm_wins() {
        let c = CuratorConfig::from_lookup(lookup(&[
            ("OPENAI_BASE_URL", "https://api.example/v1/"),
            ("OPENAI_API_KEY", "sk-openai"),
        ]))
        .unwrap();
        assert_eq!(c.endpoint, "https://api.example/v1");
        assert_eq!(c.api_key(), "sk-openai");
        assert_eq!(c.model, "local");
        assert_eq!(c.max_tokens, 300);

        let c = CuratorConfig::from_lookup(lookup(&[
            ("OPENAI_BASE_URL", "https://api.example/v1"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("MONKEYLLM_LLM_ENDPOINT", "http://127.0.0.1:1/v1"),
            ("MONKEYLLM_LLM_API_KEY", "sk-monkey"),
            ("MONKEYLLM_LLM_MODEL", "m1"),
            ("MONKEYLLM_LLM_MAX_TOKENS", "120"),
            ("MONKEYLLM_LLM_REASONING", "on"),
            ("FOREST_LLM_CONCURRENCY", "2"),
            ("FOREST_LLM_RPM", "30"),
            ("FOREST_LLM_TIMEOUT_SECS", "7"),
            ("FOREST_LLM_TRANSPORT_RETRIES", "0"),
        ]))
        .unwrap();
        assert_eq!(c.endpoint, "http://127.0.0.1:1/v1");
        assert_eq!(c.api_key(), "sk-monkey");
        assert_eq!(c.model, "m1");
        assert_eq!(c.effective_max_tokens(), 1120);
        assert_eq!(c.concurrency, 2);
        assert_eq!(c.requests_per_minute, 30);
        assert_eq!(c.timeout, Duration::from_secs(7));
        assert_eq!(c.max_transport_retries, 0);
    }

    #[test]
    fn bad_values_are_rejected() {
        for (k, v) in [
            ("MONKEYLLM_LLM_MAX_TOKENS", "lots"),
            ("MONKEYLLM_LLM_REASONING", "maybe"),
            ("FOREST_LLM_CONCURRENCY", "0"),
        ] {
            let e =
                CuratorConfig::from_lookup(lookup(&[("MONKEYLLM_LLM_ENDPOINT", "http://x/v1"), (k, v)])).unwrap_err();
            assert!(e.to_string().contains(k), "{e}");
        }
    }

    #[test]
    fn endpoint_lists() {
        let c = CuratorConfig::from_lookup(lookup(&[
            ("MONKEYLLM_LLM_ENDPOINT", " http://a:1/v1/, http://b:2/v1  http://c:3/v1"),
            ("FOREST_LLM_ENDPOINT_BACKOFF_SECS", "5"),
            ("FOREST_LLM_OFFLINE_AFTER", "0"),
        ]))
        .unwrap();
        assert_eq!(c.offline_after, 0);
        assert_eq!(CuratorConfig::new("http://x/v1").offline_after, DEFAULT_OFFLINE_AFTER);
        assert_eq!(c.endpoints, vec!["http://a:1/v1", "http://b:2/v1", "http://c:3/v1"]);
        assert_eq!(c.endpoint, "http://a:1/v1");
        assert_eq!(c.endpoint_backoff, Duration::from_secs(5));
        assert_eq!(CuratorConfig::new("http://x/v1").endpoints, vec!["http://x/v1"]);
    }

    #[test]
    fn debug_redacts_the_key() {
        let c = CuratorConfig::new("http://x/v1").with_api_key("sk-secret-123");
        let d = format!("{c:?}");
        assert!(!d.contains("sk-secret-123"));
        assert!(d.contains("<redacted>"));
        assert!(c.has_api_key());
    }

    #[test]
    fn openrouter_reasoning_off() {
        let c = CuratorConfig::new("https://openrouter.ai/api/v1");
        assert!(c.disable_reasoning_field());
        assert!(!CuratorConfig::new("http://127.0.0.1/v1").disable_reasoning_field());
    }
}
