#!/usr/bin/env bash
# One command on a lent GPU: the GPU check, then the paper queue for what is left of the command.
#
#   VVLIB_GIT_COMMIT=<sha> bash scripts/gpu_session.sh [SECONDS]     # on the device, $OUT set
#
# SECONDS (default 580) is what the command may take, under the device tool's 600 s.  Writes
# $OUT/check/*.json (bench.gpu_check), $OUT/paper/ (the queue's packed units and queue.json) and
# $OUT/partial/: the records and tables of a unit the time cut short (never weights), so that a
# run trained before the cut still comes back.
set -u
budget=${1:-580}
out=${OUT:?set OUT to the folder whose files come back}
start=$SECONDS
marker=$(mktemp)
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))"
timeout 250 python3 -m bench.gpu_check --out "$out/check" || echo "gpu_check ended with status $?"
left=$(( budget - (SECONDS - start) - 15 ))
if (( left > 90 )); then
    minutes=$(python3 -c "print(round($left / 60 - 0.25, 2))")
    timeout "$left" python3 -m vvlib paper --for-minutes "$minutes" --pack "$out/paper" \
        -p device cuda -p store_dir results/paper || echo "queue ended with status $?"
fi
find results/paper -newer "$marker" -type f ! -name '*.pt' -print0 |
    while IFS= read -r -d '' f; do mkdir -p "$out/partial/$(dirname "$f")"; cp "$f" "$out/partial/$f"; done
echo "gpu_session: $(( SECONDS - start )) s"
