# Packages deleted while their subs live on (Devel::NYTProf 6.12 crashes
# here, so tests/40-profiler.t checks Devel::NYTP's profile against what
# this program does): each GoneN::g is called twice, then its package is
# deleted and it is called once more (perl renames it __ANON__::__ANON__;
# its call of f, whose glob lost its package, is "(null)::f"); Again::f
# is called once, its package deleted and made again (a new glob, perhaps
# at the old one's address, in a new package of the same name) and the
# new Again::f called once.
use strict;
use warnings;
for my $round (1 .. 3) {
    eval "package Gone$round; sub f { return 'f$round' } sub g { return f() . 'g' } 1" or die $@;
    my $g = "Gone$round"->can('g');
    $g->() for 1 .. 2;
    delete $main::{"Gone${round}::"};
    $g->();
}
eval "package Again; sub f { 'again' } 1" or die $@;
Again::f();
delete $main::{'Again::'};
eval "package Again; sub f { 'again 2' } 1" or die $@;
Again::f();
print "done\n";
