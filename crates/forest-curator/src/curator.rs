//! The Curator proper: leaf summaries (§4.2), the validate-and-retry loop
//! (§4.3), edge proposals (§4.4) and branch rollups (§4.6).

use crate::cache::{CachedCuration, CurationCache};
use crate::config::CuratorConfig;
use crate::error::CuratorError;
use crate::http::Http;
use crate::parse::{json_object, summary_reply};
use crate::prompts::{self, Offered, PROMPT_VERSION};
use crate::stats::{bump, CuratorStats, StatsSnapshot};
use forest_model::scent::{derive_summary, fit_summary, validate_summary, SummaryError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

/// Model calls per summary, first attempt included (dialect §4.3).
pub const MAX_ATTEMPTS: usize = 3;
/// Candidates offered to the model at most (dialect §4.4).
pub const OFFER_MAX: usize = 8;
/// Links accepted per node at most.
pub const PROPOSALS_MAX: usize = 3;
/// Confidence of a proposed link.
pub const PROPOSAL_CONFIDENCE: f64 = 0.3;
/// The only proposable relation.
pub const PROPOSAL_REL: &str = "related-to";
/// Max chars of a proposal note.
pub const NOTE_MAX_CHARS: usize = 120;

/// A node the catalog can offer as a link target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    /// Canonical id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Summary (scent).
    pub summary: String,
}

/// Source of link candidates (the catalog's BM25 search implements it).
pub trait CandidateProvider: Send + Sync {
    /// Up to `limit` candidates for `query`, best first.
    fn candidates(&self, query: &str, limit: usize) -> Vec<Candidate>;
}

/// A typed edge, as proposed (or as already present on the draft).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Link {
    /// Relation (`related-to` for proposals).
    pub rel: String,
    /// Target id.
    pub target: String,
    /// Edge confidence (0.3 for proposals).
    pub confidence: f64,
    /// Optional short note (<= 120 chars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where a [`SummaryOutcome`]'s summary came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SummaryOrigin {
    /// The model's reply passed validation.
    Llm,
    /// An over-long model reply rescued by `fit_summary`.
    Repaired,
    /// A validated reply from the curation cache (no HTTP).
    Cached,
    /// The model failed: the derived summary is kept.
    Fallback,
    /// Empty body: not curated.
    Skipped,
}

/// Result of [`Curator::summarize`]. `summary` always passes
/// `validate_summary` (the derived summary on fallback / skip).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SummaryOutcome {
    /// Provenance.
    pub origin: SummaryOrigin,
    /// The summary to plant.
    pub summary: String,
    /// The model's cleaned tags, to append after the draft's tags.
    pub tags: Vec<String>,
    /// Why the model's summary was not used (fallback only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SummaryOutcome {
    /// Whether the model wrote the summary (`scent: llm`).
    pub fn is_llm(&self) -> bool {
        matches!(self.origin, SummaryOrigin::Llm | SummaryOrigin::Repaired | SummaryOrigin::Cached)
    }
}

/// Result of [`Curator::propose_links`]: every link targets an offered id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProposalOutcome {
    /// Accepted `related-to` links (<= 3, confidence 0.3).
    pub links: Vec<Link>,
    /// Ids offered to the model (<= 8; empty → no call was made).
    pub offered: Vec<String>,
    /// Picks dropped (outside the offered set, malformed, duplicate, over cap).
    pub dropped: usize,
    /// The call failed (transport / non-JSON / `related` not a list).
    pub fallback: bool,
    /// Why, when `fallback`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

enum LoopResult {
    Accepted { summary: String, tags: Vec<String>, repaired: bool },
    Failed(String),
}

/// An OpenAI-compatible Curator; share one per run (`&Curator` is `Sync`):
/// concurrency, rate limit and stats are per Curator.
pub struct Curator {
    http: Http,
    model: String,
    stats: CuratorStats,
    cache: Option<CurationCache>,
}

impl std::fmt::Debug for Curator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Curator")
            .field("config", &self.http.config)
            .field("model", &self.model)
            .field("cache", &self.cache)
            .finish()
    }
}

fn msg(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

fn is_branch(id: &str) -> bool {
    id.ends_with("_index")
}

impl Curator {
    /// Build from a config; model `local` is resolved by `GET /models`
    /// (first id served; on failure `local` is sent as is).
    pub fn new(config: CuratorConfig) -> Result<Self, CuratorError> {
        let mut config = config;
        // Slots per endpoint: `concurrency` each, lowered to what a server
        // reports; `concurrency` then holds the total worth keeping in flight.
        let mut slots = vec![config.concurrency; config.endpoints.len().max(1)];
        if config.auto_concurrency {
            for (i, url) in config.endpoints.iter().enumerate() {
                if let Some(s) = crate::http::server_slots(&config, url) {
                    if s < slots[i] {
                        tracing::info!(event = "curator.concurrency", endpoint = %url, slots = s, was = slots[i]);
                        slots[i] = s;
                    }
                }
            }
        }
        config.concurrency = crate::endpoints::EndpointPool::capacity(&slots);
        let want = config.model.clone();
        let http = Http::new(config, &slots)?;
        let stats = CuratorStats::default();
        let model = if want == "local" { http.first_model(&stats).unwrap_or(want) } else { want };
        Ok(Curator { http, model, stats, cache: None })
    }

    /// [`CuratorConfig::from_env`] then [`Curator::new`].
    pub fn from_env() -> Result<Self, CuratorError> {
        Self::new(CuratorConfig::from_env()?)
    }

    /// Attach a curation cache.
    pub fn with_cache(mut self, cache: CurationCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The model id in use.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The configuration (its `Debug` redacts the key).
    pub fn config(&self) -> &CuratorConfig {
        &self.http.config
    }

    /// Whether `response_format: json_schema` is still sent (false once the
    /// server refused it).
    pub fn structured_output(&self) -> bool {
        self.http.schema_enabled()
    }

    /// One free-form chat completion (an agent's turn): no `response_format`,
    /// paced, rate-limited and retried like every request of this Curator.
    /// Returns `choices[0].message.content`; a transport failure (after
    /// retries) is [`CuratorError::Transport`].
    pub fn chat(&self, messages: &[Value]) -> Result<String, CuratorError> {
        self.http.chat(&self.model, messages, None, &self.stats).map_err(|e| {
            bump(&self.stats.transport_errors);
            self.stats.set_error(&e.full());
            CuratorError::Transport(e.full())
        })
    }

    /// A copy of the counters.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    fn cache_get(&self, key: &str) -> Option<CachedCuration> {
        let cache = self.cache.as_ref()?;
        match cache.get(key, PROMPT_VERSION, &self.model) {
            // Re-validate: nothing invalid leaves this crate, even from disk.
            Ok(Some(c)) if validate_summary(&c.summary).is_ok() => Some(c),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, "curation cache read failed");
                None
            }
        }
    }

    fn cache_put(&self, key: &str, value: CachedCuration) {
        if let Some(cache) = &self.cache {
            if let Err(e) = cache.put(key, PROMPT_VERSION, &self.model, &value) {
                tracing::warn!(error = %e, "curation cache write failed");
            }
        }
    }

    /// The §4.3 loop: up to three calls, rejection fed back, repair of an
    /// over-long candidate at the end.
    fn validate_loop(&self, mut messages: Vec<Value>, schema: &Value) -> LoopResult {
        let mut overlong: Option<(String, Vec<String>)> = None;
        let mut last = String::new();
        for attempt in 0..MAX_ATTEMPTS {
            let reply = match self.http.chat(&self.model, &messages, Some(schema), &self.stats) {
                Ok(r) => r,
                Err(e) => {
                    bump(&self.stats.transport_errors);
                    self.stats.set_error(&e.full());
                    return LoopResult::Failed(e.full());
                }
            };
            let error = if reply.trim().is_empty() {
                "the model returned an empty message".to_string()
            } else {
                let parsed = summary_reply(&reply);
                match parsed.summary.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) {
                    None => "no summary found in the JSON reply".to_string(),
                    Some(s) => match validate_summary(&s) {
                        Ok(()) => {
                            if attempt == 0 {
                                bump(&self.stats.first_attempt);
                            }
                            return LoopResult::Accepted { summary: s, tags: parsed.tags, repaired: false };
                        }
                        Err(e) => {
                            if matches!(e, SummaryError::TooLong(_)) {
                                overlong = Some((s, parsed.tags));
                            }
                            e.message()
                        }
                    },
                }
            };
            bump(&self.stats.retries);
            self.stats.set_reject(&error, &reply);
            messages.push(msg("assistant", &reply));
            messages.push(msg("user", &prompts::retry_message(&error)));
            last = error;
        }
        if let Some((text, tags)) = overlong {
            if let Some(fixed) = fit_summary(&text) {
                bump(&self.stats.repaired);
                return LoopResult::Accepted { summary: fixed, tags, repaired: true };
            }
        }
        bump(&self.stats.rejected);
        LoopResult::Failed(last)
    }

    /// Curate a leaf summary and tags from `title`, `body` (clipped to 1500
    /// tokens) and operator `directives`. Never fails: on any model problem
    /// the outcome carries `derive_summary(body, title)`.
    pub fn summarize(&self, title: &str, body: &str, directives: &str) -> SummaryOutcome {
        if body.trim().is_empty() {
            bump(&self.stats.skipped);
            return SummaryOutcome {
                origin: SummaryOrigin::Skipped,
                summary: derive_summary(body, title),
                tags: Vec::new(),
                reason: None,
            };
        }
        let key = CurationCache::content_hash(&["summary", title, body, directives.trim()]);
        if let Some(hit) = self.cache_get(&key) {
            bump(&self.stats.cache_hits);
            bump(&self.stats.llm_summaries);
            return SummaryOutcome {
                origin: SummaryOrigin::Cached,
                summary: hit.summary,
                tags: hit.tags,
                reason: None,
            };
        }
        let messages =
            vec![msg("system", &prompts::summary_system(directives)), msg("user", &prompts::summary_user(title, body))];
        match self.validate_loop(messages, &prompts::summary_schema()) {
            LoopResult::Accepted { summary, tags, repaired } => {
                bump(&self.stats.llm_summaries);
                self.cache_put(&key, CachedCuration { summary: summary.clone(), tags: tags.clone(), repaired });
                let origin = if repaired { SummaryOrigin::Repaired } else { SummaryOrigin::Llm };
                SummaryOutcome { origin, summary, tags, reason: None }
            }
            LoopResult::Failed(reason) => {
                bump(&self.stats.fallbacks);
                SummaryOutcome {
                    origin: SummaryOrigin::Fallback,
                    summary: derive_summary(body, title),
                    tags: Vec::new(),
                    reason: Some(reason),
                }
            }
        }
    }

    /// Summarize a branch from its children's entry lines (§4.6). `None` →
    /// the caller uses `derive_branch_summary` (`branch_fallbacks` counted).
    pub fn branch_summary(&self, title: &str, entries: &[String]) -> Option<String> {
        if entries.iter().all(|e| e.trim().is_empty()) {
            bump(&self.stats.branch_fallbacks);
            return None;
        }
        let key = CurationCache::content_hash(&["branch", title, &entries.join("\n")]);
        if let Some(hit) = self.cache_get(&key) {
            bump(&self.stats.cache_hits);
            bump(&self.stats.branch_rollups);
            return Some(hit.summary);
        }
        let messages =
            vec![msg("system", &prompts::branch_system()), msg("user", &prompts::branch_user(title, entries))];
        match self.validate_loop(messages, &prompts::branch_schema()) {
            LoopResult::Accepted { summary, repaired, .. } => {
                bump(&self.stats.branch_rollups);
                self.cache_put(&key, CachedCuration { summary: summary.clone(), tags: Vec::new(), repaired });
                Some(summary)
            }
            LoopResult::Failed(_) => {
                bump(&self.stats.branch_fallbacks);
                None
            }
        }
    }

    /// Propose up to three `related-to` links from a closed candidate set
    /// (§4.4). Self, `parent` and branches are never offered; a pick outside
    /// the offered set is dropped, never repaired.
    pub fn propose_links(
        &self,
        id: &str,
        parent: Option<&str>,
        title: &str,
        summary: &str,
        existing_links: &[Link],
        candidates: &dyn CandidateProvider,
    ) -> ProposalOutcome {
        let query = format!("{title} {summary}");
        let mut offered: Vec<Candidate> = Vec::new();
        for c in candidates.candidates(&query, OFFER_MAX * 3) {
            let cid = c.id.trim();
            if cid.is_empty()
                || cid == id
                || Some(cid) == parent
                || is_branch(cid)
                || offered.iter().any(|o| o.id == cid)
            {
                continue;
            }
            offered.push(Candidate { id: cid.to_string(), ..c });
            if offered.len() == OFFER_MAX {
                break;
            }
        }
        let offered_ids: Vec<String> = offered.iter().map(|c| c.id.clone()).collect();
        let mut out =
            ProposalOutcome { links: Vec::new(), offered: offered_ids, dropped: 0, fallback: false, reason: None };
        if offered.is_empty() {
            return out;
        }
        let lines: Vec<Offered<'_>> =
            offered.iter().map(|c| Offered { id: &c.id, title: &c.title, summary: &c.summary }).collect();
        let ids: Vec<&str> = offered.iter().map(|c| c.id.as_str()).collect();
        let messages = [msg("user", &prompts::proposal_user(id, title, summary, &lines))];
        let fail = |out: &mut ProposalOutcome, reason: String| {
            bump(&self.stats.proposal_fallbacks);
            out.fallback = true;
            out.reason = Some(reason);
        };
        let reply = match self.http.chat(&self.model, &messages, Some(&prompts::proposal_schema(&ids)), &self.stats) {
            Ok(r) => r,
            Err(e) => {
                self.stats.set_error(&e.full());
                fail(&mut out, e.full());
                return out;
            }
        };
        let Some(obj) = json_object(&reply) else {
            fail(&mut out, "proposal reply is not JSON".into());
            return out;
        };
        let Some(picks) = obj.get("related").and_then(Value::as_array) else {
            fail(&mut out, "proposal reply: `related` is not a list".into());
            return out;
        };
        for pick in picks {
            let (pid, note) = match pick {
                Value::String(s) => (s.trim(), None),
                Value::Object(o) => match o.get("id").and_then(Value::as_str) {
                    Some(s) => (s.trim(), o.get("note").and_then(Value::as_str)),
                    None => {
                        out.dropped += 1;
                        continue;
                    }
                },
                _ => {
                    out.dropped += 1;
                    continue;
                }
            };
            let known = ids.contains(&pid);
            let existing = existing_links.iter().any(|l| l.rel == PROPOSAL_REL && l.target == pid);
            let repeated = out.links.iter().any(|l| l.target == pid);
            if !known || existing || repeated || out.links.len() >= PROPOSALS_MAX {
                out.dropped += 1;
                continue;
            }
            let note = note
                .map(|n| n.trim().chars().take(NOTE_MAX_CHARS).collect::<String>().trim_end().to_string())
                .filter(|n| !n.is_empty());
            out.links.push(Link {
                rel: PROPOSAL_REL.into(),
                target: pid.to_string(),
                confidence: PROPOSAL_CONFIDENCE,
                note,
            });
        }
        self.stats.links_proposed.fetch_add(out.links.len() as u64, Ordering::Relaxed);
        out
    }
}
