#!/usr/bin/perl
# 'nytp run': finds the profiler of the build, passes the program its
# arguments and its exit status back, names the profile on stderr, and
# applies -o and --nytprof; the profile matches Devel::NYTProf's.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use NytpMask;

my $nytp = nytp();
my $progs = repo() . '/tests/programs';
my $dir = scratch_dir();
delete $ENV{NYTPROF};
delete @ENV{qw(PERL5LIB PERLLIB)}; # the profiler must be found without them

sub write_script {
    my ($name, $code) = @_;
    open my $fh, '>', "$dir/$name" or die;
    print $fh $code;
    close $fh;
    return "$dir/$name";
}

# nytp run ARGS... in the background, its standard error to $errf and its
# output thrown away; returns its pid.
sub start_run {
    my ($errf, @args) = @_;
    my $pid = fork // die;
    if (!$pid) {
        open STDERR, '>', $errf or die;
        open STDOUT, '>', '/dev/null' or die;
        exec $nytp, 'run', @args or die;
    }
    return $pid;
}

my ($st, $out, $err) = run_cmd([$nytp, 'run', '--help']);
is $st, 0, '--help exits 0';
like $out, qr/^usage: nytp run/, '--help prints the usage';
($st, $out, $err) = run_cmd([$nytp, '--help']);
like $out, qr/^\s+run\s/m, 'nytp --help lists run';

($st, $out, $err) = run_cmd([$nytp, 'run']);
is $st, 2, 'no script: exit 2';
like $err, qr/^nytp run: no program to profile/, 'no script: one line';
($st, $out, $err) = run_cmd([$nytp, 'run', '--frob', 'x.pl']);
is $st, 2, 'unknown option: exit 2';

# 'nytp run perl x.pl', as one writes 'perl -d:NYTProf x.pl': perl would
# read its own binary as the script.  Said at once, nothing run or written;
# a script that is called perl is still a script.
for my $perl ('perl', $^X, 'perl5.36.0') {
    unlink "$dir/nytprof.out";
    ($st, $out, $err) = run_cmd([$nytp, 'run', '--', $perl, '-e', 'print 1'], cwd => $dir);
    is $st, 2, "nytp run -- $perl -e ...: exit 2";
    like $err, qr/^nytp run: '\Q$perl\E' is perl, not a perl script: nytp run starts perl itself/,
        "nytp run -- $perl: says that perl is started by nytp run";
    ok !-e "$dir/nytprof.out", "nytp run -- $perl: no profile written";
}
{
    my $named = "$dir/named";
    mkdir $named;
    write_script('named/perl', "print qq{a script called perl\n};\n");
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/named.out", 'perl'], cwd => $named);
    is $st, 0, 'a script called perl in the current directory: runs';
    is $out, "a script called perl\n", 'a script called perl: its output';
}

# Arguments reach the program untouched (its options too), the profile
# goes to the default place, and stderr names it.
my $args = write_script('args.pl', 'print join("|", @ARGV), "\n"; exit 7;' . "\n");
unlink "$dir/nytprof.out";
($st, $out, $err) = run_cmd([$nytp, 'run', $args, '-o', 'x', '--', 'a b'], cwd => $dir);
is $st, 7, 'the exit status of the program is passed through';
is $out, "-o|x|--|a b\n", 'the program gets its arguments, options included';
like $err, qr/^nytp run: profile written to nytprof\.out \(complete\)$/m, 'stderr names the profile';
ok -s "$dir/nytprof.out", 'default profile: ./nytprof.out';

# A stale profile is not mistaken for a new one.
($st, $out, $err) = run_cmd([$nytp, 'run', '--nytprof=no_such_option=1', $args], cwd => $dir);
isnt $st, 0, 'unknown profiler option: non-zero exit';
like $err, qr/unknown option 'no_such_option'/, 'unknown profiler option: the profiler says so';
like $err, qr/^nytp run: no profile was written \(expected nytprof\.out\)$/m,
    'the old nytprof.out is not reported as written';

# -o (with characters the option syntax escapes) and --nytprof.
my $odd = "$dir/odd:name\\x.out";
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', $odd, '--nytprof', 'calls=0:compress=0',
    "$progs/closures.pl"]);
is $st, 0, '-o and --nytprof: exit 0';
like $err, qr/^nytp run: profile written to \Q$odd\E \(complete\)$/m, '-o: stderr names the file';
($st, $out) = run_cmd([$nytp, 'dump', $odd]);
is $st, 0, '-o: the file is a profile';
unlike $out, qr/^START_DEFLATE/m, '--nytprof compress=0: not compressed';
unlike $out, qr/^SUB_RETURN/m, '--nytprof calls=0: no call events';
like $out, qr/^OPTION\tcalls\t0$/m, '--nytprof: the option is recorded';

# The profile is the one Devel::NYTProf writes, times aside.
{
    local $ENV{PERL_HASH_SEED} = 0;
    local $ENV{PERL_PERTURB_KEYS} = 0;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/ours.out", "$progs/evals-loop.pl"],
        cwd => $dir);
    is $st, 0, 'evals-loop: exit 0';
    local $ENV{NYTPROF} = "file=$dir/theirs.out";
    run_cmd([$^X, '-d:NYTProf', "$progs/evals-loop.pl"], cwd => $dir);
    my (undef, $a) = run_cmd([$nytp, 'dump', '--data', "$dir/ours.out"]);
    my (undef, $b) = run_cmd([$nytp, 'dump', '--data', "$dir/theirs.out"]);
    is mask_profile_dump($a), mask_profile_dump($b), 'evals-loop: same profile as Devel::NYTProf';
}

# Exit paths: die, exec, POSIX::_exit, a signal; each profile complete.
my $dst;
for my $case (['dies', 255], ['execs', 4], ['posix-exit', 3]) {
    my ($prog, $want) = @$case;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/$prog.out", "$progs/$prog.pl"]);
    is $st, $want, "$prog: exit status $want passed through";
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/$prog.out"]);
    is $dst, 0, "$prog: the profile is complete";
}
# nytp run gives the profiler sigexit=INT,HUP,TERM unless told otherwise
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", "$progs/signals.pl"]);
is $st, 128 + 15, 'killed by SIGTERM: exit status 143';
like $err, qr/^nytp run: the program was killed by signal 15 \(SIGTERM\)$/m,
    'killed by SIGTERM: stderr says so';
like $err, qr/^nytp run: profile written to \Q$dir\E\/sig\.out \(complete\)$/m,
    'killed by SIGTERM: complete, as nytp run catches TERM by default (sigexit)';
($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/sig.out"]);
is $dst, 0, 'killed by SIGTERM: the profile is indeed complete';
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '--nytprof=sigexit=0',
    "$progs/signals.pl"]);
is $st, 128 + 15, 'sigexit=0, killed by SIGTERM: exit status 143';
like $err, qr/^nytp run: profile written to \Q$dir\E\/sig\.out is incomplete .*sigexit=1/m,
    'sigexit=0, killed by SIGTERM: the profile is named incomplete, and sigexit=1 suggested';
($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/sig.out"]);
isnt $dst, 0, 'sigexit=0, killed by SIGTERM: the profile is indeed truncated';
{
    local $ENV{NYTPROF} = 'sigexit=0';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", "$progs/signals.pl"]);
    like $err, qr/sig\.out is incomplete/, 'sigexit=0 in NYTPROF also takes the default away';
}
# a program's own sigexit=... replaces the default: PIPE alone leaves TERM uncaught
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '--nytprof=sigexit=PIPE',
    "$progs/signals.pl"]);
like $err, qr/sig\.out is incomplete/, 'sigexit=PIPE: TERM is not caught';
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '--nytprof=sigexit=TERM',
    "$progs/signals.pl"]);
# (issue 21: it exited 1, and the signal went unmentioned)
is $st, 128 + 15, 'sigexit=TERM: the program still dies of SIGTERM, after the profile is finished';
like $err, qr/^nytp run: the program was killed by signal 15 \(SIGTERM\)\n.*\(complete\)$/m,
    'sigexit=TERM: the signal is named, the profile complete';
($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/sig.out"]);
is $dst, 0, 'sigexit=TERM: the profile is complete';
unlink "$dir/sig.out";
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '--nytprof=sigexit=1',
    "$progs/signals.pl"]);
is $st, 128 + 15, 'sigexit=1 covers TERM: dies of SIGTERM';
($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/sig.out"]);
is $dst, 0, 'sigexit=1 covers TERM: the profile is complete';
# advice only where it helps: none for KILL, the signal's own name for
# one that sigexit=1 leaves out
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '-e', 'kill "KILL", $$; sleep 5']);
is $st, 128 + 9, 'SIGKILL: exit 137';
like $err, qr/^nytp run: profile written to \S+ is incomplete \(cut where SIGKILL struck, which no process can catch;[^\n]*\)$/m,
    'SIGKILL: incomplete, and why nothing could help';
unlike $err, qr/sigexit/, 'SIGKILL: sigexit is not advised';
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '-e', 'kill "USR1", $$; sleep 5']);
like $err, qr/is incomplete \(cut where the signal struck; --nytprof sigexit=USR1 keeps it complete\)$/m,
    'SIGUSR1: sigexit=USR1 advised (sigexit=1 does not catch it)';
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sig.out", '--nytprof=sigexit=usr1', '-e',
    'kill "USR1", $$; sleep 5']);
is $st, 128 + 10, 'sigexit=usr1: dies of SIGUSR1';
like $err, qr/\(complete\)$/m, 'sigexit=usr1: the profile is complete';

# These checks send HUP and INT and wait for the program to die of them:
# a harness started under nohup, or in the background by a shell without
# job control, has them ignored, and the programs would inherit that (the
# profiler rightly keeps an ignored signal ignored) and never die.
# NytpTest puts them back to their defaults for every test file.
{
    local $SIG{HUP} = 'IGNORE';
    local $SIG{INT} = 'IGNORE';
    my ($st, $out) = run_cmd([$^X, "-I$FindBin::Bin/lib", '-MNytpTest', '-e',
        'exec "cat", "/proc/self/status" or die']);
    my ($ign) = $out =~ /^SigIgn:\s*([0-9a-f]+)$/m;
    ok defined $ign && !(hex($ign) & 0x3),
        'a test file started with HUP and INT ignored starts its programs with them at their defaults'
        . (defined $ign ? " (SigIgn $ign)" : '');
}

# TERM or HUP sent to nytp run (a service manager stopping it) reaches
# perl, and nytp run waits for it: no perl left running on its own to
# rewrite the profile later (issue 21).
for my $sig (qw(TERM HUP)) {
    my $pidfile = "$dir/fwd-$sig.pid";
    unlink $pidfile;
    my $prog = write_script("fwd-$sig.pl", <<"PERL");
open my \$fh, '>', '$pidfile' or die; print \$fh \$\$; close \$fh;
my \$n = 0;
while (1) { \$n++; select undef, undef, undef, 0.01 }
PERL
    my $errf = "$dir/fwd-$sig.err";
    my $pid = start_run($errf, '-o', "$dir/fwd-$sig.out", '--nytprof=sigexit=0', $prog);
    my $t0 = time;
    select undef, undef, undef, 0.05 until -s $pidfile || time - $t0 > 30;
    my $perl = slurp_file($pidfile);
    ok $perl, "$sig: the program started (pid $perl)";
    select undef, undef, undef, 0.2;
    kill $sig, $pid;
    waitpid $pid, 0;
    my $rc = $? >> 8;
    my $sn = $sig eq 'TERM' ? 15 : 1;
    is $rc, 128 + $sn, "$sig sent to nytp run: it exits as perl did, killed by $sig";
    ok !kill(0, $perl), "$sig: perl is not left running";
    my $e = slurp_file($errf);
    like $e, qr/^nytp run: the program was killed by signal $sn \(SIG$sig\), which nytp run was sent and passed on$/m,
        "$sig: says the signal was passed on";
    like $e, qr/^nytp run: profile written to \S+fwd-$sig\.out is incomplete/m, "$sig: names the profile";
    kill 'KILL', $perl if $perl && kill 0, $perl; # an orphan must not outlive the test
}
# with sigexit (nytp run's default, or sigexit=1) the profile so stopped
# is complete
for my $opt ('--nytprof=sigexit=1', '--nytprof=compress=1') {
    my $pidfile = "$dir/fwd-x.pid";
    unlink $pidfile, "$dir/fwd-x.out";
    my $prog = write_script('fwd-x.pl', "open my \$fh, '>', '$pidfile' or die; print \$fh \$\$; close \$fh;\n"
        . "sub tick { select undef, undef, undef, 0.01 }\ntick() while 1;\n");
    my $pid = start_run("$dir/fwd-x.err", '-o', "$dir/fwd-x.out", $opt, $prog);
    my $t0 = time;
    select undef, undef, undef, 0.05 until -s $pidfile || time - $t0 > 30;
    select undef, undef, undef, 0.2;
    kill 'TERM', $pid;
    waitpid $pid, 0;
    is $? >> 8, 143, "$opt, TERM sent to nytp run: exit 143";
    my $perl = slurp_file($pidfile);
    kill 'KILL', $perl if $perl && kill 0, $perl;
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/fwd-x.out"]);
    is $dst, 0, '... and the profile is complete';
    my (undef, $data) = run_cmd([$nytp, 'dump', '--data', "$dir/fwd-x.out"]);
    like $data, qr/main::tick/, '... with its subs';
}

# whether process PID has ended (a zombie no one has reaped yet has)
sub gone {
    my $pid = shift;
    return 1 if !kill 0, $pid;
    my $stat = slurp_file("/proc/$pid/stat") // return 1;
    return $stat =~ /\) [ZX] /;
}

# A server's master signals its workers and exits without waiting for
# them (Net::Server's does): nytp run waits for the workers' profiles
# before it names them, for as long as they run after a stop it passed
# on; a program that ends by itself gets up to 5 seconds; a daemon in a
# session of its own is not waited for (issue 22).
{
    my $pidfile = "$dir/left.pid";
    unlink $pidfile, glob("$dir/left.out*");
    my $prog = write_script('left.pl', <<"PERL");
sub work { my \$s = 0; \$s += \$_ for 1 .. 1000; \$s }
my \$child = fork // die;
END { if (defined \$child && !\$child) { my \$t = time; work() while time - \$t < 2 } } # a slow ending
if (!\$child) {
    \$SIG{TERM} = sub { exit 0 };
    sleep 30;
    exit 1;
}
\$SIG{TERM} = sub { kill 'TERM', \$child; exit 0 };
open my \$fh, '>', '$pidfile' or die; print \$fh "\$child\\n"; close \$fh;
sleep 30;
PERL
    my $pid = start_run("$dir/left.err", '-o', "$dir/left.out", $prog);
    my $t0 = time;
    select undef, undef, undef, 0.05 until -s $pidfile || time - $t0 > 30;
    select undef, undef, undef, 0.3;
    my $child = slurp_file($pidfile) + 0;
    kill 'TERM', $pid;
    waitpid $pid, 0;
    is $? >> 8, 0, 'master and worker stopped: nytp run exits 0, as the master did';
    ok gone($child), 'the worker has ended when nytp run returns';
    my $e = slurp_file("$dir/left.err");
    like $e, qr/^nytp run: waiting for 1 process that the program left running \(pid $child\) to finish its profile$/m,
        'nytp run says it waits for the worker' or diag $e;
    like $e, qr/^nytp run: profile written to \S+left\.out\.$child \(complete\)$/m, 'the worker\'s profile is named';
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/left.out.$child"]);
    is $dst, 0, 'the worker\'s profile is complete when nytp run returns';
    kill 'KILL', $child if kill 0, $child;
}
{
    # a child that has run nothing since the fork when the program ends
    # (a busy machine): it has no profile yet, but nytp run (the orphan's
    # new parent) sees the profiler loaded in it and waits.  The child
    # stops itself within the statement of the fork, before the profiler
    # opens its FILE.PID; the test lets it go once nytp run is waiting.
    # (A piped open forks without the profiler's fork wrapper; the parent
    # leaves by POSIX::_exit, so that closing the pipe does not wait.)
    my $pidfile = "$dir/stopped.pid";
    unlink $pidfile, glob("$dir/stopped.out*");
    my $prog = write_script('stopped.pl', <<"PERL");
use POSIX ();
sub work { my \$s = 0; \$s += \$_ for 1 .. 1000; \$s }
(my \$child = open(my \$fh, '-|') // die "fork: \$!") || (kill('STOP', \$\$), work(), exit(0));
open my \$out, '>', '$pidfile' or die; print \$out "\$child\\n"; close \$out;
POSIX::_exit(0);
PERL
    my $pid = start_run("$dir/stopped.err", '-o', "$dir/stopped.out", $prog);
    my $t0 = time;
    my $e = '';
    select undef, undef, undef, 0.05
        until ($e = slurp_file("$dir/stopped.err") // '') =~ /waiting for/ || time - $t0 > 10;
    my $child = (slurp_file($pidfile) // 0) + 0;
    kill 'CONT', $child if $child;
    waitpid $pid, 0;
    $e = slurp_file("$dir/stopped.err");
    like $e, qr/^nytp run: waiting for 1 process that the program left running \(pid $child\)/m,
        'a child stopped since the fork, no profile yet: nytp run waits for it' or diag $e;
    like $e, qr/^nytp run: profile written to \S+stopped\.out\.$child \(complete\)$/m, '... and names its profile';
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/stopped.out.$child"]);
    is $dst, 0, '... complete when nytp run returns';
    kill 'KILL', $child if $child && kill 0, $child;
}
{
    # ended by itself, a child finishing in 1 s: waited for
    unlink glob("$dir/self.out*");
    my $prog = write_script('self.pl', <<'PERL');
sub work { my $s = 0; $s += $_ for 1 .. 1000; $s }
if (!fork) { my $t = time; work() while time - $t < 1.5; exit 0 }
PERL
    my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/self.out", $prog]);
    my ($child) = $err =~ /self\.out\.(\d+) \(complete\)$/m;
    ok $child, 'a child outliving the program: its profile is named';
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$dir/self.out.$child"]);
    is $dst, 0, 'a child outliving the program: its profile is complete when nytp run returns';
    # a daemon (a session of its own) is left alone
    $prog = write_script('daemon.pl', <<'PERL');
use POSIX ();
if (!fork) { POSIX::setsid(); sleep 20; exit 0 }
PERL
    my $t0 = time;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/daemon.out", $prog]);
    ok time - $t0 < 5, 'a daemon in a session of its own is not waited for';
    my ($d) = $err =~ /daemon\.out\.(\d+) is still being written \(process (\d+) runs on\)$/m;
    ok $d, 'its profile is named as still being written' or diag $err;
    kill 'TERM', $d if $d;
}

# A relative -o is where it meant when the program started, for the
# program and its children after a chdir; into a device, children write
# the same device, never FILE.PID beside it (issue 21).
{
    my $w = "$dir/cd";
    mkdir $w; mkdir "$w/sub";
    my $prog = write_script('cdfork.pl', <<'PERL');
chdir 'sub' or die "chdir: $!";
my $pid = fork // die;
if (!$pid) { my $x = 0; $x += $_ for 1 .. 100; exit 0 }
waitpid $pid, 0;
PERL
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', 'cd.out', $prog], cwd => $w);
    is $st, 0, 'chdir then fork: exit 0';
    opendir my $dh, $w or die;
    my @kids = grep { /^cd\.out\.\d+$/ } readdir $dh;
    is scalar(@kids), 1, "chdir then fork: the child's profile is beside the parent's";
    opendir $dh, "$w/sub" or die;
    is_deeply [grep { !/^\./ } readdir $dh], [], '... and nothing in the directory the program moved to';
    like $err, qr/^nytp run: profile written to cd\.out\.\d+ \(complete\)$/m, '... and named';
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$w/$kids[0]"]);
    is $dst, 0, "... the child's profile is complete";
    SKIP: {
        skip 'needs root to see /dev/null.PID made', 2 unless $> == 0;
        my @before = glob '/dev/null.*';
        ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', '/dev/null', $prog], cwd => $w);
        is $st, 0, '-o /dev/null, a forking program: exit 0';
        is_deeply [glob '/dev/null.*'], \@before, '... no /dev/null.PID created';
    }
    # the same for a character device we can see as any user: a FIFO is
    # not one, so only the check above says it; the file= of NYTPROF too
    local $ENV{NYTPROF} = 'file=env.out';
    ($st, $out, $err) = run_cmd([$nytp, 'run', $prog], cwd => $w);
    opendir $dh, $w or die;
    is scalar(grep { /^env\.out\.\d+$/ } readdir $dh), 1, 'NYTPROF=file=env.out: the child writes beside it too';
}

# The program's @INC is perl's own: the profiler's directory, added so
# that perl finds Devel::NYTP, is taken out again (issue 21).
{
    my $code = 'print join("\n", @INC), "\n"';
    for my $sw ([], ['-I', "$dir/lib"]) {
        my (undef, $want) = run_cmd([$^X, @$sw, '-e', $code]);
        ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/inc.out", @$sw, '-e', $code]);
        is $st, 0, "\@INC (@$sw): exit 0";
        is $out, $want, "\@INC (@$sw): as perl alone has it";
    }
}

# --children: every perl the command starts is profiled into FILE.PID,
# its @INC as perl alone has it; prove -r t/ as the example (issue 21).
{
    my $w = "$dir/kids";
    mkdir $w; mkdir "$w/t";
    my $sh = write_script('kids.sh', <<'SH');
#!/bin/sh
perl -e 'sub alpha { 1 } alpha() for 1 .. 3; open my $fh, ">", "inc.txt"; print $fh join("\n", @INC), "\n"'
perl -e 'sub beta { 2 } beta(); if (my $p = fork) { waitpid $p, 0 } else { beta(); exit 0 }'
SH
    chmod 0755, $sh;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '--children', '-o', 'k.out', $sh], cwd => $w);
    is $st, 0, '--children: exit 0' or diag $err;
    opendir my $dh, $w or die;
    my @p = sort grep { /^k\.out\.\d+$/ } readdir $dh;
    is scalar(@p), 3, '--children: a profile per perl (and one for the fork)';
    my @named = $err =~ /^nytp run: profile written to (k\.out\.\d+) \(complete\)$/mg;
    is_deeply [sort @named], \@p, '--children: each named';
    like $err, qr/^nytp run: 3 profiles: 'nytp top k\.out\.\*'/m, '--children: how to report them together';
    my (undef, $all) = run_cmd([$nytp, 'dump', '--data', map { "$w/$_" } @p]);
    like $all, qr/^sub_subinfo\tmain::alpha\t\[ \S+ calls 3 /m, '--children: alpha called 3 times';
    like $all, qr/^sub_subinfo\tmain::beta\t\[ \S+ calls 2 /m, '--children: beta twice (parent and fork)';
    my (undef, $want) = run_cmd([$^X, '-e', 'print join("\n", @INC), "\n"']);
    is slurp_file("$w/inc.txt"), $want, "--children: a child's \@INC is perl's own";
  SKIP: {
        skip 'no prove', 3 unless -x '/usr/bin/prove';
        for my $t (qw(a b)) {
            open my $fh, '>', "$w/t/$t.t" or die;
            print $fh "use Test::More tests => 1;\nsub work_$t { my \$s = 0; \$s += \$_ for 1 .. 100; \$s }\n"
                . "is work_$t(), 5050;\n";
            close $fh;
        }
        ($st, $out, $err) = run_cmd([$nytp, 'run', '--children', '-o', 'prove.out', 'prove', '-r', 't/'],
                                    cwd => $w);
        is $st, 0, '--children prove -r t/: exit 0' or diag $err;
        opendir $dh, $w or die;
        my @pp = map { "$w/$_" } grep { /^prove\.out\.\d+$/ } readdir $dh;
        cmp_ok scalar(@pp), '>=', 3, '--children prove: prove and each test profiled (' . scalar(@pp) . ')';
        my (undef, $data) = run_cmd([$nytp, 'dump', '--data', @pp]);
        ok $data =~ /^sub_subinfo\tmain::work_a\t\[ \S+ calls 1 /m && $data =~ /^sub_subinfo\tmain::work_b\t\[ \S+ calls 1 /m,
            '--children prove: the set loaded together holds both tests\' subs';
    }
    ($st, undef, $err) = run_cmd([$nytp, 'run', '--children', '-e', '1']);
    is $st, 2, '--children -e: a usage error';
}

# A program that loads Devel::NYTProf's own XS (nytprofcalls does): its
# boot code replaces DB::finish_profile, DB::_END and friends, and the
# profile must still be finished by Devel::NYTP's own code, complete.
SKIP: {
    skip 'nytprofcalls is not installed', 4 if missing(-x '/usr/bin/nytprofcalls', 'nytprofcalls (libdevel-nytprof-perl)');
    my $small = "$dir/small.out";
    ($st) = run_cmd([$nytp, 'run', '-o', $small, $args]);
    is $st, 7, 'nytprofcalls input: made';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/calls-run.out", '--',
        '/usr/bin/nytprofcalls', $small]);
    is $st, 0, 'nytp run -- /usr/bin/nytprofcalls FILE: exit 0 (no crash at exit)';
    my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', "$dir/calls-run.out"]);
    is $dst, 0, 'nytprofcalls run: the profile is complete' or diag $derr;
    # and with sigexit, whose handler must call our finish_profile too
    my $killer = write_script('nytprof-kill.pl',
        "require Devel::NYTProf::Data;\nkill 'TERM', \$\$;\nsleep 5;\n");
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/calls-sig.out",
        '--nytprof=sigexit=TERM', $killer]);
    ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', "$dir/calls-sig.out"]);
    # (Devel::NYTProf::Core reads NYTPROF too and puts its own handler,
    # which exits 1, in place of Devel::NYTP's)
    ok $st == 1 && $dst == 0, 'Devel::NYTProf loaded, sigexit=TERM: its handler exits 1, complete profile'
        or diag "exit $st: $err $derr";
}

# Perl's switches before the program go to perl: -I, -M (as one word or
# two), -w, -e CODE with the program's arguments after it.
{
    mkdir "$dir/lib";
    open my $fh, '>', "$dir/lib/RunFoo.pm" or die;
    print $fh "package RunFoo;\nsub hi { print join('|', 'hi', \@_), \"\\n\" }\n1;\n";
    close $fh;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sw.out", '-I', 'lib', '-M', 'RunFoo',
        '-w', '-e', 'RunFoo::hi(@ARGV); my $x; print "w\n" if $^W', 'a', '-b'], cwd => $dir);
    is $st, 0, 'perl switches: exit 0' or diag $err;
    is $out, "hi|a|-b\nw\n", 'perl switches: -I, -M, -w and -e reach perl, the arguments the program';
    my (undef, $dump) = run_cmd([$nytp, 'dump', '--tags=NEW_FID', "$dir/sw.out"]);
    like $dump, qr{lib/RunFoo\.pm}, 'perl switches: the module is in the profile';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sw2.out", '-Ilib', '-MRunFoo', '--',
        write_script('sw.pl', "RunFoo::hi(\@ARGV);\n"), '-x'], cwd => $dir);
    is $out, "hi|-x\n", 'perl switches in one word, then -- SCRIPT';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-e']);
    is $st, 2, '-e without CODE: usage error';
}

# Every profile the run wrote is named: the children's FILE.PID too.
{
    my $forks = write_script('forks.pl',
        "my \@k; for (1 .. 2) { my \$p = fork; if (!\$p) { print \"\$\$\\n\"; exit 0 } push \@k, \$p }\n"
        . "waitpid \$_, 0 for \@k;\n");
    unlink glob("$dir/fk.out*");
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/fk.out", $forks]);
    is $st, 0, 'forks: exit 0';
    my @kids = split /\n/, $out;
    is scalar(@kids), 2, 'forks: two children';
    like $err, qr/^nytp run: profile written to \Q$dir\E\/fk\.out \(complete\)$/m, 'forks: the parent\'s profile named';
    for my $k (@kids) {
        like $err, qr/^nytp run: profile written to \Q$dir\E\/fk\.out\.$k \(complete\)$/m, "forks: child ${k}'s profile named";
    }
    is scalar(() = $err =~ /profile written/g), 3, 'forks: three profiles, no more';
}

# A perl that cannot be started: exit status 1, one line naming it.
($st, $out, $err) = run_cmd([$nytp, 'run', '--perl', "$dir/no-such-perl", $args]);
is $st, 1, 'missing perl: exit status 1';
like $err, qr/^nytp run: cannot run \Q$dir\E\/no-such-perl: No such file or directory$/m,
    'missing perl: one line naming it';
unlike $err, qr/profile/, 'missing perl: no word about a profile';

# An unwritable profile: an error naming it, before the program runs.
unlink "$dir/ran";
my $touch = write_script('touch.pl', "open my \$f, '>', '$dir/ran' or die;\n");
($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/no/such/dir/x.out", $touch]);
isnt $st, 0, 'unwritable -o: non-zero exit';
like $err, qr{\Q$dir\E/no/such/dir/x\.out}, 'unwritable -o: the error names the path';
ok !-e "$dir/ran", 'unwritable -o: the program did not run';

# Installed layout: bin/nytp finds the profiler in perl's site arch
# directory under the same prefix (where 'make install' puts it).
{
    use Config;
    use File::Path qw(make_path);
    use File::Copy qw(copy);
    (my $rel = $Config{installsitearch}) =~ s{^\Q$Config{siteprefix}\E/?}{};
    my $prefix = "$dir/prefix";
    make_path("$prefix/bin", "$prefix/$rel/Devel", "$prefix/$rel/auto/Devel/NYTP");
    copy($nytp, "$prefix/bin/nytp") or die;
    chmod 0755, "$prefix/bin/nytp";
    copy(repo() . '/build/perl/Devel/NYTP.pm', "$prefix/$rel/Devel/NYTP.pm") or die;
    copy(repo() . '/build/perl/auto/Devel/NYTP/NYTP.so', "$prefix/$rel/auto/Devel/NYTP/NYTP.so") or die;
    ($st, $out, $err) = run_cmd(["$prefix/bin/nytp", 'run', '-o', "$dir/inst.out", $args, 'x']);
    is $st, 7, 'installed layout: the profiler is found next to the installed nytp';
    like $err, qr/profile written to \Q$dir\E\/inst\.out/, 'installed layout: profile written';

    unlink "$prefix/$rel/Devel/NYTP.pm";
    SKIP: {
        skip 'Devel::NYTP is installed in perl\'s @INC', 2 if grep { -f "$_/Devel/NYTP.pm" } @INC;
        ($st, $out, $err) = run_cmd(["$prefix/bin/nytp", 'run', '-o', "$dir/none.out", $args]);
        isnt $st, 0, 'no profiler anywhere: non-zero exit';
        like $err, qr{Devel/NYTP\.pm}, 'no profiler anywhere: perl says what it could not find';
    }
}

# Two runs at once with the same -o in one directory: the second run's
# program finds the file being written and writes FILE.PID; each run
# names only its own profile (the profiler marks them, nytp_run), and
# neither waits for the other's process.  Before, the second removed the
# first's profile and both runs named the second's.
{
    my $slow = write_script('slow-same.pl',
        'sub w { my $s = 0; $s += $_ for 1 .. 2000; $s } '
        . 'for (1 .. 8) { w(); select(undef, undef, undef, 0.1) } print "done\n";' . "\n");
    my $same = "$dir/same.out";
    unlink $same, glob("$same.*");
    my ($errA, $errB) = ("$dir/same-a.err", "$dir/same-b.err");
    my $a = start_run($errA, '-o', $same, $slow);
    select(undef, undef, undef, 0.3);
    my $b = start_run($errB, '-o', $same, $slow);
    waitpid $b, 0;
    waitpid $a, 0;
    my ($ea, $eb) = map { slurp_file($_) // '' } $errA, $errB;
    my @files = ($same, glob("$same.*"));
    is scalar(@files), 2, 'two runs, one -o: two profiles (FILE and FILE.PID)' or diag "@files";
    my ($pidfile) = glob("$same.*");
    is $ea, "nytp run: profile written to $same (complete)\n", 'the first run names its own profile, and only it';
    like $eb, qr/^nytp run: profile written to \Q$pidfile\E \(complete\)\n\z/m, 'the second run names its FILE.PID only';
    unlike "$ea$eb", qr/waiting for/, "neither waits for the other's process";
    for my $f (@files) {
        my ($dst, $data) = run_cmd([$nytp, 'dump', '--data', '--strict', $f]);
        like $data, qr/^sub_subinfo\tmain::w\t\[ \S+ calls 8 times/m, "$f: whole, with its own calls";
    }
}

# A script whose name begins with '-' (issue 35, item 16): perl is given
# '--' before it, or it reads the name as its switches ('-i.bak data.txt'
# ran data.txt as the program, editing in place; '-l.pl' read the program
# from standard input).
{
    my $sub = "$dir/dash";
    mkdir $sub;
    open my $fh, '>', "$sub/-i.bak" or die;
    print $fh 'print "the script -i.bak, args @ARGV\n";' . "\n";
    close $fh;
    open $fh, '>', "$sub/-l.pl" or die;
    print $fh 'print "the script -l.pl\n";' . "\n";
    close $fh;
    open $fh, '>', "$sub/data.txt" or die;
    print $fh "print qq{data.txt run as the program\\n};\n";
    close $fh;
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/dash.out", '--', '-i.bak', 'data.txt'],
        cwd => $sub, stdin => '');
    is $out, "the script -i.bak, args data.txt\n", 'nytp run -- -i.bak data.txt: runs the script -i.bak'
        or diag $err;
    is slurp_file("$sub/data.txt"), "print qq{data.txt run as the program\\n};\n", '... and data.txt is left alone';
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/dash.out", '--', '-l.pl'], cwd => $sub, stdin => '');
    is $out, "the script -l.pl\n", 'nytp run -- -l.pl: runs the script -l.pl' or diag $err;
    like $err, qr/^nytp run: profile written to \Q$dir\E\/dash\.out \(complete\)$/m, '... and names its profile';
}

# '--sample 100' (issue 35, item 19): --sample's rate is optional, so the
# next word is SCRIPT; a usage error that shows the way, nothing run.
{
    unlink "$dir/nytprof.out";
    ($st, $out, $err) = run_cmd([$nytp, 'run', '--sample', '100', "$progs/signals.pl"], cwd => $dir);
    is $st, 2, 'nytp run --sample 100 SCRIPT: a usage error (exit 2)';
    like $err, qr/^nytp run: --sample takes its rate in the same word: --sample=100\b/m,
        '... that suggests --sample=100';
    ok !-e "$dir/nytprof.out", '... and nothing was run';
    my $hundred = write_script('100', 'print "the script 100\n";' . "\n");
    ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/h.out", '--sample', '100'], cwd => $dir);
    is $out, "the script 100\n", 'a script that is called 100 and is there still runs';
}

# Each profile named says whether it is complete, and why not only when
# that is known (issue 35, item 17).  A worker killed by SIGKILL was named
# as a plain 'profile written' when its master exited 0, and with the
# master's reason when the master was killed ('cut where SIGTERM struck,
# though sigexit catches it': wrong advice); with --children a grandchild
# killed by SIGKILL was named as written.
{
    my $prog = write_script('killed-worker.pl', <<'PERL');
$| = 1;
sub work { my $s = 0; $s += $_ for 1 .. 1000; $s }
pipe my $r, my $w or die;
my $pid = fork // die;
if (!$pid) { close $r; work(); syswrite $w, "up\n"; work() while 1 }
close $w;
my $up = <$r>;   # running, its profile open
kill 'KILL', $pid;
waitpid $pid, 0;
print "$pid\n";
kill 'TERM', $$ if @ARGV;
exit 0;
PERL
    for my $master ('exits 0', 'is killed by TERM') {
        unlink glob("$dir/kw.out*");
        ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/kw.out", $prog,
            $master eq 'exits 0' ? () : 'term']);
        my ($child) = $out =~ /(\d+)/;
        like $err, qr/^nytp run: profile written to \S+kw\.out \(complete\)$/m,
            "master $master: its own profile is named complete";
        like $err, qr/^nytp run: profile written to \S+kw\.out\.$child is incomplete \(cut short; [^\n]*\)$/m,
            "master $master: the worker killed by SIGKILL: incomplete, no reason given" or diag $err;
        unlike $err, qr/kw\.out\.$child[^\n]*(?:sigexit|SIGTERM)/, '... and no advice about sigexit';
    }
    # the grandchild: sh runs perl, which is killed by SIGKILL
    my $w = "$dir/gk";
    mkdir $w;
    my $victim = write_script('victim.pl', 'sub work { my $s = 0; $s += $_ for 1 .. 1000; $s } work(); kill "KILL", $$;' . "\n");
    ($st, $out, $err) = run_cmd([$nytp, 'run', '--children', '-o', 'g.out', 'sh', '-c', "$^X $victim; true"],
        cwd => $w);
    like $err, qr/^nytp run: profile written to g\.out\.\d+ is incomplete/m,
        '--children, a grandchild killed by SIGKILL: its profile is named incomplete' or diag $err;
}

# Profiles the program opens under names of its own (DB::enable_profile
# (FILE), as Plack::Middleware::NYTP does, in the process and in a forked
# worker) are named (issue 35, item 18): nytp run said 'no profile was
# written (expected nytprof.out)'.
{
    my $w = "$dir/named";
    mkdir $w;
    unlink glob("$w/*");
    my $prog = write_script('named.pl', <<"PERL");
sub work { my \$s = 0; \$s += \$_ for 1 .. 1000; \$s }
sub one { my \$f = shift; DB::enable_profile(\$f); work(); DB::finish_profile() }
one('$w/req-1.out');
my \$pid = fork // die;
if (!\$pid) { one('$w/req-2.out'); one('$w/req-3.out'); exit 0 }
waitpid \$pid, 0;
one('$w/req-1.out');   # the same name again: named once
PERL
    ($st, $out, $err) = run_cmd([$nytp, 'run', '--nytprof=start=no', $prog], cwd => $w);
    is $st, 0, 'start=no, DB::enable_profile(FILE): exit 0' or diag $err;
    for my $n (1 .. 3) {
        my @lines = $err =~ /^(nytp run: profile written to \Q$w\E\/req-$n\.out \(complete\))$/mg;
        is scalar(@lines), 1, "the program's own profile req-$n.out is named once, complete" or diag $err;
    }
    unlike $err, qr/no profile was written/, '... and nytp run does not say that none was written';
    my @left = grep { -e } glob('/tmp/nytp-run-*');
    ok !grep({ (stat $_)[9] >= $^T && slurp_file($_) =~ /req-1\.out/ } @left), 'its list is removed';
}

# nytp-run(1) EXAMPLES, each block read from the page and run by bash as
# written (issue 35, item 15: every command of the pages run by a test;
# the "last hour" one is in 44-rotate.t, SERVERS in 48-doc-servers.t),
# on a small script, module and daemon of the names they use.
{
    my $man = slurp_file(repo() . '/man/nytp-run.1');
    my ($examples) = $man =~ /^\.SH EXAMPLES\n(.*?)^\.SH /ms;
    my @blocks = $examples =~ /^\.EX\n(.*?)^\.EE$/msg;
    for (@blocks) { s/\\\(aq/'/g; s/\\-/-/g; s/\\e/\\/g; }
    my $w = "$dir/examples";
    mkdir $w;
    mkdir "$w/lib";
    mkdir "$w/lib/My";
    open my $fh, '>', "$w/myscript.pl" or die;
    print $fh 'sub parse { my $n = 0; $n += length for @_; $n } sub report { print "chars: $_[0]\n" } '
        . 'my @l = map { "$_" } 1 .. 2000; report(parse(@l)) for 1 .. 3;' . "\n";
    close $fh;
    open $fh, '>', "$w/input.txt" or die;
    print $fh "one\ntwo\n";
    close $fh;
    open $fh, '>', "$w/lib/My/Module.pm" or die;
    print $fh "package My::Module;\nsub work { my \$s = 0; \$s += \$_ for 1 .. 5000; \$s }\n"
        . "sub main { my (\$class, \@args) = \@_; print \"args: \@args\\n\"; work() for 1 .. 3 }\n1;\n";
    close $fh;
    open $fh, '>', "$w/mydaemon.pl" or die;
    print $fh "\$| = 1;\nsub tick { my \$s = 0; \$s += \$_ for 1 .. 2000; \$s }\nprint \"up\\n\";\n"
        . "while (1) { tick(); select undef, undef, undef, 0.01 }\n";
    close $fh;
    local $ENV{PATH} = repo() . "/build:$ENV{PATH}";
    my ($top) = grep { /awk/ } @blocks;
    ($st, $out, $err) = run_cmd(['bash', '-c', "set -e -o pipefail\n$top"], cwd => $w);
    is $st, 0, 'EXAMPLES: profile, then the ten subs by exclusive time: every command succeeds' or diag $err;
    my @rows = grep { /^[-+.\de]+ \S+::/ } split /\n/, $out;   # after the script's own output
    ok @rows >= 2 && $out =~ /main::parse/ && $out =~ /main::report/, '... lists the script\'s subs' or diag $out;
    my @t = map { /^(\S+)/ ? $1 : 0 } @rows;
    is_deeply [@t], [sort { $b <=> $a } @t], '... most exclusive time first';
    my ($calls) = grep { /calls=2/ } @blocks;
    ($st, $out, $err) = run_cmd(['bash', '-c', $calls], cwd => $w);
    is $st, 0, 'EXAMPLES: calls=2:compress=0 into calls.out' or diag $err;
    my (undef, $d) = run_cmd([$nytp, 'dump', '--strict', "$w/calls.out"]);
    like $d, qr/SUB_ENTRY/, '... with call events' ;
    my ($one) = grep { /My::Module/ } @blocks;
    ($st, $out, $err) = run_cmd(['bash', '-c', $one], cwd => $w);
    is $st, 0, 'EXAMPLES: a one-liner with a module from lib' or diag $err;
    is $out, "args: input.txt\n", '... gets its arguments';
    my ($daemon) = grep { /mydaemon/ } @blocks;
    unlink "$w/nytprof.out";
    my $pid = fork // die;
    if (!$pid) {
        chdir $w or die;
        open STDOUT, '>', "$w/daemon.out" or die;
        open STDERR, '>', "$w/daemon.err" or die;
        exec 'bash', '-c', $daemon or die;
    }
    my $t0 = time;
    select undef, undef, undef, 0.05 until (slurp_file("$w/daemon.out") // '') =~ /up/ || time - $t0 > 20;
    kill 'TERM', $pid;    # bash ran nytp run in its place
    waitpid $pid, 0;
    is $? & 127 ? 128 + ($? & 127) : $? >> 8, 128 + 15, 'EXAMPLES: the daemon stopped with SIGTERM dies of it';
    my ($dst) = run_cmd([$nytp, 'dump', '--strict', "$w/nytprof.out"]);
    is $dst, 0, '... its profile complete (the default sigexit)' or diag slurp_file("$w/daemon.err");
}

done_testing;
