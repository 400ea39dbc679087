# Slow ops run by the compiler: pack and unpack with constant arguments
# are folded into constants while a statement is compiled, under a copy
# of the compiling statement that perl makes on the C stack, at the same
# address for every one.  Each is a call of CORE:pack or CORE:unpack from
# the line being compiled: in the main program, in a sub's body, in a
# file required at run time and in a string eval; and after a #line
# that names another file, which frees the compiler's copy of the old name
# (the new name can take its address: the file is known by name, never by
# that address).
use strict;
use warnings;
use Cwd qw(getcwd);
use constant TEMPLATE => 'nnN';

my $a = pack(TEMPLATE, 1, 2, 3);
my $b = pack(TEMPLATE, 4, 5, 6);
my @c = unpack('N', "\0\0\0\7");

sub packed {
    my $x = pack('U*');
    return $x . pack('n', 42);
}

my $dir = getcwd() . "/folding"; mkdir $dir;
open my $fh, '>', "$dir/Folded.pm" or die "Folded.pm: $!";
print $fh "package Folded;\nmy \$one = pack('N', 1);\n\nmy \$two = pack('N', 2);\nsub both { return \$one . \$two }\n1;\n";
close $fh;
push @INC, $dir;
require Folded;

my $e = eval "pack('n', 1) .\n pack('n', 2)" // die $@;
my $len = length($a . $b . packed() . Folded::both() . $e) + $c[0];
# the same folded line again: a second call from a line seen before
eval "my \$z = pack('N', 9);\n1" or die $@ for 1 .. 2;
my $f = pack('N', 1);
#line 40 "virtual/folded.pl"
my $g = pack('N', 2);
#line 50 "virtual/again.pl"
my $h = pack('N', 3);
print $len + length($f . $g . $h), "\n";
