#!/usr/bin/perl
# fork.pl - forks a child that does some work.  Under NYTProf the child
# writes its own profile, named like the parent's with ".PID" appended.
use strict;
use warnings;

sub work {
    my ($who, $n) = @_;
    my $sum = 0;
    $sum += $_ * $_ for 1 .. $n;
    return "$who: sum of squares 1..$n = $sum";
}

$| = 1;
my $before = work('parent', 10);
my $pid = fork();
die "fork failed: $!\n" unless defined $pid;
if ($pid == 0) {
    print work('child', 100), "\n";
    exit 0;
}
waitpid($pid, 0);
print "child exited with status ", $? >> 8, "\n";
print $before, "\n";
print work('parent', 20), "\n";
