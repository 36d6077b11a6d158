#!/usr/bin/env bash
# The system packages the tests need beyond Python's: Java 17 (PySpark), curl (a presigned-URL test) and
# headless Chromium with chromedriver (the web UI tests, through selenium). Installs what is missing with
# apt when it can (root, Debian/Ubuntu); otherwise says what is missing: the tests that need it then skip
# (the browser tests) or fail with the reason, and CI (.ci/run) always installs them.
set -euo pipefail

missing=()
java -version 2>&1 | grep -q 'version "17' || missing+=(openjdk-17-jre-headless)
command -v curl >/dev/null || missing+=(curl)
{ command -v chromium >/dev/null && command -v chromedriver >/dev/null; } || missing+=(chromium chromium-driver)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "warning: missing system packages: ${missing[*]} (install them with apt as root)" >&2
fi
