# Xsub- and I/O-heavy workload for bench/run instructions (INSTR_PROGRAMS=
# xsubs): two xsub calls (Scalar::Util) and a print a round, the ops that
# sampling times to find waits (issue 35's loop of 200,000 rounds at
# NYTP_BENCH_SCALE=10).
use strict;
use warnings;
use Scalar::Util qw(blessed reftype);
my $scale = $ENV{NYTP_BENCH_SCALE} || 1;
my $o = bless {}, 'X';
open my $fh, '>', '/dev/null' or die "/dev/null: $!";
for my $i (1 .. int(2_000_000 / $scale)) {
    my $b = blessed($o);
    my $r = reftype($o);
    print $fh $b;
}
close $fh;
print "done\n";
