// om.js: the Ozone Manager's pages, over its JSON APIs (pyozone/om/server/web/api.py lists them).
// Volumes, buckets and keys are browsed a page at a time by cursor (om.db is RocksDB: a page starts after
// a name); every value a test reads is in a data-field element or a data-table row (data-id = its name).
"use strict";

(() => {
  const { h } = oz;
  const enc = encodeURIComponent;
  const cleaned = (params) => Object.fromEntries(Object.entries(params).filter(([, v]) => v));
  const link = (route, params, text) => h("a", { href: `#!/${route}?${new URLSearchParams(cleaned(params))}` }, text);
  const quota = (q, format) => (q === -1 || q === null || q === undefined ? "none" : format(q));
  const num = (n) => String(n);
  const atLeast = (n, capped) => (capped ? `${n}+` : String(n));
  const replication = (r) => (r.replicationType === "EC"
    ? `EC/${r.codec}-${r.data}-${r.parity}-${Math.round(r.ecChunkSize / 1024)}k`
    : `${r.replicationType}/${r.replicationFactor}`);

  function go(route, params) {
    const q = new URLSearchParams(cleaned(params)).toString();
    location.hash = `#!/${route}${q ? `?${q}` : ""}`;
  }

  function cards(items) {
    return h("div", { class: "cards" }, items.map(([label, value, field]) =>
      h("div", { class: "card" }, h("div", { class: "value", dataset: { field } }, value), h("div", { class: "label" }, label))));
  }

  // Usage against a quota: "1.2 MB of 10 GB (12.0 %)", or the usage alone without a quota.
  const usage = (used, limit, format) => (limit === -1 ? format(used) : `${format(used)} of ${format(limit)} (${oz.pct(used, limit)})`);

  // Where each list was (by path and filters): a page renders anew at each refresh, the reader's place stays.
  const places = new Map();
  async function pager(main, path, params, columns, name, rowId) {
    const query = cleaned(params);
    const key = `${path}?${new URLSearchParams(query)}`;
    const place = places.get(key) || {};
    const box = oz.cursorPager(path, query, columns, name, rowId,
      { limit: 50, start: place.start, back: place.back, onPage: (_, at) => places.set(key, at) });
    main.append(box);
    await box.ready;
  }

  // A form of text inputs that goes to `route` with their values. What is being typed survives the page's
  // refresh (drafts, and the focus), so a refresh never eats a half-typed filter.
  const drafts = new Map();
  let typing = null;
  function form(route, fields, button) {
    const inputs = fields.map(([name, label, value, size]) => {
      const id = `${route}-${name}`;
      const draft = drafts.get(id);
      const mine = draft && draft.at === location.hash;  // the same page refreshing, not a new visit
      const input = h("input", { id, value: mine ? draft.value : value || "", size: size || 16 });
      input.addEventListener("input", () => drafts.set(id, { at: location.hash, value: input.value }));
      input.addEventListener("focus", () => { typing = id; });
      input.addEventListener("blur", () => { if (typing === id) typing = null; });
      if (typing === id) setTimeout(() => { input.focus(); input.setSelectionRange(input.value.length, input.value.length); });
      return [name, label, input];
    });
    const submit = () => {
      for (const [name] of inputs) drafts.delete(`${route}-${name}`);
      go(route, Object.fromEntries(inputs.map(([name, , input]) => [name, input.value.trim()])));
    };
    for (const [, , input] of inputs) input.addEventListener("keydown", (e) => { if (e.key === "Enter") submit(); });
    return h("p", {}, inputs.flatMap(([, label, input]) => [`${label} `, input, " "]), h("button", { id: `${route}-show`, onclick: submit }, button));
  }

  // ------------------------------------------------------------------ overview
  async function overview(main) {
    const [o, r] = await Promise.all([oz.get("/api/v1/overview"), oz.get("/api/v1/ratis")]);
    main.append(
      h("h2", {}, "Ozone Manager"),
      oz.kv([
        ["cluster ID", o.clusterId, "clusterId"],
        ["OM ID", o.omId, "omId"],
        ["client protocol", o.rpcAddress, "rpcAddress"],
        ["serving", o.serving ? "yes" : "no", "serving"],
      ], "ids"),
      ...oz.raftRoles(r, "OM", "ozone.om.service.ids", "executes requests"),
      cards([
        ["volumes", num(o.volumes), "volumes"],
        ["buckets", num(o.buckets), "buckets"],
        ["keys", num(o.keys), "keys"],
        ["used (replicated)", oz.size(o.usedBytes), "usedBytes"],
        ["open keys", atLeast(o.openKeys, o.openKeysCapped), "openKeys"],
        ["keys to delete", atLeast(o.pendingDeletions, o.pendingDeletionsCapped), "pendingDeletions"],
      ]),
      h("p", { class: "note" }, `Counted ${oz.age(o.countedAt)} in ${(o.countSeconds * 1000).toFixed(1)} ms; keys are the buckets' counts.`),
      h("h3", {}, "Requests since OM started"));
    const requests = [...o.requests].sort((a, b) => b.count - a.count);
    if (requests.length) main.append(oz.bars(requests.slice(0, 20).map((r) => ({ label: r.type, value: r.count })), { name: "requests" }));
    main.append(oz.table([
      { title: "type", value: (r) => r.type },
      { title: "requests", cls: "num", value: (r) => r.count },
      { title: "failed", cls: "num", value: (r) => h("span", { class: r.failures ? "bad" : "" }, r.failures) },
      { title: "mean", cls: "num", value: (r) => (r.count ? `${((1000 * r.seconds) / r.count).toFixed(2)} ms` : "-") },
    ], requests, "requests", (r) => r.type));
  }

  // ------------------------------------------------------------------ volumes, buckets, keys
  async function volumes(main, params) {
    main.append(h("h2", {}, "Volumes"), form("volumes", [["prefix", "name starts with", params.prefix]], "filter"));
    await pager(main, "/api/v1/volumes", { prefix: params.prefix }, [
      { title: "volume", value: (v) => link("buckets", { volume: v.name }, v.name) },
      { title: "owner", value: (v) => v.owner },
      { title: "used", cls: "num", value: (v) => usage(v.usedBytes, v.quotaInBytes, oz.size) },
      { title: "space quota", cls: "num", value: (v) => quota(v.quotaInBytes, oz.size) },
      { title: "buckets", cls: "num", value: (v) => usage(v.usedNamespace, v.quotaInNamespace, num) },
      { title: "bucket quota", cls: "num", value: (v) => quota(v.quotaInNamespace, num) },
      { title: "created", value: (v) => v.creationTime },
    ], "volumes", (v) => v.name);
  }

  async function buckets(main, params) {
    main.append(h("h2", {}, "Buckets"), form("buckets", [["volume", "volume", params.volume], ["prefix", "name starts with", params.prefix]], "show"));
    if (!params.volume) { main.append(h("p", { class: "note" }, "Choose a volume (or one on the Volumes page).")); return; }
    const v = await oz.get(`/api/v1/volumes/${enc(params.volume)}`);
    main.append(oz.kv([
      ["volume", v.name, "volumeName"],
      ["owner", v.owner, "owner"],
      ["space used (replicated)", usage(v.usedBytes, v.quotaInBytes, oz.size), "usedBytes"],
      ["space quota", quota(v.quotaInBytes, oz.size), "quotaInBytes"],
      ["buckets", usage(v.usedNamespace, v.quotaInNamespace, num), "usedNamespace"],
      ["bucket quota", quota(v.quotaInNamespace, num), "quotaInNamespace"],
      ["created", v.creationTime, "creationTime"],
      ["modified", v.modificationTime, "modificationTime"],
    ], "volume"));
    await pager(main, `/api/v1/volumes/${enc(params.volume)}/buckets`, { prefix: params.prefix }, [
      { title: "bucket", value: (b) => link("keys", { volume: b.volumeName, bucket: b.name }, b.name) },
      { title: "owner", value: (b) => b.owner },
      { title: "replication", value: (b) => replication(b.replicationConfig) },
      { title: "layout", value: (b) => b.bucketLayout },
      { title: "used", cls: "num", value: (b) => usage(b.usedBytes, b.quotaInBytes, oz.size) },
      { title: "space quota", cls: "num", value: (b) => quota(b.quotaInBytes, oz.size) },
      { title: "keys", cls: "num", value: (b) => usage(b.usedNamespace, b.quotaInNamespace, num) },
      { title: "key quota", cls: "num", value: (b) => quota(b.quotaInNamespace, num) },
      { title: "created", value: (b) => b.creationTime },
    ], "buckets", (b) => b.name);
  }

  async function keys(main, params) {
    main.append(h("h2", {}, "Keys"), form("keys", [
      ["volume", "volume", params.volume], ["bucket", "bucket", params.bucket], ["prefix", "name starts with", params.prefix, 30]], "show"));
    if (!params.volume || !params.bucket) { main.append(h("p", { class: "note" }, "Choose a volume and a bucket.")); return; }
    const where = `/api/v1/volumes/${enc(params.volume)}/buckets/${enc(params.bucket)}`;
    const b = await oz.get(where);
    main.append(oz.kv([
      ["bucket", [link("buckets", { volume: b.volumeName }, b.volumeName), ` / ${b.name}`], "bucketName"],
      ["replication", replication(b.replicationConfig), "replication"],
      ["space used (replicated)", usage(b.usedBytes, b.quotaInBytes, oz.size), "usedBytes"],
      ["space quota", quota(b.quotaInBytes, oz.size), "quotaInBytes"],
      ["keys", usage(b.usedNamespace, b.quotaInNamespace, num), "usedNamespace"],
      ["key quota", quota(b.quotaInNamespace, num), "quotaInNamespace"],
    ], "bucket"));
    await pager(main, `${where}/keys`, { prefix: params.prefix }, [
      { title: "key", value: (k) => link("key", { volume: k.volumeName, bucket: k.bucketName, key: k.name }, k.name) },
      { title: "size", cls: "num", value: (k) => oz.size(k.dataSize) },
      { title: "replication", value: (k) => replication(k.replicationConfig) },
      { title: "modified", value: (k) => k.modificationTime },
    ], "keys", (k) => k.name);
  }

  async function key(main, params) {
    main.append(h("h2", {}, "Key"), form("key", [
      ["volume", "volume", params.volume], ["bucket", "bucket", params.bucket], ["key", "key", params.key, 40]], "show"));
    if (!params.volume || !params.bucket || !params.key) return;
    const k = await oz.get(`/api/v1/volumes/${enc(params.volume)}/buckets/${enc(params.bucket)}/key?name=${enc(params.key)}`);
    main.append(oz.kv([
      ["key", k.name, "name"],
      ["bucket", link("keys", { volume: k.volumeName, bucket: k.bucketName }, `${k.volumeName}/${k.bucketName}`), "bucket"],
      ["size", `${oz.size(k.dataSize)} (${k.dataSize} bytes)`, "dataSize"],
      ["replication", replication(k.replicationConfig), "replication"],
      ["created", k.creationTime, "creationTime"],
      ["modified", k.modificationTime, "modificationTime"],
      ["blocks", k.ozoneKeyLocations.length, "blocks"],
    ], "key"),
    h("h3", {}, "Locations"),
    oz.table([
      { title: "container", cls: "num", value: (l) => l.containerID },
      { title: "local ID", cls: "num", value: (l) => l.localID },
      { title: "offset", cls: "num", value: (l) => l.offset },
      { title: "length", cls: "num", value: (l) => l.length },
      { title: "BCSID", cls: "num", value: (l) => l.blockCommitSequenceId },
      { title: "container state", value: (l) => h("span", { class: l.containerState }, l.containerState || "unknown") },
      { title: "pipeline", value: (l) => l.pipelineID || "-" },
      { title: "datanodes", value: (l) => l.datanodes.map((d) => d.hostname || d.ipAddress || d.uuid).join(", ") || "-" },
    ], k.ozoneKeyLocations, "locations", (l) => `${l.containerID}-${l.localID}`));
  }

  // ------------------------------------------------------------------ open keys and the deleting services
  async function openKeys(main, params) {
    main.append(h("h2", {}, "Open keys"),
      h("p", { class: "note" }, "Keys being written: allocated, not yet committed. OpenKeyCleanupService abandons them past ozone.om.open.key.expire.threshold."),
      form("openkeys", [["prefix", "/volume/bucket/key starts with", params.prefix, 30]], "filter"));
    await pager(main, "/api/v1/openkeys", { prefix: params.prefix }, [
      { title: "volume", value: (k) => k.volumeName },
      { title: "bucket", value: (k) => k.bucketName },
      { title: "key", value: (k) => k.name },
      { title: "client ID", cls: "num", value: (k) => k.clientID },
      { title: "blocks", cls: "num", value: (k) => k.blocks },
      { title: "announced size", cls: "num", value: (k) => oz.size(k.dataSize) },
      { title: "opened", value: (k) => k.creationTime },
    ], "openkeys", (k) => k.openKey);
  }

  async function services(main) {
    const s = await oz.get("/api/v1/services");
    const d = s.keyDeleting, c = s.openKeyCleanup, l = s.s3Lifecycle;
    const every = (ms) => {
      for (const [unit, size] of [["d", 86400000], ["h", 3600000], ["min", 60000]]) if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
      return `${ms / 1000} s`;
    };
    main.append(
      h("h2", {}, "Deleting services"),
      h("h3", {}, "KeyDeletingService"),
      h("p", { class: "note" }, "Hands the blocks of deleted, replaced and abandoned keys to SCM; an entry leaves deletedTable once SCM took all its blocks."),
      oz.kv([
        ["runs every", every(d.intervalMs), "keyDeleting.intervalMs"],
        ["entries per run at most", d.limitPerRun, "keyDeleting.limitPerRun"],
        ["runs", d.runs, "keyDeleting.runs"],
        ["runs SCM could not be asked in", h("span", { class: d.failedRuns ? "bad" : "" }, d.failedRuns), "keyDeleting.failedRuns"],
        ["entries handed to SCM", d.keysProcessed, "keyDeleting.keysProcessed"],
        ["entries purged", d.keysPurged, "keyDeleting.keysPurged"],
        ["entries pending", atLeast(d.pendingKeys, d.pendingKeysCapped), "keyDeleting.pendingKeys"],
        ["last run", d.lastRun ? `${oz.time(d.lastRun)} (${oz.age(d.lastRun)})` : "not yet", "keyDeleting.lastRun"],
        ["last error", d.lastError || "-", "keyDeleting.lastError"],
      ], "keyDeleting"),
      h("h3", {}, "OpenKeyCleanupService"),
      h("p", { class: "note" }, "Abandons open keys older than the expiry threshold (a writer that died): their blocks go to deletedTable."),
      oz.kv([
        ["runs every", every(c.intervalMs), "openKeyCleanup.intervalMs"],
        ["open keys expire after", every(c.expireThresholdMs), "openKeyCleanup.expireThresholdMs"],
        ["keys per run at most", c.limitPerRun, "openKeyCleanup.limitPerRun"],
        ["runs", c.runs, "openKeyCleanup.runs"],
        ["open keys expired", c.keysExpired, "openKeyCleanup.keysExpired"],
        ["open keys now", atLeast(c.openKeys, c.openKeysCapped), "openKeyCleanup.openKeys"],
        ["last run", c.lastRun ? `${oz.time(c.lastRun)} (${oz.age(c.lastRun)})` : "not yet", "openKeyCleanup.lastRun"],
      ], "openKeyCleanup"),
      h("h3", {}, "S3LifecycleService"),
      h("p", { class: "note" }, "Applies buckets' S3 lifecycle rules on the leader: expires objects and noncurrent versions, removes expired delete markers, aborts incomplete uploads."),
      oz.kv([
        ["runs every", every(l.intervalMs), "s3Lifecycle.intervalMs"],
        ["actions per run at most", l.limitPerRun, "s3Lifecycle.limitPerRun"],
        ["runs", l.runs, "s3Lifecycle.runs"],
        ["objects expired", l.keysExpired, "s3Lifecycle.keysExpired"],
        ["noncurrent versions expired", l.versionsExpired, "s3Lifecycle.versionsExpired"],
        ["delete markers removed", l.markersRemoved, "s3Lifecycle.markersRemoved"],
        ["uploads aborted", l.uploadsAborted, "s3Lifecycle.uploadsAborted"],
        ["last run", l.lastRun ? `${oz.time(l.lastRun)} (${oz.age(l.lastRun)}, ${l.lastRunDurationMs} ms)` : "not yet", "s3Lifecycle.lastRun"],
      ], "s3Lifecycle"));
  }

  oz.start("Ozone Manager", [
    { route: "overview", title: "Overview", render: overview, refreshS: 5 },
    { route: "volumes", title: "Volumes", render: volumes, refreshS: 10 },
    { route: "buckets", title: "Buckets", render: buckets, refreshS: 10 },
    { route: "keys", title: "Keys", render: keys, refreshS: 10 },
    { route: "key", title: "Key", render: key },
    { route: "openkeys", title: "Open keys", render: openKeys, refreshS: 5 },
    { route: "services", title: "Deleting services", render: services, refreshS: 5 },
  ]);
})();
