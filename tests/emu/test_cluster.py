import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import *
for cols in (16388, 40000, 65544):
    x = U(2, cols)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(1, keepdims=True)); sm = e / e.sum(1, keepdims=True)
    check(["tuned"], "L1_023_softmax", [x], [x.shape], sm)
    check(["tuned"], "L1_024_logsoftmax", [x], [x.shape], np.log(sm))
x = U(2, 3, 40, 52); x64 = x.astype(np.float64)
mu = x64.mean((2, 3), keepdims=True); var = x64.var((2, 3), keepdims=True)
check(["tuned"], "L1_034_instancenorm", [x], [x.shape], (x64 - mu) / np.sqrt(var + 1e-5))
x = -3 * U(2, 2, 16, 20); x64 = x.astype(np.float64)
mu = x64.mean((2, 3), keepdims=True); var = x64.var((2, 3), keepdims=True)
check(["tuned"], "L1_034_instancenorm", [x], [x.shape], (x64 - mu) / np.sqrt(var + 1e-5))

if __name__ == "__main__":
    sys.exit(summary())
