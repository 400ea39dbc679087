#!/usr/bin/perl
# 'nytp dump' against the oracle (tests/oracle-dump.pl, which prints what
# Devel::NYTProf::ReadStream's for_chunks hands its callback): byte for
# byte on every testdata profile and on profiles written now; and on
# broken files, the right exit status, a one-line message, and never less
# data than the oracle salvages.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $oracle = repo() . '/tests/oracle-dump.pl';
my $td = testdata();

sub same_as_oracle {
    my ($file, $label) = @_;
    my ($ost, $oout, $oerr) = run_cmd([$^X, $oracle, $file]);
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', $file]);
    is $ost, 0, "$label: the oracle reads it" or diag $oerr;
    is $st, 0, "$label: nytp dump exits 0" or diag $err;
    ok length($out) > 100, "$label: printed something";
    if ($out eq $oout) {
        pass "$label: identical to the oracle";
    } else {
        my @a = split /^/, $out;
        my @b = split /^/, $oout;
        my $i = 0;
        $i++ while $i < @a && $i < @b && $a[$i] eq $b[$i];
        fail "$label: identical to the oracle";
        diag "first difference at line " . ($i + 1) . ":\n nytp:   " . ($a[$i] // "(end)") . " oracle: " . ($b[$i] // "(end)");
    }
}

# Every real profile in testdata.
opendir my $dh, $td or die;
my @real = sort grep { /\.out\z/ } readdir $dh;
ok @real >= 12, 'testdata has the real profiles';
same_as_oracle("$td/$_", $_) for @real;

# minor9 is readable with a warning, and still identical.
{
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', "$td/broken/minor9.out"]);
    is $st, 0, 'minor9: exit 0';
    like $err, qr/^nytp dump: warning: .*minor9\.out: .*version 5\.9 is newer than 5\.0/, 'minor9: warns';
    my ($ost, $oout) = run_cmd([$^X, $oracle, "$td/broken/minor9.out"]);
    is $out, $oout, 'minor9: identical to the oracle';
}

# Fresh profiles of several programs, with several option sets.
my %programs = (
    'sort-and-regex' => <<'PL',
my @w = map { chr(97 + $_ % 26) x (1 + $_ % 5) } 1 .. 300;
my @s = sort { length($a) <=> length($b) or $a cmp $b } @w;
my $n = 0;
for (@s) { $n++ if /^(a|e|i)+$/; s/b/B/g; }
print "n=$n\n";
PL
    'modules-xsubs' => <<'PL',
use List::Util qw(sum max first);
use POSIX qw(floor);
my @v = map { floor($_ * 1.5) } 1 .. 200;
printf "%d %d %s\n", sum(@v), max(@v), first { $_ > 50 } @v;
PL
    'closures-evals' => <<'PL',
my @subs = map { my $k = $_; sub { $k * shift } } 1 .. 5;
my $t = 0;
$t += $_->(3) for @subs;
for my $i (1 .. 4) { $t += eval "$i * 2" }
eval { die "oops\n" };
print "t=$t $@";
PL
    'recursion-goto' => <<'PL',
sub fact { my $n = shift; $n <= 1 ? 1 : $n * fact($n - 1) }
sub via { goto &fact }
my $x = 0;
$x += via($_) for 1 .. 15;
sub AUTOLOAD { our $AUTOLOAD; return length $AUTOLOAD }
$x += undefined_thing();
print "$x\n";
PL
    'strings' => <<'PL',
my %h;
$h{"k\t$_"} = "v\n$_" for 1 .. 50;
my $s = join ',', map { "$_=$h{$_}" } sort keys %h;
eval "sub tab\tname { 1 }" ;
eval qq{my \$q = "<script>alert(1)</script>\\r\\n"; length \$q};
print length($s), "\n";
PL
);
my @optsets = ('', 'compress=0', 'calls=2', 'blocks=1', 'savesrc=0:slowops=0', 'stmts=0', 'subs=0');
my $i = 0;
for my $name (sort keys %programs) {
    my $opts = $optsets[$i++ % @optsets];
    my $f = fresh_profile($name, $programs{$name}, $opts);
    same_as_oracle($f, "fresh $name ($opts)");
}
# The testdata programs, profiled now, with the remaining option sets.
for my $prog (qw(demo recursion evals anon tricky-strings)) {
    my $opts = $optsets[$i++ % @optsets];
    my $f = fresh_profile("td-$prog", "$td/$prog.pl", $opts);
    same_as_oracle($f, "fresh testdata/$prog.pl ($opts)");
}

# Broken files.  Truncated: exit 0 and one warning line, or exit 1 with
# --strict.  Corrupt: exit 1 and one error line.  Either way, stdout holds
# at least everything the oracle printed before it died.
my %truncated = map { $_ => 1 } qw(trunc-plain-attr trunc-plain-boundary trunc-plain-string
    trunc-z-before trunc-z-header trunc-z-middle trunc-z-end);
my %corrupt = map { $_ => 1 } qw(empty bad-magic major4 major6 bad-tag string-past-end
    nv-size-4 bad-zlib bad-string-tag random);
for my $name (sort(keys %truncated), sort(keys %corrupt)) {
    my $file = "$td/broken/$name.out";
    ok -e $file, "$name exists";
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', $file]);
    my ($ost, $oout, $oerr) = run_cmd([$^X, $oracle, $file]);
    my $lines = () = $err =~ /\n/g;
    if ($truncated{$name}) {
        is $st, 0, "$name: truncated, exit 0";
        like $err, qr/^nytp dump: warning: \Q$file\E: truncated at offset \d+.*, chunk \d+: /,
            "$name: warning names file, offset, chunk";
        like $err, qr/the last complete chunk is number \d+|no chunk before it was complete/,
            "$name: warning names the last complete chunk";
        my ($sst, $sout, $serr) = run_cmd([$nytp, 'dump', '--strict', $file]);
        is $sst, 1, "$name: --strict makes it exit 1";
        is $sout, $out, "$name: --strict prints the same chunks first";
        like $serr, qr/^nytp dump: \Q$file\E: truncated at/, "$name: --strict says error";
    } else {
        is $st, 1, "$name: corrupt, exit 1";
        like $err, qr/^nytp dump: \Q$file\E: (format error|unsupported version) at offset \d+/,
            "$name: error names file and offset";
    }
    is $lines, 1, "$name: exactly one line on stderr" or diag $err;
    is substr($out, 0, length $oout), $oout, "$name: at least what the oracle printed, the same";
    # the oracle agrees something is wrong (it dies), except where the cut
    # falls on a chunk boundary: it cannot tell that from a complete file.
    isnt $ost, 0, "$name: the oracle fails too"
        unless $name =~ /^trunc-(plain-boundary|z-before)$/;
}

done_testing;
