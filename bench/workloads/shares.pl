# Known shares of the wall time for the accuracy of sampling (bench_sampling,
# tests/43-sample.t): fifty, thirty and twenty spin on the wall clock for
# 50, 30 and 20 % of every 30 ms, for SECONDS (the argument, default 2).  A
# loaded machine stretches the calls, so the program measures the wall time
# each really took and prints the shares it saw: "NAME PERCENT" lines, the
# truth the samples are held to.
use strict;
use Time::HiRes qw(time);
my %spent;
sub spin { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n }
sub fifty  { spin($_[0] * 0.5) }
sub thirty { spin($_[0] * 0.3) }
sub twenty { spin($_[0] * 0.2) }
my $t0 = time;
while (time - $t0 < ($ARGV[0] // 2)) {
    for my $s ([fifty => \&fifty], [thirty => \&thirty], [twenty => \&twenty]) {
        my $t = time;
        $s->[1]->(0.03);
        $spent{$s->[0]} += time - $t;
    }
}
my $all = 0;
$all += $_ for values %spent;
printf "%s %.4f\n", $_, 100 * $spent{$_} / $all for sort keys %spent;
