#!/usr/bin/env bash
# run and equiv: digests, exit statuses (0 equivalent, 3 different, 2 bad
# input) and the mismatch report.
# Usage: eval_commands.sh path/to/hlogym SOURCE_DIR
set -u
hlogym="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cat > "$work/a.hlo" <<'HLO'
HloModule a
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] add(x, y)
}
HLO
cat > "$work/b.hlo" <<'HLO'
HloModule b
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] add(y, x)
}
HLO
cat > "$work/c.hlo" <<'HLO'
HloModule c
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] subtract(x, y)
}
HLO
echo "HloModule bad ENTRY {" > "$work/bad.hlo"

out="$("$hlogym" run "$work/a.hlo" --seed 3)" || fail "run exited $?"
echo "$out" | grep -q "f32\[4\] hash=" || fail "run digest missing: $out"
[ "$out" = "$("$hlogym" run "$work/a.hlo" --seed 3)" ] || fail "run is not deterministic"
[ "$out" != "$("$hlogym" run "$work/a.hlo" --seed 4)" ] || fail "seed has no effect"

# --io writes .npy inputs/outputs with manifests; --inputs reads the arguments back.
out="$("$hlogym" run "$work/a.hlo" --seed 5 --io "$work/io")" || fail "run --io exited $?"
for f in arg0.npy arg1.npy out.npy inputs.json outputs.json; do
  [ -f "$work/io/$f" ] || fail "run --io did not write $f"
done
head -c 6 "$work/io/out.npy" | grep -q "NUMPY" || fail "out.npy lacks the .npy magic"
grep -q '"type": "f32"' "$work/io/outputs.json" || fail "outputs.json lacks the element type"
[ "$out" = "$("$hlogym" run "$work/a.hlo" --inputs "$work/io")" ] || fail "run --inputs differs from the saved run"
"$hlogym" run "$work/c.hlo" --inputs "$work/nonexistent" > /dev/null 2>&1
[ $? -eq 2 ] || fail "run --inputs with missing files should exit 2"

"$hlogym" equiv "$work/a.hlo" "$work/b.hlo" --trials 3 > /dev/null
[ $? -eq 0 ] || fail "commuted add should be equivalent"
out="$("$hlogym" equiv "$work/a.hlo" "$work/c.hlo")"
status=$?
[ $status -eq 3 ] || fail "add vs subtract should exit 3, got $status"
echo "$out" | grep -q "output {} element" || fail "mismatch not reported: $out"
"$hlogym" equiv "$work/a.hlo" "$work/bad.hlo" > /dev/null 2>&1
[ $? -eq 2 ] || fail "bad input should exit 2"
"$hlogym" equiv "$src/datasets/smoke/mlp_train.hlo" "$src/datasets/smoke/mlp_train.optimized.hlo" > /dev/null
[ $? -eq 0 ] || fail "mlp_train vs XLA-optimized should be equivalent"

# A module with bitcast-convert takes the f64 look too: x * 2^30 + 1 - x * 2^30 rounds the 1
# away in f32, the f64 original keeps it, so a module answering 1 is equivalent by it.
cat > "$work/bits_a.hlo" <<'HLO'
HloModule cancel
ENTRY e {
  x = f32[64] parameter(0)
  s = f32[] constant(1073741824)
  sb = f32[64] broadcast(s), dimensions={}
  one = f32[] constant(1)
  ob = f32[64] broadcast(one), dimensions={}
  y = f32[64] multiply(x, sb)
  y1 = f32[64] add(y, ob)
  c = f32[64] subtract(y1, y)
  r = f32[64] copy(c)
  bits = u32[64] bitcast-convert(x)
  ROOT t = (f32[64], u32[64]) tuple(r, bits)
}
HLO
sed 's/r = f32\[64\] copy(c)/r = f32[64] copy(ob)/' "$work/bits_a.hlo" > "$work/bits_b.hlo"
out="$("$hlogym" equiv "$work/bits_a.hlo" "$work/bits_b.hlo")"
[ $? -eq 0 ] || fail "bitcast-convert module: the f64 look should excuse the rounding: $out"
echo "$out" | grep -q "f64 reference" || fail "bitcast-convert module: no f64 look: $out"

# A vacuous comparison (the original is NaN everywhere) is not judged: exit 4.
cat > "$work/nan.hlo" <<'HLO'
HloModule nan
ENTRY main {
  x = f32[4] parameter(0)
  three = f32[] constant(3)
  t = f32[4] broadcast(three), dimensions={}
  d = f32[4] subtract(x, t)
  ROOT s = f32[4] sqrt(d)
}
HLO
out="$("$hlogym" equiv "$work/nan.hlo" "$work/nan.hlo")"
status=$?
[ $status -eq 4 ] || fail "all-NaN self comparison should exit 4 (not judged), got $status"
echo "$out" | grep -q "all NaN" || fail "not-judged reason missing: $out"

# A module whose evaluation passes --max-instructions (loop iterations counted) is not judged:
# exit 4, the budget named; with the default budget the same check is judged.
cat > "$work/loop.hlo" <<'HLO'
HloModule loop
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4] get-tuple-element(p), index=1
  y = f32[4] sine(x)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
HLO
out="$("$hlogym" equiv "$work/loop.hlo" "$work/loop.hlo" --max-instructions 5000)"
status=$?
[ $status -eq 4 ] || fail "a loop past --max-instructions should exit 4 (not judged), got $status"
echo "$out" | grep -q "budget of 5000 instructions" || fail "the budget is not named: $out"
"$hlogym" equiv "$work/loop.hlo" "$work/loop.hlo" > /dev/null ||
  fail "the loop within the default budget should be equivalent to itself, got $?"

# Resource limits: a clear error naming what is too big, exit 2, never bad_alloc.
cat > "$work/huge.hlo" <<'HLO'
HloModule huge
ENTRY main {
  x = f32[100000,100000,100000] parameter(0)
  ROOT s = f32[100000,100000,100000] add(x, x)
}
HLO
err="$("$hlogym" run "$work/huge.hlo" 2>&1 >/dev/null)"
status=$?
[ $status -eq 2 ] || fail "run of an f32[1e5,1e5,1e5] add should exit 2, got $status: $err"
echo "$err" | grep -q "parameter x (f32\[100000,100000,100000\]) needs 3.73e+06 GiB" ||
  fail "run's memory error should name the parameter and the size: $err"
"$hlogym" equiv "$work/huge.hlo" "$work/huge.hlo" > /dev/null 2>&1
[ $? -eq 2 ] || fail "equiv of the huge module should exit 2"
# Arguments fit, the result does not: the instruction is named.
cat > "$work/grow.hlo" <<'HLO'
HloModule grow
ENTRY main {
  x = f32[1024] parameter(0)
  ROOT b = f32[1024,1024,64] broadcast(x), dimensions={0}
}
HLO
err="$("$hlogym" run "$work/grow.hlo" --max-memory 0.1 2>&1 >/dev/null)"
status=$?
[ $status -eq 2 ] || fail "run over --max-memory should exit 2, got $status: $err"
echo "$err" | grep -q "instruction b (broadcast): f32\[1024,1024,64\] needs 0.25 GiB" ||
  fail "run's memory error should name the instruction: $err"
"$hlogym" run "$work/grow.hlo" --max-memory 1 > /dev/null || fail "grow.hlo should run within 1 GiB"
# A shape of more than 2^53 elements: the parser rejects it (verify, opt, run).
sed 's/100000,100000,100000/100000000000,100000000000,100000000000/g' "$work/huge.hlo" > "$work/absurd.hlo"
for cmd in verify "opt --passes=dce" run; do
  err="$("$hlogym" $cmd "$work/absurd.hlo" 2>&1 >/dev/null)"
  status=$?
  [ $status -eq 2 ] || fail "$cmd of an overflowing shape should exit 2, got $status: $err"
  echo "$err" | grep -q "absurd.hlo:3:7: error: shape has too many elements" ||
    fail "$cmd should say where the shape is too large: $err"
done

# equiv --split: a data-parallel step split for 4 partitions against it run whole
# (exit 0), and a split whose loss is left partial (exit 3).
cat > "$work/dp.hlo" <<'HLO'
HloModule dp, num_partitions=4, allow_spmd_sharding_propagation_to_output={true}
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (w: f32[8,4], x: f32[16,8]) -> f32[] {
  %w = f32[8,4] parameter(0), sharding={replicated}
  %x = f32[16,8] parameter(1), sharding={devices=[4,1]<=[4]}
  %y = f32[16,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[16,4] tanh(%y)
  %zero = f32[] constant(0)
  ROOT %loss = f32[] reduce(%t, %zero), dimensions={0,1}, to_apply=%sum
}
HLO
"$hlogym" equiv "$work/dp.hlo" --split >/dev/null ||
  fail "equiv --split of a data-parallel step should exit 0, got $?"
"$hlogym" opt "$work/dp.hlo" --passes=spmd-partitioning -o "$work/dp_split.hlo" 2>/dev/null
sed 's/ROOT %all-reduce[^=]*= f32\[\] all-reduce(f32\[\] %loss).*/ROOT %partial = f32[] copy(f32[] %loss)/' \
  "$work/dp_split.hlo" > "$work/dp_partial.hlo"
grep -q "partial" "$work/dp_partial.hlo" || fail "the broken split was not made: $(cat "$work/dp_split.hlo")"
"$hlogym" equiv "$work/dp.hlo" "$work/dp_split.hlo" --split >/dev/null ||
  fail "equiv --split of spmd-partitioning's own split should exit 0"
out="$("$hlogym" equiv "$work/dp.hlo" "$work/dp_partial.hlo" --split)"
status=$?
[ $status -eq 3 ] || fail "equiv --split of a split left partial should exit 3, got $status: $out"
echo "$out" | grep -q "NOT equivalent: partition 0" || fail "equiv --split should say where: $out"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "eval_commands: ok"
