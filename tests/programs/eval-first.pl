# Profiling starts (start=no) inside a string eval, so the eval's file id
# is made before that of the file it ran in, and that file is first
# named inside the eval's name ("(eval 1)[eval-first.pl:9]", a relative
# name when the program is run as such).  Then a fork, whose child's
# file repeats every file id in its header, as each later segment does
# with rotate=: the runs of the test make both.
use Time::HiRes qw(time);
my $started;
sub ev { return eval 'DB::enable_profile() unless $started++; 1 + 1' }
my $v = ev();
my $end = time + ($ENV{EVAL_FIRST_SECONDS} || 0);
ev() while time < $end;
my $pid = fork;
if (!$pid) { ev(); exit 0 }
waitpid $pid, 0;
print "v=$v\n";
