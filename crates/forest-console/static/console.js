// forest console: search as you type. The page works without it: the form
// submits to /ui/search. Results are built with textContent (never HTML).
"use strict";
(function () {
  const input = document.getElementById("q");
  const list = document.getElementById("results");
  if (!input || !list) return;
  let timer = null;
  let seq = 0;
  function item(r) {
    const li = document.createElement("li");
    li.dataset.id = r.id;
    const a = document.createElement("a");
    a.className = "title";
    a.href = r.href;
    a.textContent = r.title;
    const id = document.createElement("span");
    id.className = "id";
    id.textContent = " " + r.id;
    const p = document.createElement("p");
    p.textContent = r.summary;
    li.append(a, id, p);
    return li;
  }
  async function run() {
    const q = input.value.trim();
    if (q.length < 2) return;
    const mine = ++seq;
    const resp = await fetch("/ui/api/locate?q=" + encodeURIComponent(q), { credentials: "same-origin" });
    if (!resp.ok || mine !== seq) return;
    const data = await resp.json();
    if (mine !== seq) return;
    list.replaceChildren(...(data.results || []).map(item));
    const count = document.getElementById("count");
    if (count) count.textContent = list.children.length + " result(s) for “" + q + "”";
  }
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(run, 200);
  });
})();
