// Vigia's GraphQL explorer: starts GraphiQL (loaded as UMD globals React, ReactDOM
// and GraphiQL by the page) against the endpoint named in #graphiql's data attributes.
(function () {
  "use strict";

  var root = document.getElementById("graphiql");
  var endpoint = root.dataset.endpoint;

  // The scroll lock of GraphiQL's dialogs adds a <style> element and stamps it
  // with this global when set; the page's Content-Security-Policy allows styles
  // from this origin plus exactly this per-response nonce, and no inline styles.
  window.__webpack_nonce__ = root.dataset.styleNonce;

  // A token can arrive as #token=svc_... : fragments never reach the server, so
  // the token lands in no access log. It is taken out of the address bar at once
  // so it is neither bookmarked nor shared by copying the URL.
  function tokenFromFragment() {
    if (!location.hash || location.hash.length < 2) {
      return "";
    }
    var params = new URLSearchParams(location.hash.slice(1));
    var token = params.get("token");
    if (token === null) {
      return "";
    }
    params.delete("token");
    var rest = params.toString();
    history.replaceState(history.state, "", location.pathname + location.search + (rest ? "#" + rest : ""));
    // Only characters a bearer token can hold (RFC 6750 b64token); anything else
    // would make an invalid header, so it is dropped rather than sent.
    return /^[A-Za-z0-9\-._~+\/]+=*$/.test(token) ? token : "";
  }

  var token = tokenFromFragment();

  function hasHeader(headers, name) {
    var lower = name.toLowerCase();
    return Object.keys(headers).some(function (key) {
      return key.toLowerCase() === lower;
    });
  }

  // fetcher posts every operation (introspection included) as JSON with the
  // headers of the headers editor. The fragment's token is also added when the
  // editor names no Authorization header, so it works even where GraphiQL opens
  // a tab restored from an earlier visit.
  function fetcher(params, opts) {
    var headers = { "Content-Type": "application/json", Accept: "application/json" };
    var fromEditor = (opts && opts.headers) || {};
    Object.keys(fromEditor).forEach(function (key) {
      headers[key] = String(fromEditor[key]);
    });
    if (token && !hasHeader(fromEditor, "Authorization")) {
      headers.Authorization = "Bearer " + token;
    }
    return fetch(endpoint, {
      method: "POST",
      headers: headers,
      body: JSON.stringify(params),
      credentials: "same-origin",
    }).then(function (res) {
      return res.text().then(function (text) {
        try {
          return JSON.parse(text);
        } catch (e) {
          return { errors: [{ message: "HTTP " + res.status + ": the answer is not JSON" }] };
        }
      });
    });
  }

  // GraphiQL 3 keeps headers out of its saved tabs when shouldPersistHeaders is
  // off, but its history and favourites ("graphiql:queries", "graphiql:favorites")
  // still store each run's headers, token included. This storage drops them
  // there unless the user has turned header persistence on in the settings.
  var historyKeys = { "graphiql:queries": "queries", "graphiql:favorites": "favorites" };
  function withoutHeaders(key, value) {
    var list = historyKeys[key];
    if (!list || localStorage.getItem("graphiql:shouldPersistHeaders") === "true") {
      return value;
    }
    try {
      var saved = JSON.parse(value);
      (saved[list] || []).forEach(function (entry) {
        delete entry.headers;
      });
      return JSON.stringify(saved);
    } catch (e) {
      return "";
    }
  }
  var storage = {
    getItem: function (key) {
      return localStorage.getItem(key);
    },
    setItem: function (key, value) {
      localStorage.setItem(key, withoutHeaders(key, value));
    },
    removeItem: function (key) {
      localStorage.removeItem(key);
    },
    clear: function () {
      localStorage.clear();
    },
    get length() {
      return localStorage.length;
    },
  };

  var props = {
    fetcher: fetcher,
    defaultQuery: root.dataset.defaultQuery,
    storage: storage,
    // Headers may hold a token: never written to localStorage unless the user
    // turns that on in GraphiQL's settings.
    shouldPersistHeaders: false,
    isHeadersEditorEnabled: true,
  };
  if (token) {
    props.headers = JSON.stringify({ Authorization: "Bearer " + token }, null, 2);
  }

  var app = ReactDOM.createRoot(root);
  app.render(React.createElement(GraphiQL, props));

  // The Examples menu: analyst queries (titles in Portuguese or English, by the
  // browser's language). Choosing one puts its operation and variables in the editors
  // through GraphiQL's own query and variables props.
  var bar = document.getElementById("examples");
  var select = document.getElementById("example-select");
  var examples = [];
  try {
    examples = JSON.parse(bar.dataset.examples || "[]");
  } catch (e) {
    examples = [];
  }
  var pt = (navigator.language || "").toLowerCase().indexOf("pt") === 0;
  bar.querySelector("label").textContent = pt ? "Exemplos" : "Examples";
  select.options[0].textContent = pt ? "Escolha uma consulta de exemplo…" : "Choose an example query…";
  examples.forEach(function (ex) {
    var option = document.createElement("option");
    option.value = ex.id;
    option.textContent = pt ? ex.title_pt : ex.title_en;
    select.appendChild(option);
  });
  select.addEventListener("change", function () {
    var chosen = examples.filter(function (ex) {
      return ex.id === select.value;
    })[0];
    if (!chosen) {
      return;
    }
    props.query = chosen.query;
    props.variables = chosen.variables;
    app.render(React.createElement(GraphiQL, props));
  });
})();
