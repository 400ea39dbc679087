# Deep recursion (2,000 levels) and mutual recursion.
no warnings 'recursion';
sub down { my $n = shift; return $n == 0 ? 0 : 1 + down($n - 1) }
sub is_even { my $n = shift; $n == 0 ? 1 : is_odd($n - 1) }
sub is_odd { my $n = shift; $n == 0 ? 0 : is_even($n - 1) }
my $d = down(2000);
my $e = is_even(301);
print "$d $e\n";
