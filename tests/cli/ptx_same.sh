#!/bin/bash
# scripts/ptx-same.py's comparison on made-up PTX: a kernel moved from an
# anonymous namespace into a named one given with --ns, with other branch
# labels, line information and linkage, is the same kernel; one
# instruction changed is a difference; without --ns the moved kernel is
# one only there and one only here; usage errors exit 2.
set -u
T=$(mktemp -d /tmp/kbv-cli-ptx.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "ptx_same: $*"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
cat >"$T/old.ptx" <<'PTX'
.version 9.0
.target sm_90
	.file	1 "/tmp/a/chain_post.cu"

.entry _ZN46_GLOBAL__N__69448317_13_chain_post_cu_6f1b0fed3fooILi1EEEvPf(
	.param .u64 _ZN46_GLOBAL__N__69448317_13_chain_post_cu_6f1b0fed3fooILi1EEEvPf_param_0
)
{
	.shared .align 4 .f32 _ZZN46_GLOBAL__N__69448317_13_chain_post_cu_6f1b0fed3fooILi1EEEvPfE2sh;
	.loc	1 40 3
	@%p1 bra 	$L__BB9_4;
	add.f32 	%f1, %f2, %f3;
$L__BB9_4:
	ret;
}

.entry _Z3barv(
)
{
	ret;
}
PTX
sed -e 's/_ZN46_GLOBAL__N__69448317_13_chain_post_cu_6f1b0fed/_ZN12chain_post_k/g' \
    -e 's/_ZZN46_GLOBAL__N__69448317_13_chain_post_cu_6f1b0fed/_ZZN12chain_post_k/g' \
    -e 's/^\.entry _ZN12/.visible .entry _ZN12/' -e 's/BB9_4/BB0_4/g' -e 's/\.loc	1 40 3/.loc	1 77 5/' \
    "$T/old.ptx" >"$T/new.ptx"
sed 's/add.f32 	%f1, %f2, %f3/sub.f32 	%f1, %f2, %f3/' "$T/new.ptx" >"$T/changed.ptx"
python3 - "$T" <<'PY' || fail "comparison"
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("ptx_same", os.path.join("scripts", "ptx-same.py"))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
t = sys.argv[1]
ns = m.prefix_pattern(["chain_post_k"])
old, new = m.kernels(t + "/old.ptx", ns), m.kernels(t + "/new.ptx", ns)
assert len(old) == 2, old.keys()
assert old == new, "a moved kernel differs"
changed = m.kernels(t + "/changed.ptx", ns)
assert set(changed) == set(old) and changed != old, "a changed instruction went unseen"
bare = m.prefix_pattern([])
assert set(m.kernels(t + "/old.ptx", bare)) != set(m.kernels(t + "/new.ptx", bare)), "--ns not needed"
PY
python3 scripts/ptx-same.py HEAD >/dev/null 2>&1; [ $? -eq 2 ] || fail "a missing argument is not exit 2"
python3 scripts/ptx-same.py --help >"$T/help" && grep -q 'REV OLD_GLOB NEW_GLOB' "$T/help" || fail "--help"
echo "ptx_same: ok"
