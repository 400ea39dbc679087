#!/usr/bin/perl
# attach.pl — nytp attach and nytp stack against their targets (issue 36),
# for bench_attach.  Run from the repository's top, after make.
#
# (a) agreement: a CPU-bound perl whose work is split 50/30/20 over three
#     subs by a fixed number of additions each (and a 4th sub of ~0 %),
#     each loop a block, a statement a turn (the in-process sampler
#     samples at the next statement, call or return, not inside one),
#     profiled by `nytp attach --hz=100` from outside and by `nytp run
#     --sample=100` in process, ROUNDS times each, interleaved; for every
#     sub over 5 % of the samples, the median exclusive share of each and
#     the difference in points (target: within ±2).
# (b) cost: the CPU time a fixed-work perl spends on its work (times()
#     around the work, read by the perl itself, so starting up and the
#     attacher's own CPU are not in it), unattached (twice: the A/A row),
#     attached at 100 Hz live and with --stop; ROUNDS interleaved rounds,
#     the median of each variant's ratio to the unattached run of the
#     same round (target: live ≤ 1.01).
# (c) `nytp stack` of a perl 3,000 frames deep: wall time of the whole
#     command (exec to exit), the median of STACK_RUNS (target < 10 ms).
# (d) the samples attach dropped as torn, as its summary line says, over
#     every attach run of (a) and (b).
use strict;
use warnings;
use JSON::PP;
use POSIX ();
use File::Temp qw(tempdir);
use Time::HiRes qw(time sleep);

my $nytp = 'build/nytp';
-x $nytp or die "attach.pl: no $nytp: run make first\n";
my $rounds = $ENV{ATTACH_ROUNDS} || 5;
my $stack_runs = $ENV{STACK_RUNS} || 15;
my $dir = tempdir('nytp-bench-attach-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($torn, $taken) = (0, 0);

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

# nytp attach (until the perl exits), its summary counted for (d).
sub attach {
    my ($pid, $out, @opt) = @_;
    my $err = `$nytp attach @opt -o $out $pid 2>&1 >/dev/null`;
    $? == 0 or die "attach.pl: nytp attach @opt $pid: $err";
    my ($n, $d) = $err =~ /(\d+) samples .*?(\d+) dropped as torn/ or die "attach.pl: no summary: $err";
    $taken += $n;
    $torn += $d;
    return $n;
}

# Exclusive share of each sub of a profile, in % of the sampled time
# outside the wait before the work (main::CORE:sselect): attach starts in
# that wait, the in-process sampler at perl's start, so it differs.
sub shares {
    my $json = decode_json(scalar `$nytp top --json -n 0 $_[0]`);
    my $t = $json->{totals}{statements} || 1;
    my ($w) = grep { $_->{name} eq "main::CORE:sselect" } @{ $json->{subs} };
    $t -= $w->{excl} if $w;
    return { map { $_->{name} => 100 * $_->{excl} / $t } grep { $_->{name} ne "main::CORE:sselect" } @{ $json->{subs} } };
}

# ---- (a) agreement ---------------------------------------------------------

my $split = script('split.pl', <<'PL');
sub a50 { my $x = 0; for (1 .. 250_000) { $x++ } $x }
sub b30 { my $x = 0; for (1 .. 150_000) { $x++ } $x }
sub c20 { my $x = 0; for (1 .. 100_000) { $x++ } $x }
sub tiny { 1 }
select undef, undef, undef, 0.3;
for (1 .. 250) { a50(); b30(); c20(); tiny() }
PL

printf "-- (a) agreement: nytp attach --hz=100 against nytp run --sample=100, %d rounds each; %s\n",
    $rounds, (`uptime` =~ /(load[^\n]*)/)[0];
my (%att, %inp, @att_n, @inp_n);
for my $r (1 .. $rounds) {
    my $pid = start($^X, $split);
    wait_ready($pid, qr/CORE:sselect/);
    push @att_n, attach($pid, "$dir/att.out", '--hz=100');
    waitpid $pid, 0;
    my $s = shares("$dir/att.out");
    push @{ $att{$_} }, $s->{$_} for keys %$s;

    system("$nytp run --perl=$^X --sample=100 -o $dir/inp.out -- $split >/dev/null 2>&1") == 0
        or die "attach.pl: nytp run --sample=100 failed\n";
    push @inp_n, `$nytp dump --tags=ATTRIBUTE $dir/inp.out` =~ /sample_count\t(\d+)/;
    $s = shares("$dir/inp.out");
    push @{ $inp{$_} }, $s->{$_} for keys %$s;
}
printf "   samples a run (median): attach %d, in process %d (shares below leave out the wait before the work)\n",
    median(@att_n), median(@inp_n);
printf "   %-22s %9s %11s %8s  %s\n", 'sub (excl, median)', 'attach', 'in process', 'diff', 'rounds (attach/in process)';
my %seen = (%att, %inp);
my $worst = 0;
for my $sub (sort { median(@{ $inp{$b} || [0] }) <=> median(@{ $inp{$a} || [0] }) } keys %seen) {
    my ($a, $i) = (median(@{ $att{$sub} || [0] }), median(@{ $inp{$sub} || [0] }));
    next if $a < 5 && $i < 5;
    my $d = $a - $i;
    $worst = abs $d if abs $d > $worst;
    printf "   %-22s %8.1f%% %10.1f%% %+7.1f  %s / %s\n", $sub, $a, $i, $d,
        join(' ', map { sprintf '%.1f', $_ } @{ $att{$sub} || [] }),
        join(' ', map { sprintf '%.1f', $_ } @{ $inp{$sub} || [] });
}
printf "   largest difference %.1f points: target ±2 %s\n", $worst, $worst <= 2 ? 'met' : 'NOT MET';

# ---- (b) cost ----------------------------------------------------------------

my $work = script('work.pl', <<'PL');
my $out = shift;
sub work { my $x = 0; $x += $_ for 1 .. 1_500_000; $x }
select undef, undef, undef, 0.3;
my @t0 = times;
work() for 1 .. 60;
my @t1 = times;
open my $fh, '>', $out or die;
printf $fh "%.4f\n", ($t1[0] + $t1[1]) - ($t0[0] + $t0[1]);
PL

printf "\n-- (b) cost to the target: CPU time of its work, %d interleaved rounds; %s\n", $rounds, (`uptime` =~ /(load[^\n]*)/)[0];
my @variants = ('plain', 'A/A (unattached)', 'attach 100 Hz live', 'attach 100 Hz --stop');
my %cpu;
for my $r (1 .. $rounds) {
    for my $v (0 .. $#variants) {
        my $pid = start($^X, $work, "$dir/cpu");
        wait_ready($pid, qr/CORE:sselect/);
        if ($v == 2) { attach($pid, "$dir/cost.out", '--hz=100') }
        elsif ($v == 3) { attach($pid, "$dir/cost.out", '--hz=100', '--stop') }
        waitpid $pid, 0;
        open my $fh, '<', "$dir/cpu" or die "$dir/cpu: $!\n";
        push @{ $cpu{$v} }, 0 + <$fh>;
    }
}
printf "   %-22s %10s %10s  %s\n", 'variant', 'CPU s', 'ratio', 'ratios of the rounds';
for my $v (0 .. $#variants) {
    my @ratios = map { $cpu{$v}[$_] / ($cpu{0}[$_] || 1) } 0 .. $rounds - 1;
    printf "   %-22s %10.3f %10.3f  %s\n", $variants[$v], median(@{ $cpu{$v} }), median(@ratios),
        join(' ', map { sprintf '%.3f', $_ } @ratios);
}

# ---- (c) nytp stack of a 3,000-frame recursion -------------------------------

my $deep = script('deep.pl', <<'PL');
sub down { my $n = shift; return sleep 1000 if $n <= 1; down($n - 1) }
down(3000);
PL
printf "\n-- (c) nytp stack of a perl 3,000 frames deep, %d runs; %s\n", $stack_runs, (`uptime` =~ /(load[^\n]*)/)[0];
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

# ---- (d) torn samples --------------------------------------------------------

printf "\n-- (d) samples dropped as torn, over every attach run above: %d of %d (%.2f%%)\n",
    $torn, $taken + $torn, 100 * $torn / (($taken + $torn) || 1);
