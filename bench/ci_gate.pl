#!/usr/bin/perl
# bench/ci_gate.pl — catch and false-alarm rates of CI gate recipes of
# 'nytp diff --fail-above' (issue 38), run by 'bench/run ci_gate'.
#
# The program (issue 38's case): call-heavy (2.5 million calls of three
# small subs) with a scoring sub of about a tenth of its unprofiled CPU
# time, a loop of short statements.  Three checkouts in three directories,
# as a CI job has them: base, same (a copy of base) and slow, where each of
# the scoring sub's statements does more (a length and an lc): the same
# statements and calls, about 1.45 times the CPU time.  The bench first
# measures that without the profiler (the sub's calls timed on the thread's
# CPU clock, less the timing's own cost, and the process's CPU time from
# /proc/self/schedstat) over UNPROF interleaved rounds.
#
# Then, for each way of profiling, POOL runs of each checkout (interleaved
# base, same, slow, so that a change of load hits all three), and for each
# recipe: a catch trial draws K runs of base and K of slow and counts a
# catch when the gate exits 3 naming main::score; a false-alarm trial
# draws K runs of base and K of same (identical code, other directory) and
# counts any exit 3.  Trials are drawn from the pool, so they are not
# independent: each rate rests on POOL distinct runs of each checkout, and
# a noisy pool shows in every trial.  The load average is read before and
# after each pool and printed.
#
#   CI_GATE_POOL=12 CI_GATE_CATCH=40 CI_GATE_FALSE=100 CI_GATE_UNPROF=9 bench/run ci_gate
#   CI_GATE_MODES='trace clock2 clock3 sample' (the ways of profiling, in this order)
#   CI_GATE_K='3 5' (runs a side of the recipes to try), CI_GATE_ONLY=PATTERN (of
#   the recipes' names), CI_GATE_JOBS=2 (gates run at once)
#   CI_GATE_KEEP=1 keeps the runs; CI_GATE_REUSE=DIR judges the runs kept in DIR
#   (its runs.txt) for the modes it has, instead of profiling them again
use strict;
use warnings;
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use JSON::PP ();
use List::Util qw(min max sum);

$| = 1;

use Cwd qw(abs_path);
my $nytp = abs_path($ENV{NYTP} // "build/nytp");
my $pool = $ENV{CI_GATE_POOL} // 12;
my $ncatch = $ENV{CI_GATE_CATCH} // 40;
my $nfalse = $ENV{CI_GATE_FALSE} // 100;
my $nunprof = $ENV{CI_GATE_UNPROF} // 9;
# CI_GATE_SCALE=N runs the program's loop N times as long
my $nloop = 12000 * ($ENV{CI_GATE_SCALE} // 1);
my @modes = split ' ', $ENV{CI_GATE_MODES} // 'trace clock2 clock3 sample';
my %ks = map { $_ => 1 } split ' ', $ENV{CI_GATE_K} // '3 5';
die "CI_GATE_POOL must be 5 or more (a trial of 5 runs a side draws 5 of each checkout)\n" if $pool < 5;
my $dir = tempdir('nytp-ci-gate-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{CI_GATE_KEEP});
srand($ENV{CI_GATE_SEED} // 38);

my $prog = <<'EOP';
use strict;
use warnings;

my @words = map { my $n = $_; join '', map { chr(97 + ($n * 7 + $_ * 13) % 26) } 1 .. 6 + $n % 7 } 1 .. 64;
my @docs = map { [@words[$_ .. $_ + 47]] } 0 .. 15;

sub score {
    my ($doc) = @_;
    my $h = 0;
    for my $w (@$doc) {
        $h += __EXPR__;
    }
    return $h;
}

sub add { return $_[0] + $_[1] }
sub mul { my ($a, $b) = @_; return $a * $b }
sub step { my ($x) = @_; return add(mul($x, 3), 1) % 1009 }

my $t = 0;
for my $n (1 .. __N__) {
    my $x = $n;
    $x = step($x) for 1 .. 70;
    $t += score($docs[$n % 16]);
}
print "$t\n";
EOP
my $fast = '($w =~ tr/aeiou//)';
my %expr = (base => $fast, same => $fast, slow => $ENV{CI_GATE_SLOW} // q{(lc($w) =~ tr/aeiou//) + 1});
my %ws = map { $_ => "$dir/ws-$_" } qw(base same slow);
for my $w (keys %ws) {
    make_path($ws{$w});
    open my $fh, '>', "$ws{$w}/prog.pl" or die $!;
    (my $p = $prog) =~ s/__EXPR__/$expr{$w}/;
    $p =~ s/__N__/$nloop/;
    print $fh $p;
    close $fh;
}

# Unprofiled: the sub's calls timed on the thread's CPU clock; the timing's
# own cost (the same wrapper round an empty sub, as many calls) taken out.
my $timer = "$dir/ScoreTimer.pm";
open my $th, '>', $timer or die $!;
print $th <<'EOT';
package ScoreTimer;
use Time::HiRes qw(clock_gettime CLOCK_THREAD_CPUTIME_ID);
my ($in, $calls, $empty) = (0, 0, 0);
sub wrap {
    my ($orig, $acc) = @_;
    return sub {
        my $t0 = clock_gettime(CLOCK_THREAD_CPUTIME_ID);
        my $r = $orig->(@_);
        $$acc += clock_gettime(CLOCK_THREAD_CPUTIME_ID) - $t0;
        return $r;
    };
}
INIT {
    no warnings 'redefine';
    my $w = wrap(\&main::score, \$in);
    *main::score = sub { $calls++; goto &$w };
}
END {
    open my $f, '<', '/proc/self/schedstat' or die;
    my ($ns) = split ' ', scalar <$f>;
    my $e = wrap(sub { return $_[0] }, \$empty);
    my $x = [];
    $e->($x) for 1 .. $calls;
    printf STDERR "ci_gate %.6f %.6f\n", $in - $empty, $ns / 1e9;
}
1;
EOT
close $th;

sub load { open my $f, '<', '/proc/loadavg' or return '?'; my @l = split ' ', <$f>; return $l[0] }
sub median { my @v = sort { $a <=> $b } @_; my $n = @v; return $n % 2 ? $v[$n / 2] : ($v[$n / 2 - 1] + $v[$n / 2]) / 2 }
my @loads;
sub note_load { my $l = load(); push @loads, $l; return $l }

printf "program: %d x (70 x step(add, mul) + score(48 words)): %.2fM calls, %.1fM statements\n", $nloop, $nloop * 211 / 1e6,
    $nloop * (70 * 5 + 55) / 1e6;
if ($nunprof) {
    printf "unprofiled, %d interleaved rounds (load %s)\n", $nunprof, note_load();
    my %un;
    for my $i (1 .. $nunprof) {
        for my $w (qw(base slow)) {
            my $out = `perl -I$dir -MScoreTimer $ws{$w}/prog.pl 2>&1 >/dev/null`;
            my ($s, $tot) = $out =~ /^ci_gate (\S+) (\S+)/m or die "unprofiled run of $w failed: $out";
            push @{ $un{$w}{score} }, $s;
            push @{ $un{$w}{total} }, $tot;
        }
    }
    for my $w (qw(base slow)) {
        my @share = map { $un{$w}{score}[$_] / $un{$w}{total}[$_] } 0 .. $nunprof - 1;
        printf "   %-4s: main::score %.1f ms (%.1f-%.1f) of %.0f ms CPU (%.0f-%.0f), %.1f%% of it\n", $w,
            1e3 * median(@{ $un{$w}{score} }), 1e3 * min(@{ $un{$w}{score} }), 1e3 * max(@{ $un{$w}{score} }),
            1e3 * median(@{ $un{$w}{total} }), 1e3 * min(@{ $un{$w}{total} }), 1e3 * max(@{ $un{$w}{total} }),
            100 * median(@share);
    }
    # each round's ratio: both runs of a round ran under the same load
    my @ratio = map { $un{slow}{score}[$_] / $un{base}{score}[$_] } 0 .. $nunprof - 1;
    my @rest = map { ($un{slow}{total}[$_] - $un{slow}{score}[$_]) / ($un{base}{total}[$_] - $un{base}{score}[$_]) }
        0 .. $nunprof - 1;
    # the CPU's speed changes from run to run here (the same run took 270 to
    # 480 ms): the sub against the rest of its own run cancels that
    my @rel = map {
        ($un{slow}{score}[$_] / ($un{slow}{total}[$_] - $un{slow}{score}[$_]))
            / ($un{base}{score}[$_] / ($un{base}{total}[$_] - $un{base}{score}[$_]))
    } 0 .. $nunprof - 1;
    printf "   slow/base: main::score %.2fx (median of the rounds' ratios; %.2f-%.2f), the rest %.2fx;\n"
        . "   main::score against the rest of its run, slow/base: %.2fx (%.2f-%.2f)\n",
        median(@ratio), min(@ratio), max(@ratio), median(@rest), median(@rel), min(@rel), max(@rel);
}

# ways of profiling, and the recipes judged on their runs
my %modes = (
    trace => ['default clock', []],
    clock2 => ['clock=2', ['--nytprof=clock=2']],
    clock3 => ['clock=3', ['--nytprof=clock=3']],
    sample => ['--sample --cpu (1000 Hz)', ['--sample', '--cpu']],
);
my @recipes = (
    ['trace', 'default clock', ['--fail-above=10'], 3],
    ['trace', 'default clock --normalize', ['--normalize', '--fail-above=10'], 3],
    ['trace', 'default clock --normalize', ['--normalize', '--fail-above=10'], 5],
    ['trace', 'count gate --by=statements', ['--by=statements', '--fail-above=1'], 3],
    ['clock2', 'clock=2 --normalize', ['--normalize', '--fail-above=10'], 3],
    ['clock2', 'clock=2 --normalize', ['--normalize', '--fail-above=10'], 5],
    ['clock3', 'clock=3 --normalize', ['--normalize', '--fail-above=10'], 3],
    ['clock3', 'clock=3 --normalize', ['--normalize', '--fail-above=10'], 5],
    ['sample', 'sample --cpu --normalize', ['--normalize', '--fail-above=10'], 3],
    ['sample', 'sample --cpu --normalize', ['--normalize', '--fail-above=10'], 5],
);

my %runs; # mode -> checkout -> [files]
open my $manifest, '>', "$dir/runs.txt" or die $!; # CI_GATE_KEEP=1: to try other gates on them
$manifest->autoflush(1);
my %seen; # mode -> checkout -> [main::score's exclusive time, total statement time, samples]
my $serial = 0;
sub profile_pool {
    my ($mode) = @_;
    my $popts = $modes{$mode}[1];
    my ($l0, $t0) = (note_load(), time);
    for my $i (1 .. $pool) {
        for my $w (qw(base same slow)) {
            my $out = "$dir/p" . ++$serial . ".out";
            # from the checkout, as a CI job runs it
            system("cd $ws{$w} && $nytp run @$popts -o $out prog.pl >/dev/null 2>&1") == 0 && -s $out
                or die "nytp run failed for $mode\n";
            # the gate reads the run merged alone (the same times; a traced
            # profile's statement events summed, so read 2.5 times faster)
            (my $m = $out) =~ s/\.out$/.m.out/;
            system($nytp, 'merge', '-o', $m, $out) == 0 or die "nytp merge failed\n";
            unlink $out;
            $out = $m;
            push @{ $runs{$mode}{$w} }, $out;
            print $manifest "$mode $w $out\n";
            my $j = JSON::PP::decode_json(scalar `$nytp top --json -n 0 $out`);
            my ($s) = grep { $_->{name} eq 'main::score' } @{ $j->{subs} };
            push @{ $seen{$mode}{$w} }, [$s ? $s->{excl} : 0, $j->{totals}{statements}, $j->{sampled}{samples} // 0];
        }
    }
    my $l1 = note_load();
    my $b = $seen{$mode}{base};
    my $sl = $seen{$mode}{slow};
    my @ls = map { log($_->[0] || 1e-7) } @$b;
    my $m = sum(@ls) / @ls;
    my $sd = sqrt(sum(map { ($_ - $m)**2 } @ls) / (@ls - 1));
    my $samples = median(map { $_->[2] } @$b);
    printf "%s: %d runs of each checkout in %d s (load %s at the start, %s at the end)%s\n", $modes{$mode}[0], $pool,
        time - $t0, $l0, $l1, $samples ? sprintf(', %d samples a run', $samples) : '';
    printf "   main::score exclusive (medians): base %.1f ms, slow %.1f ms (%+.0f%%); its share %.1f%% of statement time; "
        . "run-to-run sd of its log in base %.3f\n",
        1e3 * median(map { $_->[0] } @$b), 1e3 * median(map { $_->[0] } @$sl),
        100 * (median(map { $_->[0] } @$sl) / median(map { $_->[0] } @$b) - 1),
        100 * median(map { $_->[0] / $_->[1] } @$b), $sd;
}

sub draw {
    my ($n, @from) = @_;
    my @v = @from;
    for my $i (0 .. $n - 1) {
        my $j = $i + int(rand(@v - $i));
        @v[$i, $j] = @v[$j, $i];
    }
    return @v[0 .. $n - 1];
}

# Each gate's exit status and standard error, JOBS at a time.
my $jobs = $ENV{CI_GATE_JOBS} // 2;
my $only = $ENV{CI_GATE_ONLY} // '';  # a pattern: only the recipes whose names match
sub gates {
    my ($gopts, @sets) = @_;
    my (@res, @run);
    my $reap = sub {
        my ($i, $fh) = @{ shift @run };
        local $/;
        my $err = <$fh> // '';
        close $fh;
        $res[$i] = [$? >> 8, $err];
    };
    for my $i (0 .. $#sets) {
        $reap->() if @run >= $jobs;
        my ($b, $n) = @{ $sets[$i] };
        open my $fh, '-|', join(' ', $nytp, 'diff', '-n', '1', @$gopts, @$b, '--', @$n, '2>&1 >/dev/null') or die $!;
        push @run, [$i, $fh];
    }
    $reap->() while @run;
    return @res;
}

printf "%d catch and %d false-alarm trials a recipe, drawn from pools of %d runs of each checkout\n", $ncatch, $nfalse,
    $pool;
printf "   %-28s %s %-28s %13s %13s\n", 'recipe', 'k', 'gate', 'caught', 'false alarms';
if (my $old = $ENV{CI_GATE_REUSE}) {
    open my $rf, '<', "$old/runs.txt" or die "$old/runs.txt: $!\n";
    while (<$rf>) {
        my ($mode, $w, $f) = split;
        push @{ $runs{$mode}{$w} }, $f;
    }
}
for my $r (map { my $m = $_; grep { $_->[0] eq $m && $ks{ $_->[3] } } @recipes } @modes) {
    my ($mode, $name, $gopts, $k) = @$r;
    next if $only ne '' && $name !~ /$only/;
    if ($runs{$mode} && !$seen{$mode}) {
        printf "%s: %d runs of each checkout kept in %s\n", $modes{$mode}[0], scalar @{ $runs{$mode}{base} },
            $ENV{CI_GATE_REUSE};
        $pool = @{ $runs{$mode}{base} };
        $seen{$mode} = 1;
    }
    profile_pool($mode) unless $runs{$mode};
    note_load();
    my ($caught, $other, $false) = (0, 0, 0);
    my @c = map { [[draw($k, @{ $runs{$mode}{base} })], [draw($k, @{ $runs{$mode}{slow} })]] } 1 .. $ncatch;
    my @f = map { [[draw($k, @{ $runs{$mode}{base} })], [draw($k, @{ $runs{$mode}{same} })]] } 1 .. $nfalse;
    for (gates($gopts, @c)) {
        my ($st, $err) = @$_;
        next unless $st == 3 && $err =~ /main::score:/;
        $caught++;
        $other++ if grep { !/main::score:|the total/ } grep { /grew by/ } split /\n/, $err;
    }
    $false += $_->[0] == 3 for gates($gopts, @f);
    printf "   %-28s %d %-28s %3d/%-3d %4.0f%% %3d/%-3d %4.0f%% %s\n", $name, $k, "@$gopts", $caught, $ncatch,
        100 * $caught / $ncatch, $false, $nfalse, 100 * $false / $nfalse,
        $other ? "($other of the catches also named another sub)" : '';
}
note_load();
printf "load average (1 min) read %d times (before and after each pool, before each recipe, at the end): %s-%s\n",
    scalar @loads, min(@loads), max(@loads);
print "runs kept in $dir (runs.txt lists them)\n" if $ENV{CI_GATE_KEEP};
