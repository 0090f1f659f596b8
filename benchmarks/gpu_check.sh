#!/usr/bin/env bash
# The gpu backend on a machine with an NVIDIA GPU (issue 16, "Testing with a GPU"), in
# under 8 minutes: installs what it needs from the package registries
# (cupy-cuda12x[ctk]: CuPy with NVRTC and the CUDA headers; jax[cuda12] when it installs), runs tests/backends/gpu on the device
# (JAXLITE_PLATFORMS=gpu: every kernel builder, gathers, scatters, sorts and
# convolutions included), the registry and backend tests with the GPU present and no
# platform asked for (they state their platforms, so they pass where the GPU is the
# default), then the ../shared/bench workloads with --impl jaxlite and
# --impl jax on the GPU, one fresh process per workload and implementation, and prints one
# table (summarize.py). Every phase has a time budget; what does not fit is reported as
# skipped. Run from the repository root:
#
#     bash benchmarks/gpu_check.sh
#
# Settings (environment): PYTHON (default python3), BENCH (the bench folder), ONLY
# (comma-separated workload keys or names, default all), SKIP_TESTS=1, BUDGET_S (default
# 450: the table prints by then), JAX_VERSION (default 0.10.2), OUT (results folder),
# GEMM_SIZES (the m=n=k sizes the tiled-GEMM rule is measured at).
#
# Without a GPU (or without CuPy) the tests skip with the reason and the jaxlite rows are
# not run: the script says so and still prints what it could measure.
set -u
cd "$(dirname "$0")/.."
REPO=$(pwd)
PY=${PYTHON:-python3}
JAX_VERSION=${JAX_VERSION:-0.10.2}
BENCH=${BENCH:-}
for candidate in "$BENCH" ../shared/bench shared/bench; do
  if [ -n "$candidate" ] && [ -f "$candidate/run.py" ]; then BENCH=$candidate; break; fi
done
OUT=${OUT:-$(mktemp -d /tmp/gpu_check.XXXXXX)}
START=$(date +%s)
DEADLINE=$((START + ${BUDGET_S:-450}))   # 7.5 minutes: the table must print before 8
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"

left() { echo $((DEADLINE - $(date +%s))); }
say() { echo "== $*"; }
# at most $1 seconds, and never past the deadline less $2 seconds of reserve
budget() { local b=$1 l; l=$(($(left) - $2)); [ "$l" -lt "$b" ] && b=$l; echo "$b"; }

pip_install() {  # pip_install SECONDS SPEC...: quietly, within the time given
  local t; t=$(budget "$1" 200); shift
  [ "$t" -gt 10 ] || { say "no time left to install $*"; return 1; }
  # (short network timeouts: a machine without access to the registries fails fast)
  timeout "$t" "$PY" -m pip install --quiet --disable-pip-version-check --timeout 10 \
    --retries 1 "$@" 2>&1 | tail -3
  return "${PIPESTATUS[0]}"
}

GPU_NAME=$(nvidia-smi -L 2>/dev/null | head -1)
say "python: $("$PY" --version 2>&1); GPU: ${GPU_NAME:-none (nvidia-smi finds none)}"
if ! "$PY" -c "import numpy, scipy, llvmlite, ml_dtypes, opt_einsum" 2>/dev/null; then
  pip_install 90 numpy scipy llvmlite ml_dtypes opt_einsum pytest pytest-xdist ||
    say "jaxlite's dependencies did not install"
fi
# (without a GPU the CUDA packages could not be used: their downloads would only take
# the time the tests and the table need)
if [ -z "$GPU_NAME" ]; then
  say "no GPU: CuPy and jax[cuda12] are not installed"
else
  "$PY" -c "import cupy" 2>/dev/null || pip_install 180 "cupy-cuda12x[ctk]" ||
    say "cupy-cuda12x did not install"
fi
JAX_GPU=$("$PY" -c "import jax; print(int(jax.devices()[0].platform == 'gpu'))" 2>/dev/null)
if [ "${JAX_GPU:-0}" != 1 ] && [ -n "$GPU_NAME" ]; then
  pip_install 150 "jax[cuda12]==$JAX_VERSION" || say "jax[cuda12]==$JAX_VERSION did not install"
  JAX_GPU=$("$PY" -c "import jax; print(int(jax.devices()[0].platform == 'gpu'))" 2>/dev/null)
fi
GPU_STATUS=$("$PY" - <<'PY' 2>&1 | tail -1
from jaxlite.backends import registry
try:
    client = registry.get_backend("gpu")
    print(f"jaxlite gpu backend: {client.devices()[0].device_kind}, {client.platform_version}")
except RuntimeError as error:
    print(f"jaxlite gpu backend does not start: {error}")
PY
)
say "$GPU_STATUS"
say "jax on the GPU: $([ "${JAX_GPU:-0}" = 1 ] && echo yes || echo no)"
IMPLS=""  # what runs on the GPU here
case "$GPU_STATUS" in "jaxlite gpu backend: "*) IMPLS="jaxlite" ;; esac
[ "${JAX_GPU:-0}" = 1 ] && IMPLS="$IMPLS jax"

# ---------------------------------------------------------------------------- tests
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  # four workers where pytest-xdist is there: the folder's interpreter runs take CPU time
  WORKERS=$("$PY" -c "import xdist" 2>/dev/null && echo 4 || echo 0)
  T=$(budget 180 150)
  if [ "$T" -lt 20 ]; then  # (timeout 0 would mean no limit at all)
    TESTS="skipped (${T}s left for them)"
  else
    say "pytest tests/backends/gpu on the device (at most ${T}s, ${WORKERS} workers)"
    JAXLITE_PLATFORMS=gpu timeout "$T" "$PY" -m pytest -q -n "$WORKERS" -p no:cacheprovider \
      tests/backends/gpu 2>&1 | tee "$OUT/pytest.txt" | tail -15
    TESTS=$(grep -E "passed|failed|error|skipped" "$OUT/pytest.txt" | tail -1)
  fi
  T=$(budget 60 120)
  if [ "$T" -lt 10 ]; then
    REGISTRY="skipped (${T}s left for them)"
  else
    say "registry and backend tests with the GPU present (at most ${T}s)"
    env -u JAXLITE_PLATFORMS -u JAX_PLATFORMS timeout "$T" "$PY" -m pytest -q -n "$WORKERS" \
      -p no:cacheprovider tests/backends/test_registry.py tests/backends/test_plugin.py \
      tests/backends/test_jit_compiled.py 2>&1 | tee "$OUT/pytest-registry.txt" | tail -5
    REGISTRY=$(grep -E "passed|failed|error" "$OUT/pytest-registry.txt" | tail -1)
  fi
fi

# ---------------------------- the tiled-GEMM rule (gemm_kernels.use_tiled_gemm) measured
# float32 m=n=k products as the generated tiled kernel and as cupy.matmul (cuBLAS), each
# timed over back-to-back calls on the launcher's stream: where the rule and "faster"
# disagree, SMALL_GEMM_FLOPS / SMALL_GEMM_SIDE want moving.
if [ "${IMPLS#*jaxlite}" != "$IMPLS" ] && [ "$(budget 30 150)" -ge 15 ]; then
  T=$(budget 30 150)
  timeout "$T" "$PY" - "${GEMM_SIZES:-8,16,32,48,64,96,128,192,256}" 200 <<'PY' \
    >"$OUT/gemm_rule.txt" 2>&1
import sys, time
import numpy as np
from jaxlite.backends.gpu.gemm_kernels import build_tiled_gemm, use_tiled_gemm
from jaxlite.backends.gpu.launchers import start_cupy
launcher = start_cupy(0)
xp = launcher.xp
sizes = [int(s) for s in sys.argv[1].split(",")]
reps = int(sys.argv[2])
print(f"{'m=n=k':>6s} {'tiled us':>9s} {'cupy.matmul us':>15s}  {'rule picks':10s} faster")
for size in sizes:
    kernels = build_tiled_gemm(f"jl_rule_{size}", 1, size, size, size, ("float32", "float32"),
                               "float32", "float32", launcher.build_options)
    [prepared] = launcher.prepare_all([kernels])
    rng = np.random.default_rng(size)
    host = [rng.standard_normal(size * size).astype(np.float32) for _ in range(2)]
    times = []
    with launcher.scope():
        a, b = (launcher.to_device(h) for h in host)
        memory = {"in0": a, "in1": b, "out0": launcher.empty(size * size, np.float32)}
        runs = (lambda: launcher.launch(prepared, memory),
                lambda: xp.matmul(a.reshape(size, size), b.reshape(size, size)))
        for run in runs:
            run()
            launcher.stream.synchronize()
            start = time.perf_counter()
            for _ in range(reps):
                run()
            launcher.stream.synchronize()
            times.append((time.perf_counter() - start) / reps * 1e6)
    got = launcher.to_host(memory["out0"], np.float32).reshape(size, size)
    want = host[0].reshape(size, size) @ host[1].reshape(size, size)
    ok = np.allclose(got, want, rtol=1e-4, atol=1e-4 * size)
    rule = "tiled" if use_tiled_gemm(size, size, size) else "cuBLAS"
    faster = ("tiled" if times[0] < times[1] else "cuBLAS") + ("" if ok else " (tiled WRONG)")
    print(f"{size:6d} {times[0]:9.1f} {times[1]:15.1f}  {rule:10s} {faster}")
PY
fi

# ---------------------------------------------------------------------------- bench
if [ -z "$BENCH" ]; then
  say "no ../shared/bench here: no workloads run"
else
  KEYS=$("$PY" -c "import sys; sys.path.insert(0, '$BENCH'); import workloads as W; \
print(' '.join(w.key for w in W.select('${ONLY:-}' or None)))")
  [ -n "$IMPLS" ] || say "neither jaxlite nor jax runs on a GPU here: no workloads run"
  n=0
  for key in $KEYS; do
    for impl in $IMPLS; do
      n=$((n + 1))
      T=$(budget 60 25)
      if [ "$T" -lt 15 ]; then echo "skipped (no time left): $key $impl"; continue; fi
      JAXLITE_PLATFORMS=gpu timeout "$T" "$PY" "$BENCH/run.py" --impl "$impl" \
        --only "$key" --json "$OUT/run-$n-$impl.json" --check --no-sentinel \
        --target-s 0.3 --min-runs 3 --max-runs 20 --warmup 1 --compile-reps 1 \
        --dispatch-inner 300 --dispatch-samples 5 --quiet \
        >"$OUT/run-$n-$impl.log" 2>&1 || echo "failed or timed out: $key $impl (see $OUT/run-$n-$impl.log)"
    done
  done
fi

# ------------------------------------------------- where each workload's steps run
if [ -n "$BENCH" ] && [ "${IMPLS#*jaxlite}" != "$IMPLS" ] && [ "$(budget 40 15)" -ge 10 ]; then
  T=$(budget 40 15)
  JAXLITE_PLATFORMS=gpu timeout "$T" "$PY" - "$BENCH" <<'PY' >"$OUT/plans.txt" 2>&1
import collections, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import jaxlite as jax
import workloads as W
for w in W.WORKLOADS:
    if w.build_jx is None or w.inputs is None:
        continue
    try:  # (one workload that does not compile leaves the others' lines)
        plan = w.build_jx(jax).lower(*w.inputs(np.random.default_rng(0))).compile() \
            .runtime_executable().text("kernels").splitlines()
    except Exception as error:
        print(f"{w.key:45s} does not compile: {type(error).__name__}: {error}"[:200])
        continue
    counts = collections.Counter(line.split()[0] for line in plan)
    print(f"{w.key:45s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
PY
fi

# ---------------------------------------------------------------------------- table
echo
say "gpu_check: $(($(date +%s) - START)) s; results in $OUT"
say "tests/backends/gpu: ${TESTS:-not run}"
say "registry/backend tests, GPU present: ${REGISTRY:-not run}"
[ -s "$OUT/plans.txt" ] && { say "text('kernels') per workload (steps by where they run)"
  cat "$OUT/plans.txt"; }
[ -s "$OUT/gemm_rule.txt" ] && { say "tiled GEMM against cuBLAS (float32, microseconds a call)"
  cat "$OUT/gemm_rule.txt"; }
if ls "$OUT"/run-*.json >/dev/null 2>&1; then
  "$PY" "$BENCH/summarize.py" "$OUT"/run-*.json
fi
