#!/usr/bin/env bash
# Puts the English Obsidian help vault (github.com/obsidianmd/obsidian-help, folder en/)
# into DEST (default .tools/vaults/obsidian-help), for the tests that run over a real vault
# no one here wrote: SHARE_REAL_VAULT=$PWD/.tools/vaults/obsidian-help go test ./libs/testkit/obsidian/
#
# The repository carries no licence, so the vault is never committed here; it is read from
# a git clone or bare mirror named by OBSIDIAN_HELP_GIT (a .git directory or a bare repo),
# or cloned from GitHub when that variable is unset. OBSIDIAN_HELP_COMMIT pins the commit
# (default: the one the checks in docs/vault-check.md were made at). A mirror may lack the
# blobs of its largest files (two videos); those are written empty, since links resolve by
# a file's name and never by its content.
set -euo pipefail

dest=${1:-.tools/vaults/obsidian-help}
commit=${OBSIDIAN_HELP_COMMIT:-fa179e91e86eaff5859226cc045c81000d64e3cd}
gitdir=${OBSIDIAN_HELP_GIT:-}

if [ -z "$gitdir" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git clone --bare https://github.com/obsidianmd/obsidian-help "$tmp/repo.git"
	gitdir=$tmp/repo.git
fi
g() { git --git-dir="$gitdir" "$@"; }

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
empty=0
while IFS=$'\t' read -r -d '' meta path; do
	read -r mode _ blob <<<"$meta"
	out=$dest.tmp/${path#en/}
	mkdir -p "$(dirname "$out")"
	if [ "$mode" = 120000 ]; then
		ln -s "$(g cat-file blob "$blob")" "$out"
	elif g cat-file -e "$blob" 2>/dev/null; then
		g cat-file blob "$blob" >"$out"
	else
		: >"$out"
		empty=$((empty + 1))
	fi
done < <(g ls-tree -r -z "$commit" en/)
echo "$commit" >"$dest.tmp/.commit"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "obsidian-help@$commit -> $dest: $(find "$dest" -name '*.md' | wc -l) notes, $empty absent blobs written empty"
