#!/usr/bin/perl
# The profiler's own files: the names it makes (segments, children) never
# collide, never lead through a planted link, FIFO or device, never block,
# fit in NAME_MAX; a child whose profile cannot be made runs on; a failed
# exec is said; stale temporaries of dead processes are removed.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use POSIX ();
use Time::HiRes qw(time sleep);

my $nytp = nytp();
my $dir = scratch_dir();
delete $ENV{NYTPROF};
my @perl = ($^X, '-I' . repo() . '/build/perl', '-d:NYTP');

# Each profile FILE* in the directory: its writer's pid and its segment.
sub writers {
    my ($file) = @_;
    my %w;
    for my $f (glob "$file*") {
        my ($st, $d, $err) = run_cmd([$nytp, 'dump', '--strict', $f]);
        my ($pid) = $d =~ /^PID_START\t(\d+)\t/m;
        my ($seg) = $d =~ /^ATTRIBUTE\tsegment\t(\d+)$/m;
        $w{$f} = { ok => !$st, pid => $pid // 0, seg => $seg // 0, err => $err };
    }
    return \%w;
}

# 7. Segment and child names collide: in a pid namespace the pids are
# small, as in every container: the parent (pid 1) writes its segments
# FILE, FILE.1, ... while its children (a few pids on: the profiler's own
# threads take some) write FILE.PID.  The first child starts before the
# parent's segment of its number, the second after the parent's segment
# of its number has closed.
SKIP: {
    my $ok = system('unshare --pid --fork true 2>/dev/null') == 0;
    skip 'no pid namespace here (unshare --pid needs root or user namespaces)', 1 unless $ok;
    my $ns = scratch_script('ns.pl', <<'PERL');
use Time::HiRes qw(time sleep);
sub busy {
    my $end = time + $_[0];
    my $n = 0;
    while (time < $end) { # two lines: rotating at a line's change
        $n++;
        $n += 0;
    }
    $n;
}
busy(0.05);
my @kids;
for my $at (0.4, 0) {
    my $pid = fork // die;
    if (!$pid) { busy(0.5); exit 0 }
    push @kids, $pid;
    busy($at);
}
busy(0.6);
waitpid $_, 0 for @kids;
print "@kids\n";
PERL
    for my $mode (['traced', ''], ['sampled', 'sample=1000:']) {
        my ($what, $opt) = @$mode;
        my $file = "$dir/ns-$what.out";
        unlink glob "$file*";
        local $ENV{NYTPROF} = "${opt}rotate=0.1:file=$file";
        my ($st, $out, $err) = run_cmd(['unshare', '--pid', '--fork', @perl, $ns]);
        is $st, 0, "pid namespace, $what: ran" or diag $err;
        my @kids = split ' ', $out;
        is scalar(@kids), 2, "pid namespace, $what: two children (@kids)";
        delete local $ENV{NYTPROF};
        my $w = writers($file);
        my %segs;
        for my $f (sort keys %$w) {
            ok $w->{$f}{ok}, "pid namespace, $what: $f is complete" or diag $w->{$f}{err};
            push @{$segs{$w->{$f}{pid}}}, $w->{$f}{seg};
        }
        my $nparent = @{$segs{1} // []};
        ok grep({ $_ < $nparent } @kids),
            "pid namespace, $what: a child's pid (@kids) is among the parent's $nparent segment numbers";
        for my $pid (1, @kids) {
            my @s = sort { $a <=> $b } @{$segs{$pid} // []};
            ok @s >= ($pid == 1 ? 8 : 4) && "@s" eq join(' ', 0 .. $#s),
                "pid namespace, $what: process $pid has all its segments (@s)";
        }
    }
}

done_testing;
