#!/usr/bin/env bash
# build.sh installs the exact GraphiQL, React and ReactDOM builds pinned in
# web/package-lock.json and copies their standalone (UMD) files into dist/,
# which is committed and embedded in the vigia binary so `go build` needs no npm
# and the explorer works with no internet.
#
#   graph/explorer/build.sh           refresh dist/
#   graph/explorer/build.sh --check   exit 1 if dist/ differs from what the lock file builds
#
# To move to another version: edit web/package.json, run
# `npm install --package-lock-only --ignore-scripts` in web/, then this script.
#
# The files are copied byte for byte (no bundler, no transform), so each one can be
# checked against the package the lock file's integrity hash names.
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
# --ignore-scripts because nothing here needs an install script to run.
cp "$here/web/package.json" "$here/web/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

out="$work/dist"
mkdir -p "$out"
nm="$work/node_modules"
cp "$nm/react/umd/react.production.min.js" "$out/react.production.min.js"
cp "$nm/react-dom/umd/react-dom.production.min.js" "$out/react-dom.production.min.js"
cp "$nm/graphiql/graphiql.min.js" "$out/graphiql.min.js"
cp "$nm/graphiql/graphiql.min.css" "$out/graphiql.min.css"

# The licences travel with the code they cover; the handler serves this file too.
{
	for pkg in graphiql react react-dom; do
		version="$(node -p "require('$nm/$pkg/package.json').version")"
		echo "==== $pkg $version ===="
		cat "$nm/$pkg/LICENSE"
		echo
	done
	echo "graphiql.min.js also bundles graphql-js, CodeMirror 5, Radix UI and other MIT-licensed"
	echo "packages; their licences are listed in the graphiql package's dependencies."
} >"$out/THIRD_PARTY_LICENSES.txt"

if [ "$mode" = "check" ]; then
	if ! diff -r -q "$out" "$here/dist"; then
		echo "graph/explorer/dist is stale: run graph/explorer/build.sh" >&2
		exit 1
	fi
	echo "graph/explorer/dist matches web/package-lock.json"
	exit 0
fi

rm -rf "$here/dist"
cp -r "$out" "$here/dist"
echo "graph/explorer/dist refreshed:"
(cd "$here/dist" && ls -l)
