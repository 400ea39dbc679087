# Run by spawns-perl.pl.
sub cwork { my $s = 0; $s += $_ for 1 .. 1000; $s }
cwork() for 1 .. 5;
print "child done\n";
