#!/usr/bin/perl
# 'nytp html': the report's numbers against 'nytp dump --data' (itself
# checked against Devel::NYTProf::Data in 30-dump-data.t), escaping of
# everything from the profile, safe page names, links that resolve,
# atomic replacement, --open, and the pages in headless Chromium (no
# console errors, tables present and sortable, screenshots saved).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use Encode qw(decode);
use File::Path qw(make_path);

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();

sub html {
    my ($out, @args) = @_;
    return run_cmd([$nytp, 'html', '-o', $out, @args]);
}

sub pages {
    my $d = shift;
    opendir my $dh, $d or die "$d: $!";
    return sort grep { !/^\./ } readdir $dh;
}

sub unescape {
    my $s = shift;
    $s =~ s/<[^>]*>//g;
    my %e = (amp => '&', lt => '<', gt => '>', quot => '"', '#39' => "'");
    $s =~ s/&(amp|lt|gt|quot|#39);/$e{$1}/g;
    return $s;
}

sub model {
    my ($file) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', '--json', '--collapse-evals', $file]);
    die "dump --data failed: $err" if $st;
    return JSON::PP->new->decode($out);
}

sub near {
    my ($a, $b) = @_;
    return abs($a - $b) <= 1e-12 + 1e-9 * abs($b);
}

# ---- numbers agree with the model --------------------------------------------

for my $name (qw(demo recursion evals anon)) {
    my $file = "$td/$name.out";
    my $out = "$dir/$name-report";
    my ($st, $so, $se) = html($out, $file);
    is $st, 0, "$name: exit 0" or diag $se;
    is $se, '', "$name: nothing on stderr";
    my $index = slurp_file("$out/index.html") // '';
    my $m = model($file);
    my %sub = map { $_->{name} => $_ } @{ $m->{subs} };

    # top subs: the subs with the most exclusive time, with the model's numbers
    my ($top) = $index =~ m{<table class="sort subs" id=topsubs>.*?<tbody>\n(.*?)</tbody>}s;
    my @rows = ($top // '') =~ m{<tr>(.*?)\n}g;
    ok @rows > 0, "$name: top subs listed";
    my $bad = 0;
    my @excl;
    for my $r (@rows) {
        my @c = split /<td/, $r;
        shift @c;
        my ($calls) = $c[0] =~ />(\d+)/;
        my ($p) = $c[1] =~ />(\d+)/;
        my ($f) = $c[2] =~ />(\d+)/;
        my ($excl) = $c[3] =~ /data-v=(\S+?)>/;
        my ($incl) = $c[4] =~ /data-v=(\S+?)>/;
        # a shortened name carries the full one in its title
        my ($full, $sname) = $c[5] =~ m{<a [^>]*>(?:<span title="([^"]*)">)?(.*?)</a>};
        $sname = $full if defined $full;
        my $s = $sub{ unescape($sname // '') };
        if (!$s) { $bad++; diag "$name: unknown sub $sname"; next }
        my %files = map { $_->{fid} => 1 } @{ $s->{called_by} };
        if ($calls != $s->{calls} || !near($excl, $s->{excl}) || !near($incl, $s->{incl})
            || $p != @{ $s->{called_by} } || $f != keys %files) {
            $bad++;
            diag "$name: $s->{name}: html $calls $p $f $excl $incl, model $s->{calls} "
                . scalar(@{ $s->{called_by} }) . " " . scalar(keys %files) . " $s->{excl} $s->{incl}";
        }
        push @excl, $s->{excl};
    }
    is $bad, 0, "$name: every top sub's calls, places, files, exclusive and inclusive time";
    my @want = (sort { $b <=> $a } map { $_->{excl} } @{ $m->{subs} })[0 .. $#excl];
    is_deeply \@excl, \@want, "$name: they are the subs with the most exclusive time, in order";

    # packages: their subs' exclusive time and calls added up
    my %pkg;
    for my $s (@{ $m->{subs} }) {
        my ($head) = $s->{name} =~ /^([^\[]*)/;
        my $pk = $head =~ /^(.*)::/ ? $1 : '(no package)';
        $pkg{$pk}{subs}++;
        $pkg{$pk}{calls} += $s->{calls};
        $pkg{$pk}{excl} += $s->{excl};
    }
    my ($ptable) = $index =~ m{id=packages>.*?<tbody>\n(.*?)</tbody>}s;
    my @prows = ($ptable // '') =~ m{<tr>(.*?)\n}g;
    ok @prows > 0, "$name: packages listed";
    $bad = 0;
    for my $r (@prows) {
        my ($subs, undef, $calls, $excl, undef, $pname) =
            $r =~ m{^<td>(\d+)<td>(\d+)<td>(\d+)<td[^>]*data-v=(\S+?)>.*?<td>([^<]*)<td class=name>(.*)$};
        my $want = $pkg{ unescape($pname // '') };
        next if $want && $subs == $want->{subs} && $calls == $want->{calls} && near($excl, $want->{excl});
        $bad++;
        diag "$name: package row $r";
    }
    is $bad, 0, "$name: every package's subs, calls and exclusive time add up";

    is scalar(@prows), scalar(keys %pkg), "$name: every package listed (" . scalar(keys %pkg) . ")";

    # the index's first sentence: the package with the most exclusive time,
    # its share, and its top subs holding half of it or more (at most 5)
    {
        my $total = 0;
        $total += $_->{excl} for @{ $m->{subs} };
        my ($top) = sort { $pkg{$b}{excl} <=> $pkg{$a}{excl} } keys %pkg;
        my @in = sort { $b->{excl} <=> $a->{excl} }
            grep { my ($h) = $_->{name} =~ /^([^\[]*)/; ($h =~ /^(.*)::/ ? $1 : '(no package)') eq $top } @{ $m->{subs} };
        my ($sum, @k) = (0);
        while (@in && @k < 5 && $sum < $pkg{$top}{excl} / 2) { my $s = shift @in; $sum += $s->{excl}; push @k, $s->{name} }
        my ($lead) = $index =~ m{<p class=lead>(.*?)</p>};
        my ($share, $pk, $of, $names) = ($lead // '') =~ m{^<b>([\d.]+)%</b> of the time in subroutines is in <a [^>]*>(.*?)</a>, ([\d.]+)% of it in [^:]*: (.*)\.$};
        is unescape($pk // ''), $top, "$name: the first sentence names the package with the most exclusive time";
        ok defined $share && abs($share - 100 * $pkg{$top}{excl} / $total) < 0.051, "$name: and its share ($share%)";
        ok defined $of && abs($of - 100 * $sum / $pkg{$top}{excl}) < 0.051, "$name: and the share of its top subs ($of%)";
        my @shown = map { my ($f, $n) = m{(?:<span title="([^"]*)">)?(.*)}; unescape($f // $n) } ($names // '') =~ m{<a [^>]*>(.*?)</a>}g;
        is "@shown", "@k", "$name: and which subs those are";
    }

    # packages.html: each package's section lists exactly its subs
    my $pp = slurp_file("$out/packages.html") // '';
    $bad = 0;
    for my $r (@prows) {
        my ($id, $pname) = $r =~ m{<td class=name><a href="packages\.html#(P\d+)">(.*?)</a>$};
        my ($sect) = $pp =~ m{<section class=pkg id=\Q$id\E><h2>(.*?)</section>}s;
        my ($h2) = ($sect // '') =~ m{^(.*?) <span class=note>};
        my @names = map { my ($f, $n) = m{(?:<span title="([^"]*)">)?(.*)}; unescape($f // $n) }
            ($sect // '') =~ m{<td class=name><a [^>]*>(.*?)</a>}g;
        my $p = unescape($pname // '');
        my @want = sort grep { my ($h) = /^([^\[]*)/; ($h =~ /^(.*)::/ ? $1 : '(no package)') eq $p } keys %sub;
        next if defined $h2 && unescape($h2) eq $p && "@{[sort @names]}" eq "@want";
        $bad++;
        diag "$name: package $p: section $id has @names, want @want";
    }
    is $bad, 0, "$name: each package links to its section, which lists exactly its subs";

    # the treemap: a box per package with time, its area its share of the
    # time, inside the picture, not overlapping
    my @boxes = $pp =~ m{<rect class=pk x=(\S+) y=(\S+) width=(\S+) height=(\S+) fill="[^"]*"><title>(.*?): }g;
    my $pos = 0;
    $pos += $_->{excl} for grep { $_->{excl} > 0 } values %pkg;
    my @withtime = grep { $_->{excl} > 0 && $_->{excl} / $pos * 1200 * 640 >= 0.25 } values %pkg;
    is @boxes / 5, scalar(@withtime), "$name: treemap: a box per package with time";
    my (@r, @area_bad);
    while (my ($x, $y, $w, $h, $t) = splice @boxes, 0, 5) {
        my $want = $pkg{ unescape($t) }{excl} / $pos * 1200 * 640;
        push @area_bad, unescape($t) . ": $w x $h, want area $want" if abs($w * $h - $want) > 0.01 * $want + 2 * ($w + $h) * 0.05 + 1;
        push @r, [$x, $y, $w, $h];
    }
    is "@area_bad", '', "$name: treemap: each package's area is its share of the exclusive time";
    my @out = grep { $_->[0] < -0.1 || $_->[1] < -0.1 || $_->[0] + $_->[2] > 1200.2 || $_->[1] + $_->[3] > 640.2 } @r;
    my $overlap = 0;
    for my $i (0 .. $#r) {
        for my $j ($i + 1 .. $#r) {
            my ($a, $b) = @r[$i, $j];
            my $ox = ($a->[0] + $a->[2] < $b->[0] + $b->[2] ? $a->[0] + $a->[2] : $b->[0] + $b->[2]) - ($a->[0] > $b->[0] ? $a->[0] : $b->[0]);
            my $oy = ($a->[1] + $a->[3] < $b->[1] + $b->[3] ? $a->[1] + $a->[3] : $b->[1] + $b->[3]) - ($a->[1] > $b->[1] ? $a->[1] : $b->[1]);
            $overlap++ if $ox > 0.2 && $oy > 0.2;
        }
    }
    is scalar(@out) + $overlap, 0, "$name: treemap: boxes inside the picture, none overlapping";

    # source files: statements and time, with their string evals, from the lines
    my %file = map { $_->{fid} => $_ } @{ $m->{files} };
    my %total;
    for my $f (@{ $m->{files} }) {
        my ($t, $n) = (0, 0);
        for (@{ $f->{lines} }) { $t += $_->[1]; $n += $_->[2] }
        my $top_fid = $f->{fid};
        $top_fid = $file{$top_fid}{eval_fid} while $file{$top_fid}{eval_fid};
        $total{$top_fid}[0] += $t;
        $total{$top_fid}[1] += $n;
    }
    my @frows = $index =~ m{<tr data-fid=(\d+)><td data-v=(\d+)>\d+<td data-v=(\S+?)>}g;
    my @real = grep { !$file{$_}{eval_fid} } keys %file;
    is @frows / 3, scalar(@real), "$name: one row per source file";
    $bad = 0;
    while (my ($fid, $n, $t) = splice @frows, 0, 3) {
        my $want = $total{$fid} // [0, 0];
        next if $n == $want->[1] && near($t, $want->[0]);
        $bad++;
        diag "$name: fid $fid: html $n $t, model $want->[1] $want->[0]";
    }
    is $bad, 0, "$name: every file's statements and time (with its evals) as in the model";
    my %defined;
    $defined{ $_->{fid} }++ for grep { ($_->{first_line} // 0) > 0 && $_->{name} ne 'main::RUNTIME' } @{ $m->{subs} };
    my %subs_col = $index =~ m{<tr data-fid=(\d+)>(?:<td[^>]*>[^<]*){4}<td>(\d+)<td class=views>}g;
    is scalar(keys %subs_col), scalar(@real), "$name: a Subs column per file";
    is_deeply \%subs_col, { map { $_ => $defined{$_} // 0 } @real }, "$name: each file's Subs: the subs defined in it (not the xsubs listed with it)";

    # one page per file and string eval, plus the fixed pages
    my @html = grep { /^f\d+-.*\.html\z|^f\d+\.html\z/ } pages($out);
    is scalar(@html), scalar(keys %file), "$name: a page per file and (collapsed) string eval";
    ok -s "$out/$_", "$name: $_ written" for qw(index.html subs.html packages.html nytp.css nytp.js flame.svg);
    like $index, qr{<object data=flame\.svg type="image/svg\+xml"}, "$name: the index shows the flame graph";
}

# the flame graph: one frame per call path of the SUB_RETURN stream, frames
# link to their sub's headline; --no-flame and --minimal leave it out
{
    my $svg = slurp_file("$dir/demo-report/flame.svg");
    my $m = model("$td/demo.out");
    my %named = map { $_->{name} => 1 } grep { $_->{calls} } @{ $m->{subs} };
    my @titles = map { unescape($_) } $svg =~ m{<title>([^<\n]*)\n}g;
    my %seen = map { $_ => 1 } grep { $named{$_} } @titles;
    ok keys(%seen) >= 10, 'flame: frames name the subs that were called (' . scalar(keys %seen) . ')';
    my @links = $svg =~ m{<a href="([^"]+)" target="_top">}g;
    ok @links >= 10, 'flame: frames are links';
    my $bad = grep { !m{^f\d+-[A-Za-z0-9_-]+\.html#S\d+\z|^subs\.html#S\d+\z} } @links;
    is $bad, 0, 'flame: links go to sub headlines';
    my $nocalls = fresh_profile('nocalls', "$td/demo.pl", 'calls=0');
    my ($stn, undef, $sen) = html("$dir/nocalls", $nocalls);
    is $stn, 0, 'calls=0: exit 0';
    my $nsvg = slurp_file("$dir/nocalls/flame.svg") // '';
    my $frames = () = $nsvg =~ /<g /g;
    cmp_ok $frames, '>', 2, "calls=0: a flame graph of the call-site paths, as nytp flame draws ($frames frames)";
    like slurp_file("$dir/nocalls/index.html"), qr/The profile has no sub return events \(it was made with calls=0\): the graph shows the caller;called paths/,
        'calls=0: the index says what the graph shows';
    like $sen, qr/\Anytp html: warning: \S*nocalls\.out: no sub return events \(profiled with calls=0\?\): caller;called paths from the call-site data\n\z/,
        'calls=0: the warning of nytp flame';
    my $nosubs = fresh_profile('nosubs', "$td/demo.pl", 'subs=0');
    my ($sts0) = html("$dir/nosubs", $nosubs);
    is $sts0, 0, 'subs=0: exit 0';
    ok !-e "$dir/nosubs/flame.svg", 'subs=0: no flame graph (no sub return events, no call sites)';
    like slurp_file("$dir/nosubs/index.html"), qr/No flame graph: the profile has no sub return events/,
        'subs=0: the index says why';
    # standard input is read once: the model and the flame graph in one pass
    my ($sts, undef, $ses) = run_cmd([$nytp, 'html', '-o', "$dir/stdin", '-'], stdin => slurp_file("$td/demo.out"));
    is $sts, 0, 'standard input: exit 0' or diag $ses;
    is slurp_file("$dir/stdin/flame.svg"), $svg, 'standard input: the same flame graph as from the file';
    for my $opt ('--no-flame', '--minimal') {
        my ($st) = html("$dir/noflame", $opt, "$td/demo.out");
        is $st, 0, "$opt: exit 0";
        ok !-e "$dir/noflame/flame.svg", "$opt: no flame.svg";
        unlike slurp_file("$dir/noflame/index.html"), qr/flame\.svg/, "$opt: the index does not refer to it";
    }
}

# ---- what the pages say: only what carries information, named for what it is ------

{
    my $out = "$dir/demo-report";
    my $m = model("$td/demo.out");
    my ($main) = grep { $_->{name} =~ /demo\.pl\z/ } @{ $m->{files} };
    my ($page) = grep { /demo-pl\.html\z/ } pages($out);
    my $h = slurp_file("$out/$page");
    my @mine = grep { $_->{fid} == $main->{fid} } @{ $m->{subs} };
    my $defined = grep { ($_->{first_line} // 0) > 0 && $_->{name} ne 'main::RUNTIME' } @mine;
    my ($summary) = $h =~ m{<summary>(.*?)</summary>};
    like $summary, qr/^\Q$defined\E subroutines defined here, \Q${\(@mine - $defined)}\E listed with this file but not defined in it \(/,
        "file page: the sub table counts the $defined subs defined there apart from the others";
    like $summary, qr/opcodes?/, 'file page: and names what the others are';
    my @never = grep { !$_->{calls} } @{ $m->{subs} };
    ok @never > 3, 'demo has never-called subs (' . scalar(@never) . ')';
    my $all = join '', map { slurp_file("$out/$_") } grep { /\.html\z/ } pages($out);
    unlike $all, qr/never called/, 'no headline for a sub that was never called';
    unlike $all, qr/within <b class=name>main::RUNTIME/, 'no "spent 0s within main::RUNTIME"';
}

# times of day in the local time zone, with the zone named
{
    local $ENV{TZ} = 'XYZ+3';
    my ($st, $so) = html("$dir/tz", "$td/demo.out");
    my $m = model("$td/demo.out");
    my @t = gmtime($m->{attributes}{basetime} - 3 * 3600);
    my $want = sprintf '%04d-%02d-%02d %02d:%02d:%02d XYZ (UTC-03:00)', $t[5] + 1900, $t[4] + 1, @t[3, 2, 1, 0];
    like slurp_file("$dir/tz/index.html"), qr{Run at<dd>\Q$want\E<}, "run at: local time, zone named ($want)";
    is $so, "report: $dir/tz/index.html\n", 'success: prints where the report is';
}

# a profile converted from Devel::DProf names DProf as its profiler
{
    my ($st, undef, $se) = run_cmd([$nytp, 'dprof-convert', '-o', "$dir/many.out", "$td/dprof/many.tmon"]);
    is $st, 0, 'dprof-convert: exit 0' or diag $se;
    ($st, undef, $se) = html("$dir/dprof-report", "$dir/many.out");
    is $st, 0, 'DProf profile: exit 0' or diag $se;
    my $h = slurp_file("$dir/dprof-report/index.html");
    like $h, qr{<dt>Profiler<dd>Devel::DProf 20110802\.00 }, 'DProf profile: the profiler is Devel::DProf, with its version';
    unlike $h, qr{Devel::NYTProf DProf}, 'DProf profile: not "Devel::NYTProf DProf"';
}

# a profile written by Devel::NYTP names it, with its version; one written
# by Devel::NYTProf names that; the first input's profiler is named
{
    my $ours = "$dir/ours.out";
    my ($st, undef, $se) = run_cmd([$nytp, 'run', '-o', $ours, '-e', 'sub f { 1 } f() for 1 .. 3']);
    is $st, 0, 'nytp run: exit 0' or diag $se;
    my $v = model($ours)->{attributes}{xs_version};
    ($st, undef, $se) = html("$dir/ours-report", $ours);
    is $st, 0, 'Devel::NYTP profile: exit 0' or diag $se;
    my $h = slurp_file("$dir/ours-report/index.html");
    like $h, qr{<dt>Perl<dd>[\d.]+, Devel::NYTP \Q$v\E<}, "Devel::NYTP profile: the profiler is Devel::NYTP $v";
    unlike $h, qr{Devel::NYTProf \Q$v\E}, "... not Devel::NYTProf $v";
    ($st, undef, $se) = html("$dir/theirs-report", "$td/demo.out");
    like slurp_file("$dir/theirs-report/index.html"), qr{, Devel::NYTProf 6\.\d+<},
        'Devel::NYTProf profile: the profiler is Devel::NYTProf';
}

# a string eval that defines subs: "includes X spent executing N calls to K
# subs defined therein", as nytprofhtml says it
{
    my $m = model("$td/evals.out");
    my %file = map { $_->{fid} => $_ } @{ $m->{files} };
    my @want;
    for my $f (grep { $_->{eval_fid} } @{ $m->{files} }) {
        next if $file{ $f->{eval_fid} }{eval_fid}; # counted in its parent eval's note
        my %in = ($f->{fid} => 1);
        my $grew = 1;
        while ($grew) {
            $grew = 0;
            for (grep { $_->{eval_fid} && $in{ $_->{eval_fid} } && !$in{ $_->{fid} } } @{ $m->{files} }) {
                $in{ $_->{fid} } = 1;
                $grew = 1;
            }
        }
        my @s = grep { $in{ $_->{fid} } && ($_->{first_line} // 0) > 0 } @{ $m->{subs} };
        my $calls = 0;
        $calls += $_->{calls} for @s;
        push @want, "$calls:" . scalar(@s) if $calls;
    }
    ok @want > 0, 'evals: the profile has a string eval defining a sub that was called';
    my $all = join '', map { slurp_file("$dir/evals-report/$_") } grep { /\.html\z/ } pages("$dir/evals-report");
    my @got;
    push @got, "$1:$2" while $all =~ /<br>includes \S+ spent executing (\d+) calls? to (\d+) subs? defined therein/g;
    is "@{[sort @got]}", "@{[sort @want]}", 'evals: "includes ... spent executing N calls to K subs defined therein"';
    SKIP: {
        my $nh = (grep { -x } map { "$_/nytprofhtml" } split /:/, $ENV{PATH})[0];
        skip 'nytprofhtml is not installed', 1 unless $nh;
        my ($st) = run_cmd([$nh, '--no-flame', '-f', "$td/evals.out", '-o', "$dir/evals-nytprofhtml"]);
        my $theirs = join '', map { slurp_file("$dir/evals-nytprofhtml/$_") } grep { /\.html\z/ } pages("$dir/evals-nytprofhtml");
        my @t;
        push @t, "$1:$2" while $theirs =~ /includes\s+\S+ spent executing (\d+) calls? to (\d+) subs? defined therein/g;
        my %u = map { $_ => 1 } @t;
        is "@{[sort @got]}", "@{[sort keys %u]}", 'evals: the same notes as nytprofhtml';
    }
}

# per-sub distribution of call durations: a histogram and percentiles from
# the SUB_RETURN events, against the exact ones computed from the events
{
    my $prof = fresh_profile('bimodal', <<'PL', '');
sub work { my $n = shift; my $x = 0; $x += $_ for 1 .. $n; return $x }
sub twice { work($_[0]); work(1) }
my $t = 0;
$t += work($_ % 10 == 0 ? 20000 : 5) for 1 .. 300;
twice(10) for 1 .. 20;
print STDERR '' if $t < 0;
PL
    my ($st, undef, $se) = html("$dir/bimodal", $prof);
    is $st, 0, 'durations: exit 0' or diag $se;
    my ($dst, $dump) = run_cmd([$nytp, 'dump', $prof]);
    my ($tps) = $dump =~ /^ATTRIBUTE\tticks_per_sec\t(\d+)$/m;
    my %calls;
    push @{ $calls{$2} }, $1 / $tps while $dump =~ /^SUB_RETURN\t\d+\t([\d.e+-]+)\t[\d.e+-]+\t(.*)$/mg;
    ok @{ $calls{'main::work'} // [] } == 340, 'durations: the profile has a return per call of main::work';
    my ($page) = grep { /bimodal-pl\.html\z/ } pages("$dir/bimodal");
    my $h = slurp_file("$dir/bimodal/$page");
    my %unit = (ns => 1e-9, "\x{c2}\x{b5}s" => 1e-6, ms => 1e-3, s => 1);
    my $secs = sub { my ($v, $u) = $_[0] =~ /^([\d.e+-]+)(ns|\x{c2}\x{b5}s|ms|s)$/ or return -1; $v * $unit{$u} };
    # half the last shown digit: durations are rounded for display
    my $half = sub { my ($v, $u) = $_[0] =~ /^([\d.e+-]+)(ns|\x{c2}\x{b5}s|ms|s)$/ or return 0; my ($d) = $v =~ /\.(\d+)/; 0.5 * 10**-length($d // '') * $unit{$u} };
    my $checked = 0;
    while ($h =~ m{<tr class=sh id=S\d+>.*?<b class=name>([^<]+)</b>.*?(?=<tr)}sg) {
        my ($sub, $row) = ($1, $&);
        my @c = sort { $a <=> $b } @{ $calls{$sub} // [] };
        next if @c < 2;
        my ($hist, $p50, $p90, $p99, $max) = $row =~ m{<div class=dist>(<svg class=hist .*?</svg>) <span class=pct>p50 (\S+), p90 (\S+), p99 (\S+), max ([^<]+)</span></div>};
        ok defined $hist, "durations: $sub has a histogram" or next;
        my @bars = $hist =~ /<rect /g;
        ok @bars >= 1, "durations: $sub: bars";
        my $n = () = @c;
        my %q = (p50 => 0.5, p90 => 0.9, p99 => 0.99);
        my %got = (p50 => $p50, p90 => $p90, p99 => $p99);
        for my $k (sort keys %q) {
            my $exact = $c[ (($q{$k} * $n) == int($q{$k} * $n) ? $q{$k} * $n : int($q{$k} * $n) + 1) - 1 ];
            my $g = $secs->($got{$k});
            ok abs($g - $exact) <= 0.06 * $exact + $half->($got{$k}) + 1e-12, "durations: $sub $k $got{$k} (exact ${\($exact * 1e6)}us)";
        }
        ok abs($secs->($max) - $c[-1]) <= 0.006 * $c[-1] + $half->($max) + 1e-12, "durations: $sub max $max (exact ${\($c[-1] * 1e6)}us)";
        $checked++;
    }
    ok $checked >= 2, "durations: checked $checked subs";
    like $h, qr{<b class=name>main::work</b>.*?p50 (\S+), p90 (\S+), p99}s, 'durations: main::work shown';
    my ($w50, $w99) = $h =~ m{<b class=name>main::work</b>.*?p50 (\S+), p90 \S+, p99 (\S+),}s;
    ok $secs->($w99) > 20 * $secs->($w50), "durations: the slow tenth of main::work's calls shows in p99 ($w50 vs $w99)";
    # a profile without call events (calls=0) shows none
    my $nocalls = fresh_profile('nocalls', "sub f { 1 } f() for 1 .. 5;\n", 'calls=0');
    ($st) = html("$dir/nocalls", $nocalls);
    unlike join('', map { slurp_file("$dir/nocalls/$_") } grep { /\.html\z/ } pages("$dir/nocalls")), qr/class=dist/,
        'durations: none without call events (calls=0)';
}

# ---- nytprofhtml's options ---------------------------------------------------------

{
    my ($st, $so, $se) = run_cmd([$nytp, 'html', '--file', "$td/demo.out", '--out', "$dir/longopts", '--delete']);
    is $st, 0, '--file, --out, --delete: exit 0' or diag $se;
    is $so, "report: $dir/longopts/index.html\n", '--file, --out, --delete: the report';
    ($st, $so, $se) = run_cmd([$nytp, 'html', '-f', "$td/demo.out", '-o', "$dir/shortopts", '-d', '-m']);
    is $st, 0, '-f, -o, -d, -m: exit 0' or diag $se;
    ok !-e "$dir/shortopts/flame.svg", '-m is --minimal';
    ($st, undef, $se) = html("$dir/fw", '--flamewidth', '700', "$td/demo.out");
    is $st, 0, '--flamewidth: exit 0' or diag $se;
    like slurp_file("$dir/fw/flame.svg"), qr/<svg [^>]*width="700"/, '--flamewidth: the flame graph is that wide';
    ($st, undef, $se) = html("$dir/fw", '--flamewidth', 'wide', "$td/demo.out");
    is $st, 2, '--flamewidth wide: a usage error';
    like $se, qr/^nytp html: .*flamewidth/, '--flamewidth wide: says so';

    # --lib shortens file names under it as under @INC
    ($st, undef, $se) = html("$dir/lib", '--lib', $td, "$td/utf8-names.out");
    is $st, 0, '--lib: exit 0' or diag $se;
    my $m = model("$td/utf8-names.out");
    my ($mod) = grep { $_->{name} =~ m{/lib/\x{c3}\x{9c}n} } @{ $m->{files} };
    (my $abs = $mod->{name}) =~ s{.*/testdata/}{$td/};
    is $abs, "$td/lib/\x{c3}\x{9c}n\x{c3}\x{af}code.pm", '--lib: the module sits under testdata';
    my ($root) = $mod->{name} =~ m{^(.*)/lib/};
    ($st, undef, $se) = html("$dir/lib", '--lib', $root, "$td/utf8-names.out");
    my $idx = slurp_file("$dir/lib/index.html");
    like $idx, qr{>lib/\x{c3}\x{9c}n\x{c3}\x{af}code\.pm</a>}, '--lib: the module is shown relative to it';
    ($st) = html("$dir/nolib", "$td/utf8-names.out");
    unlike slurp_file("$dir/nolib/index.html"), qr{>lib/\x{c3}\x{9c}n\x{c3}\x{af}code\.pm</a>}, 'without --lib: shown in full';

    # --no-mergeevals: a page for every string eval
    my $all = JSON::PP->new->decode((run_cmd([$nytp, 'dump', '--data', '--json', "$td/evals.out"]))[1]);
    ($st, undef, $se) = html("$dir/nomerge", '--no-mergeevals', "$td/evals.out");
    is $st, 0, '--no-mergeevals: exit 0' or diag $se;
    my @p = grep { /^f\d+/ } pages("$dir/nomerge");
    my @merged = grep { /^f\d+/ } pages("$dir/evals-report");
    is scalar(@p), scalar(@{ $all->{files} }), '--no-mergeevals: a page per file and per string eval, '
        . scalar(@p) . ' (merged: ' . scalar(@merged) . ')';
    ok @p > @merged, '--no-mergeevals: more pages than with merging';
}

# every line of the main file against nytprofhtml's line page: statements,
# time, average, calls and time in subs, shown the same way
my $nytprofhtml = (grep { -x } map { "$_/nytprofhtml" } split /:/, $ENV{PATH})[0];
SKIP: {
    skip 'nytprofhtml is not installed', 3 unless $nytprofhtml;
    for my $name (qw(demo recursion evals)) {
        my $theirs = "$dir/$name-nytprofhtml";
        my ($st, undef, $err) = run_cmd([$nytprofhtml, '--no-flame', '-f', "$td/$name.out", '-o', $theirs]);
        die "nytprofhtml failed: $err" if $st;
        my ($tpage) = grep { /-1-line\.html\z/ } pages($theirs);
        my ($opage) = grep { /^f1-/ } pages("$dir/$name-report");
        my (%t, %o);
        for (split /\n/, slurp_file("$theirs/$tpage")) {
            next unless m{^<tr><td class="h"><a name="(\d+)"></a>\d+</td>(.*)};
            my ($line, $rest) = ($1, $2);
            my @c = map { s/<[^>]*>//gr } ($rest =~ m{<td[^>]*>(.*?)</td>}g)[0 .. 3];
            my ($avg) = $rest =~ /title="Avg ([^"]+)"/;
            $t{$line} = join '|', $c[0], $c[1], $avg // '', $c[2], $c[3];
        }
        for (split /\n/, slurp_file("$dir/$name-report/$opage")) {
            next unless /^<tr id=L(\d+)>(.*)/;
            my ($line, $rest) = ($1, $2);
            my @c = map { s/<[^>]*>//gr } split /<td[^>]*>/, $rest, -1;
            $o{$line} = join '|', @c[2 .. 6];
        }
        my @diff = grep { ($t{$_} // '') ne ($o{$_} // '') } sort { $a <=> $b } keys %t;
        is scalar(@diff), 0, "$name: every line's numbers as nytprofhtml shows them (" . scalar(keys %t) . " lines)"
            or diag join "\n", map { "line $_: nytprofhtml $t{$_}, nytp " . ($o{$_} // '(none)') } @diff[0 .. ($#diff < 5 ? $#diff : 5)];
    }
}

# sub headlines and call notes carry the model's numbers
{
    my $m = model("$td/demo.out");
    my ($fib) = grep { $_->{name} eq 'main::fib' } @{ $m->{subs} };
    my ($page) = grep { /demo-pl\.html\z/ } pages("$dir/demo-report");
    my $text = unescape(slurp_file("$dir/demo-report/$page"));
    like $text, qr/within main::fib which was called \Q$fib->{calls}\E times/, 'demo: fib headline with its calls';
    my ($match) = grep { $_->{sub} eq 'main::CORE:match' } map { @{ $_->{calls} } } @{ $m->{files} };
    like $text, qr/making \Q$match->{count}\E calls to main::CORE:match/, 'demo: call note with the count';
    like $text, qr/executing statements in string eval/, 'demo: string evals linked';
}

# ---- escaping, page names, links ---------------------------------------------------

my $evil_src = join "\n",
    'use strict; use warnings; use Sub::Util qw(set_subname);',
    q{my $s = set_subname("main::<b>&\"quote\"</b>", sub { my $x = 0; $x += $_ for 1 .. 20; $x });},
    '$s->() for 1 .. 3;',
    'my $str = "</script><script>alert(1)</script>";',
    "sub caf { 1 } # caf\xe9 in Latin-1, not UTF-8",
    'caf();',
    q{eval "#line 1 \"../../../evil/x<i>.pl\"\nsub evil { 2 } evil();";},
    q{eval "1; # </script><script>alert(2)</script>";},
    '';
my $evil = fresh_profile('evil', $evil_src, '');
my $eout = "$dir/evil-report";
{
    my ($st, undef, $se) = html($eout, $evil);
    is $st, 0, 'tricky names: exit 0' or diag $se;
    my @files = pages($eout);
    my @bad = grep { !/^[A-Za-z0-9_-]+\.(?:html|css|js|svg)\z/ || -d "$eout/$_" } @files;
    is "@bad", '', 'page names are plain, flat, safe names';
    ok !-e "$dir/../evil" && !-e "$dir/evil" && !-e "$eout/../evil", 'nothing written outside the report';
    my ($scripts, $utf8) = (0, 0);
    my $all = '';
    for my $f (grep { /\.html\z/ } @files) {
        my $h = slurp_file("$eout/$f");
        my $n = () = $h =~ /<script/gi;
        $scripts++ if $n != 1 || $h !~ m{<script src=nytp\.js defer></script>};
        $utf8++ unless eval { decode('UTF-8', my $copy = $h, Encode::FB_CROAK); 1 };
        $all .= $h;
    }
    is $scripts, 0, 'every page has our one script tag and no other';
    is $utf8, 0, 'every page is valid UTF-8 (the Latin-1 byte too)';
    like $all, qr{&lt;/script&gt;&lt;script&gt;alert\(1\)&lt;/script&gt;}, 'a source line with script tags shows as text';
    like $all, qr{&lt;/script&gt;&lt;script&gt;alert\(2\)&lt;/script&gt;}, 'so does a string eval source';
    like $all, qr{main::&lt;b&gt;&amp;&quot;quote&quot;&lt;/b&gt;}, 'a sub name with <, &, quotes is escaped';
    like $all, qr{caf\x{c3}\x{a9} in Latin-1}, 'a byte that is not UTF-8 shows as its Latin-1 character';
}
for my $t (qw(tricky-strings utf8-names)) {
    my $out = "$dir/$t-report";
    my ($st, undef, $se) = html($out, "$td/$t.out");
    is $st, 0, "$t: exit 0" or diag $se;
    my $bad = 0;
    for my $f (grep { /\.html\z/ } pages($out)) {
        my $h = slurp_file("$out/$f");
        my $n = () = $h =~ /<script/gi;
        $bad++ if $n != 1 || !eval { decode('UTF-8', my $copy = $h, Encode::FB_CROAK); 1 };
    }
    is $bad, 0, "$t: one script tag per page, valid UTF-8";
}
{
    my $all = join '', map { slurp_file("$dir/utf8-names-report/$_") } grep { /\.html\z/ } pages("$dir/utf8-names-report");
    my $tricky = join '', map { slurp_file("$dir/tricky-strings-report/$_") } grep { /\.html\z/ } pages("$dir/tricky-strings-report");
    like $tricky, qr/dq&quot;sq&#39;/, "tricky-strings: quotes in a sub name escaped";
    like $tricky, qr/cr\x{e2}\x{90}\x{8d}name/, 'tricky-strings: a CR in a sub name shown as a visible symbol';
    unlike $tricky, qr/[\x00-\x08\x0b-\x1f]/, 'tricky-strings: no control bytes in any page';
    like $all, qr/\QΩμέγα::λάμδα\E/, 'utf8-names: UTF-8 names shown as they are';
    like $all, qr/Caf\x{c3}\x{a9}::cr\x{c3}\x{a9}er/, 'utf8-names: Latin-1 names shown as their characters';
}

# every link inside a report names a page that exists, and an id in it
for my $r (qw(demo evals evil tricky-strings)) {
    my $out = "$dir/$r-report";
    my %ids;
    my @links;
    for my $f (grep { /\.(?:html|svg)\z/ } pages($out)) {
        my $h = slurp_file("$out/$f");
        $ids{$f}{$1} = 1 while $h =~ /\bid="?([^\s">]+)/g;
        next if $f =~ /\.svg\z/ && $h !~ /<a href/;
        push @links, map { [$f, $_] } $h =~ /\b(?:href|src|data)="?([^\s">]+)/g;
    }
    my @broken;
    my @external = grep { $_->[1] =~ m{^(?:https?:)?//|^https?:} } @links;
    is scalar(@external), 0, "$r: no reference outside the report (works offline)";
    for (@links) {
        my ($from, $l) = @$_;
        next if $l =~ /^data:/;
        if ($l =~ m{^file://(/.*)}) { # a source file, outside the report
            (my $path = $1) =~ s/%([0-9A-F]{2})/chr hex $1/ge;
            push @broken, "$from -> $l" if !-f $path;
            next;
        }
        my ($page, $frag) = split /#/, $l, 2;
        $page = $from if $page eq '';
        push @broken, "$from -> $l" if !-e "$out/$page" || (defined $frag && $page =~ /\.html\z/ && !$ids{$page}{$frag});
    }
    is "@broken", '', "$r: every link resolves (" . scalar(@links) . " links)";
}

# the jump-to-file menu: nytp.js lists every source file (not the string
# evals) by its shown name, JSON-escaped
for my $r (qw(demo tricky-strings utf8-names)) {
    my $out = "$dir/$r-report";
    my $js = slurp_file("$out/nytp.js");
    my ($list) = $js =~ /\Avar nytpFiles = (\[.*?\]);\n/s;
    my $files = eval { JSON::PP->new->decode($list // '') };
    ok $files, "$r: nytp.js starts with the list of files" or diag $@;
    my $m = model("$td/$r.out");
    my @real = grep { !$_->{eval_fid} } @{ $m->{files} };
    is scalar(@{ $files // [] }), scalar(@real), "$r: one entry per source file";
    my @bad = grep { !-f "$out/$_->[0]" } @{ $files // [] };
    is "@bad", '', "$r: each names its page";
    my @names = map { $_->[1] } @{ $files // [] };
    is "@names", join(' ', sort @names), "$r: sorted by name";
}
{
    my $js = slurp_file("$dir/tricky-strings-report/nytp.js");
    my ($list) = $js =~ /\Avar nytpFiles = (\[.*?\]);\n/s;
    my @names = map { $_->[1] } @{ JSON::PP->new->utf8->decode($list) };
    ok scalar(grep { /<b>/ && /\t/ } @names), 'tricky-strings: a file name with <b> and a tab is in the menu, as text';
}

# file pages link to their source file when it is there, percent-encoded
{
    my $weird = "$dir/we ird<&>\"'%\x{c3}\x{bc}";
    make_path($weird);
    open my $fh, '>', "$weird/x.pl" or die;
    print $fh "sub f { 1 }\nf() for 1 .. 3;\n";
    close $fh;
    my $prof = fresh_profile('weird-dir', "$weird/x.pl", '');
    my ($st, undef, $se) = html("$dir/weird-report", $prof);
    is $st, 0, 'weird directory: exit 0' or diag $se;
    my ($page) = grep { /x-pl\.html\z/ } pages("$dir/weird-report");
    my $h = slurp_file("$dir/weird-report/$page");
    my ($href, $text) = $h =~ m{<a class=path [^>]*href="([^"]*)">([^<]*)</a>};
    (my $want = $weird) =~ s{([^A-Za-z0-9\-._~/])}{sprintf '%%%02X', ord $1}ge;
    is $href, "file://$want/x.pl", 'source link: file://, every special byte percent-encoded';
    is unescape($text), "$weird/x.pl", 'source link: shows the name, escaped';
    unlink "$weird/x.pl";
    ($st) = html("$dir/weird-report", $prof);
    unlike slurp_file("$dir/weird-report/$page"), qr/<a class=path/, 'source link: none when the file is gone';
}

# a corrupt profile with an absurd time (found by mutating profiles under
# ASan): shown, not overflowing a buffer
{
    my ($st, undef, $se) = html("$dir/huge-time", "$td/fuzz/html-huge-time.out");
    is $st, 0, 'absurd times: exit 0' or diag $se;
    like slurp_file("$dir/huge-time/subs.html"), qr/>-9\.66e\+95s</, 'absurd times: in e-notation';
}

# damaged profiles: random bytes changed in an uncompressed one; nytp html
# reports or copes, never crashes (exit 0 or 1, nothing on a signal)
{
    my $orig = slurp_file("$td/tricky-strings-compress0.out");
    srand(7);
    my @bad;
    for my $i (1 .. 40) {
        my $m = $orig;
        substr($m, 40 + int rand(length($m) - 40), 1) = chr int rand 256 for 1 .. 1 + int rand 6;
        open my $fh, '>:raw', "$dir/mutant.out" or die;
        print $fh $m;
        close $fh;
        my ($st, undef, $se) = html("$dir/mutant", "$dir/mutant.out");
        push @bad, "$i: exit $st $se" if $st > 1;
    }
    is "@bad", '', 'damaged profiles: 40 runs, no crash';
}

# a one-line program gets a one-line page
{
    my $one = fresh_profile('oneline', "sub f { \$_[0] * 2 } my \$x = 0; \$x += f(\$_) for 1 .. 100;\n", '');
    my ($st) = html("$dir/oneline", $one);
    is $st, 0, 'one line: exit 0';
    my ($page) = grep { /oneline-pl\.html\z/ } pages("$dir/oneline");
    my @rows = slurp_file("$dir/oneline/$page") =~ /<tr id=L(\d+)>/g;
    is "@rows", '1', 'one line: one line row';
}

# ---- other profiles: blocks, no source, several inputs ------------------------------

{
    my $out = "$dir/blocks-report";
    my ($st, undef, $se) = html($out, "$td/demo-blocks.out");
    is $st, 0, 'blocks: exit 0' or diag $se;
    ok scalar(grep { /-block\.html\z/ } pages($out)), 'blocks: block views';
    ok scalar(grep { /-sub\.html\z/ } pages($out)), 'blocks: sub views';
    # the line view lists the hottest blocks: the block view's rows, by time
    my ($lp) = grep { /demo-pl\.html\z/ } pages($out);
    (my $bp = $lp) =~ s/\.html\z/-block.html/;
    my %block;
    my $bh = slurp_file("$out/$bp");
    while ($bh =~ m{<tr id=L(\d+)><td>\d+<td>(\d+)<td[^>]*>([^<]+)<td>}g) { $block{$1} = [$2, $3] }
    ok keys(%block) > 3, 'blocks: the block view has blocks (' . scalar(keys %block) . ')';
    my $lh = slurp_file("$out/$lp");
    my ($count) = $lh =~ m{<details class=blocks open><summary>(\d+) blocks? with statements};
    is $count, scalar(keys %block), 'blocks: the line view counts the blocks';
    my @rows = $lh =~ m{<tr><td>(\d+)<td data-v=\S+>([^<]+)<td>[\d.]+%<td class=name><a href="#L(\d+)">}g;
    my @got;
    push @got, "$rows[$_ + 2]:$rows[$_]:$rows[$_ + 1]" for grep { $_ % 3 == 0 } 0 .. $#rows;
    my @by_time = (sort { $block{$b}[2] <=> $block{$a}[2] } map { $block{$_}[2] = $1 * { ns => 1e-9, "\x{c2}\x{b5}s" => 1e-6, ms => 1e-3, s => 1 }->{$2} if $block{$_}[1] =~ /^([\d.]+)(ns|\x{c2}\x{b5}s|ms|s)$/; $_ } grep { $block{$_}[1] ne '0s' } keys %block);
    my @want = map { "$_:$block{$_}[0]:$block{$_}[1]" } @by_time[0 .. ($#by_time < 9 ? $#by_time : 9)];
    is scalar(@got), scalar(@want), 'blocks: the ten hottest (or all)';
    is_deeply [sort @got], [sort @want], 'blocks: each with the statements and time of the block view';
    my ($first) = $lh =~ m{<tr><td>\d+<td data-v=\S+>[^<]+<td>([\d.]+)%};
    my $m = model("$td/demo-blocks.out");
    my ($mf) = grep { $_->{name} =~ /demo\.pl\z/ } @{ $m->{files} };
    my $t = 0;
    $t += $_->[1] for @{ $mf->{lines} };
    my ($top_v) = $lh =~ m{<tr><td>\d+<td data-v=([^>\s]+)>};
    ok abs($first - 100 * $top_v / $t) < 0.051, "blocks: the share is of the file's statement time ($first%)";
    ($st, undef, $se) = html("$dir/blocks-min", '--minimal', "$td/demo-blocks.out");
    is $st, 0, '--minimal: exit 0';
    ok !grep({ /-block\.html\z/ } pages("$dir/blocks-min")), '--minimal: no block views';

    $out = "$dir/nosrc-report";
    ($st, undef, $se) = html($out, "$td/demo-savesrc0.out");
    is $st, 0, 'savesrc=0: exit 0' or diag $se;
    my ($eval) = grep { /^f\d+-eval/ } pages($out);
    my $h = slurp_file("$out/$eval");
    like $h, qr/source of this file is not available/, 'savesrc=0: the eval page says its source is missing';
    like $h, qr/<tr id=L1><td>1<td>\d+<td/, 'savesrc=0: and still shows the line data';

    # a copy: the same file named twice is read once
    system('cp', "$td/demo.out", "$dir/demo-copy.out") == 0 or die;
    ($st, undef, $se) = html("$dir/two", "$td/demo.out", "$dir/demo-copy.out");
    is $st, 0, 'two inputs: exit 0';
    my ($one) = slurp_file("$dir/demo-report/index.html") =~ m{Statements<dd>([\d,]+) executed};
    my ($two) = slurp_file("$dir/two/index.html") =~ m{Statements<dd>([\d,]+) executed};
    tr/,//d for $one, $two;
    ok $one && $two == 2 * $one, "two inputs: combined (twice the statements: $one, $two)";
}

# ---- errors and atomicity ---------------------------------------------------------------

{
    my $out = "$dir/atomic";
    my ($st) = html($out, "$td/demo.out");
    is $st, 0, 'atomic: first report written';
    my $before = slurp_file("$out/index.html");
    my ($st2, $so2, $se2) = html($out, "$td/broken/bad-tag.out");
    is $st2, 1, 'atomic: corrupt input exits 1';
    is $so2, '', 'atomic: no "report:" line when it failed';
    like $se2, qr/^nytp html: \Q$td\E\/broken\/bad-tag\.out: /, 'atomic: one error naming the file';
    is slurp_file("$out/index.html"), $before, 'atomic: the previous report is intact';
    my @left = grep { /^atomic\.tmp/ } pages($dir);
    is "@left", '', 'atomic: no temporary directory left';
    my ($st3, undef, $se3) = html($out, '--strict', "$td/broken/trunc-z-middle.out");
    is $st3, 1, '--strict: a truncated profile is an error';
    is slurp_file("$out/index.html"), $before, '--strict: the previous report is intact';
    my ($st4, undef, $se4) = html("$dir/trunc", "$td/broken/trunc-z-middle.out");
    is $st4, 0, 'truncated: exit 0 without --strict';
    like $se4, qr/warning: .*truncated/, 'truncated: warns';
    like slurp_file("$dir/trunc/index.html"), qr/Complete<dd><strong class=warn>no/, 'truncated: the index says incomplete';

    # a directory that is not a report is written into, and nothing in it
    # that nytp did not write is touched
    make_path("$dir/precious");
    open my $pf, '>', "$dir/precious/thesis.tex" or die;
    print $pf "years of work\n";
    close $pf;
    my ($stp, undef, $sep) = html("$dir/precious", "$td/demo.out");
    is $stp, 0, 'a directory that is not a report: written into';
    is slurp_file("$dir/precious/thesis.tex"), "years of work\n", 'a directory that is not a report: its files are left alone';
    ok -e "$dir/precious/index.html", 'a directory that is not a report: the report is there';
    # an earlier report of nytprofhtml has no list of what nytp wrote: its
    # index.html is not replaced
    SKIP: {
        skip 'nytprofhtml is not installed', 3 unless $nytprofhtml && -d "$dir/demo-nytprofhtml";
        my $idx = slurp_file("$dir/demo-nytprofhtml/index.html");
        my ($str, undef, $ser) = html("$dir/demo-nytprofhtml", "$td/demo.out");
        is $str, 1, "nytprofhtml's report is not replaced";
        like $ser, qr/^nytp html: \S+: index\.html there was not written by nytp .*\n\z/, "nytprofhtml's report: one line saying why";
        is slurp_file("$dir/demo-nytprofhtml/index.html"), $idx, "nytprofhtml's report: its index is intact";
    }

    open my $fh, '>', "$dir/plainfile" or die;
    close $fh;
    my ($st5, undef, $se5) = html("$dir/plainfile", "$td/demo.out");
    is $st5, 1, '-o naming a plain file: exit 1';
    my ($st6, undef, $se6) = run_cmd([$nytp, 'html', '--bogus']);
    is $st6, 2, 'unknown option: exit 2';
    my ($st7, $so7) = run_cmd([$nytp, 'html', '--help']);
    like $so7, qr/^usage: nytp html/, '--help';
    my ($st8, undef, $se8) = run_cmd([$nytp, 'html'], cwd => $dir);
    is $st8, 1, 'no nytprof.out here: exit 1';
    like $se8, qr/nytprof\.out/, 'no nytprof.out here: says so';
}

# ---- progress on a terminal ------------------------------------------------------------

SKIP: {
    my $script = (grep { -x } map { "$_/script" } split /:/, $ENV{PATH})[0];
    skip 'script(1) is not installed', 2 unless $script;
    local $ENV{NYTP_PROGRESS_AFTER} = '0';
    my ($st, $so) = run_cmd([$script, '-qec', "$nytp html -o $dir/tty $td/demo.out", '/dev/null']);
    is $st, 0, 'on a terminal: exit 0';
    like $so, qr/\rnytp html: (?:loading|writing)[^\r]*\r\r\e\[Kreport: \Q$dir\E\/tty\/index\.html\r?\n\z/,
        'on a terminal: a progress line, erased at the end, then where the report is';
}

# ---- --open -----------------------------------------------------------------------------------

{
    local $ENV{DISPLAY} = '';
    local $ENV{WAYLAND_DISPLAY} = '';
    local $ENV{BROWSER} = '';
    my ($st, $so, $se) = html("$dir/open", '--open', "$td/demo.out");
    is $st, 0, '--open without a display: exit 0';
    is $so, "report: $dir/open/index.html\n", '--open without a display: prints where the report is';
    like $se, qr/^nytp html: warning: --open: no display and no \$BROWSER; open \Q$dir\E\/open\/index\.html yourself\n\z/,
        '--open without a display: says why it did not open it';
    make_path("$dir/bin");
    open my $fh, '>', "$dir/bin/xdg-open" or die;
    print $fh "#!/bin/sh\necho \"\$1\" > '$dir/opened'\n";
    close $fh;
    chmod 0755, "$dir/bin/xdg-open";
    local $ENV{PATH} = "$dir/bin:$ENV{PATH}";
    local $ENV{DISPLAY} = ':99';
    ($st, $so) = html("$dir/open", '--open', "$td/demo.out");
    is $st, 0, '--open with a display: exit 0';
    is slurp_file("$dir/opened"), "$dir/open/index.html\n", '--open with a display: runs xdg-open on index.html';
    # $BROWSER comes first
    open $fh, '>', "$dir/bin/my browser" or die;
    print $fh "#!/bin/sh\necho \"\$1 \$2\" > '$dir/browsed'\n";
    close $fh;
    chmod 0755, "$dir/bin/my browser";
    local $ENV{BROWSER} = "'$dir/bin/my browser' --new-window:firefox";
    unlink "$dir/opened";
    ($st, $so, $se) = html("$dir/open", '--open', "$td/demo.out");
    is $st, 0, '--open with $BROWSER: exit 0' or diag $se;
    is slurp_file("$dir/browsed"), "--new-window $dir/open/index.html\n", '--open with $BROWSER: runs its first entry on index.html';
    ok !-e "$dir/opened", '--open with $BROWSER: not xdg-open';
    local $ENV{BROWSER} = "$dir/bin/missing";
    ($st, $so, $se) = html("$dir/open", '--open', "$td/demo.out");
    is $st, 0, '--open with a $BROWSER that fails: the report is still written';
    like $se, qr/warning: --open: .*failed; open \Q$dir\E\/open\/index\.html yourself/, '--open with a $BROWSER that fails: says so';
}

# ---- call graphs -------------------------------------------------------------------------

# nytp.js holds the calls between subs: every (caller, called) pair of the
# model's call sites, summed
for my $name (qw(demo recursion anon tricky-strings utf8-names)) {
    my $out = "$dir/$name-report";
    my $js = slurp_file("$out/nytp.js");
    my ($subs) = $js =~ /\nvar nytpSubs = (\[.*?\]);\n/s;
    my ($edges) = $js =~ /\nvar nytpEdges = (\[.*?\]);\n/s;
    $subs = JSON::PP->new->decode($subs // '[]');
    $edges = JSON::PP->new->decode($edges // '[]');
    my $m = model("$td/$name.out");
    my %is_sub = map { $_->{name} => 1 } @{ $m->{subs} };
    my %want;
    for my $s (@{ $m->{subs} }) {
        for my $c (@{ $s->{called_by} }) {
            for my $caller (grep { $is_sub{$_} } @{ $c->{callers} }) {
                $want{"$caller -> $s->{name}"}[0] += $c->{count};
                $want{"$caller -> $s->{name}"}[1] += $c->{incl};
            }
        }
    }
    # the full names: a shortened one is the title of its link in subs.html
    my %full;
    my $all = slurp_file("$out/subs.html");
    while ($all =~ m{<tr id=S(\d+)>.*?<td class=name><a [^>]*>(?:<span title="([^"]*)">)?([^<]*)}g) {
        $full{$1} = unescape($2 // $3);
    }
    my %got = map { ("$full{$_->[0]} -> $full{$_->[1]}" => [$_->[2], $_->[3]]) } @$edges;
    my @bad = grep { !$got{$_} || $got{$_}[0] != $want{$_}[0] || !near($got{$_}[1], $want{$_}[1]) } keys %want;
    if ($name =~ /tricky|utf8/) {
        # names shown differ from the raw bytes (control characters as
        # symbols, Latin-1 as characters): compare the edges' numbers
        my $fmt = sub { sprintf '%d:%.9g', @_ };
        my @g = sort map { $fmt->($_->[2], $_->[3]) } @$edges;
        my @w = sort map { $fmt->(@$_) } values %want;
        @bad = "@g" eq "@w" ? () : ("edges @g, want @w");
    }
    is scalar(keys %got), scalar(keys %want), "$name: call graph: one edge per calling and called sub (" . scalar(keys %want) . ")";
    is "@bad", '', "$name: call graph: each with the calls and inclusive time of the model";
    is scalar(@$subs), scalar(@{ $m->{subs} }), "$name: call graph: every sub named";
}

# --dot: Graphviz files of packages, all subs, and each file's subs
{
    my $out = "$dir/dot-report";
    my ($st, undef, $se) = html($out, '--dot', "$td/tricky-strings.out");
    is $st, 0, '--dot: exit 0' or diag $se;
    my @dots = grep { /\.dot\z/ } pages($out);
    ok((grep { $_ eq 'packages-callgraph.dot' } @dots), '--dot: packages-callgraph.dot');
    ok((grep { $_ eq 'subs-callgraph.dot' } @dots), '--dot: subs-callgraph.dot');
    ok((grep { /^f\d+-.*-calls\.dot\z/ } @dots), '--dot: a file of each source file\'s subs');
    my $subs = slurp_file("$out/subs-callgraph.dot");
    my $m = model("$td/tricky-strings.out");
    my @called = grep { $_->{calls} } @{ $m->{subs} };
    my @nodes = $subs =~ /^    s\d+ \[label=/mg;
    is scalar(@nodes), scalar(@called), '--dot: subs-callgraph.dot has a node per called sub';
    unlike join('', map { (my $d = slurp_file("$out/$_")) =~ s/ -> / /g; $d } @dots), qr/[<>]|[\x00-\x08\x0b-\x1f]/, '--dot: names escaped (no < >, no control bytes)';
    my @links = map { slurp_file("$out/$_") =~ /href="?([^"\s>]+\.dot)\b/g } grep { /\.html\z/ } pages($out);
    my %dots = map { $_ => 1 } @dots;
    is scalar(grep { $dots{$_} } @links), scalar(@links), '--dot: the index and file pages link to them (' . scalar(@links) . ' links)';
    is scalar(keys %{ { map { $_ => 1 } @links } }), scalar(@dots), '--dot: every .dot file is linked';
    ($st) = html("$dir/nodot", "$td/demo.out");
    ok !grep({ /\.dot\z/ } pages("$dir/nodot")), 'without --dot: no .dot file';
    my $dot = (grep { -x } map { "$_/dot" } split /:/, $ENV{PATH})[0];
    SKIP: {
        skip 'graphviz is not installed', 1 unless $dot;
        my @bad;
        for my $f (@dots) {
            my ($s, undef, $e) = run_cmd([$dot, '-Tsvg', '-o', '/dev/null', "$out/$f"]);
            push @bad, "$f: $e" if $s || $e =~ /error|warning/i;
        }
        is "@bad", '', '--dot: graphviz reads every file without a complaint (' . scalar(@dots) . ' files)';
    }
}

# ---- in a browser -----------------------------------------------------------------------------

my $chromium = (grep { -x } map { "$_/chromium" } split /:/, $ENV{PATH})[0];
SKIP: {
    skip 'chromium is not installed (make deps)', 1 unless $chromium;
    my $shots = $ENV{NYTP_SCREENSHOTS} || "$dir/screenshots";
    make_path($shots);
    my @chrome = ('timeout', '120', $chromium, '--headless', '--no-sandbox', '--disable-gpu',
        "--user-data-dir=$dir/chrome", '--enable-logging=stderr', '--v=0');
    my $out = "$dir/demo-report";
    my ($page) = grep { /demo-pl\.html\z/ } pages($out);
    for my $p ('index.html', $page, 'subs.html', 'packages.html', 'flame.svg') {
        my ($st, $dom, $err) = run_cmd([@chrome, '--dump-dom', "file://$out/$p"]);
        is $st, 0, "chromium loads $p";
        my @console = grep { /CONSOLE/ } split /\n/, $err;
        is "@console", '', "$p: no console messages";
        if ($p eq 'flame.svg') {
            like $dom, qr{<g class="frames">}, "$p: frames are there";
            next;
        }
        like $dom, qr{<th[^>]*><button type="button">}, "$p: the script ran (sort buttons in the headings)";
        my @opts = $dom =~ m{<select class="jump".*?</select>}s ? ($& =~ /<option/g) : ();
        is scalar(@opts), 4, "$p: the jump-to-file menu lists the 3 source files";
        like $dom, $p eq $page ? qr/<table class="src sort" id="lines">/ : qr/<table class="sort subs"/, "$p: its tables are there";
        like $dom, qr{<svg class="treemap"[^>]*>.*<rect class="sb"}s, "$p: the treemap is there" if $p eq 'packages.html';
        like $dom, qr{<object data="flame\.svg"}, "$p: the flame graph is there" if $p eq 'index.html';
        next if $p eq 'subs.html'; # screenshots of the index, a file page and the packages
        (my $png = $p) =~ s/\.html\z/.png/;
        $png = 'file.png' if $p eq $page;
        run_cmd([@chrome, '--hide-scrollbars', '--window-size=1280,1000', "--screenshot=$shots/$png", "file://$out/$p"]);
        my $img = slurp_file("$shots/$png") // '';
        ok length($img) > 5000 && substr($img, 0, 8) eq "\x89PNG\r\n\x1a\n", "$p: screenshot saved in $shots/$png";
    }

    # the call graph of each sub headline: callers on the left, the subs
    # it called on the right, as in the model
    for my $name (qw(recursion tricky-strings)) {
        my $o = "$dir/$name-report";
        my ($fp) = grep { /\Q$name\E-pl\.html\z/ } pages($o);
        my $h = slurp_file("$o/$fp");
        my $probe = '<script>window.addEventListener("load", function () {'
            . 'var o = [], b = document.querySelectorAll("button.cgb");'
            . 'for (var i = 0; i < b.length; i++) { b[i].click(); var tr = b[i].closest("tr"), svg = tr.querySelector("svg.cg");'
            . ' function names(sel) { return [].map.call(svg.querySelectorAll(sel), function (a) { return nytpSubs[+a.getAttribute("data-sid")][0]; }).sort().join("|"); }'
            . ' o.push(nytpSubs[+tr.id.slice(1)][0] + "<=" + names("a.in") + "=>" + names("a.out") + "=" + svg.querySelectorAll(".n.me text").length); }'
            . 'document.body.setAttribute("data-probe", JSON.stringify(o));'
            . '});</script>';
        $h =~ s{</body>}{$probe</body>};
        open my $pf, '>', "$o/probe-cg.html" or die;
        print $pf $h;
        close $pf;
        my ($st, $dom, $err) = run_cmd([@chrome, '--dump-dom', "file://$o/probe-cg.html"]);
        my @console = grep { /CONSOLE/ } split /\n/, $err;
        is "@console", '', "$name: call graphs drawn without console messages";
        my ($json) = $dom =~ /data-probe="([^"]*)"/;
        my $got = eval { JSON::PP->new->decode(unescape($json // '')) } // [];
        ok @$got > 2, "$name: call graph buttons on the headlines (" . scalar(@$got) . ')';
        next unless $name eq 'recursion';
        my $m = model("$td/$name.out");
        my %is_sub = map { $_->{name} => 1 } @{ $m->{subs} };
        my (%in, %outs);
        for my $s (@{ $m->{subs} }) {
            for my $c (grep { $is_sub{$_} && $_ ne $s->{name} } map { @{ $_->{callers} } } @{ $s->{called_by} }) {
                $in{ $s->{name} }{$c} = 1;
                $outs{$c}{ $s->{name} } = 1;
            }
        }
        my @bad;
        for (@$got) {
            my ($sub, $l, $r) = /^(.*?)<=(.*)=>(.*)=\d+$/ or do { push @bad, $_; next };
            my $wl = join '|', sort keys %{ $in{$sub} // {} };
            my $wr = join '|', sort keys %{ $outs{$sub} // {} };
            push @bad, "$sub: callers $l (want $wl), called $r (want $wr)" if $l ne $wl || $r ne $wr;
        }
        is "@bad", '', "recursion: each sub's call graph shows its callers and the subs it called";
    }

    # the new pages of the report with hostile names: no console message,
    # and names shown as text (nothing from the profile becomes markup)
    for my $p ('index.html', 'packages.html') {
        my $o = "$dir/tricky-strings-report";
        my ($st, $dom, $err) = run_cmd([@chrome, '--dump-dom', "file://$o/$p"]);
        my @console = grep { /CONSOLE/ } split /\n/, $err;
        is "@console", '', "tricky-strings: $p: no console messages";
        my @scripts = $dom =~ /<script/gi;
        is scalar(@scripts), 1, "tricky-strings: $p: no script element but nytp.js";
        like $dom, qr{<select class="jump"}, "tricky-strings: $p: the jump-to-file menu is built";
    }

    # clicking a heading sorts: calls descending, then ascending
    my $h = slurp_file("$out/index.html");
    my $probe = '<script>window.addEventListener("load", function () {'
        . 'var b = document.querySelector("#topsubs th button"), o = [];'
        . 'function calls() { return [].map.call(document.querySelectorAll("#topsubs tbody tr"),'
        . ' function (r) { return r.cells[0].textContent; }).join(","); }'
        . 'b.click(); o.push(calls()); b.click(); o.push(calls());'
        . 'document.body.setAttribute("data-probe", o.join(";") + ";" + b.parentNode.getAttribute("aria-sort"));'
        . '});</script>';
    $h =~ s{</body>}{$probe</body>};
    open my $fh, '>', "$out/probe.html" or die;
    print $fh $h;
    close $fh;
    my ($st, $dom) = run_cmd([@chrome, '--dump-dom', "file://$out/probe.html"]);
    my ($probed) = $dom =~ /data-probe="([^"]*)"/;
    my ($down, $up, $aria) = split /;/, $probed // '';
    my @calls = split /,/, $down // '';
    ok @calls > 3, 'sorting: rows after a click';
    is $down, join(',', sort { $b <=> $a } @calls), 'sorting: first click sorts calls descending';
    is $up, join(',', sort { $a <=> $b } @calls), 'sorting: second click ascending';
    is $aria, 'ascending', 'sorting: aria-sort says so';

    # sorting a source table by time: the hottest line first, with its sub
    # headline above it and its call notes below it
    my $fp = slurp_file("$out/$page");
    $probe = '<script>window.addEventListener("load", function () {'
        . 'var b = document.querySelectorAll("#lines th button")[2]; b.click();'
        . 'var rows = document.querySelector("#lines tbody").rows, o = [];'
        . 'for (var i = 0; i < 4; i++) o.push(rows[i].className || rows[i].id);'
        . 'document.body.setAttribute("data-probe", o.join(","));'
        . '});</script>';
    $fp =~ s{</body>}{$probe</body>};
    open $fh, '>', "$out/probe3.html" or die;
    print $fh $fp;
    close $fh;
    ($st, $dom) = run_cmd([@chrome, '--dump-dom', "file://$out/probe3.html"]);
    my ($order) = $dom =~ /data-probe="([^"]*)"/;
    my $m = model("$td/demo.out");
    my ($main) = grep { $_->{name} =~ /demo\.pl\z/ } @{ $m->{files} };
    my ($hot) = sort { $b->[1] <=> $a->[1] } @{ $main->{lines} };
    my $subs_there = grep { ($_->{first_line} // -1) == $hot->[0] && $_->{fid} == $main->{fid} } @{ $m->{subs} };
    my $calls_there = grep { $_->{line} == $hot->[0] } @{ $main->{calls} };
    my @want = (('sh') x $subs_there, "L$hot->[0]", ($calls_there ? 'cn' : ()));
    $order = join ',', (split(/,/, $order // ''))[0 .. $#want];
    is $order, join(',', @want), "sorting lines by time: line $hot->[0] first, with its headline and notes";

    # the filter of the sub list shows only the subs whose name matches
    my $subs = slurp_file("$out/subs.html");
    $probe = '<script>window.addEventListener("load", function () {'
        . 'var f = document.querySelector("input.filter"); f.value = "CORE:";'
        . 'f.dispatchEvent(new Event("input"));'
        . 'var shown = [].filter.call(document.querySelectorAll("#allsubs tbody tr"), function (r) { return !r.hidden; });'
        . 'document.body.setAttribute("data-probe", shown.length);'
        . '});</script>';
    $subs =~ s{</body>}{$probe</body>};
    open $fh, '>', "$out/probe2.html" or die;
    print $fh $subs;
    close $fh;
    ($st, $dom) = run_cmd([@chrome, '--dump-dom', "file://$out/probe2.html"]);
    my ($shown) = $dom =~ /data-probe="(\d+)"/;
    my $want = grep { $_->{name} =~ /CORE:/i } @{ model("$td/demo.out")->{subs} };
    is $shown, $want, "filter: 'CORE:' leaves the $want subs with it in their name";
}

# ---- several processes in one report ----------------------------------------------------
# a program that forks two children, all three waiting 0.3 s at once: the
# wall time adds up to about 0.9 s; the run took about 0.3 s, and the
# header says both
{
    my $prog = "$dir/forks.pl";
    open my $fh, '>', $prog or die $!;
    print $fh 'sub work { select undef, undef, undef, 0.3 }
my @k;
for (1 .. 2) { my $pid = fork // die; if (!$pid) { work(); exit 0 } push @k, $pid }
work();
waitpid $_, 0 for @k;
';
    close $fh;
    my $out = "$dir/forks.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'run', '-o', $out, $prog]);
    my @files = glob("$out*");
    is scalar @files, 3, 'forks: three profiles' or diag $err;
    ($st, undef, $err) = run_cmd([$nytp, 'html', '-o', "$dir/forks", @files]);
    is $st, 0, 'forks: one report of the three' or diag $err;
    my $index = slurp_file("$dir/forks/index.html") // '';
    my ($sum, $span) = $index =~ m{<dt>Wall time<dd>(\S+) summed over 3 processes; (\S+) from the first one's start to the last one's end<dt>};
    ok defined $span, 'forks: the wall time is said to be summed over the 3 processes, with the span of the run'
        or diag $index =~ m{(<dt>Wall time.{0,200})}s;
    my %unit = (s => 1, ms => 1e-3, "\xC2\xB5s" => 1e-6);
    my ($sv, $pv) = map { /^([\d.]+)(\D+)$/ ? $1 * ($unit{$2} // 0) : 0 } $sum // '', $span // '';
    ok $sv >= 0.85 && $pv >= 0.29 && $pv < 0.75 * $sv, "forks: summed $sv s, the span $pv s, shorter";
    ($st) = run_cmd([$nytp, 'html', '-o', "$dir/forks1", $files[0]]);
    unlike slurp_file("$dir/forks1/index.html") // '', qr/summed over/, 'one process: no sum said';
}

done_testing;
