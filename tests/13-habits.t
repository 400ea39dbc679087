#!/usr/bin/perl
# What users bring from the nytprof* scripts: -f FILE / --file=FILE for the
# input of every command that reads a profile, -o / --out / --output for
# every output; and a file named twice (x.out x.out*) read once, with a
# warning, by every command that adds inputs up.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $td = testdata();
my $dir = scratch_dir();
my $demo = "$td/demo.out";
my $tmon = "$td/dprof/many.tmon";

# What each command writes, and how to read it back for comparing.
my %cmds = (
    dump => { in => $demo, out => 'file' },
    calls => { in => $demo, out => 'file' },
    flame => { in => $demo, out => 'file' },
    cachegrind => { in => $demo, out => 'file' },
    merge => { in => $demo, out => 'file' },
    'dprof-convert' => { in => $tmon, out => 'file' },
    html => { in => $demo, out => 'dir', check => 'index.html' },
    csv => { in => $demo, out => 'dir' },
    pprof => { in => $demo, out => 'file' },
    top => { in => $demo, out => 'file' },
    speedscope => { in => $demo, out => 'file' },
);

sub result {
    my ($kind, $path) = @_;
    return slurp_file($path) if $kind eq 'file';
    opendir my $dh, $path or return undef;
    return join ',', sort grep { !/^\./ } readdir $dh;
}

my $n = 0;
for my $c (sort keys %cmds) {
    my ($in, $kind) = @{ $cmds{$c} }{qw(in out)};
    my $ref = "$dir/$c-ref";
    my ($st, $out, $err) = run_cmd([$nytp, $c, '-o', $ref, $in]);
    is $st, 0, "$c -o OUT FILE: exit 0" or diag $err;
    my $want = result($kind, $ref);
    ok defined $want && length $want, "$c: wrote its output";
    # each output spelling with the operand, each input spelling with -o
    my @cases = ((map { [$_, [$in]] } ['--out', 'X'], ['--out=X'], ['--output', 'X'], ['--output=X']),
                 (map { [['-o', 'X'], $_] } ['-f', $in], ["-f$in"], ['--file', $in], ["--file=$in"]));
    for my $case (@cases) {
        my ($spelling, $input) = @$case;
        {
            my $o = "$dir/$c-" . ++$n;
            my @o = map { s/X/$o/r } @$spelling;
            ($st, $out, $err) = run_cmd([$nytp, $c, @o, @$input]);
            my $label = "$c @$spelling @{[ $input->[0] =~ /^-/ ? $input->[0] =~ s/\Q$in\E/FILE/r : 'FILE' ]}";
            is $st, 0, "$label: exit 0" or diag $err;
            my $got = result($kind, $o);
            # the profile's and the report's times are the same; html's and
            # merge's bytes may name the output, so compare what they hold
            if ($c eq 'merge' || $c eq 'dprof-convert') {
                my (undef, $a) = run_cmd([$nytp, 'dump', '--data', $o]);
                my (undef, $b) = run_cmd([$nytp, 'dump', '--data', $ref]);
                $a =~ s/^attribute\t(basetime|profiler_\w+)\t.*\n//mg;
                $b =~ s/^attribute\t(basetime|profiler_\w+)\t.*\n//mg;
                is $a, $b, "$label: the same profile";
            } else {
                is $got, $want, "$label: the same output";
            }
        }
    }
}

# -f with operands: the -f files come first; several -f add up.
{
    system('cp', $demo, "$dir/copy.out") == 0 or die;
    my (undef, $two) = run_cmd([$nytp, 'dump', '--data', $demo, "$dir/copy.out"]);
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', '-f', $demo, '--file', "$dir/copy.out"]);
    is $st, 0, 'two -f: exit 0' or diag $err;
    is $out, $two, 'two -f: both files are read';
    ($st, $out, $err) = run_cmd([$nytp, 'dump', '-f', $demo, $demo]);
    is $st, 2, 'dump -f FILE FILE: still one file only (exit 2)';
    ($st, $out, $err) = run_cmd([$nytp, 'dump', '-f']);
    is $st, 2, '-f without a value: exit 2';
    like $err, qr/^nytp dump: option '-f' needs a value/, '... one line saying so';
    ($st, $out, $err) = run_cmd([$nytp, 'dump', '--file=']);
    is $st, 2, '--file= (empty): exit 2';
}

# run: -o, --out and --output name the profile.
for my $spelling (['-o', 'X'], ['--out=X'], ['--output=X']) {
    my $o = "$dir/run-" . ++$n . '.out';
    my ($st, $out, $err) = run_cmd([$nytp, 'run', map({ s/X/$o/r } @$spelling), '-e', '1']);
    my ($st2) = run_cmd([$nytp, 'run', map({ s/X/$o/r } @$spelling), "$td/demo.pl"]);
    is $st2, 0, "run @$spelling: exit 0";
    ok -s $o, "run @$spelling: the profile is written there";
}

# The same file twice: a warning, read once; its twin through another
# name (a hard link, ./x, a symlink) too.  Copies are different files.
{
    link $demo, "$dir/hard.out" or die;
    symlink $demo, "$dir/sym.out" or die;
    my (undef, $once) = run_cmd([$nytp, 'dump', '--data', $demo]);
    for my $twice ([$demo, $demo], [$demo, "$dir/hard.out"], ["$dir/sym.out", $demo],
                   [$demo, "$dir/hard.out", "$dir/sym.out"]) {
        my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', @$twice]);
        is $st, 0, "dump --data @$twice: exit 0";
        is $out, $once, '... counted once';
        my @w = split /\n/, $err;
        is scalar(@w), @$twice - 1, '... one warning per repeated file';
        like $w[0], qr/^nytp dump: warning: \Q$twice->[1]\E: (given twice|the same file as \Q$twice->[0]\E); read once$/,
            '... naming both' if @w;
    }
    my ($st, $out, $err) = run_cmd([$nytp, 'dump', '--data', '-', $demo], stdin => slurp_file($demo));
    is $err, '', 'standard input and a file with the same bytes: both read';

    # every command that adds inputs up
    my %single;
    my @each = (['calls'], ['flame'], ['cachegrind', '-o', '-'], ['csv', '-o', 'DIR'],
                ['html', '-o', 'DIR'], ['merge', '-o', 'MERGED']);
    for my $c (@each) {
        my @one = map { s{^DIR$}{$dir/single-$c->[0]}r =~ s{^MERGED$}{$dir/single.out}r } @$c;
        my @two = map { s{^DIR$}{$dir/double-$c->[0]}r =~ s{^MERGED$}{$dir/double.out}r } @$c;
        my ($s1, $o1) = run_cmd([$nytp, @one, $demo]);
        ($st, $out, $err) = run_cmd([$nytp, @two, $demo, "$dir/hard.out"]);
        is $st, 0, "$c->[0] FILE LINK: exit 0";
        like $err, qr/^nytp \Q$c->[0]\E: warning: \Q$dir\E\/hard\.out: the same file as \Q$demo\E; read once$/m,
            "$c->[0] FILE LINK: warns";
        if ($c->[0] eq 'merge') {
            my (undef, $a) = run_cmd([$nytp, 'dump', '--data', "$dir/single.out"]);
            my (undef, $b) = run_cmd([$nytp, 'dump', '--data', "$dir/double.out"]);
            is $b, $a, 'merge FILE LINK: the same as merging FILE alone';
        } elsif ($c->[0] eq 'csv') {
            my ($f) = sort map { s{.*/}{}r } glob("$dir/single-csv/*demo*");
            ok defined $f, 'csv: wrote the report of demo.pl';
            is slurp_file("$dir/double-csv/$f"), slurp_file("$dir/single-csv/$f"), 'csv FILE LINK: counted once';
        } elsif ($c->[0] ne 'html') {
            is $out, $o1, "$c->[0] FILE LINK: counted once";
        }
    }
}

# merge shows its progress on a terminal, as html does, and never elsewhere.
{
    my $td = testdata();
    my @in = map { "$td/$_" } qw(demo.out evals.out recursion.out);
    local $ENV{NYTP_PROGRESS_AFTER} = '0';
    my ($st, $out, $err) = run_cmd([$nytp, 'merge', '-o', "$dir/p1.out", @in]);
    is $st, 0, 'merge, stderr not a terminal: exit 0';
    is $err, '', '... and no progress line';
    SKIP: {
        my $script = (grep { -x } map { "$_/script" } split /:/, $ENV{PATH})[0];
        skip 'script(1) is not installed', 3 if missing($script, 'script(1) (bsdutils)');
        ($st, $out) = run_cmd([$script, '-qec', "$nytp merge -o $dir/p2.out @in", '/dev/null']);
        is $st, 0, 'merge on a terminal: exit 0';
        like $out, qr/\rnytp merge: (?:merging \d\/3 files|writing the sums) [^\r]*\r/,
            '... a progress line naming the files merged';
        like $out, qr/\r\e\[K\z/, '... erased at the end';
    }
}

# -f on every command that reads a profile, diff included: '-f BASE -f NEW'
# is 'BASE NEW'.
{
    for my $c (qw(html top diff flame calls csv cachegrind pprof speedscope merge dump dprof-convert)) {
        my ($st, $out, $err) = run_cmd([$nytp, $c, '-f']);
        like $err, qr/^nytp \Q$c\E: option '-f' needs a value /m, "$c takes -f";
    }
    my ($s1, $want) = run_cmd([$nytp, 'diff', $demo, "$td/evals.out"]);
    my ($st, $got, $err) = run_cmd([$nytp, 'diff', '-f', $demo, '--file', "$td/evals.out"]);
    is $st, 0, 'diff -f BASE --file NEW: exit 0' or diag $err;
    is $got, $want, '... the same as diff BASE NEW';
    ($st, $got) = run_cmd([$nytp, 'diff', "--file=$demo", '--', "$td/evals.out"]);
    is $got, $want, 'diff --file=BASE -- NEW: the same';
}

# -v of nytprofmerge and nytprofcalls: what is being done, on stderr only.
{
    my ($st, $out, $err) = run_cmd([$nytp, 'merge', '-v', '-o', "$dir/v.out", $demo, "$td/evals.out"]);
    is $st, 0, 'merge -v: exit 0';
    is $err, "nytp merge: merging $demo (1 of 2)\nnytp merge: merging $td/evals.out (2 of 2)\n"
        . "nytp merge: writing the sums to $dir/v.out\nnytp merge: wrote $dir/v.out\n", 'merge -v: says each step';
    ($st, $out, $err) = run_cmd([$nytp, 'merge', '--verbose', '-o', "$dir/v2.out", $demo]);
    like $err, qr/^nytp merge: merging /, 'merge --verbose: the same';
    my (undef, $quiet) = run_cmd([$nytp, 'calls', $demo]);
    ($st, $out, $err) = run_cmd([$nytp, 'calls', '-v', $demo]);
    is $st, 0, 'calls -v: exit 0';
    is $out, $quiet, 'calls -v: the same call paths on stdout';
    like $err, qr/\Anytp calls: reading \Q$demo\E \(1 of 1\)\nnytp calls: \Q$demo\E: \d+ sub returns\n/,
        'calls -v: says what it read';
    like $err, qr/^nytp calls: writing the call paths to standard output$/m, '... and where it writes';
    ($st, $out, $err) = run_cmd([$nytp, 'calls', '--verbose', $demo]);
    like $err, qr/reading/, 'calls --verbose: the same';
}

# csv -d / --delete (nytprofcsv's): every file of earlier nytp reports in
# the directory goes first, the html report's too; files nytp did not
# write stay.  Without -d an html report beside the csv one stays.
for my $cmd (qw(csv html)) {
    for my $d (0, 1) {
        my $o = "$dir/del-$cmd-$d";
        my $other = $cmd eq 'csv' ? 'html' : 'csv';
        run_cmd([$nytp, $other, '-o', $o, $demo]);
        open my $fh, '>', "$o/mine.txt" or die;
        close $fh;
        my @before = grep { !/^\./ && $_ ne 'mine.txt' } do { opendir(my $dh, $o) or die; readdir $dh };
        my ($st, $out, $err) = run_cmd([$nytp, $cmd, ($d ? ('-d') : ()), '-o', $o, $demo]);
        is $st, 0, "$cmd @{[ $d ? '-d ' : '' ]}into a $other report: exit 0" or diag $err;
        ok -e "$o/mine.txt", '... a file nytp did not write stays';
        my @left = grep { -e "$o/$_" } @before;
        if ($d) {
            is scalar(@left), 0, "... the $other report's files are gone" or diag "@left";
        } else {
            is scalar(@left), scalar(@before), "... the $other report stays";
        }
        ($st) = run_cmd([$nytp, $other, '-o', $o, $demo]);
        is $st, 0, "... and a $other report can be written there again";
    }
}

done_testing;
