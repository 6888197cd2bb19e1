#!/usr/bin/env bash
# Does all set-up on a Debian 12 machine: installs the Debian packages pipec needs
# (when missing), configures and builds into build/ (or $PIPEC_BUILD_DIR).
# Run as root, or with sudo available, the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libcli11-dev
  libcurl4-openssl-dev libarchive-dev libcpp-httplib-dev libssl-dev nettle-dev libgtest-dev libgmock-dev
  clang libclang-rt-dev
  python3 python3-yaml ca-certificates curl
  # ../shared/tools/kfp-v2-validate (the KFP v2 target's checks) and its vendored kfp SDK
  python3-protobuf python3-kubernetes python3-requests python3-urllib3 python3-google-auth
  python3-tabulate python3-six python3-certifi python3-dateutil python3-click
  python3-click-option-group
  help2man pandoc lintian file zsh
  # pipec run --local: the sandbox of container steps, and the peers its tests train with
  bubblewrap openmpi-bin python3-mpi4py python3-torch
  # pipec graph --format svg renders with Graphviz's dot
  graphviz
  # tests/visuals runs the KFP 1.8 frontend's TypeScript parser of UI metadata
  node-typescript node-d3-dsv
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run the shared validators. A machine may already have a Node.js
# that ships its own npm (NodeSource's nodejs does, and conflicts with Debian's
# npm package): ask for Debian's packages only for the commands that are missing.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The LSP test's client libraries (tests/lsp/package-lock.json), from the npm registry.
if [ ! -d tests/lsp/node_modules ]; then
  (cd tests/lsp && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
# The VS Code extension's client library and its tests' and packaging's tools
# (editors/vscode/package-lock.json; keytar, vsce's optional keychain access, is left out).
if [ ! -d editors/vscode/node_modules ]; then
  (cd editors/vscode && npm ci --omit=optional --no-audit --no-fund --loglevel=error >/dev/null)
fi

build=${PIPEC_BUILD_DIR:-build}
# -O2 without debugging information: a third less compile time than RelWithDebInfo's
# -O2 -g, the same code (PIPEC_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=RelWithDebInfo" for a debugger).
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" ${PIPEC_CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
