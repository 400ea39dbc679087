# String evals in a loop (same source and changing source), nested evals,
# an anon sub defined inside an eval, and a named sub defined by an eval.
my $t = 0;
for my $i (1 .. 5) {
    eval 'my $s = 0; $s += $_ for 1 .. 10; $t += $s';
    eval "\$t += $i";
}
eval q{ eval q{ eval q{ $t++ } } };
my $f = eval 'sub { $_[0] * 2 }';
$t = $f->($t) for 1 .. 3;
eval 'sub made_in_eval { return 42 } 1';
$t += made_in_eval();
print "t=$t\n";
