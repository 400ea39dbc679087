# async subs (Future::AsyncAwait): an await on a pending future suspends
# the sub (its contexts are taken off perl's stacks, and it leaves through
# PL_ppaddr[OP_RETURN] called from the await op, a custom op); the
# future's completion resumes it (the sub is called again, starting at
# the await).  The program counts its calls and its resumptions and
# prints them last, for the test to hold the profile's counts against.
use strict;
use warnings;
use Future;
use Future::AsyncAwait;

my (%calls, %resumed, @pending);

sub helper { $calls{helper}++; return $_[0] + 1 }
sub later {
    $calls{later}++;
    my $f = Future->new;
    push @pending, [$f, $_[0]];
    return $f;
}
sub waiting { $resumed{ $_[0] }++ unless $_[1]->is_ready; return $_[1] }

async sub inner {
    $calls{inner}++;
    my ($x) = @_;
    my $v = await waiting(inner => later($x));
    return helper($v);
}
async sub outer {
    $calls{outer}++;
    my ($n) = @_;
    my $s = 0;
    for my $i (1 .. $n) { $s += await waiting(outer => inner($i)) }
    return $s;
}
async sub fails { $calls{fails}++; await waiting(fails => later(0)); die "oops\n" }
async sub ready { $calls{ready}++; my $v = await Future->done(5); return $v * 2 }

my @f = map { outer($_) } 1 .. 3;
my $bad = fails();
my $now = ready();
while (my $p = shift @pending) { $p->[0]->done($p->[1] * 10) }
print join(",", map { $_->get } @f, $now), "\n";
print eval { $bad->get; 1 } ? "no failure\n" : "caught $@";
print join(" ", map { "$_=$calls{$_}" } sort keys %calls), "\n";
print join(" ", map { "$_=$resumed{$_}" } sort keys %resumed), "\n";
