# Recursion 10,000 levels deep, then a loop of shallow calls.
no warnings 'recursion';
sub down { my $n = shift; return $n == 0 ? 0 : 1 + down($n - 1) }
my $d = down(10_000);
my $s = 0;
$s += down(3) for 1 .. 50;
print "$d $s\n";
