// Vigia's web app: sign-in, the layout and the hash router. Routes live after "#/"
// so that a deep link (#/datasets/ID) needs nothing from the server but the page.
import { APIError, setBase, setToken, token, validToken } from "./api";
import { h, clear, append } from "./dom";
import { languages, lang, load, t } from "./i18n";
import { searchPage, datasetPage, incidentsPage, incidentPage, domainsPage, domainPage } from "./pages";
import { destroyGraph, lineagePage } from "./graph";

const root = document.getElementById("app") as HTMLElement;
const langKey = "vigia.lang";

// A token can arrive as #token=svc_... : fragments never reach the server, so it
// lands in no access log. It moves to session storage (gone when the tab closes)
// and leaves the address bar at once, so it is neither bookmarked nor shared.
function takeFragmentToken(): void {
  const hash = location.hash.slice(1);
  if (!hash || hash.startsWith("/")) return;
  const params = new URLSearchParams(hash);
  const tok = params.get("token");
  if (tok === null) return;
  if (validToken(tok)) setToken(tok);
  history.replaceState(null, "", location.pathname + location.search + "#/");
}

export interface Route {
  path: string[];
  params: URLSearchParams;
}

function route(): Route {
  const raw = location.hash.replace(/^#\/?/, "");
  const [p, qs] = raw.split("?", 2);
  return { path: p.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(qs || "") };
}

export function go(path: string): void {
  location.hash = "#/" + path;
}

function nav(): HTMLElement {
  const r = route();
  const here = r.path[0] || "";
  const link = (path: string, key: string) =>
    h("a", { href: "#/" + path, class: here === path.split("/")[0] ? "active" : "" }, t(key));
  const select = h(
    "select",
    {
      id: "lang",
      "aria-label": t("nav.language"),
      onchange: async (ev: Event) => {
        localStorage.setItem(langKey, (ev.target as HTMLSelectElement).value);
        await load(root.dataset.messages || "/ui/messages/", localStorage.getItem(langKey));
        render();
      },
    },
    languages.map((l) => h("option", { value: l, selected: l === lang() }, l)),
  );
  return h(
    "header",
    { class: "top" },
    h("a", { href: "#/", class: "brand" }, "Vigia"),
    h("nav", null, link("", "nav.search"), link("incidents", "nav.incidents"), link("domains", "nav.domains")),
    h("span", { class: "spacer" }),
    select,
    token()
      ? h("button", { id: "signout", class: "link", onclick: () => { setToken(""); render(); } }, t("nav.sign_out"))
      : null,
  );
}

function signIn(main: HTMLElement): void {
  const input = h("input", { id: "token", type: "password", autocomplete: "off", placeholder: "svc_…", "aria-label": t("signin.token") }) as HTMLInputElement;
  const err = h("p", { class: "error", role: "alert" });
  const form = h(
    "form",
    {
      class: "signin",
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        const tok = input.value.trim();
        if (!validToken(tok)) {
          err.textContent = t("signin.invalid");
          return;
        }
        setToken(tok);
        render();
      },
    },
    h("h1", null, t("signin.title")),
    h("p", null, t("signin.help")),
    input,
    h("button", { type: "submit" }, t("signin.submit")),
    err,
  );
  append(main, [form]);
}

export function showError(main: HTMLElement, e: unknown): void {
  clear(main);
  if (e instanceof APIError && e.status === 404) {
    append(main, [h("div", { class: "notfound", id: "not-found" }, h("h1", null, t("error.not_found")), h("p", null, t("error.not_found_help")))]);
    return;
  }
  if (e instanceof APIError && e.status === 401) {
    setToken("");
    append(main, [h("p", { class: "error", role: "alert" }, t("error.unauthenticated"))]);
    signIn(main);
    return;
  }
  const msg = e instanceof APIError ? e.message + " (" + e.code + ")" : t("error.generic");
  append(main, [h("p", { class: "error", role: "alert" }, msg)]);
}

let generation = 0;

// render draws the page of the current route. A newer navigation makes an older
// page's late answers draw nothing (the generation check in each page).
export async function render(): Promise<void> {
  const gen = ++generation;
  destroyGraph();
  clear(root);
  const main = h("main", { id: "main" });
  append(root, [nav(), main]);
  if (!token()) {
    signIn(main);
    return;
  }
  const r = route();
  const live = () => gen === generation;
  try {
    switch (r.path[0] || "") {
      case "":
        await searchPage(main, r, live);
        break;
      case "datasets":
        if (r.path[2] === "lineage") await lineagePage(main, r.path[1], r, live);
        else await datasetPage(main, r.path[1], live);
        break;
      case "incidents":
        if (r.path[1]) await incidentPage(main, r.path[1], live);
        else await incidentsPage(main, live);
        break;
      case "domains":
        if (r.path[1]) await domainPage(main, r.path[1], live);
        else await domainsPage(main, live);
        break;
      default:
        throw new APIError(404, "not_found", "");
    }
  } catch (e) {
    if (live()) showError(main, e);
  }
}

async function start(): Promise<void> {
  setBase(root.dataset.api || "/api/v1");
  takeFragmentToken();
  await load(root.dataset.messages || "/ui/messages/", localStorage.getItem(langKey));
  window.addEventListener("hashchange", () => {
    takeFragmentToken();
    void render();
  });
  await render();
}

void start();
