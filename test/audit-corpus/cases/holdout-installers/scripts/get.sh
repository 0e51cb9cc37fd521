#!/bin/sh
curl -sSL https://tools.example.org/get | sudo sh -s -- -y
wget https://tools.example.org/get.sh -O- | bash
curl -L https://tools.example.org/run.py | python3 -
sh -c "$(wget -qO- https://tools.example.org/i)"
curl -o install.sh https://tools.example.org/install.sh
chmod +x install.sh && ./install.sh
ruby -e "$(curl -fsSL https://tools.example.org/install.rb)"
curl -fsSL https://tools.example.org/keys.gpg | gpg --dearmor -o /usr/share/keyrings/tools.gpg
curl -s https://tools.example.org/data.json | node scripts/parse.js
