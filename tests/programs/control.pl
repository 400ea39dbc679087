# Run-time control: a section with the profiler disabled, then enabled
# again; subs left by last/next; sort with a named sub; exit inside a sub.
sub add { return $_[0] + $_[1] }
my $t = 0;
$t = add($t, $_) for 1 .. 10;
DB::disable_profile();
$t = add($t, $_) for 1 .. 100;
DB::enable_profile();
$t = add($t, 1) for 1 .. 3;
sub by_num { $a <=> $b }
my @s = sort by_num reverse 1 .. 20;
no warnings 'exiting';
sub leave_loop { last }
sub skip_item { next }
for my $i (1 .. 4) { leave_loop() if $i == 3; $t++ }
for my $i (1 .. 4) { skip_item() if $i % 2; $t++ }
sub finish { print "t=$t @s[0,1]\n"; exit 0 }
END { $t++ }
finish();
print "not reached\n";
