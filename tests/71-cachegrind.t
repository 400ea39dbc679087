#!/usr/bin/perl
# 'nytp cachegrind': callgrind_annotate (valgrind) reads the output without
# a warning and its program total equals the statement ticks of the
# profile (summed here from the TIME_LINE/TIME_BLOCK chunks with
# Devel::NYTProf::ReadStream); the calls -- which sub, from which caller,
# how often -- are those nytprofcg writes for the same input; names with
# spaces, quotes, control characters and UTF-8 keep the format valid.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use Encode ();
use Devel::NYTProf::ReadStream qw(for_chunks);

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();

need(scalar(grep { -x "$_/callgrind_annotate" } split /:/, $ENV{PATH}),
    'callgrind_annotate (valgrind) is not installed');

# Statement ticks of a profile, independently of nytp.
sub stmt_ticks {
    my $file = shift;
    my $total = 0;
    for_chunks {
        my ($tag, $ticks) = @_;
        return unless $tag eq 'TIME_LINE' || $tag eq 'TIME_BLOCK';
        $ticks -= 2**64 if $ticks >= 2**63;    # signed, handed over unsigned
        $total += $ticks;
    } filename => $file, quiet => 1;
    return $total;
}

# A name as nytp writes it: one line of UTF-8 (bytes that are not UTF-8
# read as Latin-1), LF/CR as \n \r, other control bytes as \xHH.
sub as_written {
    my $s = shift;
    my $copy = $s;
    if (!utf8::decode($copy)) {
        $s = join '', map { chr } unpack 'C*', $s;
        utf8::encode($s);
    }
    $s =~ s/\n/\\n/g;
    $s =~ s/\r/\\r/g;
    $s =~ s/([\x00-\x08\x0b-\x1f\x7f])/sprintf('\\x%02x', ord $1)/ge;
    return $s;
}

# Parse a callgrind file: calls{caller}{callee} = count, and names used.
sub parse_callgrind {
    my ($file, $normalise) = @_;
    open my $fh, '<:raw', $file or die "$file: $!";
    my (%names, %calls, %callee_calls, $fn, $cfn);
    my $name = sub {
        my ($ctx, $v) = @_;
        if ($v =~ /^\((\d+)\)(?: (.*))?\z/s) {
            return $names{$ctx}{$1} //= defined $2 ? $2 : die "$file: ($1) used before it was named";
        }
        return $v;
    };
    while (my $l = <$fh>) {
        chomp $l;
        if ($l =~ /^fn=(.*)/s) { $fn = $name->('fn', $1) }
        elsif ($l =~ /^cfn=(.*)/s) { $cfn = $name->('fn', $1) }
        elsif ($l =~ /^(?:fl|fi|fe|cfl|cfi)=(.*)/s) { $name->('fl', $1) }
        elsif ($l =~ /^calls=(\d+)/) {
            my ($a, $b) = map { $normalise ? as_written($_) : $_ } $fn, $cfn;
            $calls{$a}{$b} += $1;
            $callee_calls{$b} += $1;
        }
    }
    return (\%calls, \%callee_calls);
}

sub check {
    my ($file, $label) = @_;
    my $out = "$dir/ours.callgrind";
    unlink $out;
    my ($st, undef, $err) = run_cmd([$nytp, 'cachegrind', '-o', $out, $file]);
    is $st, 0, "$label: nytp cachegrind exits 0" or diag $err;
    is $err, '', "$label: nothing on stderr";

    # valid UTF-8, lines only
    my $bytes = slurp_file($out) // '';
    ok utf8::decode(my $copy = $bytes), "$label: the output is valid UTF-8";
    like $bytes, qr/^events: Ticks$/m, "$label: events: Ticks";
    # how long a Tick is, from the profile's ticks_per_sec
    my ($tps) = (run_cmd([$nytp, 'dump', '--tags=ATTRIBUTE', $file]))[1] =~ /^ATTRIBUTE\tticks_per_sec\t(\d+)$/m;
    my $ns = 1e9 / $tps;
    like $bytes, qr/^event: Ticks : Ticks \(\Q$ns\E ns each\)\n(?:.*\n)*?events: Ticks$/m,
        "$label: the event's long name says a Tick is $ns ns";
    like $bytes, qr/^desc: Tick: \Q$ns\E ns of the profiler's clock \(ticks_per_sec $tps\)$/m,
        "$label: a desc: line says so too";

    my ($ast, $aout, $aerr) = run_cmd(['callgrind_annotate', '--threshold=100', $out]);
    is $ast, 0, "$label: callgrind_annotate exits 0";
    is $aerr, '', "$label: callgrind_annotate has no warning" or diag $aerr;
    like $aout, qr/^Tick: \Q$ns\E ns of the profiler's clock/m, "$label: callgrind_annotate shows what a Tick is";
    my ($total) = $aout =~ /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?PROGRAM TOTALS/m;
    $total =~ s/,//g if defined $total;
    is $total // 0, stmt_ticks($file), "$label: callgrind_annotate's total is the profile's statement ticks";

    # the calls of nytprofcg
    my $cg = "$dir/oracle.callgrind";
    unlink $cg;
    my ($ost, undef, $oerr) = run_cmd(['nytprofcg', '-f', $file, '-o', $cg]);
    is $ost, 0, "$label: nytprofcg exits 0" or diag $oerr;
    my ($ours, $ours_callee) = parse_callgrind($out, 0);
    my ($want, $want_callee) = parse_callgrind($cg, 1);
    is_deeply $ours_callee, $want_callee, "$label: every called sub and its call count as nytprofcg";
    is_deeply $ours, $want, "$label: every caller -> callee arc and its count as nytprofcg";
}

opendir my $dh, $td or die;
check("$td/$_", $_) for sort grep { /\.out\z/ } readdir $dh;

# Test programs, with blocks and without saved source too.
for my $prog (qw(evals-loop closures xsubs-slowops modules deep)) {
    for my $v ('', 'blocks=1', 'savesrc=0') {
        my $name = "cg-$prog-" . ($v || 'default');
        $name =~ s/=/-/g;
        check(fresh_profile($name, repo() . "/tests/programs/$prog.pl", $v), "$prog ($v)");
    }
}

# A script whose own name and subs have spaces, quotes, UTF-8, a tab.
{
    my $src = <<'PERL';
use strict; use warnings;
no strict 'refs';
*{"main::with space"} = sub { my $x = shift; $x * 2 };
*{"main::quote\"d'"} = sub { 1 };
*{"main::caf\x{e9}"} = sub { 2 };
*{"main::tab\there"} = sub { 3 };
for my $i (1 .. 5) { &{"main::with space"}($i); &{"main::quote\"d'"}(); &{"main::caf\x{e9}"}(); &{"main::tab\there"}() }
PERL
    my $f = fresh_profile("odd \"name's\" \x{c3}\x{a9}", $src);
    check($f, 'odd names');
    my $out = "$dir/odd.callgrind";
    run_cmd([$nytp, 'cachegrind', '-o', $out, $f]);
    my $bytes = slurp_file($out);
    like $bytes, qr/^fl=\(\d+\) .*odd "name's" \x{c3}\x{a9}\.pl$/m, 'odd names: the file name is kept whole';
}

# Options, errors, atomic output.
{
    my $f = "$td/demo.out";
    my $out = "$dir/x.callgrind";
    my ($st, $o) = run_cmd([$nytp, 'cachegrind', '-o', '-', $f]);
    is $st, 0, '-o - writes to standard output';
    like $o, qr/^events: Ticks$/m, '... the callgrind data';
    ($st, $o) = run_cmd([$nytp, 'cachegrind', '-o', '-', '-'], stdin => slurp_file($f));
    is $st, 0, 'reads standard input';
    like $o, qr/^fn=/m, '... and writes functions';
    system('cp', $f, "$dir/copy.out") == 0 or die;
    ($st) = run_cmd([$nytp, 'cachegrind', '-o', '-', $f, "$dir/copy.out"]);
    is $st, 0, 'several inputs are added up';
    ($st, undef, my $err) = run_cmd([$nytp, 'cachegrind'], cwd => $td);
    is $st, 1, 'default input nytprof.out: missing in testdata, exit 1';
    like $err, qr/nytprof\.out/, '... naming it';
    ($st, undef, $err) = run_cmd([$nytp, 'cachegrind', '--bogus']);
    is $st, 2, 'unknown option: exit 2';
    ($st, my $help) = run_cmd([$nytp, 'cachegrind', '--help']);
    is $st, 0, '--help exits 0';
    like $help, qr/usage: nytp cachegrind/, '--help prints the usage';

    open my $fh, '>', $out or die;
    print $fh "previous\n";
    close $fh;
    ($st, undef, $err) = run_cmd([$nytp, 'cachegrind', '-o', $out, "$td/broken/bad-magic.out"]);
    is $st, 1, 'a corrupt input: exit 1';
    is slurp_file($out), "previous\n", '... and the previous output is untouched';
    my @tmp = glob("$dir/x.callgrind?*");
    is scalar(@tmp), 0, '... and no temporary file is left';

    my $cut = "$td/broken/trunc-plain-boundary.out";
    if (-e $cut) {
        ($st, undef, $err) = run_cmd([$nytp, 'cachegrind', '-o', $out, $cut]);
        is $st, 0, 'a truncated input: exit 0';
        like $err, qr/warning/, '... with a warning';
        ($st) = run_cmd([$nytp, 'cachegrind', '--strict', '-o', $out, $cut]);
        is $st, 1, '... and --strict makes it an error';
    }
}

# Names ending in bytes that are not UTF-8 (overlong, a surrogate, beyond
# U+10FFFF, cut short, a lone continuation byte) are written as their
# Latin-1 reading; a valid one (U+FFFE) as it is.
{
    my $f = "$dir/odd-names.out";
    system(repo() . '/build/gen-profile', 'odd-names', 2, $f) == 0 or die 'gen-profile failed';
    my ($st, $out, $err) = run_cmd([$nytp, 'cachegrind', '-o', '-', $f]);
    is $st, 0, 'cachegrind, names that are not UTF-8: exit 0' or diag $err;
    ok utf8::decode(my $copy = $out), 'cachegrind: the output is UTF-8';
    my %names = map { $_ => 1 } $out =~ /^c?fn=\(\d+\) (main::o.*)$/mg;
    my @want = ((map { 'main::' . Encode::encode('UTF-8', Encode::decode('latin1', $_)) }
                 "o1\xc0\xaf", "o2\xed\xa0\x80", "o3\xf4\x90\x80\x80", "o4\xe2\x82", "o5\x80"),
                "main::o6\xef\xbf\xbe");
    is_deeply [sort keys %names], [sort @want], 'cachegrind: each name as nytp writes it';
}

done_testing;
