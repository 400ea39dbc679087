# Corners not covered elsewhere: __SUB__ recursion, redo, signatures,
# sort with a code ref and a named sub, sort inside sort, __WARN__ and
# __DIE__ handlers run from inside subs, a CORE::GLOBAL override, a
# sub called from a tied scalar's FETCH inside a sort block, and a
# recursion through a string eval.
use strict;
use warnings;
use feature qw(current_sub signatures say);
no warnings qw(experimental::signatures);

BEGIN { *CORE::GLOBAL::sleep = sub { return main::fake_sleep(@_) } }
sub fake_sleep { my $n = shift; return $n * 2 }

my $fact = sub ($n) { return $n <= 1 ? 1 : $n * __SUB__->($n - 1) };
my $f = 0;
$f += $fact->($_) for 1 .. 8;

my $tries = 0;
for my $i (1 .. 5) {
    $tries++;
    redo if $tries % 3 == 0 && $tries < 12;
    $f += $i;
}

sub add ($x, $y = 10, @rest) { return $x + $y + @rest }
$f += add(1); $f += add(1, 2); $f += add(1, 2, 3, 4);

sub by_len { length($a) <=> length($b) or $a cmp $b }
my $cmp = sub { $b <=> $a };
my @words = sort by_len qw(pear fig banana kiwi apple);
my @nums = sort $cmp 5, 3, 9, 1;
my @nested = sort { my @in = sort { $a <=> $b } ($a, $b); $in[0] == $a ? -1 : 1 } 4, 2, 8, 6;

my @warned;
local $SIG{__WARN__} = sub { push @warned, note_warning($_[0]) };
sub note_warning { my $w = shift; chomp $w; return length $w }
sub warns { warn "careful $_[0]\n" for 1 .. 2 }
warns($_) for 1 .. 3;

my $died = 0;
{
    local $SIG{__DIE__} = sub { $died += die_seen(@_) };
    sub die_seen { return 1 }
    eval { inner_die() } for 1 .. 4;
}
sub inner_die { die "oops\n" }

package Counter {
    sub TIESCALAR { my $n = 0; return bless \$n, shift }
    sub FETCH { my $s = shift; return main::bump($s) }
}
sub bump { my $s = shift; return ++$$s }
tie my $t, 'Counter';
my @tied = sort { my $u = $t; $a <=> $b } 3, 1, 2;

my $slept = sleep(3) + sleep(4);

sub via_eval { my $n = shift; return $n ? eval "via_eval($n - 1) + 1" : 0 }
my $ev = via_eval(5);

say join ' ', $f, "@words", "@nums", "@nested", scalar(@warned), $died, "@tied", $slept, $ev;
