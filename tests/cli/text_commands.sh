#!/usr/bin/env bash
# The command-line contract of fmt, verify and stats (docs/ARCHITECTURE.md):
# exit statuses, FILE:LINE:COL errors, compressed input and stdin, and no
# partial or overwritten output after a failed run.
# Usage: text_commands.sh path/to/hlogym SOURCE_DIR
set -u
hlogym="$1"
hlogym_abs="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cat > "$work/good.hlo" <<'HLO'
HloModule good, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}

ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  %sum = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b)
  ROOT %product = f32[2]{0} multiply(f32[2]{0} %sum, f32[2]{0} %b)
}
HLO
# Line 4, column 19 is where the unknown opcode starts.
cat > "$work/bad_syntax.hlo" <<'HLO'
HloModule bad

ENTRY main {
  a = f32[2] frobnicate()
}
HLO
cat > "$work/bad_shape.hlo" <<'HLO'
HloModule bad_shape

ENTRY main {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT sum = f32[2] add(a, b)
}
HLO

# fmt: prints canonical text that parses again to the same text.
"$hlogym" fmt "$work/good.hlo" > "$work/out1.hlo" || fail "fmt good exited $?"
"$hlogym" fmt "$work/out1.hlo" > "$work/out2.hlo" || fail "fmt of fmt output exited $?"
cmp -s "$work/out1.hlo" "$work/out2.hlo" || fail "fmt is not a fixed point"
grep -q 'ROOT %product = f32\[2\]{0} multiply(f32\[2\]{0} %sum, f32\[2\]{0} %b)' "$work/out1.hlo" ||
  fail "fmt output lacks the canonical root line"

# Compressed inputs and stdin give the same text.
gzip -c "$work/good.hlo" > "$work/good.hlo.gz"
zstd -q -c "$work/good.hlo" > "$work/good.hlo.zst"
"$hlogym" fmt "$work/good.hlo.gz" | cmp -s - "$work/out1.hlo" || fail "fmt of .gz differs"
"$hlogym" fmt "$work/good.hlo.zst" | cmp -s - "$work/out1.hlo" || fail "fmt of .zst differs"
"$hlogym" fmt - < "$work/good.hlo" | cmp -s - "$work/out1.hlo" || fail "fmt of stdin differs"

# Syntax errors: FILE:LINE:COL: error: ..., status 2, output file untouched.
echo "precious" > "$work/keep.hlo"
"$hlogym" fmt "$work/bad_syntax.hlo" -o "$work/keep.hlo" 2> "$work/err.txt"
status=$?
[ "$status" -eq 2 ] || fail "fmt of bad syntax exited $status, want 2"
grep -q "bad_syntax.hlo:4:[0-9]*: error: " "$work/err.txt" ||
  fail "syntax error lacks FILE:LINE:COL: $(cat "$work/err.txt")"
grep -q "frobnicate" "$work/err.txt" || fail "syntax error does not name the opcode"
[ "$(cat "$work/keep.hlo")" = "precious" ] || fail "failed fmt overwrote its output"
"$hlogym" fmt "$work/good.hlo" -o "$work/keep.hlo" || fail "fmt -o exited $?"
cmp -s "$work/keep.hlo" "$work/out1.hlo" || fail "fmt -o wrote different text"
"$hlogym" fmt "$work/good.hlo" -o "$work/written.hlo.gz" || fail "fmt -o .gz exited $?"
gzip -dc "$work/written.hlo.gz" | cmp -s - "$work/out1.hlo" || fail "fmt -o .gz is not gzip of the text"

# verify: 0 for good, 2 naming the instruction for a shape error.
"$hlogym" verify "$work/good.hlo" || fail "verify good exited $?"
"$hlogym" verify "$work/bad_shape.hlo" 2> "$work/err.txt"
status=$?
[ "$status" -eq 2 ] || fail "verify bad shape exited $status, want 2"
grep -q "sum" "$work/err.txt" || fail "verify error does not name the instruction: $(cat "$work/err.txt")"
"$hlogym" verify "$work/missing.hlo" 2> "$work/err.txt"
[ $? -eq 2 ] || fail "verify of a missing file should exit 2"
grep -q "missing.hlo" "$work/err.txt" || fail "missing-file error does not name the file"

# stats: op count and histogram, text and JSON.
"$hlogym" stats "$work/good.hlo" > "$work/stats.txt" || fail "stats exited $?"
grep -q "op count: *4" "$work/stats.txt" || fail "stats op count: $(cat "$work/stats.txt")"
grep -Eq "parameter +2" "$work/stats.txt" || fail "stats histogram lacks parameter 2"
"$hlogym" stats --json "$work/good.hlo" > "$work/stats.json" || fail "stats --json exited $?"
grep -q '"op_count": 4' "$work/stats.json" || fail "stats --json op_count"
grep -q '"multiply": 1' "$work/stats.json" || fail "stats --json histogram"

# Modules by name (text/module_locator.h): corpus <family>/<name>, smoke/<name>,
# from any working directory; unknown names are bad input naming the argument.
if [ -f "$2/datasets/corpus/manifest.json" ]; then
  (cd "$work" && "$hlogym_abs" stats gpt2/gpt2_infer_L2_d128_h8_s64_b2_f32 > "$work/byname.txt") ||
    fail "stats gpt2/<name> exited $?"
  grep -q "op count" "$work/byname.txt" || fail "stats gpt2/<name>: $(cat "$work/byname.txt")"
fi
"$hlogym" verify smoke/gpt2_infer || fail "verify smoke/gpt2_infer exited $?"
"$hlogym" stats gpt2/no_such_module 2> "$work/err.txt"
[ $? -eq 2 ] || fail "stats of an unknown module name should exit 2"
grep -q "gpt2/no_such_module" "$work/err.txt" || fail "unknown-name error does not name it"

# hlo-opt's spellings: opt --list-passes (sorted, comma-separated) and -o - (stdout).
"$hlogym" opt --list-passes > "$work/names.txt" || fail "opt --list-passes exited $?"
[ "$(wc -l < "$work/names.txt")" -eq 1 ] || fail "opt --list-passes is not one line"
tr ',' '\n' < "$work/names.txt" > "$work/names.lines"
sort -c "$work/names.lines" || fail "opt --list-passes is not sorted"
for name in algsimp dce cse reshape-mover; do
  grep -qx "$name" "$work/names.lines" || fail "opt --list-passes lacks $name"
done
# as many names as list-passes prints passes (the lines before its blank line and pipelines)
[ "$(wc -l < "$work/names.lines")" -eq "$("$hlogym" list-passes | sed '/^$/q' | grep -c .)" ] ||
  fail "opt --list-passes does not list every pass"
"$hlogym" opt "$work/good.hlo" --passes=dce -o - > "$work/stdout.hlo" || fail "opt -o - exited $?"
cmp -s "$work/stdout.hlo" "$work/out1.hlo" || fail "opt -o - differs from fmt's text"
[ ! -e ./- ] || fail "opt -o - wrote a file named '-'"
"$hlogym" opt --passes=dce 2> "$work/err.txt"
[ $? -eq 2 ] || fail "opt without FILE should exit 2"
# A word that names no command is bad input, and the error names it.
"$hlogym" frobnicate "$work/good.hlo" 2> "$work/err.txt"
status=$?
[ "$status" -eq 2 ] || fail "an unknown command exited $status, want 2"
grep -q "unknown command 'frobnicate'" "$work/err.txt" ||
  fail "an unknown command's error does not name it: $(cat "$work/err.txt")"
# A module that does not verify is bad input, as for verify: no pass runs, nothing is written.
echo "precious" > "$work/keep.hlo"
"$hlogym" opt "$work/bad_shape.hlo" --pipeline=xla-cpu-default -o "$work/keep.hlo" 2> "$work/err.txt"
status=$?
[ "$status" -eq 2 ] || fail "opt of a module that does not verify exited $status, want 2"
grep -q "bad_shape.hlo: error: .*sum" "$work/err.txt" ||
  fail "opt's error does not name the file and the instruction: $(cat "$work/err.txt")"
[ "$(cat "$work/keep.hlo")" = "precious" ] || fail "a failed opt overwrote its output"
# --for-xla: a convolution whose kernel is larger than its input stays unswapped for XLA
# (algsimp swaps it, with a reverse of the kernel, for hlogym itself).
cat > "$work/swap.hlo" <<'HLO'
HloModule swap

ENTRY main {
  x = f32[1,2,2,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  ROOT c = f32[1,2,2,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
HLO
"$hlogym" opt "$work/swap.hlo" --passes=algsimp | grep -q "reverse(" ||
  fail "opt --passes=algsimp does not swap the convolution"
"$hlogym" opt "$work/swap.hlo" --passes=algsimp --for-xla | grep -q "reverse(" &&
  fail "opt --for-xla swapped the convolution"
"$hlogym" opt "$work/swap.hlo" --pipeline=xla-cpu-default --for-xla | grep -q "reverse(" &&
  fail "opt --pipeline=xla-cpu-default --for-xla swapped the convolution"
# --time-passes: phase times and one row per pass that ran, on stderr; the module is unchanged.
"$hlogym" opt smoke/gpt2_infer --pipeline=xla-cpu-default --time-passes -o "$work/timed.hlo" \
  2> "$work/times.txt" || fail "opt --time-passes exited $?"
grep -q "^time: load .* ms, passes .* ms ([0-9]* instructions at the start), write" \
  "$work/times.txt" || fail "opt --time-passes prints no phase times: $(head -1 "$work/times.txt")"
for name in algsimp dce cse; do
  grep -q " $name\$" "$work/times.txt" || fail "opt --time-passes has no row for $name"
done
"$hlogym" opt smoke/gpt2_infer --pipeline=xla-cpu-default -o "$work/untimed.hlo" ||
  fail "opt exited $?"
cmp -s "$work/timed.hlo" "$work/untimed.hlo" || fail "--time-passes changed the output"
# --explain: the pipeline's structure, and which modules a sub-pipeline runs on where not every
# one (XLA partitions a module compiled for several partitions, removes shardings otherwise); no
# gate shows up as a pass of its own in the pass times.
"$hlogym" opt smoke/gpt2_infer --pipeline=xla-cpu-default --explain -o "$work/explained.hlo" \
  2> "$work/explain.txt" || fail "opt --explain exited $?"
grep -q "^  spmd-partitioner (on modules compiled for several partitions):" "$work/explain.txt" ||
  fail "opt --explain does not say where spmd-partitioner runs"
grep -q "^  sharding-removal (on modules compiled for one partition):" "$work/explain.txt" ||
  fail "opt --explain does not say where sharding-removal runs"
grep -q -E " (sharding-removal|spmd-partitioner)\$" "$work/times.txt" &&
  fail "opt --time-passes lists a partition-gated sub-pipeline as a pass"
# --trace-passes: the start's op count, then each pass that changed the module with the op count
# after it; the last is the output's op count.
"$hlogym" opt smoke/gpt2_infer --pipeline=xla-cpu-default --trace-passes -o "$work/traced.hlo" \
  2> "$work/trace.txt" || fail "opt --trace-passes exited $?"
start="$("$hlogym" stats smoke/gpt2_infer | sed -n 's/^ *op count: *//p')"
[ "$(head -1 "$work/trace.txt")" = "$(printf '%8d  (start)' "$start")" ] ||
  fail "opt --trace-passes does not start at I = $start: $(head -1 "$work/trace.txt")"
end="$("$hlogym" stats "$work/traced.hlo" | sed -n 's/^ *op count: *//p')"
[ "$(tail -1 "$work/trace.txt" | awk '{print $1}')" = "$end" ] ||
  fail "opt --trace-passes does not end at the output's $end: $(tail -1 "$work/trace.txt")"
grep -q " algsimp\$" "$work/trace.txt" || fail "opt --trace-passes has no algsimp row"
cmp -s "$work/traced.hlo" "$work/untimed.hlo" || fail "--trace-passes changed the output"
# --dump-to: the module at the start and after each pass that changed it, numbered in order, one
# file per --trace-passes row; the last one is the output.
"$hlogym" opt smoke/gpt2_infer --pipeline=xla-cpu-default --dump-to "$work/dump" \
  -o "$work/dumped.hlo" || fail "opt --dump-to exited $?"
[ -f "$work/dump/0000.after_start.hlo" ] || fail "opt --dump-to wrote no 0000.after_start.hlo"
[ "$(ls "$work/dump" | wc -l)" -eq "$(wc -l < "$work/trace.txt")" ] ||
  fail "opt --dump-to wrote $(ls "$work/dump" | wc -l) files for $(wc -l < "$work/trace.txt") trace rows"
cmp -s "$(ls -d "$work"/dump/* | sort | tail -1)" "$work/dumped.hlo" ||
  fail "the last --dump-to file is not the output"
cmp -s "$work/dumped.hlo" "$work/untimed.hlo" || fail "--dump-to changed the output"
: > "$work/not_a_dir"
"$hlogym" opt smoke/gpt2_infer --pipeline=xla-cpu-default --dump-to "$work/not_a_dir/sub" \
  -o "$work/never.hlo" 2> "$work/dump_err.txt" && fail "opt --dump-to into a file succeeded"
grep -q "dump-to" "$work/dump_err.txt" || fail "opt --dump-to error does not name the flag"
[ -e "$work/never.hlo" ] && fail "a failed opt --dump-to wrote its output"

# --version: the project's version from CMakeLists.txt, status 0.
want_version="$(sed -n 's/^project(hlogym VERSION \([0-9.]*\) .*/\1/p' "$2/CMakeLists.txt")"
[ -n "$want_version" ] || fail "CMakeLists.txt names no project version"
[ "$("$hlogym" --version)" = "$want_version" ] || fail "--version is not '$want_version'"

# Usage errors are bad input too.
"$hlogym" frobnicate 2> /dev/null
[ $? -eq 2 ] || fail "unknown subcommand should exit 2"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all CLI checks passed"
