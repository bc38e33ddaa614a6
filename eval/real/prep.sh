#!/usr/bin/env bash
# Materialise the public GM vaults the cases in eval/real/cases/ were written on: the .md notes
# and .obsidian/*.json settings at the commit in vaults.tsv, nothing else. The notes are other
# people's work and stay out of this repository.
#
#   eval/real/prep.sh OUT_DIR [MIRROR_DIR]
#
# MIRROR_DIR holds bare snapshots as <owner>+<repo>/repo (the layout the project's fetch tool
# makes); without it each repository is cloned from GitHub (needs the network).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: prep.sh OUT_DIR [MIRROR_DIR]}
mirrors=${2:-}
mkdir -p "$out"
tail -n +2 "$here/vaults.tsv" | while IFS=$'\t' read -r name repo commit _licence _style; do
  if [ -n "$mirrors" ]; then
    git_dir="$mirrors/${repo/\//+}/repo"
  else
    git_dir="$out/.git-$name"
    [ -d "$git_dir" ] || git clone -q --bare "https://github.com/$repo" "$git_dir"
  fi
  dest="$out/$name"
  rm -rf "$dest"
  mkdir -p "$dest"
  git --git-dir="$git_dir" ls-tree -r -z --name-only "$commit" | while IFS= read -r -d '' f; do
    case "$f" in
      *.md | .obsidian/*.json)
        mkdir -p "$dest/$(dirname "$f")"
        git --git-dir="$git_dir" show "$commit:$f" >"$dest/$f" 2>/dev/null || true
        ;;
    esac
  done
  echo "$name: $(find "$dest" -name '*.md' | wc -l) notes"
done
