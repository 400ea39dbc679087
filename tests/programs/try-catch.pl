# try/catch/finally of Syntax::Keyword::Try (custom ops around perl's
# own entertry), with returns, next and last out of the blocks.  The
# program counts its calls and prints them last.
use strict;
use warnings;
use Syntax::Keyword::Try;

my (%calls, $finally);

sub risky { $calls{risky}++; die "bad $_[0]\n" if $_[0] % 2; return $_[0] }
sub wrap {
    $calls{wrap}++;
    my ($n) = @_;
    try { return risky($n) + 100 }
    catch ($e) { chomp $e; return "caught($e)" }
    finally { $finally++ }
}
sub loop {
    $calls{loop}++;
    my @r;
    for my $i (1 .. 4) {
        try { push @r, risky($i); next if $i == 2; last if $i == 4 }
        catch ($e) { push @r, 'x' }
    }
    return "@r";
}

print join(",", map { wrap($_) } 1 .. 4), "\n";
print loop(), "\n";
print "finally blocks: $finally\n";
print join(" ", map { "$_=$calls{$_}" } sort keys %calls), "\n";
