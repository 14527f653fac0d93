#!/usr/bin/env bash
# Run by `npm test` (as its pretest step): the Debian packages the tests drive, installed when missing.
# - chromium: the web client's end-to-end test (playwright-core cannot download a browser here);
#   fonts-noto-color-emoji only makes its screenshots readable.
# - nats-server: the cluster tests (test/cluster.test.ts) start a three-server JetStream cluster.
# As root with apt-get it installs them; otherwise it stops and prints the command to run.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
dpkg-query -W -f='${Status}' fonts-noto-color-emoji 2>/dev/null | grep -q 'install ok installed' || missing+=(fonts-noto-color-emoji)

[ ${#missing[@]} -eq 0 ] && exit 0

command="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "The tests need these Debian packages: ${missing[*]}" >&2
  echo "Install them, then run npm test again:  sudo sh -c '$command'" >&2
  exit 1
fi

echo "Installing the Debian packages the tests need: ${missing[*]}"
if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") >/dev/null; then
  echo "Installing ${missing[*]} failed; run it by hand:  $command" >&2
  exit 1
fi
