# Statements that follow another on the same line: the profiler reads the
# clock once for the line, not once per statement, so every construct
# that runs several statements of one line in a row is here, with calls
# between them (the called sub's first statement on the caller's line
# too), loops whose every turn stays on one line, and blocks run by
# builtins.  Counts must match Devel::NYTProf's.
use strict;
use warnings;
my ($s, $t) = (0, 0);
for my $i (1 .. 50) { $s += $i; $t ^= $s; next if $i % 3; $t++ }
my $i = 0; while ($i < 20) { $i++; last if $i > 15; $s-- }
sub one { my $x = shift; return $x + 1 } $s = one($s); $s = one(one($s));
sub rec { my $n = shift; return $n < 2 ? $n : rec($n - 1) + rec($n - 2) } $t += rec(8);
my @m = map { my $y = $_ * 2; $y + 1 } 1 .. 10; my @o = sort { my $d = $a <=> $b; $d } @m;
my $e = eval { $s++; die "x\n" if $s < 0; $s }; $t += $e;
my $f = eval { $s++; die "caught\n"; 1 }; $t++;
$s = do { my $z = 1; $z + $s }; { my $w = 2; $s += $w }
sub via { goto &one } $s = via($s); $s = via($s);
my $code = sub { my $q = shift; $q * 2 }; $s = $code->($s) for 1 .. 5; $t++;
my $ev = eval 'my $p = 1; $p += 1; for (1 .. 3) { $p++; $p-- } $p'; $t += $ev;
for my $j (1 .. 3) { for my $k (1 .. 4) { $s++; $t++ } $s-- }
$s += length(join ',', grep { my $g = $_; $g % 2 } 1 .. 9); $t++;
sub empty {} empty(); empty() for 1 .. 3; $t++;
print "$s $t @o[0,1]\n";
