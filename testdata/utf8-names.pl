#!/usr/bin/perl
# utf8-names.pl - UTF-8 sub and package names (some within Latin-1, some
# beyond it) and a module whose file name is not ASCII (lib/Ünïcode.pm).
use utf8;
use strict;
use warnings;
BEGIN { unshift @INC, 'lib' }   # find lib/Ünïcode.pm
use Ünïcode;
binmode STDOUT, ':utf8';

package Café {
    sub naïve { return join '-', map { ucfirst } @_ }
    sub créer { my $class = shift; return bless { nom => shift }, $class }
    sub nom   { return $_[0]{nom} }
}

package Ωμέγα {
    sub λάμδα { return "λ says " . shift }
}

sub ñame { return scalar reverse shift }

print Ünïcode::grüße('Welt'), "\n";
print "sum: ", Ünïcode::zähle(1 .. 10), "\n";
print Café::naïve(qw(un deux trois)), "\n";
my $c = Café->créer('crème');
print "nom: ", $c->nom, "\n";
print "ñame: ", ñame('olé'), "\n";
print Ωμέγα::λάμδα('γειά'), "\n";
my $r = eval 'sub { "ϰ from an eval: " . shift }';
print $r->('ok'), "\n";
