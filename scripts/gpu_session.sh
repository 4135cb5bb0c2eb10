#!/usr/bin/env bash
# One command on a lent GPU: the GPU check, then the paper queue for what is left of the command.
#
#   VVLIB_GIT_COMMIT=<sha> bash scripts/gpu_session.sh [SECONDS [full [NEXT]]]  # on the device, $OUT set
#   VVLIB_GIT_COMMIT=<sha> bash scripts/gpu_session.sh SECONDS queue [NEXT]     # a later command, same machine
#
# SECONDS (default 570) is what the command may take, under the device tool's 600 s.  NEXT (whole
# seconds, default 0) is what the session's next command on this machine will have: the queue may then
# start a unit that needs both, which stops with a checkpoint at the end of this command for the next
# to resume first (the machine keeps files git ignores between commands, *.pt under results/ among
# them); with 0, a unit starts only if it will finish here, by the largest overrun seen.  The first
# command of a session runs the check (about 156 s on an H200 on 2026-11-27, its steady rates included);
# until a paired TF32 comparison is committed (bench/tf32-ab-*.json) it runs bench.tf32_ab next (about
# a minute: its answer may speed up every later unit), then the queue, its units' minutes estimated by
# this check's loop and curriculum rows
# (copied under bench/ for units.check_rates, where the machine keeps them).  `queue` skips both: for the
# minutes a session has left after its first command, run at once on the same warm machine (it waits only
# about half a minute): each command gets a fresh copy of the working tree, and the units an earlier command
# finished come back into it from this machine's stash (below), so they are not run again.
# At most 8 files come back from $OUT, no deeper than $OUT/a/b/file, so everything is archived (and
# `.venv/bin/python scripts/gpu_unpack.py <files_at>`, run here after each command, puts each file where the
# lines below say and commits it):
#   $OUT/check.tgz    bench.gpu_check's JSON, and bench.tf32_ab's where it ran
#                     (commit them under bench/, e.g. as gpu-check-<gpu>-<name>.json)
#   $OUT/results.tgz  results/paper/ as the queue left it, less weights and checkpoints: the
#                     finished units and the records of one the time cut short; unpack at the
#                     repository root, then commit what is new under results/paper/
#   $OUT/queue.json   what ran, each unit's estimated and measured minutes
set -u
budget=${1:-570}
mode=${2:-full}
next=${3:-0}
out=${OUT:?set OUT to the folder whose files come back}
: "${VVLIB_GIT_COMMIT:?set VVLIB_GIT_COMMIT to the commit whose code runs: its records name it}"
case "$mode" in
    full|queue) ;;
    *) echo "mode: expected full (the default) or queue, got '$mode'" >&2; exit 2 ;;
esac
[[ $next =~ ^[0-9]+$ ]] || { echo "NEXT: expected whole seconds >= 0, got '$next'" >&2; exit 2; }
start=$SECONDS
scratch=$(mktemp -d)  # the check's JSON and the queue's packed units, archived into $OUT below
# The units' records as the last command here left them, in a folder git ignores (the device tool keeps such files
# between a session's commands): restored where this command's copy of the tree lacks them, so the session's next
# command may start at once, before the last one's results.tgz is unpacked and committed; a file the tree has wins.
stash=_output/gpu-session/results-paper
[[ -d $stash ]] && tar cf - -C "$stash" . | tar xf - --skip-old-files -C results/paper
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))"
if [[ $mode == full ]]; then
    timeout 250 python3 -m bench.gpu_check --out "$scratch/check" || echo "gpu_check ended with status $?"
    if ! compgen -G "bench/tf32-ab-*.json" > /dev/null; then
        timeout 150 python3 -m bench.tf32_ab --out "$scratch/check" || echo "tf32_ab ended with status $?"
    fi
    tar czf "$out/check.tgz" -C "$scratch" check
    # the queue's estimates by this machine's own check, just measured (units.check_rates takes the newest)
    for name in loop curriculum; do
        [[ -f $scratch/check/$name.json ]] && cp "$scratch/check/$name.json" "bench/gpu-check-this-session-$name.json"
    done
fi
left=$(( budget - (SECONDS - start) - 20 ))
if (( left > 90 )); then
    minutes=$(python3 -c "print(round($left / 60 - 0.25, 2))")
    then=$(printf '%d.%02d' $((next / 60)) $((next % 60 * 100 / 60)))  # minutes, from whole seconds
    timeout "$left" python3 -m vvlib paper --for-minutes "$minutes" --then-minutes "$then" --pack "$scratch/pack" \
        -p device cuda 2>&1 | grep -v '%|' || echo "queue ended"
    cp "$scratch/pack/queue.json" "$out/" 2>/dev/null
fi
tar czf "$out/results.tgz" --exclude='*.pt' results/paper
mkdir -p "$stash" && tar cf - --exclude='*.pt' -C results/paper . | tar xf - -C "$stash"
echo "gpu_session ($mode): $(( SECONDS - start )) s"
