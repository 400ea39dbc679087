#!/usr/bin/perl
# evals.pl - string evals: in a loop (same source and different source),
# nested evals, an eval defining a sub, and an eval that dies.
use strict;
use warnings;

my $total = 0;
for my $i (1 .. 3) {
    $total += eval '$i * 2';          # same source each time
}
for my $i (1 .. 3) {
    $total += eval "$i + 100";        # different source each time
}
print "total = $total\n";

# Nested: an eval whose code runs another eval.
my $nested = eval q{
    my $x = 5;
    eval q{ my $y = $x * 3;
            eval '$y + 1' }
};
print "nested = $nested\n";

# An eval that defines a sub, then calling it.
eval 'sub from_eval { return "defined in an eval: @_" } 1' or die $@;
print from_eval(42), "\n";

# An eval that dies.
my $ok = eval 'die "oops\n"; 1';
print "died: $@" unless $ok;
