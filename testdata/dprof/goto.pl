# goto &sub for Devel::DProf: each jumper does some work, then replaces
# itself with its target; targets are reached only through goto.
use strict;
use warnings;

sub spin { my $n = shift; my $x = 0; $x += $_ for 1 .. 8 * $n; return $x }

sub target  { spin(30000); return 1 }
sub jumper  { spin(10000); goto &target }
sub landing { spin(20000); return 2 }
sub bounce  { spin(50000); goto &landing }
sub outer   { jumper(); bounce(); spin(5000); return 3 }

for (1 .. 40) { outer(); jumper() }
