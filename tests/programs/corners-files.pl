# More corners (see corners.pl): a symbolic call, a sub made by a glob
# assignment at run time, do FILE and require of files written at run
# time (defining a sub already defined: redefined), a string eval with a
# #line into another file name, exit from inside a sort block in a forked
# child, die in DESTROY during global destruction, a sub called from a
# signal handler between sorts.
use strict;
use warnings;
no warnings 'redefine';
use Cwd qw(getcwd);

my $dir = getcwd() . "/corners-files"; mkdir $dir;
sub spit { my ($name, $text) = @_; open my $fh, '>', "$dir/$name" or die; print $fh $text; close $fh; return "$dir/$name" }

my $n = 0;
{ no strict 'refs'; for my $name (qw(alpha beta)) { *{"main::$name"} = sub { return $n += length $name } } }
{ no strict 'refs'; &{"alpha"}() for 1 .. 3; &{"main::beta"}() for 1 .. 2; }

my $file = spit('Plug.pm', "package Plug;\nsub hello {\n    my \$x = shift;\n    return \$x + 1;\n}\n1;\n");
push @INC, $dir;
require Plug;
$n += Plug::hello($_) for 1 .. 4;
my $again = spit('again.pl', "sub Plug::hello {\n    return 100;\n}\n1;\n");
do $again or die "do: $@ $!";
$n += Plug::hello(1);

my $v = eval qq{\n#line 7 "virtual/thing.pl"\nsub virt { return 3 }\nvirt() + virt();\n};
$n += $v;

my $pid = fork // die;
if (!$pid) {
    my @s = sort { exit(0) if $a == 3; $a <=> $b } 5, 4, 3, 2, 1;
    exit 1;
}
waitpid $pid, 0;
$n += $? >> 8;

my $ticks = 0;
sub on_alarm { $ticks++ }
local $SIG{ALRM} = \&on_alarm;
my @big = map { ($_ * 7919) % 10007 } 1 .. 20000;
my $sorted = 0;
for my $round (1 .. 30) {
    alarm 0; 
    kill 'ALRM', $$ if $round % 3 == 0;
    my @s = sort { $a <=> $b } @big[0 .. 2000];
    $sorted += @s;
}

package Grumpy { sub new { bless {}, shift } sub DESTROY { main::grumble(); die "in DESTROY\n" } }
sub grumble { $n++ }
our $keep = Grumpy->new;

print "$n $ticks $sorted\n";
