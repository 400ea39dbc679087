# Odd corners: goto &xsub, &$code, DESTROY, require and do FILE at run
# time, a regex code block, a __DIE__ handler, a sub defined by a string
# eval, wantarray, prototype-less recursion through a hash of code refs,
# sprintf/sort/reverse builtins, local $_, and a BEGIN inside a package.
use List::Util ();
package Guard { sub new { bless {}, shift } sub DESTROY { $main::destroyed++ } }
package Later { BEGIN { $Later::x = 1 } sub get { $Later::x } }
package main;
our $destroyed = 0;
sub to_max { goto &List::Util::max }
my $m = to_max(3, 9, 4);
my $code = \&Later::get;
$m += &$code() + &{$code}(1);
{ my $g = Guard->new; }
Guard->new for 1 .. 3;
require Text::Abbrev;
my %abbr = Text::Abbrev::abbrev(qw(list load));
my $tmp = "./misc-do.pl";    # in the current directory: the same name in every run
open my $fh, '>', $tmp or die; print $fh "sub from_do { 1 + shift }\n1;\n"; close $fh;
do $tmp or die "do: $@ $!";
unlink $tmp;
$m += from_do($_) for 1 .. 2;
my $n = 0;
"aaa" =~ /(?:a(?{ $n++ }))*/;
local $SIG{__DIE__} = sub { $n += 10 };
eval { die "x\n" };
eval 'sub made { wantarray ? "list" : "scalar" } 1' or die;
my @l = made();
my $s = made();
my %ops; %ops = (fact => sub { $_[0] <= 1 ? 1 : $_[0] * $ops{fact}->($_[0] - 1) });
$m += $ops{fact}->(8);
my @r = reverse sort { $a <=> $b } map { sprintf '%d', $_ * 3 } 1 .. 10;
for (1 .. 3) { local $_ = $_ * 2; $n += $_ }
print "$m $n $destroyed @l $s @r[0..2] ", scalar(keys %abbr), "\n";
