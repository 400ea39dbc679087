#!/usr/bin/perl
# A process that is ending keeps its profile (issue 22): perl's main()
# gives every signal caught by a %SIG handler its default action back
# before the END blocks run, and the profile is written by the last END
# block, so a second TERM in that window (a service manager signals every
# process of a service, and the server's master signals its workers
# again) killed the process with its profile cut short and without a
# single sub.  The profiler now holds such signals from the moment the
# process exits until the profile is complete, then lets them take their
# course; the same signal sent twice still acts at once.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NytpTest;

my $nytp = nytp();
my $inc = repo() . '/build/perl';
my $dir = scratch_dir();
delete $ENV{NYTPROF};

# run the program under Devel::NYTP into NAME.out: (status, profile,
# stderr); status 128+N when signal N killed it
sub profile {
    my ($name, $code, $opts) = @_;
    my $script = "$dir/$name.pl";
    open my $fh, '>', $script or die;
    print $fh $code;
    close $fh;
    my $file = "$dir/$name.out";
    unlink $file;
    local $ENV{NYTPROF} = join ':', grep { length } ($opts // ''), "file=$file";
    my ($st, undef, $err) = run_cmd([$^X, "-I$inc", '-d:NYTP', $script], cwd => $dir);
    return ($st, $file, $err);
}

sub complete {
    my $file = shift;
    my ($st) = run_cmd([$nytp, 'dump', '--strict', $file]);
    return $st == 0;
}

sub has_sub {
    my ($file, $sub) = @_;
    my (undef, $out) = run_cmd([$nytp, 'dump', '--data', $file]);
    return $out =~ /^sub_subinfo\t\Q$sub\E\t/m;
}

# work that lasts, so that a signal would strike in the middle of it
my $work = <<'PERL';
sub work { my $s = 0; $s += $_ for 1 .. 20000; return $s }
sub busy { work() for 1 .. 15 }
PERL

# The worker's case: its handler exits, and TERM comes again while END
# blocks run (sent from inside one here, so that it surely lands there).
for my $sig (qw(TERM INT HUP ALRM)) {
    my $send = $sig eq 'ALRM' ? 'alarm 1; sleep 3;' : "kill '$sig', \$\$;";
    my ($st, $file, $err) = profile("again-$sig", <<"PERL");
$work
\$SIG{$sig} = sub { exit 0 };
END { $send busy() }
busy();
kill '$sig', \$\$;
sleep 5;
PERL
    my $n = { TERM => 15, INT => 2, HUP => 1, ALRM => 14 }->{$sig};
    is $st, 128 + $n, "$sig again in END: the process still dies of it, after the profile";
    ok complete($file), "$sig again in END: the profile is complete" or diag $err;
    ok has_sub($file, 'main::busy'), "$sig again in END: with its subs";
}

# Also when the second one comes during the exit itself, before END:
# while the scopes unwind (a DESTROY here), and from an exit inside the
# handler of the first.
{
    my ($st, $file, $err) = profile('unwinding', <<"PERL");
$work
package Guard { sub DESTROY { kill 'TERM', \$\$; main::busy() } }
\$SIG{TERM} = sub { exit 3 };
sub serve { my \$g = bless {}, 'Guard'; busy(); kill 'TERM', \$\$; sleep 5 }
serve();
PERL
    is $st, 128 + 15, 'TERM again while the exit unwinds: dies of it after the profile';
    ok complete($file), 'TERM again while the exit unwinds: the profile is complete' or diag $err;
    ok has_sub($file, 'Guard::DESTROY'), '... with its subs';
}

# A program that runs off its end (no exit): perl's main() gives the
# handled TERM its default action back before END, and the statements of
# the END blocks are where the profiler starts holding.
{
    my ($st, $file, $err) = profile('natural-end', <<"PERL");
$work
\$SIG{TERM} = sub { print "handled\\n" };
END { my \$x = 1; kill 'TERM', \$\$; busy() }
busy();
PERL
    is $st, 128 + 15, 'TERM in END after a natural end: dies of it, after the profile';
    ok complete($file), 'TERM in END after a natural end: the profile is complete' or diag $err;
    ok has_sub($file, 'main::busy'), '... with its subs';
}

# The same signal twice while holding: the second acts at once (a program
# stuck in an END block can still be stopped).
{
    my ($st, $file) = profile('twice', <<"PERL");
$work
\$SIG{TERM} = sub { exit 0 };
END { kill 'TERM', \$\$; kill 'TERM', \$\$; busy() }
kill 'TERM', \$\$;
sleep 5;
PERL
    is $st, 128 + 15, 'TERM twice in END: the second kills at once';
    ok !complete($file), 'TERM twice in END: the profile is cut where it struck';
}

# A signal the program ignores stays ignored; one that arrives while a
# program in its run finishes a profile reaches its handler afterwards.
{
    my ($st, $file) = profile('ignored', <<"PERL");
$work
\$SIG{TERM} = 'IGNORE';
END { kill 'TERM', \$\$; busy() }
busy();
PERL
    is $st, 0, 'an ignored TERM in END stays ignored: exit 0';
    ok complete($file), 'an ignored TERM in END: the profile is complete';
}
{
    my ($st, $file) = profile('handled', <<"PERL");
$work
my \$got = 0;
\$SIG{USR1} = sub { \$got++ };
busy();
DB::finish_profile();
kill 'USR1', \$\$;
busy();
exit(\$got == 1 ? 0 : 9);
PERL
    is $st, 0, 'after finish_profile the handlers are the program\'s again';
}

# nytp run: no sigexit given, TERM, INT and HUP are caught (sigexit); a
# program's own handler replaces that, and its exit keeps the profile.
{
    my $prog = "$dir/own-handler.pl";
    open my $fh, '>', $prog or die;
    print $fh "$work\n\$SIG{TERM} = sub { exit 4 };\nEND { kill 'TERM', \$\$; busy() }\nbusy();\nkill 'TERM', \$\$;\nsleep 5;\n";
    close $fh;
    my ($st, undef, $err) = run_cmd([$nytp, 'run', '-o', "$dir/own.out", $prog]);
    is $st, 128 + 15, 'nytp run: own TERM handler, TERM again in END: dies of it';
    like $err, qr/own\.out \(complete\)$/m, 'nytp run: ... the profile is named complete';
}

# sigexit (issue 35, items 2 and 3): the program's signals are its own.
# Its handlers used to be %SIG handlers: 'use sigtrap qw(untrapped ...)'
# found TERM taken and installed nothing (TERM then killed the program
# without its END cleanup), and they were put over signals ignored at
# start, so 'nohup nytp run' died at the hang-up and 'nytp run ... &'
# from a script at ^C.  Each case is compared with plain perl.

# the program's view of %SIG, one line per signal
my $show_sig = <<'PERL';
for my $k (sort keys %SIG) {
    my $v = $SIG{$k};
    print "$k=", !defined $v ? 'undef' : ref $v ? ref $v : $v, "\n";
}
PERL

# run argv with the signals named ignored, as nohup (HUP) and a shell's
# '&' without job control (INT, QUIT) leave them; in a process group of
# its own, so that a hang-up or ^C can be sent to the whole group as the
# terminal does.  $send: [signal, after the program printed 'ready'].
sub run_ignoring {
    my ($argv, $ignore, $send) = @_;
    my ($out, $err) = ("$dir/ign.out", "$dir/ign.err");
    pipe my $r, my $w or die;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        setpgrp 0, 0;
        $SIG{$_} = 'IGNORE' for @$ignore;
        open STDIN, '<', '/dev/null' or die;
        open STDOUT, '>&', $w or die;
        open STDERR, '>', $err or die;
        exec @$argv or die "exec: $!";
    }
    close $w;
    my $got = '';
    while (defined(my $line = <$r>)) {
        $got .= $line;
        if ($send && $line eq "ready\n") {
            kill $send, -$pid;   # the whole group, as a terminal does
            $send = undef;
        }
    }
    waitpid $pid, 0;
    my $status = $? & 127 ? 128 + ($? & 127) : $? >> 8;
    return ($status, $got, slurp_file($err));
}

{
    my $prog = "$dir/sigview.pl";
    open my $fh, '>', $prog or die;
    print $fh $show_sig;
    close $fh;
    for my $ignore ([], ['HUP'], [qw(INT QUIT)]) {
        my $what = @$ignore ? "with @$ignore ignored at start" : 'as started';
        my (undef, $plain) = run_ignoring([$^X, $prog], $ignore);
        like $plain, qr/^TERM=undef$/m, "plain perl's %SIG $what: TERM undefined";
        my (undef, $run) = run_ignoring([$nytp, 'run', '-o', "$dir/view.out", $prog], $ignore);
        is $run, $plain, "nytp run (sigexit=INT,HUP,TERM): %SIG $what is plain perl's";
        local $ENV{NYTPROF} = "sigexit=1:file=$dir/view1.out";
        my (undef, $one) = run_ignoring([$^X, "-I$inc", '-d:NYTP', $prog], $ignore);
        is $one, $plain, "perl -d:NYTP, sigexit=1: %SIG $what is plain perl's";
    }
}

{
    my $prog = "$dir/sigtrap.pl";
    open my $fh, '>', $prog or die;
    print $fh <<"PERL";
use sigtrap qw(die untrapped normal-signals);
$work
\$| = 1;
END { print "cleanup ran\\n" }
print "handler: ", ref \$SIG{TERM} || 'none', "\\n";
busy();
kill 'TERM', \$\$;
sleep 5;
print "not reached\\n";
PERL
    close $fh;
    my ($pst, $pout) = run_cmd([$^X, $prog]);
    like $pout, qr/^cleanup ran$/m, 'sigtrap under plain perl: the END cleanup runs';
    my ($st, $out, $err) = run_cmd([$nytp, 'run', '-o', "$dir/sigtrap.out", $prog]);
    is $st, $pst, "sigtrap under nytp run: exit status $pst, as plain perl's";
    is $out, $pout, 'sigtrap under nytp run: the same output (its handler, its END cleanup)';
    ok complete("$dir/sigtrap.out"), 'sigtrap under nytp run: the profile is complete' or diag $err;
    ok has_sub("$dir/sigtrap.out", 'main::busy'), '... with its subs';
}

# nohup and '&': the hang-up, or ^C, reaches the whole process group;
# the program ignores it as plain perl does, and its profile is complete.
{
    my $prog = "$dir/survive.pl";
    open my $fh, '>', $prog or die;
    print $fh "$work\n\$| = 1;\nbusy();\nprint \"ready\\n\";\nselect undef, undef, undef, 1;\nbusy();\nprint \"survived\\n\";\n";
    close $fh;
    for my $case (['nohup', ['HUP'], 'HUP'], ['&', [qw(INT QUIT)], 'INT'], ['&', [qw(INT QUIT)], 'QUIT']) {
        my ($how, $ignore, $sig) = @$case;
        my ($pst, $pout) = run_ignoring([$^X, $prog], $ignore, $sig);
        like $pout, qr/^survived$/m, "plain perl started with $how survives SIG$sig";
        unlink "$dir/survive.out";
        my ($st, $out, $err) = run_ignoring([$nytp, 'run', '-o', "$dir/survive.out", $prog], $ignore, $sig);
        is $st, $pst, "nytp run started with $how, SIG$sig to its process group: exit $pst as plain perl";
        is $out, $pout, "... the program ran on as under plain perl" or diag $err;
        ok complete("$dir/survive.out"), '... and its profile is complete' or diag $err;
    }
}

# Without a handler of the program's, sigexit still finishes the profile,
# also when the signal comes during a blocking read.
{
    my $prog = "$dir/blocked.pl";
    open my $fh, '>', $prog or die;
    print $fh "$work\n\$| = 1;\nbusy();\nprint \"ready\\n\";\nmy \$l = <STDIN>;\nprint \"not reached\\n\";\n";
    close $fh;
    pipe my $in_r, my $in_w or die;   # stays open: the read blocks
    pipe my $r, my $w or die;
    my $pid = fork // die;
    if (!$pid) {
        close $r;
        close $in_w;
        open STDIN, '<&', $in_r or die;
        open STDOUT, '>&', $w or die;
        open STDERR, '>', "$dir/blocked.err" or die;
        exec $nytp, 'run', '-o', "$dir/blocked.out", $prog or die;
    }
    close $w;
    close $in_r;
    my $line = <$r>;
    select undef, undef, undef, 0.2;
    kill 'TERM', $pid;
    waitpid $pid, 0;
    my $st = $? >> 8;
    is $st, 128 + 15, 'TERM during a blocking read: nytp run exits 143, as the program died of it';
    ok complete("$dir/blocked.out"), '... and the profile is complete';
}

# sigexit waits for perl's next safe point; the same signal sent again
# while it waits (a long call into C: one op here, a numeric sort, which
# calls no perl code) acts at once.
{
    my $prog = "$dir/long-op.pl";
    open my $fh, '>', $prog or die;
    print $fh "my \@a = map { rand } 1 .. 1e6;\n\$| = 1;\nprint \"ready\\n\";\nmy \@s = sort { \$a <=> \$b } \@a;\nprint \"done\\n\";\n";
    close $fh;
    local $ENV{NYTPROF} = "sigexit=TERM:file=$dir/long-op.out";
    pipe my $r, my $w or die;
    my $pid = fork // die;
    if (!$pid) {
        close $r;
        open STDOUT, '>&', $w or die;
        exec $^X, "-I$inc", '-d:NYTP', $prog or die;
    }
    close $w;
    my $ready = <$r>;
    select undef, undef, undef, 0.3;   # in the sort (a second or so here)
    kill 'TERM', $pid;
    select undef, undef, undef, 0.02;
    kill 'TERM', $pid;
    my $rest = do { local $/; <$r> };
    waitpid $pid, 0;
    is $? & 127, 15, 'TERM twice during one long op: the second kills at once';
    unlike $rest, qr/done/, '... before the op ends';
    ok !complete("$dir/long-op.out"), '... its profile cut where it struck (not finished after the op)';
}

done_testing;
