#!/usr/bin/perl
# recursion.pl - direct and mutual recursion, so call arcs carry
# recursive time (reci) and a recursion depth (rec_depth).
use strict;
use warnings;

sub fact { my $n = shift; return $n <= 1 ? 1 : $n * fact($n - 1) }

sub ackermann {
    my ($m, $n) = @_;
    return $n + 1 if $m == 0;
    return ackermann($m - 1, 1) if $n == 0;
    return ackermann($m - 1, ackermann($m, $n - 1));
}

# Mutual recursion.
sub is_even { my $n = shift; return $n == 0 ? 1 : is_odd($n - 1) }
sub is_odd  { my $n = shift; return $n == 0 ? 0 : is_even($n - 1) }

# Tree walk.
sub depth {
    my $t = shift;
    return 0 unless ref $t;
    my ($l, $r) = map { depth($_) } @$t;
    return 1 + ($l > $r ? $l : $r);
}

print "fact(10) = ", fact(10), "\n";
print "ackermann(2, 3) = ", ackermann(2, 3), "\n";
print "is_even(25) = ", is_even(25), "\n";
print "depth = ", depth([[1, [2, [3, 4]]], [5, 6]]), "\n";
