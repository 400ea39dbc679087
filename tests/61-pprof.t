#!/usr/bin/perl
# 'nytp pprof' read by its real consumer, go tool pprof (Debian golang-go,
# installed by make deps): -top and -traces read the file, and their total,
# per-function flat values and call paths equal 'nytp calls' on the same
# profiles (wall time and calls); locations carry file and line; a profile
# without call events gives caller;called paths from the call-site data,
# equal to Devel::NYTProf::Data's sub times; errors and outputs.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use Encode ();

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();

my $go = (grep { -x } map { "$_/go" } split /:/, $ENV{PATH})[0];
need($go,
    'go is not installed: make deps installs golang-go');

# go tool pprof with no network and nothing written outside the scratch dir
$ENV{HOME} = $dir;
$ENV{GOCACHE} = "$dir/gocache";
$ENV{GOPATH} = "$dir/gopath";
$ENV{GOTOOLCHAIN} = 'local';
$ENV{GOPROXY} = 'off';
$ENV{GOFLAGS} = '';
$ENV{PPROF_TMPDIR} = $dir;

# ---- helpers ---------------------------------------------------------------

# pprof strings are UTF-8; nytp calls prints names as the profile has them
# (bytes of a UTF-8 name, or Latin-1 bytes).
sub as_text {
    my $b = shift;
    my $copy = $b;
    return $copy if utf8::decode($copy) && $copy =~ /[^\x00-\x7f]/;
    return Encode::decode('latin1', $b);
}

sub pprof_cmd {
    my (@args) = @_;
    my ($st, $out, $err) = run_cmd([$go, 'tool', 'pprof', @args]);
    return ($st, Encode::decode('UTF-8', $out), $err);
}

# -top: total and flat per function
sub pprof_top {
    my ($file, @opt) = @_;
    my ($st, $out, $err) = pprof_cmd('-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0',
                                     @opt, $file);
    return undef if $st;
    my %flat;
    my $total;
    my $rows = 0;
    for (split /\n/, $out) {
        $total = $1 if /Total samples = (\d+)(?:ns)?\b/;
        next unless /^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(.*)$/;
        $flat{$2} += $1;
        $rows++;
    }
    return {total => $total, flat => \%flat, rows => $rows, text => $out};
}

# -traces: each sample as "leaf<-caller..." => value
sub pprof_traces {
    my ($file, @opt) = @_;
    my ($st, $out, $err) = pprof_cmd('-traces', @opt, $file);
    return undef if $st;
    my (%t, $value, @stack);
    my $flush = sub {
        $t{join ';', reverse @stack} += $value if defined $value;
        ($value, @stack) = ();
    };
    for (split /\n/, $out) {
        if (/^-+\+-+$/) { $flush->(); next }
        if (/^\s*(\d+)(?:ns)?\s{3}(.*)$/) { $value = $1; push @stack, $2; next }
        push @stack, $1 if defined $value && /^\s{13}(.*)$/;
    }
    $flush->();
    return \%t;
}

sub ticks_per_sec {
    my $file = shift;
    my ($st, $out) = run_cmd([$nytp, 'dump', '--data', $file]);
    return $out =~ /^attribute\tticks_per_sec\t(\d+)$/m ? $1 : die "no ticks_per_sec in $file";
}

# nytp calls: per path, per leaf function, total (frames decoded: ';', LF,
# CR and '%' in names are written %3B, %0A, %0D, %25)
sub unescape_frame { my $f = shift; $f =~ s/%([0-9A-F]{2})/chr hex $1/ge; return $f }

sub calls_of {
    my ($files, @opt) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', @opt, @$files]);
    die "nytp calls failed: $err" if $st;
    my (%path, %flat, $total);
    for (split /\n/, $out) {
        my ($p, $v) = /^(.*) (-?\d+)$/ or die "bad line $_";
        $p = join ';', map { as_text(unescape_frame($_)) } split /;/, $p;
        $path{$p} += $v;
        $flat{(split /;/, $p)[-1]} += $v;
        $total += $v;
    }
    return {path => \%path, flat => \%flat, total => $total // 0};
}

sub scaled {
    my ($h, $k) = @_;
    return {map { $_ => $h->{$_} * $k } keys %$h};
}

sub nonzero { my $h = shift; return {map { $_ => $h->{$_} } grep { $h->{$_} } keys %$h} }

# ---- against nytp calls ----------------------------------------------------

my @cases = (
    [['demo.out'], 'demo'],
    [['demo-calls2.out'], 'calls=2'],
    [['recursion.out'], 'recursion'],
    [['evals.out'], 'string evals'],
    [['anon.out'], 'anon subs'],
    [['utf8-names.out'], 'UTF-8 and Latin-1 names'],
    [['tricky-strings.out'], 'tricky strings'],
    [['demo.out', 'recursion.out'], 'two inputs add up'],
);
for my $c (@cases) {
    my ($names, $label) = @$c;
    my @files = map { "$td/$_" } @$names;
    my $pb = "$dir/t.pb.gz";
    unlink $pb;
    my ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', $pb, @files]);
    is $st, 0, "$label: nytp pprof exits 0" or diag $err;
    is $err, '', "$label: nothing on stderr";
    is substr(slurp_file($pb) // '', 0, 2), "\x1f\x8b", "$label: a gzip file";
    my $k = 1e9 / ticks_per_sec($files[0]);
    my $calls = calls_of(\@files);
    my $ncalls = calls_of(\@files, '--calls');
    my $top = pprof_top($pb, '-unit=ns');
    ok $top, "$label: go tool pprof -top reads it" or next;
    ok $top->{rows} > 0, "$label: -top lists functions";
    is $top->{total}, $calls->{total} * $k, "$label: pprof total = nytp calls total";
    is_deeply nonzero($top->{flat}), nonzero(scaled($calls->{flat}, $k)),
        "$label: flat time per function = nytp calls per leaf sub";
    my $ctop = pprof_top($pb, '-sample_index=calls');
    is $ctop->{total}, $ncalls->{total}, "$label: pprof calls total = nytp calls --calls";
    is_deeply nonzero($ctop->{flat}), nonzero($ncalls->{flat}),
        "$label: flat calls per function = nytp calls --calls per leaf sub";
    my $tr = pprof_traces($pb, '-unit=ns');
    is_deeply nonzero($tr), nonzero(scaled($calls->{path}, $k)),
        "$label: pprof -traces = the call paths of nytp calls with their time";
    my $ctr = pprof_traces($pb, '-sample_index=calls');
    is_deeply nonzero($ctr), nonzero($ncalls->{path}), "$label: -traces calls = nytp calls --calls";
}

# ---- locations: file and line ----------------------------------------------

{
    my $pb = "$dir/demo.pb.gz";
    run_cmd([$nytp, 'pprof', '-o', $pb, "$td/demo.out"]);
    my ($st, $out) = pprof_cmd('-top', '-lines', '-nodefraction=0', $pb);
    # demo.pl: sub fib on line 21; fib calls itself on line 21, main calls it elsewhere
    like $out, qr{\bmain::fib \S*demo\.pl:21\n}, '-lines: a leaf frame is at its sub\'s first line';
    my ($st2, $raw) = pprof_cmd('-raw', $pb);
    like $raw, qr/^Samples:\nwall\/nanoseconds(?:\[dflt\])? calls\/count\n/m, 'sample types: wall (ns) and calls';
    like $raw, qr/^Duration: \S/m, 'duration is set';
    like $raw, qr/^Time: \S/m, 'time is set';
    # the call sites: main::count_words calls CORE:match from one line of demo.pl
    my ($st3, $tl) = pprof_cmd('-traces', '-lines', $pb);
    my ($line) = $tl =~ m{main::CORE:match \S*demo\.pl\n\s+main::count_words \S*demo\.pl:(\d+)\n};
    ok $line, 'a calling frame has a line';
    my $src = slurp_file("$td/demo.pl");
    my $text = (split /\n/, $src)[$line - 1] // '';
    like $text, qr/=~|\bsplit\b|\bm\//, "the calling line ($line) is the one that matches: $text";
}

# ---- line views: a sub's time split over its lines as NYTProf measured them ----
# (issue 21: go tool pprof -list showed the whole sub on its first line)
{
    my $pb = "$dir/lines.pb.gz";
    my ($st, undef, $err) = run_cmd([$nytp, 'pprof', '-o', $pb, "$td/demo.out"]);
    is $st, 0, 'line views: exit 0' or diag $err;
    my ($lst, $list) = pprof_cmd('-unit=ns', '-list', 'main::count_words$', $pb);
    is $lst, 0, 'line views: go tool pprof -list reads it';
    my %flat = map { /^\s*(\d+)ns\s+\S+\s+(\d+):/ ? ($2 => $1) : () } split /\n/, $list;
    my (undef, $data) = run_cmd([$nytp, 'dump', '--data', "$td/demo.out"]);
    my ($fid, $first, $last) = $data =~ /^sub_subinfo\tmain::count_words\t\[ (\d+):(\d+)-(\d+) /m;
    my %stmt;
    while ($data =~ /^fid_line_time\t$fid\t(\d+)\t\[ (\S+) /mg) {
        $stmt{$1} = $2 if $1 >= $first && $1 <= $last && $2 > 0;
    }
    is_deeply [sort { $a <=> $b } keys %flat], [sort { $a <=> $b } keys %stmt],
        'line views: the lines with time are those with statement time in the sub (' . join(',', sort keys %stmt) . ')';
    my $k = 1e9 / ticks_per_sec("$td/demo.out");
    my $excl = calls_of(["$td/demo.out"])->{flat}{'main::count_words'} * $k;
    my $sum = 0;
    $sum += $_ for values %flat;
    ok abs($sum - $excl) < 1, "line views: the lines add up to the sub's exclusive time ($sum ns)";
    my $stot = 0;
    $stot += $_ for values %stmt;
    # (each share is rounded down to whole ns, the last line takes what is left)
    my $n = keys %stmt;
    my @off = grep { abs($flat{$_} - $excl * $stmt{$_} / $stot) > $n } keys %stmt;
    is_deeply \@off, [], "line views: each line's share is its share of the sub's statement time";
    # the calls stay one per call, at the sub's first line
    my $ctop = pprof_top($pb, '-sample_index=calls');
    is $ctop->{flat}{'main::count_words'}, 1, 'line views: the call counted once';
}

# ---- without call events: call-site paths ------------------------------------

{
    my $prof = fresh_profile('nocalls', <<'PERL', 'calls=0');
sub inner { my $x = 0; $x += $_ for 1 .. 2000; return $x }
sub outer { my $t = 0; $t += inner() for 1 .. 20; return $t }
sub other { return inner() + 1 }
outer() for 1 .. 5;
other();
PERL
    my $pb = "$dir/nocalls.pb.gz";
    my ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', $pb, $prof]);
    is $st, 0, 'calls=0: exit 0';
    like $err, qr/^nytp pprof: warning: \S*nocalls\.out: no sub return events .*call-site data\n\z/,
        'calls=0: says on stderr that paths come from the call-site data';
    # the oracle: Devel::NYTProf::Data's exclusive time and calls per sub
    my ($ost, $oracle) = run_cmd([$^X, '-MDevel::NYTProf::Data', '-e', <<'PERL', $prof]);
my $p = Devel::NYTProf::Data->new({filename => shift, quiet => 1});
for my $si (values %{ $p->subname_subinfo_map }) {
    next unless $si->calls;
    printf "%s\t%.0f\t%d\n", $si->subname, $si->excl_time * 1e9, $si->calls;
}
PERL
    my (%excl, %ncalls);
    for (split /\n/, $oracle) {
        my ($n, $e, $c) = split /\t/;
        ($excl{$n}, $ncalls{$n}) = ($e, $c);
    }
    ok keys %excl >= 3, 'oracle lists the subs';
    my $top = pprof_top($pb, '-unit=ns');
    my $ctop = pprof_top($pb, '-sample_index=calls');
    for my $n (sort keys %excl) {
        ok abs(($top->{flat}{$n} // 0) - $excl{$n}) <= 2, "calls=0: flat time of $n = Devel::NYTProf::Data's excl_time"
            or diag "pprof $top->{flat}{$n}, oracle $excl{$n}";
        is $ctop->{flat}{$n}, $ncalls{$n}, "calls=0: calls of $n = Devel::NYTProf::Data's";
    }
    my $tr = pprof_traces($pb, '-sample_index=calls');
    is $tr->{'main::outer;main::inner'}, 100, 'calls=0: caller;called path with its calls';
    is $tr->{'main::other;main::inner'}, 1, 'calls=0: the other caller has its own path';
    ok !(grep { tr/;// > 1 } keys %$tr), 'calls=0: no path deeper than 2';
}

# ---- outputs and errors ------------------------------------------------------

{
    my $cwd = "$dir/cwd";
    mkdir $cwd;
    my ($st, $out, $err) = run_cmd([$nytp, 'pprof', "$td/demo.out"], cwd => $cwd);
    is $st, 0, 'default output: exit 0';
    ok -s "$cwd/nytprof.pb.gz", 'default output is nytprof.pb.gz';
    ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', '-', '-'], stdin => slurp_file("$td/demo.out"));
    is $st, 0, 'standard input to standard output: exit 0';
    is $out, slurp_file("$cwd/nytprof.pb.gz"), 'the same bytes as the file';

    ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', "$dir/x.pb.gz", "$dir/missing.out"]);
    is $st, 1, 'missing input: exit 1';
    is scalar(() = $err =~ /\n/g), 1, 'missing input: one line';
    like $err, qr/missing\.out/, 'missing input: names the file';
    ok !-e "$dir/x.pb.gz", 'missing input: no output file';

    ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', "$dir/x.pb.gz", "$td/broken/bad-tag.out"]);
    is $st, 1, 'corrupt input: exit 1';
    like $err, qr/offset \d+/, 'corrupt input: says where';
    ok !-e "$dir/x.pb.gz", 'corrupt input: no output file';

    my $trunc = "$td/broken/trunc-z-middle.out";
    ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', "$dir/t.pb.gz", $trunc]);
    is $st, 0, 'truncated input: exit 0';
    like $err, qr/trunc-z-middle\.out.*truncated|truncated.*trunc-z-middle/, 'truncated input: warns';
    ok pprof_top("$dir/t.pb.gz"), 'truncated input: pprof reads what was kept';
    ($st, $out, $err) = run_cmd([$nytp, 'pprof', '--strict', '-o', "$dir/s.pb.gz", $trunc]);
    is $st, 1, 'truncated input with --strict: exit 1';
    ok !-e "$dir/s.pb.gz", '--strict: no output file';

    ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', "$dir/no/such/dir/x.pb.gz", "$td/demo.out"]);
    is $st, 1, 'unwritable output: exit 1';
    is scalar(() = $err =~ /\n/g), 1, 'unwritable output: one line';

    # Times that are NaN, infinite or 1e300 count as nothing or as the most
    # a sample holds (2^62 ns), never as a negative number of nanoseconds.
    for my $k (qw(nan inf neginf huge)) {
        my $in = "$dir/time-$k.out";
        system(repo() . '/build/gen-profile', "time-$k", 3, $in) == 0 or die 'gen-profile failed';
        ($st, $out, $err) = run_cmd([$nytp, 'pprof', '-o', "$dir/time-$k.pb.gz", $in]);
        is $st, 0, "$k times: exit 0" or diag $err;
        my ($rst, $raw) = pprof_cmd('-raw', "$dir/time-$k.pb.gz");
        my @ns = $raw =~ /^\s*(-?\d+)\s+\d+:(?: \d+)+ *$/mg;
        is $rst, 0, "$k times: go tool pprof reads it";
        is scalar(@ns), 3, "$k times: its three call paths are samples";
        my @bad = grep { $_ < 0 || $_ > 2**62 } @ns;
        is_deeply \@bad, [], "$k times: every sample between 0 and 2^62 ns";
    }

    ($st, $out, $err) = run_cmd([$nytp, 'pprof', '--frob']);
    is $st, 2, 'unknown option: exit 2';
}

done_testing;
