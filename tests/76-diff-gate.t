#!/usr/bin/perl
# 'nytp diff' as a regression gate (issue 23), on real programs profiled
# by 'nytp run' here: the same program in two checkout directories
# matches (files, anonymous subs, string evals; --strip, --map, the
# common-suffix fallback, profiles of Devel::NYTProf without @INC);
# three runs a side of the same program never trip --fail-above=10, and a
# sub made 3 times slower is caught and named; exact counts (--by=statements,
# --by=calls) gate without noise; one run a side says no significance is
# computed; long names stay apart in the tables of top and diff; 'nytp html
# --base' shows the change of each sub, file and line and the
# differential flame graph.
use strict;
use warnings;
use Test::More;
use File::Copy ();
use File::Path ();
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use Encode ();

my $nytp = nytp();
my $dir = scratch_dir();
my $json = JSON::PP->new->utf8;

sub write_file {
    my ($path, $text) = @_;
    (my $d = $path) =~ s{/[^/]+$}{};
    File::Path::make_path($d);
    open my $fh, '>', $path or die "$path: $!";
    print $fh $text;
    close $fh;
}

# ---- the program, in three checkouts --------------------------------------------------
#
# prog.pl loads lib/M.pm (an anonymous sub, a string eval defining one)
# and lib/M/Work.pm, whose tuned() the slow checkout makes run 3 times
# the statements (1.5 times, in 3+3 runs on a noisy machine, was once
# not significant: p=0.19); X.pl, beside the checkout (CHECKOUT.extra/X.pl), is
# required by its absolute path, outside @INC and the program's directory.

my %src = (
    'prog.pl' => <<'EOP',
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use M;
use M::Work;
require "$FindBin::Bin.extra/X.pl";
my $n = shift // 2000;
my $total = 0;
for my $i (1 .. 20) {
    $total += M::Work::steady($n);
    $total += M::Work::tuned($n);
    $total += M::apply($i);
}
$total += M::evaluate(5) + X::x();
print "$total\n";
EOP
    'lib/M.pm' => <<'EOP',
package M;
use strict;
use warnings;
my $sq = sub { my $x = shift; return $x * $x };
sub apply { my $s = 0; $s += $sq->($_) for 1 .. shift() * 40; return $s }
sub evaluate {
    my $n = shift;
    my $code = eval "sub { my \$t = 0; \$t += \$_ for 1 .. \$_[0]; \$t }" or die $@;
    return $code->($n * 2000);
}
1;
EOP
    'lib/M/Work.pm' => <<'EOP',
package M::Work;
use strict;
use warnings;
sub steady { my $n = shift; my $x = 0; for my $i (1 .. $n) { $x += $i % 7 } return $x }
sub tuned { my $n = shift; my $x = 0; for my $i (1 .. $n * 1) { $x += $i % 7 } return $x }
1;
EOP
    '.extra/X.pl' => "package X;\nsub x { my \$s = 0; \$s += \$_ for 1 .. 500; \$s }\n1;\n",
);
my %ws = (a => "$dir/ci/ws-1234", b => "$dir/ci/ws-5678", slow => "$dir/ci/ws-9012");
for my $w (values %ws) {
    write_file(/^\./ ? "$w$_" : "$w/$_", $src{$_}) for keys %src;
}
{
    my $f = "$ws{slow}/lib/M/Work.pm";
    my $text = $src{'lib/M/Work.pm'};
    $text =~ s/\$n \* 1\)/\$n * 3)/ or die;
    write_file($f, $text);
}

my $serial = 0;
# profile($checkout, @nytprof_options) -> a profile of prog.pl there, run
# by its absolute path as CI does
sub profile {
    my ($w, $opts) = @_;
    my $out = "$dir/p" . ++$serial . ".out";
    my ($st, undef, $err) = run_cmd([$nytp, 'run', ($opts ? ("--nytprof=$opts") : ()), '-o', $out,
        "$w/prog.pl"]);
    die "nytp run $w/prog.pl failed ($st): $err" if $st || !-s $out;
    return $out;
}

sub names_of {
    my ($d, $table) = @_;
    return map { $_->{$table eq 'subs' ? 'name' : 'file'} } @{ $d->{$table} };
}

sub one_sided {
    my ($d) = @_;
    return grep { $_->{status} ne 'both' } map { @{ $d->{$_} } } qw(subs lines files);
}

# ---- 1. two checkouts match ---------------------------------------------------------

my ($pa, $pb) = (profile($ws{a}), profile($ws{b}));
{
    my ($st, $out) = run_cmd([$nytp, 'dump', '--tags=OPTION,ATTRIBUTE', $pa]);
    like $out, qr/^OPTION\tinc\t\Q$ws{a}\E\/lib(?::|$)/m,
        'Devel::NYTP writes @INC as the option inc, the checkout\'s lib first';
    unlike $out, qr/^ATTRIBUTE\tinc\t/m, '... and not as an attribute';

    # profiles written before have it as an attribute: still read.  Without
    # compression the line is in the file as it is; its tag is turned from
    # OPTION ('!') into ATTRIBUTE (':'), nothing else moves.
    my $old = profile($ws{a}, 'compress=0');
    my $bytes = do { local (@ARGV, $/) = ($old); <> };
    my $n = $bytes =~ s/!inc=\Q$ws{a}\E/:inc=$ws{a}/;
    open my $fh, '>', $old or die $!;
    print {$fh} $bytes;
    close $fh;
    ($st, $out) = run_cmd([$nytp, 'dump', '--tags=OPTION,ATTRIBUTE', $old]);
    ok $n && $out =~ /^ATTRIBUTE\tinc\t\Q$ws{a}\E\/lib/m && $out !~ /^OPTION\tinc/m,
        'a profile with inc as an attribute, as written before';
    my $od = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', $old, $pb], 'the attribute inc'), 'attribute inc');
    is_deeply [one_sided($od)], [], 'inc as an attribute: two checkouts match, no added or removed row';
    my %ofiles = map { $_ => 1 } names_of($od, 'files');
    ok $ofiles{'M.pm'} && $ofiles{'M/Work.pm'}, 'inc as an attribute: files named relative to @INC';

    my $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', $pa, $pb], 'two checkouts'), 'checkouts');
    is_deeply [one_sided($d)], [], 'two checkouts: no added or removed row';
    my %files = map { $_ => 1 } names_of($d, 'files');
    ok $files{$_}, "two checkouts: the file $_" for 'prog.pl', 'M.pm', 'M/Work.pm';
    my %subs = map { $_ => 1 } names_of($d, 'subs');
    ok $subs{'M::__ANON__[M.pm:4]'}, 'the anonymous sub named after its file\'s key';
    ok $subs{'M::__ANON__[(eval 0)[M.pm:8]:1]'}, 'the string eval\'s sub: eval number 0, file\'s key';
    ok !grep({ /ws-\d+/ } keys %subs, keys %files), 'no checkout directory in any name';
    is $d->{paired_by_suffix}, 1, 'X.pl, outside @INC and the program\'s directory: paired by its path\'s end';
    ok $files{'X.pl'}, '... named by the common suffix';
    my ($line) = grep { $_->{file} eq 'M/Work.pm' && $_->{line} == 5 } @{ $d->{lines} };
    is $line->{count_base}, $line->{count_new}, 'a line of the two checkouts: the same statements';

    # --map and --strip for what nothing else matches
    $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', "--map=$ws{a}.extra/=$ws{b}.extra/", $pa, $pb],
        '--map'), '--map');
    is $d->{paired_by_suffix}, 0, '--map: nothing left to pair';
    is_deeply [one_sided($d)], [], '--map: no added or removed row';
    ok grep({ $_ eq "$ws{b}.extra/X.pl" } names_of($d, 'files')), '--map: BASE\'s file under NEW\'s name';
    $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', "--strip=$ws{a}.extra", "--strip=$ws{b}.extra/",
        $pa, $pb], '--strip'), '--strip');
    is $d->{paired_by_suffix}, 0, '--strip: nothing left to pair';
    ok grep({ $_ eq 'X.pl' } names_of($d, 'files')), '--strip: the file relative to the prefix';
    # a --map that names no file changes nothing; its OLD ends at a '/'
    $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', "--map=$ws{a}.ex=/elsewhere", $pa, $pb],
        '--map, a partial name'), '--map partial');
    is $d->{paired_by_suffix}, 1, '--map maps whole directories only';

    # exact counts: the gate passes on the same code in two checkouts
    run_ok(['diff', '--fail-above=1', '--by=statements', $pa, $pb], 'two checkouts, --by=statements');
    run_ok(['diff', '--fail-above=1', '--by=calls', $pa, $pb], 'two checkouts, --by=calls');
    my ($text) = run_ok(['diff', $pa, $pb], 'one run a side, text');
    like $text, qr/^One run per side: no significance computed/m, 'one run a side: no significance, said so';
    $d = decode_ok(scalar run_ok(['diff', '--json', $pa, $pb], 'one run, JSON'), 'one run');
    is $d->{test}, undef, 'one run a side: JSON test null';
    is $d->{subs}[0]{p}, undef, 'one run a side: p null';
}

# Devel::NYTProf's profiles have no inc: the program's directory, then
# the common suffix, match them.
SKIP: {
    my $bin = "$dir/ci2";
    for my $w ("$bin/ws-1", "$bin/ws-2") {
        write_file("$w/bin/prog.pl", "use FindBin;\nuse Cwd ();\nuse lib Cwd::abs_path(\"\$FindBin::Bin/../lib\");\nuse M;\n"
            . "M::apply(3) for 1 .. 3;\nprint M::evaluate(1), \"\\n\";\n");
        write_file("$w/lib/M.pm", $src{'lib/M.pm'});
    }
    my @p = map { fresh_profile("oracle-$_", "$bin/ws-$_/bin/prog.pl") } 1, 2;
    my $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', @p], 'Devel::NYTProf, two checkouts'), 'oracle');
    is_deeply [one_sided($d)], [], 'Devel::NYTProf\'s profiles of two checkouts: no added or removed row';
    ok grep({ $_ eq 'lib/M.pm' } names_of($d, 'files')), 'lib/M.pm paired by its path\'s end';
    cmp_ok $d->{paired_by_suffix}, '>=', 1, 'said how many files were paired so';
    ok grep({ $_ eq 'M::__ANON__[lib/M.pm:4]' } names_of($d, 'subs')), '... and its anonymous sub follows';
}

# ---- 2. and 3. repeated runs: noise and a slowdown -------------------------------------
#
# CPU time (clock=2, traced, so that the same runs also have counts) and
# --normalize (nytp-diff(1) now recommends sampling with the CPU clock for
# a time gate: traced, the clock's cost at each statement dilutes a
# change of short statements); the runs of the sides interleaved; and a
# --min-time that leaves out subs too small to measure, as it also
# recommends: at the default 1%, main::BEGIN@4 (use lib, 0.7 ms, 1.6% of
# the run) once tripped the check on the same program (+35%, p=0.039).
# The slower sub runs 3 times the statements and is checked against a
# threshold of 25%: the sub beside it, unchanged, came out 15% slower
# (p=0.003) in one of 40 runs of this file, and 10% is within its noise.

my (@base, @same, @slow);
for (1 .. 3) {
    push @base, profile($ws{a}, 'clock=2');
    push @same, profile($ws{b}, 'clock=2');
    push @slow, profile($ws{slow}, 'clock=2');
}
{
    my ($out, $err) = run_ok(['diff', '--normalize', '--fail-above=10', '--min-time=5%', @base, '--', @same],
        'the same program, 3 runs a side, --fail-above=10');
    is $err, '', 'noise: nothing named';
    like $out, qr/^p: Welch's t-test on the logs of 3\+3 runs; ~: not significant \(p >= 0\.05\)$/m,
        'the test is named';
    my $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', '--fail-above=10', '--min-time=5%', '--normalize', @base, '--', @same],
        'noise JSON'), 'noise');
    is_deeply $d->{n}, {base => 3, new => 3}, 'JSON: n of each side';
    is $d->{test}{name}, 'welch-t-log', 'JSON: the test';
    ok !$d->{check}{failed}, 'JSON: the check passed';
    my ($row) = grep { $_->{name} eq 'M::Work::steady' } @{ $d->{subs} };
    is scalar @{ $row->{base_runs} }, 3, 'JSON: the value of each run';
    my @v = sort { $a <=> $b } @{ $row->{base_runs} };
    ok abs($row->{base}{excl} - $v[1]) <= 1e-12, 'JSON: the centre is the median';
    ok defined $row->{p} && $row->{p} >= 0 && $row->{p} <= 1, 'JSON: a p-value';
    ok defined $d->{total}{p}, 'JSON: the total has a p-value';
    ok exists $d->{lines}[0]{p} && exists $d->{files}[0]{p}, 'JSON: lines and files have p-values';

    # exact counts never vary: no change, p = 1
    run_ok(['diff', '--by=statements', '--fail-above=1', @base, '--', @same], 'noise, --by=statements');
}
{
    my ($out, $err) = run_ok(['diff', '--normalize', '--fail-above=25', '--min-time=5%', @base, '--', @slow],
        'a sub 3 times slower, 3 runs a side', status => 3);
    like $err, qr/^nytp diff: M::Work::tuned: exclusive time grew by \+\d+(?:\.\d)?% \(\S+ -> \S+; p=\S+, 3\+3 runs\), more than --fail-above=25%$/m,
        'the slower sub is named, with its p-value';
    my @named = $err =~ /^nytp diff: (\S+):/mg;
    is_deeply \@named, ['M::Work::tuned'], 'only it' or diag $err;
    my ($row) = $out =~ /^(.*M::Work::tuned)$/m;
    like $row, qr/\+\d+(?:\.\d)?%\s+\S+\s/, 'its row has a change, not ~';
    my $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', '--fail-above=25', '--min-time=5%', '--normalize', @base, '--', @slow],
        'slow JSON', status => 3), 'slow');
    ($row) = grep { $_->{name} eq 'M::Work::tuned' } @{ $d->{subs} };
    ok $row->{significant}, 'JSON: significant';
    ok $row->{grew}, 'JSON: it grew past the threshold';
    cmp_ok $row->{p_grew_adjusted}, '<', 0.05, 'JSON: the check\'s p-value';
    is_deeply $d->{check}{subs_grew}, ['M::Work::tuned'], 'JSON: the check names it';

    # the recommended gate: statements executed, exact
    ($out, $err) = run_ok(['diff', '--by=statements', '--fail-above=1', @base, '--', @slow],
        '--by=statements: work grew', status => 3);
    like $err, qr/^nytp diff: M::Work::tuned: statements grew by \+200% \(40080 -> 120080; p=0, 3\+3 runs\)/m,
        '--by=statements: the sub named, its statements exact';
    like $out, qr/^\+80000\s+\+200%\s+0\s+40080\s+120080\s+20 -> 20\s+M::Work::tuned$/m,
        '--by=statements: its row, p 0 (counts that differ for certain)';
    ($out, $err) = run_ok(['diff', '--by=calls', '--fail-above=1', @base, '--', @slow], '--by=calls: no more calls');
    ($out, $err) = run_ok(['diff', '--by=statements', '--fail-above=1', $base[0], $slow[0]],
        '--by=statements, one run a side', status => 3);
    like $err, qr/M::Work::tuned: statements grew/, 'one run a side is enough for counts';
}

# ---- 5. the report that compares --------------------------------------------------------

{
    my $rep = "$dir/report-slow";
    my ($out, $err) = run_ok(['html', '--normalize', (map { "--base=$_" } @base), '-o', $rep, @slow],
        'html --base --normalize, 3 runs a side');
    my $index = slurp_file("$rep/index.html");
    like $index, qr{<dt>Compared with<dd>\Q<code>$base[0]</code>, <code>$base[1]</code>, <code>$base[2]</code>\E <span class=note>\(BASE: 3 runs; this profile: 3 runs},
        'the header names the base files and the runs of each side';
    like $index, qr{<th class="n cmp"[^>]*>Before<th class="n cmp"[^>]*>After<th class="n cmp"[^>]*>Change<th class="n cmp"[^>]*>p},
        'the tables have the change columns';
    my ($subs) = $index =~ m{<table class="sort subs" id=topsubs>(.*?)</table>}s;
    my ($tuned) = ($subs // '') =~ m{(<tr>[^\n]*M::Work::tuned[^\n]*)};
    like $tuned // '', qr{^<tr><td>60<td>1<td>1<td class=bar},
        'the slower sub\'s row: 60 calls (20 in each of the 3 runs), from 1 place in 1 file'
        or diag $subs // $index;
    like $tuned // '', qr{<td class="cmp slower" data-v=[\d.]+>\+\d+\.\d%<td class=cmp data-v=[\d.e-]+>[\d.e-]+$},
        'the slower sub\'s row: its change in red, its p-value' or diag $tuned // $subs // $index;
    # the same program: most changes are noise, shown as ~
    my $same = "$dir/report-same";
    run_ok(['html', (map { "--base=$_" } @base), '-o', $same, @same], 'html --base, the same program');
    my ($top) = slurp_file("$same/index.html") =~ m{<table class="sort subs" id=topsubs>(.*?)</table>}s;
    my @cells = ($top // '') =~ m{<td class="cmp (\w+)"[^>]*>}g;
    my $noise = grep { $_ eq 'noise' } @cells;
    ok @cells >= 10 && $noise > @cells / 2, "the same program: most subs' changes are ~ ($noise of " . scalar(@cells) . ')';
    like $top // '', qr{<td class="cmp noise" data-v=[-\d.e]+ title="[-+][\d.]+%, not significant">~<td class=cmp data-v=[\d.e-]+>},
        '~ with the change as its title, then p';
    my ($file) = $index =~ m{href="(f\d+-[^"]*M-Work-pm\.html)"};
    ok $file, 'the file page of M/Work.pm is linked';
    my $page = slurp_file("$rep/" . ($file // 'none'));
    like $page, qr{<tr id=L5><td>5<td>[^\n]*<td class="cmp slower" data-v=[\d.]+>\+\d+\.\d%<td class=cmp },
        'the line view: the slower line\'s change';
    like $page, qr{within <b class=name>M::Work::tuned</b>[^\n]*<span class=note>\(\S+ exclusive in BASE, \+\d+\.\d%, p=},
        'the sub\'s headline says what it was in BASE';
    my $svg = slurp_file("$rep/flame.svg");
    like $svg, qr/Differential flame graph of /, 'the flame graph is the differential one';
    like $svg, qr/<title>M::Work::tuned\n[^<]*; \+\S+ \(\+\d+(?:\.\d)?%\) against \S+ in BASE<\/title>/,
        'the slower sub\'s frame says its change';
    ok !defined xml_problem($svg), 'the differential flame graph is well-formed';

    # the differential flame graph with 3 runs a side: a frame is coloured
    # only when its sub's change is significant, the rest drawn neutral
    my $frames = sub {
        my ($s) = @_;
        my @f;
        while ($s =~ m{<g class="f" data-d="(\d+)"><title>([^\n]*)\n([^<]*)</title><rect [^>]*fill="rgb\((\d+,\d+,\d+)\)"}g) {
            push @f, {depth => $1, name => $2, note => $3, grey => $4 eq '235,235,235'} if $1 > 0;
        }
        return @f;
    };
    my ($tuned_frame) = grep { $_->{name} eq 'M::Work::tuned' } $frames->($svg);
    ok $tuned_frame && !$tuned_frame->{grey}, 'html --base flame graph: the slower sub\'s frame is coloured';
    my @slow_frames = $frames->(scalar run_ok(['diff', '--svg', @base, '--', @slow], 'diff --svg, 3 runs a side'));
    ($tuned_frame) = grep { $_->{name} eq 'M::Work::tuned' } @slow_frames;
    ok $tuned_frame && !$tuned_frame->{grey} && $tuned_frame->{note} !~ /not significant/,
        'diff --svg, 3+3 runs: the slower sub\'s frame is coloured';
    my @same_frames = $frames->(scalar run_ok(['diff', '--svg', @base, '--', @same], 'diff --svg, the same program'));
    my $grey = grep { $_->{grey} } @same_frames;
    ok @same_frames >= 10 && $grey > 0.8 * @same_frames,
        "diff --svg, the same program 3+3 runs: frames neutral ($grey of " . scalar(@same_frames) . ')';
    ok grep({ $_->{note} =~ /; not significant \(p=[\d.e-]+\)$/ } @same_frames), '... saying not significant, with p';
    my ($one) = run_ok(['diff', '--svg', $base[0], $same[0]], 'diff --svg, one run a side');
    unlike $one, qr/not significant|not tested/, 'one run a side: no test, every frame coloured as before';

    # the columns of the report's own runs are their sums, and say so
    like $subs // '', qr{^<thead><tr><th[^>]*>Calls<br><span class=note>sum of 3 runs</span>},
        'several runs: Calls is labelled as the sum of the 3 runs';
    like $index, qr{the other columns are this profile's 3 runs added up}, '... and the note says so';

    # --by=statements: ranked and compared by what the count gate judged
    $rep = "$dir/report-stmts";
    run_ok(['html', '--by=statements', (map { "--base=$_" } @base), '-o', $rep, @slow],
        'html --by=statements --base, 3 runs a side');
    $index = slurp_file("$rep/index.html");
    ($subs) = $index =~ m{<table class="sort subs" id=topsubs>(.*?)</table>}s;
    my ($first) = ($subs // '') =~ m{<tbody>\n(<tr>[^\n]*)};
    like $first // '', qr{M::Work::tuned</a><td class=cmp data-v=40080>40080<td class=cmp data-v=120080>120080<td class="cmp slower" data-v=199\.6\d*>\+199\.6%<td class=cmp data-v=0>0$},
        '--by=statements --base: the sub whose statements grew is first, its medians and change exact'
        or diag $subs // $index;
    like $subs // '', qr{title="statements executed in BASE \(median of the runs\)">Before}, '... the columns say what they compare';
    like $first // '', qr{<td>360240<td class=name>}, '... its statements summed over the 3 runs, beside them';
    like $subs // '', qr{>Statements<br><span class=note>sum of 3 runs</span>}, '... and labelled so';
    like $index, qr{<dt>Total change<dd>\d+ \S+ \d+ \(\+[\d.]+%, p=0\) <span class=note>statements executed</span>},
        '--by=statements: the total change is of statements';
    ($file) = $index =~ m{href="(f\d+-[^"]*M-Work-pm\.html)"};
    like slurp_file("$rep/" . ($file // 'none')), qr{<tr id=L5><td>5<td>[^\n]*<td class=cmp data-v=40080>40080<td class=cmp data-v=120080>120080<td class="cmp slower" data-v=199\.6\d*>\+199\.6%},
        '--by=statements: the line view compares the line\'s statements';
    $rep = "$dir/report-stmts-alone";
    run_ok(['html', '--by=statements', '-o', $rep, $slow[0]], 'html --by=statements, no base');
    ($subs) = slurp_file("$rep/index.html") =~ m{<table class="sort subs" id=topsubs>(.*?)</table>}s;
    ($first) = ($subs // '') =~ m{<tbody>\n(<tr>[^\n]*)};
    like $first // '', qr{<td>120080<td class=name><a [^>]*>M::Work::tuned</a>$}, 'html --by=statements alone: ranked by statements';
    unlike $subs // '', qr{sum of}, '... one run: no sums labelled';
    my ($bst, undef, $berr) = run_cmd([$nytp, 'html', '--by=bytes', '-o', "$dir/report-x", $pa]);
    is $bst, 2, 'html --by=bytes: usage error';

    # one run a side, two checkouts: everything matched, no significance
    $rep = "$dir/report-one";
    run_ok(['html', "--base=$pa", '-o', $rep, $pb], 'html --base, one run a side');
    $index = slurp_file("$rep/index.html");
    like $index, qr/One run on a side: no significance is computed/, 'one run: said so';
    unlike $index, qr{>p(?:<th|</thead>)}, 'one run: no p column';
    unlike $index, qr{class="cmp slower" data-v=1e300>new}, 'two checkouts: no sub is new';
    # without --base, no change columns
    $rep = "$dir/report-plain";
    run_ok(['html', '-o', $rep, $pb], 'html without --base');
    unlike slurp_file("$rep/index.html"), qr/class="n cmp"|Compared with/, 'without --base: no change columns';
    # standard input can be read once; --normalize needs a base
    my ($st) = run_cmd([$nytp, 'html', '--base=-', '-o', "$dir/report-x", '-']);
    is $st, 2, 'html --base=- -: usage error';
    ($st) = run_cmd([$nytp, 'html', '--normalize', '-o', "$dir/report-x", $pa]);
    is $st, 2, 'html --normalize without --base: usage error';
}

# usage
for my $u (['--by=bytes'], ['--alpha=0'], ['--alpha=1.5'], ['--map=nothing'], ['--map==x'],
           ['--strip='], ['--by=statements', '--min-time=5ms']) {
    my ($st, $out, $err) = run_cmd([$nytp, 'diff', @$u, $pa, $pb]);
    is $st, 2, "@$u: usage error";
    is scalar(() = $err =~ /\n/g), 1, "@$u: one line" or diag $err;
}

# ---- 4. names that stay apart ---------------------------------------------------------

{
    my $prog = "$dir/names.pl";
    my $pkg = 'Perl::Tidy::Tokenizer::Very::Long::Package';
    write_file($prog, join '',
        map({ "sub ${pkg}::$_ { my \$x = 0; \$x += \$_ for 1 .. 300; \$x }\n" }
            qw(tokenize_this_line tokenizer_main_loop)),
        "sub Perl::Tidy::Formatter::Very::Long::Package::tokenize_this_line { my \$x = 0; \$x += \$_ for 1 .. 300; \$x }\n",
        "for (1 .. 5) { ${pkg}::tokenize_this_line(); ${pkg}::tokenizer_main_loop();"
        . " Perl::Tidy::Formatter::Very::Long::Package::tokenize_this_line() }\n");
    my ($p1, $p2) = map { profile_of($prog) } 1, 2;
    sub profile_of {
        my $out = "$dir/n" . ++$serial . ".out";
        my ($st, undef, $err) = run_cmd([$nytp, 'run', '-o', $out, shift]);
        die $err if $st;
        return $out;
    }
    my @long = ("${pkg}::tokenize_this_line", "${pkg}::tokenizer_main_loop",
        'Perl::Tidy::Formatter::Very::Long::Package::tokenize_this_line');
    for my $args (['top', '-n', '0', $p1], ['diff', '-n', '0', $p1, $p2]) {
        my $label = $args->[0];
        local $ENV{COLUMNS} = 80;
        my ($st, $out, $err) = run_cmd([$nytp, @$args]);
        is $st, 0, "$label at 80 columns" or diag $err;
        my ($subs) = $out =~ /^(Subs by .*?)\n\n/ms;
        my @rows = grep { /tokeni/ } split /\n/, $subs // '';
        is scalar @rows, 3, "$label: three rows";
        my @names = map { /(\S+)$/ ? $1 : '' } @rows;
        my %seen;
        is scalar(grep { !$seen{$_}++ } @names), 3, "$label: no two rows read the same" or diag join "\n", @rows;
        ok !grep({ length(Encode::decode('UTF-8', $_)) > 80 } split /\n/, $out), "$label: every line fits";
        ok scalar(grep { /tokenize_this_line$|tokenizer_main_loop$/ } @names) == 3,
            "$label: each keeps its own name" or diag join "\n", @names;
        my ($loop) = grep { /tokenizer_main_loop$/ } @names;
        like $loop // '', qr/^Perl::(?:\w+::)*\x{e2}\x{80}\x{a6}::tokenizer_main_loop$/,
            "$label: the middle of the package path cut";
        # not a terminal, no COLUMNS: the full names
        delete local $ENV{COLUMNS};
        ($st, $out) = run_cmd([$nytp, @$args]);
        ok index($out, $_) >= 0, "$label without a width: $_ in full" for @long;
    }
    my $d = decode_ok(scalar run_ok(['diff', '--json', $p1, $p2], 'names JSON'), 'names JSON');
    my %n = map { $_ => 1 } names_of($d, 'subs');
    ok $n{$_}, "diff --json: $_ in full" for @long;
}

done_testing;
