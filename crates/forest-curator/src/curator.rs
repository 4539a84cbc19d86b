//! The Curator proper: leaf summaries (§4.2), the validate-and-retry loop
//! (§4.3), edge proposals (§4.4) and branch rollups (§4.6).

use crate::cache::{CachedCuration, CurationCache};
use crate::config::CuratorConfig;
use crate::error::CuratorError;
use crate::grounding::ungrounded_scent;
use crate::http::Http;
use crate::informative::{judge, repeated_phrase};
use crate::parse::{json_object, summary_reply};
use crate::prompts::{self, Offered, PROMPT_VERSION};
use crate::reject::Rejection;
use crate::stats::{bump, CuratorStats, StatsSnapshot};
use forest_model::scent::{derive_summary, fit_summary, validate_summary, SummaryError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

/// Model calls per summary at most, first attempt included (dialect §4.3);
/// the loop stops sooner when a reply repeats the fault just rejected.
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
    /// The model's summary passed the contract and grounding but said no
    /// more than the derived one: the derived summary is kept.
    KeptDerived,
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

/// What [`Curator::summarize_scent`] curates, and what the candidate must
/// beat.
#[derive(Debug, Clone, Copy)]
pub struct ScentRequest<'a> {
    /// The node's title.
    pub title: &'a str,
    /// Its content.
    pub body: &'a str,
    /// Operator directives.
    pub directives: &'a str,
    /// The derived summary in place (`None`: `derive_summary(body, title)`).
    pub derived: Option<&'a str>,
    /// Names an agent sees anyway besides the title: file name, folders.
    pub names: &'a [&'a str],
    /// The derived keyphrase tags, offered to the model with the title.
    pub keyphrases: &'a [String],
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

/// The id of an entry line `- [[id]] — summary`.
fn entry_target(line: &str) -> Option<&str> {
    let start = line.find("[[")? + 2;
    let len = line[start..].find("]]")?;
    Some(&line[start..start + len])
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
        self.chat_with_schema(messages, None)
    }

    /// [`Curator::chat`] constrained by `schema` (a `response_format`
    /// value) while the server honours it: a server that refuses
    /// `response_format` gets the plain request, for this and every later
    /// call ([`Curator::structured_output`] turns false).
    pub fn chat_with_schema(&self, messages: &[Value], schema: Option<&Value>) -> Result<String, CuratorError> {
        self.http.chat(&self.model, messages, schema, &self.stats).map_err(|e| {
            self.transport_failed(&e);
            CuratorError::Transport(e.full())
        })
    }

    /// Whether this Curator stopped asking for the rest of its run: every
    /// endpoint refused `offline_after` connections in a row. Every later
    /// call falls back at once (counted in `offline_skips`).
    pub fn offline(&self) -> bool {
        self.http.offline()
    }

    /// Count a request that produced no reply: a transport error, or a
    /// call not sent because the Curator is offline (its message names the
    /// connection error that took it offline).
    fn transport_failed(&self, e: &crate::http::TransportError) {
        if e.offline {
            bump(&self.stats.offline_skips);
        } else {
            bump(&self.stats.transport_errors);
        }
        self.stats.set_error(&e.full());
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
                tracing::warn!(error = %forest_model::error_chain(&e), "curation cache read failed");
                None
            }
        }
    }

    fn cache_put(&self, key: &str, value: CachedCuration) {
        if let Some(cache) = &self.cache {
            if let Err(e) = cache.put(key, PROMPT_VERSION, &self.model, &value) {
                tracing::warn!(error = %forest_model::error_chain(&e), "curation cache write failed");
            }
        }
    }

    /// The §4.3 loop: up to three calls, rejection fed back (the contract,
    /// then [`Curator::check`]: grounding in `source`, repeated phrases),
    /// repair of an over-long candidate at the end.
    fn validate_loop(&self, mut messages: Vec<Value>, schema: &Value, source: &str) -> LoopResult {
        let mut overlong: Option<(String, Vec<String>)> = None;
        let mut last: Option<Rejection> = None;
        for attempt in 0..MAX_ATTEMPTS {
            let reply = match self.http.chat(&self.model, &messages, Some(schema), &self.stats) {
                Ok(r) => r,
                Err(e) => {
                    self.transport_failed(&e);
                    return LoopResult::Failed(e.full());
                }
            };
            let rejection = if reply.trim().is_empty() {
                Rejection::EmptyReply
            } else {
                let parsed = summary_reply(&reply);
                match parsed.summary.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) {
                    None => Rejection::NoSummary,
                    Some(s) => match validate_summary(&s) {
                        Ok(()) => match self.check(&s, &parsed.tags, source) {
                            None => {
                                if attempt == 0 {
                                    bump(&self.stats.first_attempt);
                                }
                                return LoopResult::Accepted { summary: s, tags: parsed.tags, repaired: false };
                            }
                            Some(why) => why,
                        },
                        Err(e) => {
                            if matches!(e, SummaryError::TooLong(_)) {
                                overlong = Some((s, parsed.tags));
                            }
                            Rejection::Contract(e)
                        }
                    },
                }
            };
            bump(&self.stats.retries);
            let error = rejection.message();
            self.stats.set_reject(&error, &reply);
            let again = rejection.worth_retry_after(last.as_ref());
            last = Some(rejection);
            if !again {
                bump(&self.stats.repeated_rejection_stops);
                break;
            }
            messages.push(msg("assistant", &reply));
            messages.push(msg("user", &prompts::retry_message(&error)));
        }
        if let Some((text, tags)) = overlong {
            if let Some(fixed) = fit_summary(&text).filter(|f| self.check(f, &tags, source).is_none()) {
                bump(&self.stats.repaired);
                return LoopResult::Accepted { summary: fixed, tags, repaired: true };
            }
        }
        bump(&self.stats.rejected);
        LoopResult::Failed(last.map(|r| r.message()).unwrap_or_default())
    }

    /// What a contract-valid candidate must also be: grounded in `source`
    /// (every number, date, version and name occurs there) and free of
    /// repeated phrases. `Some(reason)` rejects it (counted).
    fn check(&self, summary: &str, tags: &[String], source: &str) -> Option<Rejection> {
        let missing = ungrounded_scent(summary, tags, source);
        if !missing.is_empty() {
            bump(&self.stats.grounding_rejections);
            return Some(Rejection::Ungrounded(missing));
        }
        let phrase = repeated_phrase(summary)?;
        bump(&self.stats.repeated_phrase_rejections);
        Some(Rejection::Repeated(phrase))
    }

    /// Curate a leaf summary and tags from `title`, `body` (its outline and
    /// first paragraphs within `content_tokens`, [`crate::select`]) and
    /// operator `directives`. Never fails: on any model problem
    /// the outcome carries `derive_summary(body, title)`.
    pub fn summarize(&self, title: &str, body: &str, directives: &str) -> SummaryOutcome {
        self.summarize_scent(&ScentRequest { title, body, directives, derived: None, names: &[], keyphrases: &[] })
    }

    /// [`Curator::summarize`] that keeps the derived summary unless the
    /// model's says more (see [`crate::informative::judge`]): a candidate
    /// that says nothing beyond the title and `names` is counted in
    /// `kept_derived_less_informative` and comes back as
    /// [`SummaryOrigin::KeptDerived`].
    pub fn summarize_scent(&self, req: &ScentRequest<'_>) -> SummaryOutcome {
        let (title, body) = (req.title, req.body);
        let derived = || req.derived.map(str::to_string).unwrap_or_else(|| derive_summary(body, title));
        if body.trim().is_empty() {
            bump(&self.stats.skipped);
            return SummaryOutcome {
                origin: SummaryOrigin::Skipped,
                summary: derived(),
                tags: Vec::new(),
                reason: None,
            };
        }
        let budget = self.http.config.content_tokens;
        let keys = req.keyphrases.join(",");
        let key =
            CurationCache::content_hash(&["summary", title, body, req.directives.trim(), &keys, &budget.to_string()]);
        let (summary, tags, origin) = if let Some(hit) = self.cache_get(&key) {
            bump(&self.stats.cache_hits);
            (hit.summary, hit.tags, SummaryOrigin::Cached)
        } else {
            let messages = vec![
                msg("system", &prompts::summary_system(req.directives)),
                msg("user", &prompts::summary_user(title, req.keyphrases, body, budget)),
            ];
            // The names are facts about the document too (a file name's date).
            let source = format!("{title}\n{}\n{body}", req.names.join("\n"));
            match self.validate_loop(messages, &prompts::summary_schema(), &source) {
                LoopResult::Accepted { summary, tags, repaired } => {
                    self.cache_put(&key, CachedCuration { summary: summary.clone(), tags: tags.clone(), repaired });
                    (summary, tags, if repaired { SummaryOrigin::Repaired } else { SummaryOrigin::Llm })
                }
                LoopResult::Failed(reason) => {
                    bump(&self.stats.fallbacks);
                    return SummaryOutcome {
                        origin: SummaryOrigin::Fallback,
                        summary: derived(),
                        tags: Vec::new(),
                        reason: Some(reason),
                    };
                }
            }
        };
        let kept = derived();
        let mut names: Vec<&str> = vec![title];
        names.extend_from_slice(req.names);
        if let Err(why) = judge(&summary, &kept, &names) {
            bump(&self.stats.kept_derived_less_informative);
            return SummaryOutcome {
                origin: SummaryOrigin::KeptDerived,
                summary: kept,
                tags: Vec::new(),
                reason: Some(format!("kept derived: less informative ({})", why.message())),
            };
        }
        bump(&self.stats.llm_summaries);
        SummaryOutcome { origin, summary, tags, reason: None }
    }

    /// Summarize a branch from its children's entry lines (§4.6). `None` →
    /// the caller uses `derive_branch_summary` (`branch_fallbacks` counted).
    /// A candidate is grounded in the entries, repeats no phrase and says
    /// something beyond the branch's and its children's names.
    pub fn branch_summary(&self, title: &str, entries: &[String]) -> Option<String> {
        if entries.iter().all(|e| e.trim().is_empty()) {
            bump(&self.stats.branch_fallbacks);
            return None;
        }
        let key = CurationCache::content_hash(&["branch", title, &entries.join("\n")]);
        let summary = if let Some(hit) = self.cache_get(&key) {
            bump(&self.stats.cache_hits);
            hit.summary
        } else {
            let messages =
                vec![msg("system", &prompts::branch_system()), msg("user", &prompts::branch_user(title, entries))];
            let source = format!("{title}\n{}", entries.join("\n"));
            match self.validate_loop(messages, &prompts::branch_schema(), &source) {
                LoopResult::Accepted { summary, repaired, .. } => {
                    self.cache_put(&key, CachedCuration { summary: summary.clone(), tags: Vec::new(), repaired });
                    summary
                }
                LoopResult::Failed(_) => {
                    bump(&self.stats.branch_fallbacks);
                    return None;
                }
            }
        };
        let mut names: Vec<&str> = vec![title];
        names.extend(entries.iter().filter_map(|e| entry_target(e)));
        if judge(&summary, "", &names).is_err() {
            bump(&self.stats.kept_derived_less_informative);
            bump(&self.stats.branch_fallbacks);
            return None;
        }
        bump(&self.stats.branch_rollups);
        Some(summary)
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
                if e.offline {
                    bump(&self.stats.offline_skips);
                }
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
