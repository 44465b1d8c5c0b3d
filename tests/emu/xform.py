import re, sys
src = open(sys.argv[1]).read()
src = src.replace('#include <cooperative_groups.h>', '')
src = src.replace('#include <mma.h>', '')
src = src.replace('#include <cuda_runtime.h>', '')
src = src.replace('#include <cuda_bf16.h>', '')  # emu.h has the bfloat16 subset
src = src.replace('#include "kbv.h"', '#include "kbv.h"\n#include "emu.h"', 1)
import os
CL = os.environ.get('EMU_CLUSTER', '1') != '1'
if CL:
    # per-block shared memory for the blocks of a cluster
    src = re.sub(r'extern __shared__ (?:__align__\(\d+\) )?(\w+) (\w+)\[\];', r'\1 *\2 = (\1 *)(emu_dyn_smem + emu_crank() * emu_dyn_bytes);', src)
    src = re.sub(r'__shared__ (\w+) (\w+)(\[[^\]]*\])?;', lambda m: 'static %s %s__all[8]%s; auto &%s = %s__all[emu_crank()];' % (m.group(1), m.group(2), m.group(3) or '', m.group(2), m.group(2)), src)
    src = re.sub(r'__shared__ (\w+) (\w+), (\w+);', r'static \1 \2__all[8], \3__all[8]; auto &\2 = \2__all[emu_crank()]; auto &\3 = \3__all[emu_crank()];', src)
else:
    src = re.sub(r'extern __shared__ (?:__align__\(\d+\) )?(\w+) (\w+)\[\];', r'\1 *\2 = (\1 *)emu_dyn_smem;', src)
src = re.sub(r'asm volatile\("cp\.async\.cg\.shared\.global[^\n]*\n', 'memcpy(smem, gmem, 16);\n', src)
src = re.sub(r'asm volatile\([^\n]*\n', ';\n', src)
out = []
i = 0
pat = re.compile(r'([A-Za-z_]\w*(?:<[^<>()]*>)?)<<<(.*?)>>>\(', re.S)
while True:
    m = pat.search(src, i)
    if not m:
        out.append(src[i:]); break
    out.append(src[i:m.start()])
    j = m.end(); depth = 1
    while depth:
        if src[j] == '(': depth += 1
        elif src[j] == ')': depth -= 1
        j += 1
    args = src[m.end():j - 1]
    out.append('emu_launch(emu_cfg(%s), [&]() { %s(%s); })' % (m.group(2), m.group(1), args))
    i = j
src = ''.join(out)
open(sys.argv[2], 'w').write(src)
