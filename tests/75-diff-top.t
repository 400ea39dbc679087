#!/usr/bin/perl
# 'nytp top' and 'nytp diff' on real profiles: top's numbers against
# 'nytp dump --data', its source lines (saved, from disk, missing), width
# and colour; diff of two runs of one program where one sub was made slower
# (tables, JSON, --fail-above's exit status and message, added and removed
# subs, sets of files, --normalize), its differential flame graph, and
# names with markup and control bytes escaped everywhere.
use strict;
use warnings;
use Test::More;
use File::Copy ();
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use Encode ();

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();
my $json = JSON::PP->new->utf8;

sub close_to {
    my ($a, $b) = @_;
    return abs($a - $b) <= 1e-9 * (abs($a) + abs($b)) + 1e-15;
}

# ---- the program: one sub made slower by an environment variable ------------------

my $script = "$dir/prog.pl";
open my $fh, '>', $script or die;
print $fh <<'EOP';
use strict;
sub slow { my $n = shift; my $x = 0; for my $i (1 .. $n) { $x += $i } return $x }
sub steady { my $x = 0; for my $i (1 .. 20000) { $x += $i } return $x }
sub extra { my $x = 0; for my $i (1 .. 200000) { $x += $i } return $x }
for (1 .. 5) { slow($ENV{NYTP_T_SLOW}); steady(); }
extra() if $ENV{NYTP_T_EXTRA};
EOP
close $fh;

my ($base, $new, $more);
{
    local $ENV{NYTP_T_SLOW} = 1000;
    $base = fresh_profile('base', $script);
    local $ENV{NYTP_T_SLOW} = 100000;
    $new = fresh_profile('new', $script);
    local $ENV{NYTP_T_SLOW} = 1000;
    local $ENV{NYTP_T_EXTRA} = 1;
    $more = fresh_profile('more', $script);
}

# ---- nytp top: the numbers of nytp dump --data -------------------------------------

sub dump_data {
    my @files = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', '--collapse-evals', '--json', @files]);
    die "dump --data @files: $err" if $st;
    return $json->decode($out);
}

sub package_of {
    my $n = shift;
    (my $s = $n) =~ s/\[.*//s;
    return $s =~ /^(.*)::/s ? $1 : '';
}

for my $files ([$base], [$new], ["$td/demo.out"], ["$td/evals.out"], ["$td/recursion.out"],
               ["$td/fork.out", "$td/fork-child.out"], ["$td/anon.out"]) {
    my $label = 'top ' . join ' ', map { m{([^/]+)$} } @$files;
    my $data = dump_data(@$files);
    my $top = decode_ok(scalar run_ok(['top', '--json', '-n', '0', @$files], $label), $label);
    is $top->{format}, 'nytp-top-1', "$label: format";

    # subs: every sub that ran, with dump's calls and times, by excl
    my %sub = map { $_->{name} => $_ } @{ $data->{subs} };
    my @ran = grep { $_->{calls} || $_->{excl} || $_->{incl} } @{ $data->{subs} };
    is scalar @{ $top->{subs} }, scalar @ran, "$label: every sub that ran";
    my ($bad, $total, $prev) = (0, 0, undef);
    $total += $_->{excl} > 0 ? $_->{excl} : 0 for @{ $data->{subs} };
    for my $s (@{ $top->{subs} }) {
        my $d = $sub{ $s->{name} };
        $bad++, diag "sub $s->{name}: not in dump" unless $d;
        next unless $d;
        for my $k (qw(calls excl incl)) {
            $bad++, diag "sub $s->{name} $k: $s->{$k} vs $d->{$k}" if $s->{$k} != $d->{$k};
        }
        $bad++, diag "not sorted at $s->{name}" if defined $prev && $prev < $s->{excl};
        $prev = $s->{excl};
    }
    is $bad, 0, "$label: subs' calls, excl and incl equal dump --data's, sorted by excl";
    ok close_to($top->{totals}{sub_excl}, $total), "$label: total exclusive time";
    if (@{ $top->{subs} }) {
        ok close_to($top->{subs}[-1]{cum_share}, 100), "$label: the cumulative share ends at 100%";
        ok close_to($top->{subs}[0]{excl_share}, 100 * $top->{subs}[0]{excl} / $total), "$label: share";
    }

    # lines: every statement line with dump's time and count
    my %file = map { $_->{fid} => $_ } @{ $data->{files} };
    my %line;
    for my $f (@{ $data->{files} }) {
        $line{"$f->{fid}:$_->[0]"} = $_ for @{ $f->{lines} };
    }
    is scalar @{ $top->{lines} }, scalar keys %line, "$label: every line";
    $bad = 0;
    my $stmts = 0;
    for my $l (@{ $top->{lines} }) {
        my $d = $line{"$l->{fid}:$l->{line}"};
        $bad++, diag "line $l->{fid}:$l->{line}: not in dump" unless $d;
        next unless $d;
        $bad++, diag "line $l->{fid}:$l->{line}: $l->{time} $l->{count} vs @$d[1, 2]"
            if $l->{time} != $d->[1] || $l->{count} != $d->[2];
        my $name = $file{ $l->{fid} }{name};
        $bad++, diag "line $l->{fid}:$l->{line}: file" if ($l->{file} // '') ne ($name // '');
    }
    is $bad, 0, "$label: lines' time and count equal dump --data's";
    ok close_to($top->{totals}{statements}, $data->{totals}{total_stmts_duration}),
        "$label: statement time equals total_stmts_duration";

    # files: each source file with the time of its string evals
    my %ftime;
    for my $f (sort { $a->{fid} <=> $b->{fid} } @{ $data->{files} }) {
        my $root = $f;
        for (1 .. 100) {
            last unless $root->{eval_fid} && $file{ $root->{eval_fid} };
            $root = $file{ $root->{eval_fid} };
        }
        $ftime{ $root->{fid} } += $_->[1] for @{ $f->{lines} };
    }
    $bad = 0;
    for my $f (@{ $top->{files} }) {
        $bad++, diag "file $f->{fid}: $f->{time} vs " . ($ftime{ $f->{fid} } // 'none')
            unless close_to($f->{time}, $ftime{ $f->{fid} } // -1);
    }
    is $bad, 0, "$label: files' time (with their evals) from dump --data's lines";

    # packages: exclusive time of their subs
    my %pkg;
    $pkg{ package_of($_->{name}) } += $_->{excl} for @ran;
    $bad = 0;
    for my $p (@{ $top->{packages} }) {
        $bad++, diag "package $p->{package}: $p->{excl}"
            unless close_to($p->{excl}, $pkg{ $p->{package} } // -1);
    }
    is $bad, 0, "$label: packages' exclusive time";
    is scalar @{ $top->{packages} }, scalar keys %pkg, "$label: every package";
}

# ---- nytp top: options, source lines, terminal ------------------------------------

{
    my $t = decode_ok(scalar run_ok(['top', '--json', '-n', '2', $new], '-n 2'), '-n 2');
    is scalar @{ $t->{subs} }, 2, '-n 2: two subs';
    is scalar @{ $t->{lines} }, 2, '-n 2: two lines';
    is $t->{subs}[0]{name}, 'main::slow', 'the slow sub is the hottest';
    like $t->{lines}[0]{source}, qr/\$x \+= \$i/, 'the hottest line has its source';

    for my $by (qw(incl calls)) {
        my $t2 = decode_ok(scalar run_ok(['top', '--json', "--by=$by", '-n', '0', $new], "--by=$by"), $by);
        my @v = map { $_->{$by} } @{ $t2->{subs} };
        is_deeply \@v, [sort { $b <=> $a } @v], "--by=$by sorts the subs by $by";
    }
    my $l = decode_ok(scalar run_ok(['top', '--json', '--lines', $new], '--lines'), '--lines');
    ok !exists $l->{subs} && @{ $l->{lines} }, '--lines: only the lines';
    my $text = run_ok(['top', '--lines', $new], '--lines text');
    unlike $text, qr/^Subs/m, '--lines text: no subs table';
    like $text, qr/^Lines by time/m, '--lines text: the lines table';

    # text: the same hottest sub and its numbers
    $text = run_ok(['top', $new], 'top text');
    like $text, qr/^Subs by exclusive time/m, 'text: subs table';
    like $text, qr/^Packages by exclusive time/m, 'text: packages table';
    my ($row) = $text =~ /^(.*main::slow.*)$/m;
    ok $row, 'text: a row for main::slow';
    like $row, qr/\b5\s+main::slow/, 'text: its calls';

    # width: COLUMNS, every line fits
    for my $cols (60, 100) {
        local $ENV{COLUMNS} = $cols;
        my ($st, $out) = run_cmd([$nytp, 'top', $new]);
        my @long = grep { length(Encode::decode('UTF-8', $_)) > $cols } split /\n/, $out;
        is scalar(@long), 0, "COLUMNS=$cols: every line fits" or diag join "\n", @long;
    }
    unlike $text, qr/\e/, 'not a terminal: no colour';
}

# Source lines: saved in the profile, else from the file on disk, else none.
{
    my $src = "$dir/nosave.pl";
    open my $s, '>', $src or die;
    print $s "my \$x = 0;\nfor my \$i (1 .. 3000) { \$x += \$i * 2 }\nprint STDERR '';\n";
    close $s;
    my $p = fresh_profile('nosave', $src, 'savesrc=0');
    my ($st, $out) = run_cmd([$nytp, 'dump', '--tags=SRC_LINE', $p]);
    is $out, '', 'savesrc=0: no source in the profile';
    my $t = decode_ok(scalar run_ok(['top', '--json', '--lines', $p], 'source from disk'), 'disk');
    my ($l2) = grep { $_->{line} == 2 } @{ $t->{lines} };
    is $l2->{source}, 'for my $i (1 .. 3000) { $x += $i * 2 }', 'the source line read from disk';
    unlink $src;
    $t = decode_ok(scalar run_ok(['top', '--json', '--lines', $p], 'no source'), 'no source');
    ($l2) = grep { $_->{line} == 2 } @{ $t->{lines} };
    ok $l2 && !defined $l2->{source}, 'the file is gone: no source, no error';
    my $text = run_ok(['top', '--lines', $p], 'no source, text');
    like $text, qr/nosave\.pl:2 +\(source not available\)$/m, 'text: the line without source says so';
}

# Colour: only on a terminal, never with NO_COLOR.
SKIP: {
    my $script_cmd = (grep { -x } map { "$_/script" } split /:/, $ENV{PATH})[0];
    skip 'script(1) is missing', 3 if missing($script_cmd, 'script(1) (bsdutils)');
    my $cmd = "'$nytp' top -n 3 '$new'";
    my ($st, $out) = run_cmd([$script_cmd, '-qec', $cmd, '/dev/null']);
    is $st, 0, 'on a terminal: exit 0';
    like $out, qr/\e\[1m/, 'on a terminal: colour';
    local $ENV{NO_COLOR} = '1';
    ($st, $out) = run_cmd([$script_cmd, '-qec', $cmd, '/dev/null']);
    unlike $out, qr/\e\[/, 'NO_COLOR: no colour on a terminal';
}

# ---- nytp diff: a sub made slower ----------------------------------------------------

{
    my $d = decode_ok(scalar run_ok(['diff', '--json', $base, $new], 'diff --json'), 'diff');
    is $d->{format}, 'nytp-diff-2', 'diff: format';
    my $top = $d->{subs}[0];
    is $top->{name}, 'main::slow', 'diff: the slower sub comes first';
    is $top->{status}, 'both', 'diff: it ran in both';
    is $top->{base}{calls}, 5, 'diff: calls before';
    is $top->{new}{calls}, 5, 'diff: calls after';
    cmp_ok $top->{excl_delta}, '>', 0, 'diff: its exclusive time grew';
    cmp_ok $top->{excl_delta_pct}, '>', 100, 'diff: by more than 100%';
    ok close_to($top->{excl_delta}, $top->{new}{excl} - $top->{base}{excl}), 'diff: delta = new - base';

    # the values are those of each profile
    my %b = map { $_->{name} => $_ } @{ dump_data($base)->{subs} };
    my %n = map { $_->{name} => $_ } @{ dump_data($new)->{subs} };
    my $bad = 0;
    for my $s (@{ $d->{subs} }) {
        for my $k (qw(excl incl calls)) {
            $bad++ if $s->{base} && $s->{base}{$k} != $b{ $s->{name} }{$k};
            $bad++ if $s->{new} && $s->{new}{$k} != $n{ $s->{name} }{$k};
        }
    }
    is $bad, 0, "diff: every sub's values are those of dump --data";
    ok close_to($d->{base}{total}, dump_data($base)->{totals}{total_stmts_duration}), 'diff: BASE total';
    ok close_to($d->{new}{total}, dump_data($new)->{totals}{total_stmts_duration}), 'diff: NEW total';
    # files are named relative to the program's directory (the same in any checkout)
    my ($line) = grep { $_->{file} eq 'prog.pl' && $_->{line} == 2 } @{ $d->{lines} };
    ok $line && $line->{delta} > 0, 'diff: the slow sub\'s line got slower';
    cmp_ok $line->{count_new}, '>', $line->{count_base}, 'diff: more statements ran on it';
    is $d->{check}, undef, 'diff: no check without --fail-above';

    # the CI check, with thresholds far from the noise of a busy machine:
    # the slow sub runs 100 times as many statements, the total about 6
    # times as many, the steady sub the same (its time varies by some 30%)
    my ($out, $err) = run_ok(['diff', '--fail-above=300', '--normalize', $base, $new],
        '--fail-above=300 --normalize', status => 3);
    like $err, qr/^nytp diff: main::slow: exclusive time grew by \+\d+/m, '--fail-above: names the sub';
    # --normalize divides NEW by the median of its subs' ratios, which the
    # one sub that changed does not move: the steady sub stays unnamed
    unlike $err, qr/main::steady/, '--fail-above --normalize: not the steady sub' or diag $err;
    like $out, qr/main::slow/, '--fail-above: the tables are still printed';
    ($out, $err) = run_ok(['diff', '--fail-above=100', '--min-time=100000%', $base, $new],
        '--fail-above=100 --min-time=100000%', status => 3);
    like $err, qr/^nytp diff: the total time grew by \+\d+(?:\.\d)?% \(\S+ -> \S+\), more than --fail-above=100%\n\z/,
        '--min-time above every sub: only the total is named';
    my $j;
    ($j, $err) = run_ok(['diff', '--json', '--fail-above', '100%', $base, $new], '--fail-above --json', status => 3);
    my $c = decode_ok($j, '--fail-above --json')->{check};
    ok $c->{failed}, 'JSON check: failed';
    ok $c->{total_grew}, 'JSON check: the total grew';
    ok grep({ $_ eq 'main::slow' } @{ $c->{subs_grew} }), 'JSON check: main::slow grew';
    is $c->{fail_above}, 100, 'JSON check: the threshold';

    # nothing grew beyond the threshold: the same profile, or the faster direction
    ($out, $err) = run_ok(['diff', '--fail-above=0', $base, $base], 'the same profile: exit 0');
    is $err, '', 'the same profile: no message';
    ($out, $err) = run_ok(['diff', '--fail-above=300', $new, $base], 'faster: exit 0');
    is $err, '', 'faster: no message';
    ($out, $err) = run_ok(['diff', '--fail-above=50', '--min-time=1000s', '--normalize', $base, $base],
        '--normalize --min-time=1000s');
    is $err, '', '--normalize: the same profile, no sub above 1000s: nothing grew';

    # text
    my $text = run_ok(['diff', $base, $new], 'diff text');
    like $text, qr/^Subs by change in exclusive time/m, 'text: subs table';
    like $text, qr/^Lines by change in time/m, 'text: lines table';
    like $text, qr/^Files by change in time/m, 'text: files table';
    my ($row) = $text =~ /^(.*main::slow)$/m;
    like $row, qr/^\s*\+\S+\s+\+\d+(?:\.\d)?%.*\b5 -> 5\s+main::slow$/, 'text: the slow sub\'s row';
    local $ENV{COLUMNS} = 70;
    my ($st, $narrow) = run_cmd([$nytp, 'diff', $base, $new]);
    my @long = grep { length(Encode::decode('UTF-8', $_)) > 70 } split /\n/, $narrow;
    is scalar(@long), 0, 'diff: COLUMNS=70, every table row fits' or diag join "\n", @long;
}

# Added and removed subs.
{
    my $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', $base, $more], 'added'), 'added');
    my ($x) = grep { $_->{name} eq 'main::extra' } @{ $d->{subs} };
    is $x->{status}, 'added', 'a sub only NEW ran is added';
    is $x->{base}, undef, 'added: no BASE values';
    is $x->{new}{calls}, 1, 'added: its calls';
    is $x->{excl_delta_pct}, undef, 'added: no percentage';
    $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', $more, $base], 'removed'), 'removed');
    ($x) = grep { $_->{name} eq 'main::extra' } @{ $d->{subs} };
    is $x->{status}, 'removed', 'a sub only BASE ran is removed';
    my $text = run_ok(['diff', '-n', '0', $base, $more], 'added text');
    like $text, qr/\bnew\b.*\b0 -> 1\s+main::extra$/m, 'text: added sub marked new';
    my (undef, $err) = run_ok(['diff', '--fail-above=1000', '--min-time=5ms', $base, $more],
        'an added sub fails the check', status => 3);
    like $err, qr/main::extra is new in NEW/, 'the message says it is new';
}

# Sets: with --sum each side adds up its files; --normalize scales NEW to
# BASE's total.  Without --sum each file is a run: the centre of a side is
# the median of its runs.  A file named twice is read once.
{
    my $base2 = "$dir/base-copy.out";
    File::Copy::copy($base, $base2) or die "copy: $!";
    my $d = decode_ok(scalar run_ok(['diff', '--json', '--sum', '-n', '0', $base, '--', $base, $base2], 'sets'), 'sets');
    is_deeply $d->{new}{files}, [$base, $base2], 'sets: NEW is both files';
    is $d->{new}{n}, 1, '--sum: one run';
    ok close_to($d->{new}{total}, 2 * $d->{base}{total}), 'sets: NEW adds up two runs';
    ok close_to($d->{total}{delta_pct}, 100), 'sets: the total doubled';
    my ($slow) = grep { $_->{name} eq 'main::slow' } @{ $d->{subs} };
    is $slow->{new}{calls}, 10, 'sets: calls add up';
    $d = decode_ok(scalar run_ok(['diff', '--json', '--sum', '--normalize', '-n', '0', $base, '--', $base, $base2],
        '--normalize'), '--normalize');
    ok $d->{normalized}, '--normalize: said so';
    # (the model sums the statements of both inputs one by one, so
    # NEW's total is twice BASE's only to rounding)
    ok close_to($d->{scale}, 0.5), '--normalize: NEW scaled by half';
    ok abs($d->{total}{delta}) < 1e-9 * $d->{base}{total}, '--normalize: no change in the total';
    my @changed = grep { abs($_->{excl_delta_pct}) > 1e-6 || abs($_->{incl_delta_pct} // 0) > 1e-6 }
        @{ $d->{subs} };
    is scalar(@changed), 0, '--normalize: no sub changed' or diag explain $changed[0];
    my ($st, $out, $err) = run_cmd([$nytp, 'diff', '--sum', '--fail-above=1', '--normalize', $base, '--', $base, $base2]);
    is $st, 0, '--normalize: nothing grew';

    # runs: two copies of BASE are two runs whose median is BASE
    $d = decode_ok(scalar run_ok(['diff', '--json', '-n', '0', $base, '--', $base, $base2], 'runs'), 'runs');
    is $d->{new}{n}, 2, 'runs: two runs on NEW';
    is scalar @{ $d->{new}{runs} }, 2, 'runs: each listed';
    ok close_to($d->{new}{total}, $d->{base}{total}), 'runs: the median of two copies is the one';
    is $d->{total}{delta}, 0, 'runs: no change';
    is $d->{test}, undef, 'runs: one run in BASE, no test';
    ($slow) = grep { $_->{name} eq 'main::slow' } @{ $d->{subs} };
    is $slow->{new}{calls}, 5, 'runs: calls are the median, not the sum';
    is_deeply $slow->{new_runs}, [($slow->{base_runs}[0]) x 2], 'runs: the value of each run';

    # options after the files and '--' in the middle; a file named twice is one run
    ($st, $out, $err) = run_cmd([$nytp, 'diff', $base, '--', $base, $base, '--json']);
    is $st, 0, 'options may follow the files';
    is_deeply decode_ok($out, 'options after')->{new}{files}, [$base], '... and -- still separates';
    like $err, qr/base\.out: given twice; read once/, 'a file named twice: a warning';
}

# ---- the differential flame graph ---------------------------------------------------

{
    my $svg = "$dir/diff.svg";
    my ($out, $err) = run_ok(['diff', '-o', $svg, $base, $new], '-o x.svg');
    is $out, '', '-o x.svg: nothing on standard output';
    my $bytes = slurp_file($svg);
    ok !defined xml_problem($bytes), 'the SVG is well-formed' or diag xml_problem($bytes);
    like $bytes, qr/red: slower than BASE, blue: faster/, 'the SVG says what the colours mean';
    my %frames;
    my $s = Encode::decode('UTF-8', $bytes);
    while ($s =~ m{<g class="f( m)?" data-d="(\d+)"><title>(.*?)\n(.*?)</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"}gs) {
        $frames{$3} = {info => $4, rgb => [$5, $6, $7]};
    }
    my $slow = $frames{'main::slow'};
    ok $slow, 'a frame for main::slow';
    like $slow->{info}, qr/; \+\S+ \(\+\d+(?:\.\d)?%\) against \S+ in BASE$/, 'its tooltip has the change';
    my ($r, $g, $b) = @{ $slow->{rgb} };
    ok $r > $g && $r > $b && $g < 100, 'it is red (slower)' or diag "@{ $slow->{rgb} }";
    my (undef, $rev) = run_cmd([$nytp, 'diff', '--svg', $new, $base]);
    $s = Encode::decode('UTF-8', $rev);
    my ($rgb) = $s =~ m{<title>main::slow\n[^<]*</title><rect [^>]*fill="rgb\((\d+,\d+,\d+)\)"};
    my ($r2, $g2, $b2) = split /,/, $rgb // '0,0,0';
    ok $b2 > $r2 && $b2 > $g2, 'the other way round it is blue (faster)' or diag $rgb;
    like $s, qr/\A<\?xml[^>]*>\s*<svg/, '--svg writes the SVG to standard output';

    # frames sized by NEW: the same geometry as 'nytp flame --svg' of NEW
    my (undef, $flame) = run_cmd([$nytp, 'flame', '--svg', $new]);
    my @geo = map { [m{<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"}g] } ($flame, $bytes);
    is_deeply $geo[1], $geo[0], 'frames are sized by NEW, as nytp flame draws it';
    (undef, $rev) = run_cmd([$nytp, 'diff', '--svg', '--title=<b>&"', $base, $new]);
    like $rev, qr/&lt;b&gt;&amp;&quot;/, '--title is escaped';
}

# The differential SVG in a browser: no errors, the tooltip line shows the
# change, a search and its reset keep the frames' change colours.
my $chromium = (grep { -x } map { "$_/chromium" } split /:/, $ENV{PATH})[0];
SKIP: {
    skip 'chromium is not installed (make deps)', 6 unless $chromium;
    my (undef, $svg) = run_cmd([$nytp, 'diff', '--svg', $base, $new]);
    my $catch = '<script><![CDATA[window.nytpErrors=[];'
        . 'window.addEventListener("error",function(e){window.nytpErrors.push(String(e.message));});]]></script>';
    $svg =~ s/(<svg[^>]*>)/$1\n$catch/ or die;
    my $js = <<'EOF';
(function () {
var svg = document.documentElement, r = {};
try {
  var f = svg.nytpFlame.frames.filter(function (f) { return f.name === "main::slow"; })[0];
  r.info = f.info;
  var fill = f.r.getAttribute("fill");
  f.g.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
  r.details = svg.querySelector(".nytp-details").textContent;
  svg.nytpFlame.search("slow");
  r.searched = f.r.getAttribute("fill");
  svg.nytpFlame.reset();
  r.kept = f.r.getAttribute("fill") === fill;
} catch (e) { r.exception = String(e); }
r.errors = window.nytpErrors;
svg.setAttribute("data-test", JSON.stringify(r));
})();
EOF
    $svg =~ s{</svg>\s*\z}{<script><![CDATA[$js]]></script>\n</svg>\n} or die;
    my $file = "$dir/diff-browser.svg";
    open my $bf, '>:raw', $file or die;
    print $bf $svg;
    close $bf;
    my ($st, $dom, $err) = run_cmd(['timeout', '120', $chromium, '--headless', '--no-sandbox',
        '--disable-gpu', '--no-first-run', "--user-data-dir=$dir/chromium-profile",
        '--enable-logging=stderr', '--v=0', '--dump-dom', "file://$file"]);
    my @console = grep { /:CONSOLE/ } split /\n/, $err;
    is_deeply \@console, [], 'diff SVG in Chromium: no console message' or diag join "\n", @console;
    my ($j) = $dom =~ /data-test="([^"]*)"/;
    $j //= '{}';
    $j =~ s/&quot;/"/g;
    $j =~ s/&lt;/</g;
    $j =~ s/&gt;/>/g;
    $j =~ s/&amp;/&/g;
    my $r = eval { decode_json(Encode::encode('UTF-8', $j)) } // {};
    is $r->{exception}, undef, 'diff SVG: no exception';
    is_deeply $r->{errors}, [], 'diff SVG: no script error';
    like $r->{info} // '', qr/against \S+ in BASE$/, 'diff SVG: the frame\'s info has the change';
    like $r->{details} // '', qr/^main::slow: .*against \S+ in BASE$/, 'diff SVG: hovering shows it';
    ok $r->{searched} && $r->{searched} eq 'rgb(220,40,220)' && $r->{kept},
        'diff SVG: search highlights, its reset brings the change colour back';
}

# ---- escaping: markup and control bytes in names and source --------------------------

{
    my $tricky = "$dir/we<ir&d\"\e[31m.pl";
    open my $t, '>', $tricky or die;
    print $t "my \$f = sub { my \$x = 0; \$x += \$_ for 1 .. (\$ENV{NYTP_T_N} || 10); \"\e[2J\" };\n",
        "\$f->() for 1 .. 3;\n";
    close $t;
    local $ENV{NYTP_T_N} = 10;
    my $p1 = fresh_profile('tricky1', $tricky);
    local $ENV{NYTP_T_N} = 100000;
    my $p2 = fresh_profile('tricky2', $tricky);
    for my $args (['top', $p1], ['top', '--lines', $p1], ['diff', $p1, $p2], ['diff', '--fail-above=1', $p1, $p2]) {
        my ($st, $out, $err) = run_cmd([$nytp, @$args]);
        ok $st == 0 || $st == 3, "@$args[0,1]: ran" or diag $err;
        unlike $out . $err, qr/\e/, "@$args[0,1]: no raw ESC byte printed";
        like $out, qr/\\x1B/, "@$args[0,1]: shown as \\x1B";
    }
    my $j = decode_ok(scalar run_ok(['top', '--json', $p1], 'tricky top --json'), 'tricky top');
    my ($anon) = grep { $_->{name} =~ /__ANON__/ } @{ $j->{subs} };
    is $anon->{name}, "main::__ANON__[$tricky:1]", 'JSON: the name with its bytes, escaped as JSON';
    ($j) = grep { $_->{line} == 1 } @{ $j->{lines} };
    like $j->{source}, qr/"\e\[2J"/, 'JSON: the source line as it is';
    $j = decode_ok(scalar run_ok(['diff', '--json', $p1, $p2], 'tricky diff --json'), 'tricky diff');
    ok grep({ $_->{name} eq "main::__ANON__[$tricky:1]" } @{ $j->{subs} }), 'diff JSON: the name';
    my $svg = run_ok(['diff', '--svg', $p1, $p2], 'tricky diff --svg');
    ok !defined xml_problem($svg), 'tricky SVG: well-formed' or diag xml_problem($svg);
    like $svg, qr/we&lt;ir&amp;d&quot;\\x1B\[31m\.pl/, 'tricky SVG: the name escaped';
}

# Escaping is one-to-one: a sub named "f" ESC and one named f\x1B (a
# backslash, then "x1B") never print alike, in any report that escapes
# names (top, diff, flame --svg); a backslash in a name is doubled.
{
    my $p = fresh_profile('backslash', <<'PERL');
use Sub::Util ();
my $esc = Sub::Util::set_subname("main::f\e", sub { 1 });
my $text = Sub::Util::set_subname("main::f\\x1B", sub { 1 });
my $end = Sub::Util::set_subname("main::g\\", sub { 1 });
$esc->() for 1 .. 2; $text->() for 1 .. 3; $end->();
PERL
    for my $args (['top'], ['diff', $p], ['flame', '--svg', '--minwidth=0']) {
        my ($st, $out, $err) = run_cmd([$nytp, @$args, $p]);
        ok $st == 0 || $st == 3, "@$args: ran" or diag $err;
        $out =~ s/^.*set_subname.*\n//mg;    # source lines, not names
        my %f = map { $_ => 1 } $out =~ /(main::f[^\s<(]*)/g;
        is scalar(keys %f), 2, "@$args: f ESC and f\\x1B read differently (" . join(' ', sort keys %f) . ')';
        like $out, qr/main::g\\\\(?:[\s<(]|\z)/m, "@$args: a backslash at the end of a name, doubled";
    }
}

# ---- errors and usage ------------------------------------------------------------------

for my $u (['diff'], ['diff', $base], ['diff', $base, $new, $new], ['diff', '--', $base],
           ['diff', $base, '--'], ['diff', '--fail-above=x', $base, $new],
           ['diff', '--min-time=5parsecs', $base, $new], ['diff', '--svg', '--json', $base, $new],
           ['diff', '--title=x', $base, $new], ['top', '--by=time'], ['top', '-n', 'x'],
           ['top', '--frob'], ['diff', '--frob', $base, $new], ['diff', '-', '-']) {
    my ($st, $out, $err) = run_cmd([$nytp, @$u]);
    is $st, 2, "@$u: usage error";
    is scalar(() = $err =~ /\n/g), 1, "@$u: one line" or diag $err;
}
for my $args (['top', "$dir/missing.out"], ['diff', $base, "$dir/missing.out"],
              ['diff', "$td/broken/bad-tag.out", $base], ['top', "$td/broken/bad-tag.out"]) {
    my ($st, $out, $err) = run_cmd([$nytp, @$args]);
    is $st, 1, "@$args: exit 1";
    is scalar(() = $err =~ /\n/g), 1, "@$args: one line" or diag $err;
    is $out, '', "@$args: nothing on standard output";
}
{
    my ($st, $out, $err) = run_cmd([$nytp, 'diff', '-o', "$dir/never.svg", $base, "$td/broken/bad-tag.out"]);
    ok !-e "$dir/never.svg", 'diff: a failed run leaves no output file';
    my $bytes = slurp_file($base);
    ($st, $out, $err) = run_cmd([$nytp, 'diff', '--json', '-', $base], stdin => $bytes);
    is $st, 0, "diff: '-' is standard input" or diag $err;
    is decode_ok($out, 'stdin')->{total}{delta}, 0, 'diff: standard input against the same file: no change';
    ($st, $out, $err) = run_cmd([$nytp, 'top', "$td/broken/trunc-z-middle.out"]);
    is $st, 0, 'top: a truncated profile warns';
    like $err, qr/truncated/, 'top: ... and says so';
    ($st) = run_cmd([$nytp, 'top', '--strict', "$td/broken/trunc-z-middle.out"]);
    is $st, 1, 'top --strict: a truncated profile is an error';
}
SKIP: {
    skip '/dev/full is missing', 4 unless -c '/dev/full';
    for my $args (['top', $base], ['diff', $base, $new]) {
        my ($st, undef, $err) = run_cmd(['sh', '-c', 'exec "$@" > /dev/full', 'sh', $nytp, @$args]);
        is $st, 1, "@$args[0] to a full disk: exit 1";
        like $err, qr/^nytp \S+: \(standard output\): write failed: No space left on device\n\z/,
            "@$args[0] to a full disk: one line";
    }
}

done_testing;

