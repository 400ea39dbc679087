#!/usr/bin/perl
# attach.pl — nytp attach and nytp stack against their targets (issue 36),
# for bench_attach.  Run from the repository's top, after make.
#
# (a) agreement: a CPU-bound perl whose work is split 50/30/20 over three
#     subs by a fixed number of additions each (and a 4th sub of ~0 %),
#     each loop a block, a statement a turn (the in-process sampler
#     samples at the next statement, call or return, not inside one),
#     profiled by `nytp attach --hz=HZ` from outside and by `nytp run
#     --sample=HZ` in process, ROUNDS times each, interleaved.  For every
#     sub over 5 %: each side's median and mean share over the rounds, the
#     standard error of the mean (from the rounds, and the binomial one of
#     the samples pooled), and the difference of the means with its 95 %
#     confidence interval (Welch's t).  Target: within ±2 points; met when
#     every sub's interval lies inside ±2, missed when one lies outside,
#     unresolved otherwise.
# (b) cost: ONE perl doing blocks of fixed work (sub calls), each timed
#     by the perl with CLOCK_THREAD_CPUTIME_ID (and CLOCK_MONOTONIC, for
#     when), while this script attaches in windows of a fixed length
#     (nytp attach --duration), each variant (live and --stop at 100 and
#     at 1000 Hz, and 'null', which attaches nothing: the A/A) once a
#     cycle in a random order, every one after an unattached window.  A
#     block is labelled by the window it lies in (CLOCK_MONOTONIC both
#     sides; blocks across two windows are dropped).  Each window's median
#     block CPU time is divided by that of the unattached window before it
#     and of the one after it; the median of a variant's ratios, with a
#     95 % interval from resampling its windows, is its cost.  Drift of
#     the CPU time the VM charges for the same work (a factor 0.65-1.54
#     between processes here, and spells of ~1.75 within one) is common to
#     neighbouring windows and cancels; 'null' shows what is left.  The
#     same for the wall time of a block.  A cost per sample scales with
#     the rate, so 1000 Hz shows ten times the cost of 100 Hz over the same
#     noise: the target (live at 100 Hz <= 1 %) is judged on 100 Hz
#     measured and on 1000 Hz scaled down by the samples each took.  The perl is pinned to one CPU
#     and nytp attach to another when there are two (ATTACH_PIN=0: not).
# (c) `nytp stack` of a perl 3,000 frames deep: wall time of the whole
#     command (exec to exit), the median of STACK_RUNS (target < 10 ms).
# (d) the samples attach dropped as torn, as its summary line says, over
#     every attach run of (a) and (b).
#
# Knobs (environment): ATTACH_PARTS (abc: which of (a)-(c) to run; (d) is
# always printed), ATTACH_ROUNDS (8), ATTACH_HZ (250: the fastest the
# in-process sampler's CPU timer gets at CONFIG_HZ=250), ATTACH_WORK (800
# turns of the 50/30/20 loop, ~6.5 s of CPU here), COST_CYCLES (40),
# COST_WINDOW (0.25 s), COST_HZ (100,1000: the first is the target's
# rate, the last the one scaled down to it), COST_BLOCK (100000 calls,
# ~10 ms of CPU here), ATTACH_PIN (1), ATTACH_KEEP (a directory: the cost
# perl's blocks and the windows are copied there), STACK_RUNS (15).
use strict;
use warnings;
use JSON::PP;
use POSIX ();
use File::Temp qw(tempdir);
use Time::HiRes qw(time sleep clock_gettime CLOCK_MONOTONIC);

my $nytp = 'build/nytp';
-x $nytp or die "attach.pl: no $nytp: run make first\n";
my $rounds = $ENV{ATTACH_ROUNDS} || 8;
my $hz = $ENV{ATTACH_HZ} || 250;
my $work_turns = $ENV{ATTACH_WORK} || 800;
my $cycles = $ENV{COST_CYCLES} || 40;
my $window = $ENV{COST_WINDOW} || 0.25;
my $cost_hz = $ENV{COST_HZ} || '100,1000';
my $block_calls = $ENV{COST_BLOCK} || 100_000;
my $stack_runs = $ENV{STACK_RUNS} || 15;
my $parts = $ENV{ATTACH_PARTS} || 'abc';
my $keep = $ENV{ATTACH_KEEP};
my $dir = tempdir('nytp-bench-attach-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($torn, $taken) = (0, 0);
my $t_start = time;

# The perl on one CPU, nytp attach on another, when there are two.
my (@pin_target, @pin_attach);
my $ncpu = () = do { open my $fh, '<', '/proc/cpuinfo'; grep { /^processor\s*:/ } <$fh> };
if (($ENV{ATTACH_PIN} // 1) && $ncpu >= 2 && system('taskset -c 0 true 2>/dev/null') == 0) {
    @pin_target = qw(taskset -c 1);
    @pin_attach = qw(taskset -c 0);
}

sub load { (`uptime` =~ /(load[^\n]*)/)[0] }

sub script {
    my ($name, $text) = @_;
    open my $fh, '>', "$dir/$name" or die "$dir/$name: $!\n";
    print $fh $text;
    close $fh;
    return "$dir/$name";
}

sub median {
    my @v = sort { $a <=> $b } @_;
    return 0 unless @v;
    return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

sub mean { my $s = 0; $s += $_ for @_; @_ ? $s / @_ : 0 }

# Sample standard deviation (n - 1).
sub sd {
    my $m = mean(@_);
    my $s = 0;
    $s += ($_ - $m)**2 for @_;
    @_ > 1 ? sqrt($s / (@_ - 1)) : 0;
}

# Two-sided 95 % quantile of Student's t with df degrees of freedom (the
# table's next lower df: a little wide, never narrow).
sub t95 {
    my $df = shift;
    my @t = ([1, 12.706], [2, 4.303], [3, 3.182], [4, 2.776], [5, 2.571], [6, 2.447], [7, 2.365],
        [8, 2.306], [9, 2.262], [10, 2.228], [12, 2.179], [15, 2.131], [20, 2.086], [30, 2.042],
        [60, 2.000], [120, 1.980]);
    my $q = 12.706;
    for (@t) { $q = $_->[1] if $df >= $_->[0] }
    return $df >= 1e6 ? 1.96 : $q;
}

sub start {
    my @cmd = @_;
    my $pid = fork // die "fork: $!\n";
    if (!$pid) {
        open STDOUT, '>', '/dev/null';
        exec @cmd or POSIX::_exit(127);
    }
    return $pid;
}

# nytp stack PID until the perl is in its first wait (it is up).
sub wait_ready {
    my ($pid, $re) = @_;
    for (1 .. 400) {
        my $out = `$nytp stack $pid 2>/dev/null`;
        return 1 if $out =~ $re;
        sleep 0.025;
    }
    die "attach.pl: perl $pid never got ready\n";
}

# nytp attach, its summary counted for (d); returns the samples and the
# summary line.
sub attach {
    my ($pid, $out, @opt) = @_;
    my $err = `@pin_attach $nytp attach @opt -o $out $pid 2>&1 >/dev/null`;
    $? == 0 or die "attach.pl: nytp attach @opt $pid: $err";
    my ($n, $d) = $err =~ /(\d+) samples .*?(\d+) dropped as torn/ or die "attach.pl: no summary: $err";
    $taken += $n;
    $torn += $d;
    return ($n, $err);
}

# Exclusive share of each sub of a profile, in % of the sampled time
# outside the wait before the work (main::CORE:sselect): attach starts in
# that wait, the in-process sampler at perl's start, so it differs.  And
# the fraction of the time that is work (to count the samples of it).
sub shares {
    my $json = decode_json(scalar `$nytp top --json -n 0 $_[0]`);
    my $all = $json->{totals}{statements} || 1;
    my $t = $all;
    my ($w) = grep { $_->{name} eq "main::CORE:sselect" } @{ $json->{subs} };
    $t -= $w->{excl} if $w;
    $t ||= 1;
    return ({ map { $_->{name} => 100 * $_->{excl} / $t } grep { $_->{name} ne "main::CORE:sselect" } @{ $json->{subs} } },
        $t / $all);
}

# The median of a variant's ratios and its 95 % interval, by resampling
# its windows in runs of 4 consecutive ones (a window's ratios and those
# of the windows near it are not independent: neighbouring windows share
# the VM's slow spells and, for A, their B windows); a fixed seed, so a
# rerun on the same figures prints the same interval.
sub median_ci {
    my @w = @_;
    my @all = map { @$_ } @w;
    return (0, 0, 0) unless @all;
    my @runs;
    push @runs, [map { @$_ } grep { defined } @w[$_ * 4 .. $_ * 4 + 3]] for 0 .. int($#w / 4);
    srand 36;
    my @m;
    for (1 .. 2000) {
        push @m, median(map { @{ $runs[rand @runs] } } 1 .. @runs);
    }
    @m = sort { $a <=> $b } @m;
    return (median(@all), $m[49], $m[1950]);
}

# ---- (a) agreement ---------------------------------------------------------

if ($parts =~ /a/) {
    my $split = script('split.pl', <<~PL);
    sub a50 { my \$x = 0; for (1 .. 250_000) { \$x++ } \$x }
    sub b30 { my \$x = 0; for (1 .. 150_000) { \$x++ } \$x }
    sub c20 { my \$x = 0; for (1 .. 100_000) { \$x++ } \$x }
    sub tiny { 1 }
    select undef, undef, undef, 0.3;
    for (1 .. $work_turns) { a50(); b30(); c20(); tiny() }
    PL

    printf "-- (a) agreement: nytp attach --hz=%d against nytp run --sample=%d, %d rounds each of %d turns of the work; %s; %s\n",
        $hz, $hz, $rounds, $work_turns, @pin_target ? 'the perl on CPU 1, nytp attach on CPU 0' : 'not pinned', load();
    my (%att, %inp, @att_n, @inp_n);
    for my $r (1 .. $rounds) {
        my $pid = start(@pin_target, $^X, $split);
        wait_ready($pid, qr/CORE:sselect/);
        my ($n) = attach($pid, "$dir/att.out", "--hz=$hz");
        waitpid $pid, 0;
        my ($s, $f) = shares("$dir/att.out");
        push @att_n, $n * $f;
        push @{ $att{$_} }, $s->{$_} for keys %$s;

        system("@pin_target $nytp run --perl=$^X --sample=$hz -o $dir/inp.out -- $split >/dev/null 2>&1") == 0
            or die "attach.pl: nytp run --sample=$hz failed\n";
        my ($m) = `$nytp dump --tags=ATTRIBUTE $dir/inp.out` =~ /sample_count\t(\d+)/;
        ($s, $f) = shares("$dir/inp.out");
        push @inp_n, $m * $f;
        push @{ $inp{$_} }, $s->{$_} for keys %$s;
    }
    printf "   samples of the work a run (median): attach %d, in process %d (shares below leave out the wait before the work)\n",
        median(@att_n), median(@inp_n);
    printf "   %-10s %-27s %-27s %13s  %s\n", 'sub', 'attach: mean ± SE (binom.)', 'in process: mean ± SE', 'medians a / i', 'mean diff [95% CI]';
    my %seen = (%att, %inp);
    my ($inside, $outside, $n_subs, $worst_med) = (0, 0, 0, 0);
    my @detail;
    my ($na, $ni) = (0, 0);
    $na += $_ for @att_n;
    $ni += $_ for @inp_n;
    for my $sub (sort { median(@{ $inp{$b} || [0] }) <=> median(@{ $inp{$a} || [0] }) } keys %seen) {
        my @a = @{ $att{$sub} || [] };
        my @i = @{ $inp{$sub} || [] };
        push @a, (0) x ($rounds - @a);
        push @i, (0) x ($rounds - @i);
        next if median(@a) < 5 && median(@i) < 5;
        $n_subs++;
        my ($ma, $mi) = (mean(@a), mean(@i));
        my ($sa, $si) = (sd(@a) / sqrt(@a), sd(@i) / sqrt(@i));
        my $ba = 100 * sqrt(($ma / 100) * (1 - $ma / 100) / ($na || 1));
        my $bi = 100 * sqrt(($mi / 100) * (1 - $mi / 100) / ($ni || 1));
        my $d = $ma - $mi;
        my $se = sqrt($sa**2 + $si**2);
        my $df = $se > 0 ? $se**4 / ($sa**4 / (@a - 1) + $si**4 / (@i - 1)) : 1e6;
        my $h = t95($df) * $se;
        my ($lo, $hi) = ($d - $h, $d + $h);
        if ($lo >= -2 && $hi <= 2) { $inside++ } elsif ($lo > 2 || $hi < -2) { $outside++ }
        my $dm = median(@a) - median(@i);
        $worst_med = abs $dm if abs $dm > $worst_med;
        printf "   %-10s %5.1f%% ± %.2f (%.2f)        %5.1f%% ± %.2f (%.2f)        %5.1f / %5.1f  %+5.2f [%+.2f, %+.2f]\n",
            $sub =~ s/^main:://r, $ma, $sa, $ba, $mi, $si, $bi, median(@a), median(@i), $d, $lo, $hi;
        push @detail, sprintf "   %-10s rounds: %s / %s", $sub =~ s/^main:://r,
            join(' ', map { sprintf '%.1f', $_ } @a), join(' ', map { sprintf '%.1f', $_ } @i);
    }
    print "$_\n" for @detail;
    printf "   largest difference of the medians %.2f points; target ±2 for every sub over 5 %%: %s\n", $worst_med,
        $outside ? "NOT MET ($outside interval(s) entirely outside ±2)"
        : $inside == $n_subs ? 'met (every 95 % interval inside ±2)'
        : 'unresolved (an interval crosses ±2: more rounds or longer runs would tell)';
}

# ---- (b) cost ----------------------------------------------------------------

if ($parts =~ /b/) {
    my $costpl = script('cost.pl', <<~'PL');
    use strict;
    use warnings;
    use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC CLOCK_THREAD_CPUTIME_ID);
    my ($out, $calls) = @ARGV;
    my $stop = 0;
    $SIG{USR1} = sub { $stop = 1 };
    sub f { my ($x) = @_; $x * 2 + 1 }
    sub block { my $s = 0; for my $i (1 .. $calls) { $s += f($i) } $s }
    block() for 1 .. 3;
    $| = 1;
    print "ready\n";
    my @r;
    until ($stop) {
        my $m0 = clock_gettime(CLOCK_MONOTONIC);
        my $c0 = clock_gettime(CLOCK_THREAD_CPUTIME_ID);
        block();
        my $c1 = clock_gettime(CLOCK_THREAD_CPUTIME_ID);
        my $m1 = clock_gettime(CLOCK_MONOTONIC);
        push @r, sprintf "%.6f %.6f %.9f", $m0, $m1, $c1 - $c0;
    }
    open my $fh, '>', $out or die "$out: $!\n";
    print $fh "$_\n" for @r;
    close $fh or die "$out: $!\n";
    PL

    my @hzs = split /,/, $cost_hz;
    my @kinds = ('null', map { ("live$_", "stop$_") } @hzs);
    my %hz_of = map { ("live$_" => $_, "stop$_" => $_) } @hzs;
    printf "\n-- (b) cost to the target: one perl timing blocks of %d sub calls (CLOCK_THREAD_CPUTIME_ID), "
        . "attached live and with --stop at %s Hz, and not at all (the A/A), in windows of %.2f s, each after an unattached one, %d cycles; %s; %s\n",
        $block_calls, join(' and ', @hzs), $window, $cycles,
        @pin_target ? 'the perl on CPU 1, nytp attach on CPU 0' : 'not pinned', load();
    # Each cycle: every variant once, each after an unattached window; the
    # variants in an order drawn at random (a fixed seed), so that whatever
    # one window leaves to the next (the one after a --stop) falls on every
    # variant alike.  The variant 'null' attaches nothing: compared with
    # its neighbours exactly as the others are, it is the A/A, the noise
    # floor of this very run.
    srand 36;
    my @seq;
    for (1 .. $cycles) {
        push @seq, map { ('none', $_->[1]) } sort { $a->[0] <=> $b->[0] } map { [rand(), $_] } @kinds;
    }
    push @seq, 'none';
    my (@win, %att_cpu, %att_samples, %stopped_us);
    {
        my $tpid = open my $tfh, '-|', @pin_target, $^X, $costpl, "$dir/blocks", $block_calls
            or die "attach.pl: cannot start the cost perl: $!\n";
        my $ready = <$tfh>;
        defined $ready && $ready eq "ready\n" or die "attach.pl: the cost perl did not start\n";
        for my $label (@seq) {
            my $t0 = clock_gettime(CLOCK_MONOTONIC);
            if ($label eq 'none' || $label eq 'null') {
                sleep $window;
            } else {
                my @c0 = times;
                my ($n, $line) = attach($tpid, "$dir/cost.out", "--hz=$hz_of{$label}", "--duration=$window",
                    $label =~ /^stop/ ? '--stop' : ());
                my @c1 = times;
                $att_cpu{$label} += ($c1[2] + $c1[3]) - ($c0[2] + $c0[3]);
                $att_samples{$label} += $n;
                push @{ $stopped_us{$label} }, $1 if $line =~ /stopped (\d+) us a sample/;
            }
            push @win, [$label, $t0, clock_gettime(CLOCK_MONOTONIC)];
        }
        kill 'USR1', $tpid;
        close $tfh;
        $? == 0 or die "attach.pl: the cost perl failed ($?)\n";
    }
    if ($keep) {
        require File::Copy;
        File::Copy::copy("$dir/blocks", "$keep/blocks") or die "attach.pl: $keep/blocks: $!\n";
        open my $fh, '>', "$keep/windows" or die "attach.pl: $keep/windows: $!\n";
        printf $fh "%s %.6f %.6f\n", @$_ for @win;
    }
    my $dropped = 0;
    {
        open my $fh, '<', "$dir/blocks" or die "$dir/blocks: $!\n";
        my $w = 0;
        while (<$fh>) {
            my ($m0, $m1, $cpu) = split;
            $w++ while $w < @win && $win[$w][2] <= $m0;
            if ($w < @win && $m0 >= $win[$w][1] && $m1 <= $win[$w][2]) {
                push @{ $win[$w][3] }, [$cpu, $m1 - $m0];
            } else {
                $dropped++;
            }
        }
    }
    my $mono = 0;
    $mono += $_->[2] - $_->[1] for @win;
    my $nblocks = 0;
    $nblocks += @{ $_->[3] || [] } for @win;
    printf "   %d blocks in %.0f s (%d across two windows, dropped)\n", $nblocks, $mono, $dropped;

    # For the CPU time of a block (0) and its wall time (1): ratios of
    # window medians, a variant's window to each of the unattached ones
    # beside it; two ratios a window, each of a window to one other (a
    # ratio to the mean of both would not be centred on 1: a neighbour the
    # VM ran slowly pulls the mean up more than a fast one pulls it down).
    my (%ci, %med_of);
    for my $k (0, 1) {
        my %blocks_of;
        push @{ $blocks_of{ $_->[0] } }, map { $_->[$k] } @{ $_->[3] || [] } for @win;
        $med_of{$k}{$_} = median(@{ $blocks_of{$_} }) for keys %blocks_of;
        my @none = @{ $blocks_of{none} || [] };
        my $med_none = median(@none);
        my @med = map { median(map { $_->[$k] } @{ $_->[3] || [] }) } @win;
        my %ratios;
        for my $i (0 .. $#win) {
            my $label = $win[$i][0];
            next if $label eq 'none' || !$med[$i];
            my @ref;
            push @ref, $med[$i - 1] if $i > 0;
            push @ref, $med[$i + 1] if $i < $#win;
            @ref = grep { $_ } @ref;
            push @{ $ratios{$label} }, [map { $med[$i] / $_ } @ref] if @ref;
        }
        printf "   %s of a block: unattached median %.2f ms%s\n", $k ? 'wall time (CLOCK_MONOTONIC)' : 'CPU time',
            1000 * $med_none, $k ? ' (other processes on its CPU are in it)'
            : sprintf(', %.0f %% of the unattached blocks over 1.3 times that (the VM running this CPU slowly)',
                100 * (grep { $_ > 1.3 * $med_none } @none) / (@none || 1));
        printf "   %-26s %7s %7s %12s %22s  %s\n", 'variant', 'windows', 'blocks', 'pooled ratio',
            'window ratios: median', '[95% CI] as a cost';
        for my $label (@kinds) {
            my $name = $label eq 'null' ? 'A/A (nothing attached)' : "attach $hz_of{$label} Hz " . ($label =~ /^live/ ? 'live' : '--stop');
            my $pooled = median(@{ $blocks_of{$label} || [] }) / ($med_none || 1);
            my ($m, $lo, $hi) = median_ci(@{ $ratios{$label} || [] });
            $ci{$k}{$label} = [$m, $lo, $hi];
            printf "   %-26s %7d %7d %12.4f %22.4f  %+.2f %% [%+.2f, %+.2f]\n", $name, scalar(grep { $_->[0] eq $label } @win),
                scalar @{ $blocks_of{$label} || [] }, $pooled, $m, 100 * ($m - 1), 100 * ($lo - 1), 100 * ($hi - 1);
        }
    }
    # samples a second of sampling (--duration a window)
    my %rate;
    for my $label (@kinds) {
        my $n = grep { $_->[0] eq $label } @win;
        $rate{$label} = ($att_samples{$label} || 0) / (($window * $n) || 1);
    }
    for my $label (@kinds) {
        next unless $att_samples{$label};
        my $secs = 0;
        $secs += $_->[2] - $_->[1] for grep { $_->[0] eq $label } @win;
        # the perl's CPU time a sample: the cost's share of its CPU, times
        # the CPU it had a second of wall time, over the samples taken a
        # second (fewer than the rate when nytp attach ran late, as with
        # --stop at 1000 Hz on a loaded machine)
        my $frac = $med_of{0}{$label} / ($med_of{1}{$label} || 1);
        my ($m, $lo, $hi) = map { 1e6 * ($_ - 1) * $frac / ($rate{$label} || 1) } @{ $ci{0}{$label} };
        printf "   attach %d Hz %-6s %6d samples (%.0f a second); the perl's CPU a sample %+.1f us [%+.1f, %+.1f];"
            . " nytp attach's own CPU %.1f %% of a CPU (%.0f us a sample, start-up included)%s\n",
            $hz_of{$label}, $label =~ /^stop/ ? '--stop' : 'live', $att_samples{$label}, $rate{$label}, $m, $lo, $hi,
            100 * $att_cpu{$label} / ($secs || 1), 1e6 * $att_cpu{$label} / $att_samples{$label},
            $stopped_us{$label} ? sprintf('; the perl stopped %.0f us a sample', median(@{ $stopped_us{$label} })) : '';
    }
    # The target at the first rate (100 Hz), measured there and, a cost
    # per sample being what attaching adds, from the fastest rate scaled
    # down by the samples each took (ten times the samples, ten times the
    # cost, the same noise).
    my $base = $hzs[0];
    for my $mode ('live', 'stop') {
        my @v = @{ $ci{0}{"$mode$base"} || next };
        my $line = sprintf "   %s at %d Hz: %+.2f %% [%+.2f, %+.2f]", $mode eq 'live' ? 'live' : '--stop', $base,
            map { 100 * ($_ - 1) } @v;
        my $hi = $v[2];
        if (@hzs > 1 && $hzs[-1] > $base) {
            my $f = $rate{"$mode$base"} / ($rate{"$mode$hzs[-1]"} || 1);
            my @s = map { 1 + ($_ - 1) * $f } @{ $ci{0}{"$mode$hzs[-1]"} };
            $line .= sprintf "; from %d Hz scaled by its samples, x%.3f: %+.2f %% [%+.2f, %+.2f]", $hzs[-1], $f, map { 100 * ($_ - 1) } @s;
            $hi = $s[2] if $s[2] < $hi;
        }
        $line .= $mode eq 'live'
            ? sprintf("; target <= 1 %% %s", $hi <= 1.01 ? 'met (an upper bound below +1 %)'
                : $v[1] > 1.01 ? 'NOT MET (the interval is above +1 %)' : 'unresolved (the intervals cross +1 %)')
            : '';
        print "$line\n";
    }
    printf "   the noise floor: the A/A's %+.2f %% [%+.2f, %+.2f]\n", map { 100 * ($_ - 1) } @{ $ci{0}{null} };
}

# ---- (c) nytp stack of a 3,000-frame recursion -------------------------------

if ($parts =~ /c/) {
    my $deep = script('deep.pl', <<~'PL');
    sub down { my $n = shift; return sleep 1000 if $n <= 1; down($n - 1) }
    down(3000);
    PL
    printf "\n-- (c) nytp stack of a perl 3,000 frames deep, %d runs; %s\n", $stack_runs, load();
    {
        my $pid = start($^X, $deep);
        wait_ready($pid, qr/CORE:sleep/);
        my $frames = () = `$nytp stack $pid` =~ /^    main::down /mg;
        my @t;
        for (1 .. $stack_runs) {
            my $t0 = time;
            system("$nytp stack $pid >/dev/null") == 0 or die "attach.pl: nytp stack failed\n";
            push @t, 1000 * (time - $t0);
        }
        kill 'KILL', $pid;
        waitpid $pid, 0;
        @t = sort { $a <=> $b } @t;
        printf "   %d frames of main::down printed; wall time median %.2f ms (min %.2f, max %.2f): target < 10 ms %s\n",
            $frames, median(@t), $t[0], $t[-1], median(@t) < 10 ? 'met' : 'NOT MET';
    }
}

# ---- (d) torn samples --------------------------------------------------------

printf "\n-- (d) samples dropped as torn, over every attach run above: %d of %d (%.2f%%)\n",
    $torn, $taken + $torn, 100 * $torn / (($taken + $torn) || 1);
printf "\n   bench took %.0f s; %s\n", time - $t_start, load();
