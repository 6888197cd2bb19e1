#!/usr/bin/env bash
# Builds the Debian package with cpack, unpacks it into a scratch root with dpkg -x, runs
# the unpacked programs, checks that Depends was computed from the binaries, and runs
# lintian (no error tag may remain; warnings are printed).
#   deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install.deb: $*" >&2; exit 1; }
(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; fail "cpack failed"; }
deb=$(ls "$tmp"/out/pipec_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
dpkg-deb -x "$deb" "$tmp/root"
r=$tmp/root/usr
# Every shared library an installed program loads is in Depends, by its package (libarchive
# and fmt are linked in, so their packages are not: what is listed follows the binaries).
packages=$(sed 's/ ([^)]*)//g; s/ *| */\n/g; s/, /\n/g' <<<"$depends")  # one name a line
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
needed=0
for bin in $(find "$r" -type f -perm -u+x); do
  file "$bin" | grep -q ELF || continue
  for soname in $(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}'); do
    pkg=$(dpkg -S "*/$multiarch/$soname" 2>/dev/null | head -n1 | cut -d: -f1)
    [ -n "$pkg" ] || fail "no package ships $soname (needed by ${bin#$tmp/root})"
    grep -qxF "$pkg" <<<"$packages" || fail "Depends lacks $pkg for $soname of ${bin#$tmp/root}: $depends"
    needed=$((needed + 1))
  done
done
[ "$needed" -gt 0 ] || fail "no program of the package needs a shared library: none was found"
grep -q "libcurl4" <<<"$depends" || fail "Depends lacks libcurl4 (dpkg-shlibdeps): $depends"
# Each program's output is kept before grep reads it: `prog | grep -q` fails under pipefail
# when grep stops reading before the program has written its last block (SIGPIPE), as
# `pipec run --help` did once it outgrew one 4 KiB stdio buffer.
"$r/bin/pipec" --version >"$tmp/version.txt" && grep -q '^pipec ' "$tmp/version.txt" || fail "unpacked pipec --version"
"$r/bin/pipec" build "$r/share/doc/pipec/examples/mpi_run.pipe" -o "$tmp/x.tar.gz" -q || fail "unpacked pipec build"
"$r/bin/pipec" run --help >"$tmp/run-help.txt" && grep -q -- "--param" "$tmp/run-help.txt" || fail "unpacked pipec run --help"
"$r/bin/pipec-launcher" --help >"$tmp/launcher-help.txt" && grep -q "usage: pipec-launcher" "$tmp/launcher-help.txt" ||
  fail "unpacked pipec-launcher --help"
file "$r/bin/pipec" 2>/dev/null | grep -q "not stripped" && fail "pipec is not stripped"
# The licence (Apache-2.0): the repository's LICENSE is the standard text, and the
# package's copyright file is machine-readable (DEP-5) and names it for every file.
cmp -s "$src/LICENSE" /usr/share/common-licenses/Apache-2.0 || fail "LICENSE is not the Apache-2.0 text"
copyright=$r/share/doc/pipec/copyright
head -n1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
  fail "copyright is not machine-readable"
[ "$(grep -c '^License: Apache-2.0$' "$copyright")" = 2 ] || fail "copyright does not license Files: * under Apache-2.0"
grep -q '/usr/share/common-licenses/Apache-2.0' "$copyright" || fail "copyright does not point at common-licenses"
if command -v lintian >/dev/null; then
  lintian --allow-root --info "$deb" >"$tmp/lintian.txt" 2>&1 || true
  cat "$tmp/lintian.txt"
  if grep -q '^E: ' "$tmp/lintian.txt"; then fail "lintian reports errors"; fi
  # Any tag about the copyright file or the licence (warnings and pedantic ones too).
  if grep -Eqi '^[EWIP]: .*(copyright|licen[cs]e)' "$tmp/lintian.txt"; then fail "lintian: copyright tags"; fi
else
  echo "install.deb: lintian not installed (scripts/setup.sh installs it)"
fi
echo "install.deb: ok ($deb)"
