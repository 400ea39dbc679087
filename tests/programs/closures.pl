# Closures and anon subs, recursion, goto &sub, AUTOLOAD, die caught by eval.
sub make_counter { my $n = shift; return sub { return $n++ } }
my @c = map { make_counter($_) } 1 .. 4;
my $sum = 0;
for (1 .. 10) { $sum += $_->() for @c }
sub fib { my $n = shift; $n < 2 ? $n : fib($n - 1) + fib($n - 2) }
$sum += fib(12);
sub real_work { return scalar @_ }
sub trampoline { goto &real_work }
$sum += trampoline(1, 2, 3) for 1 .. 5;
our $AUTOLOAD;
sub AUTOLOAD { my $name = $AUTOLOAD; $name =~ s/.*:://; return length $name }
$sum += not_defined_anywhere() + another_missing_one();
sub dies { die "no\n" }
for (1 .. 3) { eval { dies() } }
print "sum=$sum\n";
