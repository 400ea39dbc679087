# Killed by a signal: with sigexit the profile is still complete.
sub work { my $s = 0; $s += $_ for 1 .. shift; return $s }
my $r = work(300);
print "r=$r\n";
kill 'TERM', $$;
sleep 5;
print "not reached\n";
