# Profiling starts late (start=no) and moves to a second file.
sub work { my $s = 0; $s += $_ for 1 .. shift; return $s }
work(10);
DB::enable_profile();
work(20) for 1 .. 2;
DB::enable_profile("$ENV{NYTP_SECOND_FILE}");
work(30) for 1 .. 3;
DB::finish_profile();
work(40);
