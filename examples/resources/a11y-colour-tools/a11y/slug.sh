#!/bin/sh
# Turn a heading into an anchor id: lowercase, runs of other characters become one hyphen.
heading_anchor() {
  printf '%s\n' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'
}
