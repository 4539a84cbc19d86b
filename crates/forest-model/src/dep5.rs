//! Machine-readable Debian copyright files (DEP-5,
//! <https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/>):
//! one per package folder of a Debian system's `/usr/share/doc`. Their
//! prose is licence text; what they say about the package is in their
//! header fields: `Upstream-Name` (the name its authors use, often not the
//! folder's: "GnuPG - The GNU Privacy Guard" for `gpg-agent`), `Source`,
//! `Comment`, and the licences' short names.

use once_cell::sync::Lazy;
use regex::Regex;

use crate::extract::{clean_inline, lead, SCAN_BYTES};
use crate::sentences::split_sentences;

/// Names that are a template's placeholder, not a name.
const NOT_A_NAME: [&str; 7] = ["package", "software", "unknown", "none", "n/a", "upstream", "name"];

/// Path segments of a `Source` URL that do not name the project.
const NOT_A_PROJECT: [&str; 9] =
    ["download", "downloads", "files", "releases", "projects", "project", "pub", "src", "git"];

/// The header of one file: field values with their continuation lines.
#[derive(Default)]
struct Header {
    name: Option<String>,
    source: Option<String>,
    comment: Option<String>,
    licences: Vec<String>,
    format: bool,
    files: bool,
}

fn parse(text: &str) -> Header {
    let mut h = Header::default();
    let mut open: Option<(String, String)> = None;
    let close = |open: &mut Option<(String, String)>, h: &mut Header| {
        let Some((key, value)) = open.take() else { return };
        let value = value.trim().to_string();
        match key.as_str() {
            "upstream-name" if h.name.is_none() && !value.is_empty() => h.name = Some(value),
            "source" if h.source.is_none() => h.source = value.split_whitespace().next().map(str::to_string),
            "comment" if h.comment.is_none() && !value.is_empty() => h.comment = Some(value),
            "license" => {
                // the short name only (its text follows on indented lines)
                let short = value.lines().next().unwrap_or("").trim().to_string();
                let plain = short.chars().all(|c| c.is_ascii_alphanumeric() || " .+-,()".contains(c));
                if !short.is_empty() && plain && h.licences.len() < 4 && !h.licences.contains(&short) {
                    h.licences.push(short);
                }
            }
            _ => {}
        }
    };
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = open.as_mut() {
                let l = line.trim();
                // " ." separates paragraphs of a value: the first one is enough
                if l == "." {
                    close(&mut open, &mut h);
                } else {
                    value.push('\n');
                    value.push_str(l);
                }
            }
            continue;
        }
        close(&mut open, &mut h);
        let Some((key, value)) = line.split_once(':') else { continue };
        let key = key.trim().to_ascii_lowercase();
        if key.contains(' ') {
            continue;
        }
        h.format |= key == "format" && value.contains("copyright-format");
        h.files |= key == "files";
        open = Some((key, value.to_string()));
    }
    close(&mut open, &mut h);
    h
}

/// The project a `Source` URL names: its last path segment that is not
/// `download`, `files`... (`https://sourceforge.net/projects/libtirpc/`
/// -> `libtirpc`).
fn project_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let mut parts = rest.split(['/', '?', '#']).filter(|p| !p.is_empty());
    parts.next(); // the host
    parts
        .rfind(|p| !NOT_A_PROJECT.contains(&p.to_ascii_lowercase().as_str()) && p.chars().any(char::is_alphabetic))
        .map(str::to_string)
}

/// A line any DEP-5 header has (`Format: ...copyright-format...` or a
/// `Files:` stanza): every leaf of an adopt is asked, most in one scan.
static HINT: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?im)^files[ \t]*:|copyright-format").expect("static regex"));

/// The header of `markdown`'s lead, when it may be a DEP-5 file.
fn header(markdown: &str) -> Option<Header> {
    let text = lead(markdown, SCAN_BYTES);
    HINT.is_match(text).then(|| parse(text))
}

/// What a DEP-5 header says it covers (`None` for another body).
fn name_of(h: &Header) -> Option<String> {
    if !h.format && !h.files {
        return None;
    }
    let named = h.name.clone().filter(|n| !NOT_A_NAME.contains(&n.to_ascii_lowercase().as_str()));
    Some(clean_inline(&named.or_else(|| h.source.as_deref().and_then(project_of))?))
}

/// The name a DEP-5 copyright file says it covers: its `Upstream-Name`,
/// else the project of its `Source` URL; `None` for any other body.
pub fn name(markdown: &str) -> Option<String> {
    name_of(&header(markdown)?)
}

/// The summary of a DEP-5 copyright file: what it covers, its licences
/// and the first sentence of its `Comment`; `None` for any other body
/// (or one whose header names nothing).
pub fn summary(markdown: &str) -> Option<String> {
    let h = header(markdown)?;
    let name = name_of(&h)?;
    let mut out = if h.licences.is_empty() {
        format!("{name}: copyright holders and licence terms.")
    } else {
        format!("{name}: copyright holders and licence terms ({}).", h.licences.join(", "))
    };
    let comment = h.comment.map(|c| clean_inline(&c)).unwrap_or_default();
    if let Some(first) = split_sentences(&comment).into_iter().next().filter(|c| c.split_whitespace().count() >= 4) {
        out = format!("{out} {first}");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::blocks;
    use crate::scent::derive_summary;

    #[test]
    fn a_debian_copyright_file_is_summarised_by_what_it_covers() {
        // The head of Debian 12's /usr/share/doc/gpg-agent/copyright (DEP-5).
        let md = "# gpg-agent: copyright\n\n\
                  Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
                  Upstream-Name: GnuPG - The GNU Privacy Guard (modern version)\n\
                  Upstream-Contact: GnuPG development mailing list <gnupg-devel@gnupg.org>\n\
                  Source: https://gnupg.org/download/\n\nFiles: *\n\
                  Copyright: 1992, 1995-2020, Free Software Foundation, Inc\nLicense: GPL-3+\n\n\
                  Files: agent/command.c\n agent/command-ssh.c\n agent/gpg-agent.c\n\
                  Copyright: 1998-2007, 2009, 2012, Free Software Foundation, Inc\n  2013, Werner Koch\n\
                  License: GPL-3+\n\nFiles: common/localename.c\nCopyright: 1985 Free Software Foundation, Inc.\n\
                  License: LGPL-2.1+\n\nLicense: GPL-3+\n This program is free software; you can redistribute it\n \
                  and/or modify it under the terms of the GNU General Public License.\n";
        assert_eq!(
            derive_summary(md, "gpg-agent: copyright"),
            "GnuPG - The GNU Privacy Guard (modern version): copyright holders and licence terms (GPL-3+, LGPL-2.1+)."
        );
        // field values over indented lines are not prose
        let texts: Vec<String> = blocks(md).into_iter().map(|b| b.text).collect();
        assert_eq!(texts, ["gpg-agent: copyright"], "{texts:?}");
        // a body that only looks like fields is summarised as prose
        let md = "# notes\n\nLicense: MIT\n\nThe tool converts archives between formats quickly.\n";
        assert!(summary(md).is_none());
        assert_eq!(derive_summary(md, "notes"), "The tool converts archives between formats quickly.");
    }

    #[test]
    fn placeholders_continuations_and_machine_licence_names() {
        // Debian 12's libtirpc3/copyright names itself "package"; libgmp10's
        // Comment goes on over indented lines.
        let tirpc = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
                     Upstream-Name: package\nSource: https://sourceforge.net/projects/libtirpc/\n\
                     Comment: The original upstream tarball included a symlink to\n \
                     /usr/share/automake-1.16/INSTALL. This source re-pack removes the symlink.\n\n\
                     Files: *\nCopyright: 2009 Red Hat\nLicense: BSD-3-Clause\n\n\
                     Files: x.c\nCopyright: 2010 Sun\nLicense: __AUTO_PERMISSIVE__\n";
        assert_eq!(
            summary(tirpc).unwrap(),
            "libtirpc: copyright holders and licence terms (BSD-3-Clause). The original upstream tarball \
             included a symlink to /usr/share/automake-1.16/INSTALL."
        );
        let gmp = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
                   Upstream-Name: GMP\nSource: http://gmplib.org/\n\
                   Comment: This gmp package was built for Debian by\n  Steve M. Robbins\n .\n \
                   The documentation is released under the GNU Free Documentation License.\n\
                   Files-Excluded: doc\n\nFiles: *\nLicense: GPL-2+ or LGPL-3+\n";
        assert_eq!(
            summary(gmp).unwrap(),
            "GMP: copyright holders and licence terms (GPL-2+ or LGPL-3+). \
             This gmp package was built for Debian by Steve M. Robbins"
        );
        assert_eq!(project_of("https://gnupg.org/download/").as_deref(), None);
        assert_eq!(project_of("https://github.com/libexpat/libexpat/releases").as_deref(), Some("libexpat"));
        assert!(summary("Format: something else\nUpstream-Name: x\n").is_none());
    }
}
