#!/usr/bin/perl
# Devel::NYTP's times are honest: a sub that sleeps 200 ms and one that
# spins for 200 ms get about that inclusive time, and the statement times
# of a busy loop add up to the time the profiler was active (its run time
# less its own overhead).  Tolerances are generous: the build machine is
# shared and its load varies.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $inc = repo() . '/build/perl';
my $dir = scratch_dir();
delete $ENV{NYTPROF};

sub write_script {
    my ($name, $code) = @_;
    open my $fh, '>', "$dir/$name" or die;
    print $fh $code;
    close $fh;
    return "$dir/$name";
}

# The attributes and the sub summaries of a profile (nytp dump --data).
sub profile_data {
    my ($script, $name, $opts) = @_;
    my $file = "$dir/$name.out";
    local $ENV{NYTPROF} = "file=$file" . ($opts ? ":$opts" : '');
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $script], cwd => $dir);
    is $st, 0, "$name: profiled" or diag $err;
    ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', $file]);
    is $st, 0, "$name: the profile reads" or diag $err;
    my (%attr, %incl, %excl);
    for (split /\n/, $out) {
        $attr{$1} = $2 if /^attribute\t(\w+)\t(.*)$/;
        if (/^sub_subinfo\t(\S+)\t\[ \S+ calls \d+ times (\S+) (\S+) /) {
            $incl{$1} = $2;
            $excl{$1} = $3;
        }
    }
    return (\%attr, \%incl, \%excl);
}

sub within {
    my ($got, $lo, $hi, $label) = @_;
    ok(defined $got && $got >= $lo && $got <= $hi, $label)
        or diag 'got ' . ($got // 'nothing') . ", want $lo .. $hi";
}

my $subs = write_script('sleep-spin.pl', <<'PERL');
use Time::HiRes qw(time);
sub snooze { select(undef, undef, undef, 0.2) }
sub spin { my $end = time + 0.2; my $n = 0; $n++ while time < $end; $n }
snooze();
spin();
PERL
my ($attr, $incl, $excl) = profile_data($subs, 'sleep-spin');
within $incl->{'main::snooze'}, 0.19, 0.6, 'a sub sleeping 200 ms: inclusive time about 0.2 s';
within $excl->{'main::snooze'}, 0, 0.05, 'a sub sleeping 200 ms: the sleep is in CORE:sselect, not its own';
within $incl->{'main::spin'}, 0.1, 0.5,
    'a sub spinning 200 ms by the clock: inclusive time about 0.2 s (the profiler\'s own time taken out)';

# With stmts=0 no statement reads the clock: a perl sub's call reads it
# itself.  (It waited for its first statement's reading, so a sub that
# calls nothing, whose end was then the first reading, had 0 s.)
my $busy = write_script('busy.pl', <<PERL);
use Time::HiRes qw(time);
sub busy { my \$n = 0; \$n += \$_ for 1 .. 1_500_000; \$n }
sub nap { select(undef, undef, undef, 0.15) }
my \$t0 = time; busy(); my \$t1 = time;
nap();
open my \$fh, '>', '$dir/busy.time' or die; print \$fh \$t1 - \$t0; close \$fh;
PERL
($attr, $incl, $excl) = profile_data($busy, 'busy-nostmts', 'stmts=0');
my $took = slurp_file("$dir/busy.time") // 0;
within $incl->{'main::busy'}, $took * 0.5, $took * 1.5 + 0.01,
    "stmts=0: a sub that calls nothing, $took s by the program's own clock: its inclusive time";
within $excl->{'main::busy'}, $took * 0.5, $took * 1.5 + 0.01, 'stmts=0: ... and its exclusive time';
within $incl->{'main::nap'}, 0.14, 0.5, 'stmts=0: a sub sleeping 150 ms: inclusive time about 0.15 s';

# Long enough (about half a second profiled) that a stall of the loaded
# machine before the first statement or after the last one, outside any
# statement, stays small beside the statements: 500,000 iterations ran
# in 60 ms once the profiler got faster, and a 15 ms stall failed it.
my $busy = write_script('busy.pl', <<'PERL');
my $s = 0;
for my $i (1 .. 4_000_000) { $s += $i; $s ^= 1 }
PERL
($attr) = profile_data($busy, 'busy');
my $active = $attr->{profiler_active};
my $stmts = $attr->{total_stmts_duration};
ok $active && $active > 0, 'busy loop: the profiler was active';
within $active ? $stmts / $active : undef, 0.85, 1.02,
    'busy loop: the statement times add up to the profiler-active time';
within $attr->{profiler_duration} ? $active / $attr->{profiler_duration} : undef, 0.05, 1,
    'busy loop: profiler-active time is part of the run time';

# A line whose statements follow one another (a one-line loop) is timed
# from the reading as it is entered to the one as it is left, not at each
# statement: all the time of its turns is its own, none is lost or given
# to the lines around it.
my $lines = write_script('one-line.pl', <<'PERL');
use Time::HiRes qw(sleep);
my $n = 0;
for my $i (1 .. 20) { $n++; sleep 0.01; $n-- }
for my $i (1 .. 20) { $n++; $n-- }
print "$n\n";
PERL
{
    local $ENV{NYTPROF} = "file=$dir/one-line.out";
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $lines], cwd => $dir);
    is $st, 0, 'one-line loops: profiled' or diag $err;
    (undef, $out) = run_cmd([$nytp, 'dump', '--data', "$dir/one-line.out"]);
    my %t = $out =~ /^fid_line_time\t1\t(\d+)\t\[ (\S+) \d+ \]$/mg;
    within $t{3}, 0.2, 0.8, 'one-line loop sleeping 20 x 10 ms: the line has about 0.2 s';
    within $t{4}, 0, 0.02, 'the one-line loop after it: next to nothing';
    within $t{2}, 0, 0.02, 'the line before it: next to nothing';
}

# The clock: the time-stamp counter where /proc/cpuinfo says it runs at a
# constant rate in every state (constant_tsc and nonstop_tsc), unless
# clock=N asks for a POSIX clock; clock_gettime otherwise.
sub clock_trace {
    my ($opts) = @_;
    local $ENV{NYTPROF} = "trace=1:file=$dir/trace.out" . ($opts ? ":$opts" : '');
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', '-e', '1'], cwd => $dir);
    my ($line) = $err =~ /^~ clock: (.*)$/m;
    return $line // "none ($err)";
}
my $stable = 0;
if (open my $ci, '<', '/proc/cpuinfo') {
    while (<$ci>) {
        next unless /^flags\s*:/;
        $stable = / constant_tsc\b/ && / nonstop_tsc\b/ ? 1 : 0;
        last;
    }
}
my $tsc = $stable && `uname -m` =~ /^(?:x86_64|i.86)$/;
like clock_trace(''), $tsc ? qr/^time-stamp counter at [\d.]+ MHz/ : qr/^clock_gettime\(1\)$/,
    'default clock: the time-stamp counter where the CPU says it is stable, else clock_gettime';
is clock_trace('clock=1'), 'clock_gettime(1)', 'clock=1: clock_gettime(CLOCK_MONOTONIC)';
is clock_trace('clock=0'), 'clock_gettime(0)', 'clock=0: clock_gettime(CLOCK_REALTIME)';

# Over more than a second (the counter's rate is measured again each
# second) and in a forked child, with each clock.
my $long = write_script('long.pl', <<'PERL');
sub snooze { select(undef, undef, undef, 0.1) for 1 .. 15 }
sub nap { select(undef, undef, undef, 0.2) }
snooze();
if (my $pid = fork) { waitpid $pid, 0 } else { nap(); exit 0 }
PERL
for my $clock ('', 'clock=1') {
    my $label = $clock || 'default clock';
    my $file = "$dir/long-" . ($clock ? 'c1' : 'dflt') . '.out';
    unlink $file, glob("$file.*");
    local $ENV{NYTPROF} = "file=$file" . ($clock ? ":$clock" : '');
    my ($st, $out, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $long], cwd => $dir);
    is $st, 0, "$label: long run profiled" or diag $err;
    my %d;
    for my $f ($file, glob("$file.*")) {
        my (undef, $o) = run_cmd([$nytp, 'dump', '--data', $f]);
        my %a = $o =~ /^attribute\t(\w+)\t(.*)$/mg;
        my %i = $o =~ /^sub_subinfo\t(\S+)\t\[ \S+ calls \d+ times (\S+) /mg;
        $d{ $f eq $file ? 'parent' : 'child' } = { attr => \%a, incl => \%i };
    }
    within $d{parent}{incl}{'main::snooze'}, 1.45, 3.5, "$label: a sub sleeping 1.5 s: about 1.5 s";
    my $a = $d{parent}{attr};
    within $a->{profiler_active} ? $a->{total_stmts_duration} / $a->{profiler_active} : undef, 0.85, 1.02,
        "$label: over 1.5 s the statement times add up to the profiler-active time";
    within $d{child}{incl}{'main::nap'}, 0.19, 0.8, "$label: in a forked child, a sub sleeping 0.2 s: about 0.2 s";
}

done_testing;
