//! The text a node's vector embeds: its scent; for the fast encoder, the
//! body's lead after it. The lead was measured with the fast encoder only
//! (R@5 on the report halves: `py` 0.560 to 0.680, `usd` 0.694 to 0.688,
//! held-out `man` 0.923 to 0.930; docs/decisions/locate-one-engine.md), so
//! the full model embeds the scent alone, as the reference does.

use crate::encoder::Encoder;

/// What `encoder` embeds of a node: [`scent_text`], then (fast encoder)
/// the body's `lead` when there is one.
pub fn node_text(
    encoder: Encoder,
    title: &str,
    summary: &str,
    aliases: &[String],
    tags: &[String],
    lead: &str,
) -> String {
    let mut s = scent_text(title, summary, aliases, tags);
    if encoder == Encoder::Fast && !lead.is_empty() {
        s.push(' ');
        s.push_str(lead);
    }
    s
}

/// `"<title>. <summary>"` as the reference embeds it, then the aliases and
/// tags the issue asks for (the words a question may use instead of the
/// title's): `"<title>. <summary> Also: a, b. Tags: x, y."`.
pub fn scent_text(title: &str, summary: &str, aliases: &[String], tags: &[String]) -> String {
    let mut s = format!("{}. {}", title.trim(), summary.trim());
    if !aliases.is_empty() {
        s.push_str(" Also: ");
        s.push_str(&aliases.join(", "));
        s.push('.');
    }
    if !tags.is_empty() {
        s.push_str(" Tags: ");
        s.push_str(&tags.join(", "));
        s.push('.');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_summary_then_aliases_and_tags() {
        assert_eq!(scent_text("PAM", "Login modules.", &[], &[]), "PAM. Login modules.");
        let s = scent_text(" PAM ", "Login modules.", &["libpam".into()], &["auth".into(), "security".into()]);
        assert_eq!(s, "PAM. Login modules. Also: libpam. Tags: auth, security.");
    }

    #[test]
    fn the_fast_encoder_reads_the_lead_too() {
        let fast = node_text(Encoder::Fast, "PAM", "Login modules.", &[], &[], "Pluggable authentication");
        assert_eq!(fast, "PAM. Login modules. Pluggable authentication");
        assert_eq!(node_text(Encoder::Full, "PAM", "Login modules.", &[], &[], "Pluggable"), "PAM. Login modules.");
        assert_eq!(node_text(Encoder::Fast, "PAM", "Login modules.", &[], &[], ""), "PAM. Login modules.");
    }
}
