// The lineage focus graph and the incident impact tree, drawn with Cytoscape.js and
// laid out left to right by dagre.
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";
import { get, list, q } from "./api";
import { h, append, clear } from "./dom";
import { t } from "./i18n";
import type { Route } from "./main";
import type { Incident } from "./pages";

cytoscape.use(dagre);

interface LNode {
  ref: string;
  id?: string;
  name?: string;
  restricted: boolean;
  hops: number;
  direction?: string;
  impact?: string;
  columns?: string[];
}
interface LEdge {
  source: string;
  target: string;
  kind: string;
  origin?: string;
  column_map?: { from: string; to: string; direct: boolean }[];
  column_level: boolean;
}
export interface Traverse {
  dataset_id: string;
  nodes: LNode[];
  edges: LEdge[];
  exposures: { name: string; type: string }[];
  truncated: boolean;
}
interface Exposure {
  id: string;
  name: string;
  type: string;
  direct: boolean;
  via: string[];
}

export const edgeKinds = ["parsed", "declared", "dbt", "openlineage", "inferred"];

// A padlock drawn as SVG: headless and minimal systems have no emoji font.
const lockIcon = "data:image/svg+xml;utf8," + encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
  '<path d="M4.5 7V5a3.5 3.5 0 0 1 7 0v2" fill="none" stroke="#555" stroke-width="1.6"/>' +
  '<rect x="2.5" y="7" width="11" height="8" rx="1.5" fill="#555"/></svg>');

const style: cytoscape.StylesheetJson = [
  { selector: "node", style: {
    "background-color": "#e8eef7", "border-color": "#5b7bb0", "border-width": 1.5, shape: "round-rectangle",
    label: "data(label)", "font-size": 11, color: "#1d2b3a", "text-valign": "center", "text-halign": "center",
    width: "label", height: "label", padding: "8px", "text-wrap": "wrap", "text-max-width": "220px" } },
  { selector: "node.focus", style: { "background-color": "#1f5fbf", color: "#fff", "border-color": "#123d7a", "font-weight": "bold" } },
  { selector: "node.restricted", style: { "background-color": "#eeeeee", "border-color": "#9a9a9a", "border-style": "dashed", color: "#666",
    "background-image": lockIcon, "background-width": 14, "background-height": 14, "background-position-x": 8, "background-position-y": "50%",
    "text-margin-x": 9, "padding-left": "22px" } },
  { selector: "node.exposure", style: { shape: "diamond", "background-color": "#fff4d6", "border-color": "#c08a00", height: 40, padding: "28px" } },
  { selector: "node.consumer", style: { shape: "hexagon", "background-color": "#e6f5ea", "border-color": "#2e8b57", height: 34, padding: "16px" } },
  { selector: "node.highlight", style: { "border-color": "#d0312d", "border-width": 3 } },
  { selector: "node.certain", style: { "background-color": "#fbe0df", "border-color": "#d0312d", "border-width": 2.5 } },
  { selector: "node.possible", style: { "background-color": "#fff3e0", "border-color": "#e08a00", "border-style": "dashed", "border-width": 2 } },
  { selector: "edge", style: { width: 2, "curve-style": "bezier", "target-arrow-shape": "triangle", "line-color": "#888", "target-arrow-color": "#888" } },
  { selector: "edge.parsed", style: { "line-color": "#1f5fbf", "target-arrow-color": "#1f5fbf" } },
  { selector: "edge.declared", style: { "line-color": "#2e8b57", "target-arrow-color": "#2e8b57", "line-style": "dashed" } },
  { selector: "edge.dbt", style: { "line-color": "#e0692b", "target-arrow-color": "#e0692b" } },
  { selector: "edge.openlineage", style: { "line-color": "#7b3fb0", "target-arrow-color": "#7b3fb0", "line-style": "dashed", "line-dash-pattern": [2, 4] } },
  { selector: "edge.inferred", style: { "line-color": "#999", "target-arrow-color": "#999", "line-style": "dotted" } },
  { selector: "edge.exposure-edge", style: { "line-color": "#c08a00", "target-arrow-color": "#c08a00", width: 1.5, "line-style": "dashed" } },
  { selector: "edge.certain", style: { "line-color": "#d0312d", "target-arrow-color": "#d0312d", width: 3 } },
  { selector: "edge.possible", style: { "line-color": "#e08a00", "target-arrow-color": "#e08a00", "line-style": "dashed" } },
  { selector: "edge.highlight", style: { width: 4 } },
  { selector: "edge:selected", style: { width: 5, "overlay-opacity": 0.12, "overlay-color": "#1f5fbf" } },
];

const layout = { name: "dagre", rankDir: "LR", nodeSep: 18, rankSep: 70, animate: false } as cytoscape.LayoutOptions;

function nodeLabel(n: LNode): string {
  return n.restricted ? t("graph.restricted") : n.name || n.ref;
}

// buildElements turns a traversal (plus exposures and consumers of the focus) into
// Cytoscape elements. A restricted node carries no name: the API sends none.
export function buildElements(tr: Traverse, exposures: Exposure[], consumers: { id: string; name: string }[]): cytoscape.ElementDefinition[] {
  const els: cytoscape.ElementDefinition[] = [];
  const refs = new Set<string>();
  for (const n of tr.nodes) {
    refs.add(n.ref);
    const classes = [n.ref === tr.dataset_id ? "focus" : "", n.restricted ? "restricted" : ""].join(" ").trim();
    els.push({ group: "nodes", data: { id: "n:" + n.ref, ref: n.ref, label: nodeLabel(n), datasetId: n.id || "", restricted: n.restricted }, classes });
  }
  tr.edges.forEach((e, i) => {
    if (!refs.has(e.source) || !refs.has(e.target)) return;
    els.push({ group: "edges", data: { id: "e" + i, source: "n:" + e.source, target: "n:" + e.target, kind: e.kind, index: i }, classes: e.kind });
  });
  for (const x of exposures) {
    const id = "x:" + x.id;
    els.push({ group: "nodes", data: { id, label: x.name + " (" + x.type + ")" }, classes: "exposure" });
    const from = x.direct || x.via.length === 0 ? [tr.dataset_id] : x.via.filter((r) => refs.has(r));
    for (const f of from) els.push({ group: "edges", data: { id: id + ">" + f, source: "n:" + f, target: id }, classes: "exposure-edge" });
  }
  for (const c of consumers) {
    const id = "c:" + c.id;
    els.push({ group: "nodes", data: { id, label: c.name }, classes: "consumer" });
    els.push({ group: "edges", data: { id: id + "<", source: "n:" + tr.dataset_id, target: id }, classes: "exposure-edge" });
  }
  return els;
}

// current is the graph on the page; the next page destroys it, so that Cytoscape's
// window listeners go with it.
let current: cytoscape.Core | null = null;

export function destroyGraph(): void {
  if (current) current.destroy();
  current = null;
}

// draw lays the elements out in container and resolves once the layout ran, with
// the milliseconds it took (kept on window for the browser test's measurement).
export function draw(container: HTMLElement, els: cytoscape.ElementDefinition[]): { cy: cytoscape.Core; ms: number } {
  destroyGraph();
  const t0 = performance.now();
  const cy = cytoscape({ container, elements: els, style, layout, minZoom: 0.1, maxZoom: 3, wheelSensitivity: 0.3 });
  // A small graph is fitted at a readable size, not blown up to fill the box.
  if (cy.zoom() > 1.25) {
    cy.zoom(1.25);
    cy.center();
  }
  const ms = performance.now() - t0;
  current = cy;
  (window as unknown as { vigiaLayoutMs?: number }).vigiaLayoutMs = ms;
  container.dataset.layoutMs = ms.toFixed(0);
  container.dataset.nodes = String(cy.nodes().length);
  return { cy, ms };
}

export async function lineagePage(main: HTMLElement, id: string, r: Route, live: () => boolean): Promise<void> {
  const hops = Math.min(3, Math.max(1, Number(r.params.get("hops") || 2)));
  const direction = ["upstream", "downstream", "both"].includes(r.params.get("direction") || "") ? (r.params.get("direction") as string) : "both";
  const enc = encodeURIComponent(id);
  const [ds, tr, direct, consumers] = await Promise.all([
    get<{ id: string; name: string; columns: { name: string }[] }>("/datasets/" + enc),
    get<Traverse>("/datasets/" + enc + "/lineage/traverse" + q({ hops, direction })),
    get<{ exposures: Exposure[] }>("/datasets/" + enc + "/lineage"),
    list<{ id: string; name: string }>("/datasets/" + enc + "/consumers?limit=20").catch(() => ({ items: [], total: 0 })),
  ]);
  if (!live()) return;

  const setRoute = (p: Record<string, string | number>) => {
    location.hash = "#/datasets/" + enc + "/lineage" + q({ hops, direction, ...p });
  };
  const controls = h("div", { class: "controls" },
    h("label", null, t("graph.hops") + " ",
      h("select", { id: "hops", onchange: (ev: Event) => setRoute({ hops: (ev.target as HTMLSelectElement).value }) },
        [1, 2, 3].map((n) => h("option", { value: n, selected: n === hops }, String(n))))),
    h("label", null, t("graph.direction") + " ",
      h("select", { id: "direction", onchange: (ev: Event) => setRoute({ direction: (ev.target as HTMLSelectElement).value }) },
        ["both", "upstream", "downstream"].map((d) => h("option", { value: d, selected: d === direction }, t("graph.dir." + d))))),
    h("button", { id: "export-png", type: "button" }, t("graph.export_png")),
    h("button", { id: "export-svg", type: "button" }, t("graph.export_svg")));
  const legend = h("p", { class: "legend" },
    edgeKinds.map((k) => h("span", { class: "lg lg-" + k }, t("edge." + k))),
    h("span", { class: "lg lg-exposure" }, t("graph.exposure")), h("span", { class: "lg lg-consumer" }, t("graph.consumer")),
    h("span", { class: "lg lg-restricted" }, t("graph.restricted")));
  const graphBox = h("div", { class: "graph", id: "lineage-graph" });
  const panel = h("aside", { class: "panel", id: "panel" }, h("p", { class: "muted" }, t("graph.click_hint")));
  const cols = h("div", { class: "columns-pick", id: "column-pick" }, h("strong", null, t("graph.columns") + ": "),
    ds.columns.map((c) => h("button", { type: "button", class: "chip", "data-column": c.name, onclick: () => void showColumn(c.name) }, c.name)));
  append(main, [
    h("h1", null, h("a", { href: "#/datasets/" + enc }, ds.name), " · ", t("graph.title")),
    controls, legend,
    tr.truncated ? h("p", { class: "warning", id: "truncated" }, t("graph.truncated")) : null,
    cols,
    h("div", { class: "graph-wrap" }, graphBox, panel),
  ]);

  const { cy } = draw(graphBox, buildElements(tr, direct.exposures, consumers.items));

  cy.on("tap", "edge", (ev) => {
    const i = ev.target.data("index");
    if (i === undefined) return;
    const e = tr.edges[i];
    const name = (ref: string) => {
      const n = tr.nodes.find((x) => x.ref === ref);
      return n ? nodeLabel(n) : ref;
    };
    clear(panel);
    append(panel, [
      h("h3", null, name(e.source), " → ", name(e.target)),
      h("p", null, h("span", { class: "lg lg-" + e.kind }, t("edge." + e.kind)), e.origin ? " · " + e.origin : ""),
      e.column_map && e.column_map.length > 0
        ? h("table", { class: "list", id: "column-map" },
          h("thead", null, h("tr", null, h("th", null, t("graph.from")), h("th", null, t("graph.to")), h("th", null, t("graph.direct")))),
          h("tbody", null, e.column_map.map((m) => h("tr", null, h("td", null, m.from), h("td", null, m.to), h("td", null, m.direct ? "✓" : "ƒ")))))
        : h("p", { class: "muted", id: "column-map-none" }, e.column_level ? t("graph.map_empty") : t("graph.map_unknown")),
    ]);
  });
  cy.on("tap", "node", (ev) => {
    const dsid = ev.target.data("datasetId");
    if (dsid && dsid !== tr.dataset_id) location.hash = "#/datasets/" + encodeURIComponent(dsid) + "/lineage" + q({ hops, direction });
  });

  document.getElementById("export-png")?.addEventListener("click", () => {
    const png = cy.png({ full: true, bg: "#ffffff", scale: 2 });
    const a = h("a", { href: png, download: ds.name + "-lineage.png" });
    document.body.appendChild(a);
    a.click();
    a.remove();
  });

  document.getElementById("export-svg")?.addEventListener("click", () => {
    const url = URL.createObjectURL(new Blob([toSVG(cy)], { type: "image/svg+xml" }));
    const a = h("a", { href: url, download: ds.name + "-lineage.svg" });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });

  // upstreamOf walks the traversal's edges backwards from (ref, column) through their
  // column maps: the columns the asked one is made from, at any distance drawn.
  function upstreamOf(ref: string, column: string): Map<string, Set<string>> {
    const found = new Map<string, Set<string>>();
    const queue: [string, string][] = [[ref, column]];
    const seen = new Set<string>([ref + "\u0000" + column]);
    while (queue.length > 0) {
      const [r, c] = queue.shift() as [string, string];
      for (const e of tr.edges) {
        if (e.target !== r || !e.column_map) continue;
        for (const m of e.column_map) {
          const key = e.source + "\u0000" + m.from;
          if (m.to !== c || seen.has(key)) continue;
          seen.add(key);
          if (!found.has(e.source)) found.set(e.source, new Set());
          (found.get(e.source) as Set<string>).add(m.from);
          queue.push([e.source, m.from]);
        }
      }
    }
    return found;
  }

  // showColumn highlights a column's lineage: where it flows downstream (the API's
  // column-level impact) and what it is made from upstream (the edges' column maps).
  async function showColumn(column: string): Promise<void> {
    const imp = await get<{ datasets: LNode[]; impact_note: string | null }>(
      "/datasets/" + enc + "/lineage/impact" + q({ column }));
    if (!live()) return;
    const down = imp.datasets.filter((d) => d.impact === "column");
    const up = upstreamOf(tr.dataset_id, column);
    cy.elements().removeClass("highlight");
    const hit = new Set([...down.map((d) => d.ref), ...up.keys(), tr.dataset_id]);
    cy.nodes().forEach((n) => {
      if (hit.has(n.data("ref"))) n.addClass("highlight");
    });
    cy.edges().forEach((e) => {
      if (e.data("kind") && e.source().hasClass("highlight") && e.target().hasClass("highlight")) e.addClass("highlight");
    });
    for (const b of Array.from(cols.querySelectorAll("button"))) b.classList.toggle("on", b.getAttribute("data-column") === column);
    const name = (ref: string) => {
      const n = tr.nodes.find((x) => x.ref === ref);
      return n ? nodeLabel(n) : ref;
    };
    clear(panel);
    append(panel, [h("h3", null, t("graph.column_flow", { column })),
      h("h4", null, t("graph.dir.upstream")),
      up.size === 0 ? h("p", { class: "muted" }, t("graph.no_upstream"))
        : h("ul", { id: "column-upstream" }, [...up.entries()].map(([ref, c]) => h("li", null, name(ref) + ": " + [...c].sort().join(", ")))),
      h("h4", null, t("graph.dir.downstream")),
      down.length === 0
        ? h("p", { class: "muted" }, imp.impact_note ? t("graph.no_column_lineage") : t("graph.no_downstream"))
        : h("ul", { id: "column-flow" }, down.map((d) =>
          h("li", null, nodeLabel(d), d.columns && d.columns.length > 0 ? ": " + d.columns.join(", ") : "")))]);
  }
}

// impactGraph draws an incident's impact tree: the root, then each impacted dataset
// under its parent; certain impact (column-level) and possible impact (table-level)
// in two styles.
export function impactGraph(container: HTMLElement, inc: Incident): void {
  const els: cytoscape.ElementDefinition[] = [];
  const root = inc.root_dataset_id || "root";
  els.push({ group: "nodes", data: { id: "n:" + root, label: inc.root_dataset_name || t("graph.restricted") }, classes: "focus" });
  const refs = new Set<string>([root]);
  for (const n of inc.impact_tree) refs.add(n.ref);
  for (const n of inc.impact_tree) {
    if (n.ref === root) continue;
    const certain = n.impact === "column";
    els.push({ group: "nodes", data: { id: "n:" + n.ref, label: (n.restricted ? t("graph.restricted") : n.name || n.ref) +
      (n.via_columns.length > 0 ? "\n" + n.via_columns.join(", ") : "") },
      classes: (certain ? "certain" : "possible") + (n.restricted ? " restricted" : "") });
    const parent = n.parent && refs.has(n.parent) ? n.parent : root;
    els.push({ group: "edges", data: { id: "e:" + parent + ">" + n.ref, source: "n:" + parent, target: "n:" + n.ref }, classes: certain ? "certain" : "possible" });
  }
  const cy = draw(container, els).cy;
  cy.on("tap", "node", (ev) => {
    const id = ev.target.id().slice(2);
    const n = inc.impact_tree.find((x) => x.ref === id);
    if (n && n.id) location.hash = "#/datasets/" + encodeURIComponent(n.id);
  });
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

// toSVG draws the laid-out graph as a standalone SVG document: edges as lines with
// their kind's colour and dash, nodes as their shape with the label, from the
// positions and computed styles Cytoscape holds.
export function toSVG(cy: cytoscape.Core): string {
  const bb = cy.elements().boundingBox({});
  const pad = 20;
  const w = Math.ceil(bb.w + 2 * pad);
  const hgt = Math.ceil(bb.h + 2 * pad);
  const x = (v: number) => (v - bb.x1 + pad).toFixed(1);
  const y = (v: number) => (v - bb.y1 + pad).toFixed(1);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${hgt}" viewBox="0 0 ${w} ${hgt}" font-family="sans-serif" font-size="11">`,
    `<rect width="${w}" height="${hgt}" fill="#ffffff"/>`,
  ];
  cy.edges().forEach((e) => {
    const s = e.sourceEndpoint();
    const t2 = e.targetEndpoint();
    const style = e.style("line-style");
    const dash = style === "dashed" ? ' stroke-dasharray="6 4"' : style === "dotted" ? ' stroke-dasharray="2 3"' : "";
    out.push(`<line x1="${x(s.x)}" y1="${y(s.y)}" x2="${x(t2.x)}" y2="${y(t2.y)}" stroke="${esc(e.style("line-color"))}" stroke-width="${parseFloat(e.style("width")) || 2}"${dash}/>`);
    const ang = Math.atan2(t2.y - s.y, t2.x - s.x);
    const p1 = [t2.x - 9 * Math.cos(ang - 0.4), t2.y - 9 * Math.sin(ang - 0.4)];
    const p2 = [t2.x - 9 * Math.cos(ang + 0.4), t2.y - 9 * Math.sin(ang + 0.4)];
    out.push(`<polygon points="${x(t2.x)},${y(t2.y)} ${x(p1[0])},${y(p1[1])} ${x(p2[0])},${y(p2[1])}" fill="${esc(e.style("line-color"))}"/>`);
  });
  cy.nodes().forEach((n) => {
    const p = n.position();
    const nw = n.outerWidth();
    const nh = n.outerHeight();
    const fill = esc(n.style("background-color"));
    const stroke = esc(n.style("border-color"));
    const dash = n.style("border-style") === "dashed" ? ' stroke-dasharray="5 3"' : "";
    const shape = n.style("shape");
    if (shape === "diamond") {
      out.push(`<polygon points="${x(p.x)},${y(p.y - nh / 2)} ${x(p.x + nw / 2)},${y(p.y)} ${x(p.x)},${y(p.y + nh / 2)} ${x(p.x - nw / 2)},${y(p.y)}" fill="${fill}" stroke="${stroke}"${dash}/>`);
    } else {
      const r = shape === "hexagon" ? nh / 2 : 6;
      out.push(`<rect x="${x(p.x - nw / 2)}" y="${y(p.y - nh / 2)}" width="${nw.toFixed(1)}" height="${nh.toFixed(1)}" rx="${r}" fill="${fill}" stroke="${stroke}"${dash}/>`);
    }
    const label = String(n.data("label") || "").split("\n");
    const ly = n.style("text-valign") === "bottom" ? p.y + nh / 2 + 12 : p.y - ((label.length - 1) * 13) / 2 + 4;
    label.forEach((line, i) => {
      out.push(`<text x="${x(p.x)}" y="${y(ly + i * 13)}" text-anchor="middle" fill="${esc(n.style("color"))}">${esc(line)}</text>`);
    });
  });
  out.push("</svg>");
  return out.join("\n");
}
