# The program dies from inside nested subs: the profile is still complete.
sub inner { my $x = shift; die "gave up at $x\n" if $x > 3; return inner($x + 1) }
sub outer { return inner(@_) }
my $n = 0;
$n += $_ for 1 .. 100;
eval { outer(0) };
print "caught: $@";
outer(1);
print "not reached\n";
