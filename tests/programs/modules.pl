# BEGIN-heavy module loading: many modules, BEGIN and END blocks, use
# constant, tie and overload.
use strict;
use warnings;
use Data::Dumper ();
use File::Spec;
use File::Basename qw(basename dirname);
use Getopt::Long ();
use Text::Wrap qw(wrap);
use constant { ANSWER => 42, NAME => 'modules' };
BEGIN { our $started = time }
END { print "end\n" }
package Counter {
    sub TIESCALAR { my $v = 0; return bless \$v, shift }
    sub FETCH { my $s = shift; return $$s++ }
    sub STORE { my ($s, $v) = @_; $$s = $v }
}
package Num {
    use overload '+' => sub { Num->new(${$_[0]} + (ref $_[1] ? ${$_[1]} : $_[1])) },
        '""' => sub { "Num(${$_[0]})" };
    sub new { my ($c, $v) = @_; return bless \$v, $c }
}
package main;
tie my $t, 'Counter';
my $x = 0;
$x += $t for 1 .. 5;
my $n = Num->new(1) + 2 + Num->new(3);
local $Text::Wrap::columns = 30;
print wrap('', '  ', "the answer is " . ANSWER . " in " . NAME), "\n";
print basename(File::Spec->catfile('a', 'b', 'c.txt')), " $x $n\n";
print length(Data::Dumper::Dumper([1, { a => 2 }])), "\n";
