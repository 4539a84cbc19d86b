//! Branch scent without an LLM (issue 26): each batch writes, for every
//! branch it touches, a summary of what lives there (a README-like child's
//! first sentence, the children's themes and names; a bucket's name range
//! and members), propagated verbatim into the parent's entry line; a hand
//! edit is never overwritten. The reference engine reads the result.

use super::split::{assert_navigable, reference_reads_it};
use super::*;
use forest_model::node::Node;

fn node(root: &Path, id: &str) -> Node {
    Node::parse(&fs::read_to_string(root.join(format!("{id}.md"))).unwrap()).unwrap()
}

fn summary(root: &Path, id: &str) -> String {
    node(root, id).get_str("summary").unwrap_or_default()
}

/// The line naming `child` in `parent`'s body.
fn entry(root: &Path, parent: &str, child: &str) -> String {
    let n = node(root, parent);
    n.body.lines().find(|l| l.starts_with(&format!("- [[{child}]]"))).unwrap_or_default().to_string()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

#[test]
fn adopted_branches_say_what_they_hold_and_hand_edits_stay() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    write(
        &src,
        "tools/bash/README",
        "Bash is the GNU Project's shell, the Bourne Again SHell.\n\nIt reads readline init files.\n",
    );
    write(&src, "tools/bash/copyright", "Copyright (C) 1987-2022 Free Software Foundation, Inc.\n");
    write(&src, "tools/bash/inputrc.md", "# Readline init file\n\nSample readline key bindings for the shell.\n");
    write(&src, "tools/bc/README.md", "# bc\n\nAn arbitrary precision calculator language.\n");
    write(&src, "tools/bc/copyright", "Copyright (C) Free Software Foundation.\n");
    for i in 0..170 {
        let w = ["alpha", "beta", "gamma"][i % 3];
        write(
            &src,
            &format!("reports/{w}-{i:03}.md"),
            &format!("# {w} report {i}\n\nQuarterly {w} revenue report for the northern region.\n"),
        );
    }
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));

    let bash = summary(&root, "tools/bash/_index");
    assert!(bash.starts_with("Bash is the GNU Project's shell, the Bourne Again SHell."), "{bash}");
    assert!(bash.to_lowercase().contains("readline"), "{bash}");
    let bc = summary(&root, "tools/bc/_index");
    assert!(bc.contains("arbitrary precision calculator"), "{bc}");
    let tools = summary(&root, "tools/_index");
    assert!(tools.contains("bash") && tools.contains("bc"), "{tools}");
    for s in [&bash, &bc, &tools] {
        assert!(!s.contains("adopted from source folder") && !s.starts_with("Region '"), "{s}");
        assert!(forest_model::tokens::estimate_tokens(s) <= 60, "{s}");
    }
    // Verbatim in the parent's entry line and in the branch's blockquote.
    assert!(entry(&root, "tools/_index", "tools/bash/_index").contains(&bash), "{bash}");
    assert!(node(&root, "tools/bash/_index").body.contains(&format!("> {bash}")));
    // Buckets: their name range, their members, their themes.
    let reports = node(&root, "reports/_index");
    let bucket = reports.body.lines().find_map(|l| l.strip_prefix("- [[")?.split("]]").next()).unwrap().to_string();
    let b = summary(&root, &bucket);
    assert!(b.starts_with("Names alpha-"), "{b}");
    // Themes come from the members' tags and title words (the leaves' own
    // derived tags, e.g. `alpha-report`, may come first).
    let themes = b.split("Themes: ").nth(1).unwrap_or_default();
    assert!(themes.contains("alpha") && themes.contains("report"), "{b}");
    assert!(b.contains("Holds: alpha report 0, "), "{b}");
    let r = summary(&root, "reports/_index");
    assert!(r.contains("Themes: ") && r.contains("report"), "{r}");
    assert_navigable(&root, "", 175);

    // A hand-written summary survives a sync that touches the branch.
    let p = root.join("tools/bc/_index.md");
    let text = fs::read_to_string(&p).unwrap().replace(&bc, "The bc calculator, as our team uses it.");
    fs::write(&p, text).unwrap();
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "hand: bc summary"]);
    write(&src, "tools/bc/NEWS", "bc 1.07: new math library functions.\n");
    write(&src, "tools/bash/NEWS", "bash 5.2: new shell options.\n");
    let o = run(&["sync", "--forest", &f(&root)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(summary(&root, "tools/bc/_index"), "The bc calculator, as our team uses it.");
    let bash2 = summary(&root, "tools/bash/_index");
    assert!(bash2.starts_with("Bash is the GNU Project's shell"), "{bash2}");
    assert!(entry(&root, "tools/_index", "tools/bash/_index").contains(&bash2), "{bash2}");
    let o = run(&["validate", "--forest", &f(&root)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    fsck(&root);
    reference_reads_it(&root, "adopted_branches_say_what_they_hold_and_hand_edits_stay");
}
