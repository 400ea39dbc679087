# Modules and features that move perl's contexts about under the
# profiler: Scope::Upper's unwind (returning from an outer sub) and
# uplevel (running code as the caller), Return::MultiLevel's escape from
# two levels down, the defer block of perl 5.36 (run as its scope is
# left), and Object::Pad's methods (custom ops).  Compared with
# Devel::NYTProf, which profiles it too.
use strict;
use warnings;
use feature 'defer'; no warnings 'experimental::defer';
use Scope::Upper qw(unwind uplevel reap localize UP SUB HERE);
use Return::MultiLevel qw(with_return);
use Object::Pad;
my %calls;
class Counter { field $n = 0; method inc { $calls{inc}++; $n++; return $self } method n { $calls{n}++; $n } }
sub deep_unwind { $calls{deep_unwind}++; my @r = (sub { $calls{inner}++; unwind(42 => UP SUB) })->(); return "no" }
sub outer_u { $calls{outer_u}++; my @v = deep_unwind(); return "unwound:@v" }
sub up { $calls{up}++; return up2() }
sub up2 { $calls{up2}++; return uplevel { $calls{upcb}++; return (caller(0))[3] } UP }
sub with_defer { $calls{with_defer}++; my $x = 0; { defer { $x = helper(5) } $x = 1 } return $x }
sub helper { $calls{helper}++; $_[0] * 2 }
sub mlr { $calls{mlr}++; return with_return { my ($ret) = @_; level2($ret); return "not" } }
sub level2 { $calls{level2}++; $_[0]->("escaped") }
my $c = Counter->new; $c->inc->inc->inc;
my @o = (outer_u(), up(), with_defer(), mlr(), $c->n);
print "@o\n";
print join(" ", map { "$_=$calls{$_}" } sort keys %calls), "\n";
