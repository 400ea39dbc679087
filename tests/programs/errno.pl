# errno ($!) as a failed system call left it, looked at after every kind of
# profiler event: a statement, a call and its return, a block left, enough
# statements to hand the profile's buffer on, a slow op, deep recursion.
use Errno qw(ENOENT);
sub look { return $! + 0 }
sub deep { my $n = shift; return $n ? deep($n - 1) : $! + 0 }
my @seen;
open(my $fh, '<', '/nonexistent/nytp-errno') and die "opened?";
push @seen, $! + 0;
push @seen, look();
{ my $x = 1 }
push @seen, $! + 0;
my $i = 0;
$i++ for 1 .. 300000;
push @seen, $! + 0;
my @sorted = sort { $a <=> $b } 3, 2, 1;
push @seen, $! + 0;
push @seen, deep(3000);
print join(' ', map { $_ == ENOENT ? 'ok' : "errno=$_" } @seen), "\n";
