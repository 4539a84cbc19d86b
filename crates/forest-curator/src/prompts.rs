//! The Curator's prompts (dialect §4.2, §4.4, §4.6) and content clipping.

use forest_model::tokens::estimate_tokens;
use serde_json::{json, Value};

/// Bumped whenever a prompt or schema changes: part of every cache key.
pub const PROMPT_VERSION: &str = "curator-v3";
/// Content budget of a leaf prompt: the tokens of the document the model
/// reads, chosen by [`crate::select::select_content`] (issue 35). Measured
/// on 30 real documents (bench/README.md, session 15): at 384 the long
/// documents keep the same outline as at 512 (512 adds four or five more
/// paragraph leads) and a leaf prompt is 3.1x smaller than the reference
/// engine's (2.7x at 512, 2.1x at 768, 1.4x at 1,500).
/// `FOREST_LLM_CONTENT_TOKENS` overrides.
pub const CONTENT_BUDGET_TOKENS: usize = 384;
/// Budget of a branch rollup's entry lines (dialect `CONTENT_BUDGET_TOKENS`).
pub const ENTRIES_BUDGET_TOKENS: usize = 1500;
/// The retry instruction appended after a rejected reply (dialect §4.3).
pub fn retry_message(error: &str) -> String {
    format!("previous summary rejected: {error}; rewrite strictly, keep under 240 characters, JSON only")
}

/// System prompt of a leaf summary (§4.2).
pub fn summary_system(directives: &str) -> String {
    // Compact (issue 35): every rule the validators enforce, in ~150 tokens.
    let mut s = String::from(
        "Write the `summary` (scent) of one document of a knowledge forest: an agent reads it \
         to decide whether to open the document.\n\
         - 1 to 3 sentences, at most 240 characters.\n\
         - First what it is (category + subject), then its key content: names, numbers, time \
         scope (dated content: at least month and year).\n\
         - Use only names, numbers, dates and versions that appear in the content; invent nothing.\n\
         - Say more than the title and file name; never open with \"This document describes\" \
         or \"File containing\".\n\
         - Same language as the content.\n\
         - Up to 5 tags: lowercase single words, no accents.\n",
    );
    let d = directives.trim();
    if !d.is_empty() {
        s.push_str("\nOperator directives (apply them):\n");
        s.push_str(d);
        s.push('\n');
    }
    s.push_str("\nReply with one JSON object only: {\"summary\": \"...\", \"tags\": [\"...\"]}");
    s
}

/// User message of a leaf summary (§4.2): the title, the derived
/// keyphrases when there are any, and the content selected within `budget`
/// tokens ([`crate::select::select_content`]).
pub fn summary_user(title: &str, keyphrases: &[String], body: &str, budget: usize) -> String {
    let content = crate::select::select_content(title, body, budget);
    let keys: Vec<&str> = keyphrases.iter().map(|k| k.trim()).filter(|k| !k.is_empty()).collect();
    if keys.is_empty() {
        format!("Title: {title}\n\nContent:\n{content}")
    } else {
        format!("Title: {title}\nKeyphrases: {}\n\nContent:\n{content}", keys.join(", "))
    }
}

/// System prompt of a branch rollup (§4.6).
pub fn branch_system() -> String {
    "You write the `summary` of a REGION (a branch) of a knowledge forest from the entry \
     lines of its children.\n\
     Rules:\n\
     - 1 to 3 sentences, at most 240 characters in total.\n\
     - Say what lives here: themes, names, time scope. Synthesize; do not enumerate \
     the children's names.\n\
     - Every number, date and name you write must appear in the entries; invent nothing.\n\
     - If the entries show it, add where to go for what is not here.\n\
     - Never open with boilerplate such as \"This folder contains\" or \"This branch groups\".\n\
     - Write in the same language as the entries.\n\
     \nReply with one JSON object only: {\"summary\": \"...\"}"
        .to_string()
}

/// User message of a branch rollup (§4.6): entries clipped by whole lines.
pub fn branch_user(title: &str, entries: &[String]) -> String {
    format!("Branch: {title}\n\nChildren:\n{}", clip_entries(entries))
}

/// Characters of a candidate's summary offered for proposals (issue 35:
/// enough to see a relation, a quarter of a full scent).
pub const OFFER_SUMMARY_CHARS: usize = 120;

/// Candidate line data offered to the model for proposals.
pub struct Offered<'a> {
    /// Node id.
    pub id: &'a str,
    /// Title.
    pub title: &'a str,
    /// Summary.
    pub summary: &'a str,
}

/// User-only proposal prompt (§4.4): the node plus the closed candidate list.
pub fn proposal_user(id: &str, title: &str, summary: &str, offered: &[Offered<'_>]) -> String {
    let mut s = format!(
        "A new node was added to a knowledge forest.\nid: {id}\ntitle: {title}\nsummary: {summary}\n\n\
         Candidates (a closed list):\n"
    );
    for c in offered {
        let summary = crate::select::clip_chars(c.summary, OFFER_SUMMARY_CHARS);
        s.push_str(&format!("- id: {} | title: {} | summary: {summary}\n", c.id, c.title));
    }
    s.push_str(
        "\nPick 0 to 3 candidates that are genuinely related to the new node: the relation \
         must be visible in the summaries. Use only ids from the list above and never invent \
         ids. An empty list is a good answer when nothing is clearly related.\n\
         Reply with one JSON object only: {\"related\": [{\"id\": \"<candidate id>\", \"note\": \"<why, a few words>\"}]}",
    );
    s
}

fn schema_format(name: &str, schema: Value) -> Value {
    json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}})
}

/// Characters a summary may have in a `response_format` (the contract's 60
/// tokens at 4 characters each): a server that honours the schema cannot
/// let a small model ramble to `max_tokens` (a retry) or stop at a word.
pub const SUMMARY_MAX_CHARS: u64 = (forest_model::scent::SUMMARY_MAX_TOKENS * 4) as u64;
/// Characters a summary has at least: "rmdir" is not a summary (issue 35).
pub const SUMMARY_MIN_CHARS: u64 = 40;

fn summary_field() -> Value {
    json!({"type": "string", "minLength": SUMMARY_MIN_CHARS, "maxLength": SUMMARY_MAX_CHARS})
}

/// `response_format` for a leaf summary: bounded summary, tags in the
/// dialect's format.
pub fn summary_schema() -> Value {
    schema_format(
        "scent",
        json!({
            "type": "object",
            "properties": {
                "summary": summary_field(),
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$", "minLength": 2, "maxLength": 40},
                    "maxItems": 5
                }
            },
            "required": ["summary", "tags"],
            "additionalProperties": false
        }),
    )
}

/// `response_format` for a branch summary.
pub fn branch_schema() -> Value {
    schema_format(
        "region_scent",
        json!({
            "type": "object",
            "properties": {"summary": summary_field()},
            "required": ["summary"],
            "additionalProperties": false
        }),
    )
}

/// `response_format` for proposals: ids constrained to the offered set (the
/// structural guard in `propose_links` still applies for other servers).
pub fn proposal_schema(offered_ids: &[&str]) -> Value {
    schema_format(
        "related",
        json!({
            "type": "object",
            "properties": {
                "related": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "enum": offered_ids},
                            "note": {"type": "string", "maxLength": 120}
                        },
                        "required": ["id", "note"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["related"],
            "additionalProperties": false
        }),
    )
}

/// Clip branch entries by whole lines to [`ENTRIES_BUDGET_TOKENS`] (first line always
/// kept), then `(... N more entries)` (§4.6).
pub fn clip_entries(entries: &[String]) -> String {
    let mut out = String::new();
    let mut kept = 0;
    for (i, e) in entries.iter().enumerate() {
        let cand = if i == 0 { e.clone() } else { format!("{out}\n{e}") };
        if i > 0 && estimate_tokens(&cand) > ENTRIES_BUDGET_TOKENS {
            break;
        }
        out = cand;
        kept += 1;
    }
    if kept < entries.len() {
        out.push_str(&format!("\n(... {} more entries)", entries.len() - kept));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::clip_to;

    #[test]
    fn short_body_only_collapses_whitespace() {
        assert_eq!(clip_to("a \t b\n|x|  y|\n", 1500), "a b\n|x| y|\n");
    }

    #[test]
    fn long_body_is_clipped_by_lines_within_budget() {
        let body: String = (0..2000).map(|i| format!("line {i} with some words\n")).collect();
        let c = clip_to(&body, 1500);
        assert!(estimate_tokens(&c) <= 1500);
        assert!(c.starts_with("line 0 with some words\nline 1 "));
        // Whole lines only: the last kept line is complete.
        let last = c.lines().last().unwrap();
        assert!(last.ends_with("with some words"), "{last}");
        // And not over-clipped: more than half of the budget is used.
        assert!(estimate_tokens(&c) > 1500 / 2);
    }

    #[test]
    fn single_huge_line_cut_by_words_then_chars() {
        let c = clip_to(&"word ".repeat(5000), 1500);
        assert!(estimate_tokens(&c) <= 1500);
        assert!(c.starts_with("word word"));
        let c = clip_to(&"x".repeat(50_000), 1500);
        assert_eq!(c.chars().count(), 6000);
    }

    #[test]
    fn entries_clipped_with_tail() {
        let entries: Vec<String> = (0..1000).map(|i| format!("- [[a/n{i}]] Node {i}: some summary text")).collect();
        let c = clip_entries(&entries);
        assert!(c.starts_with("- [[a/n0]]"));
        let tail = c.lines().last().unwrap();
        assert!(tail.starts_with("(... ") && tail.ends_with(" more entries)"), "{tail}");
        let kept = c.lines().count() - 1;
        assert_eq!(tail, format!("(... {} more entries)", 1000 - kept));
        let one = vec!["x".repeat(10_000)];
        assert_eq!(clip_entries(&one), one[0], "first line always kept");
    }

    #[test]
    fn user_message_carries_title_keyphrases_and_selected_content() {
        let body = "# Notes\n\n## Licence\n\nCopyright 2020 Someone, all rights reserved by the authors.\n\n\
                    ## Beds\n\nGarden notes about tomatoes ripening late in the raised beds every summer.\n";
        let u = summary_user("Notes", &["tomatoes".into(), " ".into(), "raised-beds".into()], body, 512);
        assert!(
            u.starts_with("Title: Notes\nKeyphrases: tomatoes, raised-beds\n\nContent:\n## Beds\nGarden notes"),
            "{u}"
        );
        assert!(!u.contains("Copyright"), "{u}");
        assert!(summary_user("Notes", &[], body, 512).starts_with("Title: Notes\n\nContent:\n"));
    }

    #[test]
    fn schemas_bound_what_the_contract_bounds() {
        let s = summary_schema();
        let summary = &s["json_schema"]["schema"]["properties"]["summary"];
        let max = summary["maxLength"].as_u64().unwrap() as usize;
        // The longest summary the schema lets through passes the contract's
        // length check; one character more would not.
        assert!(forest_model::scent::validate_summary(&"a".repeat(max)).is_ok());
        assert!(forest_model::scent::validate_summary(&"a".repeat(max + 1)).is_err());
        assert!(summary["minLength"].as_u64().unwrap() >= 20);
        let tag = &s["json_schema"]["schema"]["properties"]["tags"]["items"];
        let pattern = regex::Regex::new(tag["pattern"].as_str().unwrap()).unwrap();
        assert!(pattern.is_match("raised-beds") && !pattern.is_match("Raised Beds") && !pattern.is_match("-x"));
        assert_eq!(branch_schema()["json_schema"]["schema"]["properties"]["summary"], *summary);
    }

    #[test]
    fn directives_reach_system_prompt() {
        assert!(summary_system("Use British spelling.")
            .contains("Operator directives (apply them):\nUse British spelling."));
        assert!(!summary_system("  ").contains("Operator directives"));
        assert!(summary_system("").contains("240 characters"));
    }
}
