#!/usr/bin/perl
# demo.pl - a small text-processing program to profile with nytp.
use strict;
use warnings;

my $text = <<'TEXT';
The quick brown fox jumps over the lazy dog.
The dog sleeps; the fox runs over the hill and far away.
A lazy afternoon, a quick fox, a sleepy dog.
TEXT

# Word counts, with a regex to split the text into words.
sub count_words {
    my ($str) = @_;
    my %count;
    $count{ lc $1 }++ while $str =~ /(\w+)/g;
    return \%count;
}

# A recursive function.
sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2) }

# A closure that remembers how often it was called.
sub make_counter { my $n = 0; return sub { return ++$n } }

my $count = count_words($text);
# Sort by count (descending), then alphabetically.
my @top = sort { $count->{$b} <=> $count->{$a} or $a cmp $b } keys %$count;
printf "%-10s %d\n", $_, $count->{$_} for @top[0 .. 4];

my $next = make_counter();
$next->() for 1 .. 3;
print "counter: ", $next->(), "\n";

print "fib(12) = ", fib(12), "\n";

my $sum = eval "join '+', 1 .. 5";
print "eval: $sum = ", eval($sum), "\n";
