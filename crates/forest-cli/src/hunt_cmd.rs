//! The agent on the command line: `forest hunt QUESTION` (one navigator,
//! or `--troop N` monkeys with a judge) and `forest bench QUESTIONS.json`
//! (the arms greedy, topk, iterative, navigator, troop). Thin: the loop,
//! the arms and the grading live in forest-navigator.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use forest_curator::{Curator, CuratorConfig};
use forest_navigator::bench::{actions_used, render, run_bench, BenchOptions, BenchReport, BenchRow};
use forest_navigator::grade::parse_questions;
use forest_navigator::protocol::Actions;
use forest_navigator::{
    hunt, troop, Forest, HuntOptions, HuntResult, InProcess, McpForest, NavError, StopPolicy, TroopInfo, TroopOptions,
};
use forest_vine::{Vine, VineOptions};
use schemars::JsonSchema;
use serde::Serialize;

/// Navigator completions: the reference's 600 tokens unless
/// `MONKEYLLM_LLM_MAX_TOKENS` says otherwise.
const HUNT_MAX_TOKENS: u32 = 600;

#[derive(Args, Clone)]
pub struct ChatArgs {
    /// OpenAI-compatible /v1 endpoint (default: $MONKEYLLM_LLM_ENDPOINT).
    #[arg(long)]
    endpoint: Option<String>,
    /// Model id (default: $MONKEYLLM_LLM_MODEL, else the server's first).
    #[arg(long)]
    model: Option<String>,
    /// How the model is asked for actions: `schema` sends a
    /// `response_format` json_schema of the allowed tool calls (a server
    /// that refuses it gets the text protocol), `text` the prompt only.
    #[arg(long, default_value = "schema", value_name = "schema|text")]
    actions: Actions,
}

/// Where the forest is: a directory in process, or a `forest serve` over MCP.
#[derive(Args, Clone)]
pub struct WhereArgs {
    /// Forest directory (default: $FOREST_DIR, else the current directory).
    #[arg(long, env = "FOREST_DIR", default_value = ".")]
    forest: PathBuf,
    /// Walk a forest served elsewhere: the MCP endpoint of `forest serve
    /// --transport http` (http://HOST:PORT/mcp) instead of --forest.
    #[arg(long, value_name = "URL")]
    mcp: Option<String>,
    /// Bearer token for --mcp (default: $FOREST_MCP_TOKEN).
    #[arg(long, env = "FOREST_MCP_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

impl WhereArgs {
    /// The forest's name in reports: the directory or the URL.
    fn name(&self) -> String {
        self.mcp.clone().unwrap_or_else(|| self.forest.display().to_string())
    }

    /// Connect once (MCP) or check nothing (in process: opened per hunt).
    fn connect(&self, learn: bool) -> Result<Option<McpForest>, NavError> {
        match &self.mcp {
            Some(url) => Ok(Some(McpForest::connect(url, self.token.as_deref(), learn)?)),
            None => Ok(None),
        }
    }
}

/// Open the forest for one hunt: another handle on the MCP session (in a
/// fresh Vine session for a bench's next question), or the directory in
/// process (read-only unless `learn`).
fn open_for(w: &WhereArgs, mcp: Option<&McpForest>, session: &str, learn: bool) -> Result<Box<dyn Forest>, NavError> {
    Ok(match mcp {
        Some(m) if session.starts_with("hunt-") => Box::new(m.handle()),
        Some(m) => Box::new(m.fresh_handle()),
        None => Box::new(open(&w.forest, session, learn)?),
    })
}

#[derive(Subcommand)]
pub enum HuntCmd {
    /// Ask the forest a question: a navigator walks it and answers with its trail and cost.
    Hunt {
        /// The question.
        #[arg(required = true)]
        question: Vec<String>,
        #[command(flatten)]
        at: WhereArgs,
        #[command(flatten)]
        chat: ChatArgs,
        /// A troop of N monkeys with a judge instead of one navigator.
        #[arg(long, value_name = "N")]
        troop: Option<usize>,
        /// Troop stop policy: first | quorum | coverage | patience | none.
        #[arg(long, default_value = "patience")]
        stop_policy: StopPolicy,
        /// Step budget (default B(q) = 14 + 3(w-1)).
        #[arg(long)]
        budget: Option<usize>,
        /// Independent sub-chains of the question (w of B(q)).
        #[arg(long, default_value_t = 1)]
        fork_width: u64,
        /// Learn: close the session (heat on the answer's trail) and graft
        /// suggested shortcuts (takes the writer lock).
        #[arg(long)]
        learn: bool,
        #[arg(long)]
        json: bool,
    },
    /// Run the reference's bench question file against this forest, arm by arm.
    Bench {
        /// Question file (JSON array: id, question, expected_nodes, answer_contains).
        questions: PathBuf,
        #[command(flatten)]
        at: WhereArgs,
        /// Comma-separated arms: greedy, topk, iterative, navigator, troop.
        #[arg(long, default_value = "greedy", value_delimiter = ',')]
        arms: Vec<String>,
        #[command(flatten)]
        chat: ChatArgs,
        /// Monkeys of the troop arm.
        #[arg(long, default_value_t = 3)]
        troop_n: usize,
        /// Troop stop policy.
        #[arg(long, default_value = "first")]
        stop_policy: StopPolicy,
        /// Navigator step budget (default B(q) per question).
        #[arg(long)]
        budget: Option<usize>,
        /// Only these question ids (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[arg(long)]
        json: bool,
    },
}

/// `forest hunt --json`.
#[derive(Serialize, JsonSchema)]
pub struct HuntReport {
    /// The hunt (solo or the troop's merged answer).
    #[serde(flatten)]
    pub result: HuntResult,
    /// The troop's account (`--troop` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub troop: Option<TroopInfo>,
    /// How actions were asked for (`--actions`: schema | text).
    pub actions: Actions,
    /// What the model got: `text` when asked for it or when the server
    /// refused `response_format`.
    pub actions_used: Actions,
}

pub fn run(cmd: HuntCmd) -> Result<u8> {
    match cmd {
        HuntCmd::Hunt { question, at, chat, troop: n, stop_policy, budget, fork_width, learn, json } => {
            let q = question.join(" ");
            let llm = curator(&chat)?;
            let session = format!("hunt-{}", &forest_vine::new_session_id()[..6]);
            let mcp = at.connect(learn)?;
            let mut f = open_for(&at, mcp.as_ref(), &session, learn)?;
            let report = match n {
                Some(n) => {
                    let o = TroopOptions {
                        n,
                        policy: stop_policy,
                        fork_width: fork_width as usize,
                        expected: None,
                        actions: chat.actions,
                    };
                    let (result, info) = troop(f.as_mut(), &llm, &q, &o);
                    (result, Some(info))
                }
                None => {
                    let b = budget.unwrap_or_else(|| forest_navigator::protocol::step_budget(Some(fork_width)));
                    let opts = HuntOptions { actions: chat.actions, ..HuntOptions::solo(b) };
                    (hunt(f.as_mut(), &llm, &q, opts), None)
                }
            };
            let (result, troop) = report;
            let used = actions_used(chat.actions, &llm);
            let report = HuntReport { result, troop, actions: chat.actions, actions_used: used };
            if let Some(why) = f.lost() {
                return Err(NavError::Lost(why).into());
            }
            if json {
                crate::cli::print_json(&report)?;
            } else {
                print!("{}", render_hunt(&report));
            }
            Ok(if report.result.answer.is_some() { 0 } else { 1 })
        }
        HuntCmd::Bench { questions, at, arms, chat, troop_n, stop_policy, budget, only, json } => {
            cmd_bench(&questions, &at, arms, &chat, troop_n, stop_policy, budget, &only, json)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn cmd_bench(
    questions: &Path,
    at: &WhereArgs,
    arms: Vec<String>,
    chat: &ChatArgs,
    troop_n: usize,
    stop_policy: StopPolicy,
    budget: Option<usize>,
    only: &[String],
    json: bool,
) -> Result<u8> {
    let text = std::fs::read_to_string(questions).with_context(|| format!("reading {}", questions.display()))?;
    let mut qs = parse_questions(&text)
        .map_err(|source| NavError::Questions { path: questions.display().to_string(), source })?;
    if !only.is_empty() {
        qs.retain(|q| only.contains(&q.id));
    }
    let needs = arms.iter().any(|a| forest_navigator::bench::needs_llm(a));
    let configured = chat.endpoint.is_some()
        || ["MONKEYLLM_LLM_ENDPOINT", "OPENAI_BASE_URL"]
            .iter()
            .any(|k| std::env::var(k).is_ok_and(|v| !v.trim().is_empty()));
    forest_navigator::bench::check_arms(&arms, configured)?;
    let llm = if needs { Some(curator(chat)?) } else { None };
    let model = llm.as_ref().map(|c| c.model().to_string());
    let o = BenchOptions {
        arms,
        llm: llm.as_ref().map(|c| c as &dyn forest_navigator::Chat),
        troop_n,
        stop_policy,
        budget,
        actions: chat.actions,
    };
    let mcp = at.connect(false)?;
    let mut opener = |session: &str| open_for(at, mcp.as_ref(), session, false);
    let tty = std::io::stderr().is_terminal();
    let mut progress = |arm: &str, r: &BenchRow| {
        if tty {
            eprintln!(
                "{arm:<10} {:<6} {:<3} prec {:.2} {:>6} tok {:>6.1} s",
                r.id,
                if r.correct_text { "ok" } else { "no" },
                r.banana_precision,
                r.tokens,
                r.wall_s
            );
        }
    };
    let (summaries, results) = run_bench(&mut opener, &qs, &o, &mut progress)?;
    let used = o.llm.map(|l| actions_used(chat.actions, l));
    let report = BenchReport {
        forest: at.name(),
        questions: questions.display().to_string(),
        model,
        actions: chat.actions,
        actions_used: used,
        summaries,
        results,
    };
    if json {
        crate::cli::print_json(&report)?;
    } else {
        print!("{}", render(&report));
    }
    Ok(0)
}

/// The forest in process, read-only unless `learn`.
fn open(forest: &Path, session: &str, learn: bool) -> Result<InProcess, NavError> {
    let vine = Vine::open(forest, VineOptions { writable: learn, session: Some(session.to_string()) })
        .map_err(NavError::Forest)?;
    Ok(InProcess { vine, learn })
}

/// The Curator's client from the environment, overridden by the flags.
fn curator(chat: &ChatArgs) -> Result<Curator> {
    let env = |k: &str| std::env::var(k).ok();
    let mut cfg = match &chat.endpoint {
        Some(e) => CuratorConfig::from_lookup(|k| if k == "MONKEYLLM_LLM_ENDPOINT" { Some(e.clone()) } else { env(k) }),
        None => CuratorConfig::from_env(),
    }
    .map_err(NavError::Llm)?;
    if env("MONKEYLLM_LLM_MAX_TOKENS").is_none() {
        cfg.max_tokens = HUNT_MAX_TOKENS;
    }
    if let Some(m) = &chat.model {
        cfg.model = m.clone();
    }
    Ok(Curator::new(cfg).map_err(NavError::Llm)?)
}

/// Text of a hunt: answer, nodes, trail, cost.
fn render_hunt(r: &HuntReport) -> String {
    let h = &r.result;
    let mut s = format!("answer: {}\n", h.answer.as_deref().unwrap_or("(none)"));
    s.push_str(&format!("answer_nodes: {}\n", h.answer_nodes.join(", ")));
    s.push_str(&format!(
        "confidence: {:.2}  stop: {}{}  rejections: {}\n",
        h.confidence,
        h.stop,
        if h.forced { " (forced synthesis)" } else { "" },
        h.rejections
    ));
    if let Some(e) = &h.error {
        s.push_str(&format!("error: {e}\n"));
    }
    s.push_str(&format!("actions: {} (asked {})\n", r.actions_used.as_str(), r.actions.as_str()));
    s.push_str("trail:\n");
    for st in &h.trail {
        let args = st.args.as_ref().map(|a| a.to_string()).unwrap_or_default();
        let note = st.note.as_deref().map(|n| format!(" [{n}]")).unwrap_or_default();
        s.push_str(&format!(
            "  {:>2} {:<8} {:<12} {} {}{} ({} tok)\n",
            st.turn,
            st.by,
            st.kind,
            st.tool.as_deref().unwrap_or("-"),
            args,
            note,
            st.tokens
        ));
    }
    let c = &h.cost;
    s.push_str(&format!(
        "cost: {} steps of {}, {} LLM calls (~{} prompt + ~{} completion tokens), {} calls, {} observation tokens, {:.1} s\n",
        c.steps, c.budget, c.llm_calls, c.prompt_tokens_est, c.completion_tokens_est, c.calls, c.observation_tokens, c.wall_s
    ));
    if let Some(t) = &r.troop {
        s.push_str(&format!(
            "troop: {} monkeys, stop {:?}, {} harvests, judged: {}\n",
            t.n,
            t.stop_policy,
            t.harvests.len(),
            t.judged
        ));
    }
    s
}
