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

my $nytp = nytp();
my $gen = repo() . '/build/gen-profile';
my $dir = scratch_dir();

sub gen {
    my ($kind, $n) = @_;
    my $f = "$dir/$kind-$n.out";
    system($gen, $kind, $n, $f) == 0 or die "gen-profile $kind $n failed";
    return $f;
}

# run_limited($kb, $seconds, @argv) -> ($status, $stdout, $stderr, $elapsed)
sub run_limited {
    my ($kb, $secs, @argv) = @_;
    my $t0 = time;
    my ($st, $out, $err) = run_cmd(['sh', '-c', "ulimit -v $kb; exec timeout $secs \"\$@\"", 'sh', @argv]);
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

done_testing();
