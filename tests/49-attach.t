#!/usr/bin/perl
# nytp stack and nytp attach: real perls read from outside.  The stacks
# printed are checked line by line against the targets' own source (the
# lines are known from the scripts written here); the profiles attach
# writes are read by Devel::NYTProf::Data (the oracle) and nytp top.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);

my $nytp = nytp();
my $dir = scratch_dir() . '/attach';
mkdir $dir or die "$dir: $!";

# (only in this process: a child of it that dies before its exec must not
# kill what this one started)
my @started;
my $test_pid = $$;
END { kill 'KILL', @started if @started && $$ == $test_pid }

sub script {
    my ($name, $text) = @_;
    my $path = "$dir/$name";
    open my $fh, '>', $path or die "$path: $!";
    print $fh $text;
    close $fh;
    return $path;
}

sub start {
    my @cmd = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', '/dev/null';
        exec @cmd or die "exec: $!";
    }
    push @started, $pid;
    return $pid;
}

# start(), with standard error into $err
sub start_logged {
    my ($err, @cmd) = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', '/dev/null';
        open STDERR, '>', $err;
        exec @cmd or die "exec: $!";
    }
    push @started, $pid;
    return $pid;
}

sub stop {
    my $pid = shift;
    kill 'KILL', $pid;
    waitpid $pid, 0;
    @started = grep { $_ != $pid } @started;
}

# nytp stack PID until its output matches $re (the target has got where
# it sleeps), for at most 10 seconds.
sub stack_when {
    my ($re, @args) = @_;
    my ($st, $out, $err);
    for (1 .. 200) {
        ($st, $out, $err) = run_cmd([$nytp, 'stack', @args]);
        return ($st, $out, $err) if $out =~ $re;
        sleep 0.05;
    }
    return ($st, $out, $err);
}

# ---- attach --children: each worker into FILE.PID, new ones too ---------------
# Started here, checked after the nytp stack checks (they take about as
# long as this attach, and they mostly wait): the workers spin meanwhile.
# (2.5 s: children are looked for every second, and at a load average of
# 15 the second worker was not found in 1.5 s)

my $workers = script('workers.pl', <<'PL');
sub work { my $x = 0; $x++ for 1 .. 1e9 }
sub master { select undef, undef, undef, 1000 }
if (!fork) { work(); exit }
select undef, undef, undef, 0.5;    # the second worker comes later
if (!fork) { work(); exit }
master();
PL
my $wmaster = start($^X, $workers);
stack_when(qr/^Process/, $wmaster);
my $wout = "$dir/workers.out";
my $wattach = start_logged("$dir/workers.err", $nytp, 'attach', '--children', '--duration=2.5', '-o', $wout, $wmaster);

# ---- nytp stack: a sub in a sub in an anonymous sub in a string eval -------

my $nest = script('nest.pl', <<'PL');
sub inner { sleep 1000 }
sub outer {
    inner();
}
my $anon = sub {
    outer();
};
eval "\n\$anon->();\n1;";
PL
{
    my $pid = start($^X, $nest);
    my ($st, $out, $err) = stack_when(qr/CORE:sleep/, $pid);
    is $st, 0, 'stack: exit 0' or diag $err;
    is $err, '', 'stack: nothing on stderr';
    is $out, <<"OUT", 'stack: innermost first, as caller() sees it; sleep as CORE:sleep, the anonymous sub and the string eval named';
Process $pid: $nest
    main::CORE:sleep at $nest line 1
    main::inner at $nest line 1
    main::outer at $nest line 3
    main::__ANON__[$nest:7] at $nest line 6
    (eval) at (eval 1)[$nest:8] line 2
    main::RUNTIME at $nest line 8
OUT

    ($st, $out, $err) = run_cmd([$nytp, 'stack', '--json', $pid]);
    is $st, 0, 'stack --json: exit 0';
    my $j = eval { decode_json($out) };
    ok $j, 'stack --json: one JSON object' or diag $out;
    is $j->{pid}, $pid, '--json: pid';
    is $j->{program}, $nest, '--json: program';
    is join(',', map { $_->{kind} } @{ $j->{frames} }), 'core,sub,sub,anon,string-eval,main',
        '--json: the kinds of the frames';
    is join(',', map { "$_->{sub}\@$_->{line}" } @{ $j->{frames} }),
        "main::CORE:sleep\@1,main::inner\@1,main::outer\@3,main::__ANON__[$nest:7]\@6,(eval)\@2,main::RUNTIME\@8",
        '--json: the same frames as the text';

    # two processes at once
    my $pid2 = start($^X, $nest);
    stack_when(qr/CORE:sleep/, $pid2);
    ($st, $out) = run_cmd([$nytp, 'stack', $pid, $pid2]);
    is $st, 0, 'stack PID PID: exit 0';
    my @heads = $out =~ /^Process (\d+):/mg;
    is "@heads", "$pid $pid2", 'stack PID PID: both, in the order given';
    stop($pid2);
    stop($pid);
}

# ---- an xsub running (Time::HiRes::sleep), named as Devel::NYTProf names it -

my $xs = script('xs.pl', <<'PL');
use Time::HiRes ();
sub nap {
    Time::HiRes::sleep(1000);
}
nap();
PL
{
    my $pid = start($^X, $xs);
    my ($st, $out, $err) = stack_when(qr/Time::HiRes::sleep/, $pid);
    is $st, 0, 'stack of a perl in an xsub: exit 0' or diag $err;
    is $out, <<"OUT", 'the xsub is the innermost frame, at its caller\'s line';
Process $pid: $xs
    Time::HiRes::sleep at $xs line 3
    main::nap at $xs line 3
    main::RUNTIME at $xs line 5
OUT
    ($st, $out) = run_cmd([$nytp, 'stack', '--json', $pid]);
    is decode_json($out)->{frames}[0]{kind}, 'xsub', '--json: kind xsub';
    stop($pid);
}

# ---- a threaded perl: the main interpreter, and how many threads there are --

SKIP: {
    require Config;
    skip 'perl without threads', 2 unless $Config::Config{usethreads};
    my $thr = script('threads.pl', <<'PL');
use threads;
sub worker { sleep 1000 }
sub boss { $_->join for @_ }
my @t = map { threads->create(\&worker) } 1 .. 2;
boss(@t);
PL
    my $pid = start($^X, $thr);
    my ($st, $out, $err) = stack_when(qr/threads::join/, $pid);
    is $st, 0, 'stack of a threaded perl: exit 0' or diag $err;
    is $out, <<"OUT", 'the main interpreter, joining, and the number of threads';
Process $pid: $thr
  (3 threads: the main interpreter's stack is shown)
    threads::join at $thr line 3
    main::boss at $thr line 3
    main::RUNTIME at $thr line 5
OUT
    stop($pid);
}

# ---- a BEGIN block that sleeps while its file is compiled ------------------

my $begin = script('begin.pl', <<'PL');
use strict;
sub slow { sleep 1000 }
BEGIN {
    slow();
}
print "never\n";
PL
{
    my $pid = start($^X, $begin);
    my ($st, $out, $err) = stack_when(qr/CORE:sleep/, $pid);
    is $st, 0, 'stack of a compiling perl: exit 0' or diag $err;
    is $out, <<"OUT", 'BEGIN as BEGIN@(its first line), called from the eval perl runs it in, while compiling';
Process $pid: $begin (compiling)
    main::CORE:sleep at $begin line 2
    main::slow at $begin line 2
    main::BEGIN\@4 at $begin line 4
    (eval) at $begin line 5
    main::RUNTIME at $begin line 5
OUT
    stop($pid);
}

# ---- --children: a master and its forked workers ---------------------------

my $fork = script('fork.pl', <<'PL');
sub work { sleep 1000 }
sub master { sleep 1000 }
for (1 .. 2) { if (!fork) { work(); exit } }
master();
PL
{
    my $pid = start($^X, $fork);
    my ($st, $out, $err) = stack_when(qr/(?s:main::work.*main::work)/, '--children', $pid);
    is $st, 0, 'stack --children: exit 0' or diag $err;
    my @procs = map { "$_\n" } split /\n\n/, $out;
    is scalar(@procs), 3, 'stack --children: the master and its two workers';
    like $procs[0], qr/\AProcess $pid: .*\n    main::CORE:sleep at \Q$fork\E line 2\n    main::master at \Q$fork\E line 2\n/,
        '... the master first';
    like $procs[$_], qr/\AProcess \d+: .*\n    main::CORE:sleep at \Q$fork\E line 1\n    main::work at \Q$fork\E line 1\n    main::RUNTIME at \Q$fork\E line 3\n/,
        "... worker $_" for 1, 2;
    system('pkill', '-KILL', '-P', $pid);
    stop($pid);
}

# ---- refusals: one line naming the pid ----------------------------------------

{
    my $pid = start('sleep', '1000');
    sleep 0.2;
    my ($st, $out, $err) = run_cmd([$nytp, 'stack', $pid]);
    is $st, 1, 'not a perl: exit 1';
    is $out, '', '... nothing on stdout';
    like $err, qr/\Anytp stack: $pid: not a perl [^\n]*\n\z/, '... one line saying so';
    ($st, undef, $err) = run_cmd([$nytp, 'attach', '-o', "$dir/no.out", $pid]);
    is $st, 1, 'attach to a non-perl: exit 1';
    like $err, qr/\Anytp attach: $pid: not a perl [^\n]*\n\z/, '... one line';
    ok !-e "$dir/no.out", '... and no profile';
    stop($pid);

    # a pid that has exited (and been reaped)
    my $dead = fork // die;
    POSIX::_exit(0) if !$dead;    # (not exit: no END block of this test)
    waitpid $dead, 0;
    ($st, undef, $err) = run_cmd([$nytp, 'stack', $dead]);
    is $st, 1, 'a dead pid: exit 1';
    is $err, "nytp stack: $dead: no such process\n", '... one line';

    ($st, undef, $err) = run_cmd([$nytp, 'stack', 'x12']);
    is $st, 2, 'not a pid: exit 2';
    ($st, undef, $err) = run_cmd([$nytp, 'stack']);
    is $st, 2, 'no pid: exit 2';
}

# Reading another user's perl needs ptrace's permission: as nobody,
# root's perl is refused (process_vm_readv needs PTRACE_MODE_ATTACH).
SKIP: {
    skip 'not root: cannot run nytp as nobody against a root perl', 3 if $> != 0;
    my $nobody = getpwnam('nobody');
    skip 'no user nobody', 3 unless defined $nobody;
    my $pid = start($^X, $nest);
    stack_when(qr/CORE:sleep/, $pid);
    my $child = fork // die;
    if (!$child) {
        open STDOUT, '>', "$dir/nobody.out";
        open STDERR, '>', "$dir/nobody.err";
        POSIX::setgid(65534);
        POSIX::setuid($nobody) or die "setuid: $!";
        exec $nytp, 'stack', $pid or die;
    }
    waitpid $child, 0;
    is $? >> 8, 1, 'as nobody, a root perl: exit 1';
    my $err = slurp_file("$dir/nobody.err");
    like $err, qr/\Anytp stack: $pid: [^\n]*permission denied[^\n]*\n\z/, '... one line: permission denied';
    is slurp_file("$dir/nobody.out"), '', '... and no stack';
    stop($pid);
}

# ---- attach --children (started above): its profiles --------------------------

{
    waitpid $wattach, 0;
    my $st = $?;
    @started = grep { $_ != $wattach } @started;
    is $st, 0, 'attach --children: exit 0' or diag slurp_file("$dir/workers.err");
    my @kids = grep { $_ != $wmaster } map { /\.(\d+)\z/ ? $1 : () } glob("$wout.*");
    is scalar(@kids), 2, 'attach --children: a profile for each worker, the later one too';
    ok -s "$wout.$wmaster", '... and the master\'s, in FILE.PID';
    ok !-e $wout, '... and no FILE';
    require Devel::NYTProf::Data;
    my $m = Devel::NYTProf::Data->new({filename => "$wout.$wmaster", quiet => 1});
    cmp_ok $m->subinfo_of('main::CORE:sselect')->excl_time, '>', 0.5, 'the master waits in select';
    # (the later worker is found at the scan a second in, or two, and
    # sampled for what is left: 0.25 s of half a second was seen at a load
    # average of 6)
    for my $k (@kids) {
        my $p = Devel::NYTProf::Data->new({filename => "$wout.$k", quiet => 1});
        cmp_ok $p->subinfo_of('main::work')->excl_time, '>', 0.1, "worker $k works in main::work";
    }
    my ($mst, undef, $merr) = run_cmd([$nytp, 'merge', '-o', "$dir/workers-all.out", glob("$wout.*")]);
    is $mst, 0, 'nytp merge joins the processes\' profiles' or diag $merr;
    system('pkill', '-KILL', '-P', $wmaster);
    stop($wmaster);
}

# ---- fake perls: another version, and an interpreter of garbage --------------
# A small C program named perl-* exporting the symbols nytp looks for
# (PL_curinterp, PL_revision, ...): one says it is perl 5.34.0, the other
# matches this build's perl exactly but its "interpreter" is a megabyte of
# random bytes full of pointers into itself.  nytp must refuse the first
# with one line and never crash on the second.

SKIP: {
    my $cc = (grep { -x } map { "$_/cc" } split /:/, $ENV{PATH})[0];
    skip 'no C compiler', 12 unless $cc;
    my ($isize) = slurp_file(repo() . '/build/gen/perl_layout.h') =~ /^#define PL_INTERP_SIZE (\d+)$/m;
    my $bincompat = (Internals::V())[0];
    my ($rev, $ver, $sub) = $] =~ /^(\d+)\.(\d{3})(\d{3})/;
    ($ver, $sub) = (0 + $ver, 0 + $sub);
    my $src = script('fake.c', <<'C');
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
const unsigned char PL_revision = REV, PL_version = VER, PL_subversion = SUB;
const unsigned short PL_interp_size = ISIZE;
const char PL_bincompat_options[] = BINCOMPAT;
void *PL_curinterp;
int main(void)
{
    size_t n = 1 << 20;
    unsigned char *junk = malloc(n);
    unsigned seed = 12345;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        junk[i] = (unsigned char)(seed >> 16);
    }
    for (size_t i = 0; i + 8 <= n; i += 8)
        if ((junk[i] & 3) == 0) {
            uintptr_t p = (uintptr_t)(junk + ((((size_t)junk[i + 1] << 12) | ((size_t)junk[i + 2] << 4)) % (n - 8192)));
            memcpy(junk + i, &p, sizeof p);
        }
    PL_curinterp = junk;
    if (write(1, "ready\n", 6) < 0)
        return 1;
    for (;;)
        pause();
}
C
    my %fake = (old => [$rev, 34, 0], junk => [$rev, $ver, $sub]);
    for my $k (sort keys %fake) {
        my ($r, $v, $s) = @{ $fake{$k} };
        my @d = ("-DREV=$r", "-DVER=$v", "-DSUB=$s", "-DISIZE=$isize", "-DBINCOMPAT=\"$bincompat\"");
        system($cc, '-O1', '-rdynamic', @d, '-o', "$dir/perl-$k", $src) == 0 or skip "cannot compile the fake perl", 12;
    }
    my $old = start("$dir/perl-old");
    my $junk = start("$dir/perl-junk");
    sleep 0.3;
    my ($st, $out, $err) = run_cmd([$nytp, 'stack', $old]);
    is $st, 1, 'a perl of another version: exit 1';
    like $err, qr/\Anytp stack: $old: is perl 5\.34\.0 \([^\n]*\); this nytp reads perl $rev\.$ver\.$sub [^\n]*\n\z/,
        '... one line naming both perls';
    ($st, undef, $err) = run_cmd([$nytp, 'attach', '-o', "$dir/old.out", $old]);
    is $st, 1, 'attach to it: exit 1';
    ok !-e "$dir/old.out", '... no profile';

    ($st, $out, $err) = run_cmd([$nytp, 'stack', $junk]);
    is $st, 1, 'an interpreter of garbage: exit 1, no crash';
    like $err, qr/\Anytp stack: $junk: [^\n]*not a stack this nytp can read\n\z/, '... one line';
    ($st, undef, $err) = run_cmd([$nytp, 'attach', '--hz=1000', '--duration=0.3', '-o', "$dir/junk.out", $junk]);
    is $st, 0, 'attach to it: exit 0, no crash' or diag $err;
    like $err, qr/: 0 samples in [\d.]+ s at 1000 Hz, [1-9]\d* dropped as torn \(100\.00%\)/, '... every sample dropped';
    require Devel::NYTProf::Data;
    my $p = Devel::NYTProf::Data->new({filename => "$dir/junk.out", quiet => 1});
    is $p->attributes->{sample_count}, 0, '... a profile of no samples';
    cmp_ok $p->attributes->{sample_invalid}, '>', 50, '... that counts the dropped ones';
    SKIP: {
        my $asan = repo() . '/build/asan/nytp';
        skip 'no ASan build of nytp (make asan-nytp)', 2 unless -x $asan;
        my ($ast, undef, $aerr) = run_cmd([$asan, 'attach', '--hz=2000', '--duration=1', '-o', "$dir/junk-asan.out", $junk]);
        is $ast, 0, 'ASan nytp attach to the garbage: exit 0';
        unlike $aerr, qr/AddressSanitizer|runtime error/, '... no error found' or diag $aerr;
    }
    stop($old);
    stop($junk);
}

# ---- nytp attach: a CPU-bound perl with a known split, and the in-process sampler --

# One CPU-bound perl, three subs doing 50/30/20 of its additions, run
# under Devel::NYTP's sampler (sample=1000:clock=2, as nytp run
# --sample=1000 --cpu) and attached by nytp attach at 1000 Hz until it
# exits: one run gives both profiles of the same work.  The perl also
# measures the wall time each call took (around the calls, not inside:
# the subs' own lines are all the samples see) and writes it at its end.
# Each sub's share of the three subs' time must be within 8 points of
# what the perl measured and of what the in-process sampler saw (bench/run
# attach measures the agreement closer; 8 points is what a load average
# of 11 on 2 cores needed).
# The loops are blocks, a statement each turn: the in-process sampler takes
# its sample at the next statement, call or return, so a loop of one
# statement ('$x++ for 1 .. N') has its samples taken as it returns and
# shares that differ from the time spent (a50 at 59 % of the three where
# attach saw 46 %).  The in-process side weighs its samples by CPU time:
# on the wall clock each of its samples, taken after a tick of the perl's
# CPU time (the kernel's tick, 250 Hz here), also weighs the time the perl
# waited for a CPU, so on a loaded machine a few samples weigh much (a50
# 36 % and b30 43 % with two copies of this test running at once, where
# attach saw 57 % and 29 %); for a perl that only computes, its CPU shares
# are its wall shares.  (Inclusive times of a sampled profile depend on
# which calls the samples told apart: the in-process sampler's do too.)
my $truth = "$dir/truth";
my $split_once = script('split-once.pl', <<"PL");
use Time::HiRes qw(time clock_gettime CLOCK_PROCESS_CPUTIME_ID);
my (%t, %c);
sub a50 { my \$x = 0; for (1 .. 250_000) { \$x++ } \$x }
sub b30 { my \$x = 0; for (1 .. 150_000) { \$x++ } \$x }
sub c20 { my \$x = 0; for (1 .. 100_000) { \$x++ } \$x }
sub cpu { clock_gettime(CLOCK_PROCESS_CPUTIME_ID) }
select undef, undef, undef, 0.3;
for (1 .. 150) {
    my \$c0 = cpu(); my \$t0 = time; a50(); my \$t1 = time; my \$c1 = cpu();
    b30(); my \$t2 = time; my \$c2 = cpu(); c20(); my \$c3 = cpu();
    \$t{a50} += \$t1 - \$t0; \$t{b30} += \$t2 - \$t1; \$t{c20} += time - \$t2;
    \$c{a50} += \$c1 - \$c0; \$c{b30} += \$c2 - \$c1; \$c{c20} += \$c3 - \$c2;
}
open my \$fh, '>', '$truth' or die;
print \$fh join(' ', map { "\$_=\$t{\$_}" } sort keys %t), "\\n", join(' ', map { "\$_=\$c{\$_}" } sort keys %c), "\\n";
PL
{
    my $in = "$dir/split-in.out";
    my $pid = do {
        local $ENV{NYTPROF} = "sample=1000:clock=2:file=$in";
        start($^X, '-I' . repo() . '/build/perl', '-d:NYTP', $split_once);
    };
    stack_when(qr/CORE:sselect/, $pid);  # perl is up, before its loop
    my $out = "$dir/split.out";
    my $t0 = time;
    my ($st, undef, $err) = run_cmd([$nytp, 'attach', '--hz=1000', '-o', $out, $pid]);
    if ($st == 1 && $err =~ /: permission denied/) {
        # (seen twice in 14 runs at a load average of 13-17, not explained
        # yet: /proc/PID/maps of this perl, ours and running, refused with
        # EACCES for a moment; said, and tried again once)
        diag "attach refused, tried again: $err";
        ($st, undef, $err) = run_cmd([$nytp, 'attach', '--hz=1000', '-o', $out, $pid]);
    }
    my $took = time - $t0;
    is $st, 0, 'attach until the perl exits: exit 0' or diag $err;
    like $err, qr/\Anytp attach: \Q$out\E: $pid \(\Q$split_once\E\): (\d+) samples in [\d.]+ s at 1000 Hz, (\d+) dropped as torn/,
        'attach: one line saying what was written';
    waitpid $pid, 0;
    is $?, 0, 'the perl under the in-process sampler: exit 0';
    @started = grep { $_ != $pid } @started;
    my ($wall_line, $cpu_line) = split /\n/, slurp_file($truth);
    my %real = $wall_line =~ /(\w+)=([\d.]+)/g;
    my $real_sum = $real{a50} + $real{b30} + $real{c20};
    my %cpu = $cpu_line =~ /(\w+)=([\d.]+)/g;
    my $cpu_sum = ($cpu{a50} + $cpu{b30} + $cpu{c20}) || 1;
    cmp_ok $took, '<', $real_sum + 2, 'attach ends with the perl';

    require Devel::NYTProf::Data;
    my $p = Devel::NYTProf::Data->new({filename => $out, quiet => 1});
    my $a = $p->attributes;
    is $a->{sample_hz}, 1000, 'profile: sample_hz';
    # (fewer when the machine is loaded: samples are never made up)
    cmp_ok $a->{sample_count}, '>', 100 * $real_sum, "profile: sample_count ($real_sum s at 1000 Hz)";
    cmp_ok $a->{sample_count}, '<=', 1000 * ($took + 0.1), '... not more than the time allows';
    ok defined $a->{sample_invalid}, 'profile: sample_invalid';
    my %excl = map { $_ => $p->subinfo_of("main::$_")->excl_time } qw(a50 b30 c20);
    my $sum = $excl{a50} + $excl{b30} + $excl{c20};
    # (a sample nytp takes late counts for two periods at most: on a
    # loaded machine much of the time may be no sample's; a run at load
    # average 10 on 2 cores kept 0.91 of 3.05 s)
    cmp_ok $sum, '>', 0.1 * $real_sum, "the three subs hold their time ($real_sum s)";
    cmp_ok $sum, '<', 1.05 * $real_sum, '... and no more';
    my $ip = Devel::NYTProf::Data->new({filename => $in, quiet => 1});
    my %iexcl = map { $_ => $ip->subinfo_of("main::$_")->excl_time } qw(a50 b30 c20);
    my $isum = $iexcl{a50} + $iexcl{b30} + $iexcl{c20};
    for my $sub (qw(a50 b30 c20)) {
        my $want = 100 * $real{$sub} / $real_sum;
        my $got = 100 * $excl{$sub} / $sum;
        # (attach samples the wall clock, but on a machine loaded past its
        # cores nytp itself runs late, in step with the perl's turns on a
        # CPU: c20 at 11.5 % for a measured 20.1 % of the wall time once at
        # a load average of 14; within 8 points of the perl's wall or CPU
        # share, then)
        my $cpu_share = 100 * $cpu{$sub} / $cpu_sum;
        my $off = abs($got - $want) < abs($got - $cpu_share) ? abs($got - $want) : abs($got - $cpu_share);
        cmp_ok $off, '<', 8,
            sprintf('main::%s: %.1f%% of the time, as measured (%.1f%% of the CPU time; got %.1f%%)',
                    $sub, $want, $cpu_share, $got);
        # attach samples the wall clock, the in-process sampler the CPU
        # clock: what the load did to the perl (its wall and CPU shares
        # apart, 8 points for b30 in one run here) is allowed on top
        my $ins = 100 * $iexcl{$sub} / ($isum || 1);
        my $skew = abs($want - $cpu_share);
        cmp_ok abs($got - $ins), '<', 8 + $skew,
            sprintf('main::%s: attach %.1f%%, in process %.1f%% (wall and CPU shares %.1f points apart)',
                    $sub, $got, $ins, $skew);
    }
    is $p->subinfo_of('main::a50')->first_line, 3, 'main::a50 defined at line 3';
    is $p->subinfo_of('main::c20')->first_line, 5, 'main::c20 defined at line 5';
    cmp_ok $p->subinfo_of('main::CORE:sselect')->excl_time, '>', 0.1, 'the wait before: main::CORE:sselect';

    my ($tst, $top, $terr) = run_cmd([$nytp, 'top', $out]);
    is $tst, 0, 'nytp top reads it' or diag $terr;
    like $top, qr/sampled at 1000 Hz/, 'nytp top: a sampled profile';
    like $top, qr/^\s*\S+\s+\S+%.*main::a50\s+split-once\.pl:3$/m, 'nytp top: main::a50 at its line';
    my ($fst, $flame, $ferr) = run_cmd([$nytp, 'flame', $out]);
    is $fst, 0, 'nytp flame reads it' or diag $ferr;
    like $flame, qr/^main::a50 \d+$/m, 'nytp flame: main::a50 as a stack of its own';
    my ($hst, undef, $herr) = run_cmd([$nytp, 'html', '-o', "$dir/split-html", $out]);
    is $hst, 0, 'nytp html reads it' or diag $herr;
    like slurp_file("$dir/split-html/index.html"), qr/main::a50/, 'nytp html: main::a50 in the report';
}

# ---- attach --duration, ^C, --stop, and kill -9 of the attacher -----------------
# One busy perl serves these checks, one after the other; it allocates and
# frees memory as it goes, so its virtual memory size keeps changing (nytp
# once took that size, the field after the start time in /proc/PID/stat,
# for the start time that tells a reused pid, and ended its attach at the
# perl's first allocation, a few samples in).

my $split = script('split.pl', <<'PL');
sub spin { my $n = shift; my $x = 0; $x += $_ for 1 .. $n; $x }
my @keep;
while (1) { spin(10000); push @keep, 'x' x 4000; @keep = () if @keep > 5000 }
PL
my $busy = start($^X, $split);
stack_when(qr/ line 3$/m, $busy);  # in its loop
{
    my $out = "$dir/dur.out";
    my $t0 = time;
    my ($st, undef, $err) = run_cmd([$nytp, 'attach', '--duration=0.4', '-o', $out, $busy]);
    is $st, 0, 'attach --duration: exit 0' or diag $err;
    cmp_ok time - $t0, '<', 1.4, '... ends in time';
    my ($secs) = $err =~ / samples in ([\d.]+) s /;
    cmp_ok $secs // 0, '>=', 0.35, "... and not before, though the perl's memory grows and shrinks ($secs s)"
        or diag $err;
    ok kill(0, $busy), 'the target runs on';
    require Devel::NYTProf::Data;
    my $p = Devel::NYTProf::Data->new({filename => $out, quiet => 1});
    cmp_ok $p->subinfo_of('main::spin')->excl_time, '>', 0.2, 'the time is in main::spin';
}
{
    my $out = "$dir/int.out";
    # (attach keeps an ignored SIGINT ignored, as nohup wants; a shell
    # without job control starts a background job, this test's perl too,
    # with SIGINT ignored, and attach would then never end)
    local $SIG{INT} = 'DEFAULT';
    my $att = start($nytp, 'attach', '-o', $out, $busy);
    sleep 0.3;
    kill 'INT', $att;
    waitpid $att, 0;
    @started = grep { $_ != $att } @started;
    is $?, 0, 'attach ended by SIGINT: exit 0';
    ok -s $out, '... the profile is written';
    ok !glob("$dir/.int.out*"), '... and no temporary left';
    ok kill(0, $busy), 'the target runs on';
}

# ---- --stop: each sample with the perl stopped; it goes on as before ------------

{
    my $out = "$dir/stop.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'attach', '--stop', '--duration=0.3', '-o', $out, $busy]);
    is $st, 0, 'attach --stop: exit 0' or diag $err;
    like $err, qr/stopped \d+ us a sample/, '--stop: the summary says how long the perl was stopped';
    sleep 0.1;
    open my $fh, '<', "/proc/$busy/stat" or die;
    my ($state) = <$fh> =~ /\) (\S)/;
    like $state, qr/^[RS]$/, 'the target runs on, not stopped or traced';
    my $p = Devel::NYTProf::Data->new({filename => $out, quiet => 1});
    # (how soon a stop is seen depends on when the target runs: on a
    # loaded machine, up to a scheduler tick, so no rate is expected)
    cmp_ok $p->attributes->{sample_count}, '>=', 3, '--stop: samples taken';
}

# ---- the attacher killed mid-run (kill -9) leaves the perl running -------------
# (with --stop the perl is a tracee, stopped at each sample: the kernel
# detaches it when its tracer dies, and it must go on as it was)

{
    my $att = start($nytp, 'attach', '--stop', '--hz=1000', '--duration=30', '-o', "$dir/killed.out", $busy);
    sleep 0.3;
    kill 'KILL', $att;
    waitpid $att, 0;
    @started = grep { $_ != $att } @started;
    my ($state, $tracer, $t0, $t1);
    for (1 .. 20) {   # until the kernel has detached it
        sleep 0.05;
        my $status = slurp_file("/proc/$busy/status");
        ($state) = $status =~ /^State:\s+(\S)/m;
        ($tracer) = $status =~ /^TracerPid:\s+(\d+)/m;
        last if $tracer == 0 && $state =~ /^[RS]$/;
    }
    is $tracer, 0, 'attach --stop killed with SIGKILL: the perl has no tracer left';
    like $state, qr/^[RS]$/, '... and is not left stopped';
    ($t0) = (split ' ', (slurp_file("/proc/$busy/stat") =~ /\) (.*)/)[0])[11];
    sleep 0.2;
    ($t1) = (split ' ', (slurp_file("/proc/$busy/stat") =~ /\) (.*)/)[0])[11];
    cmp_ok $t1, '>', $t0, '... and goes on running (its CPU time grows)';
    opendir my $dh, $dir or die "$dir: $!";
    my @left = grep { /killed/ } readdir $dh;
    is "@left", '', '... and no profile (nor half of one, nor a temporary) is left by the killed attacher';
}
stop($busy);

# ---- --stop: signals sent to the perl while it is traced reach it -----------
# (A real-time signal, which the kernel queues.  Still, signals that come
# while the perl waits in a stop for nytp to hand them on, which on a
# loaded machine may take longer than the gap between two, run perl's
# deferred handler once for several: 6 of 10 were counted once at load
# average 9.  Not handed on, none would be.)

my $sigt = script('signals.pl', <<"PL");
my \$n = 0;
\$SIG{RTMIN} = sub { \$n++ };
\$SIG{TERM} = sub { open my \$f, '>', '$dir/sigcount' or die; print \$f "\$n\\n"; exit 0 };
my \$x = 0; while (1) { \$x++ }
PL
{
    my $pid = start($^X, $sigt);
    stack_when(qr/RUNTIME at \S+ line 4$/m, $pid);   # its handlers are set
    my $att = start($nytp, 'attach', '--stop', '--duration=1.2', '-o', "$dir/sig.out", $pid);
    sleep 0.1;
    for (1 .. 10) {
        kill 'RTMIN', $pid;
        sleep 0.1;
    }
    waitpid $att, 0;
    @started = grep { $_ != $att } @started;
    is $?, 0, 'attach --stop while the perl gets signals: exit 0';
    kill 'TERM', $pid;
    waitpid $pid, 0;
    @started = grep { $_ != $pid } @started;
    is $? >> 8, 0, 'the perl ends by its own TERM handler after nytp detached';
    my ($count) = slurp_file("$dir/sigcount") =~ /(\d+)/;
    cmp_ok $count, '>=', 4, "RTMIN sent while traced reached its handler ($count of 10 counted)";
    cmp_ok $count, '<=', 10, '... never more often than sent';
}

# ---- a perl that makes and frees subs and evals all the time, sampled fast --------

my $churn = script('churn.pl', <<'PL');
my $i = 0;
while (1) {
    my $f = eval "sub { my \$x = $i; \$x * 2 }";
    $f->() for 1 .. 10;
    my @s = sort { $a <=> $b } map { $_ * 3 % 7 } 1 .. 50;
    $i++;
}
PL
{
    my $pid = start($^X, $churn);
    stack_when(qr/^Process/, $pid);
    my $out = "$dir/churn.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'attach', '--hz=1000', '--duration=0.5', '-o', $out, $pid]);
    is $st, 0, 'attach at 1000 Hz to a perl freeing what it made: exit 0' or diag $err;
    my ($samples, $torn) = $err =~ /(\d+) samples .* (\d+) dropped/;
    diag "churn: $samples samples, $torn torn";
    my $p = eval { Devel::NYTProf::Data->new({filename => $out, quiet => 1}) };
    ok $p, 'Devel::NYTProf::Data reads it' or diag $@;
    my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', $out]);
    is $dst, 0, 'nytp dump --strict reads it whole' or diag $derr;
    # Stopped, the perl's stack is consistent: no sample is dropped (a
    # sub's context caught between entersub's pushing the block and
    # setting its CV is the caller still calling, not a torn sample)
    ($st, undef, $err) = run_cmd([$nytp, 'attach', '--stop', '--hz=1000', '--duration=0.6', '-o', "$dir/churn-stop.out", $pid]);
    is $st, 0, 'attach --stop at 1000 Hz to it: exit 0' or diag $err;
    like $err, qr/ 0 dropped as torn/, '... and no sample dropped' or diag $err;
    # The ASan+UBSan build of nytp (make asan-nytp), when there, reads the
    # same perl: a name kept across a table's growth was read after it
    # moved (an eval named while interning its full name).
    SKIP: {
        my $asan = repo() . '/build/asan/nytp';
        skip 'no ASan build of nytp (make asan-nytp)', 2 unless -x $asan;
        my ($ast, undef, $aerr) = run_cmd([$asan, 'attach', '--hz=2000', '--duration=1.5', '-o', "$dir/churn-asan.out", $pid]);
        is $ast, 0, 'ASan nytp attach at 2000 Hz to the same perl: exit 0';
        unlike $aerr, qr/AddressSanitizer|runtime error/, '... no error found' or diag $aerr;
    }
    stop($pid);
}

# ---- anonymous subs named as the in-process profiler names them -----------
# Devel::NYTP (and Devel::NYTProf) run perl with the debugger flag that
# names an anonymous sub __ANON__[file:line] by the line of its closing
# brace; a perl run plainly keeps that line nowhere, and nytp named the
# sub by its first statement's line instead, so that its profiles and the
# in-process ones (nytp diff, the agreement) did not pair the same subs:
# a sub over several lines with a blank line and a comment before its
# first statement, one on one line, closures made in a loop, a block
# passed to a sub of prototype & (an anonymous sub with no 'sub' written,
# as Try::Tiny's try), a sub whose first statement perl numbers by its
# second line ('f()\n or die').  The names
# nytp attach writes must be the names in the in-process profile.

my $anons = script('anons.pl', <<'PL');
sub spin { my $x = 0; for (1 .. 2000) { $x++ } $x }
sub run_block(&) { $_[0]->() }
sub blocky {
    run_block {
        spin();
        1;
    };
}
my $quirk = sub {
    spin()
        or die "never";
};
my $multi = sub {

    # a comment, then the first statement
    spin();
    return 1;
};
my $one = sub { spin() };
my @closures;
for my $i (1 .. 2) {
    push @closures, sub {
        my $z = $i;
        spin();
    }
}
my $n = shift // -1;
while ($n--) { $multi->(); $one->(); $_->() for @closures; blocky(); $quirk->() }
PL
{
    # both perls run the script by its name relative to its directory, as
    # 'perl anons.pl' does: perl names the subs by that name, and a profile
    # names the file by its absolute path
    my $in = "$dir/anons-in.out";
    my ($ist, undef, $ierr) = do {
        local $ENV{NYTPROF} = "file=$in";
        run_cmd([$^X, '-I' . repo() . '/build/perl', '-d:NYTP', 'anons.pl', 2], cwd => $dir);
    };
    is $ist, 0, 'the anonymous subs under Devel::NYTP: exit 0' or diag $ierr;
    require Devel::NYTProf::Data;
    my $ip = Devel::NYTProf::Data->new({filename => $in, quiet => 1});
    my @want = sort grep { /__ANON__/ } keys %{ $ip->subname_subinfo_map };
    is scalar(@want), 5, 'in process: five anonymous subs (the closures are one)' or diag "@want";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', '/dev/null';
        chdir $dir or die;
        exec $^X, 'anons.pl' or die;
    }
    push @started, $pid;
    stack_when(qr/main::spin/, $pid);
    my $out = "$dir/anons.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'attach', '--hz=1000', '--duration=0.3', '-o', $out, $pid]);
    stop($pid);
    is $st, 0, 'attach to the perl of anonymous subs: exit 0' or diag $err;
    my $p = Devel::NYTProf::Data->new({filename => $out, quiet => 1});
    my @got = sort grep { /__ANON__/ } keys %{ $p->subname_subinfo_map };
    is "@got", "@want", 'attach names the anonymous subs as the in-process profiler does';
    # (the profile names the file by the perl's directory, as Devel::NYTP
    # does: with 'anons.pl' against its absolute name, nytp diff matched
    # the files by their common suffix and no longer paired the subs)
    my ($dst, $diff, $derr) = run_cmd([$nytp, 'diff', $in, $out]);
    is $dst, 0, 'nytp diff of the two profiles: exit 0' or diag $derr;
    unlike $diff, qr/(?:new|gone)\s+main::__ANON__/, '... pairs every anonymous sub' or diag $diff;
}

# ---- a string eval's source: not available, and the reports say so -----------
# nytp attach reads no source from the perl, and a string eval has no file:
# nytp top and nytp html say that the source is not available (top left
# the column blank, as for an empty line), while a real file's lines are
# read from disk.

my $evals = script('evals.pl', <<'PL');
eval "sub spin { my \$x = 0; \$x++ for 1 .. 1e5; \$x }\n1;" or die;
while (1) { my $y = 0; $y++ for 1 .. 1e5; eval "spin();\n1;" }
PL
{
    my $pid = start($^X, $evals);
    # A string eval that has ended is gone from the perl: where it was
    # called is nowhere in its memory (nytp-stack(1)), so the sub defined
    # by the first eval runs in "(eval 1)" alone, while the eval running
    # now, on the stack, is named where it was called from.
    my (undef, $sout) = stack_when(qr/main::spin/, $pid);
    like $sout, qr/^    main::spin at \(eval 1\) line 1\n    \(eval\) at \(eval \d+\)\[\Q$evals\E:2\] line 1\n/m,
        'stack: the sub of an eval that has ended in (eval 1) alone; the running eval with [file:line]'
        or diag $sout;
    my $out = "$dir/evals.out";
    my ($st, undef, $err) = run_cmd([$nytp, 'attach', '--duration=0.3', '-o', $out, $pid]);
    stop($pid);
    is $st, 0, 'attach to a perl in string evals: exit 0' or diag $err;
    my ($tst, $top, $terr) = run_cmd([$nytp, 'top', '--lines', $out]);
    is $tst, 0, 'nytp top --lines reads it' or diag $terr;
    like $top, qr/^.*\(eval \d+\)(?:\[[^\]]*\])?:1 +\(source not available\)$/m,
        "nytp top: the string eval's line says its source is not available" or diag $top;
    like $top, qr/^.*\Q$evals\E:2 +while \(1\)/m, '... the file\'s line has its source, from disk' or diag $top;
    my ($hst, undef, $herr) = run_cmd([$nytp, 'html', '-o', "$dir/evals-html", $out]);
    is $hst, 0, 'nytp html reads it' or diag $herr;
    my @pages = grep { /\/f\d+-eval-/ } glob("$dir/evals-html/f*.html");
    ok @pages, 'nytp html: a page for a string eval';
    like slurp_file($_), qr/The source of this string eval is not available: nytp attach reads no source/,
        "nytp html: $_ says the eval's source is not available and why" for @pages;
    my ($file) = grep { !/\/f\d+-eval-/ } glob("$dir/evals-html/f*.html");
    like slurp_file($file // ''), qr/while \(1\)/, "nytp html: the script's page has its source";
}

# ---- a signal handler and a sort block: the frames caller() sees ----------
# Each perl writes its own stack, as caller() inside it reports it, to a
# file just before it sleeps; nytp stack must print the same frames: the
# sub caller() names at each level, at the line that level is at (the
# line the level inside it was called from), innermost first, below
# CORE:sleep, above main::RUNTIME.  (Perl runs a %SIG handler under a
# frame that caller() calls "(eval)"; a sort block is no frame of its own.)

my $caller_sub = <<'PL';
sub stack_to {
    my ($file, $line) = @_;
    open my $fh, '>', "$file.tmp" or die;
    for (my $i = 1; my @c = caller($i); $i++) { print $fh join('|', $c[3], $c[1], $c[2]), "\n" }
    print $fh "line|$line\n";
    close $fh;
    rename "$file.tmp", $file or die;
}
PL

# What nytp stack should print, from what the perl wrote.
sub stack_from_caller {
    my ($pid, $prog, $file) = @_;
    my @c = map { [split /\|/] } split /\n/, slurp_file($file);
    my (undef, $line) = @{ pop @c };
    my $want = "Process $pid: $prog\n    main::CORE:sleep at $prog line $line\n";
    for my $i (0 .. $#c) {
        my ($sub, $f, $l) = $i ? @{ $c[$i - 1] } : (undef, $prog, $line);
        $want .= "    $c[$i][0] at $f line $l\n";
    }
    return $want . "    main::RUNTIME at $c[-1][1] line $c[-1][2]\n";
}

my $sigh = script('sighandler.pl', $caller_sub . <<"PL");
sub nap { stack_to('$dir/sighandler.caller', __LINE__); sleep 1000 }
sub on_usr1 {
    nap();
}
sub wait_here { select undef, undef, undef, 1000 while 1 }
\$SIG{USR1} = \\&on_usr1;
wait_here();
PL
{
    my $pid = start($^X, $sigh);
    stack_when(qr/main::wait_here/, $pid);
    kill 'USR1', $pid;
    my ($st, $out, $err) = stack_when(qr/CORE:sleep/, $pid);
    is $st, 0, 'stack of a perl in a %SIG handler: exit 0' or diag $err;
    for (1 .. 100) { last if -e "$dir/sighandler.caller"; sleep 0.05 }
    is $out, stack_from_caller($pid, $sigh, "$dir/sighandler.caller"),
        'in a %SIG handler: the frames caller() reports there';
    like $out, qr/main::on_usr1 at \S+ line 11\n    \(eval\) at \S+ line 13\n    main::wait_here at \S+ line 13\n/,
        '... the handler, called from the statement the signal came in';
    stop($pid);
}

my $sortb = script('sortblock.pl', $caller_sub . <<"PL");
sub nap { stack_to(\$_[0], __LINE__); sleep 1000 }
sub by_num { nap(\$main::file) if \$a == 2 || \$b == 2; \$a <=> \$b }
sub sorter {
    return sort by_num 3, 1, 2 if \$main::file =~ /named/;
    return sort { by_num() } 3, 1, 2;
}
\$main::file = shift;
my \@sorted = sorter();    # (in void context perl would not sort)
PL
for my $how ('block', 'named') {
    my $file = "$dir/sort-$how.caller";
    my $pid = start($^X, $sortb, $file);
    my ($st, $out, $err) = stack_when(qr/CORE:sleep/, $pid);
    is $st, 0, "stack of a perl in a sort $how: exit 0" or diag $err;
    for (1 .. 100) { last if -e $file; sleep 0.05 }
    is $out, stack_from_caller($pid, $sortb, $file), "in a sort $how: the frames caller() reports there";
    like $out, qr/main::by_num at \S+ line 10\n    main::sorter at \S+ line @{[ $how eq 'named' ? 12 : 13 ]}\n/,
        "... the comparator, called from the sort's line";
    stop($pid);
}

done_testing;
