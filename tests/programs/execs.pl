# exec replaces the process: the profile is finished just before it.
sub work { my $s = 0; $s += $_ for 1 .. shift; return $s }
my $r = work(500);
$| = 1;
print "r=$r\n";
exec $^X, '-e', 'print "exec done\n"; exit 4';
die "exec failed: $!";
