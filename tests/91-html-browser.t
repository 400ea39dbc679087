#!/usr/bin/perl
# 'nytp html' reports used in a real browser, by interaction: Debian's
# headless chromium driven by playwright-core (tests/lib/html-browser.js),
# on the reports of two profiles made here: perltidy formatting a small
# file (two runs, compared with two earlier runs by --base: the change
# columns and the differential flame graph), and a Moose + DBD::SQLite
# program (tests/programs/moose-sqlite.pl).
# Every page loads with no console error, no failed request and no network
# (every page but for the pages of files, of which one in two of perltidy's
# and one in three of the Moose program's: a page of a large file costs
# 0.2-0.3 s of layout);
# clicking each heading of the sortable tables orders the rows by it
# (numbers or text, descending then ascending or the other way); typing in
# the filter of subs.html leaves the subs whose name has the text; the
# flame graph's search colours the matching frames and its zoom (in
# flame.svg and in the graph embedded in the index) widens a frame over
# the graph and hides the others, then resets; links lead from the index
# to a sub, to its caller and back, to anchors that exist.
# npm packages: make deps (tests/node_modules).
use strict;
use warnings;
use utf8;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;

my $nytp = nytp();
my $dir = scratch_dir();
my $modules = repo() . '/tests/node_modules';
my $script = "$FindBin::Bin/lib/html-browser.js";
my $node = (grep { -x } map { "$_/node" } split /:/, $ENV{PATH})[0];
my $chromium = (grep { -x } map { "$_/chromium" } split /:/, $ENV{PATH})[0];
my $perltidy = (grep { -x } map { "$_/perltidy" } split /:/, $ENV{PATH})[0];

need($node, 'node is not installed (make deps)');
need(-d "$modules/playwright-core", "playwright-core is not in $modules (make deps installs it)");
need($chromium, 'chromium is not installed (make deps)');
need($perltidy, 'perltidy is not installed (make deps)');
need(eval { require Moose; require DBD::SQLite; 1 }, 'Moose or DBD::SQLite is not installed (make deps)');

my %units = (ns => 1e-9, 'µs' => 1e-6, ms => 1e-3, s => 1);

# the sort key of a cell's value, as a reader expects it: numbers (a
# duration in seconds), or text without case
sub key {
    my ($v, $num) = @_;
    return $num ? -9**9**9 : '' unless defined $v;
    return lc $v unless $num;
    $v =~ s/^\s+|\s+$//g;
    return $1 * $units{$2} if $v =~ /^(-?[0-9.]+(?:e[-+]?[0-9]+)?)(ns|µs|ms|s)$/;
    return $1 + 0 if $v =~ /^(-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)/i;
    return -9**9**9;
}

# the first pair of neighbours out of order (dir -1: descending), or ''
sub out_of_order {
    my ($vals, $num, $dir) = @_;
    my @k = map { key($_, $num) } @$vals;
    for my $i (1 .. $#k) {
        my $c = $num ? $k[$i - 1] <=> $k[$i] : $k[$i - 1] cmp $k[$i];
        return "row $i: '" . ($vals->[$i - 1] // '(none)') . "' before '" . ($vals->[$i] // '(none)') . "'" if $c == $dir;
    }
    return '';
}

sub in_browser {
    my ($report, @args) = @_;
    local $ENV{CHROMIUM} = $chromium;
    my ($st, $out, $err) = run_cmd(['timeout', '300', $node, $script, $report, @args]);
    diag $err if $ENV{NYTP_TIMING};
    my $r = eval { JSON::PP->new->utf8->decode($out) };
    return $r // {fatal => "exit $st: $err $out"};
}

sub near { return abs($_[0] - $_[1]) < 0.02 }

sub check_report {
    my ($label, $report, $filter, $search, $sort_subs, $spread) = @_;
    my $r = in_browser($report, $filter, $search, $sort_subs ? 1 : 0, $spread ? $spread : ());
    is $r->{fatal}, undef, "$label: the browser ran" or return;

    # ---- every page -----------------------------------------------------------
    opendir my $dh, $report or die;
    my @files = sort grep { /\.html\z/ || $_ eq 'flame.svg' } readdir $dh;
    is_deeply [sort keys(%{ $r->{pages} }), @{ $r->{skipped} }], \@files,
        "$label: every page loaded (" . scalar(keys %{ $r->{pages} }) . ' of ' . scalar(@files)
        . ($spread ? ", one page of a file in $spread" : '') . ')';
    is_deeply [grep { !/^f\d+-.*\.html\z/ } @{ $r->{skipped} }], [], "$label: only pages of files are left out"
        if $spread;
    my @bad;
    for my $p (sort keys %{ $r->{pages} }) {
        my $x = $r->{pages}{$p};
        push @bad, "$p: did not load" unless $x->{ok};
        push @bad, map { "$p: $_" } @{ $x->{console} }, @{ $x->{pageErrors} }, @{ $x->{failed} },
            map { "request to $_" } @{ $x->{network} };
    }
    is_deeply \@bad, [], "$label: no console error or warning, page error, failed request or network on any page";

    # ---- sorting -----------------------------------------------------------------
    my (@unsorted, %pages, $columns);
    for my $s (@{ $r->{sorts} }) {
        next if $s->{nosort};
        $columns++;
        $pages{ $s->{page} }++;
        my $what = "$s->{page} #$s->{table} '$s->{heading}'";
        push @unsorted, "$what: no button" unless $s->{button};
        my $first = $s->{num} && !$s->{up} ? -1 : 1;
        my $name = sub { $_[0] < 0 ? 'descending' : 'ascending' };
        for ([$s->{first}, $s->{aria1}, $first], [$s->{second}, $s->{aria2}, -$first]) {
            my ($vals, $aria, $dir) = @$_;
            my $bad = out_of_order($vals, $s->{num}, $dir);
            push @unsorted, "$what: not " . $name->($dir) . ": $bad" if $bad;
            push @unsorted, "$what: aria-sort $aria, want " . $name->($dir) if ($aria // '') ne $name->($dir);
        }
        push @unsorted, "$what: rows lost or added"
            unless join("\0", sort map { $_ // '' } @{ $s->{first} }) eq join("\0", sort map { $_ // '' } @{ $s->{second} });
    }
    ok $columns > 10, "$label: sortable headings clicked ($columns, on " . join(', ', sort keys %pages) . ')';
    ok @{ $r->{sorts} } && !(grep { !@{ $_->{first} // [] } } grep { !$_->{nosort} } @{ $r->{sorts} }),
        "$label: every sorted table has rows";
    is_deeply \@unsorted, [], "$label: each heading sorts its column, numbers first descending, text ascending, then the other way";
    my ($lines) = grep { $_->{table} eq 'lines' && $_->{num} } @{ $r->{sorts} };
    ok $lines, "$label: the source table of the program's page is sorted too";

    # ---- the filter ------------------------------------------------------------------
    my $f = $r->{filter};
    my @want = grep { index(lc $_, lc $filter) >= 0 } @{ $f->{all} };
    ok @want && @want < @{ $f->{all} }, "$label: filter '$filter': some subs match (" . scalar(@want) . ' of ' . scalar(@{ $f->{all} }) . ')';
    is_deeply $f->{shown}, \@want, "$label: typing '$filter' in the filter leaves exactly the subs with it in their name";
    is_deeply $f->{cleared}, $f->{all}, "$label: clearing the filter shows every sub again";

    # ---- the flame graph ---------------------------------------------------------------
    my $fl = $r->{flame};
    my $magenta = 'rgb(220,40,220)';
    my @hit = grep { $_->{fill} eq $magenta } @{ $fl->{searched} };
    my @match = grep { $_->{d} > 0 && !$_->{m} && $_->{name} =~ /$search/ } @{ $fl->{searched} };
    ok @match > 0, "$label: flame search '$search': frames to find (" . scalar(@match) . ')';
    is_deeply [map { "$_->{name} $_->{x}" } @hit], [map { "$_->{name} $_->{x}" } @match],
        "$label: flame search colours exactly the frames whose sub matches";
    like $fl->{matched}, qr/^Matched: [0-9.]+% \(${\ scalar @match} frames\)$/, "$label: flame search says how many frames matched";
    is $fl->{button}, 'Reset search', "$label: the search button becomes Reset search";
    is scalar(grep { $_->{fill} eq $magenta } @{ $fl->{reset} }), 0, "$label: Reset search uncolours them";
    for my $where ('standalone', 'embedded') {
        my $z = $fl->{$where};
        my $tag = "$label: flame zoom ($where" . ($where eq 'embedded' ? ' in index.html)' : ' flame.svg)');
        is $fl->{object}, 1, "$label: index.html embeds the flame graph" if $where eq 'embedded';
        ok defined $z->{picked} && $z->{picked} >= 0, "$tag: a frame to click" or next;
        my $p = $z->{before}[ $z->{picked} ];
        my $eps = 1e-6 * $z->{fw};
        my (@wrong, $shown_before, $shown_after);
        for my $i (0 .. $#{ $z->{before} }) {
            my ($b, $a) = ($z->{before}[$i], $z->{zoomed}[$i]);
            $shown_before++ unless $b->{hidden};
            $shown_after++ unless $a->{hidden};
            my $inside = $b->{d} >= $p->{d} && $b->{x} >= $p->{x} - $eps && $b->{x} + $b->{w} <= $p->{x} + $p->{w} + $eps;
            my $above = $b->{d} < $p->{d} && $b->{x} <= $p->{x} + $eps && $b->{x} + $b->{w} >= $p->{x} + $p->{w} - $eps;
            if ($inside) {
                my $scale = $z->{fw} / $p->{w};
                push @wrong, "$b->{name}: hidden" if $a->{hidden};
                push @wrong, "$b->{name}: not widened" unless near($a->{w}, $b->{w} * $scale) && near($a->{x}, 10 + ($b->{x} - $p->{x}) * $scale);
            } elsif ($above) {
                push @wrong, "$b->{name}: ancestor not spanning the graph" unless !$a->{hidden} && $a->{parent} && near($a->{w}, $z->{fw});
            } else {
                push @wrong, "$b->{name}: not hidden" unless $a->{hidden};
            }
        }
        my $a = $z->{zoomed}[ $z->{picked} ];
        ok near($a->{x}, 10) && near($a->{w}, $z->{fw}), "$tag: the clicked frame ($p->{name}) spans the graph";
        ok $shown_after < $shown_before, "$tag: fewer frames shown ($shown_after of $shown_before)";
        is_deeply \@wrong, [], "$tag: its callees widened, its callers above it, the rest hidden";
        ok $z->{unzoomShown}, "$tag: Reset zoom shown";
        my @moved = grep { my ($b, $u) = ($z->{before}[$_], $z->{unzoomed}[$_]);
            $u->{hidden} || $u->{parent} || !near($b->{x}, $u->{x}) || !near($b->{w}, $u->{w}) } 0 .. $#{ $z->{before} };
        is scalar(@moved), 0, "$tag: Reset zoom puts every frame back";
        ok $z->{unzoomHidden}, "$tag: Reset zoom hidden again";
    }

    # ---- navigation -----------------------------------------------------------------------
    my $n = $r->{nav};
    my @steps = @{ $n->{steps} // [] };
    is scalar(@steps), 5, "$label: navigation: index, sub, caller, back, back" or return;
    is $steps[0]{url}, 'index.html', "$label: navigation starts at the index";
    is $steps[1]{url}, $n->{subHref}, "$label: the index's top sub link leads to its file page ($n->{subHref})";
    ok $steps[1]{target}, "$label: ... where its anchor exists";
    ok $n->{callerHref}, "$label: the sub's headline links to its caller";
    is $steps[2]{url}, $n->{callerHref}, "$label: the caller link leads there ($n->{callerHref})";
    ok $steps[2]{target}, "$label: ... where its anchor exists";
    is $steps[3]{url}, $n->{subHref}, "$label: back returns to the sub";
    is $steps[4]{url}, 'index.html', "$label: back again returns to the index";
}

# ---- perltidy formatting a small file, compared with earlier runs ---------------------
#
# The report of two runs with --base naming two more: its change columns
# (Before, After, Change, p) sort as the others, its differential flame
# graph searches and zooms as the plain one.

{
    my @prof = map { "$dir/perltidy$_.out" } 1 .. 4;
    for my $prof (@prof) {
        my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', $prof, $perltidy, '-npro', '-st', '-se',
            repo() . '/tests/programs/misc.pl']);
        is $st, 0, "perltidy: profiled into $prof" or diag $err;
    }
    my ($st, $out, $err) = run_cmd([$nytp, 'html', "--base=$prof[0]", "--base=$prof[1]", '-o',
        "$dir/perltidy-report", @prof[2, 3]]);
    is $st, 0, 'perltidy: nytp html --base exits 0' or diag $err;
    my $index = slurp_file("$dir/perltidy-report/index.html");
    like $index, qr/<dt>Compared with<dd><code>\Q$prof[0]\E<\/code>, <code>\Q$prof[1]\E<\/code> <span class=note>\(BASE: 2 runs; this profile: 2 runs\)/,
        'perltidy: the index names the base files and the runs';
    like $index, qr/>Before<th[^>]*>After<th[^>]*>Change<th[^>]*>p</, 'perltidy: the change columns';
    like slurp_file("$dir/perltidy-report/flame.svg"), qr/Differential flame graph of /,
        'perltidy: the differential flame graph';
    check_report('perltidy', "$dir/perltidy-report", 'Tokenizer', 'Tokenizer::', 1, 2);
}

# ---- Moose and DBD::SQLite ---------------------------------------------------------------

{
    my $prof = "$dir/moose.out";
    my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', $prof, repo() . '/tests/programs/moose-sqlite.pl']);
    is $st, 0, 'Moose: profiled' or diag $err;
    like $out, qr/^total \d/, 'Moose: the program ran';
    ($st, $out, $err) = run_cmd([$nytp, 'html', '-o', "$dir/moose-report", $prof]);
    is $st, 0, 'Moose: nytp html exits 0' or diag $err;
    check_report('Moose', "$dir/moose-report", 'inventory', 'Moose::Meta', 0, 3);
}

done_testing;
