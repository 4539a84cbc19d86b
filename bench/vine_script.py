"""Write the stdio bench script (JSON list of MCP calls) for a forest: the
same targets bench_vine picks (largest-outline leaf, first branch, a dataset).
usage: vine_script.py FOREST ROUNDS > script.json"""
import json, sys, sqlite3, os
root, rounds = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(os.path.join(root, "_derived/catalog.db"))
leaf, outline = db.execute("SELECT id, outline FROM nodes WHERE kind != 'branch' AND outline != '[]' ORDER BY length(outline) DESC LIMIT 1").fetchone()
branch = db.execute("SELECT id FROM nodes WHERE kind = 'branch' AND id != '_index' LIMIT 1").fetchone()[0]
ds = db.execute("SELECT id FROM nodes WHERE type = 'dataset' LIMIT 1").fetchone()
word = db.execute("SELECT title FROM nodes WHERE id = ?", (leaf,)).fetchone()[0].split()[-1].lower()
calls = [("locate", {"query": word + " report sales", "k": 5}), ("look", {"id": leaf}), ("look", {"id": branch}),
         ("move", {"id": leaf, "direction": "both"}), ("pick", {"id": leaf}),
         ("pick", {"id": leaf, "section": json.loads(outline)[0]}), ("scan", {"parent_id": branch}),
         ("sniff", {"terms": [word], "scope": branch})]
if ds:
    calls.append(("query", {"id": ds[0], "sql": "SELECT COUNT(*) FROM sqlite_master"}))
print(json.dumps([{"tool": t, "args": a} for t, a in calls for _ in range(rounds)]))
