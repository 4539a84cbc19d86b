"""Time every web-console page (bench/console-load.sh): sign in once, find
a branch, a node and a query word through the pages themselves, then
request each page R times in turn; print p50/p95/max per page (ms)."""

import http.client
import re
import sys
import time
import urllib.parse


def main():
    base, token, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    host = urllib.parse.urlparse(base).netloc
    conn = http.client.HTTPConnection(host, timeout=120)

    def req(method, path, body=None, headers=None):
        h = {"Host": host, **(headers or {})}
        t = time.perf_counter()
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read().decode("utf-8", "replace")
        return r.status, dict(r.getheaders()), data, (time.perf_counter() - t) * 1000

    st, h, _, _ = req("POST", "/ui/login", "token=" + urllib.parse.quote(token),
                      {"Origin": base, "Content-Type": "application/x-www-form-urlencoded"})
    assert st == 303, st
    cookie = h["set-cookie"].split(";")[0]
    get = lambda p: req("GET", p, headers={"Cookie": cookie})
    unescape = lambda s: s.replace("&#x2f;", "/")
    st, _, master, _ = get("/ui/browse")
    assert st == 200, st
    branch = unescape(re.findall(r'href="(&#x2f;ui&#x2f;browse&#x2f;[^"]+)"', master)[0])
    st, _, page, _ = get(branch)
    node = unescape(re.findall(r'href="(&#x2f;ui&#x2f;node&#x2f;[^"]+)"', page)[-1])
    st, _, npage, _ = get(node)
    title = re.search(r"<h1>([^<]+)</h1>", npage).group(1)
    word = sorted(re.findall(r"[a-z]{4,}", title.lower()) or ["forest"], key=len)[-1]
    st, _, health, cold = get("/ui/health")
    assert st == 200, st
    print(f"health, cold (gathered): {cold:.0f} ms")
    pages = {
        "search": f"/ui/search?q={word}",
        "search as you type (JSON)": f"/ui/api/locate?q={word}",
        "browse master": "/ui/browse",
        "browse branch": branch,
        "node": node,
        "history (git log of the file and its waymarks)": node.replace("/ui/node/", "/ui/history/", 1),
        "health (warm)": "/ui/health",
        "login form": "/ui/login",
    }
    times = {k: [] for k in pages}
    for _ in range(rounds):
        for k, p in pages.items():
            st, _, _, ms = get(p)
            assert st == 200, (k, p, st)
            times[k].append(ms)
    print(f"{'page':28} {'p50':>8} {'p95':>8} {'max':>8}   ({rounds} requests each; q={word})")
    for k, v in times.items():
        v.sort()
        p = lambda q: v[min(len(v) - 1, int(q * len(v)))]
        print(f"{k:28} {p(0.5):8.1f} {p(0.95):8.1f} {v[-1]:8.1f}")


if __name__ == "__main__":
    main()
