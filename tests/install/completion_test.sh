#!/usr/bin/env bash
# Sources the generated bash completion and asks it for completions, as bash does at a
# TAB: COMP_WORDS/COMP_CWORD set, _pipec called, COMPREPLY read.
#   completion_test.sh PIPEC COMPLETION_SCRIPT SOURCE_DIR
set -uo pipefail
pipec=$1 script=$2 src=$3
cd "$src/dsl-examples"
# `compopt` works only inside a real completion; a stand-in keeps the script quiet.
compopt() { :; }
source "$script"
status=0
# expect WANT WORD...: the last WORD is the one being completed.
expect() {
  local want=$1; shift
  COMP_WORDS=("$pipec" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _pipec
  local got="${COMPREPLY[*]}"
  if [ "$got" != "$want" ]; then
    echo "completion of '$*': got '$got', want '$want'"
    status=1
  fi
}
expect "build" bu
expect "check component completion" c
expect "--mpi-v1" build mpi_run.pipe --mp
expect "json" check --diagnostics j
expect "--diagnostics=json" check --diagnostics=j
expect "batch_size=" run mpi_run.pipe -p bat
expect "git_sync_branch= gpus=" run mpi_run.pipe -p g
expect "--param=workers=" run mpi_run.pipe --param=wor
expect "" run -p wor                         # no .pipe on the line: nothing to offer
expect "--params-file" run x.pipe --params-f
expect "mpi_run.pipe" build mpi_ru
expect "--help --help-all --version" --
# offers WORD|lacks WORD, then the line: whether WORD is among the completions.
offers() {
  local mode=$1 word=$2; shift 2
  COMP_WORDS=("$pipec" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _pipec
  local found=no w
  for w in "${COMPREPLY[@]}"; do [ "$w" = "$word" ] && found=yes; done
  if { [ "$mode" = offers ] && [ $found = no ]; } || { [ "$mode" = lacks ] && [ $found = yes ]; }; then
    echo "completion of '$*': $mode '$word' expected, got '${COMPREPLY[*]}'"
    status=1
  fi
}
# `run --local` offers its own options, not the remote-only ones; `run` the other way round.
for w in -j --jobs --volume --run-dir --resume --cache --from -p --param --params-file --diagnostics; do offers offers $w run --local mpi_run.pipe -; done
for w in --host --wait --token --experiment --target --poll; do offers lacks $w run --local mpi_run.pipe -; done
for w in --host --wait --token --experiment --target --poll -p; do offers offers $w run mpi_run.pipe -; done
for w in -j --jobs --volume --run-dir --resume --cache --from; do offers lacks $w run mpi_run.pipe -; done
offers offers --local run mpi_run.pipe --lo
expect "operator trainer-v2 pods" build mpi_run.pipe --training-runtime ""
expect "trainer-v2" build mpi_run.pipe --training-runtime tr
expect "kfp-v1 kfp-v2" run x.pipe --target ""
expect "bash" completion b
# zsh: the generated function parses, and names every command the bash script offers.
zsh_script=$(dirname "$script")/_pipec
if command -v zsh >/dev/null; then
  zsh -n "$zsh_script" || { echo "zsh completion does not parse"; status=1; }
  for c in check build upload run completion; do
    grep -q "^      '$c:" "$zsh_script" || { echo "zsh completion lacks command $c"; status=1; }
  done
fi
[ $status -eq 0 ] && echo "completion: ok"
exit $status
