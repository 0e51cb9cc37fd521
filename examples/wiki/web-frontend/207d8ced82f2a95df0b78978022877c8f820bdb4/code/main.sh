#!/bin/sh
# Prints a focus style that shows a ring for keyboard focus only.
cat <<'CSS'
:focus:not(:focus-visible) { outline: none; }
:focus-visible { outline: 2px solid #1d3557; outline-offset: 2px; }
CSS
