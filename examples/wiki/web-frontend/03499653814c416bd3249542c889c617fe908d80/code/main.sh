#!/bin/sh
# Reads a heading on stdin, prints its anchor id.
heading_anchor() {
  printf '%s\n' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'
}
read -r heading
heading_anchor "$heading"
