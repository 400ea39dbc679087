# die inside subs, caught by eval at several depths, for Devel::DProf.
use strict;
use warnings;

sub spin { my $n = shift; my $x = 0; $x += $_ for 1 .. 8 * $n; return $x }

sub thrower { spin(20000); die "thrown\n" if $_[0]; return 1 }
sub middle  { spin(10000); thrower(@_); spin(10000); return 2 }
sub top     { spin(10000); return middle(@_) }
sub catcher { my $ok = eval { top(1); 1 }; spin(5000); return $ok }
sub deep    { my $n = shift; return $n ? deep($n - 1) : thrower(1) }

for my $i (1 .. 40) {
    eval { top($i % 2) };
    catcher();
    eval { deep(5) };
}
top(0);
