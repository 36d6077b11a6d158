// ozone.js: what every pyozone web UI shares. No build step and no framework: a hash router over
// `#!/page?k=v` (as Ozone's UIs link `/#!/config`), an element builder, tables, pagers over the
// paginated JSON APIs, SVG charts, and the pages every daemon has (configuration, log levels, metrics).
//
// Test hooks: a page renders into <main id="main">; once rendered, main has data-loaded="true" and
// data-page="<route>". Key/value tables mark each value cell data-field="<key>"; tables have
// data-table="<name>" and rows data-id="<id>".
"use strict";

const oz = (() => {
  const h = (tag, attrs, ...children) => {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  };
  const svgNS = "http://www.w3.org/2000/svg";
  const s = (tag, attrs, ...children) => {
    const el = document.createElementNS(svgNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
    return el;
  };

  async function get(path) {
    const response = await fetch(path, { headers: { Accept: "application/json" } });
    let body;
    try { body = await response.json(); } catch (e) { throw new Error(`${path}: ${response.status} ${response.statusText}`); }
    if (!response.ok) throw new Error(body && body.error ? body.error : `${path}: ${response.status}`);
    return body;
  }

  const withQuery = (path, params) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== "") q.set(k, v);
    const text = q.toString();
    return text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path;
  };

  const UNITS = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
  function size(bytes) {
    if (bytes === null || bytes === undefined) return "-";
    let v = Number(bytes), i = 0;
    while (Math.abs(v) >= 1024 && i < UNITS.length - 1) { v /= 1024; i++; }
    return `${i ? v.toFixed(1) : v} ${UNITS[i]}`;
  }
  function age(ms) {
    if (!ms) return "-";
    const secs = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (secs < 120) return `${secs}s ago`;
    if (secs < 7200) return `${Math.round(secs / 60)}m ago`;
    return `${Math.round(secs / 3600)}h ago`;
  }
  const time = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "-");
  const pct = (part, whole) => (whole ? `${((100 * part) / whole).toFixed(1)} %` : "-");

  // A key/value table; each value cell is data-field="<key>" (or the row's explicit field).
  function kv(rows, name) {
    return h("table", { class: "kv", dataset: { table: name || "" } },
      h("tbody", {}, rows.map(([label, value, field]) =>
        h("tr", {}, h("th", {}, label), h("td", { dataset: { field: field || label } }, value)))));
  }

  // columns: [{title, value: row => text|Node, id?: row => data-id (first column's only)}]
  function table(columns, rows, name, rowId) {
    return h("table", { class: "grid", dataset: { table: name || "" } },
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", {}, c.title)))),
      h("tbody", {}, rows.length === 0
        ? h("tr", {}, h("td", { colspan: columns.length, class: "empty" }, "none"))
        : rows.map((r) => h("tr", { dataset: rowId ? { id: rowId(r) } : {} },
          columns.map((c) => h("td", { class: c.cls || "" }, c.value(r)))))));
  }

  // A paginated table over an API answering {total, offset, limit, items}. Returns the element; it
  // loads its first page itself and calls onPage(answer) after each page (for tests and summaries).
  // opts.offset starts elsewhere than the first page (a page that refreshes keeps the reader's place).
  function pager(path, params, columns, name, rowId, opts) {
    const limit = (opts && opts.limit) || 50;
    const box = h("div", { class: "pager", dataset: { pager: name } });
    let offset = (opts && opts.offset) || 0;
    async function load() {
      const answer = await get(withQuery(path, { ...params, offset, limit }));
      if (offset > 0 && offset >= answer.total) { offset = Math.max(0, Math.ceil(answer.total / limit) - 1) * limit; return load(); }
      const pages = Math.max(1, Math.ceil(answer.total / limit));
      const page = Math.floor(offset / limit) + 1;
      const prev = h("button", { disabled: offset === 0, onclick: () => { offset = Math.max(0, offset - limit); load(); } }, "‹ prev");
      const next = h("button", { disabled: offset + limit >= answer.total, onclick: () => { offset += limit; load(); } }, "next ›");
      box.replaceChildren(
        table(columns, answer.items, name, rowId),
        h("div", { class: "pages" }, prev, ` page ${page} of ${pages} (${answer.total} in all) `, next));
      box.dataset.total = answer.total;
      if (opts && opts.onPage) opts.onPage(answer);
    }
    box.ready = load();
    return box;
  }

  // A table over an API that pages by cursor, answering {items, next, total}: where a list is a range scan
  // (OM's om.db in RocksDB), a page starts after a name (?startAfter=) instead of at an offset. `next` is
  // the startAfter of the following page (null on the last); "prev" goes back through the cursors seen.
  // `total` may be null (unknown). opts: limit, start (the cursor to begin at), back (the cursors before
  // it), onPage(answer, {start, back}) after each page (a page that refreshes keeps the reader's place).
  function cursorPager(path, params, columns, name, rowId, opts) {
    const o = opts || {};
    const limit = o.limit || 50;
    const box = h("div", { class: "pager", dataset: { pager: name } });
    let start = o.start || "";
    const back = [...(o.back || [])];
    async function load() {
      const answer = await get(withQuery(path, { ...params, startAfter: start, limit }));
      const known = answer.total !== null && answer.total !== undefined;
      const prev = h("button", { disabled: back.length === 0, onclick: () => { start = back.pop(); load(); } }, "‹ prev");
      const next = h("button", { disabled: !answer.next, onclick: () => { back.push(start); start = answer.next; load(); } }, "next ›");
      box.replaceChildren(
        table(columns, answer.items, name, rowId),
        h("div", { class: "pages" }, prev, ` page ${back.length + 1}: ${answer.items.length} shown${known ? ` of ${answer.total}` : ""} `, next));
      box.dataset.total = known ? answer.total : "";
      box.dataset.count = answer.items.length;
      if (o.onPage) o.onPage(answer, { start, back: [...back] });
    }
    box.ready = load();
    return box;
  }

  // Horizontal bars: items [{label, value, max?}]; `format` renders a value.
  function bars(items, opts) {
    const o = { format: String, width: 640, bar: 16, ...opts };
    const max = o.max || Math.max(1, ...items.map((i) => i.max || i.value));
    const label = 150, height = items.length * (o.bar + 4) + 4;
    const svg = s("svg", { class: "chart", width: o.width, height, viewBox: `0 0 ${o.width} ${height}`, "data-chart": o.name || "" });
    items.forEach((item, n) => {
      const y = 4 + n * (o.bar + 4);
      const span = o.width - label - 90;
      const w = (span * item.value) / (item.max || max);
      svg.append(
        s("text", { x: label - 6, y: y + o.bar - 4, "text-anchor": "end" }, item.label),
        s("rect", { x: label, y, width: span, height: o.bar, class: "track" }),
        s("rect", { x: label, y, width: Math.max(0, w), height: o.bar, class: item.cls || "bar" }, s("title", {}, `${item.label}: ${o.format(item.value)}`)),
        s("text", { x: label + span + 6, y: y + o.bar - 4 }, o.format(item.value)));
    });
    return svg;
  }

  // How many values fall in each of `bins` equal ranges: for a chart over thousands of datanodes.
  function histogram(values, bins, format) {
    if (values.length === 0) return [];
    const lo = Math.min(...values), hi = Math.max(...values);
    const width = (hi - lo) / bins || 1;
    const counts = new Array(bins).fill(0);
    for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / width))]++;
    const f = format || ((x) => x.toFixed(0));
    return counts.map((c, i) => ({ label: `${f(lo + i * width)}–${f(lo + (i + 1) * width)}`, value: c }));
  }

  // Lines over time: series {name: [[epochMs, value], ...]}.
  function lines(series, opts) {
    const o = { width: 640, height: 220, format: String, ...opts };
    const names = Object.keys(series);
    const points = names.flatMap((n) => series[n]);
    const svg = s("svg", { class: "chart", width: o.width, height: o.height + 20 * Math.ceil(names.length / 4), "data-chart": o.name || "" });
    if (points.length === 0) { svg.append(s("text", { x: 10, y: 20 }, "no samples yet")); return svg; }
    const t0 = Math.min(...points.map((p) => p[0])), t1 = Math.max(...points.map((p) => p[0]));
    const vmax = Math.max(1, ...points.map((p) => p[1]));
    const left = 60, right = o.width - 10, top = 10, bottom = o.height - 20;
    const x = (t) => left + ((right - left) * (t - t0)) / Math.max(1, t1 - t0);
    const y = (v) => bottom - ((bottom - top) * v) / vmax;
    svg.append(
      s("line", { x1: left, y1: bottom, x2: right, y2: bottom, class: "axis" }),
      s("line", { x1: left, y1: top, x2: left, y2: bottom, class: "axis" }),
      s("text", { x: left - 4, y: top + 10, "text-anchor": "end" }, o.format(vmax)),
      s("text", { x: left - 4, y: bottom, "text-anchor": "end" }, "0"),
      s("text", { x: left, y: bottom + 14 }, time(t0)),
      s("text", { x: right, y: bottom + 14, "text-anchor": "end" }, time(t1)));
    names.forEach((n, i) => {
      const d = series[n].map((p, j) => `${j ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
      svg.append(s("path", { d, class: `line c${i % 8}` }));
      svg.append(s("text", { x: left + (i % 4) * 150, y: o.height + 16 + 20 * Math.floor(i / 4), class: `legend c${i % 8}` }, `■ ${n}`));
    });
    return svg;
  }

  // The configuration page every daemon has: /conf?format=json, filtered, paged on the client.
  async function configPage(main) {
    const { properties } = await get("/conf?format=json");
    const filter = h("input", { type: "search", placeholder: "filter keys, e.g. ozone.scm.pipeline", id: "config-filter" });
    const columns = [
      { title: "key", value: (p) => p.key },
      { title: "value", value: (p) => p.value },
      { title: "source", value: (p) => p.resource },
    ];
    const holder = h("div");
    const render = () => {
      const f = filter.value.trim();
      const rows = properties.filter((p) => !f || p.key.includes(f) || p.value.includes(f));
      holder.replaceChildren(h("p", {}, `${rows.length} of ${properties.length} keys`), table(columns, rows, "config", (p) => p.key));
    };
    filter.addEventListener("input", render);
    render();
    main.append(h("h2", {}, "Configuration"), h("p", { class: "note" }, "Effective values with their sources; the raw form is ", h("a", { href: "/conf" }, "/conf"), "."), filter, holder);
  }

  // Log levels: read or set a logger's level at run time through /logLevel.
  async function logLevelPage(main) {
    const name = h("input", { id: "log-name", value: "pyozone", size: 40 });
    const level = h("select", { id: "log-level" }, ["", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"].map((l) => h("option", { value: l }, l || "(read only)")));
    const out = h("pre", { id: "log-answer" });
    const go = async () => {
      try {
        const answer = await get(withQuery("/logLevel", { log: name.value, level: level.value, format: "json" }));
        out.textContent = `${answer.log}: effective level ${answer.effectiveLevel}` + (answer.setLevel ? ` (set to ${answer.setLevel})` : "");
      } catch (e) { out.textContent = `Error: ${e.message}`; }
    };
    main.append(h("h2", {}, "Log levels"), h("p", {}, "Logger ", name, " level ", level, " ", h("button", { id: "log-submit", onclick: go }, "apply")), out);
  }

  // A member of an HA service in its Raft group (its /api/v1/ratis), as Ozone's OM and SCM pages show their
  // roles: its role, term, leader and Raft indexes, each member of the service with the role this one knows
  // it in, and, on the leader, each follower's match index and lag (entries behind the leader's log).
  // `service`: "OM" or "SCM"; `serviceKey`: the key naming the service (ozone.om.service.ids, ...);
  // `serves`: the label of `ready` (what the ready leader does).
  const roleClass = (role) => ({ LEADER: "ok", FOLLOWER: "", CANDIDATE: "warn" })[role] ?? "bad";
  function raftRoles(r, service, serviceKey, serves) {
    const heading = h("h3", {}, `High availability (${service} Roles)`);
    if (!r.ha) return [heading, kv([["HA", `no: a lone ${service} (${serviceKey} names no service)`, "ha"]], "ratis")];
    if (!r.running) return [heading, kv([["HA", `yes: ${service} ${r.nodeId}, its Raft member is not running`, "ha"]], "ratis")];
    const followers = new Map(r.followers.map((f) => [f.nodeId, f]));
    const ofFollower = (m, what) => (followers.has(m.nodeId) ? followers.get(m.nodeId)[what] : "-");
    return [
      heading,
      kv([
        ["HA", `yes: ${service} ${r.nodeId} in Raft group ${r.groupId}`, "ha"],
        ["role", h("span", { class: roleClass(r.role) }, r.role), "role"],
        [serves, r.ready ? "yes" : "no", "ready"],
        ["term", String(r.term), "term"],
        ["leader", r.leader || "none known", "leader"],
        ["last index", String(r.lastIndex), "lastIndex"],
        ["commit index", String(r.commitIndex), "commitIndex"],
        ["applied index", String(r.appliedIndex), "appliedIndex"],
      ], "ratis"),
      table([
        { title: "node ID", value: (m) => m.nodeId },
        { title: "host (client RPC)", value: (m) => m.rpcAddress || "-" },
        { title: "Ratis address", value: (m) => m.ratisAddress },
        { title: "role", value: (m) => h("span", { class: roleClass(m.role) }, m.role) },
        { title: "match index", cls: "num", value: (m) => ofFollower(m, "matchIndex") },
        { title: "lag", cls: "num", value: (m) => ofFollower(m, "lag") },
      ], r.members, `${service.toLowerCase()}Roles`, (m) => m.nodeId),
      h("p", { class: "note" }, r.role === "LEADER"
        ? "Match index and lag: how far each follower's log is behind this leader's."
        : "Each follower's match index and lag show on the leader's page."),
    ];
  }

  function metricsPage(main) {
    main.append(h("h2", {}, "Metrics and diagnostics"), h("ul", {},
      h("li", {}, h("a", { href: "/prom" }, "/prom"), ": every metric in Prometheus text format"),
      h("li", {}, h("a", { href: "/jmx" }, "/jmx"), ": the same metrics as JMX-style JSON beans"),
      h("li", {}, h("a", { href: "/conf" }, "/conf"), ": the running configuration"),
      h("li", {}, h("a", { href: "/stacks" }, "/stacks"), ": every thread's and asyncio task's stack"),
      h("li", {}, h("a", { href: "/logLevel?log=pyozone" }, "/logLevel?log=NAME&level=LEVEL"), ": read or set a log level")));
  }

  // The UI: `pages` [{route, title, render: async (main, params) => void, refreshS?}]. Shared pages
  // (config, logs, metrics) are appended. Renders the nav, then the page the hash names.
  function start(title, pages) {
    const all = [...pages,
      { route: "config", title: "Configuration", render: configPage },
      { route: "logs", title: "Log levels", render: logLevelPage },
      { route: "metrics", title: "Metrics", render: metricsPage }];
    document.title = title;
    const nav = h("nav", {}, h("span", { class: "brand" }, title), all.map((p) => h("a", { href: `#!/${p.route}`, dataset: { route: p.route } }, p.title)));
    const main = h("main", { id: "main" });
    const status = h("div", { id: "status", class: "status" });
    document.body.replaceChildren(nav, status, main);
    let timer = null, generation = 0;
    async function show() {
      const [route, query] = (location.hash.replace(/^#!?\/?/, "") || all[0].route).split("?");
      const page = all.find((p) => p.route === route) || all[0];
      const params = Object.fromEntries(new URLSearchParams(query || ""));
      const mine = ++generation;
      clearTimeout(timer);
      for (const a of nav.querySelectorAll("a")) a.classList.toggle("active", a.dataset.route === page.route);
      const fresh = h("main", { id: "main", dataset: { page: page.route } });
      try {
        await page.render(fresh, params);
        status.textContent = `updated ${new Date().toLocaleTimeString()}`;
        status.classList.remove("error");
      } catch (e) {
        fresh.append(h("p", { class: "error" }, `Error: ${e.message}`));
        status.textContent = "";
      }
      if (mine !== generation) return;  // the user moved on while this page loaded
      fresh.dataset.loaded = "true";
      document.getElementById("main").replaceWith(fresh);
      if (page.refreshS) timer = setTimeout(() => { if (mine === generation) show(); }, page.refreshS * 1000);
    }
    window.addEventListener("hashchange", show);
    show();
  }

  return { h, get, withQuery, size, age, time, pct, kv, table, pager, cursorPager, bars, histogram, lines, raftRoles, start };
})();
