#!/bin/bash
set -euo pipefail
curl -fsSL -o /tmp/setup-tool.sh https://get.example.com/setup.sh
echo "downloaded"
bash /tmp/setup-tool.sh --quiet
powershell -c "iex (iwr https://get.example.com/i.ps1)"
node -e "require('https').get('https://get.example.com/x.js', r => { let s=''; r.on('data', d => s += d); r.on('end', () => eval(s)); })"
