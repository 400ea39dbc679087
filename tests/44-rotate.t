#!/usr/bin/perl
# rotate=SECONDS: the profile goes on in FILE.s1, FILE.s2, ... every SECONDS,
# each segment a complete profile of its interval that every reader opens
# with no warning; calls in progress are split between segments, their
# time neither lost nor counted twice; children rotate into FILE.PID.sN; a
# process killed with kill -9 loses only the segment it was writing.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;
use JSON::PP;
use Time::HiRes qw(time sleep);

my $nytp = nytp();
my $dir = scratch_dir();
delete $ENV{NYTPROF};


# The segments of FILE, in order: FILE, FILE.s1, FILE.s2, ...
sub segments {
    my ($file) = @_;
    my @n = sort { $a <=> $b } map { /^\Q$file\E\.s(\d+)$/ ? $1 : () } glob "$file.*";
    return ($file, map { "$file.s$_" } @n);
}

sub top_subs {
    my (@files) = @_;
    my ($st, $out, $err) = run_cmd([$nytp, 'top', '--json', '-n', '0', @files]);
    return {} if $st;
    my $j = decode_json($out);
    return { map { $_->{name} => $_ } @{$j->{subs}} }, $j;
}

# A segment: complete (dump --strict), its own header, file ids and
# source, a call tree with nothing left open, and read by
# Devel::NYTProf::Data without a word.
sub check_segment {
    my ($f, $k, $what) = @_;
    my ($st, $dump, $err) = run_cmd([$nytp, 'dump', '--strict', $f]);
    is $st, 0, "$what: segment $k is complete" or diag $err;
    like $dump, qr/^ATTRIBUTE\tsegment\t$k$/m, "$what: segment $k says which it is";
    like $dump, qr/^NEW_FID\t1\t.*rot\.pl$/m, "$what: segment $k declares its files";
    like $dump, qr/^SRC_LINE\t1\t\d+\t.*sub run/m, "$what: segment $k has the source";
    like $dump, qr/^SUB_INFO\t1\t\d+\t\d+\tmain::run$/m, "$what: segment $k has the subs' lines";
    my ($cst, $calls) = run_cmd([$nytp, 'calls', $f]);
    unlike $calls, qr/\(unreturned\)/, "$what: segment $k: no call left open";
    ($st, my $out, $err) = run_cmd([$^X, '-w', '-MDevel::NYTProf::Data', '-e',
        'my $p = Devel::NYTProf::Data->new({ filename => shift, quiet => 1 });
         my $s = $p->subinfo_of("main::run");
         printf "run %d %.4f\n", $s->calls, $s->incl_time', $f]);
    is "$st$err", '0', "$what: Devel::NYTProf::Data reads segment $k without a warning" or diag $err;
    return $out =~ /^run (\d+) ([\d.]+)$/m ? ($1, $2) : (0, 0);
}

# run() is one call spanning every segment; it measures itself.
my $rot = scratch_script('rot.pl', <<'PERL');
use Time::HiRes qw(time);
sub inner { my $x = 0; $x += $_ for 1 .. 500; $x }
sub outer { my $t = 0; $t += inner() for 1 .. 5; $t }
sub run { my $end = time + $_[0]; while (time < $end) { outer() } }
my $t = time;
run($ARGV[0]);
printf "run %.4f\n", time - $t;
PERL

for my $mode (['traced', ''], ['sampled', 'sample=1000:savesrc=1:']) {
    my ($what, $opt) = @$mode;
    my ($st, $out, $err, $file) = nytp_profile("rot-$what", $rot, "${opt}rotate=0.25", 1.1);
    is $st, 0, "$what: profiled" or diag $err;
    my ($real) = $out =~ /^run ([\d.]+)$/m;
    my @seg = segments($file);
    ok @seg >= 4 && @seg <= 6, "$what: 1.1 s in 0.25 s segments: " . scalar(@seg) . ' files';
    my ($calls, $incl) = (0, 0);
    for my $k (0 .. $#seg) {
        my ($c, $i) = check_segment($seg[$k], $k, $what);
        $calls += $c;
        $incl += $i;
        is $c, 1, "$what: segment $k counts the call in progress once" if $k;
    }
    # (the time the profiler takes to write each segment is in none: up to
    # 10% on a loaded machine, for this program's 4 to 6 rotations)
    ok $incl <= 1.02 * $real + 0.002 && $incl >= 0.9 * $real,
        sprintf('%s: run\'s time over the segments %.4f s, measured %.4f s: not counted twice, not lost',
                $what, $incl, $real);
    my ($subs, $j) = top_subs(@seg);
    ok abs(($subs->{'main::run'}{incl} // 0) - $incl) < 0.001, "$what: nytp top adds the segments";
    SKIP: { # Devel::NYTProf's report of a segment in the middle
        my $nytprofhtml = `sh -c 'command -v nytprofhtml'`;
        chomp $nytprofhtml;
        skip 'nytprofhtml (libdevel-nytprof-perl) is missing', 2
            if missing($nytprofhtml, 'nytprofhtml (libdevel-nytprof-perl)');
        my ($hst, undef, $herr) = run_cmd([$nytprofhtml, '-f', $seg[1], '-o', "$dir/nytprofhtml-$what"]);
        is $hst, 0, "$what: nytprofhtml reports segment 1" or diag $herr;
        unlike $herr, qr/warn|error|uninitiali[sz]ed|division|\bat \S+ line \d+/i,
            "$what: nytprofhtml: no warning" or diag $herr;
    }
    if ($opt) {
        my $n = 0;
        for (@seg) { my (undef, $d) = run_cmd([$nytp, 'dump', $_]); $n += $1 if $d =~ /sample_count\t(\d+)/ }
        is $j->{sampled}{samples}, $n, 'sampled: top counts the samples of every segment';
        my ($mst, undef, $merr) = run_cmd([$nytp, 'merge', '-o', "$dir/merged.out", @seg]);
        is $mst, 0, 'sampled: nytp merge of the segments' or diag $merr;
        my (undef, $m) = top_subs("$dir/merged.out");
        is $m->{sampled}{samples}, $n, 'sampled: the merged profile has all their samples';
    }
}

# Children rotate too, into FILE.PID.sN; with addpid the parent's are
# FILE.PID.sN as well.
my $fork = scratch_script('fork.pl', <<'PERL');
use Time::HiRes qw(time);
sub busy { my $end = time + $_[0]; my $n = 0; while (time < $end) { $n++ } $n }
my $pid = fork // die;
if (!$pid) { busy(0.55); exit 0 }
busy(0.55);
waitpid $pid, 0;
print "$$ $pid\n";
PERL
for my $opt ('', 'addpid=1:') {
    my ($st, $out, $err, $file) = nytp_profile('fork', $fork, "sample=1000:${opt}rotate=0.2");
    is $st, 0, "fork ${opt}profiled" or diag $err;
    my ($parent, $child) = $out =~ /^(\d+) (\d+)$/m;
    my $pbase = $opt ? "$file.$parent" : $file;
    for my $base ($pbase, "$file.$child") {
        my @seg = segments($base);
        ok @seg >= 3, "fork $opt: $base and " . (@seg - 1) . ' more segments';
        my $busy = 0;
        for (@seg) {
            my ($s) = top_subs($_);
            $busy += $s->{'main::busy'}{incl} // 0;
            my ($dst, undef, $derr) = run_cmd([$nytp, 'dump', '--strict', $_]);
            is $dst, 0, "fork $opt: $_ is complete" or diag $derr;
        }
        ok $busy > 0.45 && $busy < 0.8, "fork $opt: the process's busy time is in its segments ($busy)";
    }
    my ($tst, undef, $terr) = run_cmd([$nytp, 'top', grep { !m{/\.[^/]*$} } glob "$file*"]);
    unlike $terr, qr/different runs/, "fork $opt: a report over the parent's and the child's segments: one run";
}

# A second, shorter run under the same name leaves the first run's later
# segments in place: a report over all of them warns that they are of two
# runs (known by the header, whatever the files are called), and says
# nothing over the files of one run, a forked child's included.
{
    my $file = "$dir/tworuns.out";
    unlink glob "$file*";
    my $old = scratch_script('old-run.pl', "sub old_work { 1 }\nmy \$e = time + \$ARGV[0]; old_work() while time < \$e;\n");
    my $new = scratch_script('new-run.pl', "sub new_work { 1 }\nmy \$e = time + \$ARGV[0]; new_work() while time < \$e;\n");
    local $ENV{NYTPROF} = "rotate=0.1:file=$file";
    my @perl = ($^X, '-I' . repo() . '/build/perl', '-d:NYTP');
    my ($st, undef, $err) = run_cmd([@perl, '-MTime::HiRes=time', $old, 0.65]);
    is $st, 0, 'two runs: the first' or diag $err;
    sleep 1.1;    # (another second: the runs' basetime differs too)
    my $t2 = time;
    ($st, undef, $err) = run_cmd([@perl, '-MTime::HiRes=time', $new, 0.15]);
    is $st, 0, 'two runs: the second, shorter' or diag $err;
    delete local $ENV{NYTPROF};
    my @all = sort grep { -f && !m{/\.[^/]*$} } glob "$file*";
    my @second = grep { (stat)[9] >= int $t2 } @all;
    ok @second >= 1 && @all > @second, scalar(@all) . ' files, ' . scalar(@second) . ' of the second run';
    my ($subs) = top_subs(@all);
    ok $subs->{'main::old_work'} && $subs->{'main::new_work'}, 'the files hold both runs\' subs';
    for my $cmd (['top'], ['calls'], ['flame'], ['merge', '-o', "$dir/tworuns-merged.out"],
                 ['html', '-o', "$dir/tworuns-html"], ['diff', '--sum', $all[0], '--']) {
        ($st, my $out, $err) = run_cmd([$nytp, @$cmd, @all]);
        is $st, 0, "$cmd->[0] over both runs' files: runs" or diag $err;
        like $err, qr/^nytp $cmd->[0]: warning: \S+ \(started [-\d]+ [\d:]+, pid \d+\) and \S+ \(started [-\d]+ [\d:]+, pid \d+\) are of different runs/m,
            "$cmd->[0]: warns that they are of different runs";
        ($st, $out, $err) = run_cmd([$nytp, @$cmd, @second]);
        unlike $err, qr/different runs/, "$cmd->[0] over the second run's files: no warning";
    }
    my (undef, $d) = run_cmd([$nytp, 'dump', $second[0]]);
    like $d, qr/^ATTRIBUTE\trun_id\t[0-9a-f]{32}$/m, 'a segment names its run (run_id)';
}

# addtimestamp: FILE.TIME, then FILE.TIME.s1, ...
{
    my ($st, undef, $err, $file) = nytp_profile('stamp', $rot, 'sample=1000:addtimestamp=1:rotate=0.2', 0.5);
    is $st, 0, 'addtimestamp: profiled' or diag $err;
    my @base = grep { /^\Q$file\E\.\d{9,}$/ } glob "$file.*";
    is scalar(@base), 1, 'addtimestamp: one FILE.TIME';
    my @seg = segments($base[0] // '/none');
    ok @seg >= 2 && -s $seg[1], 'addtimestamp: its segments are FILE.TIME.sN (' . scalar(@seg) . ')';
}

# kill -9: every segment closed before it reads, the one being written is
# cut (readers keep what came before, with a warning).
{
    my $file = "$dir/killed.out";
    unlink glob "$file*";
    local $ENV{NYTPROF} = "rotate=0.15:file=$file";
    my $pid = fork // die;
    if (!$pid) {
        open STDOUT, '>', '/dev/null';
        exec $^X, "-I" . repo() . "/build/perl", '-d:NYTP', $rot, 20;
        exit 127;
    }
    my $t0 = time;
    sleep 0.05 until -e "$file.s3" || time - $t0 > 20;
    kill KILL => $pid;
    waitpid $pid, 0;
    is $? & 127, 9, 'kill -9: the process died of it';
    delete local $ENV{NYTPROF}; # Devel::NYTProf::Data would read it
    my @seg = segments($file);
    ok @seg >= 4, 'kill -9: ' . scalar(@seg) . ' segments';
    for my $k (0 .. $#seg - 1) {
        my ($st, undef, $err) = run_cmd([$nytp, 'dump', '--strict', $seg[$k]]);
        is $st, 0, "kill -9: closed segment $k is complete" or diag $err;
        ($st, undef, $err) = run_cmd([$^X, '-w', '-MDevel::NYTProf::Data', '-e',
            'Devel::NYTProf::Data->new({ filename => shift, quiet => 1 })', $seg[$k]]);
        is "$st$err", '0', "kill -9: Devel::NYTProf::Data reads segment $k without a warning";
    }
    my ($st, $out, $err) = run_cmd([$nytp, 'top', $seg[-1]]);
    is $st, 0, 'kill -9: the segment being written still reads (never an empty file)' or diag $err;
    like $err, qr/truncat|cut short|end of/i, 'kill -9: with a warning that it was cut';
}

# nytp run --rotate, and the option's checks.
{
    my $out = "$dir/run.out";
    unlink glob "$out*";
    my ($st, undef, $err) = run_cmd([$nytp, 'run', '--sample=500', '--rotate', '0.2', '-o', $out, $rot, 0.5]);
    is $st, 0, 'nytp run --sample=500 --rotate 0.2' or diag $err;
    like $err, qr/^nytp run: profile written to \Q$out\E\.s1 \(complete\)$/m, 'nytp run names the segments';
    like $err, qr/reports them together/, 'nytp run says how to read them together';
    my (undef, $d) = run_cmd([$nytp, 'dump', "$out.s1"]);
    like $d, qr/^ATTRIBUTE\tsample_hz\t500$/m, '--sample=500 reached the profiler';
    ($st, undef, $err) = run_cmd([$nytp, 'run', '--rotate=0', $rot, 0.1]);
    is $st, 2, '--rotate=0: usage error';
    ($st, undef, $err) = run_cmd([$nytp, 'run', '--sample=0', $rot, 0.1]);
    is $st, 2, '--sample=0: usage error';
    my ($nst, undef, $nerr, $nfile) = nytp_profile('nostmts', $rot, 'rotate=0.1:stmts=0', 0.35);
    is $nst, 0, 'rotate with stmts=0: the program runs';
    is $nerr, '', 'rotate with stmts=0 (tracing): nothing said';
    ok -s $nfile && -s "$nfile.s1", 'rotate with stmts=0: segments end as calls do';
    ($nst, undef, $nerr, $nfile) = nytp_profile('nostmts', $rot, 'rotate=0.1:stmts=0:subs=0', 0.35);
    is $nst, 0, 'rotate with stmts=0 and subs=0: the program runs';
    like $nerr, qr/rotate needs the statement profiler \(stmts=1\), the sub profiler \(subs=1\) or sample=HZ; ignored/,
        'rotate with stmts=0 and subs=0 (tracing): ignored, and said';
    ok -s $nfile && !-e "$nfile.s1", 'rotate with stmts=0 and subs=0: one file';
    for my $bad ('rotate=abc', 'rotate=0.001', 'rotate=-1') {
        my ($bst, undef, $berr) = nytp_profile('bad', $rot, $bad, 0.1);
        isnt $bst, 0, "$bad: an error";
        like $berr, qr/option 'rotate' wants seconds/, "$bad: says what it wants";
    }
}

# rotate=SECONDS are seconds of the wall clock with a CPU-time clock too
# (clock=2, nytp run --sample --cpu): a program that mostly waits, 1.2 s
# of which a few ms are CPU, gets a segment every 0.2 s, traced and
# sampled.  (Before, its segments ended every 0.2 s of CPU time: 1 file.)
{
    my $waiter = scratch_script('waiter.pl',
        "for (1 .. 12) { select undef, undef, undef, 0.1; my \$x = 0; \$x += \$_ for 1 .. 300 }\n");
    for my $case (['traced, clock=2', []], ['sampled --cpu', ['--sample=500', '--cpu']]) {
        my ($what, $opts) = @$case;
        my $out = "$dir/cpu-wall.out";
        unlink glob "$out*";
        my ($st, undef, $err) = run_cmd([$nytp, 'run', @$opts, '--nytprof=rotate=0.2' . (@$opts ? '' : ':clock=2'),
            '-o', $out, $waiter]);
        is $st, 0, "$what: rotate=0.2 runs" or diag $err;
        my @seg = segments($out);
        ok @seg >= 4 && @seg <= 8, "$what: 1.2 s of waiting in 0.2 s segments of the wall: " . scalar(@seg) . ' files';
    }
}

# nytp-run(1)'s "last hour" recipe (issue 35, item 24), run as the page
# gives it: it was 'ls -t svc.out.* | head -60', which with N processes
# is 60/N minutes, and takes in the segment still being written.  Here:
# two processes (a parent and its child) rotating every 0.1 s instead of
# 60, the older half of the closed segments made two hours old, and the
# recipe run while both still write: it takes every segment closed in
# the last hour of both processes, none made old, and no segment still
# being written.
{
    my $man = slurp_file(repo() . '/man/nytp-run.1');
    my ($block) = grep { /svc\.out/ } $man =~ /^\.EX\n(.*?)^\.EE$/msg;
    ok $block, 'nytp-run(1): the "last hour" example';
    $block =~ s/\\\(aq/'/g;
    $block =~ s/\\-/-/g;
    $block =~ s/\\e/\\/g;
    my $w = "$dir/lasthour";
    mkdir $w;
    $block =~ s{/var/tmp\b}{$w}g;
    $block =~ s/--rotate=60\b/--rotate=0.1/;
    my ($start, $report) = split /\n(?=find )/, $block, 2;
    $start =~ s/\\\n\s*/ /g;
    ok $start =~ /^nytp run / && $report =~ /^find /, '... a run, then the report';
    open my $fh, '>', "$w/myservice.pl" or die;
    print $fh <<'PERL';
sub serve { my $s = 0; $s += $_ for 1 .. 300; $s }
my $pid = fork // die;
my $t = time;
serve() while time - $t < 10;
waitpid $pid, 0 if $pid;
PERL
    close $fh;
    my $svc = fork // die;
    if (!$svc) {
        chdir $w or die;
        open STDOUT, '>', '/dev/null' or die;
        open STDERR, '>', "$w/run.err" or die;
        $ENV{PATH} = repo() . "/build:$ENV{PATH}";
        exec 'bash', '-c', $start or die;
    }
    sleep 1.6;
    # the older half of each process's closed segments, two hours old
    my %by_pid;
    for my $f (glob "$w/svc.out.*") {
        my ($pid, $n) = $f =~ /svc\.out\.(\d+)(?:\.(\d+))?$/ or next;
        push @{ $by_pid{$pid} }, [$n // 0, $f];
    }
    my %old;
    for my $segs (values %by_pid) {
        my @s = sort { $a->[0] <=> $b->[0] } @$segs;
        $old{ $_->[1] } = 1 for @s[0 .. int(@s / 2) - 1];
    }
    utime time - 7200, time - 7200, keys %old;
    local $ENV{PATH} = repo() . "/build:$ENV{PATH}";
    (my $find = $report) =~ s/\s*\|\s*\n?\s*xargs.*\z//s;
    $find =~ s/\\\n\s*/ /g;
    my ($fst, $list) = run_cmd(['bash', '-c', $find], cwd => $w);
    my ($rst, $top, $rerr) = run_cmd(['bash', '-c', $report], cwd => $w);
    my $alive = kill 0, $svc;
    kill 'TERM', $svc;    # nytp run passes it on to both
    waitpid $svc, 0;
    ok $alive, 'the report was made while the service ran';
    is $fst, 0, 'the recipe\'s find: exit 0';
    is $rst, 0, 'the whole recipe: exit 0' or diag $rerr;
    like $top, qr/main::serve/, '... nytp top reports the service\'s sub';
    unlike $rerr, qr/truncat|incomplete|cut/i, '... with no warning of a cut profile';
    my @picked = split /\0/, $list;
    ok !grep({ $old{$_} } @picked), 'no segment closed more than an hour ago';
    my %pids = map { /svc\.out\.(\d+)/ ? ($1 => 1) : () } @picked;
    is scalar(keys %pids), 2, 'segments of both processes';
    my @young = grep { !$old{$_} } map { $_->[1] } map { @$_ } values %by_pid;
    ok @picked >= @young - 2, 'every segment of the last hour but those still being written ('
        . scalar(@picked) . ' of ' . scalar(@young) . ' seen before)';
    my @cut = grep { (run_cmd([$nytp, 'dump', '--strict', $_]))[0] != 0 } @picked;
    is scalar(@cut), 0, 'each one complete';
}

done_testing;
