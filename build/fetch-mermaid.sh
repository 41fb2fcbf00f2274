#!/usr/bin/env bash
# Puts the pinned Mermaid build into services/notes/internal/assets/mermaid (`make mermaid`):
# dist/mermaid.min.js and LICENSE of the npm package mermaid@VERSION, where VERSION is that
# folder's VERSION file. npm checks the package against the registry's integrity hash, and
# this script checks the script against the folder's mermaid.min.js.sha256, so a run gives
# the committed bytes or fails. To move to another version: write it into VERSION, run
# `make mermaid PIN=1` (which records the new sha256 instead of checking it), review the
# release notes, and commit the three files.
set -euo pipefail

cd "$(dirname "$0")/.."
dir=services/notes/internal/assets/mermaid
version=$(cat "$dir/VERSION")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "mermaid@$version" >/dev/null)
tar -xzf "$tmp/mermaid-$version.tgz" -C "$tmp" package/dist/mermaid.min.js package/LICENSE package/package.json
license=$(node -p 'require(process.argv[1]).license' "$tmp/package/package.json" 2>/dev/null ||
	grep -o '"license": *"[^"]*"' "$tmp/package/package.json")
case $license in
*MIT*) ;;
*) echo "mermaid@$version is licensed $license, not MIT: review before vendoring" >&2; exit 1 ;;
esac
sum=$(sha256sum "$tmp/package/dist/mermaid.min.js" | cut -d' ' -f1)
if [ "${PIN:-}" = 1 ]; then
	echo "$sum  mermaid.min.js" >"$dir/mermaid.min.js.sha256"
elif [ "$sum  mermaid.min.js" != "$(cat "$dir/mermaid.min.js.sha256")" ]; then
	echo "mermaid@$version: dist/mermaid.min.js has sha256 $sum, not the pinned one ($dir/mermaid.min.js.sha256)" >&2
	exit 1
fi
cp "$tmp/package/dist/mermaid.min.js" "$tmp/package/LICENSE" "$dir/"
echo "mermaid $version: sha256 $sum"
