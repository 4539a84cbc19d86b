//! Hostile containers: each is refused with one error naming the rule, and
//! neither the target nor any staging directory is left behind.

use super::*;
use std::io::Write;
use zip::write::SimpleFileOptions;

/// A valid bundle of a one-commit forest.
fn bundle_bytes(dir: &Path) -> Vec<u8> {
    let root = dir.join("src-forest");
    fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(&root, "_index.md", b"---\nid: _index\ntitle: T\n---\n# T\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "init"]);
    let b = dir.join("b.bundle");
    git(&root, &["bundle", "create", "-q", b.to_str().unwrap(), "--all"]);
    fs::read(b).unwrap()
}

/// A container with the given members (name, bytes).
fn container(path: &Path, members: &[(&str, &[u8])]) {
    let mut zw = zip::ZipWriter::new(fs::File::create(path).unwrap());
    for (name, bytes) in members {
        zw.start_file(*name, SimpleFileOptions::default()).unwrap();
        zw.write_all(bytes).unwrap();
    }
    zw.finish().unwrap();
}

/// Restore into `<dir>/dest` expecting an error; asserts nothing landed.
fn refused(dir: &Path, snap: &Path, opts: &RestoreOptions) -> SnapshotError {
    let before = leftovers(dir, &[]);
    let dest = dir.join("dest");
    let e = restore_snapshot(snap, &dest, opts).unwrap_err();
    assert!(!dest.exists(), "nothing lands on refusal ({e})");
    assert_eq!(leftovers(dir, &[]), before, "no staging directory left ({e})");
    e
}

fn refused_member(members: &[(&str, &[u8])]) -> (String, &'static str, String) {
    let d = tempfile::tempdir().unwrap();
    let bundle = bundle_bytes(d.path());
    let snap = d.path().join("evil.forest");
    let mut all: Vec<(&str, &[u8])> = vec![("README.txt", b"hi"), ("forest.bundle", &bundle)];
    all.extend_from_slice(members);
    container(&snap, &all);
    let e = refused(d.path(), &snap, &RestoreOptions::default());
    let msg = e.to_string();
    match e {
        SnapshotError::RefusedMember { name, reason } => (name, reason, msg),
        e => panic!("expected a refused member, got {e}"),
    }
}

#[test]
fn zip_slip_is_refused() {
    let (name, reason, msg) = refused_member(&[("payloads/ok.db", b"x"), ("../x", b"evil")]);
    assert_eq!((name.as_str(), reason), ("../x", "outside payloads/"));
    assert!(msg.starts_with("E_REFUSED_MEMBER: refused snapshot member \"../x\""), "{msg}");
    let (name, reason, _) = refused_member(&[("payloads/a/../../../x.db", b"evil")]);
    assert_eq!((name.as_str(), reason), ("payloads/a/../../../x.db", "parent-directory component (zip slip)"));
}

#[test]
fn payloads_into_dot_git_are_refused() {
    let (name, reason, _) = refused_member(&[("payloads/.git/config", b"[core]\n\tfsmonitor = evil\n")]);
    assert_eq!(
        (name.as_str(), reason),
        ("payloads/.git/config", "hidden path component (.git and dotfiles are never payloads)")
    );
    let (_, reason, _) = refused_member(&[("payloads/.git/hooks/post-checkout.db", b"#!/bin/sh\n")]);
    assert_eq!(reason, "hidden path component (.git and dotfiles are never payloads)");
}

#[test]
fn absolute_paths_are_refused() {
    let (name, reason, _) = refused_member(&[("/tmp/forest-evil.db", b"evil")]);
    assert_eq!((name.as_str(), reason), ("/tmp/forest-evil.db", "absolute path"));
    let (_, reason, _) = refused_member(&[("payloads//tmp/forest-evil.db", b"evil")]);
    assert_eq!(reason, "absolute path");
}

#[test]
fn non_payload_members_are_refused() {
    let (_, reason, _) = refused_member(&[("payloads/notes.md", b"# injected node")]);
    assert_eq!(reason, "not a payload (*.db, *.sqlite or a file under _assets/)");
    let (_, reason, _) = refused_member(&[("extra.txt", b"x")]);
    assert_eq!(reason, "outside payloads/");
}

#[test]
fn symlink_members_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let bundle = bundle_bytes(d.path());
    let snap = d.path().join("link.forest");
    let mut zw = zip::ZipWriter::new(fs::File::create(&snap).unwrap());
    zw.start_file("forest.bundle", SimpleFileOptions::default()).unwrap();
    zw.write_all(&bundle).unwrap();
    zw.add_symlink("payloads/_assets/passwd.db", "/etc/passwd", SimpleFileOptions::default()).unwrap();
    zw.finish().unwrap();
    let e = refused(d.path(), &snap, &RestoreOptions::default());
    assert!(matches!(e, SnapshotError::RefusedMember { reason: "symlink member", .. }), "{e}");
}

#[test]
fn duplicate_names_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let bundle = bundle_bytes(d.path());
    let snap = d.path().join("dup.forest");
    container(&snap, &[("forest.bundle", &bundle), ("payloads/a.db", b"one"), ("payloads/b.db", b"two")]);
    // Rename b.db to a.db in its local and central headers (same length).
    let mut bytes = fs::read(&snap).unwrap();
    let (from, to) = (b"payloads/b.db", b"payloads/a.db");
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
        }
        i += 1;
    }
    fs::write(&snap, bytes).unwrap();
    let e = refused(d.path(), &snap, &RestoreOptions::default());
    assert!(matches!(e, SnapshotError::DuplicateMembers), "{e}");
}

#[test]
fn over_ceiling_is_refused_by_declared_size() {
    let d = tempfile::tempdir().unwrap();
    let bundle = bundle_bytes(d.path());
    // A configurable ceiling, crossed by the running total of real sizes.
    let snap = d.path().join("big.forest");
    let kb = vec![7u8; 1000];
    container(&snap, &[("forest.bundle", &bundle), ("payloads/a.db", &kb), ("payloads/b/_assets/c.png", &kb)]);
    let e = refused(d.path(), &snap, &RestoreOptions { max_uncompressed: 1500 });
    assert!(matches!(e, SnapshotError::OverCeiling { declared: 2000, ceiling: 1500 }), "{e}");
    // The default 2 GiB ceiling, against a small file whose central directory
    // declares 3.75 GiB: refused before a byte is inflated.
    let forged = d.path().join("forged.forest");
    container(&forged, &[("forest.bundle", &bundle), ("payloads/huge.db", b"tiny")]);
    forge_declared_size(&forged, "payloads/huge.db", 0xF000_0000);
    let e = refused(d.path(), &forged, &RestoreOptions::default());
    assert!(matches!(e, SnapshotError::OverCeiling { declared: 0xF000_0000, .. }), "{e}");
    assert!(e.to_string().contains("uncompressed ceiling (4026531840 > 2147483648 bytes)"), "{e}");
}

/// Patch the uncompressed-size field of `name`'s central directory record.
fn forge_declared_size(path: &Path, name: &str, size: u32) {
    let mut bytes = fs::read(path).unwrap();
    let sig = [0x50, 0x4b, 0x01, 0x02];
    let mut i = 0;
    let mut patched = false;
    while i + 46 <= bytes.len() {
        if bytes[i..i + 4] == sig {
            let name_len = u16::from_le_bytes([bytes[i + 28], bytes[i + 29]]) as usize;
            if &bytes[i + 46..i + 46 + name_len] == name.as_bytes() {
                bytes[i + 24..i + 28].copy_from_slice(&size.to_le_bytes());
                patched = true;
            }
        }
        i += 1;
    }
    assert!(patched);
    fs::write(path, bytes).unwrap();
}

#[test]
fn truncated_container_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let root = forest(d.path());
    let snap = d.path().join("acme.forest");
    snapshot_of(&root, &snap);
    let bytes = fs::read(&snap).unwrap();
    for keep in [bytes.len() / 2, bytes.len() - 10] {
        let cut = d.path().join("cut.forest");
        fs::write(&cut, &bytes[..keep]).unwrap();
        let e = refused(d.path(), &cut, &RestoreOptions::default());
        assert!(matches!(e, SnapshotError::Damaged { .. }), "{e}");
        assert!(e.to_string().contains("truncated or damaged copy?"), "{e}");
    }
}

#[test]
fn damaged_member_bytes_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let root = forest(d.path());
    let snap = d.path().join("acme.forest");
    snapshot_of(&root, &snap);
    // Flip one byte inside the stored PNG's data: the CRC no longer holds.
    let mut bytes = fs::read(&snap).unwrap();
    let needle = b"not really a picture";
    let at = bytes.windows(needle.len()).position(|w| w == needle).unwrap();
    bytes[at] ^= 0x20;
    fs::write(&snap, bytes).unwrap();
    let e = refused(d.path(), &snap, &RestoreOptions::default());
    assert!(
        matches!(e, SnapshotError::DamagedMember { ref name, .. } if name == "payloads/media/_assets/photo.png"),
        "{e}"
    );
}

#[test]
fn not_a_zip_and_no_bundle_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let text = d.path().join("notes.forest");
    fs::write(&text, "just some text, not an archive\n").unwrap();
    let e = refused(d.path(), &text, &RestoreOptions::default());
    assert!(matches!(e, SnapshotError::NotASnapshot(_)), "{e}");
    let empty = d.path().join("empty.forest");
    fs::write(&empty, "").unwrap();
    assert!(matches!(refused(d.path(), &empty, &RestoreOptions::default()), SnapshotError::NotASnapshot(_)));
    let nob = d.path().join("nobundle.forest");
    container(&nob, &[("README.txt", b"hi"), ("payloads/a.db", b"x")]);
    assert!(matches!(refused(d.path(), &nob, &RestoreOptions::default()), SnapshotError::NoBundle));
    let missing = restore_snapshot(&d.path().join("absent.forest"), &d.path().join("x"), &RestoreOptions::default());
    assert!(matches!(missing, Err(SnapshotError::NotFound(_))));
}

#[test]
fn a_symlink_in_the_bundle_cannot_redirect_a_payload() {
    let d = tempfile::tempdir().unwrap();
    let outside = d.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let root = d.path().join("src-forest");
    fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(&root, "_index.md", b"---\nid: _index\ntitle: T\n---\n# T\n");
    std::os::unix::fs::symlink(&outside, root.join("data")).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "init with a symlinked folder"]);
    let b = d.path().join("b.bundle");
    git(&root, &["bundle", "create", "-q", b.to_str().unwrap(), "--all"]);
    let snap = d.path().join("evil.forest");
    container(&snap, &[("forest.bundle", &fs::read(&b).unwrap()), ("payloads/data/x.db", b"evil")]);
    let e = refused(d.path(), &snap, &RestoreOptions::default());
    assert!(
        matches!(e, SnapshotError::RefusedMember { reason: "would write through a symlink in the restored tree", .. }),
        "{e}"
    );
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0, "nothing written through the link");
}
