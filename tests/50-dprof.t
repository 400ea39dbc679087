#!/usr/bin/perl
# 'nytp dprof-convert --dprofpp-times' against dprofpp (tests/oracle-dprofpp.pl:
# dprofpp -r with its figures printed unrounded) on the tmon.out files in
# testdata/dprof: every sub's call count, exclusive and inclusive real
# time; the result loaded by Devel::NYTProf::Data without a warning, read
# by nytprofhtml and by 'nytp dump --data' as the oracle reads it; one call
# event per call; and broken tmon.out files refused with the line number
# and no output left behind; call arcs as Devel::NYTProf records them.
# With --goto=dprofpp: dprofpp's figures for every sub on every tmon.out
# here, goto targets included, and call arcs that are the call events' tree.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $oracle = repo() . '/tests/oracle-dprofpp.pl';
my $td = testdata() . '/dprof';
my $dir = scratch_dir();

# Much tighter than a tick (1/$hz = 10 ms): we compute what dprofpp does.
my $EPS = 1e-6;

sub dprofpp {
    my ($tmon, @opt) = @_;
    my ($st, $out, $err) = run_cmd([$^X, $oracle, @opt, $tmon]);
    die "dprofpp on $tmon failed ($st): $err" if $st;
    my %subs;
    for (split /\n/, $out) {
        my ($name, $calls, $excl, $incl) = split /\t/;
        $subs{$name} = { calls => $calls, excl => $excl, incl => $incl };
    }
    return \%subs;
}

# Per-sub figures of a profile as Devel::NYTProf::Data loads it; also
# whatever it printed on stderr.
sub nytprof_data {
    my ($file) = @_;
    my $code = 'use Devel::NYTProf::Data; my $p = Devel::NYTProf::Data->new({filename => shift});'
        . ' my $m = $p->subname_subinfo_map;'
        . ' for (sort keys %$m) { my $s = $m->{$_}; next unless $s->calls;'
        . ' printf "DATA\t%s\t%d\t%.17g\t%.17g\n", $_, $s->calls, $s->excl_time, $s->incl_time }';
    my ($st, $out, $err) = run_cmd([$^X, '-e', $code, $file]);
    my %subs;
    for (grep { s/^DATA\t// } split /\n/, $out) {
        my ($name, $calls, $excl, $incl) = split /\t/;
        $subs{$name} = { calls => $calls, excl => $excl, incl => $incl };
    }
    return ($st, \%subs, $err);
}

sub near { my ($a, $b) = @_; return abs($a - $b) < $EPS }

# Subs whose times dprofpp books differently around 'goto &sub' (see the
# man page): for each file, jumper => target pairs where the target is
# reached only by that goto.
my %goto_pairs = (
    'goto.tmon'       => { 'main::jumper' => 'main::target', 'main::bounce' => 'main::landing' },
    'old-format.tmon' => { 'main::jumper' => 'main::target' },
);

for my $name (qw(recursion.tmon die.tmon goto.tmon many.tmon old-format.tmon)) {
    my $tmon = "$td/$name";
    my $out = "$dir/$name.nytprof";
    my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '--dprofpp-times', '-o', $out, $tmon]);
    is $st, 0, "$name: converted" or diag $err;
    is $err, '', "$name: nothing on stderr";

    my $want = dprofpp($tmon);
    my ($dst, $got, $derr) = nytprof_data($out);
    is $dst, 0, "$name: Devel::NYTProf::Data loads it";
    is $derr, '', "$name: ... without a warning";
    is_deeply [sort keys %$got], [sort keys %$want], "$name: the same subs as dprofpp";

    my $pairs = $goto_pairs{$name} || {};
    my %in_goto = map { $_ => 1 } %$pairs;
    my ($bad_calls, @bad_times) = (0);
    for my $sub (sort keys %$want) {
        my $w = $want->{$sub};
        my $g = $got->{$sub} or next;
        $bad_calls++, diag "$sub: $g->{calls} calls, dprofpp $w->{calls}"
            if $g->{calls} != $w->{calls};
        next if $in_goto{$sub};
        push @bad_times, "$sub: excl $g->{excl} incl $g->{incl}, dprofpp $w->{excl} $w->{incl}"
            unless near($g->{excl}, $w->{excl}) && near($g->{incl}, $w->{incl});
    }
    is $bad_calls, 0, "$name: every sub's call count is dprofpp's";
    is "@bad_times", '', "$name: every sub's exclusive and inclusive time is dprofpp's";

    my ($dst2, $events) = run_cmd([$nytp, 'dump', '--tags=SUB_RETURN', $out]);

    # dprofpp books the time of a call that ends in 'goto &target' to the
    # target, and the target's time to the sub that did the goto; we keep
    # each sub's own time.  So the two swap, except that dprofpp loses the
    # jumper's time before the first goto (it zeroes the target when it
    # first sees it).
    for my $j (sort keys %$pairs) {
        my $t = $pairs->{$j};
        ok near($got->{$t}{excl}, $want->{$j}{excl}), "$name: $t exclusive is dprofpp's $j"
            or diag "$got->{$t}{excl} vs $want->{$j}{excl}";
        ok near($got->{$t}{incl}, $want->{$j}{incl}), "$name: $t inclusive is dprofpp's $j"
            or diag "$got->{$t}{incl} vs $want->{$j}{incl}";
        my ($first) = grep { /\t\Q$j\E\z/ } split /\n/, $events;
        my $lost = (split /\t/, $first)[3] / 1e7;
        # (Call events hold no negative time, so a first call whose own
        # time is below DProf's overhead estimate, a few microseconds,
        # shows as 0 there.)
        ok abs($got->{$j}{excl} - $lost - $want->{$t}{excl}) < 1e-5,
            "$name: $j exclusive is dprofpp's $t and its first call's"
            or diag "$got->{$j}{excl} - $lost vs $want->{$t}{excl}";
        ok $got->{$j}{incl} > 0, "$name: $j has its own inclusive time";
    }

    # One call arc record per caller, line and callee.
    my ($st3, $callers) = run_cmd([$nytp, 'dump', '--tags=SUB_CALLERS', $out]);
    my %seen;
    my @dup = grep { my @f = split /\t/; $seen{"$f[2] $f[8] $f[9]"}++ } split /\n/, $callers;
    is scalar(@dup), 0, "$name: no duplicate call arc records" or diag $dup[0];

    # One SUB_RETURN per call, at depths that nest.
    my $calls = 0;
    $calls += $_->{calls} for values %$want;
    my @ret = split /\n/, $events;
    is scalar(@ret), $calls, "$name: one call event per call ($calls)";
    my @odd = grep { my @f = split /\t/; $f[2] !~ /^\d+\z/ || $f[3] !~ /^\d+\z/ } @ret;
    is scalar(@odd), 0, "$name: call events hold whole, non-negative ticks" or diag $odd[0];
    my $maxdepth = 0;
    for (@ret) { my $d = (split /\t/)[1]; $maxdepth = $d if $d > $maxdepth }
    ok $maxdepth >= 1, "$name: call depths start at 1";

    # Both readers agree on the aggregate.
    my ($ost, $oout, $oerr) = run_cmd([$^X, repo() . '/tests/oracle-data.pl', $out]);
    my ($nst, $nout, $nerr) = run_cmd([$nytp, 'dump', '--data', $out]);
    is $ost, 0, "$name: oracle dump ok" or diag $oerr;
    ok $nst == 0 && $nout eq $oout, "$name: nytp dump --data equals Devel::NYTProf::Data's"
        or diag $nerr;
}

# Call arcs against Devel::NYTProf's own profile of the same program
# (NAME.nytprof, sub profiling only): the same caller -> callee pairs with
# the same counts, goto targets included (called by the caller of the
# sub that did the goto).  BEGIN blocks, builtins, NYTProf's main::NULL
# and the pragmas strict and warnings (run while compiling, which the two
# profilers see differently) are left out, and anonymous subs lose
# NYTProf's "[file:line]".
sub arcs {
    my ($file) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--tags=SUB_CALLERS', $file]);
    die "dump $file: $err" if $st;
    my %n;
    for (split /\n/, $out) {
        my @f = split /\t/;
        my ($called, $caller) = map { $_ // '' } @f[8, 9];
        next if "$called $caller" =~ /BEGIN|CORE:|::NULL\b|\b(?:strict|warnings)::/;
        s/^(.*::__ANON__)\[.*\]\z/$1/ for $called, $caller;
        $n{"$caller -> $called"} += $f[3];
    }
    return \%n;
}
for my $name (qw(recursion die goto many)) {
    my $ours = arcs("$dir/$name.tmon.nytprof");
    my $nyt = arcs("$td/$name.nytprof");
    ok keys(%$ours) > 3, "$name: call arcs";
    is_deeply $ours, $nyt, "$name: call arcs and counts as Devel::NYTProf records them";
}

# --goto=dprofpp: every sub's figures are exactly dprofpp's, goto targets
# and the subs that did the goto included; still a profile that
# Devel::NYTProf::Data loads without a warning, one call event per call,
# and the same call arcs as in the default mode.
my @all_tmon = map { s{.*/}{}r } glob "$td/*.tmon";
ok @all_tmon >= 6, 'testdata/dprof has its tmon.out files';

# The default times add up (the overhead estimate is taken off only as the
# clock moves on): no negative time; no sub's inclusive time beyond the
# run's (profiler_active, the index of a report); the call events (the
# flame graph) as wide as the subs' exclusive times together and within
# the run; the same overhead taken off in all, or what the clock had left.
for my $name (@all_tmon) {
    my $out = "$dir/$name.default.nytprof";
    my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '-o', $out, "$td/$name"]);
    is $st, 0, "$name, default times: converted" or diag $err;
    my (undef, $data) = run_cmd([$nytp, 'dump', '--data', $out]);
    my ($active) = $data =~ /^attribute\tprofiler_active\t(\S+)$/m;
    my ($ovh) = $data =~ /^attribute\tcumulative_overhead_ticks\t(\S+)$/m;
    my ($neg, $beyond, $excl_sum) = (0, 0, 0);
    my @beyond;
    for (split /\n/, $data) {
        next unless /^sub_subinfo\t(\S+)\t\[ \S+ calls (\d+) times (\S+) (\S+) /;
        my ($sub, $calls, $incl, $excl) = ($1, $2, $3, $4);
        next unless $calls;
        $neg++ if $incl < 0 || $excl < 0;
        push @beyond, "$sub $incl > $active" if $incl > $active + 1e-7;
        $excl_sum += $excl;
    }
    is $neg, 0, "$name, default times: no negative time";
    is "@beyond", '', "$name, default times: no sub takes longer than the run ($active s)";
    my (undef, $events) = run_cmd([$nytp, 'dump', '--tags=SUB_RETURN', $out]);
    my ($ev_excl, $n) = (0, 0);
    for (split /\n/, $events) { my @f = split /\t/; $ev_excl += $f[3]; $n++ }
    $ev_excl /= 1e7;
    ok abs($ev_excl - $excl_sum) <= $n * 1e-7 + 1e-9,
        "$name, default times: the call events add up to the subs' exclusive times ($ev_excl, $excl_sum)";
    ok $ev_excl <= $active + $n * 1e-7, "$name, default times: the flame graph fits in the run ($ev_excl <= $active)";
    my (undef, $flame) = run_cmd([$nytp, 'flame', $out]);
    my $fsum = 0;
    $fsum += (split / /)[-1] for split /\n/, $flame;
    ok abs($fsum / 1e7 - $ev_excl) < 1e-9, "$name, default times: nytp flame draws those events";
    my ($ppst) = run_cmd([$nytp, 'dprof-convert', '--dprofpp-times', '-o', "$dir/$name.pp.nytprof", "$td/$name"]);
    is $ppst, 0, "$name, --dprofpp-times: converted";
    my (undef, $pp) = run_cmd([$nytp, 'dump', '--data', "$dir/$name.pp.nytprof"]);
    my ($pp_ovh) = $pp =~ /^attribute\tcumulative_overhead_ticks\t(\S+)$/m;
    ok defined $pp_ovh && $ovh <= $pp_ovh && $ovh >= 0,
        "$name, default times: the overhead taken off is dprofpp's or less ($ovh, " . ($pp_ovh // '?') . ')';
}
for my $name (@all_tmon) {
    my $tmon = "$td/$name";
    my $out = "$dir/$name.dprofpp.nytprof";
    my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '--goto=dprofpp', '-o', $out, $tmon]);
    is $st, 0, "--goto=dprofpp $name: converted" or diag $err;
    is $err, '', "--goto=dprofpp $name: nothing on stderr";
    my $want = dprofpp($tmon);
    my ($dst, $got, $derr) = nytprof_data($out);
    is $dst, 0, "--goto=dprofpp $name: Devel::NYTProf::Data loads it";
    is $derr, '', "--goto=dprofpp $name: ... without a warning";
    is_deeply [sort keys %$got], [sort keys %$want], "--goto=dprofpp $name: the same subs as dprofpp";
    my @bad = grep { !$got->{$_} || $got->{$_}{calls} != $want->{$_}{calls}
                     || !near($got->{$_}{excl}, $want->{$_}{excl})
                     || !near($got->{$_}{incl}, $want->{$_}{incl}) } sort keys %$want;
    is "@bad", '', "--goto=dprofpp $name: every sub's calls, exclusive and inclusive time are dprofpp's"
        or diag join "\n", map { "$_: got @{$got->{$_}}{qw(calls excl incl)}, dprofpp @{$want->{$_}}{qw(calls excl incl)}" } @bad;

    # One call event per call, named as dprofpp books it: each sub's
    # events add up to its exclusive time (events hold no negative time,
    # so only subs whose every booking is positive are compared).
    my ($st2, $events) = run_cmd([$nytp, 'dump', '--tags=SUB_RETURN', $out]);
    my @ret = split /\n/, $events;
    my $calls = 0;
    $calls += $_->{calls} for values %$want;
    is scalar(@ret), $calls, "--goto=dprofpp $name: one call event per call ($calls)";
    my (%excl, %neg);
    for (@ret) {
        my @f = split /\t/;
        $excl{ $f[4] } += $f[3] / 1e7;
        $neg{ $f[4] }++ if $f[3] == 0;
    }
    my @off = grep { !$neg{$_} && abs(($excl{$_} // 0) - $want->{$_}{excl}) > 1e-5 } sort keys %$want;
    is "@off", '', "--goto=dprofpp $name: call events add up to each sub's exclusive time";

    my ($ost, $oout, $oerr) = run_cmd([$^X, repo() . '/tests/oracle-data.pl', $out]);
    my ($nst, $nout, $nerr) = run_cmd([$nytp, 'dump', '--data', $out]);
    ok $ost == 0 && $nst == 0 && $nout eq $oout, "--goto=dprofpp $name: nytp dump --data equals Devel::NYTProf::Data's"
        or diag "$oerr$nerr";
    (my $base = $name) =~ s/\.tmon\z//;
    if (-e "$td/$base.nytprof" && $name ne 'goto.tmon') {
        is_deeply arcs($out), arcs("$td/$base.nytprof"),
            "--goto=dprofpp $name: call arcs and counts as Devel::NYTProf records them";
    }

    # The call arcs are the call tree the call events make (a call event
    # is a child of the next one returning one level up), gotos included.
    my (%tree, @kids);
    for (@ret) {
        my (undef, $depth, undef, undef, $sub) = split /\t/;
        $tree{"$sub -> $_"}++ for @{ $kids[$depth + 1] || [] };
        $kids[$depth + 1] = [];
        push @{ $kids[$depth] }, $sub;
    }
    $tree{"main::RUNTIME -> $_"}++ for @{ $kids[1] || [] };
    my ($st3, $callers) = run_cmd([$nytp, 'dump', '--tags=SUB_CALLERS', $out]);
    my (%arcs, %seen, $dup);
    for (split /\n/, $callers) {
        my @f = split /\t/;
        $arcs{"$f[9] -> $f[8]"} += $f[3];
        $dup++ if $seen{"$f[2] $f[8] $f[9]"}++;
    }
    # (A sub that did a goto and is then left by die is counted as called
    # but never booked: dprofpp books that frame to the target.  Then only
    # the caller -> callee pairs agree, not their counts; see the man page.)
    if ($name eq 'goto-mixed.tmon') {
        is_deeply [sort keys %arcs], [sort keys %tree],
            "--goto=dprofpp $name: the call arcs are the call events' tree (pairs)";
    } else {
        is_deeply \%arcs, \%tree, "--goto=dprofpp $name: the call arcs are the call events' tree";
    }
    ok !$dup, "--goto=dprofpp $name: one call arc record per caller, line and callee";
}

# --goto=dprofpp with -F: a goto profile cut while a goto target runs.
{
    my @lines = split /^/, slurp_file("$td/goto.tmon");
    my ($star) = grep { $lines[$_] =~ /^\*/ } 0 .. $#lines;
    my $f = "$dir/cut-goto.tmon";
    open my $fh, '>', $f or die;
    print $fh @lines[0 .. $star + 3];
    close $fh;
    my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '-F', '--goto=dprofpp', '-o', "$dir/cut-goto.out", $f]);
    is $st, 0, '--goto=dprofpp -F converts a cut goto profile' or diag $err;
    my $want = dprofpp($f, '-F');
    my (undef, $got) = nytprof_data("$dir/cut-goto.out");
    my @bad = grep { !$got->{$_} || $got->{$_}{calls} != $want->{$_}{calls}
                     || !near($got->{$_}{excl}, $want->{$_}{excl})
                     || !near($got->{$_}{incl}, $want->{$_}{incl}) } sort keys %$want;
    is "@bad", '', '--goto=dprofpp -F: the figures of dprofpp -F';
    ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '--goto=other', '-o', "$dir/x.out", $f]);
    ok $st == 2 && $err =~ /--goto/, '--goto=other: usage error';
}

# The stand-in file: flagged IS_FAKE, a line per sub.
{
    my ($st, $out) = run_cmd([$nytp, 'dump', '--tags=NEW_FID,SUB_INFO', "$dir/recursion.tmon.nytprof"]);
    my ($fid) = grep { /^NEW_FID/ } split /\n/, $out;
    my $flags = (split /\t/, $fid)[4];
    ok $flags & 0x80, 'the one file is flagged IS_FAKE';
    my %lines;
    $lines{ (split /\t/)[2] }++ for grep { /^SUB_INFO/ } split /\n/, $out;
    ok !(grep { $_ > 1 } values %lines), 'each sub has a line of its own';
}

# nytprofhtml reads the result.
{
    my $html = "$dir/html";
    my ($st, $out, $err) = run_cmd(['nytprofhtml', '-f', "$dir/recursion.tmon.nytprof", '-o', $html]);
    is $st, 0, 'nytprofhtml succeeds' or diag $err;
    ok -s "$html/index.html", 'nytprofhtml wrote index.html';
    unlike $err, qr/warn|uninitiali[sz]ed|inconsisten/i, 'nytprofhtml gave no warning';
}

# Default names, standard input and output.
{
    my $cwd = "$dir/defaults";
    mkdir $cwd;
    system('cp', "$td/die.tmon", "$cwd/tmon.out") == 0 or die;
    my ($st, $out, $err) = run_cmd([$nytp, 'dprof-convert'], cwd => $cwd);
    is $st, 0, 'tmon.out -> nytprof.out by default' or diag $err;
    ok -s "$cwd/nytprof.out", 'nytprof.out written';
    my $tmon = slurp_file("$td/die.tmon");
    my ($st2, $bytes, $err2) = run_cmd([$nytp, 'dprof-convert', '-o', '-', '-'], stdin => $tmon);
    is $st2, 0, 'standard input to standard output' or diag $err2;
    is substr($bytes, 0, 12), "NYTProf 5 0\n", 'a profile on standard output';
    my ($st3, $x, $err3) = run_cmd([$nytp, 'dprof-convert', 'a', 'b']);
    is $st3, 2, 'two inputs: usage error';
    my ($st4, $help) = run_cmd([$nytp, 'dprof-convert', '--help']);
    ok $st4 == 0 && $help =~ /^usage: nytp dprof-convert/, '--help';
}

# A profile cut short at a line boundary: refused, or with -F closed as
# 'dprofpp -F' closes it.
{
    my @lines = split /^/, slurp_file("$td/recursion.tmon");
    my ($part2) = grep { $lines[$_] =~ /^PART2/ } 0 .. $#lines;
    my $cut = $part2 + int((@lines - $part2) / 2);
    $cut++ until $lines[$cut - 1] =~ /^\+/;    # something is still running
    my $f = "$dir/cut.tmon";
    open my $fh, '>', $f or die;
    print $fh @lines[0 .. $cut - 1];
    close $fh;
    my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '-o', "$dir/cut.out", $f]);
    is $st, 1, 'cut at a line: exit 1';
    like $err, qr/^nytp dprof-convert: \Q$f\E: line $cut: .*still running/, 'cut at a line: the line number'
        or diag $err;
    ok !-e "$dir/cut.out", 'cut at a line: no output left';
    ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '-F', '--dprofpp-times', '-o', "$dir/cut.out", $f]);
    is $st, 0, '-F converts it' or diag $err;
    my $want = dprofpp($f, '-F');
    my (undef, $got) = nytprof_data("$dir/cut.out");
    my @bad = grep { !$got->{$_} || $got->{$_}{calls} != $want->{$_}{calls}
                     || !near($got->{$_}{excl}, $want->{$_}{excl})
                     || !near($got->{$_}{incl}, $want->{$_}{incl}) } sort keys %$want;
    is "@bad", '', '-F: the figures of dprofpp -F';
}

# --no-overhead: the figures dprofpp gives when the header estimates no
# overhead.
{
    my $tmon = slurp_file("$td/recursion.tmon");
    $tmon =~ s/\$over_rtime=\d+;/\$over_rtime=0;/ or die;
    my $f = "$dir/no-overhead.tmon";
    open my $fh, '>', $f or die;
    print $fh $tmon;
    close $fh;
    my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '--no-overhead', '-o', "$dir/no.out",
                                  "$td/recursion.tmon"]);
    is $st, 0, '--no-overhead converts' or diag $err;
    my $want = dprofpp($f);
    my (undef, $got) = nytprof_data("$dir/no.out");
    my @bad = grep { !$got->{$_} || !near($got->{$_}{excl}, $want->{$_}{excl})
                     || !near($got->{$_}{incl}, $want->{$_}{incl}) } sort keys %$want;
    is "@bad", '', '--no-overhead: the figures of dprofpp without overhead';
    my (undef, $with) = nytprof_data("$dir/recursion.tmon.nytprof");
    ok $got->{'main::fib'}{excl} > $with->{'main::fib'}{excl}, '--no-overhead: more time for fib';
}

# Broken files: one line naming the file and the line, exit 1, and an
# output file that existed before is left as it was.
my $good = slurp_file("$td/die.tmon");
my ($hdr, $body) = $good =~ /\A(.*?^PART2\n)(.*)\z/ms or die;
my @broken = (
    ['truncated mid-line', substr($good, 0, length($good) - 2), qr/line \d+: the file ends in the middle of a line/],
    ['bad magic',          "#NotDProf\n" . substr($good, 10),   qr/line 1: no '#fOrTyTwO' magic line/],
    ['empty',              '',                                  qr/line 1: empty file/],
    ['no PART2',           "#fOrTyTwO\n\$hz=100;\n",             qr/line 2: .*before the PART2 line/],
    ['unknown record',     "$hdr& 1 main f\n+ 1\n% 1\n",         qr/line \d+: unknown record '%'/],
    ['unbalanced',         "$hdr& 1 main f\n+ 1\n- 1\n- 1\n",    qr/line \d+: '-' record for main::f, but no sub is running/],
    ['wrong exit',         "$hdr& 1 main f\n& 2 main g\n+ 1\n- 2\n", qr/line \d+: '-' record leaves main::g, but main::f is running/],
    ['unknown id',         "$hdr+ 7\n",                          qr/line \d+: sub id '7' was not declared/],
    ['no hz',              "#fOrTyTwO\nPART2\n",                 qr/line 2: the header has no positive '\$hz='/],
);
for my $b (@broken) {
    my ($label, $bytes, $re) = @$b;
    my $f = "$dir/broken.tmon";
    open my $fh, '>:raw', $f or die;
    print $fh $bytes;
    close $fh;
    my $out = "$dir/broken.out";
    open $fh, '>', $out or die;
    print $fh "before\n";
    close $fh;
    my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '-o', $out, $f]);
    is $st, 1, "$label: exit 1";
    my @err = split /\n/, $err;
    ok @err == 1 && $err[0] =~ /^nytp dprof-convert: \Q$f\E: / && $err[0] =~ $re, "$label: one line with the line number"
        or diag $err;
    is slurp_file($out), "before\n", "$label: the output file is untouched";
    unlink $out;
    ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '-o', $out, $f]);
    ok !-e $out, "$label: no output file left behind";
    my @left = glob("$dir/broken.out*");
    is "@left", '', "$label: no temporary file left behind";
}

my ($st, $o, $err) = run_cmd([$nytp, 'dprof-convert', '-o', "$dir/x.out", "$dir/does-not-exist"]);
ok $st == 1 && $err =~ /does-not-exist/, 'a missing input: exit 1 naming it';

done_testing;
