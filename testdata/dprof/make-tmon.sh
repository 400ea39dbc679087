#!/bin/sh
# Makes the Devel::DProf profiles NAME.tmon of the programs NAME.pl here
# (perl -d:DProf writes ./tmon.out, which is renamed), and NAME.nytprof,
# a Devel::NYTProf profile of the same program with sub profiling only
# (stmts=0), to compare call arcs with.  Timings differ on every run; the
# sequence of calls does not.
set -e
cd "$(dirname "$0")"
for pl in recursion.pl die.pl goto.pl many.pl; do
    name=${pl%.pl}
    rm -f tmon.out
    PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 perl -d:DProf "$pl" > /dev/null
    mv tmon.out "$name.tmon"
    NYTPROF="stmts=0:file=$name.nytprof" PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 \
        perl -d:NYTProf "$pl" > /dev/null
done
