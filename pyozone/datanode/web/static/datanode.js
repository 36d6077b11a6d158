// The datanode's web UI over its JSON APIs (pyozone/datanode/web/api.py), rendered by ozone.js.
// Test hooks: value cells data-field=KEY, tables data-table=NAME with rows data-id=ID, cells classed by
// column (td.state, td.role, ...), pagers data-pager=NAME data-total=N, charts data-chart=NAME.
"use strict";

const { h } = oz;
const ms = (s) => (s === null || s === undefined ? "-" : `${(s * 1000).toFixed(s < 0.01 ? 2 : 1)} ms`);
function duration(secs) {
  const s = Math.abs(Math.round(secs));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}
// An epoch-ms time with how long ago it was, or how long until it comes.
const when = (t) => {
  if (!t) return "-";
  const ahead = (t - Date.now()) / 1000;
  return `${oz.time(t)} (${ahead > 0 ? `in ${duration(ahead)}` : `${duration(ahead)} ago`})`;
};
const card = (label, value, field) =>
  h("div", { class: "card" }, h("div", { class: "value", dataset: { field } }, value), h("div", { class: "label" }, label));
const num = (title, value, cls) => ({ title, value, cls: `num ${cls || ""}` });
// Where the reader is in each pager, so a page that refreshes stays there.
const places = {};
const kept = (name, opts) => ({
  ...opts, offset: places[name] || 0,
  onPage: (answer) => { places[name] = answer.offset; if (opts && opts.onPage) opts.onPage(answer); },
});

async function overview(main) {
  const o = await oz.get("/api/v1/overview");
  main.append(h("h2", {}, "Datanode"), oz.kv([
    ["UUID", o.uuid, "uuid"],
    ["Hostname", o.hostname, "hostname"],
    ["IP address", o.ipAddress, "ipAddress"],
    ["Cluster", o.clusterId || "-", "clusterId"],
    ["SCM", o.scm, "scm"],
    ["Phase", o.phase, "phase"],
    ["Registered with SCM", o.registered ? "yes" : "no", "registered"],
    ["Operational state", h("span", { class: o.operationalState }, o.operationalState), "operationalState"],
    ["Last heartbeat", when(o.lastHeartbeat), "lastHeartbeat"],
    ["Heartbeats answered", o.heartbeats, "heartbeats"],
    ["Ports", Object.entries(o.ports).map(([k, v]) => `${k} ${v}`).join(", ") || "-", "ports"],
  ], "overview"));
  if (o.scms.length > 1) {
    main.append(h("h3", {}, "SCMs of the service"),
      oz.table([
        { title: "SCM", value: (s) => s.node, cls: "node" },
        { title: "address", value: (s) => s.address, cls: "address" },
        { title: "registered", value: (s) => h("span", { class: s.registered ? "ok" : "bad" }, s.registered ? "yes" : "no"), cls: "registered" },
        num("heartbeats answered", (s) => s.heartbeats, "heartbeats"),
        { title: "last heartbeat", value: (s) => when(s.lastHeartbeat), cls: "lastHeartbeat" },
      ], o.scms, "scms", (s) => s.node));
  }
  if (!o.storage) {
    main.append(h("p", { class: "note" }, `No storage yet (${o.phase}): volumes, containers and commands appear once it runs.`));
    return;
  }
  main.append(h("div", { class: "cards" },
    card("data volumes", o.volumes.total, "volumes"),
    card("failed volumes", o.volumes.failed, "failedVolumes"),
    card("full volumes", o.volumes.full, "fullVolumes"),
    card("containers", o.containers.total, "containers"),
    card("pipelines led", o.pipelines.leader, "leaderPipelines"),
    card("pipelines followed", o.pipelines.follower, "followerPipelines"),
    card("commands queued", o.queuedCommands, "queuedCommands")));
  const states = Object.entries(o.containers.byState).map(([state, count]) => ({ state, count }));
  main.append(h("h3", {}, "Containers by state"),
    oz.table([{ title: "state", value: (r) => h("span", { class: r.state }, r.state) }, num("replicas", (r) => r.count, "count")],
      states, "container-states", (r) => r.state));
}

async function volumes(main) {
  const chart = h("div");
  const columns = [
    { title: "directory", value: (v) => v.directory, cls: "directory" },
    { title: "state", value: (v) => h("span", { class: v.state === "FAILED" ? "bad" : v.full ? "warn" : "ok" }, v.full ? "FULL" : v.state), cls: "state" },
    num("capacity", (v) => oz.size(v.capacity), "capacity"),
    num("used", (v) => oz.size(v.used), "used"),
    num("available", (v) => oz.size(v.available), "available"),
    num("reserved", (v) => oz.size(v.reserved), "reserved"),
    num("usage", (v) => oz.pct(v.capacity - v.available, v.capacity), "usage"),
    num("containers", (v) => h("a", { href: "#!/containers" }, v.containers), "containers"),
    { title: "storage", value: (v) => `${v.storageType} ${v.storageId}` },
    { title: "failure", value: (v) => v.failureReason || "" },
  ];
  const label = (v) => v.directory.split("/").slice(-2).join("/");
  const onPage = (answer) => chart.replaceChildren(
    h("h3", {}, "Usage of each volume's capacity: its containers' bytes, and all the space taken on its filesystem"),
    oz.bars(answer.items.flatMap((v) => [
      { label: `${label(v)} containers`, value: v.used, max: v.capacity || 1, cls: v.state === "FAILED" ? "over" : "bar" },
      { label: `${label(v)} taken`, value: v.capacity - v.available, max: v.capacity || 1, cls: v.state === "FAILED" ? "over" : "bar" },
    ]), { format: oz.size, name: "volume-usage" }));
  const pager = oz.pager("/api/v1/volumes", {}, columns, "volumes", (v) => v.directory, kept("volumes", { onPage }));
  main.append(h("h2", {}, "Volumes"), pager, chart);
  await pager.ready;
}

async function containers(main, params) {
  const state = params.state || "";
  const filter = h("select", { id: "container-state", onchange: () => { location.hash = `#!/containers${filter.value ? `?state=${filter.value}` : ""}`; } },
    ["", "OPEN", "CLOSING", "QUASI_CLOSED", "CLOSED", "UNHEALTHY", "INVALID", "RECOVERING"].map((s) => h("option", { value: s, selected: s === state }, s || "every state")));
  const columns = [
    { title: "container", value: (c) => c.containerId, cls: "num id" },
    { title: "state", value: (c) => h("span", { class: c.state }, c.state), cls: "state" },
    num("replica index", (c) => c.replicaIndex, "replicaIndex"),
    num("used", (c) => oz.size(c.usedBytes), "used"),
    num("of", (c) => oz.size(c.maxSize)),
    num("blocks", (c) => c.blockCount, "blocks"),
    num("BCSID", (c) => c.bcsid, "bcsid"),
    { title: "pipeline", value: (c) => c.originPipelineId || "-", cls: "pipeline" },
    { title: "volume", value: (c) => c.volume, cls: "volume" },
    { title: "unhealthy because", value: (c) => c.unhealthyReason || "" },
  ];
  const pager = oz.pager("/api/v1/containers", { state }, columns, "containers", (c) => c.containerId);
  main.append(h("h2", {}, "Containers"), h("p", {}, "State ", filter), pager);
  await pager.ready;
}

async function pipelines(main) {
  const member = (m) => h("div", { class: m.failed ? "bad" : "" },
    `${m.uuid}${m.leader ? " (leader)" : ""}${m.address ? ` at ${m.address}` : ""}`,
    m.matchIndex !== null && m.matchIndex !== undefined ? `, holds up to ${m.matchIndex}` : "",
    m.failed ? `: failed: ${m.failed}` : "");
  const columns = [
    { title: "pipeline", value: (p) => p.pipelineId, cls: "id" },
    { title: "role", value: (p) => p.role, cls: "role" },
    num("term", (p) => p.term, "term"),
    { title: "members", value: (p) => p.members.map(member), cls: "members" },
    num("last index", (p) => (p.lastIndex === null ? "-" : p.lastIndex), "lastIndex"),
    num("commit index", (p) => (p.commitIndex === null ? "-" : p.commitIndex), "commitIndex"),
    num("applied index", (p) => (p.appliedIndex === null ? "-" : p.appliedIndex), "appliedIndex"),
  ];
  const pager = oz.pager("/api/v1/pipelines", {}, columns, "pipelines", (p) => p.pipelineId, kept("pipelines"));
  main.append(h("h2", {}, "Pipelines"),
    h("p", { class: "note" }, "This datanode's role in each pipeline it is a member of, as its Raft member has it: the members elect their leader (SCM's suggested leader first, by priority), and each election starts a new term. On the leader, each member's match index: the last entry it is known to hold."),
    pager);
  await pager.ready;
}

async function commands(main) {
  const c = await oz.get("/api/v1/commands");
  const types = [...new Set([...Object.keys(c.pending), ...Object.keys(c.received)])].sort();
  const ended = (t, r) => (c.outcomes[t] && c.outcomes[t][r]) || 0;
  main.append(h("h2", {}, "Command queue"), oz.kv([
    ["Replication workers", c.replicationWorkers, "replicationWorkers"],
    ["Replication queue limit", c.replicationQueueLimit, "replicationQueueLimit"],
    ["Highest SCM term seen", c.maxTerm, "maxTerm"],
  ], "queue"),
  h("h3", {}, "By type"),
  oz.table([
    { title: "type", value: (t) => t, cls: "type" },
    num("queued or running", (t) => c.pending[t] || 0, "pending"),
    num("received", (t) => c.received[t] || 0, "received"),
    num("succeeded", (t) => ended(t, "succeeded"), "succeeded"),
    num("failed", (t) => ended(t, "failed"), "failed"),
    num("dropped", (t) => ended(t, "dropped"), "dropped"),
  ], types, "command-types", (t) => t));
  const columns = [
    { title: "when", value: (o) => oz.time(o.at) },
    { title: "type", value: (o) => o.type, cls: "type" },
    num("id", (o) => o.id, "id"),
    { title: "result", value: (o) => h("span", { class: o.result === "succeeded" ? "ok" : o.result === "failed" ? "bad" : "warn" }, o.result), cls: "result" },
    num("took", (o) => ms(o.seconds), "seconds"),
    { title: "reason", value: (o) => o.reason || "" },
  ];
  const pager = oz.pager("/api/v1/commands/recent", {}, columns, "commands-recent", (o) => `${o.type}-${o.id}`, kept("commands-recent", { limit: 25 }));
  main.append(h("h3", {}, "Recently ended"), pager);
  await pager.ready;
}

async function scanner(main) {
  const s = await oz.get("/api/v1/scanner");
  const pass = s.scanning
    ? `scanning: ${s.passScanned} of ${s.passContainers} containers since ${oz.time(s.passStarted)}`
    : s.passEnded ? `${s.passScanned} of ${s.passContainers} containers, ${oz.time(s.passStarted)} to ${oz.time(s.passEnded)}` : "none yet";
  main.append(h("h2", {}, "Container data scanner"), oz.kv([
    ["Enabled", s.enabled ? "yes" : "no (hdds.container.scrub.enabled)", "enabled"],
    ["Interval", duration(s.intervalSeconds), "interval"],
    ["Bandwidth per volume", `${oz.size(s.bandwidthBytesPerSecond)}/s`, "bandwidth"],
    ["Passes", s.passes, "passes"],
    ["Containers scanned", s.containersScanned, "containersScanned"],
    ["Unhealthy found", h("span", { class: s.unhealthyFound ? "bad" : "ok" }, s.unhealthyFound), "unhealthyFound"],
    ["Bytes scanned", oz.size(s.bytesScanned), "bytesScanned"],
    [s.scanning ? "This pass" : "Last pass", pass, "pass"],
    ["Found unhealthy in it", s.passUnhealthy.length ? s.passUnhealthy.join(", ") : "none", "passUnhealthy"],
    ["Next pass", s.scanning ? "after this one" : when(s.nextPass), "nextPass"],
  ], "scanner"));
}

async function latency(main) {
  const l = await oz.get("/api/v1/latency");
  const row = (name, r) => ({ volume: name, ...r });
  const rows = [row("all volumes", l.all), ...l.items];
  const cols = (kind) => [
    num(`${kind}s`, (r) => r[kind].count, `${kind}-count`),
    ...["p50", "p90", "p99"].map((p) => num(`${kind} ${p}`, (r) => ms(r[kind][p]), `${kind}-${p}`)),
  ];
  const bars = ["write", "read"].flatMap((kind) => ["p50", "p90", "p99"].map((p) => ({ label: `${kind} ${p}`, value: l.all[kind][p] || 0 })));
  main.append(h("h2", {}, "Chunk latency"),
    h("p", { class: "note" }, "Percentiles estimated from the datanode_chunk_write_seconds and datanode_chunk_read_seconds histograms (every chunk since the datanode started): the time a chunk's bytes take to reach or come from its block file."),
    oz.table([{ title: "volume", value: (r) => r.volume, cls: "volume" }, ...cols("write"), ...cols("read")], rows, "latency", (r) => r.volume),
    oz.bars(bars, { format: ms, name: "latency", max: Math.max(...bars.map((b) => b.value)) || 1 }));
}

oz.start("HDDS Datanode", [
  { route: "overview", title: "Overview", render: overview, refreshS: 5 },
  { route: "volumes", title: "Volumes", render: volumes, refreshS: 10 },
  { route: "containers", title: "Containers", render: containers },
  { route: "pipelines", title: "Pipelines", render: pipelines, refreshS: 10 },
  { route: "commands", title: "Commands", render: commands, refreshS: 5 },
  { route: "scanner", title: "Scanner", render: scanner, refreshS: 10 },
  { route: "latency", title: "Latency", render: latency, refreshS: 10 },
]);
