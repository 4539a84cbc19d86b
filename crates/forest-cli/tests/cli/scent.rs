//! Leaf scent from the content (issue 26): an adopt without an LLM gives a
//! generic file a title that names what it belongs to, tags from its
//! keyphrases, an extractive summary with identifiers intact and aliases
//! for the acronyms the text defines; `validate` stays clean.

use super::*;
use forest_model::node::Node;

fn node(root: &Path, id: &str) -> Node {
    Node::parse(&fs::read_to_string(root.join(format!("{id}.md"))).unwrap()).unwrap()
}

#[test]
fn adopt_derives_titles_tags_and_summaries_from_the_content() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    fs::create_dir_all(src.join("cpio")).unwrap();
    fs::create_dir_all(src.join("libpam")).unwrap();
    fs::write(
        src.join("cpio/README"),
        "This is the GNU cpio package\n============================\n\n\
         GNU cpio copies files into or out of a cpio or tar archive. Set LC_ALL=en_US.UTF-8 for *.tar.gz \
         names; copy_in_file and __init__ keep snake_case in C++.\n\n\
         Copyright (C) 2023 Free Software Foundation, Inc. This program is free software.\n",
    )
    .unwrap();
    fs::write(
        src.join("libpam/copyright"),
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
         Upstream-Name: Linux-PAM\n\
         Comment: Pluggable Authentication Modules (PAM) let the administrator choose how applications \
         authenticate users, with modules for passwords, tokens and access rules stacked per service.\n\n\
         Files: *\nCopyright: 1996 Andrew Morgan\nLicense: GPL-2+\n",
    )
    .unwrap();
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let id_of = |rel: &str| -> String {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ids: Vec<String> =
            v["sources"][0]["planted"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
        ids.into_iter().find(|id| id.starts_with(rel)).unwrap_or_else(|| panic!("{rel} not planted"))
    };
    let readme = node(&root, &id_of("cpio/readme"));
    assert_eq!(readme.get_str("title").unwrap(), "This is the GNU cpio package");
    let summary = readme.get_str("summary").unwrap();
    assert!(summary.starts_with("GNU cpio copies files"), "{summary}");
    for id in ["LC_ALL", "en_US.UTF-8", "*.tar.gz", "copy_in_file", "__init__", "snake_case", "C++"] {
        assert!(summary.contains(id), "{id} lost in {summary:?}");
    }
    assert!(!summary.contains("free software"), "{summary}");
    let tags = readme.get_list("tags");
    assert!((2..=5).contains(&tags.len()), "{tags:?}");
    assert!(tags.iter().any(|t| t.contains("cpio") || t.contains("archive")), "{tags:?}");

    let copyright = node(&root, &id_of("libpam/copyright"));
    assert_eq!(copyright.get_str("title").unwrap(), "libpam: copyright of Linux-PAM");
    // a DEP-5 file: what it covers (its Upstream-Name), its licences, its Comment
    let summary = copyright.get_str("summary").unwrap();
    assert!(
        summary.starts_with(
            "Linux-PAM: copyright holders and licence terms (GPL-2+). Pluggable Authentication Modules (PAM) let"
        ),
        "{summary}"
    );
    assert!(copyright.get_list("aliases").contains(&"PAM".to_string()), "{:?}", copyright.get_list("aliases"));
    assert!(copyright.get_list("tags").len() >= 2, "{:?}", copyright.get_list("tags"));

    let v = run(&["validate", "--forest", &f(&root)]);
    assert_eq!(code(&v), 0, "{}{}", String::from_utf8_lossy(&v.stdout), String::from_utf8_lossy(&v.stderr));
}
