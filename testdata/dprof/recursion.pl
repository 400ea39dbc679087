# Recursion for Devel::DProf: direct (fact, fib), mutual (is_even/is_odd),
# and a sub that recurses through another (walk -> visit -> walk).
use strict;
use warnings;

sub spin { my $n = shift; my $x = 0; $x += $_ for 1 .. 8 * $n; return $x }

sub fact { my $n = shift; spin(3000); return $n <= 1 ? 1 : $n * fact($n - 1) }
sub fib  { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2) }

sub is_even { my $n = shift; return $n == 0 ? 1 : is_odd($n - 1) }
sub is_odd  { my $n = shift; spin(2000); return $n == 0 ? 0 : is_even($n - 1) }

sub walk  { my $t = shift; spin(5000); visit($_) for @{ $t->{kids} }; return }
sub visit { my $t = shift; return walk($t) }

sub tree { my $d = shift; return { kids => $d ? [ map { tree($d - 1) } 1 .. 3 ] : [] } }

for (1 .. 30) { fact(12) }
fib(18);
is_even(40) for 1 .. 10;
walk(tree(4));
spin(400_000);
