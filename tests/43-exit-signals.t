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

done_testing;
