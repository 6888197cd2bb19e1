#!/usr/bin/env bash
# `cmake --install BUILD --prefix TMP`, then the installed programs run from there:
# pipec build (an example), pipec upload --help (exec'd pipec-kfp found in libexec),
# pipec-launcher --help, and the files the layout promises are in place.
#   install_prefix_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/p" >/dev/null
p=$tmp/p
fail() { echo "install.prefix: $*" >&2; exit 1; }
for f in bin/pipec bin/pipec-launcher libexec/pipec/pipec-kfp share/pipec/rbac.yaml share/pipec/Dockerfile \
         share/doc/pipec/README.md share/doc/pipec/docs/language.md share/doc/pipec/examples/mpi_run.pipe \
         share/doc/pipec/copyright share/bash-completion/completions/pipec share/zsh/vendor-completions/_pipec \
         share/man/man1/pipec.1.gz share/man/man1/pipec-launcher.1.gz share/man/man7/pipec-language.7.gz; do
  [ -e "$p/$f" ] || fail "missing $f"
done
[ ! -e "$p/bin/pipec-kfp" ] || fail "pipec-kfp is a helper, not a command in bin/"

# The installed compiler builds an installed example, and the package is the build tree's.
(cd "$tmp" && "$p/bin/pipec" build "$p/share/doc/pipec/examples/mpi_run.pipe" -o "$tmp/installed.tar.gz" -q) ||
  fail "installed pipec build failed"
"$build/compiler/driver/pipec" build "$src/dsl-examples/mpi_run.pipe" -o "$tmp/built.tar.gz" -q
cmp -s "$tmp/installed.tar.gz" "$tmp/built.tar.gz" || fail "installed pipec writes another package"

# upload/run live in pipec-kfp, which pipec must find in libexec/pipec/.
"$p/bin/pipec" upload --help >"$tmp/upload.txt" 2>&1 || { cat "$tmp/upload.txt"; fail "pipec upload --help"; }
grep -q -- "--host" "$tmp/upload.txt" || fail "pipec upload --help does not list --host"
"$p/bin/pipec" completion bash | cmp -s - "$p/share/bash-completion/completions/pipec" ||
  fail "installed completion differs from 'pipec completion bash'"

"$p/bin/pipec-launcher" --help >"$tmp/launcher.txt" 2>&1 || fail "pipec-launcher --help"
grep -q "usage: pipec-launcher" "$tmp/launcher.txt" || fail "pipec-launcher --help prints no usage"
"$p/bin/pipec" --version | grep -Eq '^pipec [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)$' ||
  fail "pipec --version: $("$p/bin/pipec" --version)"
# Unpacked first: `zcat | grep -q` fails under pipefail once grep stops reading early
# (zcat gets SIGPIPE), which a long page makes likely.
zcat "$p/share/man/man1/pipec.1.gz" >"$tmp/pipec.1"
grep -q '^\.TH PIPEC "1"' "$tmp/pipec.1" || fail "pipec.1 is not a man page"
grep -q 'completion' "$tmp/pipec.1" || fail "pipec.1 does not list every command"
echo "install.prefix: ok ($(find "$p" -type f | wc -l) files)"
