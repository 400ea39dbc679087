#!/usr/bin/perl
# Depth numbers and recursion depths that cost nothing by themselves:
# profiles made by hand (build/gen-profile, libformat's writer), every
# command that rebuilds calls run with its memory bounded (ulimit -v) and
# a time limit, its output size checked.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP ();

my $nytp = nytp();
my $dir = scratch_dir();

# run_limited($kb, $seconds, @argv) -> ($status, $stdout, $stderr, $elapsed):
# memory, time and every file written (50 MB) bounded, so that what used
# to explode fails quickly instead of filling the disk or this test's
# memory.
sub run_limited {
    my ($kb, $secs, @argv) = @_;
    my $t0 = time;
    my ($st, $out, $err) = run_cmd(['sh', '-c', "ulimit -v $kb; ulimit -f 51200; exec timeout $secs \"\$@\"", 'sh', @argv]);
    return ($st, $out, $err, time - $t0);
}

sub files_in {
    my ($d) = @_;
    opendir my $dh, $d or return ();
    return sort grep { !/^\.\.?$/ } readdir $dh;
}

# ---- one return at a huge depth (issue 21, item 3) --------------------------
# speedscope kept a slot per depth number: 4.7 GB (and a 4 GB temporary
# left behind) for a return at depth 10^8, a 32-bit capacity doubled to 0
# and a crash at 4*10^9.  Every export folds the open calls into one
# "(unreturned)" call, in memory that follows the returns.
for my $depth (100_000_000, 4_000_000_000) {
    my $f = gen('deep-return', $depth);
    my $out_dir = "$dir/deep-$depth";
    mkdir $out_dir or die "mkdir: $!";
    for my $cmd (['speedscope', '-o', "$out_dir/ss.json"], ['pprof', '-o', "$out_dir/pp.pb.gz"],
                 ['calls', '-o', "$out_dir/calls.txt"], ['flame', '--svg', '-o', "$out_dir/flame.svg"],
                 ['cachegrind', '-o', "$out_dir/cg.out"], ['html', '-o', "$out_dir/html"]) {
        my ($st, $out, $err, $s) = run_limited(200_000, 60, $nytp, @$cmd, $f);
        is $st, 0, "$cmd->[0], one return at depth $depth: exit 0 within 200 MB" or diag $err;
        cmp_ok $s, '<', 30, "$cmd->[0], depth $depth: $s s";
        like $err, qr/\b${\($depth - 1)} calls still open\b[^\n]*\(unreturned\)/,
            "$cmd->[0], depth $depth: the open calls are one (unreturned)"
            if $cmd->[0] =~ /^(speedscope|pprof|calls|flame)$/;
    }
    is_deeply [files_in($out_dir)], [qw(calls.txt cg.out flame.svg html pp.pb.gz ss.json)],
        "depth $depth: the outputs and no temporary";
    my $json = slurp_file("$out_dir/ss.json") // '';
    like $json, qr/"events":\[\{"type":"O","frame":0,"at":0\},\{"type":"O","frame":1,"at":0\},\{"type":"C","frame":1,"at":100\},\{"type":"C","frame":0,"at":100\}\]/,
        "speedscope, depth $depth: main::f called from one (unreturned)";
    cmp_ok length $json, '<', 1000, "speedscope, depth $depth: " . length($json) . ' bytes';
    is slurp_file("$out_dir/calls.txt"), "(unreturned);main::f 1\n", "calls, depth $depth: one line";
}

# ---- direct recursion deeper than --max-recursion (issue 21, item 5) ------
# The collapsed stacks of a recursion N deep hold N lines of up to N
# frames: 2,200,000 deep never ended.  Runs of one sub beyond 1000 frames
# (the default) are one frame "NAME…[×K]"; the output no longer grows
# with the depth, and every total is kept.
my $fold = "\x{2026}[\x{d7}";
utf8::encode($fold);
{
    my $n = 2_200_000;
    my $f = gen('recursion', $n);
    my ($st, $out, $err, $s) = run_limited(1_000_000, 60, $nytp, 'calls', '-o', "$dir/rec-calls.txt", $f);
    is $st, 0, "calls, recursion $n deep: exit 0 within 60 s" or diag $err;
    $out = slurp_file("$dir/rec-calls.txt") // '';
    is $err, '', 'calls: no message';
    cmp_ok $s, '<', 30, "calls, recursion $n deep: $s s";
    my @lines = split /\n/, $out;
    is scalar(@lines), 1001, 'calls: 1000 lines of main::f and one folded';
    cmp_ok length $out, '<', 4_100_000, 'calls: ' . length($out) . ' bytes';
    is $lines[-1], join(';', ('main::f') x 1000) . ";main::f${fold}2199000] 2199000",
        'calls: the frames beyond 1000 are one, holding their time';
    my $sum = 0;
    $sum += (/ (\d+)$/)[0] for @lines;
    is $sum, $n, 'calls: the total is every tick';

    my $h = "$dir/html-rec";
    ($st, $out, $err, $s) = run_limited(1_000_000, 60, $nytp, 'html', '-o', $h, $f);
    is $st, 0, "html, recursion $n deep: exit 0 within 60 s" or diag $err;
    cmp_ok $s, '<', 30, "html, recursion $n deep: $s s";
    my $svg = slurp_file("$h/flame.svg") // '';
    cmp_ok length $svg, '<', 2_000_000, 'html: flame graph of ' . length($svg) . ' bytes';
    like $svg, qr/main::f\Q$fold\E2199000\]/, 'html: the folded frame is drawn';

    for my $cmd (['flame', '--svg', '-o', "$dir/rec.svg"], ['flame', '-o', "$dir/rec.txt"],
                 ['pprof', '-o', "$dir/rec.pb.gz"], ['speedscope', '-o', "$dir/rec.json"],
                 ['speedscope', '--sampled', '-o', "$dir/recs.json"]) {
        ($st, $out, $err, $s) = run_limited(1_000_000, 60, $nytp, @$cmd, $f);
        is $st, 0, "@$cmd[0..$#$cmd-2], recursion $n deep: exit 0 within 60 s" or diag $err;
        cmp_ok -s $cmd->[-1], '<', 5_000_000, "@$cmd[0..$#$cmd-2]: " . (-s $cmd->[-1]) . ' bytes';
    }
    like slurp_file("$dir/rec.json"), qr/"name":"main::f\Q$fold\E2199000\]","file":"x\.pl","line":1\}/,
        "speedscope: the folded frame, in its sub's file and line";
    like slurp_file("$dir/recs.json"), qr/"name":"main::f\Q$fold\E2199000\]"/,
        "speedscope --sampled: the folded frame";
    is slurp_file("$dir/rec.txt"), join("\n", @lines) . "\n", 'flame: the lines of calls';
}

# Output sizes: the same from 100,000 frames deep on (it grew with the
# square of the depth: 50 GB at 100,000).
{
    my @size;
    for my $n (100_000, 400_000) {
        my ($st) = run_limited(1_000_000, 60, $nytp, 'calls', '-o', "$dir/calls-$n.txt", gen('recursion', $n));
        is $st, 0, "calls, recursion $n deep: exit 0";
        push @size, -s "$dir/calls-$n.txt" // 0;
    }
    cmp_ok $size[1] - $size[0], '<=', 10, "calls: 100,000 and 400,000 deep print the same lines ($size[0], $size[1] bytes)";
}

# The limit: --max-recursion=N in every command, 0 never folds; at or
# under the limit, nothing changes.
{
    my $f = gen('recursion-calls', 5);
    my ($st, $out, $err) = run_cmd([$nytp, 'calls', '--max-recursion=2', $f]);
    is $st, 0, 'calls --max-recursion=2: exit 0' or diag $err;
    is $out, "main::a 1\nmain::a;main::f 1\nmain::a;main::f;main::g 1\nmain::a;main::f;main::f 1\n"
        . "main::a;main::f;main::f;main::g 1\nmain::a;main::f;main::f;main::f${fold}3] 3\n"
        . "main::a;main::f;main::f;main::f${fold}3];main::g 3\n",
        'calls --max-recursion=2: the calls made from the folded frames are merged';
    (undef, $out) = run_cmd([$nytp, 'calls', '--calls', '--max-recursion=2', $f]);
    like $out, qr/^main::a;main::f;main::f;main::f\Q$fold\E3\];main::g 3$/m, 'calls --calls: their calls';
    my ($st0, $all) = run_cmd([$nytp, 'calls', '--max-recursion=0', $f]);
    is scalar(() = $all =~ /\n/g), 11, 'calls --max-recursion=0: every path';
    my ($st5, $at) = run_cmd([$nytp, 'calls', '--max-recursion=5', $f]);
    is $at, $all, 'calls --max-recursion=5: a run of 5 is not folded';
    for my $kind (['recursion', 999], ['recursion', 1000], ['recursion-calls', 999]) {
        my $g = gen(@$kind);
        for my $cmd (['calls'], ['flame', '--svg'], ['pprof', '-o', '-'], ['speedscope', '-o', '-']) {
            my (undef, $def) = run_cmd([$nytp, @$cmd, $g]);
            my (undef, $off) = run_cmd([$nytp, @$cmd, '--max-recursion=0', $g]);
            ok $def eq $off, "$cmd->[0], @$kind deep: the default changes nothing";
        }
    }
    # the largest limit folds nothing (limit + 1 wrapped to 0 in 32 bits)
    for my $cmd (['calls'], ['flame', '--svg'], ['pprof', '-o', '-'], ['speedscope', '-o', '-']) {
        my (undef, $max) = run_cmd([$nytp, @$cmd, '--max-recursion=4294967295', $f]);
        my (undef, $off) = run_cmd([$nytp, @$cmd, '--max-recursion=0', $f]);
        ok $max eq $off, "$cmd->[0] --max-recursion=4294967295: nothing folded";
    }
    for my $cmd (['calls'], ['flame'], ['pprof'], ['speedscope'], ['html']) {
        ($st, $out, $err) = run_cmd([$nytp, @$cmd, '--max-recursion=x', $f]);
        is $st, 2, "$cmd->[0] --max-recursion=x: exit 2";
        like $err, qr/--max-recursion needs a non-negative whole number/, "$cmd->[0]: says why";
        ($st, $out, $err) = run_cmd([$nytp, @$cmd, '--max-recursion=4294967296', $f]);
        is $st, 2, "$cmd->[0] --max-recursion=2^32: exit 2";
    }
    ($st, $out, $err) = run_cmd([$nytp, 'speedscope', '--max-recursion=2', '-o', '-', $f]);
    like $out, qr/\{"name":"main::f\Q$fold\E3\]"\}/, 'speedscope --max-recursion=2: the folded frame';
    # the calls on the time line: main::f twice, then one folded call
    # holding the three deeper calls of main::g, in their order
    my $j = eval { JSON::PP->new->utf8->decode($out) };
    my @names = map { $_->{name} } @{$j->{shared}{frames} || []};
    my @seq = map { "$_->{type} " . ($names[$_->{frame}] // '?') } @{$j->{profiles}[0]{events} || []};
    my $ff = "main::f${fold}3]";
    utf8::decode($ff);
    is_deeply \@seq, ['O main::a', 'O main::f', 'O main::g', 'C main::g', 'O main::f', 'O main::g', 'C main::g',
                      "O $ff", ('O main::g', 'C main::g') x 3, "C $ff", 'C main::f', 'C main::f', 'C main::a'],
        'speedscope --max-recursion=2: the time line, folded as the call tree is';
}

done_testing();
