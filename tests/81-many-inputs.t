#!/usr/bin/perl
# Thousands of inputs (issue 22): a service profiled in segments leaves a
# file per interval and per worker (FILE, FILE.1, ..., FILE.PID,
# FILE.PID.1, ...), and every command that adds profiles up must take
# them all at once: under a low 'ulimit -n' (inputs are read one at a
# time), with the sums of all of them, and in memory that does not grow
# with the number of inputs beyond a few bytes each (a process apiece).
# The full size (11,520 segments: a day of 1-minute segments of 8
# workers) is measured by 'bench/run many'.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $dir = scratch_dir();
need(-x '/usr/bin/time', '/usr/bin/time (Debian package time)');

my $prog = repo() . '/tests/programs/closures.pl';
my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/one.out", $prog]);
is $st, 0, 'one profile written' or BAIL_OUT($err);
my $one = slurp_file("$dir/one.out");

# the sums of one profile, from top --json
sub totals {
    my ($json) = @_;
    my ($calls) = $json =~ /"sub_calls":(\d+)/;
    my ($stmts) = $json =~ /"statements_executed":(\d+)/;
    return ($calls // -1, $stmts // -1);
}
(undef, $out) = run_cmd([$nytp, 'top', '--json', "$dir/one.out"]);
my ($calls1, $stmts1) = totals($out);
ok $calls1 > 0 && $stmts1 > 0, "one profile: $calls1 calls, $stmts1 statements";

# the segments of a master and four workers, named as rotation names them
sub segments {
    my ($d, $per) = @_;
    mkdir $d;
    my @names;
    for my $pid ('', 4101, 4102, 4103, 4104) {
        my $base = $pid ? "st.out.$pid" : 'st.out';
        push @names, $base, map { "$base.$_" } 1 .. $per - 1;
    }
    for my $n (@names) {
        open my $fh, '>:raw', "$d/$n" or die "$d/$n: $!";
        print $fh $one;
        close $fh or die;
    }
    return map { "$d/$_" } @names;
}
my @small = segments("$dir/small", 20);   # 100 files
my @many = segments("$dir/many", 300);    # 1,500 files
is scalar @many, 1500, '1,500 segment files';

# run a command under 'ulimit -n 20' with /usr/bin/time: (status, stdout,
# stderr, peak resident KB)
sub limited {
    my (@cmd) = @_;
    my ($s, $o, $e) = run_cmd(['/bin/sh', '-c', 'ulimit -n 20 && exec /usr/bin/time -f "maxrss %M" "$@"',
        'sh', @cmd]);
    my ($kb) = $e =~ /^maxrss (\d+)$/m;
    $e =~ s/^maxrss \d+\n//m;
    return ($s, $o, $e, $kb // 0);
}

my $n = @many;
my %rss;
for my $case (
    ['top', ['top', '--json']],
    ['html', ['html', '-o', "$dir/report"]],
    ['merge', ['merge', '-o', "$dir/merged.out"]],
    ['flame', ['flame', '-o', "$dir/flame.svg"]],
    ['calls', ['calls', '-o', "$dir/calls.txt"]],
    ['csv', ['csv', '-o', "$dir/csv"]],
    ['cachegrind', ['cachegrind', '-o', "$dir/cg.out"]],
    ['pprof', ['pprof', '-o', "$dir/p.pb.gz"]],
    ['speedscope', ['speedscope', '-o', "$dir/s.json"]],
    ['dump --data', ['dump', '--data']],
) {
    my ($name, $args) = @$case;
    # the least peak of two runs a size: one run's peak moves by 300-400 KB
    # under load (thread stacks and arenas), which growth per input does not
    my ($s1, undef, undef, $kb_small) = limited($nytp, @$args, @small);
    my ($s, $o, $e, $kb) = limited($nytp, @$args, @many);
    my ($s1b, undef, undef, $kb_small_b) = limited($nytp, @$args, @small);
    my ($sb, undef, undef, $kb_b) = limited($nytp, @$args, @many);
    $s1 ||= $s1b;
    $s ||= $sb;
    $kb_small = $kb_small_b if defined $kb_small_b && (!defined $kb_small || $kb_small_b < $kb_small);
    $kb = $kb_b if defined $kb_b && (!defined $kb || $kb_b < $kb);
    is $s1, 0, "$name, 100 inputs, ulimit -n 20: exit 0";
    is $s, 0, "$name, $n inputs, ulimit -n 20: exit 0" or diag substr($e, 0, 500);
    unlike $e, qr/Too many open files|cannot open/i, "$name: every input opened";
    # a process apiece is what grows: far less than 1 KB per input (1,400
    # inputs more: under 1,400 KB more)
    ok $kb && $kb_small && $kb - $kb_small < 1400,
        "$name: peak memory $kb KB for $n inputs against $kb_small KB for 100"
        or diag "grew by " . ($kb - $kb_small) . " KB";
    if ($name eq 'top') {
        my ($c, $t) = totals($o);
        is $c, $calls1 * $n, "top: the calls of all $n inputs ($c)";
        is $t, $stmts1 * $n, "top: the statements of all $n inputs ($t)";
    }
}
(undef, $out) = run_cmd([$nytp, 'top', '--json', "$dir/merged.out"]);
my ($mc, $ms) = totals($out);
is $mc, $calls1 * $n, 'merge: the merged profile has the calls of all inputs';
is $ms, $stmts1 * $n, 'merge: ... and their statements';
ok -s "$dir/report/index.html", 'html: the report is written';
ok -s "$dir/flame.svg", 'flame: the graph is written';

# diff: all the segments on each side
my @a = grep { /st\.out(\.4101|\.4102)?(\.\d+)?$/ && !/\.410[34]/ } @many;
my @b = grep { /\.410[34]/ } @many;
my ($s, $o, $e) = limited($nytp, 'diff', '--json', @a, '--', @b);
is $s, 0, 'diff: 900 inputs against 600 under ulimit -n 20: exit 0' or diag substr($e, 0, 500);

done_testing;
