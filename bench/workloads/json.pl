# JSON workload for bench_profiler: JSON::PP round trips of a nested
# structure (JSON::PP parses and writes with many small subs).
use strict;
use warnings;
use JSON::PP;

my $doc = {
    name => "bench \x{263a} doc",
    version => 3,
    tags => [qw(alpha beta gamma delta)],
    items => [
        map {
            {   id => $_,
                label => "item number $_ with \"quotes\" and \\slashes",
                price => $_ * 1.25,
                active => ($_ % 2 ? JSON::PP::true : JSON::PP::false),
                dims => [$_, $_ * 2, $_ * 3],
                owner => { name => "owner$_", email => "o$_\@example.org", roles => ['r1', 'r2'] },
                notes => undef,
            }
        } 1 .. 40
    ],
};

# NYTP_BENCH_SCALE=N (bench/run instructions) does about 1/N of the rounds
my $scale = $ENV{NYTP_BENCH_SCALE} || 1;
my $js = JSON::PP->new->canonical;
my $n = 0;
for (1 .. int(60 / $scale)) {
    my $text = $js->encode($doc);
    my $back = $js->decode($text);
    $n += length($text) + scalar @{ $back->{items} };
}
print "$n\n";
