#!/usr/bin/perl
# Loading a profile takes time and memory in proportion to it, on shapes
# real programs make and that once made loading quadratic (issue 21):
#   sibling-evals  a code generator in a loop, eval "\$x = $i" for 1..N on
#                  one line (the sibling-eval collapse compared every
#                  eval's source with those before it)
#   many-subs      N subs in one file, as dprof-convert writes for a big
#                  program (each SUB_INFO scanned the file's subs)
#   many-callers   N subs defined on one line, each calling main::f there:
#                  one call site with N callers (each SUB_CALLERS scanned
#                  the site's callers)
#   sibling-evals in two inputs (each eval of the second was matched to
#                  the first's by a scan of the parent's evals)
#   eval-calls     eval "f($i);\n" x 4 for 1..N on one line: folding the
#                  evals looked for each call site in main::f's 4 N sites
#   eval-anon      $s = eval "sub { $i }"; $s->() for 1..N: folding the
#                  evals looked for each anon sub in the survivor's subs
#   eval-closures  generated code of N lines, each defining an anon sub,
#                  run twice by one eval: folding the two compared each
#                  anon sub's name with all the others'
# Each is loaded by 'nytp top' at a size N and at 10 N (eval-anon also by
# 'nytp html', whose histograms of call durations hashed sub names by a
# few words of them), and the larger must take under RATIO times the CPU
# time and under MEM times the peak memory of the smaller: ratios, never
# absolute times, so that a slow or busy machine passes and a quadratic
# load (about 100 times) fails.  CPU time (user + sys) rather than wall
# time, so that other work on the machine counts little.  The small
# size's time is the least of 3 runs; a large one over the bound is run
# once more, in case a neighbour took the cache; one still running long
# after any linear load could is killed, and fails.  The sizes keep each
# large load near a second: the sizes of issue 21 (100,000 evals,
# 400,000 subs, 320,000 callers) are the large ones here (twice that for
# sibling evals), not the small; their peak memory is 100 to 300 MB (500
# MB for html, a histogram per sub name).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use Time::HiRes ();
use File::Copy ();

my $nytp = nytp();
my $dir = scratch_dir();
my $RATIO = 30;
my $MEM = 15;

# load(\@files, $timeout, \@command) -> ($status, $stdout, $cpu_seconds, $peak_kb, $wall)
# 'nytp @command @files' under /usr/bin/time, killed after $timeout
# seconds (status 137 then).
sub load {
    my ($f, $timeout, $cmd) = @_;
    my $m = "$dir/time.txt";
    unlink $m;
    my $t0 = Time::HiRes::time();
    my ($st, $out, $err) =
        run_cmd(['/usr/bin/time', '-o', $m, '-f', '%U %S %M', 'timeout', '-s', 'KILL', $timeout, $nytp, @$cmd, @$f]);
    my $wall = Time::HiRes::time() - $t0;
    my ($u, $s, $kb) = (slurp_file($m) // '') =~ /(\S+) (\S+) (\d+)\s*$/;
    diag $err if $st && $st != 137;
    return ($st, $out, ($u // 0) + ($s // 0), $kb // 0, $wall);
}

# [kind, N, inputs, what top shows of all N (given the count), saying]
my @shapes = (
    ['sibling-evals', 20_000, 1, sub { qr/"file":"\(eval 1\)\[x\.pl:2\]","fid":2,"line":1,"time":[^,]*,"count":$_[0],/ },
     'every eval folded into the first'],
    ['many-subs', 40_000, 1, sub { qr/"rows":\{"subs":$_[0],/ }, 'every sub'],
    ['many-callers', 32_000, 1, sub { qr/"name":"main::f","file":"x\.pl","first_line":1,"calls":$_[0],/ },
     'every call of main::f'],
    ['eval-calls', 12_000, 1, sub { qr/"subs":\[\{"name":"main::f","file":"x\.pl","first_line":1,"calls":${\(4 * $_[0])},/ },
     'every call of main::f'],
    ['eval-anon', 16_000, 1,
     sub { qr/"subs":\[\{"name":"main::__ANON__\[\(eval 1\)\[x\.pl:2\]:1\]","file":"\(eval 1\)\[x\.pl:2\]","first_line":1,"calls":$_[0],/ },
     'every anon sub folded into the first'],
    ['eval-closures', 8_000, 1, sub { qr/"rows":\{"subs":$_[0],/ }, 'the anon subs of both evals folded'],
    # html's histograms of call durations by sub name (a hash of three
    # words of a name sent these names to a few slots)
    ['eval-anon', 16_000, 1, sub { qr/^report: / }, 'the report written', ['html', '-o', "$dir/html"]],
    ['sibling-evals', 10_000, 2, sub { qr/"file":"\(eval 1\)\[x\.pl:2\]","fid":2,"line":1,"time":[^,]*,"count":${\(2 * $_[0])},/ },
     'the evals of both inputs, folded'],
);
for my $shape (@shapes) {
    my ($k, $n, $inputs, $want, $what, $cmd) = @$shape;
    $cmd //= ['top', '--json'];
    my ($small, $big) = ([gen($k, $n)], [gen($k, 10 * $n)]);
    for my $f ($small, $big) {
        for my $i (2 .. $inputs) {
            push @$f, "$f->[0].$i";
            File::Copy::copy($f->[0], $f->[-1]) or die "copy $f->[0]: $!";
        }
    }
    my $kind = $inputs > 1 ? "$k ($inputs inputs)" : $k;
    $kind .= ", $cmd->[0]" if $cmd->[0] ne 'top';
    my ($t1, $kb1);
    for (1 .. 3) {
        my ($st, $out, $cpu, $kb) = load($small, 600, $cmd);
        is $st, 0, "$kind $n: exit 0" if $_ == 1;
        like $out, $want->($n), "$kind $n: $what" if $_ == 1;
        $t1 = $cpu if !defined $t1 || $cpu < $t1;
        $kb1 = $kb if !defined $kb1 || $kb < $kb1;
    }
    # /usr/bin/time counts in hundredths: a floor keeps a load measured as
    # 0.00 or 0.01 s from making any ratio
    $t1 = 0.05 if $t1 < 0.05;
    # the unfixed loads took minutes: stop long after any linear one
    my $limit = int(4 * $RATIO * $t1) + 20;
    my ($st, $out, $t10, $kb10, $wall) = load($big, $limit, $cmd);
    if ($st == 0 && $t10 > $RATIO * $t1) {
        my ($st2, $out2, $t, $kb) = load($big, $limit, $cmd);
        ($st, $out, $t10, $kb10) = ($st2, $out2, $t, $kb) if $st2 == 0 && $t < $t10;
    }
    if ($st == 137) {
        fail sprintf '%s %d: killed after %.1f s (the load of %d took %.2f s of CPU)', $kind, 10 * $n, $wall, $n,
            $t1;
        next;
    }
    is $st, 0, "$kind ${\(10 * $n)}: exit 0";
    like $out, $want->(10 * $n), "$kind ${\(10 * $n)}: $what";
    cmp_ok $t10 / $t1, '<', $RATIO, sprintf('%s: 10 times the size, %.1f times the CPU time (%.2f s / %.2f s)',
                                           $kind, $t10 / $t1, $t10, $t1);
    cmp_ok $kb10 / $kb1, '<', $MEM, sprintf('%s: 10 times the size, %.1f times the peak memory (%d KB / %d KB)',
                                          $kind, $kb10 / $kb1, $kb10, $kb1);
}

done_testing;
