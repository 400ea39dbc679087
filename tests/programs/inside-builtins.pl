# Perl code run from inside builtins (slow ops) and by perl itself: subs
# called from a regex code block (one dies out of it, caught), a tied
# handle's methods run by print and close, overloaded comparison run by
# sort, DESTROY run as a builtin's temporaries are freed, a signal
# handler run as sleep is interrupted, AUTOLOAD, an lvalue sub reached by
# goto &sub.  Compared with Devel::NYTProf.
use strict;
use warnings;
use Time::HiRes ();

my $hits = 0;
sub seen { $hits++; return 1 }
sub boom { die "in a code block\n" }
"aaaa" =~ /(?:a(?{ seen() }))*/ for 1 .. 3;
eval { "ab" =~ /a(?{ boom() })b/; 1 } or print "caught: $@";

package Shout {
    sub TIEHANDLE { my ($c) = @_; return bless { n => 0 }, $c }
    sub PRINT { my $s = shift; $s->{n}++; Shout::count(@_); return 1 }
    sub CLOSE { main::seen(); return 1 }
    sub count { return scalar @_ }
}
tie *LOUD, 'Shout';
print LOUD "x", "y" for 1 .. 4;
close LOUD;

package Num {
    use overload '<=>' => sub { Num::cmp_calls(); $_[2] ? $_[1]->{v} <=> $_[0]->{v} : $_[0]->{v} <=> $_[1]->{v} },
        '""' => sub { $_[0]->{v} };
    my $c = 0;
    sub cmp_calls { $c++ }
    sub new { bless { v => $_[1] }, $_[0] }
}
my @sorted = sort { $a <=> $b } map { Num->new($_) } 5, 3, 9, 1;
print "sorted: @sorted\n";

package Guard {
    sub new { bless {}, shift }
    sub DESTROY { main::seen() }
}
my $len = length(join ",", map { Guard->new } 1 .. 3);

my $alarms = 0;
{
    local $SIG{ALRM} = sub { $alarms++; seen() };
    Time::HiRes::ualarm(100_000); # a tenth of a second
    sleep 3;
    alarm 0;
}

our $AUTOLOAD;
sub AUTOLOAD { my $n = $AUTOLOAD; $n =~ s/.*:://; return if $n eq 'DESTROY'; return "auto($n)" }
print main->frobnicate, "\n";

my $val = 1;
sub lv :lvalue { $val }
sub to_lv :lvalue { goto &lv }
to_lv() = 7;
print "lv: $val, hits $hits, alarms $alarms\n";
