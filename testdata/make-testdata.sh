#!/bin/bash
# make-testdata.sh - regenerate every profile under testdata/ from scratch:
# the real profiles (*.out, written by Devel::NYTProf) and the broken ones
# under broken/ (derived from the real ones by the Perl code at the end).
#
# Needs perl with Devel::NYTProf (perl -d:NYTProf).  Run it from anywhere;
# it works in its own directory.  The output is the same on every run
# except for what the profiler measures (times, pids, the start time),
# so the profiles differ byte-wise from run to run, and so do the offsets
# of the cut and corrupted places in the broken files.
set -euo pipefail

cd "$(dirname "$0")"

# Hash order decides the order of the SUB_INFO and SUB_CALLERS chunks;
# fix it so that two runs differ only in measured values.
export PERL_HASH_SEED=0
export PERL_PERTURB_KEYS=0
unset NYTPROF

perl -MDevel::NYTProf::Core -e1 2>/dev/null || {
    echo "make-testdata.sh: Devel::NYTProf is not installed" >&2
    exit 1
}

rm -f -- *.out fork.out.* nytprof.out
rm -rf broken
mkdir broken

# profile OUTPUT OPTIONS PROGRAM: run PROGRAM under the profiler, writing
# OUTPUT.  OPTIONS is a NYTPROF option string without file= (may be empty).
profile() {
    local out=$1 opts=$2 prog=$3
    echo "profiling $prog -> $out${opts:+ ($opts)}"
    NYTPROF="${opts:+$opts:}file=$out" perl -d:NYTProf "$prog" >/dev/null
}

# ---- real profiles --------------------------------------------------------

profile demo.out                ""          demo.pl
profile demo-compress0.out      compress=0  demo.pl
profile demo-calls2.out         calls=2     demo.pl
profile demo-blocks.out         blocks=1    demo.pl
profile demo-savesrc0.out       savesrc=0   demo.pl
profile recursion.out           ""          recursion.pl
profile evals.out               ""          evals.pl
profile anon.out                ""          anon.pl
profile utf8-names.out          ""          utf8-names.pl
profile tricky-strings.out      ""          tricky-strings.pl
profile tricky-strings-compress0.out compress=0 tricky-strings.pl

# fork.pl: the child writes fork.out.PID; give it a stable name.
profile fork.out                ""          fork.pl
shopt -s nullglob
children=(fork.out.*)
shopt -u nullglob
if [ "${#children[@]}" -ne 1 ]; then
    echo "make-testdata.sh: expected one child profile fork.out.PID," \
         "found ${#children[@]}" >&2
    exit 1
fi
mv -- "${children[0]}" fork-child.out

# ---- broken profiles ------------------------------------------------------

: > broken/empty.out

# A different first line in front of the rest of a real profile.
{ printf 'NYTProX 5 0\n'; tail -n +2 demo.out; } > broken/bad-magic.out
{ printf 'NYTProf 4 0\n'; tail -n +2 demo.out; } > broken/major4.out
{ printf 'NYTProf 6 0\n'; tail -n +2 demo.out; } > broken/major6.out
{ printf 'NYTProf 5 9\n'; tail -n +2 demo-compress0.out; } > broken/minor9.out

# The rest needs to know where the chunks are: walk the files as
# FORMAT.md describes them and cut or patch at computed places.
perl - demo-compress0.out demo.out broken <<'PERL'
use strict;
use warnings;
use Compress::Raw::Zlib;

my ($plain_file, $z_file, $dir) = @ARGV;

sub slurp {
    my $f = shift;
    open my $fh, '<:raw', $f or die "$f: $!\n";
    local $/;
    my $d = <$fh>;
    return $d;
}

sub spew {
    my ($name, $data, $what) = @_;
    open my $fh, '>:raw', "$dir/$name" or die "$dir/$name: $!\n";
    print $fh $data;
    close $fh or die "$dir/$name: $!\n";
    printf "%-26s %6d bytes  %s\n", "broken/$name", length $data, $what;
}

# u32: 1 to 5 bytes, the first byte says how many.
sub u32 {
    my ($d, $p) = @_;
    die "u32 past the end at $p\n" if $p >= length $$d;
    my $b = ord substr $$d, $p, 1;
    return ($b, $p + 1) if $b < 0x80;
    my ($n, $v) = $b < 0xC0 ? (1, $b & 0x3F)
                : $b < 0xE0 ? (2, $b & 0x1F)
                : $b < 0xFF ? (3, $b & 0x0F)
                :             (4, 0);
    die "u32 past the end at $p\n" if $p + 1 + $n > length $$d;
    $v = $v * 256 + ord substr $$d, $p + 1 + $_, 1 for 0 .. $n - 1;
    return ($v, $p + 1 + $n);
}

# Field types of each binary chunk, in disk order: u = u32 (or i32),
# n = nv (8 bytes), s = tagged string.
my %layout = (
    'P' => 'uun', 'p' => 'un', '@' => 'uuuuuus', '+' => 'uuu',
    '*' => 'uuuuu', '-' => '', 's' => 'usuu', 'c' => 'uusunnnus',
    'S' => 'uus', '>' => 'uu', '<' => 'unns',
);

# Chunks of the plain part of a profile, up to the end or up to a 'z':
# a list of { tag, start, end, strs => [{tag_at, len_at, data_at, len}] }.
sub chunks {
    my $d = shift;
    my $p = index($$d, "\n") + 1 or die "no header line\n";
    my @c;
    while ($p < length $$d) {
        my $tag = substr $$d, $p, 1;
        my %c = (tag => $tag, start => $p, strs => []);
        if ($tag =~ /[#:!]/) {
            my $nl = index $$d, "\n", $p;
            die "text line without newline at $p\n" if $nl < 0;
            $p = $nl + 1;
        }
        elsif ($tag eq 'z') {
            $p++;
            $c{end} = $p;
            push @c, \%c;
            last;
        }
        elsif (defined(my $l = $layout{$tag})) {
            $p++;
            for my $t (split //, $l) {
                if ($t eq 'u') { (undef, $p) = u32($d, $p) }
                elsif ($t eq 'n') { $p += 8 }
                else {
                    my %s = (tag_at => $p, len_at => $p + 1);
                    ($s{len}, $p) = u32($d, $p + 1);
                    $s{data_at} = $p;
                    $p += $s{len};
                    push @{ $c{strs} }, \%s;
                }
            }
            die "chunk '$tag' at $c{start} runs past the end\n"
                if $p > length $$d;
        }
        else {
            die sprintf "unknown tag 0x%02x at %d\n", ord $tag, $p;
        }
        $c{end} = $p;
        push @c, \%c;
    }
    return @c;
}

# The chunk of @list whose $key offset is nearest to $target.
sub nearest {
    my ($key, $target, @list) = @_;
    my ($best) = sort { abs($a->{$key} - $target) <=> abs($b->{$key} - $target)
                        or $a->{$key} <=> $b->{$key} } @list;
    return $best // die "no candidate chunk\n";
}

# ---- the plain profile ----

my $plain = slurp($plain_file);
my @pc = chunks(\$plain);
die "$plain_file is compressed\n" if grep { $_->{tag} eq 'z' } @pc;
my $half = int(length($plain) / 2);
my @binary = grep { $_->{tag} !~ /[#:!]/ } @pc;
my @inner = @binary[1 .. $#binary - 1];   # neither the first nor the last
# The run-time events: the binary chunks after PID_START and before the
# first of the chunks written at the end of the run.
my @events;
for my $c (@binary[1 .. $#binary]) {
    last if $c->{tag} =~ /[Sscp]/;
    push @events, $c;
}
die "too few run-time events\n" if @events < 10;
my $mid_event = $events[int(@events / 2)];

# Cut in the middle of the ':perl_version=...' attribute line.
{
    my ($c) = grep { $_->{tag} eq ':'
                     && substr($plain, $_->{start}, 14) eq ':perl_version=' } @pc;
    die "no :perl_version line\n" unless $c;
    my $cut = $c->{start} + int(($c->{end} - $c->{start}) / 2);
    spew('trunc-plain-attr.out', substr($plain, 0, $cut),
         "cut in the middle of the :perl_version attribute line");
}

# Cut just after the middle one of the run-time events.
{
    my $c = $mid_event;
    spew('trunc-plain-boundary.out', substr($plain, 0, $c->{end}),
         "cut after a whole '$c->{tag}' chunk, the middle run-time event");
}

# Cut in the middle of the name of the NEW_FID nearest the middle.
{
    my $c = nearest('start', $half,
                    grep { $_->{tag} eq '@' && $_->{strs}[0]{len} >= 4 } @inner);
    my $s = $c->{strs}[0];
    spew('trunc-plain-string.out',
         substr($plain, 0, $s->{data_at} + int($s->{len} / 2)),
         "cut in the middle of a NEW_FID file name");
}

# The tag of the middle run-time event becomes 'Q'.
{
    my $c = $mid_event;
    my $d = $plain;
    substr($d, $c->{start}, 1) = 'Q';
    spew('bad-tag.out', $d, "tag of a '$c->{tag}' chunk, the middle run-time event, replaced by 'Q'");
}

# The length of the last string of the last SUB_INFO or SUB_CALLERS chunk
# becomes 0x7FFFFFFF (5-byte form), far past the end of the file.
{
    my ($c) = reverse grep { $_->{tag} =~ /[sc]/ } @pc;
    die "no SUB_INFO or SUB_CALLERS chunk\n" unless $c;
    my $s = $c->{strs}[-1];
    my $d = $plain;
    substr($d, $s->{len_at}, $s->{data_at} - $s->{len_at}) = "\xFF\x7F\xFF\xFF\xFF";
    spew('string-past-end.out', $d,
         "string length in the last '$c->{tag}' chunk set to 0x7FFFFFFF");
}

# The attribute nv_size=8 becomes nv_size=4.
{
    my ($c) = grep { $_->{tag} eq ':'
                     && substr($plain, $_->{start}, $_->{end} - $_->{start})
                        eq ":nv_size=8\n" } @pc;
    die "no :nv_size=8 line\n" unless $c;
    my $d = $plain;
    substr($d, $c->{start}, $c->{end} - $c->{start}) = ":nv_size=4\n";
    spew('nv-size-4.out', $d, "attribute :nv_size=8 changed to :nv_size=4");
}

# The string tag of the first NEW_FID's name becomes 'X'.
{
    my ($c) = grep { $_->{tag} eq '@' } @pc;
    die "no NEW_FID chunk\n" unless $c;
    my $d = $plain;
    substr($d, $c->{strs}[0]{tag_at}, 1) = 'X';
    spew('bad-string-tag.out', $d, "string tag of the first NEW_FID name replaced by 'X'");
}

# ---- the compressed profile ----

my $zd = slurp($z_file);
my ($zc) = grep { $_->{tag} eq 'z' } chunks(\$zd);
die "$z_file is not compressed\n" unless $zc;
my $z = $zc->{start};             # offset of the 'z' byte
my $zstart = $z + 1;              # the zlib stream starts here

# Inflate the whole stream to find where it ends (the trailer follows).
my ($inflated, $zend);
{
    my ($i, $st) = Compress::Raw::Zlib::Inflate->new(-ConsumeInput => 1);
    die "inflateInit: $st\n" unless $i;
    my $in = substr $zd, $zstart;
    $st = $i->inflate($in, $inflated);
    die "$z_file: zlib stream does not end properly: $st\n"
        unless $st == Z_STREAM_END;
    $zend = length($zd) - length($in);
}

spew('trunc-z-before.out', substr($zd, 0, $z),
     "cut just before the 'z' byte (text header only)");
spew('trunc-z-header.out', substr($zd, 0, $zstart + 1),
     "cut after 'z' and the first byte of the 2-byte zlib header");
spew('trunc-z-middle.out',
     substr($zd, 0, $zstart + int(($zend - $zstart) / 2)),
     "cut in the middle of the zlib stream");
spew('trunc-z-end.out', substr($zd, 0, $zend - 10),
     "last 10 bytes of the zlib stream and the trailer removed");

# Flip three bytes of the compressed stream, at the place nearest its
# middle where zlib then stops with an error about the deflate data itself
# (not merely "incorrect data check" at the end, which a corruption of
# literal text gives) before it has put out a single wrong byte; so a
# reader sees the zlib error there and never parses garbage.  If no place
# qualifies, take the one with the fewest wrong bytes.
{
    my $mid = $zstart + int(($zend - $zstart) / 2);
    my ($best, @order);
    for my $k (0 .. $zend - $zstart) {
        push @order, $mid + $k, $mid - $k - 1;
    }
    for my $at (@order) {
        next if $at < $zstart + 2 || $at + 3 > $zend - 4;  # keep header and check
        my $d = $zd;
        substr($d, $at, 3) = substr($d, $at, 3) ^ "\xFF\xFF\xFF";
        my ($i) = Compress::Raw::Zlib::Inflate->new(-ConsumeInput => 1);
        my $in = substr $d, $zstart, $zend - $zstart;
        my $out = '';
        my $st = $i->inflate($in, $out);
        next unless $st == Z_DATA_ERROR;
        my $msg = $i->msg // "$st";
        next if $msg eq 'incorrect data check';
        my $same = 0;
        $same++ while $same < length $out
            && substr($out, $same, 1) eq substr($inflated, $same, 1);
        my $garbage = length($out) - $same;
        $best = [$at, $d, $garbage, $msg, length $out]
            if !$best || $garbage < $best->[2];
        last if $garbage == 0;
    }
    die "no place gives a zlib data error\n" unless $best;
    my ($at, $d, $garbage, $msg, $outlen) = @$best;
    spew('bad-zlib.out', $d, sprintf "3 bytes flipped at %d%% of the zlib stream"
         . " (zlib: %s after %d of %d inflated bytes; wrong bytes before it: %d)",
         100 * ($at - $zstart) / ($zend - $zstart), $msg, $outlen,
         length $inflated, $garbage);
}

# ---- random bytes ----
{
    srand(42);
    spew('random.out', join('', map { chr int rand 256 } 1 .. 4096),
         "4096 bytes from perl's rand() after srand(42)");
}
PERL

# ---- sizes ------------------------------------------------------------------
for f in *.out broken/*.out; do
    size=$(wc -c < "$f")
    if [ "$size" -gt 102400 ]; then
        echo "make-testdata.sh: warning: $f is $size bytes (over 100 KB)" >&2
    fi
done
echo "done."
