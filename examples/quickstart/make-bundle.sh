#!/bin/sh
# Rebuild invoicer.bundle (the quickstart's repository) from repo/, pin its commit in the suite's
# skill.yaml files, and regenerate predictions.jsonl from recorded/. Author, committer and dates
# are fixed, so the commit hash is the same on every machine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$here/repo/." "$work/"
cd "$work"
git init -q -b main
git add -A
GIT_AUTHOR_NAME="skillsmith" GIT_AUTHOR_EMAIL="quickstart@skillsmith.invalid" \
GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" \
GIT_COMMITTER_NAME="skillsmith" GIT_COMMITTER_EMAIL="quickstart@skillsmith.invalid" \
GIT_COMMITTER_DATE="2024-01-01T00:00:00Z" \
  git -c commit.gpgsign=false commit -q -m "invoicer 0.1.0"
commit=$(git rev-parse HEAD)
rm -f "$here/invoicer.bundle"
git bundle create -q "$here/invoicer.bundle" main
for file in "$here"/suite/skills/*/skill.yaml; do
  sed -i "s/^  commit: .*/  commit: $commit/" "$file"
done
python3 "$here/make-predictions.py"
echo "invoicer.bundle at commit $commit"
