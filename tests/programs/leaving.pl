# Calls left in every way but a return: last, next and goto LABEL out of a
# sub, a die caught by an eval block, a string eval and try/catch, a die in
# DESTROY (perl catches it), a die in a signal handler, a sort sub and a
# sort block, a sort sub that returns, List::Util's callbacks that
# call subs (and return); after each, calls whose caller must be right.
use strict;
no warnings;
use feature 'try';
sub leaf { return $_[0] + 1 }
sub quit_loop { leaf(1); last }
sub skip_rest { leaf(2); next }
sub jump_out { leaf(3); goto DONE }
my $t = 0;
for my $i (1 .. 3) { quit_loop(); $t++ }
for my $i (1 .. 3) { skip_rest() if $i == 2; $t += leaf($i) }
for my $i (1 .. 2) { jump_out(); DONE: $t += leaf($i) }
sub thrower { leaf(4); die "thrown\n" }
sub middle { thrower(); leaf(5) }
eval { middle() } for 1 .. 3;
$t += leaf(6);
eval q{ middle(); 1 };
try { middle() } catch ($e) { $t += leaf(7) }
package Bomb { sub new { bless {}, shift } sub DESTROY { main::leaf(8); die "in DESTROY\n" } }
sub scoped { my $b = Bomb->new; leaf(9); return 1 }
scoped() for 1 .. 2;
$t += leaf(10);
$SIG{USR1} = sub { leaf(11); die "by signal\n" };
eval { kill 'USR1', $$; leaf(12) for 1 .. 1000; 1 };
$t += leaf(13);
sub by_num { leaf(14); $a <=> $b }
my @s = sort by_num 3, 1, 2;
sub by_ret { leaf(17); return $a <=> $b }
@s = sort by_ret @s;
use List::Util qw(first reduce);
my $f = first { leaf(18); return $_ > 1 } @s;
my $r = reduce { leaf(19); $a + $b } @s;
@s = sort { leaf(15); $b <=> $a } @s;
eval { my @u = sort { thrower() } 1, 2 };
sub deeper { my $k = shift; return $k ? deeper($k - 1) : leaf(16) }
$t += deeper(5);
print "$t @s\n";
