// The pages other than the lineage graph: search, dataset, incidents, domains.
import { APIError, get, list, post, q } from "./api";
import { h, append, clear, bar, sparkline, fmt } from "./dom";
import { t } from "./i18n";
import type { Route } from "./main";
import { impactGraph } from "./graph";

type Live = () => boolean;

interface Trust {
  score: number;
  grade: string;
  blockers: { code: string }[];
  warnings: { code: string }[];
}
interface Dataset {
  id: string;
  name: string;
  connection_id: string;
  connection_name: string;
  kind: string;
  latest_score: number | null;
  last_scan_at: string | null;
  trust?: Trust;
}
interface Decision {
  dataset_id: string;
  purpose: string;
  decision: string;
  verdict: string;
  reasons: { code: string; severity: string; message_pt: string }[];
  contract: { active: boolean; valid: boolean };
}
interface Domain {
  id: string;
  name: string;
  description: string;
  status: string;
  version: string;
  restricted: boolean;
  owner_name: string | null;
  dataset_ids: string[];
  dataset_count: number;
  sla: { availability_objective_pct: number | null; retention_days: number | null; dimension_targets: Record<string, number> };
}

const dimensions = ["completude", "unicidade", "validade", "atualidade", "consistencia"];
const purposes = ["agente", "rag", "treino", "bi"];

function badge(kind: string, value: string, extra = ""): HTMLElement {
  return h("span", { class: `badge ${kind}-${value} ${extra}` }, t(kind + "." + value));
}

function scoreBadge(score: number | null | undefined): HTMLElement {
  const band = score === null || score === undefined ? "none" : score >= 85 ? "good" : score >= 60 ? "fair" : "poor";
  return h("span", { class: "score score-" + band }, fmt(score));
}

function section(title: string, id: string, ...body: (Node | null)[]): HTMLElement {
  return h("section", { class: "card", id }, h("h2", null, title), ...body);
}

// --- search -----------------------------------------------------------------

export async function searchPage(main: HTMLElement, r: Route, live: Live): Promise<void> {
  const qv = r.params.get("q") || "";
  const conn = r.params.get("connection") || "";
  const dom = r.params.get("domain") || "";
  const verdict = r.params.get("verdict") || "";
  const pageNo = Math.max(0, Math.floor(Number(r.params.get("page")) || 0));
  const pageSize = 50;

  const [conns, domains] = await Promise.all([
    list<{ id: string; name: string }>("/connections?limit=200").catch(() => ({ items: [], total: 0 })),
    list<Domain>("/domains?limit=200").catch(() => ({ items: [] as Domain[], total: 0 })),
  ]);
  if (!live()) return;

  const input = h("input", { id: "q", type: "search", value: qv, placeholder: t("search.placeholder"), "aria-label": t("search.placeholder") }) as HTMLInputElement;
  const selConn = h("select", { id: "f-connection", "aria-label": t("search.connection") },
    h("option", { value: "" }, t("search.any_connection")),
    conns.items.map((c) => h("option", { value: c.id, selected: c.id === conn }, c.name))) as HTMLSelectElement;
  const selDom = h("select", { id: "f-domain", "aria-label": t("search.domain") },
    h("option", { value: "" }, t("search.any_domain")),
    domains.items.map((d) => h("option", { value: d.id, selected: d.id === dom }, d.name))) as HTMLSelectElement;
  const selVerdict = h("select", { id: "f-verdict", "aria-label": t("search.verdict") },
    h("option", { value: "" }, t("search.any_verdict")),
    ["pass", "warn", "fail", "unknown"].map((v) => h("option", { value: v, selected: v === verdict }, t("verdict." + v)))) as HTMLSelectElement;
  const form = h("form", {
    class: "search",
    onsubmit: (ev: Event) => {
      ev.preventDefault();
      location.hash = "#/" + q({ q: input.value.trim(), connection: selConn.value, domain: selDom.value, verdict: selVerdict.value });
    },
  }, input, selConn, selDom, selVerdict, h("button", { type: "submit", id: "search-go" }, t("search.submit")));
  const results = h("div", { id: "results" }, h("p", { class: "muted" }, t("common.loading")));
  append(main, [h("h1", null, t("search.title")), form, results]);

  const page = await list<Dataset>("/datasets" + q({ q: qv, connection_id: conn, include: "trust", limit: pageSize, offset: pageNo * pageSize }));
  if (!live()) return;
  let items = page.items;
  if (dom) {
    const d = domains.items.find((x) => x.id === dom);
    const ids = new Set(d ? d.dataset_ids : []);
    items = items.filter((x) => ids.has(x.id));
  }
  // One batch call gives the verdict and the default trust decision of the page.
  const decisions = new Map<string, Decision>();
  if (items.length > 0) {
    try {
      const b = await post<{ decisions: Decision[] }>("/trust-decisions", { dataset_ids: items.map((x) => x.id) });
      for (const d of b.decisions) decisions.set(d.dataset_id, d);
    } catch {
      // Without decisions the list still shows; verdicts read as unknown.
    }
  }
  if (!live()) return;
  if (verdict) items = items.filter((x) => (decisions.get(x.id)?.verdict || "unknown") === verdict);

  clear(results);
  const pageLink = (n: number, key: string, id: string) =>
    h("a", { href: "#/" + q({ q: qv, connection: conn, domain: dom, verdict, page: n || undefined }), id, class: "button" }, t(key));
  const pager = page.total > pageSize
    ? h("p", { class: "pager" },
      t("search.page", { from: pageNo * pageSize + 1, to: Math.min(page.total, (pageNo + 1) * pageSize), total: page.total }), " ",
      pageNo > 0 ? pageLink(pageNo - 1, "search.prev", "page-prev") : null, " ",
      (pageNo + 1) * pageSize < page.total ? pageLink(pageNo + 1, "search.next", "page-next") : null)
    : null;
  if (items.length === 0) {
    append(results, [pager]);
    append(results, [h("p", { class: "muted", id: "no-results" }, t("search.none"))]);
    return;
  }
  const rows = items.map((d) => {
    const dec = decisions.get(d.id);
    return h("tr", { "data-id": d.id },
      h("td", null, h("a", { href: "#/datasets/" + encodeURIComponent(d.id), class: "ds-link" }, d.name)),
      h("td", { class: "muted" }, d.connection_name),
      h("td", null, scoreBadge(d.latest_score)),
      h("td", null, badge("verdict", dec ? dec.verdict : "unknown")),
      h("td", null, d.trust ? h("span", { class: "grade grade-" + d.trust.grade, title: fmt(d.trust.score) }, d.trust.grade) : "—"),
      h("td", null, dec ? badge("decision", dec.decision) : "—"));
  });
  append(results, [
    pager || h("p", { class: "muted" }, t("search.count", { shown: items.length, total: page.total })),
    h("table", { class: "list" },
      h("thead", null, h("tr", null, ...["search.col_name", "search.col_connection", "search.col_score", "search.col_verdict", "search.col_trust", "search.col_decision"].map((k) => h("th", null, t(k))))),
      h("tbody", null, rows)),
  ]);
}

// --- dataset ----------------------------------------------------------------

interface Column {
  name: string;
  data_type: string;
  nullable: boolean;
  primary_key: boolean;
  semantic: { type: string; estimated: boolean } | null;
  profile: { null_rate: number; null_count: number; distinct?: { value: number; estimated: boolean } } | null;
}
interface Issue {
  id: string;
  title: string;
  severity: string;
  status: string;
  created_at: string;
}
interface DatasetDetail extends Dataset {
  row_count: number | null;
  columns: Column[];
  score_history: { score: number | null; dimensions: Record<string, number | null>; created_at: string }[];
  issues: Issue[];
}

export async function datasetPage(main: HTMLElement, id: string, live: Live): Promise<void> {
  const d = await get<DatasetDetail>("/datasets/" + encodeURIComponent(id));
  if (!live()) return;
  const latest = d.score_history[0];
  const head = h("div", { class: "ds-head" },
    h("div", null,
      h("h1", { id: "ds-name" }, d.name),
      h("p", { class: "muted" }, `${d.connection_name} · ${t("kind." + d.kind)} · ${d.row_count === null ? "—" : t("dataset.rows", { n: d.row_count.toLocaleString() })}`),
      h("a", { href: "#/datasets/" + encodeURIComponent(d.id) + "/lineage", id: "open-lineage", class: "button" }, t("dataset.open_lineage"))),
    h("div", { class: "ds-score" }, scoreBadge(d.latest_score), h("span", { class: "muted" }, t("dataset.score"))));

  const dims = h("div", { class: "dims", id: "dimensions" },
    dimensions.map((k) => {
      const v = latest ? latest.dimensions[k] : null;
      return h("div", { class: "dim" }, h("span", { class: "dim-name" }, t("dimension." + k)), bar(v, 100, fmt(v), "dim-bar"));
    }));
  const hist = d.score_history.slice(0, 30).reverse();
  const trend = h("div", { class: "trend", id: "trend" },
    hist.length > 0 ? sparkline(hist.map((s) => s.score)) : h("p", { class: "muted" }, t("dataset.no_scans")),
    h("span", { class: "muted" }, t("dataset.trend", { n: hist.length })));

  const verdictBox = h("div", { id: "verdict" }, h("p", { class: "muted" }, t("common.loading")));
  const trustBox = h("div", { id: "trust" }, h("p", { class: "muted" }, t("common.loading")));
  const changesBox = h("div", { id: "schema-changes" }, h("p", { class: "muted" }, t("common.loading")));

  const cols = h("table", { class: "list", id: "columns" },
    h("thead", null, h("tr", null, ...["column.name", "column.type", "column.semantic", "column.nulls", "column.distinct"].map((k) => h("th", null, t(k))))),
    h("tbody", null, d.columns.map((c) => {
      const p = c.profile;
      const distinct = p && p.distinct ? p.distinct.value : null;
      const rows = d.row_count || 0;
      return h("tr", null,
        h("td", null, c.name, c.primary_key ? h("span", { class: "pk", title: t("column.primary_key") }, " PK") : null),
        h("td", { class: "mono" }, c.data_type),
        h("td", null, c.semantic ? h("span", { class: "tag" }, c.semantic.type + (c.semantic.estimated ? " ~" : "")) : "—"),
        h("td", null, p ? bar(p.null_rate * 100, 100, fmt(p.null_rate * 100) + "%", "null-bar") : "—"),
        h("td", null, distinct === null ? "—" : rows > 0 ? bar(Math.min(distinct, rows), rows, distinct.toLocaleString(), "distinct-bar") : distinct.toLocaleString()));
    })));

  const issues = d.issues.length === 0
    ? h("p", { class: "muted" }, t("dataset.no_issues"))
    : h("ul", { class: "issues" }, d.issues.map((i) => h("li", null, badge("severity", i.severity), " ", i.title, h("span", { class: "muted" }, " · " + t("status." + i.status)))));

  append(main, [
    head,
    h("div", { class: "grid2" },
      section(t("dataset.dimensions"), "dims-card", dims, trend),
      section(t("dataset.verdict"), "verdict-card", verdictBox)),
    section(t("dataset.trust"), "trust-card", trustBox),
    section(t("dataset.columns"), "columns-card", cols),
    h("div", { class: "grid2" },
      section(t("dataset.issues"), "issues-card", issues),
      section(t("dataset.schema_changes"), "changes-card", changesBox)),
  ]);
  // First paint is done: mark it for the browser test's measurement.
  performance.mark("vigia:dataset-painted");

  // The sections below fill in as their answers come; one that fails says so in
  // its own box and leaves the rest of the page as it is.
  const enc = encodeURIComponent(d.id);
  await Promise.all([
    fill(verdictBox, live, async () => {
      const verdict = await get<{ verdict: string; reasons: { code: string; severity: string }[]; failing_rules: { rule_type: string; column?: string; severity: string }[] }>(
        "/datasets/" + enc + "/verdict");
      return [
        h("p", null, badge("verdict", verdict.verdict, "big")),
        verdict.reasons.length === 0 && verdict.failing_rules.length === 0 ? h("p", { class: "muted" }, t("dataset.no_reasons"))
          : h("ul", { class: "reasons" },
            verdict.reasons.map((r) => h("li", null, badge("severity", r.severity), " ", h("code", null, r.code))),
            verdict.failing_rules.map((f) => h("li", null, badge("severity", f.severity), " ", t("dataset.failing_rule"), " ",
              h("code", null, f.rule_type + (f.column ? " · " + f.column : ""))))),
      ];
    }),
    fill(trustBox, live, async () => {
      const decisions = await Promise.all(purposes.map((p) => get<Decision>("/datasets/" + enc + "/trust-decision" + q({ purpose: p }))));
      const contract = decisions[0].contract;
      return [
        d.trust ? h("p", null, h("span", { class: "grade grade-" + d.trust.grade }, d.trust.grade), " ", t("dataset.trust_score", { score: fmt(d.trust.score) })) : null,
        h("table", { class: "list" }, h("tbody", null, decisions.map((dec) => h("tr", { "data-purpose": dec.purpose },
          h("th", null, t("purpose." + dec.purpose)),
          h("td", null, badge("decision", dec.decision)),
          h("td", { class: "muted" }, [...new Set(dec.reasons.map((r) => r.code))].join(", ")))))),
        h("p", { id: "contract" }, t("dataset.contract") + ": ",
          contract.active ? badge("contract", contract.valid ? "valid" : "violated") : h("span", { class: "muted" }, t("contract.none"))),
      ];
    }),
    fill(changesBox, live, async () => {
      const changes = await get<{ detected_at: string; added: { name: string }[]; dropped: { name: string }[]; type_changed: { name: string }[] }[]>(
        "/datasets/" + enc + "/schema-changes");
      if (changes.length === 0) return [h("p", { class: "muted" }, t("dataset.no_changes"))];
      return [h("ul", null, changes.slice(0, 10).map((c) => h("li", null,
        new Date(c.detected_at).toLocaleString(), ": ",
        ([["changes.added", c.added], ["changes.dropped", c.dropped], ["changes.type_changed", c.type_changed]] as [string, { name: string }[]][])
          .filter(([, v]) => v.length > 0)
          .map(([k, v]) => t(k) + " " + v.map((x) => x.name).join(", ")).join(" · "))))];
    }),
  ]);
}

// fill replaces a section's placeholder with what make returns, or with the error
// when it fails.
async function fill(box: HTMLElement, live: Live, make: () => Promise<(Node | null)[]>): Promise<void> {
  let content: (Node | null)[];
  try {
    content = await make();
  } catch (e) {
    content = [h("p", { class: "error", role: "alert" }, e instanceof APIError ? e.message + " (" + e.code + ")" : t("error.generic"))];
  }
  if (!live()) return;
  clear(box);
  append(box, content);
}

// --- incidents --------------------------------------------------------------

interface ImpactNode {
  ref: string;
  id?: string;
  name?: string;
  restricted: boolean;
  hops: number;
  parent: string | null;
  impact: string;
  via_columns: string[];
}
export interface Incident {
  id: string;
  status: string;
  title: string;
  severity: string;
  root_dataset_id: string | null;
  root_dataset_name: string | null;
  issue_ids: string[];
  created_at: string;
  impact_scope: string;
  impact_tree: ImpactNode[];
  downstream_count: number;
  reach_total: number;
  truncated: boolean;
}

export async function incidentsPage(main: HTMLElement, live: Live): Promise<void> {
  const page = await list<Incident>("/incidents?limit=100");
  if (!live()) return;
  const severities = ["critical", "warning", "info"];
  const col = (status: string) => h("div", { class: "board-col", id: "board-" + status },
    h("h2", null, t("status." + status)),
    severities.map((sev) => {
      const items = page.items.filter((i) => i.status === status && i.severity === sev);
      if (items.length === 0) return null;
      return h("div", { class: "board-group" }, h("h3", null, badge("severity", sev), " ", String(items.length)),
        items.map((i) => h("a", { class: "board-card", href: "#/incidents/" + encodeURIComponent(i.id) },
          h("strong", null, i.title),
          h("span", { class: "muted" }, (i.root_dataset_name || "—") + " · " + t("incident.downstream", { n: i.downstream_count })))));
    }));
  append(main, [h("h1", null, t("incidents.title")),
    page.items.length === 0 ? h("p", { class: "muted" }, t("incidents.none")) : h("div", { class: "board" }, col("open"), col("resolved"))]);
}

export async function incidentPage(main: HTMLElement, id: string, live: Live): Promise<void> {
  const inc = await get<Incident>("/incidents/" + encodeURIComponent(id));
  if (!live()) return;
  const graphBox = h("div", { class: "graph", id: "impact-graph" });
  append(main, [
    h("h1", null, inc.title),
    h("p", null, badge("severity", inc.severity), " ", badge("status", inc.status), " ",
      inc.root_dataset_id ? h("a", { href: "#/datasets/" + encodeURIComponent(inc.root_dataset_id) }, inc.root_dataset_name || inc.root_dataset_id) : null),
    h("p", { class: "muted" }, t("incident.reach", { n: inc.downstream_count, total: inc.reach_total }) + " · " + t("incident.scope." + inc.impact_scope)),
    inc.truncated ? h("p", { class: "warning", id: "truncated" }, t("graph.truncated")) : null,
    h("p", { class: "legend" }, h("span", { class: "lg lg-certain" }, t("incident.certain")), h("span", { class: "lg lg-possible" }, t("incident.possible"))),
    graphBox,
  ]);
  impactGraph(graphBox, inc);
}

// --- domains ----------------------------------------------------------------

export async function domainsPage(main: HTMLElement, live: Live): Promise<void> {
  const page = await list<Domain>("/domains?limit=200");
  if (!live()) return;
  append(main, [h("h1", null, t("domains.title")),
    page.items.length === 0 ? h("p", { class: "muted" }, t("domains.none")) :
      h("table", { class: "list", id: "domains" },
        h("thead", null, h("tr", null, ...["domain.name", "domain.status", "domain.version", "domain.datasets"].map((k) => h("th", null, t(k))))),
        h("tbody", null, page.items.map((d) => h("tr", null,
          h("td", null, h("a", { href: "#/domains/" + encodeURIComponent(d.id) }, d.name), d.restricted ? h("span", { class: "tag" }, t("graph.restricted")) : null),
          h("td", null, t("domain.status." + d.status)), h("td", null, d.version), h("td", null, String(d.dataset_count))))))]);
}

interface UseCase {
  status: string;
  score?: number | null;
  blockers?: string[];
}

export async function domainPage(main: HTMLElement, id: string, live: Live): Promise<void> {
  const enc = encodeURIComponent(id);
  const [d, readiness, versions] = await Promise.all([
    get<Domain>("/domains/" + enc),
    get<{ use_cases: Record<string, UseCase> }>("/domains/" + enc + "/readiness"),
    list<{ version: string; bump: string; change_summary: string; published_at: string }>("/domains/" + enc + "/versions"),
  ]);
  if (!live()) return;
  const sla = d.sla;
  const dsList = h("ul", { id: "domain-members" });
  append(main, [
    h("h1", null, d.name),
    h("p", { class: "muted" }, d.description || "", " · ", t("domain.status." + d.status), " · v", d.version, d.owner_name ? " · " + d.owner_name : ""),
    h("div", { class: "grid2" },
      section(t("domain.sla"), "sla",
        h("ul", null,
          h("li", null, t("domain.availability") + ": " + (sla.availability_objective_pct === null ? "—" : sla.availability_objective_pct + "%")),
          h("li", null, t("domain.retention") + ": " + (sla.retention_days === null ? "—" : t("domain.days", { n: sla.retention_days }))),
          Object.entries(sla.dimension_targets || {}).map(([k, v]) => h("li", null, t("dimension." + k) + " ≥ " + v)))),
      section(t("domain.readiness"), "readiness",
        h("table", { class: "list" }, h("tbody", null, Object.entries(readiness.use_cases).map(([k, u]) =>
          h("tr", null, h("th", null, t("purpose." + k)), h("td", null, badge("readiness", u.status)),
            h("td", null, u.score === undefined || u.score === null ? "" : bar(u.score, 100, fmt(u.score))))))))),
    section(t("domain.versions"), "versions",
      versions.items.length === 0 ? h("p", { class: "muted" }, t("domain.no_versions")) :
        h("ul", null, versions.items.map((v) => h("li", null, h("strong", null, "v" + v.version), " (" + v.bump + ") ",
          new Date(v.published_at).toLocaleDateString(), " — ", v.change_summary)))),
    section(t("domain.datasets"), "domain-datasets", dsList),
  ]);
  // Names of the member datasets (the first 50), each read as the caller may see it.
  const members = await Promise.all(d.dataset_ids.slice(0, 50).map((x) =>
    get<Dataset>("/datasets/" + encodeURIComponent(x)).catch(() => null)));
  if (!live()) return;
  append(dsList, members.filter((m): m is Dataset => m !== null).map((m) =>
    h("li", null, h("a", { href: "#/datasets/" + encodeURIComponent(m.id) }, m.name), " ", scoreBadge(m.latest_score))));
}
