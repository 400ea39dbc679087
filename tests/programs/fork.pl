# A forked child: each process writes its own profile (the child's file
# name gets ".PID").
sub work { my $n = 0; $n += $_ for 1 .. shift; return $n }
my $pid = fork;
die "fork: $!" unless defined $pid;
if ($pid == 0) {
    work(5000) for 1 .. 3;
    exit 0;
}
work(100);
waitpid $pid, 0;
print "parent done\n";
