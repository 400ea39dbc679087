# Coroutines (Coro): each has its own perl stacks, and cede, join and
# the channel switch between them from inside nested subs, inside evals,
# in sort blocks and string evals.  The program counts its own calls and
# prints the counts last, for the test to hold the profile's against.
use strict;
use warnings;
use Coro;
use Coro::Channel;

my %calls;
my @out;

sub leaf { $calls{leaf}++; my ($n) = @_; cede if $n % 3 == 0; return $n * 2 }
sub mid {
    $calls{mid}++;
    my ($id, $n) = @_;
    my $s = 0;
    $s += leaf($_) for 1 .. $n;
    push @out, "$id:$s";
    return $s;
}
sub top { $calls{top}++; return mid($_[0], 20) }
sub by_len { $calls{by_len}++; cede; return length($a) <=> length($b) || $a cmp $b }
sub deep { $calls{deep}++; my ($d) = @_; return $d ? deep($d - 1) : do { cede; 0 } }
sub forever { $calls{forever}++; cede while 1 }

my $chan = Coro::Channel->new(2);
sub producer { $calls{producer}++; $chan->put($_) for 1 .. 10; $chan->put(undef) }
sub consumer {
    $calls{consumer}++;
    my $sum = 0;
    while (defined(my $v = $chan->get)) { $sum += leaf($v) }
    push @out, "chan:$sum";
}

my @c = map { my $id = $_; async { top($id) } } 1 .. 4;
push @c, async { eval { mid('d', 2); cede; die "boom\n" }; push @out, "caught $@" };
push @c, async { my @s = sort by_len qw(ccc a bb dddd); push @out, "@s" };
push @c, async { my $v = eval 'deep(5) + 1'; push @out, "eval:$v" };
push @c, async { producer() }, async { consumer() };
my $stuck = async { forever() };
$_->join for @c;
$stuck->cancel;
cede;
top('main');

chomp @out;
print join(",", sort @out), "\n";
print join(" ", map { "$_=$calls{$_}" } sort keys %calls), "\n";
