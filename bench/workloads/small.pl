# A small program for `bench/run merge1000`, run once per input number
# (the argument): the number changes how much work each part does, which
# modules it loads and which string evals it runs, so the profiles of
# different runs differ in lines, subs, call counts and files.
use strict;
use warnings;

my $n = shift // 1;
sub fib { my $k = shift; return $k < 2 ? $k : fib($k - 1) + fib($k - 2) }
sub words {
    my %count;
    $count{$_}++ for map { lc } split /\W+/, shift;
    return join ',', map {"$_=$count{$_}"} sort keys %count;
}
my $text = join ' ', map { ('alpha', 'beta', 'gamma', 'delta')[($_ * $n) % 4] . ($_ % 7) } 1 .. 50 + $n % 200;
my $total = fib(10 + $n % 8);
$total += length words($text);
if ($n % 3 == 0) {
    require List::Util;
    $total += List::Util::sum(map { $_ * $n } 1 .. 100);
} elsif ($n % 3 == 1) {
    require Text::Wrap;
    $total += length Text::Wrap::wrap('', '  ', $text);
} else {
    require Data::Dumper;
    no warnings 'once';
    local $Data::Dumper::Sortkeys = 1;
    $total += length Data::Dumper::Dumper({ map { $_ => $_ * $n } 1 .. 20 });
}
$total += eval "$n * 2 + " . ($n % 5) for 1 .. $n % 4;
my @sorted = sort { $a <=> $b } map { ($_ * 7919 + $n) % 1000 } 1 .. 300 + $n % 500;
print "$total $sorted[0]\n";
