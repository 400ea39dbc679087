# Subs whose names change under the profiler's caches: redefined at run
# time, glob assignments, local *name, subs made by string evals, a glob
# deleted and made again, goto &sub, AUTOLOAD, recursion, calls through
# another name, and a forked child calling them all again.
use strict;
use warnings;
no warnings qw(redefine once);

sub greet { return 'first' }
sub twice { my $n = shift; return $n <= 0 ? 0 : 1 + twice($n - 1) }
sub via_goto { goto &greet }

sub round {
    my $r = shift;
    my @got;
    push @got, greet() for 1 .. 3;
    push @got, twice(4);
    push @got, via_goto();
    {
        local *greet = sub { 'local' };
        push @got, greet(), main->can('greet')->();
    }
    push @got, greet();
    *greet = sub { 'assigned' };
    push @got, greet() for 1 .. 2;
    eval "sub greet { 'evaled $r' } 1" or die $@;
    push @got, greet();
    *alias = \&twice;
    push @got, alias(2);
    delete $main::{made};
    eval "sub made { 'made $r' } 1" or die $@;
    push @got, main->can('made')->();
    push @got, Auto::thing(), Auto::other(), Auto->method;
    Counter::bump() for 1 .. 4;
    return "@got";
}

package Auto;
our $AUTOLOAD;
sub AUTOLOAD {
    my $name = $AUTOLOAD;
    return if $name =~ /DESTROY/;
    no strict 'refs';
    *$name = sub { "auto $name" } if $name =~ /thing/;
    return "autoloaded $name";
}

package Counter;
my $n = 0;
sub bump { $n++ }

package main;

my $first = round(1);
my $pid = fork;
die "fork: $!" unless defined $pid;
if ($pid == 0) {
    round(2);
    greet() for 1 .. 2;
    exit 0;
}
waitpid $pid, 0;
my $second = round(3);
print "$first\n$second\n";
