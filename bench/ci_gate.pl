#!/usr/bin/perl
# bench/ci_gate.pl — catch and false-alarm rates of CI gate recipes of
# 'nytp diff --fail-above' (issue 38), run by 'bench/run ci_gate'.
#
# A call-heavy program (600k calls of small subs) in two checkouts: in
# "slow" its scoring sub, about 12 % of the unprofiled CPU time, does 1.45
# times the work.  For each recipe, POOL runs of each checkout are
# profiled; a catch trial draws 3 base and 3 slow runs and counts a catch
# when the gate exits 3 naming main::score; a false-alarm trial draws two
# disjoint sets of 3 base runs and counts any exit 3.  Trials are drawn
# from the pool (resampled), so they are not independent: a pool that
# happens to be noisy shows in every trial; the pool size is printed.
#
#   CI_GATE_POOL=10 CI_GATE_CATCH=40 CI_GATE_FALSE=100 bench/run ci_gate
use strict;
use warnings;
use File::Path qw(make_path);
use File::Temp qw(tempdir);

my $nytp = $ENV{NYTP} // 'build/nytp';
my $pool = $ENV{CI_GATE_POOL} // 10;
my $ncatch = $ENV{CI_GATE_CATCH} // 40;
my $nfalse = $ENV{CI_GATE_FALSE} // 100;
die "CI_GATE_POOL must be 6 or more (a false-alarm trial draws 6 runs)\n" if $pool < 6;
my $dir = tempdir('nytp-ci-gate-XXXXXX', TMPDIR => 1, CLEANUP => 1);
srand($ENV{CI_GATE_SEED} // 38);

my $prog = <<'EOP';
use strict;
use warnings;
my $K = __K__;
sub score { my ($s) = @_; my $v = $s; for my $i (1 .. $K) { $v = ($v * 31 + $i) % 1000003 } return $v }
sub add { return $_[0] + $_[1] }
sub mul { my ($a, $b) = @_; return $a * $b }
sub step { my ($x) = @_; return add(mul($x, 3), 1) % 1009 }
my $t = 0;
for my $n (1 .. 1000) {
    my $x = $n;
    $x = step($x) for 1 .. 200;
    $t += score($x);
}
print "$t\n";
EOP
my %ws = (base => "$dir/ws-base", slow => "$dir/ws-slow");
for my $w (keys %ws) {
    make_path($ws{$w});
    open my $fh, '>', "$ws{$w}/prog.pl" or die $!;
    (my $p = $prog) =~ s/__K__/$w eq 'slow' ? 290 : 200/e;
    print $fh $p;
    close $fh;
}

# recipe: how the runs are profiled, how the gate is called
my @recipes = (
    ['time (default clock)', [], ['--fail-above=10']],
    ['time --normalize', [], ['--normalize', '--fail-above=10']],
    ['clock=2 --normalize', ['--nytprof=clock=2'], ['--normalize', '--fail-above=10']],
    ['sample --cpu --normalize', ['--sample', '--cpu'], ['--normalize', '--fail-above=10']],
    ['statements (count gate)', [], ['--by=statements', '--fail-above=1'], 'time (default clock)'],
);

my %runs; # profiling key -> side -> [files]
my $serial = 0;
sub profile_pool {
    my ($key, $popts) = @_;
    return if $runs{$key};
    for my $i (1 .. $pool) {
        for my $side (qw(base slow)) { # interleaved, so load drifts hit both
            my $out = "$dir/p" . ++$serial . ".out";
            system("$nytp run @$popts -o $out $ws{$side}/prog.pl >/dev/null 2>&1") == 0 && -s $out
                or die "nytp run failed for $key";
            push @{ $runs{$key}{$side} }, $out;
        }
    }
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

sub gate {
    my ($gopts, $b, $n) = @_;
    my $cmd = join ' ', $nytp, 'diff', @$gopts, @$b, '--', @$n;
    my $err = `$cmd 2>&1 >/dev/null`;
    return ($? >> 8, $err);
}

chomp(my $load0 = `cut -d' ' -f1-3 /proc/loadavg`);
printf "pool %d runs a side, %d catch trials, %d false-alarm trials, 3 runs a side; load %s\n",
    $pool, $ncatch, $nfalse, $load0;
printf "%-26s %14s %18s %9s\n", 'recipe', 'caught', 'false alarms', 'seconds';
for my $r (@recipes) {
    my ($name, $popts, $gopts, $same) = @$r;
    my $t0 = time;
    my $key = $same // $name;
    profile_pool($key, $popts);
    my ($caught, $false) = (0, 0);
    for (1 .. $ncatch) {
        my @b = draw(3, @{ $runs{$key}{base} });
        my @n = draw(3, @{ $runs{$key}{slow} });
        my ($st, $err) = gate($gopts, \@b, \@n);
        $caught++ if $st == 3 && $err =~ /main::score/;
    }
    for (1 .. $nfalse) {
        my @six = draw(6, @{ $runs{$key}{base} });
        my ($st) = gate($gopts, [@six[0 .. 2]], [@six[3 .. 5]]);
        $false++ if $st == 3;
    }
    printf "%-26s %4d/%-3d %4.0f%% %6d/%-3d %5.1f%% %9d\n", $name, $caught, $ncatch, 100 * $caught / $ncatch,
        $false, $nfalse, 100 * $false / $nfalse, time - $t0;
}
chomp(my $load1 = `cut -d' ' -f1-3 /proc/loadavg`);
print "load at the end $load1\n";
