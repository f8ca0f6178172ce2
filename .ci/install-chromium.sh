#!/usr/bin/env bash
# install-chromium.sh installs the Debian chromium package, which the debug
# UI's browser test (cmd/meshd/internal/debugui) drives headless. It does
# nothing when a chromium binary is already present, so CI can run it on
# every build.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version
