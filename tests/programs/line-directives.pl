# Code compiled under '#line' directives: a name in the style of
# Class::MOP's generated methods ('... defined at FILE'), and plain
# file-name changes.
my $gen = eval qq{#line 1 "accessor foo defined at $0"\nsub { \$_[0] + 1 }} or die $@;
my $n = 0;
$n = $gen->($n) for 1 .. 4;
eval qq{#line 10 "virtual-file.pl"\nsub virt { return 2 * shift }\n1} or die $@;
$n += virt($_) for 1 .. 3;
# line 100 "renamed.pl"
$n++;
print "$n\n";
