#!/usr/bin/env bash
# The README's worked study stopped with Ctrl-C and resumed, beside an uninterrupted run (issue #25's check).
# Usage: BENCHBOX_DATA=../shared/data tools/study_stop_resume.sh [STUDY.toml] [SECONDS] [WORK_DIR]
# Runs the study twice at once: into WORK_DIR/full without interruption, and into WORK_DIR/stopped in its own
# process group, which gets SIGINT (what Ctrl-C sends) after SECONDS and is then resumed with the same command.
# Prints each exit status, which cells were done at the stop, any cell process left running, and whether the
# two comparisons are equal (run ids masked) and their CSVs byte-identical.
set -u
repo="$(cd "$(dirname "$0")/.." && pwd)"
study="$(realpath "${1:-$repo/studies/grounding-semantic.toml}")"
seconds="${2:-150}"
work="$(realpath -m "${3:-study-stop-resume}")"
rm -rf "$work/full" "$work/stopped" && mkdir -p "$work" && cd "$work"

benchbox study "$study" --out full -q > full.log 2>&1 &
full=$!
setsid benchbox study "$study" --out stopped -q > stopped.log 2>&1 &
stopped=$!
sleep "$seconds"
kill -INT -- "-$stopped"
wait "$stopped"; echo "stopped: exit $? after ${seconds} s"
for cell in stopped/cells/*; do echo "  $cell: $(test -f "$cell/done.json" && echo done || echo unfinished)"; done
pgrep -af "benchbox (eval|train).*$work/stopped" && echo "cell processes left running" || echo "  no cell process left running"
benchbox study "$study" --out stopped -q >> stopped.log 2>&1; echo "resumed: exit $?"
wait "$full"; echo "uninterrupted: exit $?"
python - "$repo" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.study_helpers import comparison
print("comparison.json equal (run ids masked):", comparison(Path("full")) == comparison(Path("stopped")))
for name in ("comparison.csv", "comparison.claims.csv"):  # a study without claims writes no claims file
    if Path("full", name).exists() or Path("stopped", name).exists():
        same = Path("full", name).exists() and Path("stopped", name).exists() \
            and Path("full", name).read_bytes() == Path("stopped", name).read_bytes()
        print(f"{name} byte-identical:", same)
PY
