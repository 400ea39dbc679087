#!/usr/bin/perl
# 'nytp calls' and 'nytp flame' against the oracle: the same set of lines
# as nytprofcalls on testdata and on fresh profiles (calls=2, evals, several
# inputs), truncated and corrupt inputs, the collapsed stacks through
# Devel::NYTProf's flamegraph.pl, and nytp's own SVG: well-formed, escaped,
# frame sizes equal to the oracle's path sums, options, loaded in headless
# Chromium (no console errors, a click zooms, search matches the oracle's
# share), and a profile with 100,000 distinct stacks drawn small.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use Encode ();

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();
my $flamegraph = '/usr/share/perl5/Devel/NYTProf/flamegraph.pl';

# ---- helpers ---------------------------------------------------------------

sub oracle_lines {
    my (@args) = @_;
    my ($st, $out, $err) = run_cmd(['nytprofcalls', @args]);
    die "nytprofcalls @args failed ($st): $err" if $st;
    return $out;
}

sub sorted { return join '', sort split /^/, $_[0] }

sub same_set {
    my ($ours, $theirs, $label) = @_;
    my ($a, $b) = (sorted($ours), sorted($theirs));
    return pass("$label: same lines as nytprofcalls") if $a eq $b && length $a;
    fail "$label: same lines as nytprofcalls";
    my %in_b = map { $_ => 1 } split /^/, $b;
    my %in_a = map { $_ => 1 } split /^/, $a;
    diag "only nytp:   $_" for (grep { !$in_b{$_} } split /^/, $a)[0 .. 4];
    diag "only oracle: $_" for (grep { !$in_a{$_} } split /^/, $b)[0 .. 4];
    return 0;
}

# nytprofcalls never folds deep recursion: --max-recursion=0 is its
# behaviour (the default, 1000, changes only the deep program's lines).
# It prints names as they are: ours decoded (%3B, %0A, %0D, %25) are its.
sub compare_calls {
    my ($files, $label) = @_;
    for my $mode ([], ['--calls']) {
        my ($st, $out, $err) = run_cmd([$nytp, 'calls', '--max-recursion=0', @$mode, @$files]);
        my $l = "$label @$mode";
        is $st, 0, "$l: exit 0";
        is $err, '', "$l: no warning";
        $out =~ s/%(3B|0A|0D|25)/chr hex $1/ge;
        same_set($out, oracle_lines(@$mode, @$files), $l);
    }
}

# path => value from collapsed lines
sub parse_lines {
    my %v;
    for (split /\n/, $_[0]) {
        /^(.*) (-?\d+)$/ or die "bad line: $_";
        $v{$1} += $2;
    }
    return \%v;
}


sub unescape_xml {
    my $s = shift;
    $s =~ s/&#(\d+);/chr $1/ge;
    $s =~ s/&lt;/</g;
    $s =~ s/&gt;/>/g;
    $s =~ s/&quot;/"/g;
    $s =~ s/&#39;/'/g;
    $s =~ s/&amp;/&/g;
    return $s;
}

# The frames of one of our SVGs, in file order: depth, name, title stats,
# x, width, fill, label, link, and the path of names down to it.
sub svg_frames {
    my $svg = Encode::decode('UTF-8', $_[0]);
    my (@frames, @path);
    while ($svg =~ m{(?:<a href="([^"]*)" target="_top">)?<g class="f( m)?" data-d="(\d+)"><title>(.*?)\n(.*?)</title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="[\d.]+" fill="([^"]+)" rx="2"/><text x="[\d.]+" y="[\d.]+">(.*?)</text></g>}gs) {
        my %f = (link => $1, merged => !!$2, d => $3, name => unescape_xml($4), info => $5,
                 x => $6, y => $7, w => $8, fill => $9, label => unescape_xml($10));
        $path[$f{d} - 1] = $f{name} if $f{d} > 0;
        $#path = $f{d} - 1;
        $f{path} = join ';', @path;
        push @frames, \%f;
    }
    return @frames;
}

sub svg_of {
    my ($args, $label) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'flame', '--svg', @$args]);
    is $st, 0, "$label: exit 0" or diag $err;
    my $p = xml_problem($out);
    ok !defined $p, "$label: well-formed XML" or diag $p;
    return $out;
}

# ---- nytp calls against nytprofcalls -------------------------------------------

opendir my $dh, $td or die;
my @good = sort grep { /\.out\z/ } readdir $dh;
compare_calls(["$td/$_"], $_) for @good;
compare_calls(["$td/demo.out", "$td/recursion.out", "$td/evals.out"], 'three inputs');

my @programs = qw(evals-loop closures xsubs-slowops modules fork deep);
for my $prog (@programs) {
    for my $v ('', 'calls=2') {
        # Devel::NYTProf 6.12 dies with calls=2 on deep recursion.
        next if $prog eq 'deep' && $v;
        my $name = "calls-$prog-" . ($v || 'default');
        $name =~ s/=/-/g;
        my $f = fresh_profile($name, repo() . "/tests/programs/$prog.pl", $v);
        compare_calls([$f], "$prog ($v)");
        next unless $prog eq 'deep';
        # down(2000): 2001 frames of main::down, the last 1001 folded
        my ($st, $out) = run_cmd([$nytp, 'calls', '--calls', $f]);
        my $fold = "\x{2026}[\x{d7}";
        utf8::encode($fold);
        like $out, qr/^(?:main::down;){1000}main::down\Q$fold\E1001\] 1001$/m,
            'deep: main::down folded beyond 1000 frames';
        my ($st0, $all) = run_cmd([$nytp, 'calls', '--calls', '--max-recursion=0', $f]);
        my $sum = sub { my $t = 0; $t += $_ for $_[0] =~ / (\d+)$/mg; $t };
        is $sum->($out), $sum->($all), 'deep: folded, the same number of calls';
    }
}

# eval names: subs made by many string evals of one line share a path, its
# sequence numbers gone
{
    my $f = fresh_profile('anon-evals', <<'EOF');
my $t = 0;
for my $i (1 .. 7) {
    my $f = eval 'sub { $_[0] + 1 }';
    $t += $f->($i);
    eval q{ my $g = eval 'sub { 2 }'; $t += $g->() };
}
print "$t\n";
EOF
    compare_calls([$f], 'anon subs from evals');
    my ($st, $out) = run_cmd([$nytp, 'calls', '--calls', $f]);
    unlike $out, qr/\(eval [1-9]\d*\)\[/, 'evals: no eval sequence number left';
    like $out, qr/^main::__ANON__\[\(eval 0\)\[[^\]]*anon-evals\.pl:3\]:1\] 7$/m,
        'evals: the 7 anon subs of one eval line are one path';
    like $out, qr/^main::__ANON__\[\(eval 0\)\[\(eval 0\)\[[^\]]*:5\]:1\]:1\] 7$/m,
        'evals: nested evals too';
}

# Totals in and out that differ (floating-point sums in another order)
# give nytprofcalls' warning.  A profile written by hand: 1e16 + 1 rounds
# to 1e16 in the order read, not in the order printed.
{
    my $ret = sub { my ($d, $excl, $name) = @_;
        return '<' . chr($d) . pack('d<', $excl) . pack('d<', $excl) . "'" . chr(length $name) . $name };
    my $bytes = "NYTProf 5 0\n:ticks_per_sec=10000000\n" . 'P' . chr(1) . chr(0) . pack('d<', 1)
        . $ret->(1, 1e16, 'A') . $ret->(2, 1, 'X') . $ret->(1, -1e16, 'C') . 'p' . chr(1) . pack('d<', 2);
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', '-'], stdin => $bytes);
    is $st, 0, 'hand-made profile: exit 0';
    is sorted($out), "A 10000000000000000\nC -10000000000000000\nC;X 1\n", 'hand-made profile: its paths';
    open my $fh, '>:raw', "$dir/hand.out" or die;
    print $fh $bytes;
    close $fh;
    same_set($out, oracle_lines("$dir/hand.out"), 'hand-made profile');
    like $err, qr/\A[^\n]*inconsistency: total in 0 doesn't match total out 1\n\z/,
        'totals that differ: the warning of nytprofcalls';
}

# A profile without sub return events: the caller;called paths of its
# call sites (SUB_CALLERS), as pprof and speedscope show it (nytprofcalls
# prints nothing), with one warning saying so; calls, flame and diff --svg
# alike.
{
    my $f = fresh_profile('calls0', repo() . '/tests/programs/closures.pl', 'calls=0');
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', '--calls', $f]);
    is $st, 0, 'calls=0 profile: exit 0';
    my $want = qr/\A[^\n]*calls0\.out: no sub return events \(profiled with calls=0\?\): caller;called paths from the call-site data\n\z/;
    like $err, $want, 'calls=0 profile: one warning, that paths come from the call sites';
    my @lines = split /\n/, $out;
    ok @lines > 0, 'calls=0 profile: calls prints paths (' . scalar(@lines) . ')';
    is scalar(grep { !/\A[^;]+(?:;[^;]+)? \d+\z/ } @lines), 0, '... each caller;called or called alone';
    my $sum = 0;
    $sum += (/ (\d+)\z/)[0] for @lines;
    my (undef, $json) = run_cmd([$nytp, 'dump', '--data', '--json', $f]);
    my $m = JSON::PP->new->decode($json);
    my $calls = 0;
    $calls += $_->{calls} // 0 for @{ $m->{subs} };
    is $sum, $calls, "... their calls add up to the profile's sub calls ($calls)";
    my ($fst, $fout, $ferr) = run_cmd([$nytp, 'flame', '--calls', $f]);
    is $fout, $out, 'calls=0 profile: flame prints the same paths';
    like $ferr, $want, '... with the same warning';
    ($fst, $fout, $ferr) = run_cmd([$nytp, 'flame', '--svg', $f]);
    my $frames = () = $fout =~ /<g /g;
    cmp_ok $frames, '>', 2, "calls=0 profile: flame --svg draws the paths ($frames frames)";
    my ($dst, $dout, $derr) = run_cmd([$nytp, 'diff', '--svg', $f, $f]);
    is $dst, 0, 'calls=0 profiles: diff --svg exit 0';
    like $derr, qr/\Anytp diff: warning: BASE \S*calls0\.out: no sub return events \(profiled with calls=0\?\): caller;called paths from the call-site data\nnytp diff: warning: NEW /,
        '... says for each side that paths come from the call sites';
    my $dframes = () = $dout =~ /<g /g;
    cmp_ok $dframes, '>', 2, "... and draws them ($dframes frames)";
}

# --stable: byte-sorted, same set; standard input; -o
{
    my ($st, $out) = run_cmd([$nytp, 'calls', '--stable', "$td/recursion.out"]);
    my @l = split /^/, $out;
    is_deeply \@l, [sort @l], '--stable sorts the lines';
    same_set($out, oracle_lines("$td/recursion.out"), '--stable');
    my ($st2, $out2) = run_cmd([$nytp, 'calls', '--stable', '-'], stdin => slurp_file("$td/recursion.out"));
    is $out2, $out, 'standard input gives the same lines';
    my ($st3, $out3) = run_cmd([$nytp, 'calls', '--stable', '-o', "$dir/calls.txt", "$td/recursion.out"]);
    is $st3, 0, '-o: exit 0';
    is $out3, '', '-o: nothing on standard output';
    is slurp_file("$dir/calls.txt"), $out, '-o writes the same lines';
    my ($st4, $out4) = run_cmd([$nytp, 'calls', '--stable'], cwd => $td);
    is $out4, '', 'no nytprof.out in testdata: nothing printed';
    is $st4, 1, 'no nytprof.out: exit 1';
}

# ---- truncated and corrupt inputs --------------------------------------------------

# Cut in the final PID_END: every return is there, so the lines are those
# of the complete file.
{
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', "$td/broken/trunc-z-end.out"]);
    is $st, 0, 'trunc-z-end: exit 0';
    like $err, qr/\A[^\n]*trunc-z-end\.out: truncated at offset \d+[^\n]*kept the calls before the cut\n\z/,
        'trunc-z-end: one warning line';
    same_set($out, oracle_lines("$td/demo.out"), 'trunc-z-end (as demo.out)');
}

# Cut at a chunk boundary in the middle of the run: the totals equal the
# returns that Devel::NYTProf::ReadStream reads before the cut; the calls
# still open are (unreturned).
{
    my $file = "$td/broken/trunc-plain-boundary.out";
    my ($ost, $sums) = run_cmd([$^X, '-MDevel::NYTProf::ReadStream=for_chunks', '-e',
        'my ($n, $t) = (0, 0); for_chunks { if ($_[0] eq "SUB_RETURN") { $n++; $t += $_[3] } } '
        . 'filename => $ARGV[0]; print "$n $t\n"', $file]);
    my ($n, $t) = (split /\n/, $sums)[-1] =~ /^(\d+) (\d+)$/;
    ok $n > 10, "trunc-plain-boundary: ReadStream sees $n returns";
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', $file]);
    is $st, 0, 'trunc-plain-boundary: exit 0';
    like $err, qr/\A[^\n]*truncated[^\n]*\d+ calls? still open at the end shown as \(unreturned\)\n\z/,
        'trunc-plain-boundary: one warning line, naming the open calls';
    my $v = parse_lines($out);
    my $sum = 0;
    $sum += $_ for values %$v;
    is $sum, $t, 'trunc-plain-boundary: exclusive ticks add up to the returns before the cut';
    ok((grep { /^\(unreturned\)/ } keys %$v), 'trunc-plain-boundary: open calls shown as (unreturned)');
    my ($cst, $cout) = run_cmd([$nytp, 'calls', '--calls', $file]);
    my $calls = 0;
    $calls += $_ for values %{ parse_lines($cout) };
    is $calls, $n, 'trunc-plain-boundary: --calls adds up to the returns before the cut';
    my ($sst, $sout, $serr) = run_cmd([$nytp, 'calls', '--strict', $file]);
    is $sst, 1, 'trunc-plain-boundary --strict: exit 1';
    is $sout, '', '--strict: nothing printed';
    like $serr, qr/\A[^\n]*truncated[^\n]*\n\z/, '--strict: one error line';
}

for my $cut (qw(trunc-plain-attr trunc-plain-string trunc-z-before trunc-z-header trunc-z-middle)) {
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', "$td/broken/$cut.out"]);
    is $st, 0, "$cut: exit 0";
    like $err, qr/\A[^\n]*$cut\.out: truncated at [^\n]*\n\z/, "$cut: one warning line";
    my ($fst, $fout, $ferr) = run_cmd([$nytp, 'flame', '--svg', "$td/broken/$cut.out"]);
    is $fst, 0, "$cut: flame --svg exit 0";
    ok !defined xml_problem($fout), "$cut: flame --svg still well-formed";
}

for my $bad (qw(bad-tag bad-zlib bad-string-tag string-past-end random empty bad-magic major4 nv-size-4)) {
    for my $cmd (['calls'], ['flame'], ['flame', '--svg']) {
        my ($st, $out, $err) = run_cmd([$nytp, @$cmd, "$td/broken/$bad.out"]);
        is $st, 1, "$bad (@$cmd): exit 1";
        is $out, '', "$bad (@$cmd): nothing printed";
        like $err, qr/\A[^\n]*\Q$bad.out\E[^\n]*\n\z/, "$bad (@$cmd): one error line naming the file";
    }
}
{
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', "$td/demo.out", "$td/broken/bad-tag.out"]);
    is $st, 1, 'a good and a corrupt input: exit 1';
    is $out, '', 'a good and a corrupt input: nothing printed';
    my ($st2, $out2, $err2) = run_cmd([$nytp, 'flame', '--svg', '-o', "$dir/never.svg", "$td/broken/bad-tag.out"]);
    ok !-e "$dir/never.svg", 'a failed run leaves no output file';
}

# ---- usage ----------------------------------------------------------------------------

for my $u (['calls', '--bogus'], ['flame', '--title=x'], ['flame', '--svg', '--filter=a('],
           ['flame', '--svg', '--width=abc'], ['flame', '--svg', '--minwidth=-1'],
           ['flame', '--svg', '--stable']) {
    my ($st, $out, $err) = run_cmd([$nytp, @$u, "$td/demo.out"]);
    is $st, 2, "@$u: usage error, exit 2";
    like $err, qr/\A[^\n]+\n\z/, "@$u: one line";
}
for my $c (qw(calls flame)) {
    my ($st, $out) = run_cmd([$nytp, $c, '--help']);
    is $st, 0, "$c --help: exit 0";
    like $out, qr/^usage: nytp $c/, "$c --help: usage";
    my ($hst, $hout) = run_cmd([$nytp, 'help', $c], stdin => '');
    like $hout, qr/NYTP-\U$c/, "help $c shows the nytp-$c man page";
}

# ---- nytp flame: collapsed stacks and flamegraph.pl --------------------------------------

{
    my ($st, $calls) = run_cmd([$nytp, 'calls', '--stable', "$td/demo.out"]);
    my ($fst, $flame) = run_cmd([$nytp, 'flame', '--stable', "$td/demo.out"]);
    is $flame, $calls, 'flame without --svg prints the lines of calls';
    my ($cst, $cc) = run_cmd([$nytp, 'flame', '--calls', "$td/demo.out"]);
    same_set($cc, oracle_lines('--calls', "$td/demo.out"), 'flame --calls');
}
SKIP: {
    skip "$flamegraph is missing", 4 if missing(-x $flamegraph || -f $flamegraph, "$flamegraph (libdevel-nytprof-perl)");
    my $svg = "$dir/fg.svg";
    system("'$nytp' flame '$td/demo.out' | $^X '$flamegraph' > '$svg'") == 0
        or fail 'the pipeline ran';
    my $bytes = slurp_file($svg);
    my $p = xml_problem($bytes);
    ok !defined $p, 'nytp flame | flamegraph.pl: well-formed SVG' or diag $p;
    like $bytes, qr/<svg\b/, 'flamegraph.pl: an <svg>';
    my $frames = () = $bytes =~ /<rect\b[^>]*\bwidth="[\d.]+"/g;
    cmp_ok $frames, '>', 20, "flamegraph.pl: $frames frames drawn";
    like $bytes, qr/main::fib/, 'flamegraph.pl: sub names in it';
}

# ---- nytp flame --svg ----------------------------------------------------------------------

# Frame sizes against the oracle: the share of every frame is the sum of the
# nytprofcalls values of the paths at and above it.
for my $case (['demo.out', []], ['recursion.out', []], ['evals.out', ['--calls']],
              ['anon.out', ['--inverted']], ['utf8-names.out', []]) {
    my ($file, $opts) = @$case;
    my $label = "svg $file @$opts";
    my $svg = svg_of(['--minwidth=0', @$opts, "$td/$file"], $label);
    my @frames = svg_of_frames($svg);
    my $oracle = parse_lines(oracle_lines(grep({ $_ eq '--calls' } @$opts), "$td/$file"));
    my $total = 0;
    $total += $_ for values %$oracle;
    my ($all) = grep { $_->{d} == 0 } @frames;
    ok $all, "$label: an 'all' frame";
    my $bad = 0;
    my $named = 0;
    for my $f (grep { $_->{d} > 0 && !$_->{merged} } @frames) {
        $named++;
        # names in the SVG are the oracle's bytes read as UTF-8 or Latin-1
        my $sum = 0;
        for my $p (keys %$oracle) {
            my $c = $p;    # decode with a check eats its argument
            my $u = eval { Encode::decode('UTF-8', $c, Encode::FB_CROAK()) } // Encode::decode('latin1', $p);
            $sum += $oracle->{$p} if $u eq $f->{path} || substr($u, 0, length($f->{path}) + 1) eq "$f->{path};";
        }
        my ($pct) = $f->{info} =~ /\(([\d.]+)%\)/;
        my $want = $total ? 100 * $sum / $total : 0;
        $bad++, diag "$label: $f->{path}: $pct% in the SVG, $want% from nytprofcalls"
            if !defined $pct || abs($pct - $want) > 0.006;
        my $wpx = $all->{w} * $sum / $total;
        $bad++, diag "$label: $f->{path}: width $f->{w}, want $wpx" if abs($f->{w} - $wpx) > 0.011;
    }
    cmp_ok $named, '>', 5, "$label: $named frames";
    is $bad, 0, "$label: every frame's share and width agree with nytprofcalls";
    # nesting: a frame lies within its parent's span
    my (@open, $out_of_parent);
    for my $f (@frames) {
        $open[$f->{d}] = $f;
        my $p = $f->{d} ? $open[$f->{d} - 1] : undef;
        $out_of_parent++ if $p && ($f->{x} < $p->{x} - 0.011 || $f->{x} + $f->{w} > $p->{x} + $p->{w} + 0.011);
    }
    ok !$out_of_parent, "$label: every frame lies within its caller";
    my %rows;
    $rows{ $_->{d} }{ $_->{y} } = 1 for @frames;
    ok !(grep { keys %{ $rows{$_} } != 1 } keys %rows), "$label: one row per depth";
    my ($y1) = keys %{ $rows{1} };
    my ($y0) = keys %{ $rows{0} };
    if (grep { $_ eq '--inverted' } @$opts) {
        cmp_ok $y1, '>', $y0, "$label: icicle: callees below";
    } else {
        cmp_ok $y1, '<', $y0, "$label: flame: callees above";
    }
    # colours: one per package
    my (%fill_of, $mixed);
    for my $f (grep { $_->{d} > 0 && !$_->{merged} } @frames) {
        (my $pkg = $f->{name}) =~ s/\[.*//s;
        $pkg =~ s/::[^:]*\z// or next;
        $mixed++ if exists $fill_of{$pkg} && $fill_of{$pkg} ne $f->{fill};
        $fill_of{$pkg} = $f->{fill};
    }
    ok !$mixed, "$label: one colour per package";
    # labels: the name, or its start and '..', never wider than the frame
    my $badlabel = 0;
    for my $f (grep { length $_->{label} } @frames) {
        next if $f->{label} eq $f->{name};
        $badlabel++ unless $f->{label} =~ /\.\.\z/ && index($f->{name}, substr($f->{label}, 0, -2)) == 0;
    }
    is $badlabel, 0, "$label: labels are the names, or their starts and '..'";
}

sub svg_of_frames { return svg_frames(@_) }

# Escaping, links, title, width, filter
{
    my $svg = svg_of(['--minwidth=0', '--title=<T&"x\'>', '--width=900',
                      '--link-template=subs.html#%s?q=%%', "$td/tricky-strings.out"], 'tricky-strings');
    like $svg, qr/<svg[^>]* width="900"/, '--width';
    like $svg, qr/&lt;T&amp;&quot;x&#39;&gt;/, '--title escaped';
    my @frames = svg_frames($svg);
    ok((grep { $_->{name} eq 'main::<script>alert(1)</script>' } @frames), 'a name with markup survives, escaped');
    unlike $svg, qr/<script>alert/, 'no markup from the profile gets through';
    ok((grep { $_->{name} eq "main::tab\there" } @frames), 'a TAB in a name survives');
    my ($f) = grep { $_->{name} eq 'main::<script>alert(1)</script>' } @frames;
    is $f->{link}, 'subs.html#main%3A%3A%3Cscript%3Ealert%281%29%3C%2Fscript%3E?q=%',
        '--link-template: percent-encoded name, %% is %';
    # issue 21: the URL buffer held four %s; eight of a long name that
    # grows threefold when encoded overflowed the heap
    my $pn = "$dir/punct-name.out";
    system(repo() . '/build/gen-profile', 'punct-name', 4000, $pn) == 0 or die 'gen-profile failed';
    my ($pst, $psvg, $perr) = run_cmd([$nytp, 'flame', '--svg', '--minwidth=0', '--link-template=' . ('%s/' x 8), $pn]);
    is $pst, 0, '--link-template with eight %s and a 4,000-byte punctuation name: exit 0' or diag $perr;
    my ($pf) = grep { $_->{name} eq 'main::' . ('!' x 4000) } svg_frames($psvg);
    is $pf && $pf->{link}, ('main%3A%3A' . ('%21' x 4000) . '/') x 8, '... each %s is the whole encoded name';
    my ($fst, $fsvg) = run_cmd([$nytp, 'flame', '--svg', '--minwidth=0', '--filter=fib', "$td/demo.out"]);
    is $fst, 0, '--filter: exit 0';
    my @ff = svg_frames($fsvg);
    my @leaves = grep { my $p = $_->{path}; $_->{d} > 0 && !grep { $_->{path} =~ /^\Q$p\E;/ } @ff } @ff;
    ok @leaves && !(grep { $_->{path} !~ /fib/ } @leaves), '--filter: every stack left holds a match';
    my $oracle = parse_lines(oracle_lines("$td/demo.out"));
    my ($tot, $kept) = (0, 0);
    for (keys %$oracle) {
        $kept += $oracle->{$_} if /fib/;
    }
    my ($fib) = grep { $_->{path} =~ /^[^;]*fib[^;]*\z/ } @ff;
    my ($all) = grep { $_->{d} == 0 } @ff;
    my $sum = 0;
    $sum += $oracle->{$_} for grep { /^\Q$fib->{path}\E(?:;|\z)/ } keys %$oracle;
    my ($pct) = $fib->{info} =~ /\(([\d.]+)%\)/;
    ok abs($pct - 100 * $sum / $kept) < 0.006, "--filter: shares are of what is left ($pct%)";
    # --filter is the view's --focus, not a filter of its own: the same
    # SVG, whose subtitle says what was left out
    my ($gst, $gsvg) = run_cmd([$nytp, 'flame', '--svg', '--minwidth=0', '--focus=fib', "$td/demo.out"]);
    is $gst, 0, '--focus=fib: exit 0';
    ok $fsvg eq $gsvg, '--filter=fib draws the SVG --focus=fib draws';
    like $fsvg, qr/<text class="sub"[^>]*>[^<]*focus &#39;fib&#39;: [\d.]+% of /, '--filter: the subtitle says what the focus left out';
    my ($ost, $osvg) = run_cmd([$nytp, 'flame', '-o', "$dir/out.svg", "$td/demo.out"]);
    like slurp_file("$dir/out.svg"), qr/\A<\?xml[^>]*>\s*<svg/, '-o NAME.svg draws the SVG';
}

# A profile with over 100,000 distinct stacks: small SVG, narrow frames merged.
my $many = fresh_profile('many', <<'EOF');
# 47^3 = 103,823 distinct call paths s_a;s_b;s_c, plus their prefixes.
my $n = 47;
eval join '', map { "sub s$_ { my \$r = shift; return unless \@\$r; my \$f = \\&{'s' . shift \@\$r}; \$f->(\$r) }\n" } 0 .. $n - 1;
for my $a (0 .. $n - 1) { for my $b (0 .. $n - 1) { for my $c (0 .. $n - 1) {
    my $f = \&{"s$a"}; $f->([$b, $c]);
} } }
EOF
my $many_svg = "$dir/many.svg";
{
    my ($st, $out) = run_cmd([$nytp, 'calls', $many]);
    my $stacks = () = $out =~ /\n/g;
    cmp_ok $stacks, '>=', 100000, "the big profile has $stacks distinct stacks";
    my ($fst, $fout, $ferr) = run_cmd([$nytp, 'flame', '-o', $many_svg, $many]);
    is $fst, 0, 'big profile: flame exit 0' or diag $ferr;
    my $svg = slurp_file($many_svg);
    my $size = length $svg;
    my @frames = svg_frames($svg);
    cmp_ok $size, '<', 1_000_000, "big profile: the SVG is small ($size bytes)";
    cmp_ok scalar(@frames), '<', 5000, 'big profile: ' . scalar(@frames) . ' frames drawn';
    ok((grep { $_->{merged} && $_->{name} =~ /^\(\d+ merged\)\z/ } @frames), 'big profile: narrow frames merged');
    ok !defined xml_problem($svg), 'big profile: well-formed';
}

# ---- in a browser -----------------------------------------------------------------------------

my $chromium = (grep { -x } map { "$_/chromium" } split /:/, $ENV{PATH})[0];
SKIP: {
    skip 'chromium is not installed (make deps)', 13 if missing($chromium, 'chromium');

    # Load an SVG with a test script around it; returns (console lines,
    # the JSON the script left on the root, the DOM).
    my $n = 0;
    my $in_browser = sub {
        my ($svg_file, $test_js) = @_;
        my $svg = slurp_file($svg_file);
        my $catch = '<script><![CDATA[window.nytpErrors=[];'
            . 'window.addEventListener("error",function(e){window.nytpErrors.push(String(e.message));});]]></script>';
        $svg =~ s/(<svg[^>]*>)/$1\n$catch/ or die;
        my $js = '(function(){var svg=document.documentElement;var r={};try{' . $test_js
            . '}catch(e){r.exception=String(e);}r.errors=window.nytpErrors;'
            . 'svg.setAttribute("data-test",JSON.stringify(r));})();';
        $svg =~ s{</svg>\s*\z}{<script><![CDATA[$js]]></script>\n</svg>\n} or die;
        my $file = "$dir/browser-" . $n++ . '.svg';
        open my $fh, '>:raw', $file or die;
        print $fh $svg;
        close $fh;
        my ($st, $dom, $err) = run_cmd(['timeout', '120', $chromium, '--headless', '--no-sandbox',
            '--disable-gpu', '--no-first-run', "--user-data-dir=$dir/chromium-profile",
            '--enable-logging=stderr', '--v=0', '--dump-dom', "file://$file"]);
        my @console = grep { /:CONSOLE/ } split /\n/, $err;
        my ($json) = $dom =~ /data-test="([^"]*)"/;
        my $r = defined $json ? eval { decode_json(Encode::encode('UTF-8', unescape_xml($json))) } : undef;
        return (\@console, $r, $dom);
    };

    my $demo_svg = "$dir/demo-browser.svg";
    run_cmd([$nytp, 'flame', '--minwidth=0', '-o', $demo_svg, "$td/demo.out"]);
    my ($console, $r, $dom) = $in_browser->($demo_svg, <<'EOF');
var fw = +svg.getAttribute("data-fw");
var gs = [].slice.call(svg.querySelectorAll("g.f"));
function W(g) { return +g.querySelector("rect").getAttribute("width"); }
function X(g) { return +g.querySelector("rect").getAttribute("x"); }
var d1 = gs.filter(function (g) { return g.getAttribute("data-d") === "1" && W(g) < 0.9 * fw; });
d1.sort(function (a, b) { return W(b) - W(a); });
var t = d1[0], before = W(t), x0 = X(t);
var kids = gs.filter(function (g) { return g.getAttribute("data-d") === "2" && X(g) >= x0 - 0.01 && X(g) + W(g) <= x0 + before + 0.01; });
var other = d1[1];
var kidBefore = kids.length ? W(kids[0]) : 0;
t.querySelector("rect").dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, button: 0}));
r.fw = fw; r.before = before; r.after = W(t); r.xAfter = X(t);
r.kidRatio = kids.length ? W(kids[0]) / kidBefore : 0; r.wantRatio = fw / before;
r.otherHidden = other.classList.contains("hide");
r.unzoomShown = !svg.querySelector(".nytp-unzoom").classList.contains("hide");
var all = gs.filter(function (g) { return g.getAttribute("data-d") === "0"; })[0];
all.querySelector("rect").dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, button: 0}));
r.reset = W(t); r.otherBack = !other.classList.contains("hide");
svg.nytpFlame.search("fib");
r.matched = svg.querySelector(".nytp-matched").textContent;
r.highlighted = gs.filter(function (g) { return g.querySelector("rect").getAttribute("fill") === "rgb(220,40,220)"; }).length;
var over = 0;
gs.forEach(function (g) { var tx = g.querySelector("text"); if (tx.textContent && tx.getComputedTextLength() > W(g) + 0.5) over++; });
r.overflow = over;
EOF
    is_deeply $console, [], 'demo SVG in Chromium: no console message' or diag join "\n", @$console;
    ok $r, 'demo SVG: the test script ran' or diag substr($dom // '', 0, 500);
    $r //= {};
    is $r->{exception}, undef, 'demo SVG: no exception';
    is_deeply $r->{errors}, [], 'demo SVG: no script error';
    ok $r->{before} < $r->{fw} * 0.9 && abs($r->{after} - $r->{fw}) < 0.02 && abs($r->{xAfter} - 10) < 0.02,
        "demo SVG: clicking a frame zooms it to the full width ($r->{before} -> $r->{after})";
    ok abs($r->{kidRatio} - $r->{wantRatio}) < 0.01 * $r->{wantRatio}, 'demo SVG: its callees grow with it';
    ok $r->{otherHidden} && $r->{unzoomShown}, 'demo SVG: frames outside are hidden, reset shown';
    ok abs($r->{reset} - $r->{before}) < 0.02 && $r->{otherBack}, 'demo SVG: clicking "all" resets the zoom';
    is $r->{overflow}, 0, 'demo SVG: every label fits its frame as the browser draws it';
    my $oracle = parse_lines(oracle_lines("$td/demo.out"));
    my ($tot, $hit) = (0, 0);
    for (keys %$oracle) {
        $tot += $oracle->{$_};
        $hit += $oracle->{$_} if /fib/;
    }
    my ($got) = ($r->{matched} // '') =~ /Matched: ([\d.]+)%/;
    ok defined $got && abs($got - 100 * $hit / $tot) < 0.06,
        sprintf('demo SVG: search "fib" matches %s%%, nytprofcalls says %.2f%%', $got // '?', 100 * $hit / $tot);

    my $tricky_svg = "$dir/tricky-browser.svg";
    run_cmd([$nytp, 'flame', '--minwidth=0', '--link-template=subs.html#%s', '-o', $tricky_svg,
             "$td/tricky-strings.out"]);
    ($console, $r) = $in_browser->($tricky_svg, <<'EOF');
var f = svg.nytpFlame.frames.filter(function (f) { return f.name.indexOf("<script>") >= 0; })[0];
r.name = f ? f.name : null;
if (f) { f.r.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, button: 0})); r.zoomed = +f.r.getAttribute("width"); }
r.fw = +svg.getAttribute("data-fw");
EOF
    is_deeply [$console, $r && $r->{errors}], [[], []], 'tricky names in Chromium: no console message or error';
    ok $r && $r->{name} && $r->{name} eq 'main::<script>alert(1)</script>' && abs($r->{zoomed} - $r->{fw}) < 0.02,
        'tricky names: a linked frame with markup in its name zooms';

    ($console, $r) = $in_browser->($many_svg, 'r.frames = svg.nytpFlame.frames.length;');
    is_deeply [$console, $r && $r->{errors}], [[], []], 'the 100,000-stack SVG loads in Chromium without errors';
}

# Names ending in bytes that are not UTF-8 (overlong, a surrogate, beyond
# U+10FFFF, cut short, a lone continuation byte) or in U+FFFE, which XML
# does not allow: each name is drawn as its Latin-1 reading, valid UTF-8
# names as they are, and the SVG stays well-formed.
{
    my $f = "$dir/odd-names.out";
    system(repo() . '/build/gen-profile', 'odd-names', 2, $f) == 0 or die 'gen-profile failed';
    my ($st, $svg, $err) = run_cmd([$nytp, 'flame', '--svg', $f]);
    is $st, 0, 'flame --svg, names that are not UTF-8: exit 0' or diag $err;
    is xml_problem($svg), undef, 'flame --svg: well-formed XML';
    my @titles = map { Encode::decode('UTF-8', $_) } $svg =~ /<title>(main::o[^<]*?)\s/g;
    my @want = map { 'main::' . Encode::decode('latin1', $_) }
        "o1\xc0\xaf", "o2\xed\xa0\x80", "o3\xf4\x90\x80\x80", "o4\xe2\x82", "o5\x80", "o6\xef\xbf\xbe";
    is_deeply [sort @titles], \@want, 'flame --svg: each name as its Latin-1 reading';
}

# Sub names holding ';', line feeds and carriage returns could forge
# frames and lines of the collapsed stacks (issue 21, item 12): those
# bytes and '%' are percent-encoded; tabs, spaces and UTF-8 are not.
# Decoding every frame of every line gives back exactly the names.
{
    my $f = "$dir/odd-chars.out";
    system(repo() . '/build/gen-profile', 'odd-chars', 2, $f) == 0 or die 'gen-profile failed';
    my @want = (
        "main::semi;colon 20", "main::line\nfeed 42", "main::line\nfeed\0main::semi;colon 5",
        "main::tab\there 60", "main::with space 80", "main::caf\xc3\xa9 100", "main::per%3Bcent 120",
        "main::cr\rhere 140", "main::evil 99\nmain::forged;main::x 160",
    );
    for my $cmd (['calls'], ['calls', '--stable'], ['flame'], ['flame', '--stable']) {
        my ($st, $out, $err) = run_cmd([$nytp, @$cmd, $f]);
        is $st, 0, "@$cmd, names with ';' and line ends: exit 0" or diag $err;
        my @lines = split /\n/, $out, -1;
        is pop(@lines), '', "@$cmd: ends with a line end";
        is scalar(@lines), scalar(@want), "@$cmd: one line per path, none forged";
        unlike $out, qr/^main::forged/m, "@$cmd: no line starts inside a name";
        like $out, qr/^main::semi%3Bcolon 20$/m, "@$cmd: ';' is %3B";
        like $out, qr/^main::line%0Afeed;main::semi%3Bcolon 5$/m, "@$cmd: LF is %0A, the frames apart";
        like $out, qr/^main::cr%0Dhere 140$/m, "@$cmd: CR is %0D";
        like $out, qr/^main::per%253Bcent 120$/m, "@$cmd: '%' is %25";
        like $out, qr/^main::tab\there 60$/m, "@$cmd: a tab as it is";
        my @got;
        for (@lines) {
            my ($path, $v) = /^(.*) (\d+)$/ or next;
            my @frames = map { (my $x = $_) =~ s/%([0-9A-F]{2})/chr hex $1/ge; $x } split /;/, $path, -1;
            push @got, join("\0", @frames) . " $v";
        }
        is_deeply [sort @got], [sort @want], "@$cmd: decoded, the names as they are";
    }
}

done_testing;
