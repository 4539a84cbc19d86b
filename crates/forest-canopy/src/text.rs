//! The text a node's vector embeds: its scent, never its body.

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
}
