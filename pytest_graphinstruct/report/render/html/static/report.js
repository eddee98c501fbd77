// The item table of the GraphInstruct HTML report: filters, pages, and each item's details.
// Every value comes from the embedded JSON document and is shown with textContent or as SVG
// attributes, never parsed as markup.  A URL hash such as #status=failed&level=1&q=L1-00 sets
// the filters when the page opens (tests and links use it); the number of matching items is
// kept in <output id="gi-count" data-visible="N">.
(function () {
  "use strict";
  var doc = JSON.parse(document.getElementById("gi-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var $ = function (id) { return document.getElementById(id); };
  var controls = {status: $("gi-status"), level: $("gi-level"), cell: $("gi-cell"),
                  category: $("gi-category"), cls: $("gi-class"), q: $("gi-search"),
                  size: $("gi-size")};
  var hasBaseline = doc.baseline !== null;
  var page = 0;
  var open = {};

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function num(x, digits) { return x === null || x === undefined ? "—" : x.toFixed(digits); }
  function option(select, value, label) {
    var o = el("option", label); o.value = value; select.appendChild(o);
  }

  var levels = {}, categories = {};
  doc.items.forEach(function (it, k) {
    levels[it.level] = true;
    it.categories.forEach(function (c) { categories[c] = true; });
    var hay = [it.id, doc.cells[it.cell].key, doc.instructions[it.id] || "", it.error || ""];
    it.samples.forEach(function (s) {
      hay.push(s.raw || "", s.error || "");
      s.violations.concat(s.derived).forEach(function (v) { hay.push(v); });
    });
    it._hay = hay.join("\n").toLowerCase();
    it._key = k;
  });
  Object.keys(levels).sort().forEach(function (lv) { option(controls.level, lv, "L" + lv); });
  doc.cells.forEach(function (c, k) { option(controls.cell, String(k), c.key); });
  doc.categories.forEach(function (c) { if (categories[c]) { option(controls.category, c, c); } });
  doc.classes.forEach(function (c) { option(controls.cls, c, c); });

  function matches(it) {
    var st = controls.status.value;
    if (st === "failed" && it.outcome !== "failed") { return false; }
    if (st === "error" && it.outcome !== "error") { return false; }
    if (st === "passed" && it.outcome !== "passed") { return false; }
    if (st === "differs" && !it.differs) { return false; }
    if (controls.level.value !== "" && String(it.level) !== controls.level.value) { return false; }
    if (controls.cell.value !== "" && String(it.cell) !== controls.cell.value) { return false; }
    if (controls.category.value !== "" && it.categories.indexOf(controls.category.value) < 0) {
      return false;
    }
    if (controls.cls.value !== "" && it.classes.indexOf(controls.cls.value) < 0) { return false; }
    var q = controls.q.value.trim().toLowerCase();
    return q === "" || it._hay.indexOf(q) >= 0;
  }

  function render() {
    var shown = doc.items.filter(matches);
    var size = parseInt(controls.size.value, 10);
    var pages = Math.max(1, Math.ceil(shown.length / size));
    page = Math.min(page, pages - 1);
    var body = document.querySelector("#gi-table tbody");
    body.textContent = "";
    shown.slice(page * size, (page + 1) * size).forEach(function (it) {
      var tr = el("tr", null, "item " + it.outcome);
      tr.tabIndex = 0;
      tr.appendChild(el("td", it.id));
      tr.appendChild(el("td", doc.cells[it.cell].key));
      tr.appendChild(el("td", "L" + it.level));
      tr.appendChild(el("td", it.outcome + (it.expected_failure ? " (expected)" : ""),
                        "outcome"));
      tr.appendChild(el("td", num(it.score, 4), "n"));
      if (hasBaseline) { tr.appendChild(el("td", it.baseline === null ? "—" : it.baseline)); }
      tr.appendChild(el("td", it.classes.join(", ")));
      tr.appendChild(el("td", it.categories.join(", ")));
      var toggle = function () { open[it._key] = !open[it._key]; render(); };
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter") { toggle(); } });
      body.appendChild(tr);
      if (open[it._key]) {
        var row = el("tr", null, "details");
        var td = el("td");
        td.colSpan = hasBaseline ? 8 : 7;
        td.appendChild(details(it));
        row.appendChild(td);
        body.appendChild(row);
      }
    });
    $("gi-page").textContent = "page " + (page + 1) + " of " + pages;
    $("gi-count").textContent = String(shown.length);
    $("gi-count").setAttribute("data-visible", String(shown.length));
    $("gi-prev").disabled = page === 0;
    $("gi-next").disabled = page >= pages - 1;
  }

  function table(head, rows) {
    var t = el("table", null, "inner");
    var tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (v) { row.appendChild(el("td", v)); });
      t.appendChild(row);
    });
    return t;
  }

  function details(it) {
    var box = el("div", null, "detail");
    box.appendChild(el("p", it.id + " · level " + it.level + " · cell " + doc.cells[it.cell].key +
                       " · D1–D5 " + it.dims.map(function (d) { return num(d, 3); }).join(" / ") +
                       " · tokens " + (it.tokens === null ? "unknown" : it.tokens)));
    var text = doc.instructions[it.id];
    box.appendChild(el("h4", "Instruction"));
    box.appendChild(el("p", text === undefined ? "(text not in the report: build the page with " +
                       "--suite to show it)" : text, text === undefined ? "note" : "instruction"));
    if (it.error) { box.appendChild(el("p", "error: " + it.error, "error")); }
    if (!it.samples.length) {
      box.appendChild(el("p", "The report keeps no samples for this item.", "note"));
    }
    it.samples.forEach(function (s, j) { box.appendChild(sample(s, j)); });
    return box;
  }

  function sample(s, j) {
    var box = el("div", null, "sample");
    var flags = [s["class"]];
    if (s.truncated) { flags.push("truncated at the token limit"); }
    if (s.error) { flags.push(s.error); }
    box.appendChild(el("h4", "Sample " + j + ": " + flags.join(" · ")));
    box.appendChild(el("p", "tokens " + (s.tokens[0] === null ? "?" : s.tokens[0]) + " in + " +
                       (s.tokens[1] === null ? "?" : s.tokens[1]) + " out, " + s.calls +
                       " API call(s)", "note"));
    if (s.verdicts.length) {
      box.appendChild(table(["constraint", "category", "expected", "observed", "gap", "where"],
        s.verdicts.map(function (v) {
          return [v.constraint, v.category, v.expected === null ? "—" : v.expected,
                  v.observed === null ? "—" : v.observed,
                  v.gap === null ? "" : (v.gap > 0 ? "+" : "") + v.gap,
                  Object.keys(v.where).length ? JSON.stringify(v.where) : ""];
        })));
    } else if (s.violations.length || s.derived.length) {
      box.appendChild(el("p", "violated: " + s.violations.concat(s.derived).join(", ")));
    }
    if (s.steps.length) {
      box.appendChild(el("h5", "Rounds of the method"));
      box.appendChild(table(["round", "source", "temperature", "tokens in/out", "calls", "D4",
                             "passed", "kept"],
        s.steps.map(function (x) {
          return [x.round, x.source, x.temperature, x.tokens.join(" / "), x.calls,
                  num(x.d4, 3), x.passed ? "yes" : "no", x.kept ? "kept" : ""];
        })));
    }
    var cols = el("div", null, "cols");
    var raw = el("div", null, "raw");
    raw.appendChild(el("h5", "Raw answer (as the report keeps it)"));
    raw.appendChild(el("pre", s.raw === null ? "(not in the report)" : s.raw));
    cols.appendChild(raw);
    var pic = el("div", null, "drawing");
    pic.appendChild(el("h5", "Parsed graph" + (s.drawing.marked_nodes &&
      (s.drawing.marked_nodes.length || s.drawing.marked_edges.length) ?
      " (red: named by a violated check)" : "")));
    if (s.drawing.omitted) { pic.appendChild(el("p", s.drawing.omitted, "note")); }
    else { pic.appendChild(drawing(s.drawing)); }
    cols.appendChild(pic);
    box.appendChild(cols);
    return box;
  }

  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }

  function drawing(d) {
    var root = svg("svg", {viewBox: "-1.2 -1.2 2.4 2.4", width: 320, height: 320,
                           "class": "graph"});
    var badNode = {}, badEdge = {};
    d.marked_nodes.forEach(function (k) { badNode[k] = true; });
    d.marked_edges.forEach(function (k) { badEdge[k] = true; });
    var r = d.labels.length > 30 ? 0.03 : 0.05;
    d.edges.forEach(function (e, k) {
      var a = d.xy[e[0]], b = d.xy[e[1]];
      var dx = b[0] - a[0], dy = b[1] - a[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
      var line = svg("line", {x1: a[0], y1: -a[1], x2: b[0] - dx / len * r,
                              y2: -(b[1] - dy / len * r),
                              "class": badEdge[k] ? "edge bad" : "edge"});
      if (d.directed) { line.setAttribute("marker-end", badEdge[k] ? "url(#gi-arrow-bad)" : "url(#gi-arrow)"); }
      root.appendChild(line);
    });
    d.loops.forEach(function (k) {
      root.appendChild(svg("circle", {cx: d.xy[k][0] + r, cy: -d.xy[k][1] - r, r: r,
                                      "class": "loop"}));
    });
    d.labels.forEach(function (label, k) {
      var c = svg("circle", {cx: d.xy[k][0], cy: -d.xy[k][1], r: r,
                             "class": badNode[k] ? "node bad" : "node"});
      var title = svg("title", {});
      title.textContent = label;
      c.appendChild(title);
      root.appendChild(c);
      if (d.labels.length <= 30) {
        var t = svg("text", {x: d.xy[k][0], y: -d.xy[k][1] - r - 0.02, "class": "label"});
        t.textContent = label;
        root.appendChild(t);
      }
    });
    return root;
  }

  function fromHash() {
    var h = window.location.hash.replace(/^#/, "");
    if (!h) { return; }
    h.split("&").forEach(function (part) {
      var kv = part.split("=");
      var key = decodeURIComponent(kv[0]), value = decodeURIComponent(kv.slice(1).join("="));
      if (key === "filter") { key = "status"; }
      if (key === "open") { open[parseInt(value, 10)] = true; return; }
      if (controls[key]) { controls[key].value = value; }
    });
  }

  Object.keys(controls).forEach(function (k) {
    controls[k].addEventListener(k === "q" ? "input" : "change", function () {
      page = 0; render();
    });
  });
  $("gi-prev").addEventListener("click", function () { page -= 1; render(); });
  $("gi-next").addEventListener("click", function () { page += 1; render(); });
  window.addEventListener("hashchange", function () { fromHash(); page = 0; render(); });
  fromHash();
  render();
}());
