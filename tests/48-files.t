#!/usr/bin/perl
# The profiler's own files: the names it makes (segments, children) never
# collide, never lead through a planted link, FIFO or device, never block,
# fit in NAME_MAX; a child whose profile cannot be made runs on; a failed
# exec is said; stale temporaries of dead processes are removed.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use POSIX ();
use Time::HiRes qw(time sleep);

my $nytp = nytp();
my $dir = scratch_dir();
delete $ENV{NYTPROF};
my @perl = ($^X, '-I' . repo() . '/build/perl', '-d:NYTP');

# Each profile FILE* in the directory: its writer's pid and its segment.
sub writers {
    my ($file) = @_;
    my %w;
    for my $f (glob "$file*") {
        my ($st, $d, $err) = run_cmd([$nytp, 'dump', '--strict', $f]);
        my ($pid) = $d =~ /^PID_START\t(\d+)\t/m;
        my ($seg) = $d =~ /^ATTRIBUTE\tsegment\t(\d+)$/m;
        $w{$f} = { ok => !$st, pid => $pid // 0, seg => $seg // 0, err => $err };
    }
    return \%w;
}

# 7. Segment and child names collide: in a pid namespace the pids are
# small, as in every container: the parent (pid 1) writes its segments
# FILE, FILE.1, ... while its children (a few pids on: the profiler's own
# threads take some) write FILE.PID.  The first child starts before the
# parent's segment of its number, the second after the parent's segment
# of its number has closed.
SKIP: {
    my $ok = system('unshare --pid --fork true 2>/dev/null') == 0;
    skip 'no pid namespace here (unshare --pid needs root or user namespaces)', 1 unless $ok;
    my $ns = scratch_script('ns.pl', <<'PERL');
use Time::HiRes qw(time sleep);
sub busy {
    my $end = time + $_[0];
    my $n = 0;
    while (time < $end) { # two lines: rotating at a line's change
        $n++;
        $n += 0;
    }
    $n;
}
busy(0.05);
my @kids;
for my $at (0.4, 0) {
    my $pid = fork // die;
    if (!$pid) { busy(0.5); exit 0 }
    push @kids, $pid;
    busy($at);
}
busy(0.6);
waitpid $_, 0 for @kids;
print "@kids\n";
PERL
    for my $mode (['traced', ''], ['sampled', 'sample=1000:']) {
        my ($what, $opt) = @$mode;
        my $file = "$dir/ns-$what.out";
        unlink glob "$file*";
        local $ENV{NYTPROF} = "${opt}rotate=0.1:file=$file";
        my ($st, $out, $err) = run_cmd(['unshare', '--pid', '--fork', @perl, $ns]);
        is $st, 0, "pid namespace, $what: ran" or diag $err;
        my @kids = split ' ', $out;
        is scalar(@kids), 2, "pid namespace, $what: two children (@kids)";
        delete local $ENV{NYTPROF};
        my $w = writers($file);
        my %segs;
        for my $f (sort keys %$w) {
            ok $w->{$f}{ok}, "pid namespace, $what: $f is complete" or diag $w->{$f}{err};
            push @{$segs{$w->{$f}{pid}}}, $w->{$f}{seg};
        }
        my $nparent = @{$segs{1} // []};
        ok grep({ $_ < $nparent } @kids),
            "pid namespace, $what: a child's pid (@kids) is among the parent's $nparent segment numbers";
        for my $pid (1, @kids) {
            my @s = sort { $a <=> $b } @{$segs{$pid} // []};
            ok @s >= ($pid == 1 ? 6 : 2) && "@s" eq join(' ', 0 .. $#s),
                "pid namespace, $what: process $pid has all its segments (@s)";
        }
    }
}

# A script that runs SECONDS (its first argument), in a loop of two lines
# (rotation happens as the line changes), then forks a child that prints
# "child PID" if asked (second argument), and says it ended.
my $busy = scratch_script('busy.pl', <<'PERL');
use Time::HiRes qw(time);
sub busy {
    my $end = time + $_[0];
    my $n = 0;
    while (time < $end) {
        $n++;
        $n += 0;
    }
    $n;
}
busy($ARGV[0]);
if ($ARGV[1]) {
    my $pid = fork // die "fork: $!";
    if (!$pid) { busy(0.05); print "child $$\n"; exit 0 }
    waitpid $pid, 0;
    print "child status $?\n";
}
print "end\n";
PERL

# run_to(SECONDS, \@argv) -> (status, stdout, stderr): never longer
sub run_to {
    my ($limit, $argv) = @_;
    return run_cmd(['timeout', '-s', 'KILL', $limit, @$argv]);
}

sub slurp_link { my ($f) = @_; return -l $f ? 'link' : -p $f ? 'fifo' : -f $f ? 'file' : 'none' }

# 8. Planted links: a symlink or a FIFO at a name the profiler makes (a
# future segment, a child's FILE.PID) is never opened, nothing blocks,
# the link's target is untouched; the run goes on.
{
    my $victim = "$dir/victim";
    for my $kind ('symlink', 'fifo') {
        for my $mode (['traced', ''], ['sampled', 'sample=1000:']) {
            my ($what, $opt) = @$mode;
            my $file = "$dir/plant-$kind-$what.out";
            unlink glob("$file*"), $victim;
            open my $fh, '>', $victim or die;
            print $fh "precious\n";
            close $fh;
            if ($kind eq 'symlink') { symlink $victim, "$file.s1" or die }
            else { POSIX::mkfifo("$file.s1", 0666) or die }
            local $ENV{NYTPROF} = "${opt}rotate=0.1:file=$file";
            my $t0 = time;
            my ($st, $out, $err) = run_to(8, [@perl, $busy, 0.35]);
            delete local $ENV{NYTPROF};
            is $st, 0, "$kind at FILE.s1, $what: the program ran" or diag $err;
            ok time - $t0 < 6, "$kind at FILE.s1, $what: nothing blocked";
            is $out, "end\n", "$kind at FILE.s1, $what: to its end";
            is slurp_file($victim), "precious\n", "$kind at FILE.s1, $what: the link's target untouched";
            is slurp_link("$file.s1"), $kind eq 'symlink' ? 'link' : 'fifo',
                "$kind at FILE.s1, $what: the $kind is left as it was";
            like $err, qr/\Q$file.s1\E.*(symbolic link|FIFO)/, "$kind at FILE.s1, $what: and it is said";
            my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', $file]);
            is $dst, 0, "$kind at FILE.s1, $what: the first segment is complete" or diag $derr;
        }
    }
    # at a child's FILE.PID: in a pid namespace, where the pids to come are
    # few, a link or FIFO at every one of them
    SKIP: {
        skip 'no pid namespace here (unshare --pid needs root or user namespaces)', 1
            unless system('unshare --pid --fork true 2>/dev/null') == 0;
        for my $kind ('symlink', 'fifo') {
            for my $mode (['traced', ''], ['sampled', 'sample=1000:']) {
                my ($what, $opt) = @$mode;
                my $file = "$dir/plantc-$kind-$what.out";
                unlink glob("$file*"), $victim;
                open my $fh, '>', $victim or die;
                print $fh "precious\n";
                close $fh;
                for my $pid (2 .. 60) {
                    if ($kind eq 'symlink') { symlink $victim, "$file.$pid" or die }
                    else { POSIX::mkfifo("$file.$pid", 0666) or die }
                }
                local $ENV{NYTPROF} = "${opt}file=$file";
                my $t0 = time;
                my ($st, $out, $err) = run_to(8, ['unshare', '--pid', '--fork', @perl, $busy, 0.05, 1]);
                delete local $ENV{NYTPROF};
                is $st, 0, "$kind at a child's FILE.PID, $what: the program ran" or diag $err;
                ok time - $t0 < 6, "$kind at a child's FILE.PID, $what: nothing blocked";
                my ($child) = $out =~ /^child (\d+)$/m;
                like $out, qr/^child \d+\nchild status 0\nend\n\z/,
                    "$kind at a child's FILE.PID, $what: the child ran to its end";
                is slurp_file($victim), "precious\n", "$kind at a child's FILE.PID, $what: the link's target untouched";
                is slurp_link("$file." . ($child // 0)), $kind eq 'symlink' ? 'link' : 'fifo',
                    "$kind at a child's FILE.PID, $what: the $kind is left as it was";
                my @said = $err =~ /^Devel::NYTP: .*\Q$file\E\.\d+.*(?:symbolic link|FIFO).*$/mg;
                is scalar(@said), 1, "$kind at a child's FILE.PID, $what: said once" or diag $err;
                my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', $file]);
                is $dst, 0, "$kind at a child's FILE.PID, $what: the parent's profile is complete" or diag $derr;
            }
        }
    }
}

# 4. A child whose FILE.PID cannot be made runs on, unprofiled, with one
# warning: its fork returns 0 in it, in an eval too.  The directory
# made unwritable by a drop of privileges (as root), or removed.
{
    my $kid = scratch_script('kid.pl', <<'PERL');
use POSIX ();
my ($how, $file) = @ARGV;
if ($how eq 'setuid') {
    POSIX::setgid(65534) or die "setgid: $!";
    POSIX::setuid(65534) or die "setuid: $!";
} else {
    unlink $file or die "unlink: $!";
    (my $d = $file) =~ s{/[^/]*$}{};
    rmdir $d or die "rmdir $d: $!";
}
sub work { my $n = 0; $n += $_ for 1 .. 100; $n }
for my $style ('plain', 'eval') {
    my $pid = $style eq 'eval' ? eval { fork } : fork;
    if (!defined $pid) { print "$style: fork undef in $$: $@\n"; exit 3 }
    if (!$pid) { work(); print "$style: child ran\n"; exit 7 }
    waitpid $pid, 0;
    print "$style: child exit ", $? >> 8, "\n";
}
PERL
    for my $how ('setuid', 'rmdir') {
        SKIP: {
            skip 'setuid needs root', 1 if $how eq 'setuid' && $> != 0;
            for my $mode (['traced', ''], ['sampled', 'sample=1000:']) {
                my ($what, $opt) = @$mode;
                my $d = "$dir/kid-$how-$what";
                mkdir $d or die "$d: $!";
                chmod 0755, $d;
                my $file = "$d/kid.out";
                local $ENV{NYTPROF} = "${opt}file=$file";
                my ($st, $out, $err) = run_to(20, [@perl, $kid, $how, $file]);
                delete local $ENV{NYTPROF};
                is $st, 0, "child's profile can't be made ($how), $what: the program ran" or diag $err;
                is $out, "plain: child ran\nplain: child exit 7\neval: child ran\neval: child exit 7\n",
                    "child's profile can't be made ($how), $what: each child runs on, as itself" or diag $err;
                my @said = $err =~ /^(Devel::NYTP: cannot write profile .*)$/mg;
                is scalar(@said), 2, "child's profile can't be made ($how), $what: one warning per child"
                    or diag $err;
                like $said[0] // '', qr/\Q$file\E\.\d+.*(Permission denied|No such file).*profiling stopped/,
                    "child's profile can't be made ($how), $what: the warning says why";
                unlike $err, qr/^(?!Devel::NYTP: cannot write profile)./m,
                    "child's profile can't be made ($how), $what: nothing else said";
                if ($how eq 'setuid') {
                    my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', $file]);
                    is $dst, 0, "child's profile can't be made ($how), $what: the parent's is complete"
                        or diag $derr;
                }
            }
        }
    }
}

# 10. Long names: a 240-byte profile name, whose segments FILE.sN fit in
# NAME_MAX (255) though FILE.sN.PID.partial, their temporary, would not.
for my $mode (['traced', ''], ['sampled', 'sample=1000:']) {
    my ($what, $opt) = @$mode;
    my $file = "$dir/" . substr($what x 40, 0, 240);
    is length($file =~ s{.*/}{}r), 240, "long name, $what: 240 bytes";
    unlink glob "$file*";
    local $ENV{NYTPROF} = "${opt}rotate=0.1:file=$file";
    my ($st, $out, $err) = run_to(20, [@perl, $busy, 0.35]);
    delete local $ENV{NYTPROF};
    is $st, 0, "long name, $what: the program ran" or diag $err;
    is $err, '', "long name, $what: nothing said";
    my @seg = grep { /\.s\d+$/ } glob "$file.s*";
    ok @seg >= 2, "long name, $what: " . scalar(@seg) . " segments";
    my @bad = grep { run_cmd([$nytp, 'dump', '--strict', $_]) } $file, @seg;
    is "@bad", '', "long name, $what: each is complete";
    opendir my $dh, $dir or die;
    is scalar(grep { /\.partial$/ } readdir $dh), 0, "long name, $what: no temporary left";
}

# 13. Temporaries left by kill -9 (a process killed between making a
# segment's temporary and renaming it): the next run of FILE removes those
# of dead processes, never a live one's (locked by its writer, or of a pid
# that runs), nor anything else.
{
    my $file = "$dir/stale.out";
    my $dead = fork // die;
    if (!$dead) { POSIX::_exit(0) }
    waitpid $dead, 0;
    my $holder = "$dir/.stale.out.s4.$$.partial"; # a live writer's: locked
    my $t = "$dir/.stale.out";
    my %want = (
        "$t.s3.$dead.partial" => 'removed',
        "$t.1234.s2.$dead.partial" => 'removed',        # a child's segment
        $holder => 'kept',
        "$t.s5.$$.partial" => 'kept',                    # its pid runs
        "$t.s6.$dead.partial" => 'kept',                 # a symlink
        "$dir/.other.out.s1.$dead.partial" => 'kept',    # another FILE's
        "$dir/.stale.outx.s1.$dead.partial" => 'kept',   # another FILE's
        "$t.s7.$dead.partialx" => 'kept',
    );
    for my $f (keys %want) {
        next if $f =~ /\.s6\./;
        open my $fh, '>', $f or die "$f: $!";
        print $fh "x";
        close $fh;
    }
    symlink "$dir/victim", "$t.s6.$dead.partial" or die;
    pipe my $r, my $w or die;
    my $lock = fork // die;
    if (!$lock) {
        close $r;
        open my $fh, '<', $holder or die;
        flock $fh, 2 or die; # LOCK_EX
        close $w;            # locked now
        sleep 30;
        POSIX::_exit(0);
    }
    close $w;
    <$r>;
    local $ENV{NYTPROF} = "file=$file";
    my ($st, $out, $err) = run_to(20, [@perl, $busy, 0.01]);
    delete local $ENV{NYTPROF};
    kill KILL => $lock;
    waitpid $lock, 0;
    is $st, 0, 'stale temporaries: the program ran' or diag $err;
    for my $f (sort keys %want) {
        is((-e $f || -l $f) ? 'kept' : 'removed', $want{$f}, "stale temporaries: $f $want{$f}");
    }
}

# 12. A failed exec: the profile was finished before exec was tried; the
# program goes on, and so does its profile (in FILE.PID), saying so once.
{
    my $ex = scratch_script('exec.pl', <<'PERL');
sub after { my $n = 0; $n += $_ for 1 .. 10; $n }
{ no warnings; exec '/nonexistent/program' }
print "exec failed: $!\n";
after() for 1 .. 3;
print "end\n";
PERL
    for my $mode (['traced', ''], ['sampled', 'sample=1000:']) {
        my ($what, $opt) = @$mode;
        my $file = "$dir/exec-$what.out";
        unlink glob "$file*";
        local $ENV{NYTPROF} = "${opt}file=$file";
        my ($st, $out, $err) = run_to(20, [@perl, $ex]);
        delete local $ENV{NYTPROF};
        is $st, 0, "failed exec, $what: the program ran" or diag $err;
        like $out, qr/^exec failed: No such file or directory\nend\n\z/, "failed exec, $what: and went on";
        my @said = $err =~ /^(Devel::NYTP: .*exec.*)$/mg;
        is scalar(@said), 1, "failed exec, $what: said once" or diag $err;
        my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', $file]);
        is $dst, 0, "failed exec, $what: the profile up to the exec is complete" or diag $derr;
        my @rest = grep { $_ ne $file } glob "$file*";
        is scalar(@rest), 1, "failed exec, $what: the rest has a profile of its own (@rest)";
        if ($what eq 'traced' && @rest) {
            my ($tst, $top) = run_cmd([$nytp, 'top', '--json', '-n', '0', $rest[0]]);
            like $top, qr/"name"\s*:\s*"main::after".*?"calls"\s*:\s*3\b/s,
                "failed exec, $what: the calls after the exec are in it";
        }
    }
}

# 11. A loop on one line rotates too: a segment closes within SECONDS and
# one statement or call, whatever the program does.  A loop of statements
# on one line with no call, one of calls with no statement of its own (a
# statement modifier), traced, sampled and with stmts=0.
{
    my $loops = scratch_script('loops.pl', <<'PERL');
use Time::HiRes qw(time);
my ($kind, $n) = @ARGV;
my $t0 = time;
my $x = 0;
if ($kind eq 'stmts') { for my $i (1 .. $n) { $x += $i; $x-- } }
else { my $end = $t0 + $n; 1 while time < $end }
printf "%.3f\n", time - $t0;
PERL
    # the number of turns of the loop of statements that takes ~0.8 s
    # here, profiled so
    my %n;
    for my $opt ('', 'sample=1000:') {
        my $n = 200_000;
        local $ENV{NYTPROF} = "${opt}file=$dir/loop-calibrate.out";
        my ($st, $out) = run_to(60, [@perl, $loops, 'stmts', $n]);
        my ($took) = $out =~ /^([\d.]+)$/m;
        $n{$opt} = $took ? int($n * 0.8 / $took) : $n;
    }
    for my $case (['stmts', 'traced', ''], ['stmts', 'sampled', 'sample=1000:'],
                  ['calls', 'traced', ''], ['calls', 'sampled', 'sample=1000:'],
                  ['calls', 'traced with stmts=0', 'stmts=0:']) {
        my ($kind, $what, $opt) = @$case;
        my $file = "$dir/loop-$kind-" . ($what =~ s/\W/_/gr) . '.out';
        unlink glob "$file*";
        local $ENV{NYTPROF} = "${opt}rotate=0.1:file=$file";
        my ($st, $out, $err, $took);
        for my $try (1 .. 3) { # a loaded machine runs the loop of statements faster or slower
            unlink glob "$file*";
            ($st, $out, $err) = run_to(60, [@perl, $loops, $kind, $kind eq 'calls' ? 0.8 : $n{$opt}]);
            ($took) = $out =~ /^([\d.]+)$/m;
            last if $kind eq 'calls' || !$took || $took > 0.5;
            $n{$opt} = int($n{$opt} * 0.8 / $took);
        }
        delete local $ENV{NYTPROF};
        is $st, 0, "one-line loop of $kind, $what: ran" or diag $err;
        is $err, '', "one-line loop of $kind, $what: nothing said";
        my @seg = grep { /\.s\d+$/ } glob "$file.s*";
        my $want = int(($took // 0) / 0.1);
        ok $want >= 4 && @seg + 1 >= $want / 2,
            "one-line loop of $kind, $what: ${took}s in 0.1 s segments: " . (@seg + 1) . " files";
        my @bad = grep { run_cmd([$nytp, 'dump', '--strict', $_]) } $file, @seg;
        is "@bad", '', "one-line loop of $kind, $what: each is complete";
    }
}

# A child made by a piped open, whose first event is the end of the open
# (a call) past the segment's end, does not rotate its parent's file: it
# has its own first (before, it hung, closing the parent's writer).
{
    my $po = scratch_script('piped.pl', <<'PERL');
use Time::HiRes qw(time);
my $end = time + 0.3;
my $n = 0;
while (time < $end) {
    # 15 ms with no statement or call before the open: past the segment's
    # end as it returns, in the child too
    my $pid = ((1) x 2e6)[0] && open(my $fh, '-|');
    die "fork: $!" if !defined $pid;
    if (!$pid) { print "x\n"; require POSIX; POSIX::_exit(0) }
    my $l = <$fh>;
    close $fh;
    $n++;
}
print "$n\n";
PERL
    my $file = "$dir/piped.out";
    unlink glob "$file*";
    local $ENV{NYTPROF} = "rotate=0.01:file=$file";
    my ($st, $out, $err) = run_to(30, [@perl, $po]);
    delete local $ENV{NYTPROF};
    is $st, 0, 'piped opens at rotate=0.01: the program ran to its end' or diag $err;
    my @seg = grep { /\.s\d+$/ } glob "$file.s*";
    ok @seg >= 5, 'piped opens at rotate=0.01: ' . scalar(@seg) . ' more segments';
    my @bad = grep { run_cmd([$nytp, 'dump', '--strict', $_]) } $file, @seg;
    is "@bad", '', 'piped opens at rotate=0.01: each is complete';
}

# A segment that ends at a call's end counts that call, with its time, in
# the closing segment: a loop of 30 ms selects, whose ends are where the
# segments end, keeps its selects' time over the segments.
{
    my $sel = scratch_script('select.pl', <<'PERL');
use Time::HiRes qw(time);
my $t0 = time;
my $end = $t0 + 0.9;
select(undef, undef, undef, 0.03) while time < $end;
printf "%.3f\n", time - $t0;
PERL
    my $file = "$dir/select.out";
    unlink glob "$file*";
    local $ENV{NYTPROF} = "rotate=0.1:file=$file";
    my ($st, $out, $err) = run_to(30, [@perl, $sel]);
    delete local $ENV{NYTPROF};
    my ($took) = $out =~ /^([\d.]+)$/m;
    my @seg = ($file, grep { /\.s\d+$/ } glob "$file.s*");
    my ($tst, $top) = run_cmd([$nytp, 'top', '--json', '-n', '0', @seg]);
    my ($incl) = $top =~ /"name"\s*:\s*"main::CORE:sselect"[^}]*?"incl"\s*:\s*([\d.e-]+)/s;
    ok @seg >= 5 && $took && ($incl // 0) >= 0.9 * $took,
        sprintf('selects at rotate=0.1: %.3f s of %.3f s over %d segments', $incl // 0, $took // 0, scalar @seg)
        or diag $top;
}

done_testing;
