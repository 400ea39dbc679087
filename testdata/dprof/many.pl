# Many subs in several packages (defined by string eval), calling each
# other in a fixed pattern, and anonymous subs, for Devel::DProf.
use strict;
use warnings;

sub spin { my $n = shift; my $x = 0; $x += $_ for 1 .. 8 * $n; return $x }

for my $p (1 .. 5) {
    for my $i (1 .. 30) {
        my $next = $i < 30 ? "Pkg$p\::s" . ($i + 1) . "(\$_[0] - 1) if \$_[0] > 0;" : '';
        eval "package Pkg$p; sub s$i { main::spin(200 * $i); $next return $i }; 1" or die $@;
    }
}
my @anon = map { my $k = $_; sub { spin(1000 * $k) } } 1 .. 5;

for my $round (1 .. 20) {
    for my $p (1 .. 5) {
        no strict 'refs';
        &{"Pkg$p\::s1"}($round % 30);
        &{"Pkg$p\::s" . (1 + $round % 30)}(3);
    }
    $_->() for @anon;
}
