// goldgate's case browser. The report is read from the JSON block and every piece of it is
// shown as text (textContent or text nodes): agent replies are hostile and never become markup.
(function () {
  "use strict";
  var report = JSON.parse(document.getElementById("goldgate-data").textContent);
  var cases = report.cases || [];
  var gate = report.gate;
  // What the summary says of each case beside its status, by the case's index.
  var notes = JSON.parse(document.getElementById("goldgate-notes").textContent);

  // Control, zero-width and bidi characters shown as escapes, as the terminal shows them, so
  // that a reply cannot hide or reorder text.
  var HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g;
  function visible(text) {
    return String(text).replace(HIDDEN, function (c) {
      return "\\u{" + c.charCodeAt(0).toString(16) + "}";
    });
  }

  // An element with a class and children: strings become text nodes, nulls are skipped.
  function el(tag, cls) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(visible(child)) : child);
    }
    return node;
  }
  function badge(status) { return el("span", "badge " + status, status); }
  function ms(value) {
    if (value === null || value === undefined) return "n/a";
    return value < 10000 ? value + " ms" : (value / 1000).toFixed(1) + " s";
  }
  function pct(value) { return (value * 100).toFixed(1) + "%"; }
  function key(file, id) { return file + "#" + id; }

  var newlyFailing = {};
  var newlyPassing = {};
  if (gate) {
    gate.newly_failing.forEach(function (f) { newlyFailing[key(f.file, f.id)] = true; });
    gate.newly_passing.forEach(function (f) { newlyPassing[key(f.file, f.id)] = true; });
  }

  // Everything the search box looks through, lower-cased once.
  function haystack(c) {
    var parts = [c.id, c.name, c.file, c.error || ""].concat(c.tags);
    c.turns.forEach(function (t) {
      parts.push(t.input, t.error || "");
      if (t.reply) parts.push(t.reply.text);
      t.checks.forEach(function (k) { parts.push(k.label, k.expected, k.actual, k.reason || ""); });
    });
    c.checks.forEach(function (k) { parts.push(k.label, k.expected, k.actual, k.reason || ""); });
    return parts.join("\n").toLowerCase();
  }

  var RANK = { error: 0, failed: 1, skipped: 2, passed: 3 };
  var rows = cases.map(function (c, index) {
    return { c: c, index: index, text: haystack(c), row: null, detail: null };
  });

  // ---- word diff -------------------------------------------------------------------------
  // Words (joined by - ' . / : as in ORD-12345, don't, 3.5, 10:30), spaces, other characters.
  var TOKEN = /\s+|[\p{L}\p{N}_]+(?:[-'\u2019.\/:][\p{L}\p{N}_]+)*|[^\s\p{L}\p{N}_]/gu;
  var DIFF_LIMIT = 250000;
  // The tokens of `a` and `b` marked as common or not, by a longest common subsequence; null
  // when the texts are too long to compare.
  function diff(a, b) {
    var x = a.match(TOKEN) || [], y = b.match(TOKEN) || [];
    if (x.length * y.length > DIFF_LIMIT) return null;
    var n = x.length, m = y.length, i, j;
    var table = new Array(n + 1);
    for (i = 0; i <= n; i++) table[i] = new Uint32Array(m + 1);
    for (i = n - 1; i >= 0; i--)
      for (j = m - 1; j >= 0; j--)
        table[i][j] = x[i] === y[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    var left = [], right = [];
    i = 0; j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) { left.push([x[i], true]); right.push([y[j], true]); i++; j++; }
      else if (table[i + 1][j] >= table[i][j + 1]) { left.push([x[i], false]); i++; }
      else { right.push([y[j], false]); j++; }
    }
    for (; i < n; i++) left.push([x[i], false]);
    for (; j < m; j++) right.push([y[j], false]);
    return [left, right];
  }
  function marked(tokens, tag) {
    var pre = el("pre");
    tokens.forEach(function (t) {
      var changed = !t[1] && /\S/.test(t[0]);
      pre.appendChild(changed ? el(tag, null, t[0]) : document.createTextNode(visible(t[0])));
    });
    return pre;
  }

  // ---- one case, unfolded ------------------------------------------------------------------
  function checksTable(checks) {
    var table = el("table", "checks",
      el("thead", null, el("tr", null, el("th", null, "Check"), el("th", null, "Status"),
        el("th", null, "Judged by"), el("th", null, "Expected"), el("th", null, "Actual"))));
    var body = el("tbody");
    checks.forEach(function (k) {
      var expected, actual;
      var parts = k.status === "failed" ? diff(k.expected, k.actual) : null;
      if (parts) {
        expected = marked(parts[0], "del");
        actual = marked(parts[1], "ins");
      } else {
        expected = el("pre", null, k.expected);
        actual = el("pre", null, k.actual);
      }
      var score = k.score === null ? null : el("div", "note", "score " + k.score.toFixed(2));
      var reason = k.reason ? el("div", "reason", k.reason) : null;
      body.appendChild(el("tr", k.status === "failed" || k.status === "error" ? "failed" : null,
        el("td", null, k.label, el("div", "note", "line " + k.line)),
        el("td", null, badge(k.status)),
        el("td", "method", el("code", null, k.method), score),
        el("td", "text", expected),
        el("td", "text", actual, reason)));
    });
    table.appendChild(body);
    return table;
  }

  function reply(r) {
    var box = el("div", "bubble agent", el("div", "who", "agent"));
    if (r.messages.length === 0) box.appendChild(el("div", "note", "(no text)"));
    r.messages.forEach(function (m) {
      box.appendChild(el("pre", null, (m.agent ? "[" + m.agent + "] " : "") + m.text));
    });
    r.tool_calls.forEach(function (t) {
      var line = "tool call " + t.name + "(" + JSON.stringify(t.args) + ")";
      if (t.response !== undefined && t.response !== null) line += " → " + JSON.stringify(t.response);
      box.appendChild(el("pre", "mono", line));
    });
    if (r.transfer) box.appendChild(el("div", null, "transfer to " + r.transfer.agent));
    if (r.handoff) box.appendChild(el("div", null, "handoff: " + r.handoff.status));
    if (r.error) box.appendChild(el("div", "error-text", "agent error " + r.error.code + ": " + r.error.message));
    return box;
  }

  function detail(c) {
    var box = el("div");
    var facts = [c.format, "weight " + c.weight, "score " + c.score.toFixed(2), ms(c.duration_ms),
      "tokens " + c.usage.input_tokens + " in / " + c.usage.output_tokens + " out"];
    box.appendChild(el("div", null, el("b", null, c.name), " ", el("span", "where", c.file + ":" + c.line + " · " + facts.join(" · "))));
    if (c.error) box.appendChild(el("pre", "error-text", "error of the run: " + c.error));
    if (c.repeats) {
      var r = c.repeats;
      var runs = el("div", "runs", "runs: ");
      r.runs.forEach(function (s, i) {
        var chip = el("span", s);
        chip.title = "run " + (i + 1) + ": " + s;
        runs.appendChild(chip);
      });
      var needed = r.min_pass >= r.runs.length ? "every run must pass" : "at least " + r.min_pass + " needed";
      runs.appendChild(document.createTextNode(" " + r.passed + " of " + r.runs.length + " passed (" +
        needed + ") · pass fraction " + pct(r.pass_fraction) + " · pass^" + r.min_pass + " " +
        r.pass_hat_k.toFixed(2)));
      if (r.flaky) runs.appendChild(el("span", "badge flaky", "flaky"));
      box.appendChild(runs);
      box.appendChild(el("div", "note", "The transcript below is one run: the first one that ended as the case did (for a flaky pass, the first that failed)."));
    }
    c.turns.forEach(function (t) {
      var head = el("div", "head", el("b", null, "Turn " + t.index), " · line " + t.line + " · ", badge(t.status),
        " · latency " + ms(t.latency_ms) + (t.ttft_ms === null ? "" : " · TTFT " + ms(t.ttft_ms)) +
        (t.attempts > 1 ? " · " + t.attempts + " attempts" : ""));
      var turn = el("div", "turn", head, el("div", "bubble user", el("div", "who", "user"), el("pre", null, t.input)));
      if (t.reply) turn.appendChild(reply(t.reply));
      if (t.cut) turn.appendChild(el("div", "note", "goldgate kept part of this reply: " + t.cut.messages +
        " messages, " + t.cut.tool_calls + " tool calls and " + t.cut.bytes + " bytes of text left out"));
      // The case's error is shown once, above.
      if (t.error && t.error !== c.error) turn.appendChild(el("pre", "bubble error-text", "error: " + t.error));
      if (t.checks.length) turn.appendChild(checksTable(t.checks));
      box.appendChild(turn);
    });
    if (c.checks.length) {
      box.appendChild(el("h3", null, "Conversation checks"));
      box.appendChild(checksTable(c.checks));
    }
    return box;
  }

  // ---- the table ---------------------------------------------------------------------------
  function summaryRow(item) {
    var c = item.c, k = key(c.file, c.id);
    var status = el("td", null, badge(c.status));
    if (newlyFailing[k]) status.appendChild(el("span", "badge new", "newly failing"));
    if (newlyPassing[k]) status.appendChild(el("span", "badge passed", "newly passing"));
    (notes[item.index] || []).forEach(function (n) { status.appendChild(el("span", "badge note", n)); });
    var tags = el("td");
    c.tags.forEach(function (t) { tags.appendChild(el("span", "tag", t)); });
    var runs = el("td", "runs");
    if (c.repeats) {
      runs.appendChild(document.createTextNode(c.repeats.passed + "/" + c.repeats.runs.length + " "));
      if (c.repeats.flaky) runs.appendChild(el("span", "badge flaky", "flaky"));
    }
    var row = el("tr", "case " + c.status, status,
      el("td", null, el("code", null, c.id), c.name !== c.id ? el("div", "name", c.name) : null),
      el("td", "where", c.file + ":" + c.line), tags,
      el("td", "num", c.score.toFixed(2)), el("td", "num", String(c.turns.length)),
      el("td", "num", ms(c.duration_ms)), runs);
    row.tabIndex = 0;
    row.setAttribute("aria-expanded", "false");
    function toggle() {
      if (!item.detail) {
        var cell = el("td", null, detail(c));
        cell.colSpan = 8;
        item.detail = el("tr", "detail", cell);
      }
      var open = row.getAttribute("aria-expanded") !== "true";
      row.setAttribute("aria-expanded", String(open));
      if (open) row.parentNode.insertBefore(item.detail, row.nextSibling);
      else if (item.detail.parentNode) item.detail.parentNode.removeChild(item.detail);
    }
    row.addEventListener("click", toggle);
    row.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
    return row;
  }

  var state = { status: "", tag: "", file: "", text: "", sort: "status", dir: 1 };
  var tbody = document.querySelector("#case-table tbody");

  function matches(item) {
    var c = item.c;
    if (state.status === "flaky" ? !(c.repeats && c.repeats.flaky) : state.status && c.status !== state.status) return false;
    if (state.tag && c.tags.indexOf(state.tag) < 0) return false;
    if (state.file && c.file !== state.file) return false;
    return !state.text || item.text.indexOf(state.text) >= 0;
  }

  var SORTS = {
    status: function (a, b) { return RANK[a.c.status] - RANK[b.c.status]; },
    id: function (a, b) { return a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0; },
    file: function (a, b) { return a.c.file < b.c.file ? -1 : a.c.file > b.c.file ? 1 : a.c.line - b.c.line; },
    score: function (a, b) { return a.c.score - b.c.score; },
    turns: function (a, b) { return a.c.turns.length - b.c.turns.length; },
    duration: function (a, b) { return a.c.duration_ms - b.c.duration_ms; },
    runs: function (a, b) {
      var fa = a.c.repeats ? a.c.repeats.pass_fraction : 2, fb = b.c.repeats ? b.c.repeats.pass_fraction : 2;
      return fa - fb;
    }
  };

  function render() {
    var sorted = rows.slice().sort(function (a, b) {
      return state.dir * SORTS[state.sort](a, b) || a.index - b.index;
    });
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    var shown = 0;
    sorted.forEach(function (item) {
      if (!matches(item)) return;
      shown++;
      if (!item.row) item.row = summaryRow(item);
      tbody.appendChild(item.row);
      if (item.row.getAttribute("aria-expanded") === "true") tbody.appendChild(item.detail);
    });
    document.getElementById("shown").textContent = "showing " + shown + " of " + rows.length + " cases";
  }

  function options(select, values) {
    values.forEach(function (v) {
      var option = el("option", null, v);
      option.value = v;
      select.appendChild(option);
    });
  }
  function unique(list) { return list.filter(function (v, i) { return list.indexOf(v) === i; }).sort(); }
  var tagSelect = document.getElementById("tag-filter");
  var fileSelect = document.getElementById("file-filter");
  options(tagSelect, unique([].concat.apply([], cases.map(function (c) { return c.tags; }))));
  options(fileSelect, unique(cases.map(function (c) { return c.file; })));
  tagSelect.addEventListener("change", function () { state.tag = tagSelect.value; render(); });
  fileSelect.addEventListener("change", function () { state.file = fileSelect.value; render(); });
  var search = document.getElementById("search");
  search.addEventListener("input", function () { state.text = search.value.trim().toLowerCase(); render(); });

  var buttons = document.querySelectorAll(".status-filter button");
  Array.prototype.forEach.call(buttons, function (button) {
    var status = button.getAttribute("data-status");
    var count = status === "" ? cases.length : cases.filter(function (c) {
      return status === "flaky" ? c.repeats && c.repeats.flaky : c.status === status;
    }).length;
    button.appendChild(document.createTextNode(" (" + count + ")"));
    button.addEventListener("click", function () {
      state.status = state.status === status ? "" : status;
      Array.prototype.forEach.call(buttons, function (b) {
        b.setAttribute("aria-pressed", String(b.getAttribute("data-status") === state.status));
      });
      render();
    });
  });

  var headers = document.querySelectorAll("#case-table th[data-sort]");
  Array.prototype.forEach.call(headers, function (th) {
    th.addEventListener("click", function () {
      var by = th.getAttribute("data-sort");
      state.dir = state.sort === by ? -state.dir : 1;
      state.sort = by;
      Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      render();
    });
  });

  render();
})();
