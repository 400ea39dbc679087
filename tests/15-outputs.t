#!/usr/bin/perl
# Where output goes: -o never replaces a device, a FIFO or a symbolic link;
# report directories lose nothing nytp did not write; an interrupted command
# leaves no temporary behind and dies of its signal; a failed write to
# standard output is an error.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use File::Path qw(make_path);
use POSIX qw(mkfifo WIFSIGNALED WTERMSIG SIGINT SIGTERM SIGHUP);
use Time::HiRes qw(sleep time);

my $nytp = nytp();
my $td = testdata();
my $demo = "$td/demo.out";
my $tmon = "$td/dprof/many.tmon";
my $dir = scratch_dir() . '/outputs';
make_path($dir);
my $root = $> == 0;

# Every command that writes one file with -o, with its arguments.
my @commands = (
    [calls => ['calls'], [$demo]],
    [flame => ['flame'], [$demo]],
    ['flame --svg' => ['flame', '--svg'], [$demo]],
    [cachegrind => ['cachegrind'], [$demo]],
    [merge => ['merge'], [$demo]],
    [dump => ['dump'], [$demo]],
    ['dump --data' => ['dump', '--data'], [$demo]],
    ['dprof-convert' => ['dprof-convert'], [$tmon]],
);

sub temporaries {
    my $d = shift;
    opendir my $dh, $d or return ();
    return grep { /\.tmp\w{6}\z|^\.nytp-tmp/ } readdir $dh;
}

sub fresh_dir {
    my $name = shift;
    my $d = "$dir/$name";
    system('rm', '-rf', $d);
    make_path($d);
    return $d;
}

for my $c (@commands) {
    my ($name, $pre, $inputs) = @$c;
    (my $tag = $name) =~ s/\W+/-/g;
    my $d = fresh_dir("file-$tag");
    my @run = ($nytp, @$pre);

    # the reference: a new regular file
    my ($st, undef, $err) = run_cmd([@run, '-o', "$d/ref", @$inputs]);
    is $st, 0, "$name: -o a new file: exit 0" or diag $err;
    my $want = slurp_file("$d/ref");
    ok length($want), "$name: ... wrote something";

    # a regular file is replaced and keeps its permissions
    open my $fh, '>', "$d/old" or die;
    print $fh "old\n";
    close $fh;
    chmod 0640, "$d/old";
    ($st) = run_cmd([@run, '-o', "$d/old", @$inputs]);
    is $st, 0, "$name: -o an existing file: exit 0";
    is slurp_file("$d/old"), $want, "$name: ... replaced";
    is((stat "$d/old")[2] & 07777, 0640, "$name: ... keeping its permissions");

    # a symbolic link: its target is replaced, the link stays
    open $fh, '>', "$d/target" or die;
    print $fh "old\n";
    close $fh;
    symlink 'target', "$d/link" or die;
    ($st) = run_cmd([@run, '-o', "$d/link", @$inputs]);
    is $st, 0, "$name: -o a symlink: exit 0";
    ok -l "$d/link", "$name: ... the link stays a link";
    is readlink("$d/link"), 'target', "$name: ... pointing where it did";
    ok -f "$d/target" && !-l "$d/target", "$name: ... its target is a regular file";
    is slurp_file("$d/target"), $want, "$name: ... with the output";

    # a chain of links across directories, relative and absolute
    make_path("$d/a", "$d/b");
    open $fh, '>', "$d/b/end" or die;
    close $fh;
    symlink '../b/end', "$d/a/l2" or die;
    symlink "$d/a/l2", "$d/l1" or die;
    ($st) = run_cmd([@run, '-o', "$d/l1", @$inputs]);
    is $st, 0, "$name: -o a chain of links: exit 0";
    ok -l "$d/l1" && -l "$d/a/l2", "$name: ... both links stay";
    is slurp_file("$d/b/end"), $want, "$name: ... the final target has the output";
    is_deeply [temporaries("$d/a"), temporaries("$d/b")], [], "$name: ... no temporary left beside the links or the target";

    # a dangling link: the file it points to is created, the link stays
    symlink 'made-by-link', "$d/dangling" or die;
    ($st) = run_cmd([@run, '-o', "$d/dangling", @$inputs]);
    is $st, 0, "$name: -o a dangling link: exit 0";
    ok -l "$d/dangling", "$name: ... the link stays";
    is slurp_file("$d/made-by-link"), $want, "$name: ... its target is created with the output";

    # a FIFO with a reader: written through, still a FIFO
    mkfifo("$d/fifo", 0600) or die "mkfifo: $!";
    my $pid = fork // die;
    if (!$pid) {
        open my $in, '<:raw', "$d/fifo" or POSIX::_exit(1);
        open my $out, '>:raw', "$d/from-fifo" or POSIX::_exit(1);
        local $/;
        print $out scalar(<$in> // '');
        close $out;
        POSIX::_exit(0);
    }
    ($st) = run_cmd([@run, '-o', "$d/fifo", @$inputs]);
    # a FIFO replaced by a file leaves its reader waiting: do not hang
    for (1 .. 1000) {
        last if waitpid($pid, POSIX::WNOHANG()) == $pid;
        sleep 0.01;
        if ($_ == 1000) {
            kill 'KILL', $pid;
            waitpid $pid, 0;
        }
    }
    is $st, 0, "$name: -o a FIFO: exit 0";
    my $fifo_ok = ok -p "$d/fifo", "$name: ... it stays a FIFO";
    is slurp_file("$d/from-fifo"), $want, "$name: ... its reader gets the output";

    # a character device: written through (a copy of /dev/null, made here,
    # so that a regression cannot replace the system's own)
    my $device_ok = $fifo_ok;
    SKIP: {
        skip 'making a device node needs root', 3 unless $root;
        system('mknod', "$d/null", 'c', '1', '3') == 0 or skip 'mknod failed', 3;
        ($st) = run_cmd([@run, '-o', "$d/null", @$inputs]);
        is $st, 0, "$name: -o a character device: exit 0";
        $device_ok &&= ok -c "$d/null", "$name: ... it stays a character device";
        is((stat "$d/null")[6], (stat '/dev/null')[6], "$name: ... the same device");
    }

    # /dev/stdout and its kin write to the open standard output.  Only
    # when FIFOs and devices above were written through: a binary that
    # replaces what -o names would, as root, replace /dev/stdout itself.
    for my $path ('/dev/stdout', '/dev/fd/1', '/proc/self/fd/1') {
        if (!$device_ok) {
            fail "$name: -o $path: not tried, since -o replaced a FIFO or a device above";
            next;
        }
        my ($s, $out) = run_cmd([@run, '-o', $path, @$inputs]);
        is $s, 0, "$name: -o $path: exit 0";
        is $out, $want, "$name: ... the output is on standard output";
    }
    ok -l '/dev/stdout', "$name: /dev/stdout is still a link";
    if ($device_ok) {
        # the descriptor is shared, not reopened: '>>' appends
        open my $fh2, '>', "$d/appended" or die;
        print $fh2 "header\n";
        close $fh2;
        my ($s2) = run_cmd(['bash', '-c', 'f=$1; shift; "$@" -o /dev/stdout >> "$f"', 'bash',
                            "$d/appended", @run, @$inputs]);
        is $s2, 0, "$name: -o /dev/stdout >> file: exit 0";
        is slurp_file("$d/appended"), "header\n$want", "$name: ... appends to the file";
    }

    # process substitution: -o >(...)
    my ($s) = run_cmd(['bash', '-c', 'f=$1; shift; "$@" -o >(cat > "$f"); st=$?; wait $!; exit $st',
                       'bash', "$d/from-subst", @run, @$inputs]);
    is $s, 0, "$name: -o >(cat): exit 0";
    is slurp_file("$d/from-subst"), $want, "$name: ... the process gets the output";

    is_deeply [temporaries($d)], [], "$name: no temporary file left";
}

# The system's /dev/null, as root, only once writing through the copy above
# has shown that a device is never replaced.
SKIP: {
    skip 'only as root', 2 unless $root;
    skip 'a device copy was replaced above', 2
        unless !grep { !-c "$dir/file-$_/null" || !-p "$dir/file-$_/fifo" }
            map { (my $t = $_->[0]) =~ s/\W+/-/g; $t } @commands;
    my ($st) = run_cmd([$nytp, 'flame', '--svg', '-o', '/dev/null', $demo]);
    is $st, 0, '-o /dev/null: exit 0';
    ok -c '/dev/null', '... /dev/null is still a character device';
}

# nytp run: the profiler opens its own file, by the same rules
{
    my $d = fresh_dir('run');
    open my $fh, '>', "$d/target" or die;
    print $fh "old\n";
    close $fh;
    symlink 'target', "$d/link" or die;
    my ($st, undef, $err) = run_cmd([$nytp, 'run', '-o', "$d/link", '-e', '1']);
    is $st, 0, 'run -o a symlink: exit 0' or diag $err;
    ok -l "$d/link", '... the link stays a link';
    like slurp_file("$d/target"), qr/\ANYTProf 5 0\n/, '... its target has the profile';

    mkfifo("$d/fifo", 0600) or die;
    my $pid = fork // die;
    if (!$pid) {
        open my $in, '<:raw', "$d/fifo" or POSIX::_exit(1);
        open my $out, '>:raw', "$d/from-fifo" or POSIX::_exit(1);
        local $/;
        print $out scalar(<$in> // '');
        close $out;
        POSIX::_exit(0);
    }
    ($st, undef, $err) = run_cmd([$nytp, 'run', '-o', "$d/fifo", '-e', '1']);
    for (1 .. 1000) {
        last if waitpid($pid, POSIX::WNOHANG()) == $pid;
        sleep 0.01;
        if ($_ == 1000) {
            kill 'KILL', $pid;
            waitpid $pid, 0;
        }
    }
    is $st, 0, 'run -o a FIFO: exit 0' or diag $err;
    ok -p "$d/fifo", '... it stays a FIFO';
    like slurp_file("$d/from-fifo"), qr/\ANYTProf 5 0\n/, '... its reader gets the profile';
    like $err, qr/profile written to \Q$d\E\/fifo/, '... and says where the profile went';
    SKIP: {
        skip 'making a device node needs root', 2 unless $root;
        system('mknod', "$d/null", 'c', '1', '3') == 0 or skip 'mknod failed', 2;
        ($st, undef, $err) = run_cmd([$nytp, 'run', '-o', "$d/null", '-e', '1']);
        is $st, 0, 'run -o a character device: exit 0' or diag $err;
        ok -c "$d/null", '... it stays a character device';
    }
}

# ---- report directories -----------------------------------------------------------------

{
    # the reproduction of issue 14: someone's directory with an index.html
    my $v = fresh_dir('v');
    make_path("$v/sub");
    open my $fh, '>', "$v/index.html" or die;
    print $fh "<p>notes on NYTProf</p>\n";
    close $fh;
    open $fh, '>', "$v/thesis.tex" or die;
    print $fh "x\n";
    close $fh;
    my ($st, $out, $err) = run_cmd([$nytp, 'html', '-o', $v, $demo]);
    is $st, 1, 'html into a directory with a foreign index.html: refused';
    like $err, qr/^nytp html: \Q$v\E: index\.html there was not written by nytp .*\n\z/,
        '... one line saying why';
    is slurp_file("$v/index.html"), "<p>notes on NYTProf</p>\n", '... the index.html is intact';
    is slurp_file("$v/thesis.tex"), "x\n", '... thesis.tex is kept';
    ok -d "$v/sub", '... sub/ is kept';
    is_deeply [temporaries($v), temporaries($dir)], [], '... no temporary left';

    # without the index.html in the way it is written into, keeping the rest
    unlink "$v/index.html";
    ($st, $out, $err) = run_cmd([$nytp, 'html', '-o', $v, $demo]);
    is $st, 0, 'html into a directory of other files: exit 0' or diag $err;
    ok -e "$v/index.html", '... the report is there';
    is slurp_file("$v/thesis.tex"), "x\n", '... thesis.tex is kept';
    ok -d "$v/sub", '... sub/ is kept';
    like slurp_file("$v/.nytp-report"), qr/^html index\.html$/m, '... the marker lists what nytp wrote';
    unlike slurp_file("$v/.nytp-report"), qr/thesis/, '... and nothing else';
}

{
    # csv: someone's accounts.csv is not an earlier report
    my $d = fresh_dir('accounts');
    open my $fh, '>', "$d/accounts.csv" or die;
    print $fh "1,2\n";
    close $fh;
    my ($st, undef, $err) = run_cmd([$nytp, 'csv', '-o', $d, $demo]);
    is $st, 0, 'csv into a directory of CSV files: exit 0' or diag $err;
    is slurp_file("$d/accounts.csv"), "1,2\n", '... accounts.csv is kept';
    ok((grep { /demo-pl-1-line\.csv\z/ } glob("$d/*")), '... the report is there');

    # a file of nytp's name that nytp did not write stops the report
    my ($name) = map { s{.*/}{}r } grep { /demo-pl-1-line\.csv\z/ } glob("$d/*");
    my $d2 = fresh_dir('csv-clash');
    open $fh, '>', "$d2/$name" or die;
    print $fh "mine\n";
    close $fh;
    ($st, undef, $err) = run_cmd([$nytp, 'csv', '-o', $d2, $demo]);
    is $st, 1, 'csv where a foreign file has a report name: exit 1';
    like $err, qr/^nytp csv: \Q$d2\E: \Q$name\E there was not written by nytp .*\n\z/, '... one line naming it';
    is slurp_file("$d2/$name"), "mine\n", '... it is intact';
    is_deeply [sort grep { !/^\.\.?\z/ } do { opendir(my $dh, $d2); readdir $dh }], [$name],
        '... and nothing else was written';
}

{
    # html then csv with their default directory (./nytprof), and again
    my $d = fresh_dir('defaults');
    my ($st, undef, $err) = run_cmd([$nytp, 'html', $demo], cwd => $d);
    is $st, 0, 'html with the default directory: exit 0' or diag $err;
    ($st, undef, $err) = run_cmd([$nytp, 'csv', $demo], cwd => $d);
    is $st, 0, 'then csv with the default directory: exit 0' or diag $err;
    ok -e "$d/nytprof/index.html", '... the html report is still there';
    ok((grep { /demo-pl-1-line\.csv\z/ } glob("$d/nytprof/*")), '... beside the CSV files');
    ($st, undef, $err) = run_cmd([$nytp, 'html', $demo], cwd => $d);
    is $st, 0, 'html again: exit 0' or diag $err;
    ok((grep { /demo-pl-1-line\.csv\z/ } glob("$d/nytprof/*")), '... the CSV files are kept');
    # a report of another profile removes this kind's pages that it has not
    my @before = grep { /\.csv\z/ } glob("$d/nytprof/*");
    ($st, undef, $err) = run_cmd([$nytp, 'csv', "$td/recursion.out"], cwd => $d);
    is $st, 0, 'csv of another profile: exit 0' or diag $err;
    ok !(grep { /demo-pl-1-line\.csv\z/ } glob("$d/nytprof/*")), "... the earlier profile's CSV files are gone";
    ok((grep { /recursion-pl-\d+-line\.csv\z/ } glob("$d/nytprof/*")), '... the new ones are there');
    ok -e "$d/nytprof/index.html", '... the html report is untouched';
    my @csv_marks = slurp_file("$d/nytprof/.nytp-report") =~ /^csv /mg;
    is scalar(@csv_marks), scalar(grep { /\.csv\z/ } glob("$d/nytprof/*")),
        '... the marker lists exactly the CSV files there';
    is_deeply [temporaries($d), temporaries("$d/nytprof")], [], '... no temporary left';
}

{
    # names with spaces and odd bytes go through the marker and back
    my $d = fresh_dir('tricky');
    my ($st, undef, $err) = run_cmd([$nytp, 'csv', '-o', $d, "$td/tricky-strings.out"]);
    is $st, 0, 'csv of tricky names: exit 0' or diag $err;
    my $n = () = glob("$d/*");
    ($st, undef, $err) = run_cmd([$nytp, 'csv', '-o', $d, "$td/tricky-strings.out"]);
    is $st, 0, '... again into the same directory: exit 0' or diag $err;
    is scalar(() = glob("$d/*")), $n, '... the same files';
}

{
    # a symlinked directory: the report goes where it points, the link stays
    my $d = fresh_dir('dirlinks');
    make_path("$d/real");
    symlink 'real', "$d/link" or die;
    for my $cmd ('html', 'csv') {
        my ($st, undef, $err) = run_cmd([$nytp, $cmd, '-o', "$d/link", $demo]);
        is $st, 0, "$cmd -o a symlinked directory: exit 0" or diag $err;
        ok -l "$d/link", '... the link stays a link';
    }
    ok -e "$d/real/index.html", '... the html report is in the target';
    ok((grep { /demo-pl-1-line\.csv\z/ } glob("$d/real/*")), '... and the CSV files');
    symlink 'new-report', "$d/dangling" or die;
    my ($st, undef, $err) = run_cmd([$nytp, 'html', '-o', "$d/dangling", $demo]);
    is $st, 0, 'html -o a dangling symlink: exit 0' or diag $err;
    ok -l "$d/dangling", '... the link stays';
    ok -e "$d/new-report/index.html", '... the report is created where it points';
    is_deeply [temporaries($d), temporaries("$d/real")], [], '... no temporary left';
}

{
    # clear messages
    for my $cmd ('html', 'csv') {
        my ($st, undef, $err) = run_cmd([$nytp, $cmd, '-o', '/nonexistent/dir/rep', $demo]);
        is $st, 1, "$cmd -o /nonexistent/dir/rep: exit 1";
        is $err, "nytp $cmd: /nonexistent/dir/rep: cannot create a directory beside it: "
            . "/nonexistent/dir: No such file or directory\n", '... says which directory is missing';
        my $d = fresh_dir("dot-$cmd");
        ($st, undef, $err) = run_cmd([$nytp, $cmd, '-o', '.', $demo], cwd => $d);
        is $st, 0, "$cmd -o .: writes into the current directory" or diag $err;
        unlike $err, qr/busy/i, '... without "Device or resource busy"';
        ok -e "$d/.nytp-report", '... marking what it wrote';
    }
    my ($st, undef, $err) = run_cmd([$nytp, 'calls', '-o', $dir, $demo]);
    is $st, 1, 'calls -o a directory: exit 1';
    like $err, qr/^nytp calls: \Q$dir\E: is a directory\n\z/, '... says so';
}

# ---- interrupted commands -------------------------------------------------------------

# Start argv with standard input from a pipe we hold; returns (pid, writer).
sub start_held {
    my ($argv, %opt) = @_;
    pipe(my $r, my $w) or die;
    my $pid = fork // die;
    if (!$pid) {
        close $w;
        open STDIN, '<&', $r or die;
        open STDOUT, '>', '/dev/null' or die;
        open STDERR, '>', "$dir/held.err" or die;
        chdir $opt{cwd} if $opt{cwd};
        $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP PIPE QUIT ALRM USR1 USR2 XFSZ XCPU VTALRM PROF);
        exec @$argv or die;
    }
    close $r;
    return ($pid, $w);
}

sub wait_for {
    my ($what) = @_;
    for (1 .. 2000) {
        my @hit = $what->();
        return @hit if @hit;
        sleep 0.005;
    }
    return ();
}

my $head = substr(slurp_file($demo), 0, 3000);
# Every signal whose default action ends the process, not only the ones a
# terminal sends (SIGQUIT, SIGXFSZ and SIGXCPU dump core by default: no
# core file, please).
for my $name (qw(TERM INT HUP QUIT ALRM USR1 USR2 XFSZ XCPU VTALRM PROF)) {
    my $sig = eval "POSIX::SIG$name()" or die $name;
    my $d = fresh_dir("sig-dump-$name");
    my ($pid, $w) = start_held(['sh', '-c', 'ulimit -c 0 && exec "$@"', 'sh',
                                $nytp, 'dump', '-o', "$d/out.txt", '-']);
    syswrite $w, $head;
    my @tmp = wait_for(sub { temporaries($d) });
    ok @tmp, "dump -o, SIG$name: the temporary file exists while it works";
    # past the instant between making the temporary and registering it
    # (the one case cli_output_open leaves uncovered): dump waits for
    # more input by then
    sleep 0.2;
    kill $sig, $pid;
    waitpid $pid, 0;
    ok WIFSIGNALED($?) && WTERMSIG($?) == $sig, "dump -o, SIG$name: dies of the signal";
    close $w;
    is_deeply [temporaries($d)], [], "dump -o, SIG$name: no temporary left";
    ok !-e "$d/out.txt", "dump -o, SIG$name: no output either";
}

{
    my $d = fresh_dir('sig-merge');
    mkfifo("$d/in", 0600) or die;
    my $pid = fork // die;
    if (!$pid) {
        $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP PIPE);
        open STDERR, '>', '/dev/null';
        exec $nytp, 'merge', '-o', "$d/merged.out", "$d/in" or die;
    }
    open my $w, '>:raw', "$d/in" or die;
    syswrite $w, $head;
    my @tmp = wait_for(sub { temporaries($d) });
    ok @tmp, 'merge -o, SIGINT: the temporary file exists while it works';
    kill SIGINT, $pid;
    waitpid $pid, 0;
    ok WIFSIGNALED($?) && WTERMSIG($?) == SIGINT, 'merge -o, SIGINT: dies of the signal';
    close $w;
    is_deeply [temporaries($d)], [], 'merge -o, SIGINT: no temporary left';
    ok !-e "$d/merged.out", 'merge -o, SIGINT: no output either';
}

# Reports: a profile of many files, so writing the pages takes a while.
{
    my $src = fresh_dir('many-modules');
    for my $i (1 .. 300) {
        open my $fh, '>', "$src/M$i.pm" or die;
        print $fh "package M$i;\n";
        print $fh "sub s$_ { my \$x = 0; \$x += \$_ for 1..3; return \$x }\n" for 1 .. 20;
        print $fh "sub all { " . join('; ', map {"s$_()"} 1 .. 20) . " }\n1;\n";
        close $fh;
    }
    my $main = "use lib '$src';\n" . join('', map {"require M$_; M$_\::all();\n"} 1 .. 300);
    my $prof = fresh_profile('many-modules', $main);

    for my $case (['html', SIGINT, 'new'], ['csv', SIGTERM, 'existing'], ['html', SIGTERM, 'existing']) {
        my ($cmd, $sig, $where) = @$case;
        my $d = fresh_dir("sig-$cmd-$sig");
        my $out = "$d/report";
        if ($where eq 'existing') {
            make_path($out);
            open my $fh, '>', "$out/keep.txt" or die;
            close $fh;
        }
        my $pid = fork // die;
        if (!$pid) {
            $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP PIPE);
            open STDERR, '>', '/dev/null';
            exec $nytp, $cmd, '-o', $out, $prof or die;
        }
        my @tmp = wait_for(sub { $where eq 'new' ? temporaries($d) : temporaries($out) });
        my $tmpdir = @tmp ? ($where eq 'new' ? "$d/$tmp[0]" : "$out/$tmp[0]") : '';
        # wait for some pages, to interrupt it in the middle of writing
        wait_for(sub { $tmpdir && (() = glob("$tmpdir/*")) >= 3 ? 1 : () });
        kill $sig, $pid;
        waitpid $pid, 0;
        my $st = $?;
        ok @tmp, "$cmd -o $where directory: its temporary directory exists while it works";
        ok WIFSIGNALED($st) && WTERMSIG($st) == $sig, "$cmd, signal $sig: dies of the signal";
        is_deeply [temporaries($d), temporaries($out)], [], "$cmd, signal $sig: no temporary directory left";
        if ($where eq 'new') {
            ok !-e $out, "$cmd, signal $sig: no report either";
        } else {
            is_deeply [sort grep { !/^\.\.?\z/ } do { opendir(my $dh, $out); readdir $dh }], ['keep.txt'],
                "$cmd, signal $sig: the directory is as it was";
        }
    }
}

# ---- an output that is one of the inputs (issue 21) ---------------------------------------
# -o naming an input replaced the profile (or the script, for run) and
# exited 0.  Now: exit 2, one line, the file untouched, nothing written.
{
    my $d = fresh_dir('self');
    my $orig = slurp_file($demo);
    my $reset = sub {
        for my $f (qw(nytprof.out p.out)) {
            open my $fh, '>:raw', "$d/$f" or die; print $fh $orig; close $fh;
        }
        unlink "$d/hard.out", "$d/link.out";
        link "$d/p.out", "$d/hard.out" or die "link: $!";
        symlink 'p.out', "$d/link.out" or die "symlink: $!";
    };
    my @cmds = (['calls'], ['flame'], ['flame', '--svg'], ['cachegrind'], ['dump'], ['dump', '--data'],
                ['pprof'], ['speedscope'], ['top'], ['merge']);
    my $check = sub {
        my ($label, $argv, %opt) = @_;
        $reset->();
        my ($st, $out, $err) = run_cmd($argv, cwd => $d, %opt);
        is $st, 2, "$label: exit 2";
        like $err, qr/\Anytp [\w-]+: [^\n]*it would be overwritten; refusing\n\z/, "$label: one line saying why";
        ok slurp_file("$d/p.out") eq $orig && slurp_file("$d/nytprof.out") eq $orig,
            "$label: the input is untouched";
        ok !temporaries($d), "$label: no temporary";
    };
    for my $c (@cmds) {
        $check->("@$c -o p.out p.out", [$nytp, @$c, '-o', 'p.out', 'p.out']);
        $check->("@$c -o nytprof.out (the default input)", [$nytp, @$c, '-o', 'nytprof.out']);
        $check->("@$c -o link.out p.out (a symlink to it)", [$nytp, @$c, '-o', 'link.out', 'p.out']);
        $check->("@$c -o hard.out p.out (a hard link)", [$nytp, @$c, '-o', 'hard.out', "$d/p.out"]);
    }
    $check->('merge -o p.out x p.out', [$nytp, 'merge', '-o', 'p.out', $demo, 'p.out']);
    $check->('diff -o p.out', [$nytp, 'diff', '-o', 'p.out', $demo, 'p.out']);
    $check->('diff -o link.out BASE -- NEW', [$nytp, 'diff', '-o', 'link.out', $demo, '--', 'p.out']);
    $check->('-f p.out -o p.out', [$nytp, 'top', '-f', 'p.out', '-o', 'p.out']);
    $check->('-o /proc/self/fd/N', ['sh', '-c', 'exec 7<p.out; exec "$0" dump -o /proc/self/fd/7 p.out', $nytp]);
    $check->('standard output appended to standard input',
             ['sh', '-c', 'exec "$0" dump - < p.out >> p.out', $nytp]);
    # dprof-convert: the default output nytprof.out given as input, and tmon.out
    {
        $reset->();
        open my $fh, '>:raw', "$d/tmon.out" or die; print $fh slurp_file($tmon); close $fh;
        my $t = slurp_file($tmon);
        my ($st, undef, $err) = run_cmd([$nytp, 'dprof-convert', '-o', 'tmon.out'], cwd => $d);
        is $st, 2, 'dprof-convert -o tmon.out (its default input): exit 2';
        like $err, qr/refusing\n\z/, '... saying why';
        is slurp_file("$d/tmon.out"), $t, '... the tmon.out is untouched';
    }
    # run: -o naming the script
    {
        open my $fh, '>', "$d/s.pl" or die; print $fh "print qq{ran\\n};\n"; close $fh;
        my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', 's.pl', 's.pl'], cwd => $d);
        is $st, 2, 'run -o s.pl s.pl: exit 2';
        like $err, qr/\Anytp run: -o s\.pl is also an input: it would be overwritten; refusing\n\z/,
            '... one line saying why';
        is $out, '', '... the program did not run';
        is slurp_file("$d/s.pl"), "print qq{ran\\n};\n", '... the script is untouched';
    }
    # a different file, a device and a new file are still fine
    $reset->();
    my ($st) = run_cmd([$nytp, 'dump', '-o', '/dev/null', 'p.out'], cwd => $d);
    is $st, 0, 'dump -o /dev/null p.out: exit 0';
    ($st) = run_cmd([$nytp, 'merge', '-o', 'new.out', 'p.out'], cwd => $d);
    is $st, 0, 'merge -o new.out p.out: exit 0';
}

# ---- standard output that cannot be written ---------------------------------------------

sub to_full {
    my @argv = @_;
    my $pid = fork // die;
    if (!$pid) {
        open STDOUT, '>', '/dev/full' or die;
        open STDERR, '>', "$dir/full.err" or die;
        exec @argv or die;
    }
    waitpid $pid, 0;
    return ($?, slurp_file("$dir/full.err"));
}

SKIP: {
    skip 'no /dev/full', 1 unless -c '/dev/full';
    my @cases = (
        ['--help'], ['--version'], ['help'], ['help', 'dump'],
        (map { [$_, '--help'] } qw(run html flame calls dump csv cachegrind merge dprof-convert)),
        ['calls', $demo], ['flame', $demo], ['flame', '--svg', $demo], ['dump', $demo],
        ['dump', '--json', $demo], ['dump', '--data', $demo], ['merge', '-o', '-', $demo],
        ['cachegrind', '-o', '-', $demo], ['dprof-convert', '-o', '-', $tmon],
    );
    for my $c (@cases) {
        my ($st, $err) = to_full($nytp, @$c);
        ok !($st & 127) && ($st >> 8) != 0, "nytp @$c > /dev/full: non-zero exit";
        like $err, qr/\ANYTP[^\n]*No space left on device\n\z/i, "nytp @$c > /dev/full: one line saying why";
    }
    # html --open without a display prints where the report is
    my $d = fresh_dir('full-html');
    local $ENV{DISPLAY} = '';
    local $ENV{WAYLAND_DISPLAY} = '';
    my ($st, $err) = to_full($nytp, 'html', '--open', '-o', "$d/r", $demo);
    ok !($st & 127) && ($st >> 8) != 0, 'nytp html --open > /dev/full: non-zero exit';
    like $err, qr/No space left on device\n\z/, '... saying why';
}

done_testing;
