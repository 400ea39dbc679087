# Unwinding and unusual returns: lvalue subs, formats (write), die inside an
# xsub's callback and inside sort blocks, return from inside eval {},
# die 50 calls deep, a string eval that does not compile.
my $val = 0;
sub lv :lvalue { $val }
lv() = 5 for 1 .. 3;
our ($name, $n);
format STDOUT =
@<<<<<<<< @>>>>
$name,    $n
.
for (1 .. 3) { ($name, $n) = ("row$_", $_ * $val); write }
use List::Util qw(first);
my $r = eval { first { die "inner\n" if $_ == 3; 0 } 1 .. 5 };
my $e = eval "1 +* 2";
sub ret_in_eval { eval { return 7 }; return 8 }
my $x = ret_in_eval() for 1 .. 2;
sub rec_die { my $k = shift; die "deep\n" if $k == 0; rec_die($k - 1) }
eval { rec_die(50) };
my @s = sort { $a <=> $b or die "never" } (3, 1, 2);
eval { my @t = sort { die "in sort\n" } (1, 2) };
print "$val $@\n";
