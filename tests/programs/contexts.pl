# Calls made from the main program with each kind of context on top of
# perl's context stack, and from the other stacks perl runs code on: the
# profiler finds a call's caller from the context on top (a memo of the
# main program's caller is keyed by it), and each kind is laid out in its
# own way (a substitution's context has no statement at all).
use strict;
use warnings;
use feature qw(say defer);
no warnings 'experimental::defer';

sub f { return $_[0] // 1 }

my @s = sort { f($a) <=> f($b) } 3, 1, 2;                  # a sort block
local $SIG{USR1} = sub { f(2) };                            # a signal handler
kill 'USR1', $$;
package T { sub TIESCALAR { bless {}, shift } sub FETCH { main::f(3) } sub STORE { } }
tie my $t, 'T';
my $v = $t;                                                 # tie magic
package D { sub new { bless {}, shift } sub DESTROY { main::f(4) } }
{ my $d = D->new; }                                         # a destructor
package O { use overload '+' => sub { main::f(5) }, '""' => sub { 'o' }; sub new { bless {}, shift } }
my $o = O->new;
my $sum = $o + 1;                                           # overloading
eval 'f(6); my $x = "aa"; $x =~ s/a/f(7)/ge; 1' or die $@;   # s///e in a string eval
my $str = 'abab';
$str =~ s/(a)/f($1) . eval { f(8) }/ge;                     # eval {} inside s///e
$str =~ s/b/my $y = "q"; $y =~ s!q!f(9)!e; $y/ge;           # s///e inside s///e
{ defer { f(10) } f(11); }                                  # a defer block
for my $i (1 .. 2) { f($i) }
my $n = 0;
while ($n++ < 2) { f($n) }
{ f(12) }                                                   # a bare block
my @g = grep { f($_) } 1 .. 3;
my @m = map { f($_) } 1 .. 3;
eval { die f(14) };
f(15);                                                      # after a die
sub g { goto &f }
g(16);
for (1 .. 3) { my $w = 'ab'; $w =~ s/a/f(19)/ge; }          # s///e in a loop
my $q = 'z';
$q =~ s/z/join ',', sort { f($a) <=> f($b) } 2, 1/e;        # a sort in s///e
say "done $str $q";
