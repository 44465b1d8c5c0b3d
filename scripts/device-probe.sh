#!/usr/bin/env bash
# One short look at a GPU host: toolkit, libraries, driver, clocks.  Used
# before planning collect runs there; prints facts only.
set -u
echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
echo "== nvcc"; nvcc --version 2>&1 | tail -2; command -v nvcc
echo "== libs"; for l in libcudnn.so.9 libcublas.so.13 libcublasLt.so.13 libcurand.so.10 libnvidia-ml.so.1 libcjson.so.1 libhpdf; do printf '%s: ' $l; ldconfig -p | grep -m1 "$l" || echo none; done
find / -name 'libcudnn.so*' -not -path '/proc/*' 2>/dev/null | head -5
find / -name 'cudnn.h' -not -path '/proc/*' 2>/dev/null | head -3
ls /usr/local/cuda/lib64 2>/dev/null | grep -E 'cudnn|cublas|curand' | head
echo "== headers"; ls /usr/include/openssl/evp.h /usr/include/zlib.h 2>&1
echo "== os"; cat /etc/os-release | head -2; nproc; free -g | head -2; uname -r
echo "== python"; python3 -c 'import torch; print(torch.__version__, torch.cuda.get_device_name(0), torch.backends.cudnn.version())' 2>&1
echo "== cjson carry"; ls .deps/root/usr/lib/x86_64-linux-gnu/ 2>&1
printf '#include <cjson/cJSON.h>\n#include <stdio.h>\nint main(void){cJSON*o=cJSON_CreateObject();char*s=cJSON_Print(o);puts(s);return 0;}\n' > /tmp/t.c
gcc -I.deps/root/usr/include /tmp/t.c -L.deps/root/usr/lib/x86_64-linux-gnu -Wl,-rpath,$PWD/.deps/root/usr/lib/x86_64-linux-gnu -lcjson -o /tmp/t && /tmp/t && echo cjson-ok
