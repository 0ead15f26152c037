#!/usr/bin/env bash
# The checks of the GPU path and of 16 cores, in one run on a machine with an
# NVIDIA GPU (issue 55). Each stage writes its output to $OUT/<stage>.txt (default
# /tmp/gpu-check) and runs only while the deadline leaves it time, most important
# first: the GPU tests, then the benchmarks of docs/performance.md's "16 cores and
# a GPU model".
#
#     bash benchmarks/gpu_check.sh [DEADLINE_SECONDS] [STAGE ...]
#
# Stages: env numpy25 tests gpu select-gpu nogpu cpu select-cpu (default: all, in
# this order). Wheels in .whl/ (say xgboost with CUDA, lightgbm) are installed into
# /tmp/site first, for a machine that cannot reach a package registry; the project
# runs from the checkout (PYTHONPATH), with the machine's own scipy, scikit-learn,
# numba and numba-cuda. numba-cuda 0.30.4 compiles nothing with numpy 2.5, so a
# numpy the gpu extra allows goes first on the path where /tmp/np holds one (an
# earlier call's `pip install --target /tmp/np numpy-2.4.*.whl`); the numpy25
# stage shows what the machine's own numpy 2.5 gives a user.
set -uo pipefail
cd "$(dirname "$0")/.."
deadline=$((SECONDS + ${1:-540}))
shift || true
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(env numpy25 tests gpu select-gpu nogpu cpu select-cpu)
OUT="${OUT:-/tmp/gpu-check}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/numba-cache
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --upgrade --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH="/tmp/site"
fi
own_numpy="$PWD${PYTHONPATH:+:$PYTHONPATH}"
[ -d /tmp/np ] && PYTHONPATH="/tmp/np${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

# run STAGE NEEDED_SECONDS COMMAND...: COMMAND, if NEEDED_SECONDS are left.
run() {
    local stage=$1 needed=$2 left=$((deadline - SECONDS))
    shift 2
    if [ "$left" -lt "$needed" ]; then
        echo "== $stage: skipped, ${left}s left (needs ${needed}s)" | tee "$OUT/$stage.txt"
        return
    fi
    echo "== $stage: $* (${left}s left)"
    local start=$SECONDS
    timeout "$((left - 5))" "$@" >"$OUT/$stage.txt" 2>&1
    echo "== $stage: exit $? after $((SECONDS - start))s" | tee -a "$OUT/$stage.txt"
    tail -n 25 "$OUT/$stage.txt"
}

# Without the gpu extra: numba-cuda cannot be imported, so the GPU model's sums
# run on the CPU kernels (what a user without the extra gets).
no_gpu_extra=(python3 -c 'import runpy, sys
sys.modules["numba_cuda"] = None
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")')

bench=benchmarks/bench_tree_inner.py
for stage in "${stages[@]}"; do
    case $stage in
    env) run env 10 bash -c 'nvidia-smi; nproc; python3 -c "
import numpy, scipy, sklearn, numba, xgboost, sys
print(sys.version)
for m in (numpy, scipy, sklearn, numba, xgboost):
    print(m.__name__, m.__version__)
print(\"xgboost CUDA:\", xgboost.build_info().get(\"USE_CUDA\"))
import numba_cuda; print(\"numba_cuda\", numba_cuda.__version__)
from skl_treeinner._kernels import _device; print(\"cuda_ready\", _device.cuda_ready())
import lightgbm; print(\"lightgbm\", lightgbm.__version__)"' ;;
    numpy25) run numpy25 20 env PYTHONPATH="$own_numpy" python3 -W always -c "
import numpy as np, warnings, xgboost as xgb
from skl_treeinner import tree_inner
from skl_treeinner._kernels import _device
print('numpy', np.__version__, 'cuda_ready', _device.cuda_ready())
X = np.random.default_rng(0).normal(size=(2000, 5)); y = X[:, 0]
m = xgb.XGBRegressor(device='cuda', n_estimators=20).fit(X[:1000], y[:1000])
print(tree_inner(m, X[1000:], y[1000:]))" ;;
    tests) run tests 60 python3 -m pytest tests/integration/test_device_kernels.py \
        tests/integration/test_gpu.py \
        tests/smoke/test_scripts.py::test_the_gpu_kernels_compile_for_a_real_gpu \
        -q -p no:cacheprovider -rs --durations=15 ;;
    gpu) run gpu 60 python3 $bench --device cuda --rows 200000 --threads 16 \
        --treeshap --repeat 5 ;;
    nogpu) run nogpu 60 "${no_gpu_extra[@]}" $bench --device cuda --rows 200000 --threads 16 \
        --treeshap --repeat 2 ;;
    cpu) run cpu 60 python3 $bench --rows 20000 --threads 16 --treeshap --repeat 3 ;;
    select-gpu) run select-gpu 40 python3 benchmarks/where_time_goes.py --device cuda ;;
    select-cpu) run select-cpu 40 python3 benchmarks/where_time_goes.py ;;
    *) echo "unknown stage $stage" >&2 ;;
    esac
done
