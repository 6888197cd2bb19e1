#!/usr/bin/env bash
# One description of the command line, four renderings: every option of every command in
# the registry (`pipec __commands`, which walks it as completion does, so a command added
# to the registry is covered without touching this test) must appear in that command's
# part of `pipec --help-all`, of the man page pipec(1), of the bash completion and of the
# zsh completion.
#   cli_docs_test.sh PIPEC GENERATED_DIR
set -uo pipefail
pipec=$1 gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "cli-docs: $*"; status=1; }

"$pipec" __commands >"$tmp/registry" || { echo "cli-docs: pipec __commands failed"; exit 1; }
"$pipec" --help-all >"$tmp/help-all" || fail "pipec --help-all failed"
[ -f "$gen/man/pipec.1.gz" ] || { echo "cli-docs: no $gen/man/pipec.1.gz (help2man is needed)"; exit 1; }
# The page as text: roff's '\-' is '-', font changes go.
zcat "$gen/man/pipec.1.gz" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/^\.[A-Z][A-Z]* *//' >"$tmp/man"
bash_script=$gen/completion/pipec zsh_script=$gen/completion/_pipec
[ -s "$bash_script" ] && [ -s "$zsh_script" ] || { echo "cli-docs: completion scripts missing"; exit 1; }

commands=$(grep -v $'\t' "$tmp/registry")
[ -n "$commands" ] || fail "the registry lists no command"
top=$(grep -v ' ' <<<"$commands")
for c in check build graph fmt lsp upload run completion; do
  grep -qx "$c" <<<"$top" || fail "the registry lacks '$c'"
done

# section FILE CMD: the lines from the one that is CMD alone to the next top-level command.
section() {
  awk -v cmd="$2" -v tops="$top" '
    BEGIN { n = split(tops, t, "\n"); for (i = 1; i <= n; i++) is_top[t[i]] = 1 }
    { line = $0; gsub(/^[ \t]+|[ \t]+$/, "", line) }
    on && line != cmd && (line in is_top) { exit }
    line == cmd { on = 1 }
    on { print }' "$1"
}
# has TEXT NAME: NAME as a whole option name in TEXT.
has() { grep -Eq -- "(^|[^-A-Za-z0-9])$2([^-A-Za-z0-9]|\$)" <<<"$1"; }

while IFS= read -r cmd; do
  first=${cmd%% *}
  help_part=$(section "$tmp/help-all" "$first")
  man_part=$(section "$tmp/man" "$first")
  [ -n "$help_part" ] || fail "--help-all has no part for '$first'"
  [ -n "$man_part" ] || fail "pipec(1) has no part for '$first'"
  bash_part=$(sed -n "/^  \" $cmd\")\$/,/^    ;;\$/p" "$bash_script")
  zsh_part=$(sed -n "/^  \" $cmd\")\$/,/^    ;;\$/p" "$zsh_script")
  [ -n "$bash_part" ] || fail "bash completion has no case for '$cmd'"
  [ -n "$zsh_part" ] || fail "zsh completion has no case for '$cmd'"
  grep -qx "$first" <<<"$(grep -o "^ *'[^:']*:" "$zsh_script" | tr -d " ':")" || fail "zsh does not describe '$first'"
  while IFS=$'\t' read -r _ names; do
    for n in $names; do
      has "$help_part" "$n" || fail "'$cmd $n' is not in pipec --help-all"
      has "$man_part" "$n" || fail "'$cmd $n' is not in pipec(1)"
      has "$bash_part" "$n" || fail "'$cmd $n' is not in the bash completion"
      has "$zsh_part" "$n" || fail "'$cmd $n' is not in the zsh completion"
    done
  done < <(awk -F'\t' -v c="$cmd" '$1 == c && NF > 1' "$tmp/registry")
done <<<"$commands"
checked=$(grep -c $'\t' "$tmp/registry")
[ $status -eq 0 ] && echo "cli-docs: ok ($(wc -l <<<"$commands") commands, $checked options in all four)"
exit $status
