# Call-heavy CPU workload for bench_profiler: small subs, recursion, method
# calls and closures (most time goes to the sub profiler).
package Point;
sub new { my ($c, $x, $y) = @_; return bless { x => $x, y => $y }, $c }
sub x { $_[0]{x} }
sub y { $_[0]{y} }
sub dist2 { my ($p, $q) = @_; my $dx = $p->x - $q->x; my $dy = $p->y - $q->y; return $dx * $dx + $dy * $dy }
package main;
# NYTP_BENCH_SCALE=N (bench/run instructions) does about 1/N of the work
my $scale = $ENV{NYTP_BENCH_SCALE} || 1;
sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2) }
my $total = fib(28 - int(log($scale) / log(1.618) + 0.5));
my @pts = map { Point->new($_ % 17, $_ % 13) } 1 .. 300;
for my $i (0 .. $#pts - 1) {
    $total += $pts[$i]->dist2($pts[$i + 1]) for 1 .. int(600 / $scale);
}
my $add = sub { $_[0] + $_[1] };
$total = $add->($total, $_) for 1 .. int(2_000_000 / $scale);
print "$total\n";
