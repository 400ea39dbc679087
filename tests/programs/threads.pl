# Threads: only the main interpreter is profiled; the threads run unprofiled.
use threads;
sub work { my $s = 0; $s += $_ for 1 .. shift; $s }
my @t = map { threads->create(\&work, 1000 * $_) } 1 .. 3;
my $sum = 0; $sum += $_->join for @t;
$sum += work(10);
print "$sum\n";
