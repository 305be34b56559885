#!/usr/bin/env bash
# Nightly benchmark: set up, run the matrix, compare with the last good run (the spread of the
# promoted runs as run-to-run noise), publish Markdown, fail on a regression. Works from a fresh
# clone and from any current directory. See docs/nightly.md.
#
# Environment (all optional):
#   STORE    where runs are kept between jobs (default /var/lib/rmatrix/nightly):
#              runs/<id>      every run, appended
#              last-good      symlink to the baseline (the last promoted run)
#              good/<id>      a symlink to every promoted run
#   RESULTS_DB  a results store (a SQLite file or a postgres:// URL; `rmatrix store`) that keeps
#              every promoted run: compare's run-to-run noise and the history are read from it
#              (with tonight's run) instead of good/ and runs/; a store that holds none yet is
#              filled from good/ first
#   MATRIX   the matrix (default: matrices/nightly.yaml of this repository)
#   RMATRIX  the rmatrix binary (default: target/release/rmatrix of this repository)
#   SETUP    0 skips scripts/setup-main.sh (Docker, base images, release build)
#   COMPARE_ARGS  extra options for rmatrix compare, e.g. "--threshold 10% --metric qps,lat_p99_ms"
#   SET      matrix parameters for rmatrix run, e.g. "rev=$GITHUB_SHA" (each NAME=VALUE, space
#              separated; the matrix declares them under params:, docs/matrix.md)
#   CONFIRM  0 fails on the first compare; otherwise (default) a regression is measured again
#              on the regressed cells only ($STORE/confirm/<id>) and fails only if it holds
#   BISECT   1: when a confirmed regression's matrix has a source: server, bisect between the
#              baseline's commit and tonight's ($STORE/bisect/<id>, docs/bisect.md)
#   REV      tonight's revision of the matrix's source: server: the night measures it side by
#              side with the last good revision ($STORE/last-good-rev) in one run, `rmatrix ab`
#              ($STORE/ab/<id>), instead of comparing a run of its own with a stored one. The
#              first night is an A/A of REV (it records the commit). A regression is not
#              measured again (ab adds rounds where a cell cannot tell); COMPARE_ARGS'
#              --threshold, --confidence and --metric go to ab and to bisect (--paired)
#   AB_ARGS  extra options for rmatrix ab, e.g. "--rounds 8 --max-rounds 40 --budget 30m" or
#              "--duet" (both builds at the same time on CPUs of their own; bisect then too)
#   COUNTED_MATRIX  a counted matrix (`counted: callgrind`, docs/counted.md), run first with SET's
#              parameters and compared on srv_instr_per_op with the last good counted run
#              ($STORE/counted/last-good; runs in $STORE/counted/runs): the night's second gate,
#              exact on any machine. Its table goes to the summary before the throughput gate's;
#              a counted regression (4) or cannot tell (8) fails the night and keeps both
#              baselines where they were, whatever the throughput gate says
#   COUNTED_ARGS  extra options for that compare, e.g. "--counted-threshold 1%"
#   GITHUB_STEP_SUMMARY  where the Markdown goes (default: stdout)
#
# Exit codes: 0 run promoted (first run, or no regression); 4 regression, not promoted;
# 8 cannot tell (no regression, but some change's interval reaches past the threshold: a run
# the gate could not judge never becomes the baseline), not promoted;
# 1/2/3/130 the run failed (rmatrix run's codes), 2 compare could not use the runs, 5 the
# environments differ (with COMPARE_ARGS=--require-same-env): baseline kept; 6 set-up failed or
# no rmatrix binary (a code rmatrix itself does not use). With COUNTED_MATRIX, a night whose
# throughput gate passed exits with the counted gate's code (4, 8, or its run's), and one
# whose throughput gate could not tell (8) exits 4 when the counted gate found a regression.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STORE=${STORE:-/var/lib/rmatrix/nightly}
MATRIX=${MATRIX:-$ROOT/matrices/nightly.yaml}
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
SETUP=${SETUP:-1}
read -ra compare_args <<< "${COMPARE_ARGS:-}"
set_args=()
read -ra sets <<< "${SET:-}"
for kv in ${sets[@]+"${sets[@]}"}; do set_args+=(--set "$kv"); done
CONFIRM=${CONFIRM:-1}
BISECT=${BISECT:-0}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/stdout}
RESULTS_DB=${RESULTS_DB:-}
REV=${REV:-}
read -ra ab_args <<< "${AB_ARGS:-}"
COUNTED_MATRIX=${COUNTED_MATRIX:-}
read -ra counted_args <<< "${COUNTED_ARGS:-}"

if [ "$SETUP" != 0 ]; then
    # Its progress goes to stderr: stdout may be the summary.
    if ! "$ROOT/scripts/setup-main.sh" >&2; then
        echo "nightly: set-up failed (scripts/setup-main.sh); nothing was run" >&2
        exit 6
    fi
fi
if [ ! -x "$RMATRIX" ]; then
    echo "nightly: no rmatrix binary at $RMATRIX (run scripts/setup-main.sh, or set RMATRIX=...)" >&2
    exit 6
fi

mkdir -p "$STORE/runs" "$STORE/good" || exit 6
# The timestamp orders the store for a reader; the pid keeps two runs started in the same second
# apart (the id also labels the run's containers).
ID="$(date -u +%Y%m%d-%H%M%S)-$$"
RUN="$STORE/runs/$ID"

# Point the link $STORE/$1 at $2, a path relative to the link's folder (so the store can be
# moved or restored elsewhere), replacing an old link in one rename.
link() {
    local tmp
    tmp="$(dirname "$STORE/$1")/.$(basename "$1").new"
    ln -sfn "$2" "$tmp" && mv -Tf "$tmp" "$STORE/$1"
}

# The options of COMPARE_ARGS that judge a change (--threshold, --confidence, --metric, and
# the ones given as arguments), into the array `judge`.
judge_args() {
    local i=0 a more=" $* "
    while [ $i -lt ${#compare_args[@]} ]; do
        a=${compare_args[$i]}
        case $a in
            --threshold=* | --confidence=* | --metric=*) judge+=("$a") ;;
            --threshold | --confidence | --metric)
                judge+=("$a" "${compare_args[$((i + 1))]:-}")
                i=$((i + 1)) ;;
            *=*) [[ $more == *" ${a%%=*} "* ]] && judge+=("$a") ;;
            *) if [[ $more == *" $a "* ]]; then
                   judge+=("$a" "${compare_args[$((i + 1))]:-}")
                   i=$((i + 1))
               fi ;;
        esac
        i=$((i + 1))
    done
}

# The counted gate (COUNTED_MATRIX): tonight's counted instructions against the last good
# counted run's. Sets counted_status (0 passed or first run; 4 regressed; 8 cannot tell;
# rmatrix run's codes when the run failed) and promotes the run when it passed.
counted_status=0
counted_gate() {
    local run="$STORE/counted/runs/$ID"
    mkdir -p "$STORE/counted/runs" || exit 6
    echo "## Counted instructions ($(basename "$COUNTED_MATRIX"))" >> "$SUMMARY"
    "$RMATRIX" run "$COUNTED_MATRIX" --out "$run" --quiet ${set_args[@]+"${set_args[@]}"}
    counted_status=$?
    if [ "$counted_status" -ne 0 ]; then
        echo "nightly: the counted run failed (exit $counted_status); the counted baseline is kept" >&2
        return
    fi
    if [ -e "$STORE/counted/last-good" ]; then
        "$RMATRIX" compare --fail-on-cannot-tell --metric srv_instr_per_op \
            ${counted_args[@]+"${counted_args[@]}"} "$STORE/counted/last-good" "$run" >> "$SUMMARY"
        counted_status=$?
    else
        echo "First counted run: it becomes the counted baseline." >> "$SUMMARY"
    fi
    case $counted_status in
        0) link counted/last-good "runs/$ID" || exit 6
           echo "nightly: $run promoted to $STORE/counted/last-good" >&2 ;;
        4) echo "nightly: counted instructions regressed against $(readlink "$STORE/counted/last-good"); nothing is promoted tonight" >&2 ;;
        8) echo "nightly: the counted compare cannot tell (counts that overlap past the threshold); nothing is promoted tonight" >&2 ;;
        *) echo "nightly: the counted compare could not use the runs (exit $counted_status)" >&2 ;;
    esac
}

# The night's exit: the throughput gate's status, unless the counted gate failed while the
# throughput gate passed, or the counted gate found a regression the throughput gate could
# not tell.
finish() {
    if [ "$counted_status" -ne 0 ] && { [ "$1" -eq 0 ] ||
        { [ "$1" -eq 8 ] && [ "$counted_status" -eq 4 ]; }; }; then
        exit "$counted_status"
    fi
    exit "$1"
}

# The night on the A/B design (REV): the last good revision and tonight's in one run.
nightly_ab() {
    local dir="$STORE/ab/$ID" good status commit judge=()
    mkdir -p "$STORE/ab" || exit 6
    judge_args
    if [ -s "$STORE/last-good-rev" ]; then
        good=$(cat "$STORE/last-good-rev")
        if ! [[ $good =~ ^[0-9a-f]{40}$ ]]; then
            echo "nightly: $STORE/last-good-rev holds no commit hash; the store is damaged" >&2
            exit 6
        fi
    else
        echo "First night: an A/A run of $REV (every change should be none); its commit becomes the last good revision." >> "$SUMMARY"
        good=$REV
    fi
    "$RMATRIX" ab "$MATRIX" --a "$good" --b "$REV" --out "$dir" \
        ${judge[@]+"${judge[@]}"} ${ab_args[@]+"${ab_args[@]}"} ${set_args[@]+"${set_args[@]}"}
    status=$?
    [ -f "$dir/ab.md" ] && cat "$dir/ab.md" >> "$SUMMARY"
    # Every night's rounds are kept in the results store: the history of both sides.
    if [ -n "$RESULTS_DB" ] && [ -d "$dir/runs" ]; then
        "$RMATRIX" store import --store "$RESULTS_DB" "$dir/runs" >&2 ||
            echo "nightly: could not store $dir/runs in $RESULTS_DB" >&2
        "$RMATRIX" history "$RESULTS_DB" >> "$SUMMARY" || true
    fi
    # Tonight's commit as ab resolved it: the "b" side's in ab.json.
    commit=$(awk '/^  "b": \{/ {b = 1} b && /"commit"/ {print; exit}' "$dir/ab.json" 2>/dev/null |
        grep -o '[0-9a-f]\{40\}' || true)
    [ ! -s "$STORE/last-good-rev" ] && [ "$status" -ne 1 ] && [ "$status" -ne 2 ] &&
        [ "$status" -ne 3 ] && [ "$status" -ne 130 ] && status=0
    [ "$status" -eq 0 ] && [ "$counted_status" -ne 0 ] && {
        echo "nightly: $REV passed side by side but not the counted gate; not promoted" >&2
        finish 0
    }
    case $status in
        0)  if [ -z "$commit" ]; then
                echo "nightly: ab named no commit for $REV; nothing promoted" >&2
                exit 6
            fi
            echo "$commit" > "$STORE/.last-good-rev.new" && mv -f "$STORE/.last-good-rev.new" "$STORE/last-good-rev" || exit 6
            echo "nightly: $commit promoted to $STORE/last-good-rev" >&2 ;;
        4)  echo "nightly: performance regression of $REV against $good (side by side, $dir); not promoted" >&2
            if [ "$BISECT" = 1 ] && [ -n "$commit" ]; then
                echo "nightly: bisecting $good..$commit ($STORE/bisect/$ID)" >&2
                mkdir -p "$STORE/bisect"
                # Measured as ab measured: side by side, or at the same time (--duet).
                local duet=()
                for a in ${ab_args[@]+"${ab_args[@]}"}; do [ "$a" = --duet ] && duet=(--duet); done
                "$RMATRIX" bisect "$MATRIX" --good "$good" --bad "$commit" --out "$STORE/bisect/$ID" \
                    --paired ${duet[@]+"${duet[@]}"} ${judge[@]+"${judge[@]}"} ${set_args[@]+"${set_args[@]}"} >> "$SUMMARY" || true
            fi ;;
        8)  echo "nightly: ab cannot tell whether $REV regressed against $good within its rounds; not promoted: give it more (AB_ARGS=\"--max-rounds ... --budget ...\")" >&2 ;;
        *)  echo "nightly: rmatrix ab failed (exit $status); the last good revision is kept" >&2 ;;
    esac
    finish "$status"
}

# A regression is measured once more, on the regressed cells only, and fails the night only
# when the second run regresses too (the first may have met a noisy neighbour). Sets status.
confirm_regression() {
    local json="$RUN/compare.json" again="$STORE/confirm/$ID"
    mkdir -p "$STORE/confirm"
    # The same comparison as JSON, for the cells it flagged (its exit code is 4 again).
    "$RMATRIX" compare ${noise[@]+"${noise[@]}"} ${compare_args[@]+"${compare_args[@]}"} \
        --format json "$STORE/last-good" "$RUN" > "$json"
    echo "nightly: regression found; measuring the regressed cells again ($again)" >&2
    if ! "$RMATRIX" run "$MATRIX" --out "$again" --only-regressed "$json" --quiet \
        ${set_args[@]+"${set_args[@]}"}; then
        echo "nightly: the confirmation run failed; the first run's verdict stands" >&2
        return
    fi
    echo "### Confirmation run (the regressed cells measured again)" >> "$SUMMARY"
    "$RMATRIX" compare ${noise[@]+"${noise[@]}"} ${cannot[@]+"${cannot[@]}"} \
        ${compare_args[@]+"${compare_args[@]}"} "$STORE/last-good" "$again" >> "$SUMMARY"
    status=$?
    case $status in
        0) echo "nightly: the regression did not hold on the confirmation run; the baseline is kept, $RUN is not promoted" >&2
           confirmed_not=1 ;;
        4) [ "$BISECT" = 1 ] && bisect_regression ;;
    esac
}

# Bisect between the baseline's commit and tonight's, when the matrix builds from source.
bisect_regression() {
    local good bad
    good=$(grep -o '"commit": "[0-9a-f]\{40\}"' "$STORE/last-good/manifest.json" | head -1 | grep -o '[0-9a-f]\{40\}')
    bad=$(grep -o '"commit": "[0-9a-f]\{40\}"' "$RUN/manifest.json" | head -1 | grep -o '[0-9a-f]\{40\}')
    if [ -z "$good" ] || [ -z "$bad" ] || [ "$good" = "$bad" ]; then
        echo "nightly: no two commits to bisect between (the matrix has no source: server?)" >&2
        return
    fi
    echo "nightly: bisecting $good..$bad ($STORE/bisect/$ID)" >&2
    mkdir -p "$STORE/bisect"
    # The steps are judged as tonight's compare judged: its noise and the options of
    # COMPARE_ARGS that bisect takes too (the others are compare's own).
    local judge=()
    judge_args --assume-run-noise
    "$RMATRIX" bisect "$MATRIX" --good "$good" --bad "$bad" --out "$STORE/bisect/$ID" \
        ${noise[@]+"${noise[@]}"} ${judge[@]+"${judge[@]}"} \
        ${set_args[@]+"${set_args[@]}"} >> "$SUMMARY" || true
}

[ -n "$COUNTED_MATRIX" ] && counted_gate
[ -n "$REV" ] && nightly_ab

"$RMATRIX" run "$MATRIX" --out "$RUN" --quiet ${set_args[@]+"${set_args[@]}"}
status=$?
[ -f "$RUN/summary.md" ] && cat "$RUN/summary.md" >> "$SUMMARY"
if [ "$status" -ne 0 ]; then
    echo "nightly: rmatrix run failed (exit $status); the baseline is kept" >&2
    finish "$status"                           # 1 cells failed, 2 bad matrix, 3 no Docker
fi

if [ -e "$STORE/last-good" ]; then
    # compare's options, read whole once: piped into `grep -q`, a help longer than the match
    # would end in SIGPIPE, which pipefail counts as "no such option".
    compare_help=$("$RMATRIX" compare --help 2>/dev/null || true)
    # A store from before good/ existed: its baseline is the first promoted run.
    base=$(readlink "$STORE/last-good")
    case $base in /*) ;; *) base="../$base" ;; esac
    [ -e "$STORE/good/$(basename "$base")" ] || link "good/$(basename "$base")" "$base"
    noise=()
    if [ -n "$RESULTS_DB" ]; then
        # A new store starts with the promoted runs kept so far.
        stored=$("$RMATRIX" store list --store "$RESULTS_DB" 2>/dev/null || true)
        if ! grep -q '^[0-9]' <<<"$stored"; then
            "$RMATRIX" store import --store "$RESULTS_DB" "$STORE/good" >&2 ||
                echo "nightly: could not fill $RESULTS_DB from $STORE/good" >&2
        fi
        noise=(--noise-from "$RESULTS_DB")
    elif grep -q -- --noise-from <<<"$compare_help"; then
        noise=(--noise-from "$STORE/good")
    fi
    # A run whose compare cannot tell (exit 8) is not promoted: a regression hidden by noise
    # would otherwise become the baseline.
    cannot=()
    if grep -q -- --fail-on-cannot-tell <<<"$compare_help"; then
        cannot=(--fail-on-cannot-tell)
    fi
    "$RMATRIX" compare ${noise[@]+"${noise[@]}"} ${cannot[@]+"${cannot[@]}"} \
        ${compare_args[@]+"${compare_args[@]}"} "$STORE/last-good" "$RUN" >> "$SUMMARY"
    status=$?
    if [ "$status" -eq 4 ] && [ "$CONFIRM" != 0 ]; then
        confirm_regression
    fi
else
    if [ -L "$STORE/last-good" ]; then
        echo "nightly: last-good points to a missing run ($(readlink "$STORE/last-good")); starting a new baseline" >&2
    fi
    echo "First run: it becomes the baseline." >> "$SUMMARY"
    status=0
fi

# The series of every cell over the last nights, with change points.
if [ -n "$RESULTS_DB" ]; then
    "$RMATRIX" history "$RESULTS_DB" "$RUN" >> "$SUMMARY" || true
else
    "$RMATRIX" history "$STORE/runs" >> "$SUMMARY" || true
fi

confirmed_not=${confirmed_not:-0}
case $status in
    0)  if [ "$confirmed_not" = 1 ]; then finish 0; fi
        if [ "$counted_status" -ne 0 ]; then
            echo "nightly: $RUN passed the throughput gate but not the counted gate; not promoted" >&2
            finish 0
        fi
        # promote: this run is the new baseline, and one more good run for the noise
        link "good/$ID" "../runs/$ID" && link last-good "runs/$ID" || {
            echo "nightly: failed to promote $RUN" >&2
            exit 6
        }
        if [ -n "$RESULTS_DB" ] && ! "$RMATRIX" store import --store "$RESULTS_DB" "$RUN" >&2; then
            echo "nightly: $RUN is promoted but could not be stored in $RESULTS_DB" >&2
            exit 6
        fi
        echo "nightly: $RUN promoted to $STORE/last-good" >&2 ;;
    4)  echo "nightly: performance regression against $(readlink "$STORE/last-good"); $RUN is not promoted" >&2 ;;
    8)  echo "nightly: compare cannot tell whether $RUN regressed against $(readlink "$STORE/last-good") (intervals past the threshold); $RUN is not promoted: measure more iterations or rounds" >&2 ;;
    5)  echo "nightly: the environments of $RUN and the baseline differ; the baseline is kept" >&2 ;;
    *)  echo "nightly: compare could not use the runs (exit $status); the baseline is kept" >&2 ;;
esac
finish "$status"
