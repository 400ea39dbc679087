# xsubs (List::Util, POSIX, Scalar::Util), slow ops (print, regex match and
# substitution, file tests, sort with a block), map and grep.
use List::Util qw(sum max min first reduce);
use POSIX qw(floor ceil);
use Scalar::Util qw(blessed reftype);
my @n = map { floor($_ * 1.7) + ceil($_ / 3) } 1 .. 300;
my @sorted = sort { $b <=> $a } @n;
my @even = grep { $_ % 2 == 0 } @sorted;
my $text = join ' ', map { "word$_" } @even;
my $matches = () = $text =~ /word(\d+)/g;
(my $copy = $text) =~ s/word/w/g;
my $exists = -e $0 ? 1 : 0;
my $r = reduce { $a + $b } @even;
printf "%d %d %d %d %d %s %d\n", sum(@n), max(@n), min(@n), $matches, $exists,
    (first { $_ > 100 } @n), $r;
print STDOUT length($copy), "\n" for 1 .. 3;
print defined(blessed(\1)) ? "b\n" : "nb\n", reftype([]), "\n";
