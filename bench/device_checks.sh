#!/usr/bin/env bash
# Issue 35's checks for a lent GPU machine (the device tool), in one run of a few minutes:
#   1. the machine: its GPU, cores, Python and torch;
#   2. the CUDA tests (tests/score: test_gcn.py, test_gcn_device.py, test_d3.py);
#   3. the oracle over the project's 800 instructions, D3's store off: -n 0 and -n $N with D3
#      on the CPU, $ROUNDS times in turn (wall times, the speed-up of the medians against
#      issue 35's 8x), then -n $N with --gi-d3-device=cuda (every worker trains under the
#      machine-wide GPU lock), its report compared with the CPU run's (bench/compare_reports.py:
#      as the pins are compared: verdicts exact, every score within 1e-5; the device each
#      report records, the largest D3 difference).
# Usage, from the repository root:  [N=16] [ROUNDS=3] [OUT=dir] bash bench/device_checks.sh
# The machine cannot fetch the build backend, so where the package is not installed the run
# loads it from the checkout: PYTHONPATH, and the plugin with -p pytest_graphinstruct.plugin.
set -u
N=${N:-16}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-/tmp/device_checks}
PY=${PY:-python3}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 GI_D3_CACHE=off
unset PYTHONDONTWRITEBYTECODE
PLUGIN=()
if ! $PY -c "import importlib.metadata as m; m.distribution('pytest-graphinstruct')" 2>/dev/null
then
    PLUGIN=(-p pytest_graphinstruct.plugin)
fi

echo "== the machine"
nvidia-smi -L 2>&1 | head -2
echo "cores: $(nproc)"
$PY -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__,
'cuda', torch.cuda.is_available())" 2>&1

echo "== the CUDA tests"
$PY -m pytest -q -p no:cacheprovider -p no:randomly -rs tests/score/test_gcn.py \
    tests/score/test_gcn_device.py tests/score/test_d3.py 2>&1 | tail -8

oracle() {  # oracle WORKERS REPORT [extra args]: prints the run's wall seconds
    local workers=$1 report=$2
    shift 2
    local t0 t1
    t0=$($PY -c "import time; print(time.time())")
    $PY -m pytest instructions "${PLUGIN[@]}" --gi-model=oracle -q -p no:cacheprovider \
        -p no:randomly --gi-cache=none --gi-report="$report" -n "$workers" "$@" \
        > "$OUT/oracle-$workers.log" 2>&1 || { echo "FAILED: -n $workers $*" >&2;
                                              tail -20 "$OUT/oracle-$workers.log" >&2; }
    t1=$($PY -c "import time; print(time.time())")
    $PY -c "print(f'{$t1 - $t0:.2f}')"
}

echo "== the oracle over 800 items, D3 on the CPU: -n 0 and -n $N in turn"
oracle 0 "$OUT/warmup.json" > /dev/null  # bytecode caches
zero=() many=()
for i in $(seq "$ROUNDS"); do
    zero+=("$(oracle 0 "$OUT/cpu-n0.json")")
    many+=("$(oracle "$N" "$OUT/cpu-n$N.json")")
    echo "round $i: -n 0 ${zero[-1]} s, -n $N ${many[-1]} s"
done
$PY - "${zero[*]}" "${many[*]}" "$N" <<'PYEOF'
import statistics, sys
zero, many = ([float(x) for x in a.split()] for a in sys.argv[1:3])
z, m = statistics.median(zero), statistics.median(many)
print(f"medians: -n 0 {z:.2f} s, -n {sys.argv[3]} {m:.2f} s, speed-up {z / m:.2f} (target >= 8)")
PYEOF

echo "== -n $N with D3 on CUDA, against the CPU run"
echo "-n $N --gi-d3-device=cuda: $(oracle "$N" "$OUT/cuda-n$N.json" --gi-d3-device=cuda) s"
$PY bench/compare_reports.py "$OUT/cpu-n$N.json" "$OUT/cuda-n$N.json"
$PY bench/compare_reports.py "$OUT/cpu-n0.json" "$OUT/cpu-n$N.json" | tail -1
