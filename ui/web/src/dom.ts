// Small DOM helpers: elements are built node by node (never from HTML strings), so
// no text from the API is ever parsed as markup, and no inline style attribute is
// written (the Content-Security-Policy forbids them); widths go through the CSSOM.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;

export function h(tag: string, attrs?: Attrs | null, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === false) continue;
      if (typeof v === "function") {
        el.addEventListener(k.replace(/^on/, ""), v as EventListener);
      } else if (k === "class") {
        el.className = String(v);
      } else {
        el.setAttribute(k, v === true ? "" : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

// bar is a horizontal bar of value out of max (0..max), with its figure beside it.
export function bar(value: number | null | undefined, max: number, label: string, cls = ""): HTMLElement {
  const fill = h("span", { class: "bar-fill " + cls });
  const pct = value === null || value === undefined ? 0 : Math.max(0, Math.min(100, (value / max) * 100));
  fill.style.width = pct.toFixed(1) + "%";
  return h("span", { class: "bar", title: label }, h("span", { class: "bar-track" }, fill), h("span", { class: "bar-figure" }, label));
}

const svgNS = "http://www.w3.org/2000/svg";

// sparkline draws values (oldest first, 0..100) as a small SVG line with dots.
export function sparkline(values: (number | null)[], width = 240, height = 48): SVGSVGElement {
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("class", "sparkline");
  const pts: [number, number][] = [];
  const n = values.length;
  values.forEach((v, i) => {
    if (v === null) return;
    const x = n === 1 ? width / 2 : 4 + (i * (width - 8)) / (n - 1);
    const y = height - 4 - (v / 100) * (height - 8);
    pts.push([x, y]);
  });
  if (pts.length > 1) {
    const line = document.createElementNS(svgNS, "polyline");
    line.setAttribute("points", pts.map((p) => p[0].toFixed(1) + "," + p[1].toFixed(1)).join(" "));
    line.setAttribute("class", "spark-line");
    svg.appendChild(line);
  }
  for (const [x, y] of pts) {
    const c = document.createElementNS(svgNS, "circle");
    c.setAttribute("cx", x.toFixed(1));
    c.setAttribute("cy", y.toFixed(1));
    c.setAttribute("r", "2.5");
    c.setAttribute("class", "spark-dot");
    svg.appendChild(c);
  }
  return svg;
}

export function fmt(n: number | null | undefined, digits = 1): string {
  if (n === null || n === undefined || Number.isNaN(n)) return "—";
  return n.toFixed(digits);
}
