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

    # one page per file and string eval, plus the fixed pages
    my @html = grep { /^f\d+-.*\.html\z|^f\d+\.html\z/ } pages($out);
    is scalar(@html), scalar(keys %file), "$name: a page per file and (collapsed) string eval";
    ok -s "$out/$_", "$name: $_ written" for qw(index.html subs.html nytp.css nytp.js flame.svg);
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
    my ($stn) = html("$dir/nocalls", $nocalls);
    is $stn, 0, 'calls=0: exit 0';
    ok !-e "$dir/nocalls/flame.svg", 'calls=0: no flame graph (no sub return events)';
    like slurp_file("$dir/nocalls/index.html"), qr/No flame graph: the profile has no sub return events/,
        'calls=0: the index says why';
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
        my ($page, $frag) = split /#/, $l, 2;
        $page = $from if $page eq '';
        push @broken, "$from -> $l" if !-e "$out/$page" || (defined $frag && $page =~ /\.html\z/ && !$ids{$page}{$frag});
    }
    is "@broken", '', "$r: every link resolves (" . scalar(@links) . " links)";
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

    # a directory that is not a report is never replaced
    make_path("$dir/precious");
    open my $pf, '>', "$dir/precious/thesis.tex" or die;
    print $pf "years of work\n";
    close $pf;
    my ($stp, undef, $sep) = html("$dir/precious", "$td/demo.out");
    is $stp, 1, 'a directory that is not a report: exit 1';
    like $sep, qr/not empty and not an earlier report; not replacing it/, 'a directory that is not a report: says why';
    is slurp_file("$dir/precious/thesis.tex"), "years of work\n", 'a directory that is not a report: left alone';
    # an earlier report of nytprofhtml is replaced
    SKIP: {
        skip 'nytprofhtml is not installed', 1 unless $nytprofhtml && -d "$dir/demo-nytprofhtml";
        my ($str) = html("$dir/demo-nytprofhtml", "$td/demo.out");
        is $str, 0, "nytprofhtml's report is replaced";
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
    like $so, qr/\rnytp html: (?:loading|writing)[^\r]*\r\r\e\[K\z/, 'on a terminal: a progress line, erased at the end';
}

# ---- --open -----------------------------------------------------------------------------------

{
    local $ENV{DISPLAY} = '';
    local $ENV{WAYLAND_DISPLAY} = '';
    my ($st, $so) = html("$dir/open", '--open', "$td/demo.out");
    is $st, 0, '--open without a display: exit 0';
    is $so, "$dir/open/index.html\n", '--open without a display: prints the path';
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
    for my $p ('index.html', $page, 'subs.html', 'flame.svg') {
        my ($st, $dom, $err) = run_cmd([@chrome, '--dump-dom', "file://$out/$p"]);
        is $st, 0, "chromium loads $p";
        my @console = grep { /CONSOLE/ } split /\n/, $err;
        is "@console", '', "$p: no console messages";
        if ($p eq 'flame.svg') {
            like $dom, qr{<g class="frames">}, "$p: frames are there";
            next;
        }
        like $dom, qr{<th[^>]*><button type="button">}, "$p: the script ran (sort buttons in the headings)";
        like $dom, $p eq $page ? qr/<table class="src sort" id="lines">/ : qr/<table class="sort subs"/, "$p: its tables are there";
        like $dom, qr{<object data="flame\.svg"}, "$p: the flame graph is there" if $p eq 'index.html';
        next if $p eq 'subs.html'; # screenshots of the index and a file page
        (my $png = $p) =~ s/\.html\z/.png/;
        $png = 'file.png' if $p eq $page;
        run_cmd([@chrome, '--hide-scrollbars', '--window-size=1280,1000', "--screenshot=$shots/$png", "file://$out/$p"]);
        my $img = slurp_file("$shots/$png") // '';
        ok length($img) > 5000 && substr($img, 0, 8) eq "\x89PNG\r\n\x1a\n", "$p: screenshot saved in $shots/$png";
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

done_testing;
