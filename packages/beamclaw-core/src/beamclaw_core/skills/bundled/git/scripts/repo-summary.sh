#!/usr/bin/env bash
# Overview of the git repository in the current directory (read-only).
set -u
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "not inside a git repository: $(pwd)" >&2
  exit 2
fi
echo "== repository: $(git rev-parse --show-toplevel)"
echo "== branch"
git status --short --branch | head -1
echo "== changes"
git status --short | head -50
echo "== last commits"
git log --oneline --decorate -10 2>/dev/null || echo "(no commits yet)"
echo "== stashes"
git stash list | head -10
