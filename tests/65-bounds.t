#!/usr/bin/perl
# Small inputs must not make the work explode, and real ones must not be
# refused: profiles made by hand (build/gen-profile, libformat's writer)
# and by a real deep recursion, each command run with its peak memory and
# time measured (/usr/bin/time) and its output size checked.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use File::Copy ();
use File::Path ();

my $nytp = nytp();
my $dir = scratch_dir();

# run_measured(\@argv) -> ($status, $stdout, $stderr, $peak_kb, $seconds)
sub run_measured {
    my ($argv) = @_;
    my $m = "$dir/time.txt";
    unlink $m;
    my ($st, $out, $err) = run_cmd(['/usr/bin/time', '-o', $m, '-f', '%M %e', @$argv]);
    my ($kb, $s) = split ' ', (slurp_file($m) // '');
    $err =~ s/^Command exited with non-zero status \d+\n//m;
    return ($st, $out, $err, $kb // 0, $s // 0);
}

sub du_bytes {
    my ($path) = @_;
    my $n = 0;
    if (-d $path) {
        opendir my $dh, $path or return 0;
        $n += du_bytes("$path/$_") for grep { !/^\.\.?$/ } readdir $dh;
    } else {
        $n = -s $path // 0;
    }
    return $n;
}

# ---- 3. output that grew with the square of the depth ---------------------
# One SUB_RETURN at depth N leaves N-1 calls open, their names unknown:
# they are one "(unreturned)" frame, not a chain of N-1, and a path with
# nothing in it is not printed.
for my $depth (10_000, 1_999_999) {
    my $f = gen('deep-return', $depth);
    my ($st, $out, $err, $kb, $s) = run_measured([$nytp, 'calls', $f]);
    is $st, 0, "calls, one return at depth $depth: exit 0";
    is $out, "(unreturned);main::f 1\n", "calls, depth $depth: one line";
    like $err, qr/\A[^\n]*: ${\($depth - 1)} calls still open at the end shown as \(unreturned\)\n\z/,
        "calls, depth $depth: the open calls are counted";
    cmp_ok $kb, '<', 100_000, "calls, depth $depth: peak memory $kb KB";
    ($st, $out) = run_measured([$nytp, 'calls', '--calls', $f]);
    is $out, "(unreturned);main::f 1\n", "calls --calls, depth $depth: one line";

    ($st, $out, $err, $kb, $s) = run_measured([$nytp, 'flame', '--svg', '--minwidth=0', $f]);
    is $st, 0, "flame --svg, depth $depth: exit 0";
    cmp_ok length $out, '<', 100_000, "flame --svg, depth $depth: " . length($out) . ' bytes';
    is scalar(() = $out =~ /<title>\(unreturned\)/g), 1, "flame --svg, depth $depth: one (unreturned) frame";
    cmp_ok $kb, '<', 100_000, "flame --svg, depth $depth: peak memory $kb KB";

    my $h = "$dir/html-$depth";
    ($st, $out, $err, $kb, $s) = run_measured([$nytp, 'html', '-o', $h, $f]);
    is $st, 0, "html, depth $depth: exit 0" or diag $err;
    my $size = du_bytes($h);
    cmp_ok $size, '<', 2_000_000, "html, depth $depth: report of $size bytes";
    cmp_ok $kb, '<', 100_000, "html, depth $depth: peak memory $kb KB";
}

# Open frames at many depths, each with a call below it: still one
# "(unreturned)", and every call is kept.
{
    my ($st, $out) = run_cmd([$nytp, 'calls', '--stable', gen('deep-return', 3), gen('deep-return', 50)]);
    is $out, "(unreturned);main::f 2\n", 'two inputs left open: one (unreturned) frame';
}

# A return at depth 0 (no writer makes one; a corrupt file can) or 1, with
# nothing open: every command that rebuilds calls takes it as a call from
# the main program ('nytp speedscope' crashed on depth 0: found by the
# fuzz target).
for my $depth (0, 1) {
    my $f = gen('deep-return', $depth);
    for my $cmd (['calls'], ['flame', '--svg'], ['speedscope', '-o', "$dir/ss-$depth.json"],
                 ['pprof', '-o', "$dir/pp-$depth.pb.gz"], ['html', '-o', "$dir/html-d$depth"],
                 ['top'], ['cachegrind', '-o', "$dir/cg-$depth.out"], ['dump', '--data']) {
        my ($st, $out, $err) = run_cmd([$nytp, @$cmd, $f]);
        is $st, 0, "$cmd->[0], one return at depth $depth: exit 0" or diag $err;
    }
    my $json = slurp_file("$dir/ss-$depth.json") // '';
    like $json, qr/"name":"main::f"/, "speedscope, depth $depth: the call is named";
    like $json, qr/\{"type":"O","frame":1,"at":0\},\{"type":"C","frame":1,"at":/,
        "speedscope, depth $depth: one call of main::f, opened and closed";
}

# ---- 4. deep recursions are real programs, not corruption ------------------
# A complete recursion 2,100,001 deep, made by hand: every command takes it.
# Its collapsed stacks grow with the square of the depth (as nytprofcalls'
# would), so only their beginning is read.
{
    my $f = gen('recursion', 2_100_001);
    my $err = "$dir/calls-rec.err";
    my $head = `$nytp calls '$f' 2>'$err' | head -c 28`;
    is $head, "main::f 1\nmain::f;main::f 1\n", 'calls, recursion 2,100,001 deep: the paths';
    unlike slurp_file($err), qr/error|beyond/, 'calls, recursion 2,100,001 deep: not refused';
    my ($st, $out, $e) = run_cmd([$nytp, 'flame', '--svg', '--minwidth=100', $f]);
    is $st, 0, 'flame --svg, recursion 2,100,001 deep: exit 0' or diag $e;
    is $e, '', 'flame --svg: no message';
    like $out, qr/<title>main::f\b/, 'flame --svg: the recursion is drawn';
    ($st, $out, $e) = run_cmd([$nytp, 'html', '--no-flame', '-o', "$dir/html-rec", $f]);
    is $st, 0, 'html, recursion 2,100,001 deep: exit 0' or diag $e;
}

# A real one: perl recursing 300,000 deep, profiled with nytp run.
{
    my $script = "$dir/deep.pl";
    open my $fh, '>', $script or die;
    print $fh "no warnings 'recursion';\n",
        "sub down { my \$n = shift; return \$n == 0 ? 0 : 1 + down(\$n - 1) }\n",
        "print down(300_000), qq{\\n};\n";
    close $fh;
    my $f = "$dir/deep-real.out";
    my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', $f, $script]);
    is $st, 0, 'nytp run: a recursion 300,000 deep' or diag $err;
    is $out, "300000\n", 'nytp run: the program ran';
    my $head = `$nytp calls '$f' 2>/dev/null | head -c 1000000`;
    like $head, qr/^main::down \d+\nmain::down;main::down \d+\n/m, 'calls: the real recursion';
    ($st, $out, $err) = run_cmd([$nytp, 'flame', '--svg', $f]);
    is $st, 0, 'flame --svg: the real recursion' or diag $err;
    my $h = "$dir/html-deep";
    ($st, $out, $err) = run_cmd([$nytp, 'html', '-o', $h, $f]);
    is $st, 0, 'html: the real recursion' or diag $err;
    like slurp_file("$h/flame.svg"), qr/main::down/, 'html: its flame graph';
}

# Memory that truly runs out is one line naming the file and the chunk.
{
    my $f = "$dir/recursion-2100001.out";
    for my $cmd (['calls'], ['flame', '--svg'], ['html', '-o', "$dir/html-oom"]) {
        my ($st, $out, $err) = run_cmd(['sh', '-c', 'ulimit -v 60000; exec "$@"', 'sh', $nytp, @$cmd, $f]);
        is $st, 1, "$cmd->[0], out of memory: exit 1";
        like $err, qr/\Anytp $cmd->[0]: \Q$f\E: out of memory (building the call tree|while loading), at chunk \d+( \(\d+ call paths\))?\n\z/,
            "$cmd->[0], out of memory: one line with the file and the chunk";
    }
}

# ---- 5. memory and time follow what is present ---------------------------
# A chain of nested string evals: linear time, and the nested count of each
# is exact (Devel::NYTProf::Data gives N-1 for the outermost of a chain of N).
{
    my $n = 100_000;
    my $f = gen('eval-chain', $n);
    my ($st, $out, $err, $kb, $s) = run_measured([$nytp, 'dump', '--data', $f]);
    is $st, 0, "dump --data, $n nested evals: exit 0" or diag $err;
    like $out, qr/^fid_fileinfo\t1\teval\t1\t\[ count 1 nested ${\($n - 1)} merged 0 \]$/m,
        'dump --data: every nested eval counted';
    cmp_ok $kb, '<', 100_000, "dump --data, $n nested evals: peak memory $kb KB";
    cmp_ok $s, '<', 15, "dump --data, $n nested evals: $s s";
}

# Every command finds an eval's outermost file however deep the chain (they
# walked at most 1000 levels: deeper evals were counted in a mid-chain
# eval, or not at all), and in time linear in the chain (cachegrind took
# 7.8 s on 500,000 levels, html 6.9 s on 50,000).
{
    my $n = 3000;
    my $f = gen('eval-chain', $n);
    my ($st, $out, $err) = run_cmd([$nytp, 'top', '--json', $f]);
    is $st, 0, "top, $n nested evals: exit 0" or diag $err;
    like $out, qr/"rows":\{[^}]*"files":1[,}]/, 'top: one file, x.pl, with all its evals';
    ($st, $out, $err) = run_cmd([$nytp, 'cachegrind', '-o', '-', $f]);
    is $st, 0, "cachegrind, $n nested evals: exit 0" or diag $err;
    is_deeply [$out =~ /^(f[ln]=.*)$/mg], ['fl=(3) x.pl', 'fn=(2) main::RUNTIME'],
        'cachegrind: every eval line counts on x.pl line 1';
    is scalar(() = $out =~ /^1 3$/mg), $n + 1, 'cachegrind: all of them';
    ($st, $out, $err) = run_cmd([$nytp, 'diff', $f, $f]);
    is $st, 0, "diff, $n nested evals: exit 0" or diag $err;
    like $out, qr/^Files by change in time \(string evals in their file\) \(1\)$/m, 'diff: one file';
    my $h = "$dir/html-chain";
    ($st, $out, $err) = run_cmd([$nytp, 'html', '-o', $h, $f]);
    is $st, 0, "html, $n nested evals: exit 0" or diag $err;
    like slurp_file("$h/index.html"), qr/<tr data-fid=1><td data-v=${\($n + 1)}>/,
        'html: x.pl counts the statements of all its evals';
    like slurp_file("$h/f2-eval-1-x-pl-1.html"), qr/spent [^<]* executing statements in <a[^>]*>string eval<\/a>, which ran 1 more string eval/,
        'html: the outermost eval\'s note';
}
# csv and html write a file per eval: a shorter chain for them
for my $n (100_000, 20_000) {
    my $f = gen('eval-chain', $n);
    my @cmds = $n > 50_000
        ? (['cachegrind', '-o', "$dir/chain.callgrind"], ['top'], ['diff', $f], ['dump', '--data'], ['calls'],
           ['flame', '--svg'], ['pprof', '-o', "$dir/chain.pb.gz"], ['speedscope', '-o', "$dir/chain.json"])
        : (['csv', '-o', "$dir/chain-csv"], ['html', '--no-flame', '-o', "$dir/chain-html"]);
    for my $cmd (@cmds) {
        my ($st, $out, $err, $kb, $s) = run_measured(['timeout', '300', $nytp, @$cmd, $f]);
        is $st, 0, "$cmd->[0], $n nested evals: exit 0" or diag $err;
        cmp_ok $kb, '<', 200_000, "$cmd->[0], $n nested evals: peak memory $kb KB";
        cmp_ok $s, '<', 120, "$cmd->[0], $n nested evals: $s s";
    }
    File::Path::remove_tree("$dir/chain-csv", "$dir/chain-html");
}

# Source saved for a line far beyond the others, with a statement on it:
# every reader takes it (the model refused the source line as corrupt,
# merge any line from 2^26 on), memory following the lines present.
for my $line (70_000_000, 4_000_000_000) {
    my $f = gen('src-far', $line);
    File::Copy::copy($f, "$f.copy") or die "copy: $!";
    my $m = "$dir/far-merged.out";
    for my $cmd (['dump', '--data'], ['top'], ['diff', $f], ['csv', '-o', "$dir/far-csv"], ['html', '-o', "$dir/far-html"],
                 ['cachegrind', '-o', "$dir/far.callgrind"], ['merge', '-o', $m, "$f.copy"]) {
        my ($st, $out, $err, $kb, $s) = run_measured(['timeout', '300', $nytp, @$cmd, $f]);
        is $st, 0, "$cmd->[0], source line $line: exit 0" or diag $err;
        cmp_ok $kb, '<', 50_000, "$cmd->[0], source line $line: peak memory $kb KB";
        cmp_ok $s, '<', 20, "$cmd->[0], source line $line: $s s";
        if ($cmd->[0] eq 'dump') {
            like $out, qr/^fid_line_time\t1\t$line\t\[ 2e-06 1 \]$/m, 'dump --data: the far line';
            like $out, qr/^fid_fileinfo\t1\t\[ x\.pl /m, 'dump --data: its file';
        } elsif ($cmd->[0] eq 'top') {
            like $out, qr/x\.pl:$line +my \$far = 2;$/m, 'top: the far line with its saved source';
        } elsif ($cmd->[0] eq 'csv') {
            like slurp_file("$dir/far-csv/x-pl-1-line.csv"), qr/^0\.000001,1,0\.000001,my \$near = 1;$/m,
                'csv: the lines before the far one keep their data';
            like $err, qr/\A[^\n]*x\.pl: lines beyond \d+ are far beyond the others[^\n]*\n\z/,
                'csv: the far line is left out with one line saying so';
        } elsif ($cmd->[0] eq 'html') {
            like slurp_file("$dir/far-html/f1-x-pl.html"), qr/<tr id=L$line><td>$line<td>1<[^\n]*my \$far = 2;/,
                'html: the far line with its saved source';
        }
    }
    my (undef, $out) = run_cmd([$nytp, 'dump', '--data', $m]);
    like $out, qr/^fid_line_time\t1\t$line\t\[ 4e-06 2 \]$/m, "merge, line $line: both inputs' statements";
    File::Path::remove_tree("$dir/far-csv", "$dir/far-html");
}

# cachegrind finds the sub holding a line from the lines present (it kept
# a slot per line of every sub, 237 MB for a sub of 60,000,000 lines, and
# ignored subs ending past line 2^26: their lines went to main::RUNTIME).
for my $n (60_000_000, 4_000_000_000) {
    my $f = gen('sub-far', $n);
    my ($st, $out, $err, $kb, $s) = run_measured([$nytp, 'cachegrind', '-o', "$dir/subfar.callgrind", $f]);
    is $st, 0, "cachegrind, a sub on lines 2..$n: exit 0" or diag $err;
    cmp_ok $kb, '<', 50_000, "cachegrind, a sub on lines 2..$n: peak memory $kb KB";
    like slurp_file("$dir/subfar.callgrind"), qr/^fn=\(\d+\)\n$n 20$/m, "cachegrind: line $n counts in main::f";
}

# Statements on lines 64, 128, ... (a 2 MB profile cost 1.5 GB): the lines
# present are stored, not every line number up to the last.
{
    my $n = 100_000;
    my $f = gen('sparse-lines', $n);
    # merge: the same profile twice (a copy, since a file named twice is read once)
    File::Copy::copy($f, "$f.copy") or die "copy: $!";
    my $m = "$dir/sparse-merged.out";
    for my $cmd (['dump', '--data'], ['cachegrind', '-o', "$dir/out.callgrind"], ['csv', '-o', "$dir/sparse-csv"], ['html', '-o', "$dir/sparse-html"],
                 ['merge', '-o', $m, "$f.copy"]) {
        my ($st, $out, $err, $kb, $s) = run_measured([$nytp, @$cmd, $f]);
        is $st, 0, "$cmd->[0], $n lines 64 apart: exit 0" or diag $err;
        cmp_ok $kb, '<', 100_000, "$cmd->[0], $n lines 64 apart: peak memory $kb KB";
        cmp_ok $s, '<', 20, "$cmd->[0], $n lines 64 apart: $s s";
        if ($cmd->[0] eq 'dump') {
            my @l = $out =~ /^fid_line_time\t1\t(\d+)\t/mg;
            is scalar(@l), $n, 'dump --data: every line';
            is_deeply [grep { $l[$_] != 64 * ($_ + 1) } 0 .. $#l], [], 'dump --data: in order, each its own';
        }
    }
    # the merge has every line once, twice counted, and reads as both inputs do
    my (undef, $both) = run_cmd([$nytp, 'dump', '--data', $f, "$f.copy"]);
    my (undef, $merged) = run_cmd([$nytp, 'dump', '--data', $m]);
    my @l = $merged =~ /^fid_line_time\t1\t(\d+)\t\[ 6e-07 2 \]$/mg;
    is scalar(@l), $n, "merge, $n lines 64 apart: every line, with both inputs' statements";
    is_deeply [grep { $l[$_] != 64 * ($_ + 1) } 0 .. $#l], [], 'merge: in order, each its own';
    my @want = $both =~ /^fid_line_time\t.*$/mg;
    my @got = $merged =~ /^fid_line_time\t.*$/mg;
    ok @got == @want && join("\n", @got) eq join("\n", @want), 'merge: the lines as the two inputs read together';
}

# A file id far beyond the others (a 200-byte profile cost 600 MB): one
# file, with its own number, as Devel::NYTProf::Data shows it.  merge
# takes any file id too (it refused 4194304 and more), and gives the
# file the next output id.
for my $id (4_194_304, 4_000_000_000) {
    my $f = gen('big-fid', $id);
    File::Copy::copy($f, "$f.copy") or die "copy: $!";
    my $m = "$dir/big-fid-merged.out";
    my ($st, $out, $err, $kb, $s) = run_measured([$nytp, 'merge', '-o', $m, $f, "$f.copy"]);
    is $st, 0, "merge, file id $id: exit 0" or diag $err;
    is $err, '', "merge, file id $id: no message";
    cmp_ok $kb, '<', 50_000, "merge, file id $id: peak memory $kb KB";
    cmp_ok $s, '<', 5, "merge, file id $id: $s s";
    (undef, $out) = run_cmd([$nytp, 'dump', '--data', $m]);
    like $out, qr/^fid_fileinfo\t1\t\[ x\.pl   1 /m, "merge, file id $id: the file";
    like $out, qr/^fid_line_time\t1\t1\t\[ 2e-06 2 \]$/m, "merge, file id $id: its line, both inputs' statements";
    like $out, qr/^fid_fileinfo\t1\tcall\t1\tmain::f\t\[ 2 /m, "merge, file id $id: its calls";
}
{
    my $f = gen('big-fid', 4_194_303);
    for my $cmd (['dump', '--data'], ['cachegrind', '-o', "$dir/out.callgrind"], ['csv', '-o', "$dir/big-fid-csv"], ['html', '-o', "$dir/big-fid-html"]) {
        my ($st, $out, $err, $kb, $s) = run_measured([$nytp, @$cmd, $f]);
        is $st, 0, "$cmd->[0], file id 4194303: exit 0" or diag $err;
        cmp_ok $kb, '<', 50_000, "$cmd->[0], file id 4194303: peak memory $kb KB";
        cmp_ok $s, '<', 5, "$cmd->[0], file id 4194303: $s s";
        if ($cmd->[0] eq 'dump') {
            like $out, qr/^fid_fileinfo\t4194303\t\[ x\.pl   4194303 /m, 'dump --data: the file keeps its id';
            like $out, qr/^fid_line_time\t4194303\t1\t\[ 1e-06 1 \]$/m, 'dump --data: its line';
        }
    }
}

# A source file the profile names (not saved in it, savesrc=0) that is now
# a FIFO or a device: csv and html read sources from disk, and opening the
# FIFO blocked for ever, reading /dev/zero never ended.  They must finish,
# saying the source is not a regular file.
{
    my $src = "$dir/gone.pl";
    open my $fh, '>', $src or die "$src: $!";
    print $fh "my \$x = 0;\nfor (1 .. 10) { \$x += \$_ }\nprint \"\$x\\n\";\n";
    close $fh;
    my $prof = "$dir/gone.out";
    my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', $prof, '--nytprof', 'savesrc=0', $src]);
    is $st, 0, 'a profile with savesrc=0' or diag $err;
    # and a regular file too large to be source (sparse: no disk used)
    for my $kind ('fifo', 'device', 'huge') {
        unlink $src;
        if ($kind eq 'fifo') {
            system('mkfifo', $src) == 0 or die "mkfifo: $!";
        } elsif ($kind eq 'device') {
            symlink('/dev/zero', $src) or die "symlink: $!";
        } else {
            system('truncate', '-s', '300M', $src) == 0 or die "truncate: $!";
        }
        ($st, $out, $err) = run_cmd(['timeout', '60', $nytp, 'csv', '-o', "$dir/gone-csv-$kind", $prof]);
        is $st, 0, "csv, its source now a $kind: it finishes, exit 0" or diag $err;
        my $why = $kind eq 'huge' ? qr/larger than a source file can be \(256 MiB\)/ : qr/not a regular file/;
        like $err, qr/Unable to open '\Q$src\E' for reading: $why/, "csv, source a $kind: said, once";
        ($st, $out, $err) = run_cmd(['timeout', '60', $nytp, 'html', '-o', "$dir/gone-html-$kind", $prof]);
        is $st, 0, "html, its source now a $kind: it finishes, exit 0" or diag $err;
        my ($page) = glob("$dir/gone-html-$kind/f1-*.html");
        like slurp_file($page // '') // '', qr/source of this file is not available/,
            "html, source a $kind: the page says the source is not available";
    }
}

# html hands sub returns to a worker thread in batches of 256 KiB; a name
# longer than a batch travels alone.  The report is the same as without
# the thread (NYTP_THREADS=0), and the long-named sub's two calls are in it.
{
    my $f = gen('long-name', 300_000);
    my ($st, $out, $err) = run_cmd([$nytp, 'html', '-o', "$dir/long-name-threads", $f]);
    is $st, 0, 'html, a sub name of 300,000 bytes: exit 0' or diag $err;
    {
        local $ENV{NYTP_THREADS} = 0;
        ($st, $out, $err) = run_cmd([$nytp, 'html', '-o', "$dir/long-name-one", $f]);
    }
    is $st, 0, 'html, the same on one thread: exit 0' or diag $err;
    my ($dst, $dout) = run_cmd(['diff', '-r', "$dir/long-name-threads", "$dir/long-name-one"]);
    is $dst, 0, 'html, long name: the same report with and without the worker thread' or diag $dout;
    my $title = '<title>main::' . ('x' x 300_000) . "\n60.000 ms (75.00%), 2 calls,";
    ok index(slurp_file("$dir/long-name-threads/flame.svg") // '', $title) >= 0,
        'html, long name: its 2 calls and their time are in the flame graph';
}

# Times that are NaN, +Inf, -Inf or 1e300 (SUB_CALLERS, SUB_RETURN, the
# process's start and end), statements of the largest and smallest ticks:
# every export exits 0 and counts such a time as nothing, as flame --svg
# draws it.  diff --svg said "out of memory" on them, pprof's total
# overflowed.  With an ASan+UBSan nytp there (make asan-nytp), it runs them
# too and must not report anything.
{
    my @bins = ($nytp);
    my $san = repo() . '/build/asan/nytp';
    if (-x $san) {
        push @bins, $san;
    } else {
        diag 'no build/asan/nytp (make asan-nytp): odd times checked without sanitizers';
    }
    my @kinds = qw(nan inf neginf huge);
    my %f = map { $_ => gen("time-$_", 3) } @kinds;
    for my $bin (@bins) {
        my $b = $bin eq $nytp ? 'nytp' : 'asan nytp';
        for my $k (@kinds) {
            my $f = $f{$k};
            my $o = "$dir/odd-$k";
            File::Path::remove_tree($o);
            File::Path::make_path($o);
            my @cmds = (['top'], ['top', '--json'], ['html', '-o', "$o/html"], ['csv', '-o', "$o/csv"],
                        ['calls'], ['flame'], ['flame', '--svg'], ['flame', '--svg', '--calls'],
                        ['cachegrind', '-o', "$o/cg.out"], ['pprof', '-o', "$o/p.pb.gz"],
                        ['speedscope', '-o', "$o/s.json"], ['dump'], ['dump', '--data'],
                        ['merge', '-o', "$o/m.out"], ['diff', $f], ['diff', '--json', $f],
                        ['diff', '--svg', '-o', "$o/d.svg", $f], ['diff', '--svg', $f{huge}],
                        ['diff', '--normalize', '--svg', '-o', "$o/n.svg", $f{nan}],
                        ['diff', $f{huge}]);
            for my $c (@cmds) {
                my ($st, $out, $err) = run_cmd([$bin, @$c, $f]);
                my $what = "$b @$c, $k times";
                is $st, 0, "$what: exit 0" or diag $err;
                unlike $err, qr/runtime error|Sanitizer|out of memory/, "$what: no sanitizer report, no false error";
            }
            my $json = slurp_file("$o/s.json") // '';
            unlike $json, qr/null/, "$b speedscope, $k times: every time is a number";
            like slurp_file("$o/d.svg") // '', qr{</svg>\s*\z}, "$b diff --svg, $k times: a whole SVG";
        }
    }
}

done_testing;
