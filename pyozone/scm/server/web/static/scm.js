// scm.js: the Storage Container Manager's pages, over its JSON APIs (pyozone/scm/server/web/api.py lists
// them). ozone.js renders: every value a test reads is in a data-field element or a data-table row.
// Pages fetch only what they show: lists come a page at a time, so 5,000 datanodes and 1M containers
// render as fast as five and a hundred.
"use strict";

(() => {
  const { h } = oz;
  const LIFECYCLE = ["OPEN", "CLOSING", "QUASI_CLOSED", "CLOSED", "DELETING", "DELETED", "RECOVERING"];
  const HEALTH = ["HEALTHY", "STALE", "DEAD", "HEALTHY_READONLY"];
  const OP_STATES = ["IN_SERVICE", "ENTERING_MAINTENANCE", "IN_MAINTENANCE", "DECOMMISSIONING", "DECOMMISSIONED"];
  const PIPELINE_STATES = ["ALLOCATED", "OPEN", "DORMANT", "CLOSED"];
  const BARS_MAX = 50;  // more datanodes than this: a histogram instead of one bar each
  const BINS = 20;
  const ROW = "display: flex; flex-wrap: wrap; gap: 0 28px; align-items: flex-start";  // sections side by side

  // ------------------------------------------------------------------ shared bits
  const state = (name, field) => h("span", { class: name, dataset: field ? { field } : {} }, name);
  const percent = (v) => (v === null || v === undefined ? "-" : `${Number(v).toFixed(2)} %`);
  const count = (n, one, many) => `${n} ${n === 1 ? one : many || `${one}s`}`;
  const containerLink = (id) => h("a", { href: `#!/container?id=${id}`, dataset: { container: id } }, `#${id}`);

  // How long ago, from milliseconds SCM measured on its own clock (right in the simulator too).
  function ago(ms) {
    const s = Math.round(ms / 1000);
    if (s < 120) return `${s}s ago`;
    if (s < 7200) return `${Math.round(s / 60)}m ago`;
    return `${Math.round(s / 3600)}h ago`;
  }

  const cleaned = (params) => Object.fromEntries(Object.entries(params).filter(([, v]) => v));
  function go(route, params) {
    const q = new URLSearchParams(cleaned(params)).toString();
    location.hash = `#!/${route}${q ? `?${q}` : ""}`;
  }

  // A filter kept in the route's query, so the page's refresh keeps it.
  function choice(route, params, name, label, options) {
    const select = h("select", { id: `filter-${name}`, onchange: () => go(route, { ...params, [name]: select.value }) },
      h("option", { value: "" }, "all"),
      options.map((o) => h("option", { value: o, selected: params[name] === o }, o)));
    return h("label", { class: "filter" }, `${label} `, select, "  ");
  }

  // Where each list was (by its filters): a page renders anew at every refresh, the reader's place stays.
  const places = new Map();
  async function pager(main, path, params, columns, name, rowId, limit) {
    const query = cleaned(params);
    const key = `${name}?${new URLSearchParams(query)}`;
    const box = oz.pager(path, query, columns, name, rowId,
      { limit: limit || 25, offset: places.get(key) || 0, onPage: (a) => places.set(key, a.offset) });
    main.append(box);
    await box.ready;
  }

  function cards(items) {
    return h("div", { class: "cards" }, items.map(([label, value, field]) =>
      h("div", { class: "card" }, h("div", { class: "value", dataset: { field } }, value), h("div", { class: "label" }, label))));
  }

  // ------------------------------------------------------------------ overview
  // The overview with this SCM in its HA service (/api/v1/ratis: role, term, leader, commit index, each
  // follower's lag; ozone.js raftRoles, as OM's page shows its own).
  async function overview(main) {
    const [o, r] = await Promise.all([oz.get("/api/v1/overview"), oz.get("/api/v1/ratis")]);
    const d = o.datanodes, u = o.usage, rm = o.replicationManager;
    main.append(
      h("h2", {}, "Overview"),
      oz.kv([
        ["Cluster ID", o.clusterId, "clusterId"],
        ["SCM ID", o.scmId, "scmId"],
        ["Safe mode", o.inSafeMode ? "in safe mode" : "out of safe mode", "safeMode"],
        ["Replication Manager", `${rm.running ? "running" : "stopped"}; last report ${rm.reportTimeStamp ? oz.time(rm.reportTimeStamp) : "not yet"}`, "replicationManager"],
      ], "cluster"),
      ...oz.raftRoles(r, "SCM", "ozone.scm.service.ids", "serves as the leader"),
      cards([
        ["datanodes", d.total, "datanodes"],
        ["capacity", oz.size(o.capacity), "capacity"],
        ["used", `${oz.size(o.used)} (${oz.pct(o.used, o.capacity)})`, "used"],
        ["remaining", oz.size(o.remaining), "remaining"],
        ["open RATIS/THREE pipelines", o.pipelines.openRatisThree, "openRatisThree"],
        ["containers", o.containers.total, "containers"],
      ]),
      h("div", { style: ROW },
        h("section", {}, h("h3", {}, "Datanodes by health"),
          oz.kv(HEALTH.map((s) => [state(s), d.health[s], `health.${s}`]), "datanode-health")),
        h("section", {}, h("h3", {}, "Datanodes by operational state"),
          oz.kv(OP_STATES.map((s) => [state(s), d.operationalState[s], `op.${s}`]), "datanode-op-states")),
        h("section", {}, h("h3", {}, "Datanode usage"),
          oz.kv([
            ["min", percent(u.min), "usage.min"],
            ["median", percent(u.median), "usage.median"],
            ["max", percent(u.max), "usage.max"],
            ["standard deviation", percent(u.stdev), "usage.stdev"],
          ], "usage"),
          h("p", { class: "note" }, `The used share of each healthy in-service`, h("br"), `datanode's capacity (${count(u.datanodes, "datanode")}).`)),
        h("section", {}, h("h3", {}, "Containers by state"),
          oz.kv(LIFECYCLE.map((s) => [state(s), o.containers[s], `containers.${s}`]), "container-states"))));
  }

  // ------------------------------------------------------------------ pipelines (Pipeline Statistics)
  function alignment(s) {
    if (s.target === null) return "-";
    const diff = s.openRatisThree - s.target;
    if (diff === 0) return h("span", { class: "ok" }, "on target");
    return h("span", { class: "warn" }, `${Math.abs(diff)} ${diff < 0 ? "below" : "above"} the target`);
  }

  function clusterLimit(c) {
    if (c.branch === "datanode") return `${c.allowed}: floor(ozone.scm.datanode.pipeline.limit × healthy datanodes / 3); ozone.scm.ratis.pipeline.limit is not consulted`;
    if (c.branch === "global") return `${c.allowed}: ozone.scm.ratis.pipeline.limit less the RATIS/ONE pipelines`;
    return "none (ozone.scm.ratis.pipeline.limit = 0)";
  }

  function planSteps(planner, datanodes) {
    if (planner.error) return [h("p", { class: "bad", dataset: { field: "plan" } }, `The planner failed on these datanodes: ${planner.error}`)];
    if (planner.plan === null) return [h("p", { class: "note", dataset: { field: "plan" } }, `Computing the target for ${count(datanodes, "datanode")}…`)];
    const p = planner.plan;
    const when = planner.current ? "" : " It was made for an earlier set of datanodes; a new one is being computed.";
    return [
      h("p", { class: "note" }, `The planner of \`pyozone plan pipelines\` ran SCM's own pipeline creator and placement on the ${count(p.datanodes, "healthy in-service datanode")} (${count(p.racks, "rack")}) in ${planner.seconds} s.${when}`),
      oz.table([{ title: "#", value: (r) => r.n }, { title: "step", value: (r) => h("span", { dataset: { field: `step.${r.n}` } }, r.text) }],
        p.steps.map((text, i) => ({ n: i + 1, text })), "plan-steps", (r) => r.n),
    ];
  }

  function stateTable(rows) {
    const cell = (r, s) => h("span", { dataset: { field: `${r.replicationConfig}.${s}` } }, r.states[s]);
    return oz.table([
      { title: "replication", value: (r) => r.replicationConfig },
      ...PIPELINE_STATES.map((s) => ({ title: s, cls: "num", value: (r) => cell(r, s) })),
      { title: "total", cls: "num", value: (r) => h("span", { dataset: { field: `${r.replicationConfig}.total` } }, r.total) },
    ], rows, "pipeline-states", (r) => r.replicationConfig);
  }

  const memberNames = (p) => p.nodes.map((n) => (n.hostname || n.uuid) + (n.replicaIndex ? `#${n.replicaIndex}` : "")).join(", ");
  const leaderName = (p) => {
    const leader = p.nodes.find((n) => n.uuid === p.leaderId);
    return leader ? leader.hostname || leader.uuid : p.leaderId || "-";
  };

  async function pipelines(main, params) {
    const s = await oz.get("/api/v1/pipelines/statistics");
    const limits = s.datanodeLimits;
    main.append(
      h("h2", {}, "Pipeline Statistics"),
      h("p", { class: "note" }, "Whether the actual number of open RATIS/THREE pipelines aligns with the configured targets: the limits in force, the target they give computed step by step, and each datanode against its own limit."),
      oz.kv([
        ["Open RATIS/THREE pipelines", s.openRatisThree, "openRatisThree"],
        ["Target", s.target === null ? "being computed" : s.target, "target"],
        ["Actual against target", alignment(s), "alignment"],
        ["RATIS/THREE pipelines the limits count (not CLOSED)", s.liveRatisThree, "liveRatisThree"],
        ["Healthy in-service datanodes", s.healthyInServiceDatanodes, "healthyInServiceDatanodes"],
      ], "pipeline-target"),
      h("h3", {}, "Limits in force"),
      oz.kv([...Object.entries(s.limits).map(([k, v]) => [k, String(v), k]), ["cluster-level limit on RATIS/THREE", clusterLimit(s.clusterLimit), "clusterLimit"]], "pipeline-limits"),
      h("h3", {}, "How the target is computed"),
      ...planSteps(s.planner, s.healthyInServiceDatanodes),
      h("h3", {}, "Pipelines per state and type"),
      stateTable(s.pipelines),
      h("h3", {}, "Datanodes against their own limit"),
      oz.kv([
        ["below their limit", limits.belowLimit, "limits.belowLimit"],
        ["at their limit", limits.atLimit, "limits.atLimit"],
        ["over their limit", limits.overLimit, "limits.overLimit"],
        ["limit 0 (no healthy volume)", limits.noLimit, "limits.noLimit"],
        ["not healthy or not in service", limits.notPlaceable, "limits.notPlaceable"],
      ], "datanode-limits"));
    await pager(main, "/api/v1/pipelines/datanodes", {}, [
      { title: "datanode", value: (n) => n.hostname },
      { title: "rack", value: (n) => n.networkLocation },
      { title: "health", value: (n) => state(n.healthState) },
      { title: "RATIS/THREE", cls: "num", value: (n) => h("span", { class: n.ratisThree > n.limit ? "bad" : "", dataset: { field: "ratisThree" } }, n.ratisThree) },
      { title: "limit", cls: "num", value: (n) => h("span", { dataset: { field: "limit" } }, n.limit) },
      { title: "all pipelines", cls: "num", value: (n) => n.pipelines },
      { title: "metadata volumes", cls: "num", value: (n) => n.metadataVolumes },
    ], "pipeline-datanodes", (n) => n.uuid, 20);
    main.append(h("h3", {}, "Pipelines"), h("p", {},
      choice("pipelines", params, "state", "state", PIPELINE_STATES),
      choice("pipelines", params, "replication", "replication", s.pipelines.map((r) => r.replicationConfig))));
    await pager(main, "/api/v1/pipelines", { state: params.state, replication: params.replication }, [
      { title: "pipeline", value: (p) => p.id },
      { title: "replication", value: (p) => p.replicationConfig },
      { title: "state", value: (p) => state(p.state) },
      { title: "leader", value: leaderName },
      { title: "members", value: memberNames },
      { title: "created", value: (p) => oz.time(p.creationTimestamp) },
    ], "pipelines", (p) => p.id);
  }

  // ------------------------------------------------------------------ datanodes
  function commandQueue(q) {
    const part = (label, counts) => Object.entries(counts).map(([t, n]) => `${label} ${t} ${n}`);
    const all = [...part("at SCM:", q.queuedInScm), ...part("on the node:", q.reportedByDatanode)];
    return all.length ? all.join("; ") : "-";
  }

  function progress(p) {
    if (!p) return "-";
    return `${p.containersLeft} containers left (${p.underReplicated} under-replicated, ${p.unclosed} unclosed); ${p.sufficientlyReplicated} done; ${p.pipelinesWaitingToClose} pipelines closing`;
  }

  function volumes(n) {
    const where = n.volumes.map((v) => `${v.location}${v.failed ? " (failed)" : ""}: ${oz.size(v.used)} of ${oz.size(v.capacity)}`).join("\n");
    return h("span", { title: where }, `${n.healthyVolumes} healthy, ${n.failedVolumes} failed; ${n.metadataVolumes.length} metadata`);
  }

  async function datanodes(main, params) {
    main.append(h("h2", {}, "Datanodes"), h("p", {},
      choice("datanodes", params, "health", "health", HEALTH),
      choice("datanodes", params, "opState", "operational state", OP_STATES)));
    await pager(main, "/api/v1/datanodes", { health: params.health, opState: params.opState }, [
      { title: "hostname", value: (n) => h("span", { title: n.uuid }, n.hostname) },
      { title: "IP", value: (n) => n.ipAddress },
      { title: "rack", value: (n) => n.networkLocation },
      { title: "health", value: (n) => state(n.healthState, "healthState") },
      { title: "operational state", value: (n) => state(n.operationalState, "operationalState") },
      { title: "last heartbeat", value: (n) => h("span", { title: oz.time(n.lastHeartbeat), dataset: { field: "lastHeartbeat" } }, ago(n.lastHeartbeatAgoMs)) },
      { title: "pipelines", cls: "num", value: (n) => n.pipelines },
      { title: "containers", cls: "num", value: (n) => n.containers },
      { title: "used", value: (n) => `${oz.size(n.used)} of ${oz.size(n.capacity)} (${oz.pct(n.used, n.capacity)})` },
      { title: "volumes", value: volumes },
      { title: "command queue", value: (n) => commandQueue(n.commandQueue) },
      { title: "decommission / maintenance", value: (n) => h("span", { dataset: { field: "adminProgress" } }, progress(n.adminProgress)) },
    ], "datanodes", (n) => n.uuid);
  }

  // ------------------------------------------------------------------ containers
  async function containers(main, params) {
    const r = await oz.get("/api/v1/containers/report");
    const health = Object.keys(r.stats).filter((s) => !LIFECYCLE.includes(s) && s !== "HEALTHY");
    const sampled = health.filter((s) => r.samples[s] && r.samples[s].length);
    main.append(
      h("h2", {}, "Containers"),
      h("h3", {}, "Replication Manager report"),
      h("p", { class: "note", dataset: { field: "reportTimeStamp" } }, r.reportTimeStamp
        ? `Container Summary Report generated at ${oz.time(r.reportTimeStamp)}`
        : "The Container Report is not available until Replication Manager completes its first run after startup or fail over. All values will be zero until that time."),
      h("div", { style: ROW },
        h("section", {}, h("h3", {}, "Container State Summary"),
          oz.kv(LIFECYCLE.map((s) => [state(s), r.stats[s], `state.${s}`]), "report-states")),
        h("section", {}, h("h3", {}, "Container Health Summary"),
          oz.kv(health.map((s) => [s, r.stats[s], `health.${s}`]), "report-health")),
        h("section", { style: "max-width: 560px" }, h("h3", {}, `Sample containers (the first ${r.sampleLimit} of each)`),
          oz.table([
            { title: "health", value: (s) => s },
            { title: "containers", value: (s) => r.samples[s].flatMap((id, i) => (i ? [", ", containerLink(id)] : [containerLink(id)])) },
          ], sampled, "report-samples", (s) => s))),
      h("h3", {}, "All containers"),
      h("p", {}, choice("containers", params, "state", "state", LIFECYCLE)));
    await pager(main, "/api/v1/containers", { state: params.state }, [
      { title: "container", value: (c) => containerLink(c.containerID) },
      { title: "state", value: (c) => state(c.state) },
      { title: "replication", value: (c) => c.replicationConfig },
      { title: "used", cls: "num", value: (c) => oz.size(c.usedBytes) },
      { title: "keys", cls: "num", value: (c) => c.numberOfKeys },
      { title: "BCSID", cls: "num", value: (c) => c.sequenceId },
      { title: "pipeline", value: (c) => c.pipelineID || "-" },
      { title: "owner", value: (c) => c.owner },
    ], "containers", (c) => c.containerID);
  }

  let typedId = null;  // what the reader is typing survives the page's refresh
  async function container(main, params) {
    const input = h("input", { id: "container-id", value: typedId === null ? params.id || "" : typedId, size: 12,
      oninput: () => { typedId = input.value; } });
    main.append(h("h2", {}, "Container"), h("p", {}, "Container ID ", input, " ",
      h("button", { id: "container-show", onclick: () => { typedId = null; go("container", { id: input.value.trim() }); } }, "show")));
    if (!params.id) return;
    const c = await oz.get(`/api/v1/containers/${encodeURIComponent(params.id)}`);
    main.append(
      oz.kv([
        ["container", c.containerID, "containerID"],
        ["state", state(c.state), "state"],
        ["health (the Replication Manager's last check)", state(c.health), "health"],
        ["replication", c.replicationConfig, "replicationConfig"],
        ["used", oz.size(c.usedBytes), "usedBytes"],
        ["keys", c.numberOfKeys, "numberOfKeys"],
        ["BCSID", c.sequenceId, "sequenceId"],
        ["owner", c.owner, "owner"],
        ["state entered", oz.time(c.stateEnterTime), "stateEnterTime"],
        ["pipeline", c.pipeline ? `${c.pipeline.id} (${c.pipeline.state})` : c.pipelineID || "-", "pipeline"],
      ], "container"),
      h("h3", {}, `Replicas (${c.replicas.length})`),
      oz.table([
        { title: "datanode", value: (r) => h("span", { title: r.datanode }, c.hostnames[r.datanode] || r.datanode) },
        { title: "state", value: (r) => state(r.state) },
        { title: "replica index", cls: "num", value: (r) => r.replicaIndex },
        { title: "BCSID", cls: "num", value: (r) => r.bcsid },
        { title: "keys", cls: "num", value: (r) => r.keyCount },
        { title: "used", cls: "num", value: (r) => oz.size(r.bytesUsed) },
        { title: "origin", value: (r) => c.hostnames[r.origin] || r.origin || "-" },
        { title: "empty", value: (r) => (r.isEmpty ? "yes" : "no") },
      ], c.replicas, "replicas", (r) => r.datanode));
  }

  // ------------------------------------------------------------------ safe mode
  async function safemode(main) {
    const s = await oz.get("/api/v1/safemode");
    const yes = (v, field) => h("span", { class: v ? "ok" : "warn", dataset: { field } }, v ? "yes" : "no");
    main.append(
      h("h2", {}, "Safe mode"),
      oz.kv([
        ["status", s.inSafeMode ? "SCM is in safe mode." : "SCM is out of safe mode.", "inSafeMode"],
        ["pre-check complete", s.preCheckComplete ? "yes" : "no", "preCheckComplete"],
      ], "safemode"),
      h("h3", {}, "Exit rules"),
      oz.table([
        { title: "rule", value: (r) => r.name },
        { title: "validated", value: (r) => yes(r.validated, "validated") },
        { title: "pre-check", value: (r) => (r.preCheck ? "yes" : "no") },
        { title: "progress", value: (r) => h("span", { dataset: { field: "status" } }, r.status) },
      ], s.rules, "safemode-rules", (r) => r.name));
  }

  // ------------------------------------------------------------------ charts
  // Past BARS_MAX datanodes, how many datanodes fall in each range: usage in 5 % steps, pipeline counts
  // one bar per count (ozone.js's equal ranges if there are many different counts).
  function usageBins(values) {
    const bins = new Array(BINS).fill(0), step = 100 / BINS;
    for (const v of values) bins[Math.min(BINS - 1, Math.floor(v / step))]++;
    return bins.map((n, i) => ({ label: `${i * step}–${(i + 1) * step} %`, value: n }));
  }
  function countBins(values) {
    const seen = new Map();
    for (const v of values) seen.set(v, (seen.get(v) || 0) + 1);
    if (seen.size > BINS) return oz.histogram(values, BINS);
    return [...seen.keys()].sort((a, b) => a - b).map((v) => ({ label: count(v, "pipeline"), value: seen.get(v) }));
  }

  function perNode(d, values, bars, bins, name) {
    if (d.datanodes <= BARS_MAX) return [oz.bars(d.hostnames.map((label, i) => ({ label, value: values[i], ...bars(i) })), { name, format: bars.format })];
    return [h("p", { class: "note" }, `${d.datanodes} datanodes: how many in each range.`), oz.bars(bins(values), { name })];
  }

  async function charts(main) {
    const [d, history] = await Promise.all([oz.get("/api/v1/charts/datanodes"), oz.get("/api/v1/history/containers")]);
    const shown = Object.entries(history.series).filter(([name, points]) => name === "OPEN" || points.some((p) => p[1] > 0));
    const usage = Object.assign(() => ({ max: 100 }), { format: (v) => `${v.toFixed(1)} %` });
    const pipelines = Object.assign((i) => ({ max: d.pipelineLimit[i] || 1, cls: d.ratisThree[i] > d.pipelineLimit[i] ? "over" : "bar" }),
      { format: (v) => `${v}` });
    const over = d.ratisThree.filter((n, i) => n > d.pipelineLimit[i]).length;
    main.append(
      h("h2", {}, "Charts"),
      h("h3", {}, "Usage per datanode"),
      ...perNode(d, d.usedPercent, usage, usageBins, "usage"),
      h("h3", {}, "RATIS/THREE pipelines per datanode"),
      h("p", { class: "note", dataset: { field: "overLimit" } }, (over === 1 ? "1 datanode over its own limit" : `${over} datanodes over their own limit`) + (d.datanodes <= BARS_MAX ? "; a full bar is the datanode's own limit." : ".")),
      ...perNode(d, d.ratisThree, pipelines, countBins, "pipelines"),
      h("h3", {}, "Containers by state over time"),
      h("p", { class: "note" }, `A sample every ${history.intervalMs / 1000} s on SCM's clock; states never seen are left out.`),
      oz.lines(Object.fromEntries(shown), { name: "containers" }));
  }

  // ------------------------------------------------------------------ container balancer
  // Every balanced datanode's utilization now beside the run's start, against the cluster's average and
  // the threshold (/api/v1/balancer), and the run's iterations as `admin containerbalancer status -v -H`.
  const ENDS = 50;
  async function balancer(main) {
    const b = await oz.get("/api/v1/balancer");
    const lo = b.averagePercent - b.thresholdPercent, hi = b.averagePercent + b.thresholdPercent;
    const status = b.status === "RUNNING" ? `running since ${oz.time(b.startedAt)}`
      : `not running${b.stopReason ? ` (stopped: ${b.stopReason})` : ""}`;
    const inState = (s) => b.datanodes.filter((d) => d.state === s).length;
    const pct = (v) => (v === null ? "-" : `${v.toFixed(1)} %`);
    // a large cluster shows its ends: the most and the least used datanodes
    const shown = b.datanodes.length <= 2 * ENDS ? b.datanodes : [...b.datanodes.slice(0, ENDS), ...b.datanodes.slice(-ENDS)];
    const ends = shown.length < b.datanodes.length
      ? [h("p", { class: "note" }, `${b.datanodes.length} datanodes: the ${ENDS} most and the ${ENDS} least used.`)] : [];
    main.append(
      h("h2", {}, "Container Balancer"),
      oz.kv([
        ["status", status, "status"],
        ["average utilization", pct(b.averagePercent), "average"],
        ["threshold", `${b.thresholdPercent} %: balanced between ${pct(lo)} and ${pct(hi)}`, "threshold"],
        ["datanodes over / under / within", `${inState("OVER")} / ${inState("UNDER")} / ${inState("WITHIN")}`, "states"],
      ], "balancer"),
      h("h3", {}, "Utilization per datanode"),
      ...ends,
      oz.table([
        { title: "datanode", value: (d) => d.hostname },
        { title: "now", cls: "num", value: (d) => pct(d.utilizationPercent) },
        { title: "at the run's start", cls: "num", value: (d) => pct(d.atStartPercent) },
        { title: "used", cls: "num", value: (d) => oz.size(d.used) },
        { title: "capacity", cls: "num", value: (d) => oz.size(d.capacity) },
        { title: "state", value: (d) => h("span", { class: d.state === "WITHIN" ? "ok" : "warn" }, d.state) },
      ], shown, "balancer-datanodes", (d) => d.uuid),
      h("h3", {}, "Iterations"),
      oz.table([
        { title: "#", value: (i) => i.iterationNumber },
        { title: "result", value: (i) => i.iterationResult || "running" },
        { title: "moved", cls: "num", value: (i) => `${oz.size(i.dataSizeMoved)} of ${oz.size(i.sizeScheduledForMove)}` },
        { title: "datanodes", cls: "num", value: (i) => i.datanodesInvolved },
        { title: "moves done", cls: "num", value: (i) => i.containerMovesCompleted },
        { title: "failed", cls: "num", value: (i) => i.containerMovesFailed },
        { title: "timed out", cls: "num", value: (i) => i.containerMovesTimeout },
      ], b.iterations, "balancer-iterations", (i) => i.iterationNumber));
  }

  oz.start("Storage Container Manager", [
    { route: "overview", title: "Overview", render: overview, refreshS: 5 },
    { route: "pipelines", title: "Pipelines", render: pipelines, refreshS: 5 },
    { route: "datanodes", title: "Datanodes", render: datanodes, refreshS: 5 },
    { route: "containers", title: "Containers", render: containers, refreshS: 5 },
    { route: "container", title: "Container", render: container, refreshS: 5 },
    { route: "safemode", title: "Safe mode", render: safemode, refreshS: 5 },
    { route: "charts", title: "Charts", render: charts, refreshS: 10 },
    { route: "balancer", title: "Balancer", render: balancer, refreshS: 10 },
  ]);
})();
