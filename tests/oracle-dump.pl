#!/usr/bin/perl
# The oracle for 'nytp dump': Devel::NYTProf::ReadStream's for_chunks over
# FILE, printing each chunk as 'nytp dump' does (name and fields joined by
# TAB, strings escaped the same way).  Its output must equal nytp's byte
# for byte.  Exit status 0 if the whole file was read, 1 if the reader died
# (the message goes to stderr), as it does on a cut or corrupt file.
use strict;
use warnings;
use Devel::NYTProf::ReadStream qw(for_chunks);

my $file = shift // 'nytprof.out';
binmode STDOUT;
$| = 0;

# Fields that are strings, by chunk, as 0-based positions after the name.
my %string_at = (
    COMMENT     => [0],
    ATTRIBUTE   => [0, 1],
    OPTION      => [0, 1],
    NEW_FID     => [6],
    SUB_INFO    => [3],
    SUB_CALLERS => [7, 8],
    SRC_LINE    => [2],
    SUB_RETURN  => [3],
);
# Ticks of TIME_LINE and TIME_BLOCK are signed 32-bit; the reader hands
# them over as the unsigned value of a sign-extended 64-bit number.
my %signed_at = (TIME_LINE => 0, TIME_BLOCK => 0);

sub esc {
    my $s = shift;
    utf8::encode($s) if utf8::is_utf8($s);   # back to the bytes on disk
    $s =~ s/\\/\\\\/g;
    $s =~ s/\t/\\t/g;
    $s =~ s/\n/\\n/g;
    $s =~ s/\r/\\r/g;
    $s =~ s/([\x00-\x1f\x7f])/sprintf('\\x%02x', ord $1)/ge;
    return $s;
}

my $ok = eval {
    for_chunks {
        my ($tag, @f) = @_;
        my %is_str = map { $_ => 1 } @{ $string_at{$tag} || [] };
        for my $i (0 .. $#f) {
            if ($is_str{$i}) {
                $f[$i] = esc($f[$i]);
            }
            elsif (exists $signed_at{$tag} && $signed_at{$tag} == $i) {
                $f[$i] = unpack('q', pack('Q', $f[$i]));
            }
            else {
                $f[$i] = "$f[$i]";
            }
        }
        print join("\t", $tag, @f), "\n";
    } filename => $file, quiet => 1;
    1;
};
if (!$ok) {
    my $e = $@;
    $e =~ s/\s+\z//;
    print STDERR "oracle: $e\n";
    exit 1;
}
exit 0;
