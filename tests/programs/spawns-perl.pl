# Runs another perl program (tests/programs/spawned.pl), which the
# profiler profiles too when -d:NYTP is in PERL5OPT, with the same
# NYTPROF and so the same profile file.
use FindBin;
sub pwork { my $s = 0; $s += $_ for 1 .. 100000; $s }
pwork();
system($^X, "$FindBin::Bin/spawned.pl") == 0 or die "spawned.pl failed";
pwork() for 1 .. 3;
print "parent done\n";
