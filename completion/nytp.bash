# bash completion for nytp                                   -*- shell-script -*-
#
# Install as share/bash-completion/completions/nytp, or source this file.
#
# To teach it a new command, add its name to _nytp_commands and one entry to
# _nytp_options.  An entry lists the command's options; an option that takes
# a value is written with a ':' and the kind of value after it:
#
#     --name=:kind      value after '=' (or as the next word)
#     -x:kind           value as the next word
#
# Kinds: file (any file), dir (a directory), profile (a profile file), tags
# (a comma-separated list of chunk names), pid (a running perl's process
# id), options (the profiler's
# colon-separated name=value list), and anything else for a value that is
# not completed.  The operand, the profile, completes as a profile
# file; commands in _nytp_many_profiles take any number of them.

_nytp_commands=(dump csv cachegrind pprof speedscope dprof-convert merge calls flame run attach stack html top diff)

declare -gA _nytp_options=(
    [dump]='--json --tags=:tags --limit=:number --strict --data --collapse-evals --inc=:dirs -f:profile --file=:profile -o:file --out=:file --output=:file -h --help'
    [csv]='-f:profile --file=:profile -o:dir --out=:dir --output=:dir -d --delete --focus=:regex --ignore=:regex --hide=:regex --strict -h --help'
    [cachegrind]='-f:profile --file=:profile -o:file --out=:file --output=:file --focus=:regex --ignore=:regex --hide=:regex --strict -h --help'
    [pprof]='-f:profile --file=:profile -o:file --out=:file --output=:file --max-recursion=:number --focus=:regex --ignore=:regex --hide=:regex --strict -h --help'
    [speedscope]='-f:profile --file=:profile -o:file --out=:file --output=:file --max-recursion=:number --sampled --focus=:regex --ignore=:regex --hide=:regex --strict -h --help'
    [dprof-convert]='-f:file --file=:file -o:file --out=:file --output=:file -F --fake-exits --no-overhead --dprofpp-times --goto=:goto -h --help'
    [merge]='--strict --compress=:level -v --verbose -f:profile --file=:profile -o:file --out=:file --output=:file -h --help'
    [calls]='--calls --stable --max-recursion=:number --focus=:regex --ignore=:regex --hide=:regex --strict -v --verbose -f:profile --file=:profile -o:file --out=:file --output=:file -h --help'
    [flame]='--svg --calls --title=:text --width=:number --minwidth=:number --inverted --filter=:regex --link-template=:url --stable --max-recursion=:number --focus=:regex --ignore=:regex --hide=:regex --strict -f:profile --file=:profile -o:file --out=:file --output=:file -h --help'
    [attach]='-o:file --out=:file --output=:file --hz=:number --duration=:number --children --stop -h --help'
    [stack]='--json --children -h --help'
    [run]='-o:file --out=:file --output=:file --nytprof=:options --sample --sample=:number --cpu --rotate=:number --children --perl=:file -I:dir -M:module -m:module -e:code -E:code -w -W -X -t -T -h --help'
    [html]='-f:profile --file=:profile -o:dir --out=:dir --output=:dir -l:dir --lib=:dir -d --delete --open -m --minimal --no-flame --flamewidth=:number --no-mergeevals --dot --focus=:regex --ignore=:regex --hide=:regex --max-recursion=:number --base=:profile --normalize --by=:diffby --strict -h --help'
    [top]='-n:number --count=:number --by=:by --lines --json --focus=:regex --ignore=:regex --hide=:regex --max-recursion=:number --strict -f:profile --file=:profile -o:file --out=:file --output=:file -h --help'
    [diff]='--by=:diffby --normalize --sum --strip=:dir --map=:text --alpha=:number -n:number --count=:number --json --svg --title=:text --fail-above=:percent --min-time=:time --focus=:regex --ignore=:regex --hide=:regex --max-recursion=:number --strict -f:profile --file=:profile -o:file --out=:file --output=:file -h --help'
)

# The profiler's options (nytp-run(1), Devel::NYTP), and the values of
# those that take one of a few.
_nytp_profiler_options=(file addpid addtimestamp compress calls stmts subs leave blocks slowops
    savesrc start clock forkdepth nameevals nameanonsubs sigexit posix_exit use_db_sub findcaller
    optimize endatexit libcexit trace log usecputime sample rotate threads)
declare -gA _nytp_profiler_values=([calls]='0 1 2' [slowops]='0 1 2' [compress]='0 1 2 3 4 5 6 7 8 9'
    [start]='begin init end no' [stmts]='0 1' [subs]='0 1' [leave]='0 1' [blocks]='0 1' [savesrc]='0 1'
    [addpid]='0 1' [addtimestamp]='0 1' [nameevals]='0 1' [nameanonsubs]='0 1' [posix_exit]='0 1'
    [use_db_sub]='0 1' [findcaller]='0 1' [optimize]='0 1' [endatexit]='0 1' [libcexit]='0 1'
    [usecputime]='0 1' [sigexit]='1 0 INT,TERM,HUP' [sample]='100 1000' [threads]='0 1')

# The kind of a command's operand when it is not a profile.
declare -gA _nytp_operand=(
    [dprof-convert]=file
    [attach]=pid
    [stack]=pid
)

declare -gA _nytp_many_profiles=([stack]=1 [csv]=1 [cachegrind]=1 [pprof]=1 [speedscope]=1 [merge]=1 [calls]=1 [flame]=1 [html]=1
    [top]=1 [diff]=1)

_nytp_chunk_names=(VERSION COMMENT ATTRIBUTE OPTION START_DEFLATE PID_START
    PID_END NEW_FID TIME_LINE TIME_BLOCK DISCOUNT SUB_INFO SUB_CALLERS
    SRC_LINE SUB_ENTRY SUB_RETURN)

# The kind of value option $2 of command $1 takes, or nothing if it takes
# none (or is unknown).  $2 may be abbreviated, as getopt_long allows.
_nytp_option_kind()
{
    local entry name kind match="" n=0
    for entry in ${_nytp_options[$1]}; do
        name=${entry%%:*} name=${name%=}
        [[ $entry == *:* ]] && kind=${entry#*:} || kind=""
        if [[ $name == "$2" ]]; then
            printf '%s' "$kind"
            return
        fi
        if [[ $2 == --?* && $name == "$2"* ]]; then
            match=$kind
            n=$((n + 1))
        fi
    done
    ((n == 1)) && printf '%s' "$match"
}

# Candidates for a comma-separated list of chunk names; $1 is the list
# typed so far.  Only the part after the last comma is completed.
_nytp_tag_list()
{
    local done_part="" part=$1 name
    if [[ $1 == *,* ]]; then
        done_part=${1%,*},
        part=${1##*,}
    fi
    for name in "${_nytp_chunk_names[@]}"; do
        [[ $name == "${part^^}"* ]] || continue
        [[ ,${done_part^^} == *",$name,"* ]] && continue
        printf '%s\n' "$done_part$name"
    done
}

# Candidates for the profiler's options, name=value:name=value; $1 is the
# list typed so far.  Only the part after the last ':' is completed: a
# name (with its '='), or the value of a name that takes one of a few.
_nytp_profiler_option_list()
{
    local done_part="" part=$1 name v
    if [[ $1 == *:* ]]; then
        done_part=${1%:*}:
        part=${1##*:}
    fi
    if [[ $part == *=* ]]; then
        name=${part%%=*}
        for v in ${_nytp_profiler_values[$name]-}; do
            [[ $v == "${part#*=}"* ]] && printf '%s\n' "$done_part$name=$v"
        done
        return
    fi
    for name in "${_nytp_profiler_options[@]}"; do
        [[ $name == "$part"* ]] && printf '%s\n' "$done_part$name="
    done
}

# Profile files: *.out and nytprof.out*, and the profiles of child
# processes written beside them (FILE.PID, FILE.PID.TIME: x.out.12345)
# and the segments of rotate= (FILE.s1, FILE.PID.s2), with directories to descend into; any file when no profile file matches.
_nytp_profiles()
{
    local f n=0
    local -a found=()
    while IFS= read -r f; do
        if [[ -d $f ]]; then
            found+=("$f")
        elif [[ ${f##*/} == *.out || ${f##*/} == nytprof.out* || ${f##*/} =~ \.out(\.s?[0-9]+)+$ ]]; then
            found+=("$f")
            n=$((n + 1))
        fi
    done < <(compgen -f -- "$1")
    if ((n)); then
        printf '%s\n' "${found[@]}"
    else
        compgen -f -- "$1"
    fi
}

# Complete a value of kind $1 whose text so far is $2.  $3, if given, is
# text in the same shell word before the value (such as "--tags=") that
# readline will not replace; it is put back in front of the candidates
# when it does not end with one of bash's word break characters.
_nytp_value()
{
    _nytp_value_only "$1" "$2"
    local keep=${3-} i
    # readline replaces only the text after the last break character
    # (COMP_WORDBREAKS: '=' and ':' by default) of the word.
    local typed=$keep$2 cut=""
    for ((i = ${#typed} - 1; i >= 0; i--)); do
        if [[ $COMP_WORDBREAKS == *"${typed:i:1}"* ]]; then
            cut=${typed:0:i+1}
            break
        fi
    done
    for i in "${!COMPREPLY[@]}"; do
        COMPREPLY[i]=$keep${COMPREPLY[i]}
        COMPREPLY[i]=${COMPREPLY[i]#"$cut"}
    done
}

_nytp_value_only()
{
    case $1 in
    file)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$2")
        ;;
    dir)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$2")
        ;;
    profile)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(_nytp_profiles "$2")
        ;;
    pid)
        # the running perls (stack, attach)
        mapfile -t COMPREPLY < <(compgen -W "$(pgrep -d ' ' perl 2>/dev/null)" -- "$2")
        ;;
    tags)
        compopt -o nospace 2>/dev/null
        mapfile -t COMPREPLY < <(_nytp_tag_list "$2")
        ;;
    options)
        compopt -o nospace 2>/dev/null
        mapfile -t COMPREPLY < <(_nytp_profiler_option_list "$2")
        ;;
    goto)
        mapfile -t COMPREPLY < <(compgen -W 'nytprof dprofpp' -- "$2")
        ;;
    by)
        mapfile -t COMPREPLY < <(compgen -W 'excl incl calls' -- "$2")
        ;;
    diffby)
        mapfile -t COMPREPLY < <(compgen -W 'time statements calls' -- "$2")
        ;;
    *) COMPREPLY=() ;;
    esac
}

# Split the line up to the cursor into words at unquoted blanks.  bash's
# own COMP_WORDS also splits at '=' and ':', which would make --tags=X
# three words; this keeps it one.
_nytp_line_words()
{
    local line=$1 word="" c q="" i
    words=()
    for ((i = 0; i < ${#line}; i++)); do
        c=${line:i:1}
        if [[ -n $q ]]; then
            [[ $c == "$q" ]] && q="" || word+=$c
        elif [[ $c == \\ ]]; then
            i=$((i + 1))
            word+=${line:i:1}
        elif [[ $c == [\'\"] ]]; then
            q=$c
        elif [[ $c == [[:blank:]] ]]; then
            [[ -n $word ]] && words+=("$word")
            word=""
        else
            word+=$c
        fi
    done
    words+=("$word")
}

_nytp()
{
    local -a words
    if [[ -n ${COMP_LINE-} ]]; then
        _nytp_line_words "${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}"
    else
        words=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
    fi
    local cword=$((${#words[@]} - 1))
    local cur=${words[cword]}
    COMPREPLY=()

    # nytp <TAB>
    if ((cword == 1)); then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W '--help --version -h -V' -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "${_nytp_commands[*]} help" -- "$cur")
        fi
        return
    fi

    local cmd=${words[1]}
    if [[ $cmd == help ]]; then
        ((cword == 2)) && mapfile -t COMPREPLY < <(compgen -W "${_nytp_commands[*]} nytp nytprof" -- "$cur")
        return
    fi
    [[ -n ${_nytp_options[$cmd]+set} ]] || return

    # nytp run: its options stop at the script; the script and the
    # program's arguments complete as files.
    if [[ $cmd == run ]]; then
        for ((i = 2; i < cword; i++)); do
            if [[ ${words[i]} == -- || ${words[i]} != -?* ]]; then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                return
            fi
            [[ ${words[i]} != *=* && ${words[i]} != -[!-]?* ]] &&
                [[ -n $(_nytp_option_kind "$cmd" "${words[i]}") ]] && i=$((i + 1))
        done
    fi

    # Is the word before the cursor an option that wants this word as its
    # value?  Is there a '--' before the cursor?
    local i kind after_dashes="" operands=0
    for ((i = 2; i < cword; i++)); do
        if [[ -z $after_dashes && ${words[i]} == -- ]]; then
            after_dashes=1
        elif [[ -n $after_dashes || ${words[i]} != -?* ]]; then
            operands=$((operands + 1))
        elif [[ ${words[i]} != *=* && ${words[i]} != -[!-]?* ]] &&
            [[ -n $(_nytp_option_kind "$cmd" "${words[i]}") ]]; then
            i=$((i + 1)) # the option's value
        fi
    done
    local prev=${words[cword - 1]}
    if [[ -z $after_dashes && $prev == -* && $prev != *=* ]] && ((cword > 2)); then
        kind=$(_nytp_option_kind "$cmd" "$prev")
        if [[ -n $kind ]]; then
            _nytp_value "$kind" "$cur"
            return
        fi
    fi

    if [[ -z $after_dashes && $cur == -* ]]; then
        if [[ $cur == --*=* ]]; then
            # --option=value: complete the value.
            kind=$(_nytp_option_kind "$cmd" "${cur%%=*}")
            _nytp_value "$kind" "${cur#*=}" "${cur%%=*}="
            return
        fi
        if [[ $cur == -[!-]?* ]]; then
            # -xVALUE: a short option with its value attached.
            kind=$(_nytp_option_kind "$cmd" "${cur:0:2}")
            [[ -n $kind ]] && _nytp_value "$kind" "${cur:2}" "${cur:0:2}"
            return
        fi
        local entry
        local -a opts=()
        for entry in ${_nytp_options[$cmd]}; do
            opts+=("${entry%%:*}")
        done
        mapfile -t COMPREPLY < <(compgen -W "${opts[*]}" -- "$cur")
        # No space after an option that wants '=value'.
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
        return
    fi

    # nytp run takes a script; the other commands one profile, or several
    # (or what _nytp_operand says).
    if [[ $cmd == run ]]; then
        _nytp_value file "$cur"
        return
    fi
    # Commands take one profile, or several (or what _nytp_operand says).
    if ((operands == 0)) || [[ -n ${_nytp_many_profiles[$cmd]-} ]]; then
        _nytp_value "${_nytp_operand[$cmd]:-profile}" "$cur"
    fi
}

complete -F _nytp nytp
