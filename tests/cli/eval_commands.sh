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

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "eval_commands: ok"
