#!/usr/bin/env bash
# bench/same_output.sh OLD_NYTP NEW_NYTP [PROFILE...]
#
# Whether two nytp binaries write the same bytes: every command (and its
# --help) run by each on the same inputs, standard output, standard error,
# exit status and every file written compared with diff -r.  For a change
# that should not change output (moving code around); it is not a test of
# what the output should be.  Default inputs: every profile and tmon.out
# under testdata/ (the broken ones too: their messages and exit status
# count).  The reports that take --hide, --focus and --ignore run with
# each and with all three too, with the patterns of VIEW_HIDE, VIEW_FOCUS
# and VIEW_IGNORE (defaults below: they match subs of the testdata).
# Exit status 0 when all is the same, 1 otherwise.
set -u
VIEW_HIDE=${VIEW_HIDE:-'::(BEGIN|import)'}
VIEW_FOCUS=${VIEW_FOCUS:-'^main::'}
VIEW_IGNORE=${VIEW_IGNORE:-'CORE:'}
(($# >= 2)) || { echo "usage: $0 OLD_NYTP NEW_NYTP [PROFILE...]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
if (($#)); then
    profiles=("$@")
else
    profiles=("$top"/testdata/*.out "$top"/testdata/broken/*.out "$top"/testdata/dprof/*.nytprof)
fi
tmons=("$top"/testdata/dprof/*.tmon)
work=$(mktemp -d "${TMPDIR:-/tmp}/same_output.XXXXXX")

# run NAME CMD...: in the current directory, NAME.out, NAME.err, NAME.rc
run() {
    local name=$1
    shift
    "$@" >"$name.out" 2>"$name.err"
    echo $? >"$name.rc"
}

# every command of nytp $1 on every input, into $2
one_side() {
    local nytp=$1 dir=$2 p n
    mkdir -p "$dir/help"
    (cd "$dir/help" && run top-level "$nytp" --help &&
        for c in run attach stack html top diff flame calls dump csv cachegrind pprof speedscope merge \
            dprof-convert; do run "$c" "$nytp" "$c" --help; done)
    for p in "${profiles[@]}"; do
        p=$(realpath "$p")
        n=$(basename "$p")
        mkdir -p "$dir/$n"
        (
            cd "$dir/$n" || exit 1
            run dump "$nytp" dump "$p"
            run dump-json "$nytp" dump --json "$p"
            run dump-data "$nytp" dump --data "$p"
            run dump-data-collapse "$nytp" dump --data --collapse-evals "$p"
            run top "$nytp" top -n 0 "$p"
            run top-json "$nytp" top -n 0 --json "$p"
            run top-lines-incl "$nytp" top --lines --by=incl "$p"
            run calls "$nytp" calls "$p"
            run calls-calls "$nytp" calls --calls --stable "$p"
            run calls-rec "$nytp" calls --max-recursion=1 "$p"
            run flame "$nytp" flame "$p"
            run flame-svg "$nytp" flame --svg "$p"
            run flame-svg-inv "$nytp" flame --svg --inverted --calls "$p"
            run csv "$nytp" csv -o csv "$p"
            run cachegrind "$nytp" cachegrind -o cachegrind.out "$p"
            run pprof "$nytp" pprof -o pprof.pb.gz "$p"
            run speedscope "$nytp" speedscope -o speedscope.json "$p"
            run speedscope-sampled "$nytp" speedscope --sampled -o speedscope-sampled.json "$p"
            run html "$nytp" html -o html "$p"
            run html-minimal "$nytp" html -m --no-flame -o html-minimal "$p"
            run html-base "$nytp" html --base "$p" -o html-base "$p"
            run diff "$nytp" diff -n 0 "$p" "$p"
            run diff-json "$nytp" diff --json "$p" "$p"
            run diff-svg "$nytp" diff --svg "$p" "$p"
            run diff-stmts "$nytp" diff --by=statements "$p" "$p"
            run diff-other "$nytp" diff -n 0 "$top/testdata/demo.out" "$p"
            run diff-other-json "$nytp" diff --json "$top/testdata/demo.out" "$p"
            local v views=(hide="--hide=$VIEW_HIDE" focus="--focus=$VIEW_FOCUS" ignore="--ignore=$VIEW_IGNORE")
            for v in "${views[@]}" all; do
                local vn=${v%%=*} vo=("${v#*=}")
                [[ $v == all ]] && vo=("--hide=$VIEW_HIDE" "--focus=$VIEW_FOCUS" "--ignore=$VIEW_IGNORE")
                run "top-$vn" "$nytp" top -n 0 "${vo[@]}" "$p"
                run "top-json-$vn" "$nytp" top -n 0 --json "${vo[@]}" "$p"
                run "calls-$vn" "$nytp" calls "${vo[@]}" "$p"
                run "flame-$vn" "$nytp" flame "${vo[@]}" "$p"
                run "flame-svg-$vn" "$nytp" flame --svg "${vo[@]}" "$p"
                run "pprof-$vn" "$nytp" pprof -o "pprof-$vn.pb.gz" "${vo[@]}" "$p"
                run "speedscope-$vn" "$nytp" speedscope -o "speedscope-$vn.json" "${vo[@]}" "$p"
                run "html-$vn" "$nytp" html -o "html-$vn" "${vo[@]}" "$p"
            done
            cp "$p" copy.out
            run merge "$nytp" merge -o merged.out "$p" copy.out
            run merge-dump "$nytp" dump merged.out
        )
    done
    for p in "${tmons[@]}"; do
        n=$(basename "$p")
        mkdir -p "$dir/$n"
        (
            cd "$dir/$n" || exit 1
            run convert "$nytp" dprof-convert -o converted.out "$p"
            run convert-fake "$nytp" dprof-convert -F -o converted-fake.out "$p"
            run convert-dump "$nytp" dump --data converted.out
        )
    done
}

# Both sides run in the same directory, so that paths in messages match.
one_side "$old" "$work/run" && mv "$work/run" "$work/old"
one_side "$new" "$work/run" && mv "$work/run" "$work/new"
if diff -r -q "$work/old" "$work/new"; then
    echo "same: $(find "$work/old" -type f | wc -l) files of output, $(du -sh "$work/old" | cut -f1)," \
        "for ${#profiles[@]} profiles and ${#tmons[@]} tmon.out files"
    rm -rf "$work"
    exit 0
fi
echo "different (kept in $work)"
exit 1
