#!/usr/bin/env bash
# build.sh bundles the web app (web/src/*.ts) with the esbuild, Cytoscape.js and
# cytoscape-dagre versions pinned in web/package-lock.json into dist/, which is
# committed and embedded in the vigia binary, so `go build` needs no npm and the app
# works with no internet.
#
#   ui/build.sh           refresh dist/
#   ui/build.sh --check   exit 1 if dist/ differs from what the sources and lock file build
#
# To move to another version: edit web/package.json, run
# `npm install --package-lock-only --ignore-scripts` in web/, then this script.
# esbuild's output is deterministic for one version and one input, which is what
# makes --check possible.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode="build"
case "${1:-}" in
"") ;;
--check) mode="check" ;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# npm ci runs in a scratch copy so no node_modules is left in the work tree, and
# --ignore-scripts because nothing needs an install script: esbuild's binary comes
# from its platform package (@esbuild/linux-x64 here).
cp "$here/web/package.json" "$here/web/package-lock.json" "$work/"
cp -r "$here/web/src" "$work/src"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

out="$work/dist"
mkdir -p "$out"
(cd "$work" && node -e '
const esbuild = require("esbuild");
esbuild.buildSync({
  entryPoints: ["src/main.ts"],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  legalComments: "none",
  charset: "utf8",
  logLevel: "error",
  outfile: "dist/app.js",
});
')
cp "$here/web/src/app.css" "$out/app.css"

# The licences travel with the code they cover; the handler serves this file too.
nm="$work/node_modules"
{
	for pkg in cytoscape cytoscape-dagre; do
		version="$(node -p "require('$nm/$pkg/package.json').version")"
		echo "==== $pkg $version ===="
		cat "$nm/$pkg/LICENSE"
		echo
	done
	echo "cytoscape-dagre bundles dagre and graphlib (MIT, Chris Pettitt); app.js is built with esbuild (MIT)."
} >"$out/THIRD_PARTY_LICENSES.txt"

if [ "$mode" = "check" ]; then
	if ! diff -r -q "$out" "$here/dist"; then
		echo "ui/dist is stale: run ui/build.sh" >&2
		exit 1
	fi
	echo "ui/dist matches web/src and web/package-lock.json"
	exit 0
fi

rm -rf "$here/dist"
cp -r "$out" "$here/dist"
echo "ui/dist refreshed:"
(cd "$here/dist" && ls -l)
