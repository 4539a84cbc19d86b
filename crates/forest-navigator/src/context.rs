//! Keeping a hunt's conversation inside the model's context window.
//!
//! A small model served with a 4,096-token context (the test setup's
//! SmolLM2 on llama.cpp) runs out of room after ten or so turns of a walk:
//! the server answers 400 and the hunt would end as `llm_error` with
//! nothing to show. The navigator learns the window from that refusal
//! ([`overflow`]: llama.cpp's `exceed_context_size_error` with `n_ctx` and
//! `n_prompt_tokens`, or OpenAI's "maximum context length is N tokens ...
//! resulted in M tokens"), then keeps every later prompt under it by
//! leaving out the oldest turns ([`fit`]): the system prompt and the opening
//! (index and question) stay, the opening says how many turns were left out
//! and which calls they made, and the newest turns stay whole.

use serde_json::Value;

use crate::protocol::estimate_str;

/// What a context refusal says (either number may be missing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// The model's context window in tokens.
    pub n_ctx: Option<usize>,
    /// The refused prompt's size in the server's tokens.
    pub n_prompt: Option<usize>,
}

/// Whether an LLM error is a context-window refusal, and its numbers.
pub fn overflow(err: &str) -> Option<Overflow> {
    let low = err.to_ascii_lowercase();
    let is = low.contains("exceed_context_size")
        || low.contains("exceeds the available context size")
        || low.contains("context_length_exceeded")
        || low.contains("maximum context length");
    if !is {
        return None;
    }
    let n_ctx = number_after(&low, "\"n_ctx\":").or_else(|| number_after(&low, "maximum context length is "));
    let n_prompt =
        number_after(&low, "\"n_prompt_tokens\":").or_else(|| number_after(&low, "resulted in ")).or_else(|| {
            // llama.cpp's message: "request (4110 tokens) exceeds ..."
            number_after(&low, "request (")
        });
    Some(Overflow { n_ctx, n_prompt })
}

fn number_after(s: &str, key: &str) -> Option<usize> {
    let at = s.find(key)? + key.len();
    let digits: String = s[at..].trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The prompt budget in the navigator's own token estimate
/// ([`estimate_str`]) after a refusal of a prompt it estimated at
/// `estimated`: the window minus room for the answer (a quarter of it, at
/// most 512 tokens), converted by the ratio of the server's count to ours,
/// with 10% to spare. `None` when the refusal names no window.
pub fn budget_after(o: Overflow, estimated: usize) -> Option<usize> {
    let n_ctx = o.n_ctx?;
    let ratio = match o.n_prompt {
        Some(n) if estimated > 0 => (n as f64 / estimated as f64).max(1.0),
        _ => 1.5,
    };
    let room = n_ctx.saturating_sub((n_ctx / 4).min(512));
    Some(((room as f64 / ratio) * 0.9) as usize)
}

/// Estimated tokens of a message list.
pub fn estimate(messages: &[Value]) -> usize {
    messages.iter().map(|m| estimate_str(m["content"].as_str().unwrap_or(""))).sum()
}

/// `messages` (system, opening, then assistant/user turns) cut to `limit`
/// estimated tokens: the oldest turns leave in assistant+user pairs (the
/// roles keep alternating), the opening becomes `opening` plus a note of
/// how many turns left and `calls` (what they did), and a last message that
/// alone is too large is clipped. Returns the kept messages and how many
/// turns were left out in all (`dropped_before` + this cut).
pub fn fit(messages: &[Value], limit: usize, opening: &str, calls: &str, dropped_before: usize) -> (Vec<Value>, usize) {
    if estimate(messages) <= limit || messages.len() < 3 {
        return (messages.to_vec(), dropped_before);
    }
    let head = &messages[..2];
    let mut tail: Vec<Value> = messages[2..].to_vec();
    let mut dropped = dropped_before;
    let note = |n: usize| {
        format!(
            "{opening}\n\n[{n} earlier turn(s) were left out to fit the model's context. Calls made so far: {calls}]"
        )
    };
    loop {
        let mut opening_msg = head[1].clone();
        opening_msg["content"] = Value::String(note(dropped));
        let total = estimate(&head[..1]) + estimate(std::slice::from_ref(&opening_msg)) + estimate(&tail);
        if total <= limit || tail.len() <= 2 {
            let mut out = vec![head[0].clone(), opening_msg];
            out.extend(tail);
            if estimate(&out) > limit {
                clip_last(&mut out, limit);
            }
            return (out, dropped);
        }
        tail.drain(..2);
        dropped += 1;
    }
}

/// Clip the last message's content so that the list fits `limit` (at least
/// 200 characters of it stay).
fn clip_last(out: &mut [Value], limit: usize) {
    let without: usize = estimate(&out[..out.len() - 1]);
    let Some(last) = out.last_mut() else { return };
    let text = last["content"].as_str().unwrap_or("").to_string();
    let keep_chars = (limit.saturating_sub(without) * 4).max(200);
    if text.chars().count() > keep_chars {
        let cut: String = text.chars().take(keep_chars).collect();
        last["content"] = Value::String(format!("{cut} …[clipped to fit the model's context]"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::msg;

    #[test]
    fn reads_llama_cpp_and_openai_refusals() {
        let llama = r#"LLM endpoint 400: {"error":{"code":400,"message":"request (4110 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4110,"n_ctx":4096}}"#;
        assert_eq!(overflow(llama), Some(Overflow { n_ctx: Some(4096), n_prompt: Some(4110) }));
        let openai =
            "400: This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.";
        assert_eq!(overflow(openai), Some(Overflow { n_ctx: Some(8192), n_prompt: Some(9001) }));
        assert_eq!(overflow("LLM endpoint 500: internal error"), None);
        assert_eq!(overflow("connection refused"), None);
    }

    #[test]
    fn the_budget_leaves_room_for_the_answer_in_our_units() {
        // The server counted 4110 where we estimated 2055: ratio 2.
        let b = budget_after(Overflow { n_ctx: Some(4096), n_prompt: Some(4110) }, 2055).unwrap();
        assert_eq!(b, ((4096.0 - 512.0) / 2.0 * 0.9) as usize);
        assert_eq!(budget_after(Overflow { n_ctx: None, n_prompt: Some(10) }, 5), None);
    }

    #[test]
    fn fitting_drops_the_oldest_turn_pairs_and_keeps_system_opening_and_the_newest() {
        let mut m = vec![msg("system", "rules"), msg("user", "INDEX and QUESTION")];
        for i in 0..10 {
            m.push(msg("assistant", &format!("call {i} {}", "x".repeat(200))));
            m.push(msg("user", &format!("result {i} {}", "y".repeat(200))));
        }
        let before = estimate(&m);
        let (out, dropped) = fit(&m, before / 3, "INDEX and QUESTION", "look(a), pick(b)", 0);
        assert!(estimate(&out) <= before / 3, "{} > {}", estimate(&out), before / 3);
        assert!(dropped >= 6, "{dropped}");
        assert_eq!(out.len(), 2 + 2 * (10 - dropped));
        assert_eq!(out[0]["content"], "rules");
        let opening = out[1]["content"].as_str().unwrap();
        assert!(opening.starts_with("INDEX and QUESTION") && opening.contains(&format!("{dropped} earlier turn(s)")));
        assert!(opening.contains("look(a), pick(b)"));
        assert!(out.last().unwrap()["content"].as_str().unwrap().starts_with("result 9"));
        let roles: Vec<&str> = out.iter().map(|v| v["role"].as_str().unwrap()).collect();
        assert!(roles[2..].chunks(2).all(|p| p == ["assistant", "user"]), "{roles:?}");
        // Within the limit nothing changes.
        let (same, d) = fit(&m, before, "INDEX and QUESTION", "", 0);
        assert_eq!((same.len(), d), (m.len(), 0));
    }

    #[test]
    fn a_single_huge_observation_is_clipped() {
        let m =
            vec![msg("system", "rules"), msg("user", "Q"), msg("assistant", "call"), msg("user", &"z".repeat(40_000))];
        let (out, _) = fit(&m, 1_000, "Q", "", 0);
        assert!(estimate(&out) <= 1_100, "{}", estimate(&out));
        assert!(out[3]["content"].as_str().unwrap().ends_with("[clipped to fit the model's context]"));
    }
}
