"""Compare forests adopted from the same commit (bench/git-real.sh).

    python3 bench/git_compare.py CHECKOUT_FOREST GIT_FOREST [GIT_FOREST...]

Every forest must hold the same node ids, and every node the same
frontmatter (without the fields that name where or how the source was
read: origin, source_mtime, source_etag, git_*) and the same body. The git
forests must also agree on every leaf's git fields (blob, commit, author,
date), and every leaf of theirs must carry them. Exits 1 on a difference.
"""

import pathlib
import sys

import yaml

LOCATION = {"origin", "source_mtime", "source_etag"}


def nodes(root):
    out = {}
    base = pathlib.Path(root)
    for p in base.rglob("*.md"):
        rel = p.relative_to(base).as_posix()
        if rel.startswith(("_meta/", "_derived/", ".git/")):
            continue
        text = p.read_text()
        front, body = {}, text
        if text.startswith("---\n"):
            head, _, body = text[4:].partition("\n---\n")
            front = yaml.safe_load(head) or {}
        out[rel[:-3]] = (front, body)
    return out


def kept(front):
    return {k: v for k, v in front.items() if k not in LOCATION and not k.startswith("git_")}


def main():
    ref_root, *git_roots = sys.argv[1:]
    ref = nodes(ref_root)
    facts = []
    bad = 0
    for root in git_roots:
        got = nodes(root)
        if sorted(got) != sorted(ref):
            only_ref = sorted(set(ref) - set(got))[:5]
            only_got = sorted(set(got) - set(ref))[:5]
            print(f"DIFFER  {root}: ids (checkout only {only_ref}, git only {only_got})")
            bad += 1
            continue
        diff = [i for i in ref if (kept(ref[i][0]), ref[i][1]) != (kept(got[i][0]), got[i][1])]
        leaves = {i: f for i, (f, _) in got.items() if "source_path" in f}
        missing = [i for i, f in leaves.items() if not all(f.get(k) for k in ("git_blob", "git_commit", "git_author"))]
        if diff or missing:
            print(f"DIFFER  {root}: {len(diff)} nodes differ (e.g. {diff[:3]}), {len(missing)} leaves lack git fields")
            bad += 1
        else:
            print(f"same    {root}: {len(got)} nodes (ids, scent, bodies) as the checkout; {len(leaves)} leaves with git fields")
        keys = ("git_blob", "git_commit", "git_author", "git_date")
        facts.append({i: tuple(str(f.get(k)) for k in keys) for i, f in leaves.items()})
    if len(facts) > 1 and any(f != facts[0] for f in facts[1:]):
        print("DIFFER  git fields between the git forests")
        bad += 1
    elif len(facts) > 1:
        print(f"same    git fields in {len(facts)} git forests")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
