#!/usr/bin/env bash
# `hlogym fuzz-passes FOLDER` over real dumps: a module that does not verify and one the
# evaluator cannot run are reported as skipped, with the reason, and the rest are checked;
# exit 0 when nothing failed, 2 when nothing could be fuzzed.
# Usage: fuzz_passes.sh path/to/hlogym SOURCE_DIR
set -u
hlogym="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mkdir "$work/dumps"
cat > "$work/dumps/a_good.hlo" <<'HLO'
HloModule good

ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  d = f32[8] subtract(x, y)
  unused = f32[8] exponential(d)
  z = f32[8] add(d, d)
  ROOT r = f32[8] multiply(z, y)
}
HLO
# An all-gather whose result does not match its operand (what some real dumps hold).
cat > "$work/dumps/b_does_not_verify.hlo" <<'HLO'
HloModule bad_gather

ENTRY main {
  x = bf16[] parameter(0)
  ROOT g = bf16[] all-gather(x), dimensions={}, replica_groups={{0,1}}
}
HLO
cat > "$work/dumps/c_needs_replicas.hlo" <<'HLO'
HloModule gather

ENTRY main {
  x = f32[4] parameter(0)
  ROOT g = f32[8] all-gather(x), dimensions={0}, replica_groups={{0,1}}
}
HLO

out="$("$hlogym" fuzz-passes "$work/dumps" --sequences 60 --max-length 20 2>"$work/err")"
rc=$?
[[ $rc -eq 0 ]] || fail "fuzz-passes over a folder with skipped modules exited $rc: $(cat "$work/err")"
grep -q "60 (module, sequence) checks over 1 modules: [0-9]* pass runs, [1-9][0-9]* changed" <<<"$out" ||
  fail "not 60 checks on 1 module, some changing it: $out"
grep -q "^SKIPPED .*b_does_not_verify.hlo: " <<<"$out" || fail "the module that does not verify is not reported skipped: $out"
grep -q "^SKIPPED .*c_needs_replicas.hlo: cannot be evaluated: .*collective whose result shape differs" <<<"$out" ||
  fail "the module that cannot be evaluated is not reported skipped: $out"

json="$("$hlogym" fuzz-passes "$work/dumps" --sequences 5 --max-length 3 --json 2>/dev/null)"
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["modules"] == 1 and r["sequences"] == 5, r
assert sorted(m["module"].rsplit("/", 1)[-1] for m in r["skipped_modules"]) == \
    ["b_does_not_verify.hlo", "c_needs_replicas.hlo"], r["skipped_modules"]
' "$json" || fail "the JSON report does not list the skipped modules"

rm "$work/dumps/a_good.hlo"
"$hlogym" fuzz-passes "$work/dumps" --sequences 5 >/dev/null 2>"$work/err"
rc=$?
[[ $rc -eq 2 ]] || fail "a folder with nothing to fuzz exited $rc, not 2"
grep -q "no module could be fuzzed" "$work/err" || fail "no clear error: $(cat "$work/err")"

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "fuzz_passes.sh: all checks passed"
