//! The token estimator (dialect §2.1): code points / 4, rounded up.

/// `0` for empty text, else `max(1, ceil(chars/4))` counting Unicode code points.
pub fn estimate_tokens(text: &str) -> usize {
    let n = text.chars().count();
    if n == 0 {
        0
    } else {
        n.div_ceil(4).max(1)
    }
}

/// First `max_tokens*4` chars, right-trimmed, plus `…` (only when cut).
pub fn truncate_tokens(text: &str, max_tokens: usize) -> String {
    let limit = max_tokens * 4;
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let cut: String = text.chars().take(limit).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn counts_code_points() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("ãéíõü"), 2);
        assert_eq!(estimate_tokens(&"日".repeat(240)), 60);
    }
}
