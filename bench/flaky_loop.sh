#!/usr/bin/env bash
# Run the same tests N times in a row while one CPU-bound process keeps a core busy, to show
# that tests of interrupts, timeouts and hangs do not race the clock (issue 20, item 11).
#
#   bench/flaky_loop.sh [-n N] [-f FILE] [-o DIR] [-t SECONDS] [-x] [TEST_ID ...]
#
#   -n N        runs (default 20)
#   -f FILE     more test ids, one a line ('#' starts a comment)
#   -o DIR      where the logs go (default: a new mktemp -d folder); run k's log is DIR/run_k.log
#   -t SECONDS  the limit of one run of the whole list (default 900): past it the run gets SIGINT
#               (pytest prints where it was), then SIGKILL 30 s later, and counts as a failure
#   -x          pass -n 2 to pytest (the tests under xdist, as .ci/run runs them); default -n 0
#
# Each run is `python -m pytest -p no:randomly -x -q` over the whole list, with faulthandler
# dumping every thread's stack when one test takes more than 300 s.  It prints one line per run
# (its time), stops at the first failure keeping that run's log, and ends with `k/N passed`;
# the exit status is 0 only when all N passed.  The hog is killed on exit (trap).
set -uo pipefail
cd "$(dirname "$0")/.."

# One function, read whole before it runs: editing this file during a loop cannot break it.
main() {
runs=20
limit=900
out=""
xdist=(-n 0)
ids=()
while getopts "n:f:o:t:x" opt; do
    case "$opt" in
        n) runs=$OPTARG ;;
        f) while IFS= read -r line; do
               line=${line%%#*}  # then trim the ends (an id may hold spaces: "[15-a b]")
               line=${line#"${line%%[![:space:]]*}"}; line=${line%"${line##*[![:space:]]}"}
               [ -n "$line" ] && ids+=("$line")
           done < "$OPTARG" ;;
        o) out=$OPTARG ;;
        t) limit=$OPTARG ;;
        x) xdist=(-n 2) ;;
        *) sed -n '2,17p' "$0" >&2; return 2 ;;
    esac
done
shift $((OPTIND - 1))
ids+=("$@")
if [ ${#ids[@]} -eq 0 ]; then
    echo "flaky_loop: no test ids (give them as arguments or with -f FILE)" >&2
    return 2
fi
[ -n "$out" ] || out=$(mktemp -d /tmp/flaky_loop.XXXXXX)
mkdir -p "$out"

python3 -c 'while True: pass' &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

echo "flaky_loop: ${#ids[@]} test id(s), $runs run(s), hog pid $hog, logs in $out"
passed=0
for k in $(seq 1 "$runs"); do
    log="$out/run_$k.log"
    start=$(date +%s.%N)
    timeout --signal=INT --kill-after=30 "$limit" \
        .venv/bin/python -m pytest -p no:randomly -x -q "${xdist[@]}" \
        -o faulthandler_timeout=300 "${ids[@]}" > "$log" 2>&1
    rc=$?
    took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" \
           "$start" "$(date +%s.%N)")
    summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)|(passed|failed|error).* in [0-9.]+s' \
              "$log" | tail -1)
    echo "run $k/$runs: rc=$rc ${took} s  ${summary}"
    if [ "$rc" -ne 0 ]; then
        echo "run $k failed: its log is $log"
        break
    fi
    passed=$((passed + 1))
    rm -f "$log"  # a passing run's log says nothing the line above does not
done
echo "$passed/$runs passed"
[ "$passed" -eq "$runs" ]
}
main "$@"
exit $?
