# The profiler's caches (a sub's node by its glob's address, a slow op's
# node by its package and op, a sub's last call arc, the call site's file
# by address) against what perl does to globs and subs: globs deleted
# and made again under other names, subs redefined by string evals in a
# loop, lexical subs, method calls, xsubs among perl subs, die through
# frames, recursion, one sub called from alternating sites and callers,
# one slow op from many packages.  Every cached answer that outlived its
# glob or arc, or answered for another key, would name the wrong sub or
# site here, so the profile would differ from Devel::NYTProf's.
# (Packages deleted under their subs are in stashes.pl: Devel::NYTProf
# crashes on those.)
use strict;
use warnings;
no warnings qw(redefine once);
use List::Util qw(sum max);
use Scalar::Util qw(blessed reftype);

# Globs deleted and made again under other names: perl hands the freed
# glob's memory to the next glob made, so a cache by address alone would
# give the new name the old one's node.
for my $round (1 .. 3) {
    for my $i (1 .. 5) {
        eval "sub Gen::s${round}_$i { return $i * $round } 1" or die $@;
    }
    my $t = 0;
    $t += Gen->can("s${round}_$_")->() for 1 .. 5;
    delete $Gen::{"s${round}_$_"} for 1 .. 5;
}

# One name redefined by string eval, called between redefinitions.
for my $v (1 .. 4) {
    eval "sub Redef::value { return $v } 1" or die $@;
    Redef::value() for 1 .. $v;
}

# Lexical subs (no glob until perl makes one for the name).
{
    my sub lex { return $_[0] + 1 }
    my $x = 0;
    $x = lex($x) for 1 .. 3;
    state_user() for 1 .. 2;
}
use feature 'state';
sub state_user { state $n = 0; return ++$n }

# Methods (the code value on the stack), through a base class and can().
package Base;
sub new { return bless {v => $_[1]}, $_[0] }
sub v { $_[0]{v} }
sub twice { my $s = shift; return $s->v * 2 }
package Derived;
our @ISA = ('Base');
sub v { my $s = shift; return $s->SUPER::v() + 1 }
package main;
my @objs = map { ($_ % 2 ? 'Base' : 'Derived')->new($_) } 1 .. 6;
my $sum = 0;
$sum += $_->twice for @objs;
my $m = Derived->can('twice');
$sum += $objs[1]->$m();

# xsubs among perl subs, at the same sites.
sub mix { return sum(@_) + max(@_) + (blessed($objs[0]) ? 1 : 0) + length(reftype($objs[0])) }
mix(1 .. $_) for 1 .. 4;

# die through frames, caught at different depths, then the same subs
# called normally: the arcs of the unwound calls are still right.
sub inner { my $n = shift; die "deep\n" if $n == 0; return inner($n - 1) }
sub middle { return inner($_[0]) }
for my $d (0 .. 3) {
    eval { middle($d) };
    eval { inner($d) };
}
sub safe { return 1 }
safe() for 1 .. 3;

# Recursion through two subs, and one sub called from alternating callers
# and lines: the last-arc cache must not answer for the other site.
sub ping { my $n = shift; return $n ? pong($n - 1) : 0 }
sub pong { my $n = shift; return $n ? ping($n - 1) : 1 }
ping(7);
sub leaf { return 1 }
sub caller_a { leaf(); leaf() }
sub caller_b { leaf() }
for (1 .. 3) {
    caller_a();
    caller_b();
    leaf();
}

# Anonymous subs, a sub reference called with &, a glob assigned.
my @anon = map { my $k = $_; sub { return $k } } 1 .. 3;
$_->() for @anon;
&{ $anon[0] }();
*Alias::leaf = \&leaf;
Alias::leaf();
*leaf2 = sub { leaf() };
leaf2();

# One slow op (a match) from 1,500 packages: more than the slow-op memo
# has slots, so packages share slots and each must be told apart.
for my $i (1 .. 1500) {
    eval "package Many$i; sub m { return \$_[0] =~ /x$i/ } 1" or die $@;
    "Many$i"->can('m')->("ax${i}b");
}

# A goto into another sub, from two places.
sub target { return 'target' }
sub jump { goto &target }
jump();
sub jump2 { goto &target }
jump2();
# A call from the main program three loops deep, then one from a loop in
# a sub called by a sub: the same depth of the context stack and the
# same kind of loop on top.  With findcaller=1 both calls find their
# caller by the context stack, which the second must not take from the
# first's (the main program).
for my $i (1 .. 2) {
    for my $j (1 .. 2) {
        for my $k (1 .. 2) { leaf() }
    }
}
sub looper { for my $k (1 .. 2) { leaf() } }
sub outer { looper() }
outer();
# Calls and a slow op from the replacement of s///e in the main program:
# the context on top is then a substitution's, which has no statement
# (the memo of the main program's caller read one from it and crashed).
my $text = "abcbd";
$text =~ s/b/leaf() . uc($&) . sprintf("%s", $&)/ge;
print "done\n";
