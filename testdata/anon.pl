#!/usr/bin/perl
# anon.pl - anonymous subs and closures.
use strict;
use warnings;

# A closure factory: each adder remembers its own $n.
sub make_adder { my $n = shift; return sub { return $_[0] + $n } }
my @adders = map { make_adder($_) } 1 .. 3;
print join(' ', map { $_->(10) } @adders), "\n";

# A dispatch table of anon subs.
my %op = (
    add => sub { $_[0] + $_[1] },
    mul => sub { $_[0] * $_[1] },
    neg => sub { -$_[0] },
);
print "$_: ", $op{$_}->(6, 7), "\n" for sort keys %op;

# An anon sub calling another anon sub, and a recursive anon sub.
my $twice = sub { my $f = shift; return sub { $f->($f->(@_)) } };
print "twice add3: ", $twice->($adders[2])->(1), "\n";
my $countdown;
$countdown = sub { my $n = shift; return $n <= 0 ? 'liftoff' : $countdown->($n - 1) };
print $countdown->(5), "\n";

# A named closure over a lexical, and a sort with an anon comparator.
{
    my $calls = 0;
    sub counted { return ++$calls }
}
counted() for 1 .. 4;
my $by_len = sub { length($a) <=> length($b) or $a cmp $b };
print join(',', sort $by_len qw(pear fig banana kiwi)), " after ", counted(), "\n";
